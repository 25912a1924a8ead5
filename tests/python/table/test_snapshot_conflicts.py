"""Commit conflicts and clean-up of the snapshot producers (spec: "Commit Conflict Resolution
and Retry"): stale appends land, stale overwrites and deletes are checked per isolation level,
and a failed commit leaves no file behind while an unknown outcome deletes nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitFailedError, CommitStateUnknownError, CommitValidationError
from frazil.schema import Schema
from frazil.table import Table
from frazil.types import NestedField, parse_type


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table(catalog: InMemoryCatalog, **properties: str) -> Table:
    schema = Schema(NestedField(1, "id", parse_type("long"), False))
    props = {"commit.retry.min-wait-ms": "1", **properties}
    return catalog.create_table("db.t", schema, properties=props)


def _files(table: Table) -> set[str]:
    return {str(p) for p in Path(table.location()).rglob("*") if p.is_file()}


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_stale_append_retries_and_lands(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    stale = catalog.load_table("db.t")
    table.append(_rows([2]))
    stale.append(_rows([3]))
    fresh = catalog.load_table("db.t")
    assert _ids(fresh) == [1, 2, 3]
    head = fresh.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["total-records"] == "3"
    assert head.sequence_number == 3
    # Only the manifest list of the attempt that landed remains.
    lists = [p for p in Path(table.location(), "metadata").iterdir() if p.name.startswith("snap-")]
    assert len(lists) == 3


def test_stale_delete_of_a_concurrently_removed_file_is_refused(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    stale = catalog.load_table("db.t")
    table.delete("id >= 1")  # removes the file whole
    before = _files(table)
    with pytest.raises(CommitValidationError, match="no longer in the table"):
        stale.delete("id = 1")  # would rewrite the same file
    assert _files(table) == before  # the rewrite's data file and manifests are gone
    assert _ids(catalog.load_table("db.t")) == []


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_isolation_levels_on_concurrent_appends(catalog: InMemoryCatalog, level: str) -> None:
    table = _table(catalog, **{"write.delete.isolation-level": level})
    table.append(_rows([1, 2]))
    table.append(_rows([100]))
    stale = catalog.load_table("db.t")
    table.append(_rows([3]))  # matches the filter below
    table.append(_rows([500]))  # does not
    if level == "serializable":
        with pytest.raises(CommitValidationError, match="conflicting files"):
            stale.delete("id < 10")
        assert _ids(catalog.load_table("db.t")) == [1, 2, 3, 100, 500]
    else:
        stale.delete("id < 10")
        # Snapshot isolation: the concurrently added row stays.
        assert _ids(catalog.load_table("db.t")) == [3, 100, 500]


def test_serializable_ignores_appends_outside_the_filter(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    stale = catalog.load_table("db.t")
    table.append(_rows([500]))
    stale.delete("id < 10")
    assert _ids(catalog.load_table("db.t")) == [500]


def test_failed_commit_deletes_what_it_wrote(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, **{"commit.retry.num-retries": "1"})
    table.append(_rows([1]))
    before = _files(table)

    def lose(*args: object) -> None:
        raise CommitFailedError("lost")

    swap = catalog._swap
    catalog._swap = lose  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitFailedError):
            table.append(_rows([2]))
        with pytest.raises(CommitFailedError):
            table.overwrite(_rows([3]), "id = 1")
    finally:
        catalog._swap = swap  # type: ignore[method-assign]
    assert _files(table) == before


def test_unknown_commit_state_deletes_nothing(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    before = _files(table)

    def unknown(*args: object) -> None:
        raise CommitStateUnknownError("no answer")

    swap = catalog._swap
    catalog._swap = unknown  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitStateUnknownError):
            table.append(_rows([2]))
    finally:
        catalog._swap = swap  # type: ignore[method-assign]
    added = _files(table) - before
    names = sorted(Path(p).name for p in added)
    # Data file, manifest, manifest list and metadata file are all kept: they may be live.
    assert any(n.endswith(".parquet") for n in names)
    assert any(n.startswith("snap-") for n in names)
    assert any(n.endswith("-m0.avro") for n in names)


def test_validation_error_leaves_the_table_as_it_was(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    stale = catalog.load_table("db.t")
    table.overwrite(_rows([9]))
    location = catalog.load_table("db.t").metadata_location
    with pytest.raises(CommitValidationError):
        stale.overwrite(_rows([7]), "id = 2")
    assert catalog.load_table("db.t").metadata_location == location
    assert _ids(catalog.load_table("db.t")) == [9]


def test_rollback_then_stale_overwrite_cannot_find_history(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    first = table.metadata.current_snapshot_id
    table.append(_rows([2]))
    stale = catalog.load_table("db.t")
    assert first is not None
    with table.manage_snapshots() as refs:
        refs.rollback_to(first)
    table.append(_rows([3]))
    with pytest.raises(CommitValidationError):
        stale.delete("id = 2")
