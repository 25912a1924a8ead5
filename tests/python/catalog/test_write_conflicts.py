"""Concurrent overwrites and deletes against appends on the real catalogs (spec: "Commit
Conflict Resolution and Retry"), with a fixed interleaving: two handles load the table, one
commits, then the other. The stale commit loses the catalog's compare-and-swap, refreshes and
re-validates: the isolation level decides whether concurrently added matching data refuses it,
a delete of files already removed is always refused, and appends always land."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import CommitValidationError
from frazil.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64())])


@pytest.fixture(params=["sqlite", "postgresql", "filesystem"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    warehouse = str(tmp_path / "wh")
    cat: Catalog
    if request.param == "sqlite":
        cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=warehouse)
    elif request.param == "postgresql":
        uri = request.getfixturevalue("postgres_uri")
        cat = SqlCatalog(f"c-{uuid.uuid4().hex[:8]}", uri=uri, warehouse=warehouse)
    else:
        cat = FileSystemCatalog("c", warehouse=warehouse)
    cat.create_namespace("db")
    return cat


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())}, schema=SCHEMA)


def _table(catalog: Catalog, level: str = "serializable") -> Table:
    properties = {
        "commit.retry.min-wait-ms": "1",
        "write.delete.isolation-level": level,
        "write.update.isolation-level": level,
    }
    table = catalog.create_table("db.t", SCHEMA, properties=properties)
    table.append(_rows(1, 2))
    table.append(_rows(100))
    return table


def _ids(catalog: Catalog) -> list[int]:
    return sorted(catalog.load_table("db.t").scan().to_arrow().column("id").to_pylist())


def _files(table: Table) -> set[Path]:
    return {p for p in Path(table.location()).rglob("*") if p.is_file()}


@pytest.mark.parametrize("operation", ["delete", "overwrite"])
@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_filter_matching_concurrent_append(catalog: Catalog, level: str, operation: str) -> None:
    table = _table(catalog, level)
    stale = catalog.load_table("db.t")
    table.append(_rows(3))  # matches the filter below
    table.append(_rows(500))  # does not
    committed = catalog.load_table("db.t").metadata_location
    before = _files(table)

    def commit_stale() -> None:
        if operation == "delete":
            stale.delete("id < 10")
        else:
            stale.overwrite(_rows(7), "id < 10")

    if level == "serializable":
        with pytest.raises(CommitValidationError, match="serializable isolation"):
            commit_stale()
        assert catalog.load_table("db.t").metadata_location == committed
        assert _files(table) == before  # the refused commit's files are gone
        assert _ids(catalog) == [1, 2, 3, 100, 500]
    else:
        commit_stale()
        # Snapshot isolation: the stale writer never saw row 3, which stays.
        added = [7] if operation == "overwrite" else []
        assert _ids(catalog) == sorted([3, 100, 500, *added])


@pytest.mark.parametrize("operation", ["delete", "overwrite"])
def test_serializable_lands_when_concurrent_data_is_outside_the_filter(
    catalog: Catalog, operation: str
) -> None:
    table = _table(catalog)
    stale = catalog.load_table("db.t")
    table.append(_rows(500))
    if operation == "delete":
        stale.delete("id < 10")
        assert _ids(catalog) == [100, 500]
    else:
        stale.overwrite(_rows(7), "id < 10")
        assert _ids(catalog) == [7, 100, 500]


@pytest.mark.parametrize("concurrent", ["delete", "overwrite"])
def test_delete_of_concurrently_removed_files_is_refused(catalog: Catalog, concurrent: str) -> None:
    # Snapshot isolation: the refusal owes nothing to the serializable check of new data.
    table = _table(catalog, "snapshot")
    stale = catalog.load_table("db.t")
    if concurrent == "delete":
        table.delete("id <= 2")  # drops the file of rows 1 and 2 whole
        expected = [100]
    else:
        table.overwrite(_rows(9), "id = 2")  # rewrites that file without row 2
        expected = [1, 9, 100]
    committed = catalog.load_table("db.t").metadata_location
    before = _files(table)
    with pytest.raises(CommitValidationError, match="no longer in the table"):
        stale.delete("id = 1")  # would rewrite the same, now removed, file
    assert catalog.load_table("db.t").metadata_location == committed
    assert _files(table) == before
    assert _ids(catalog) == expected


def test_appends_are_never_refused(catalog: Catalog) -> None:
    table = _table(catalog, "serializable")
    stale = [catalog.load_table("db.t") for _ in range(3)]
    table.delete("id <= 2")
    stale[0].append(_rows(4))
    table.refresh().overwrite(_rows(8), "id >= 100")
    stale[1].append(_rows(5))
    table.refresh().dynamic_partition_overwrite(_rows(6))
    stale[2].append(_rows(7))
    assert _ids(catalog) == [6, 7]  # the unpartitioned replace dropped 4, 5 and 8
    history = catalog.load_table("db.t").history()
    assert len(history) == 2 + 6
