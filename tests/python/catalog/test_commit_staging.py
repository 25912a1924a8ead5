"""The transaction stages each change once: the first attempt reuses the updates add_change
computed while the table is still at the metadata they were staged on, and only a retry on a
refreshed base asks the changes again (so a producer writes one manifest list per base, and the
stale one of a lost race is deleted)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitFailedError, TableAlreadyExistsError
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.transaction import PendingChange
from frazil.table.updates import SetProperties, TableUpdate
from frazil.types import NestedField, parse_type

FAST_RETRY = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2"}


def _schema() -> Schema:
    return Schema(
        NestedField(1, "id", parse_type("long"), True),
        NestedField(2, "name", parse_type("string"), False),
    )


def _rows(*ids: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"r{i}" for i in ids], pa.string()),
        }
    )


def _table(catalog: InMemoryCatalog, **properties: str) -> Table:
    return catalog.create_table("db.t", _schema(), properties={**FAST_RETRY, **properties})


def _manifest_lists(table: Table) -> set[str]:
    return {p.name for p in Path(table.location(), "metadata").glob("snap-*.avro")}


def _referenced_lists(table: Table) -> set[str]:
    return {Path(s.manifest_list).name for s in table.snapshots() if s.manifest_list}


class CountingChange(PendingChange):
    """Sets ``key`` to one more than its staged value (so it depends on earlier changes) and
    counts the metadata it was asked about."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.seen: list[TableMetadata] = []

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        self.seen.append(staged)
        value = int(staged.properties.get(self.key, "0")) + 1
        return (SetProperties({self.key: str(value)}),)


def test_one_change_transaction_writes_one_manifest_list(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    with table.transaction() as txn:
        txn.append(_rows(1, 2))
    assert len(_manifest_lists(table)) == 1
    assert _manifest_lists(table) == _referenced_lists(table)


def test_table_append_writes_one_manifest_list_per_commit(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows(1))
    table.append(_rows(2))
    assert len(_manifest_lists(table)) == 2
    assert _manifest_lists(table) == _referenced_lists(table)
    assert table.scan().to_arrow().num_rows == 2


def test_first_attempt_does_not_ask_the_change_again(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    change = CountingChange("n")
    txn = table.transaction()
    txn.add_change(change)
    txn.commit_transaction()
    assert len(change.seen) == 1
    assert catalog.load_table("db.t").properties["n"] == "1"


def test_lost_race_recomputes_and_deletes_the_stale_list(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    txn = table.transaction()
    txn.append(_rows(1))
    staged_lists = _manifest_lists(table)
    assert len(staged_lists) == 1
    # Another writer commits between staging and committing: the staged list is stale.
    catalog.load_table("db.t").append(_rows(2))
    txn.commit_transaction()
    final = catalog.load_table("db.t")
    assert len(final.snapshots()) == 2
    current = final.current_snapshot()
    assert current is not None and current.parent_snapshot_id == final.snapshots()[0].snapshot_id
    # Exactly one list per snapshot remains: the stale attempt's was recomputed and deleted.
    assert _manifest_lists(final) == _referenced_lists(final)
    assert not staged_lists & _manifest_lists(final)
    assert sorted(final.scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_dependent_changes_restage_on_a_refreshed_base(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    first, second = CountingChange("n"), CountingChange("n")
    txn = table.transaction()
    txn.add_change(first)
    txn.add_change(second)
    assert txn.staged_metadata.properties["n"] == "2"
    with catalog.load_table("db.t").update_properties() as props:
        props.set("n", "10")
    txn.commit_transaction()
    assert catalog.load_table("db.t").properties["n"] == "12"
    # Staged once each, then once more each on the refreshed base, the second change on
    # top of the first's updates.
    assert len(first.seen) == 2 and len(second.seen) == 2
    assert second.seen[1].properties["n"] == "11"


def test_two_appends_in_one_transaction_chain(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    with table.transaction() as txn:
        txn.append(_rows(1))
        txn.append(_rows(2))
    snapshots = table.snapshots()
    assert len(snapshots) == 2
    assert snapshots[1].parent_snapshot_id == snapshots[0].snapshot_id
    assert _manifest_lists(table) == _referenced_lists(table)
    # And after a lost race both are re-applied on the other writer's snapshot.
    txn = table.transaction()
    txn.append(_rows(3))
    txn.append(_rows(4))
    catalog.load_table("db.t").append(_rows(5))
    txn.commit_transaction()
    final = catalog.load_table("db.t")
    chain = [s.snapshot_id for s in final.snapshots()]
    assert [s.parent_snapshot_id for s in final.snapshots()[1:]] == chain[:-1]
    assert _manifest_lists(final) == _referenced_lists(final)
    assert sorted(final.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4, 5]


def test_lost_race_that_moved_nothing_rereads_nothing(
    catalog: InMemoryCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lost race that left the pointer where it was (a busy catalog) retries on the same
    metadata: no reload of the metadata file, and the staged updates still serve."""
    table = _table(catalog)
    change = CountingChange("n")
    txn = table.transaction()
    txn.add_change(change)
    swap, calls = catalog._swap, []

    def busy_once(*args: object) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise CommitFailedError("database is locked")
        swap(*args)  # type: ignore[arg-type]

    loads: list[object] = []
    load_table = catalog.load_table

    def counted_load(identifier: object) -> Table:
        loads.append(identifier)
        return load_table(identifier)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "_swap", busy_once)
    monkeypatch.setattr(catalog, "load_table", counted_load)
    txn.commit_transaction()
    assert len(calls) == 2 and loads == []
    assert len(change.seen) == 1
    assert table.properties["n"] == "1"


def test_create_table_transaction_stages_once(catalog: InMemoryCatalog) -> None:
    txn = catalog.create_table_transaction("db.new", _schema(), properties=FAST_RETRY)
    txn.append(_rows(1, 2))
    change = CountingChange("n")
    txn.add_change(change)
    table = txn.commit_transaction()
    assert len(change.seen) == 1
    assert table.properties["n"] == "1"
    assert len(_manifest_lists(table)) == 1 == len(_referenced_lists(table))
    assert catalog.load_table("db.new").scan().to_arrow().num_rows == 2
    # The name is taken now: a second create transaction fails and deletes what it wrote.
    late = catalog.create_table_transaction("db.late", _schema())
    late.append(_rows(3))
    catalog.create_table("db.late", _schema())
    before = set(Path(table.location()).parent.joinpath("late").rglob("*"))
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        late.commit_transaction()
    after = set(Path(table.location()).parent.joinpath("late").rglob("*"))
    assert not {p for p in after - before if p.is_file()}
    assert {p for p in before - after if p.suffix in (".parquet", ".avro")}
