"""Cherry-picking through ``table.manage_snapshots().cherry_pick`` (Java's
SnapshotManager.cherrypick over CherryPickOperation): fast-forwards, re-applied appends and
dynamic partition overwrites, and what Java refuses (other operations, snapshots already on
the branch or already picked, partitions changed since, WAP ids published twice)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table import Table
from frazil.types import NestedField, parse_type


def _rows(ids: list[int], cat: str = "a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


def _ids(table: Table, **scan: Any) -> list[int]:
    return sorted(table.scan(**scan).to_arrow().column("id").to_pylist())


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table(catalog: InMemoryCatalog, partitioned: bool = False) -> Table:
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),) if partitioned else ())
    props = {"commit.retry.min-wait-ms": "1"}
    return catalog.create_table("db.t", schema, partition_spec=spec, properties=props)


def _head(table: Table, ref: str) -> Snapshot:
    r = table.metadata.ref(ref)
    assert r is not None
    snapshot = table.snapshot_by_id(r.snapshot_id)
    assert snapshot is not None
    return snapshot


def _current(table: Table) -> Snapshot:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    return snapshot


def test_fast_forward_any_operation(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    table.delete("id = 1", branch="b")  # a delete can be picked only as a fast-forward
    picked = _head(table, "b")
    count = len(table.metadata.snapshots)
    with table.manage_snapshots() as ms:
        ms.cherry_pick(picked.snapshot_id)
    assert table.metadata.current_snapshot_id == picked.snapshot_id
    assert len(table.metadata.snapshots) == count  # no new snapshot
    assert _ids(table) == [2]


def test_append_reapplied_once_with_refs_staged_around_it(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]), branch="b")
    picked = _head(table, "b")
    table.append(_rows([3]))  # main moves on: the pick is re-applied, not fast-forwarded
    before = table.metadata.current_snapshot_id
    versions = len(table.metadata.metadata_log)
    with table.manage_snapshots() as ms:
        ms.create_tag("before")
        ms.cherry_pick(picked.snapshot_id)
        ms.create_tag("after")  # at the cherry-picked snapshot: steps apply in order
    head = _current(table)
    assert head.parent_snapshot_id == before
    assert head.operation == "append"
    assert head.summary is not None
    assert head.summary["source-snapshot-id"] == str(picked.snapshot_id)
    assert "published-wap-id" not in head.summary
    assert head.summary["added-data-files"] == "1"
    assert _ids(table) == [1, 2, 3]
    tags = {name: ref.snapshot_id for name, ref in table.metadata.refs.items()}
    assert tags["before"] == before and tags["after"] == head.snapshot_id
    assert len(table.metadata.metadata_log) == versions + 1  # one commit
    # Picking it again, or an ancestor, is refused (Java's CherrypickAncestorCommitException).
    with pytest.raises(CommitValidationError, match=r"already cherry-picked .* as snapshot"):
        table.manage_snapshots().cherry_pick(picked.snapshot_id).commit_to()
    with pytest.raises(CommitValidationError, match="already an ancestor"):
        table.manage_snapshots().cherry_pick(before).commit_to()


def test_wap_id_published_only_once(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]), branch="b1", snapshot_properties={"wap.id": "w1"})
    table.append(_rows([3]), branch="b2", snapshot_properties={"wap.id": "w1"})
    table.append(_rows([4]))
    table.manage_snapshots().cherry_pick(_head(table, "b1").snapshot_id).commit_to()
    assert _current(table).summary == {**(_current(table).summary or {}), "published-wap-id": "w1"}
    with pytest.raises(CommitValidationError, match="WAP id 'w1' was already published"):
        table.manage_snapshots().cherry_pick(_head(table, "b2").snapshot_id).commit_to()
    assert _ids(table) == [1, 2, 4]


def test_other_operations_refused_unless_fast_forward(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    table.delete("id = 1", branch="b")
    table.append(_rows([3]))
    with pytest.raises(InvalidUpdateError, match="only appends and dynamic partition overwrites"):
        table.manage_snapshots().cherry_pick(_head(table, "b").snapshot_id)
    table.overwrite(_rows([9]), overwrite_filter="id = 3", branch="c")  # not dynamic
    table.append(_rows([4]))
    with pytest.raises(InvalidUpdateError, match="operation 'overwrite'"):
        table.manage_snapshots().cherry_pick(_head(table, "c").snapshot_id)
    with pytest.raises(InvalidUpdateError, match="unknown snapshot 42"):
        table.manage_snapshots().cherry_pick(42)


def test_dynamic_partition_overwrite_is_reapplied(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, partitioned=True)
    table.append(pa.concat_tables([_rows([1, 2], "a"), _rows([3], "b")]))
    table.dynamic_partition_overwrite(_rows([10], "a"), branch="wap")
    picked = _head(table, "wap")
    assert picked.summary is not None and picked.summary["replace-partitions"] == "true"
    table.append(_rows([4], "b"))  # another partition: no conflict
    with table.manage_snapshots() as ms:
        ms.cherry_pick(picked.snapshot_id)
    head = _current(table)
    assert head.operation == "overwrite"
    assert head.summary is not None
    assert head.summary["source-snapshot-id"] == str(picked.snapshot_id)
    assert head.summary["deleted-data-files"] == "1"
    assert head.summary["added-data-files"] == "1"
    assert _ids(table) == [3, 4, 10]


def test_dynamic_overwrite_refused_when_its_partition_changed(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, partitioned=True)
    table.append(_rows([1], "a"))
    table.dynamic_partition_overwrite(_rows([10], "a"), branch="wap")
    picked = _head(table, "wap")
    table.append(_rows([2], "a"))  # partition a changed since the overwrite's parent
    with pytest.raises(CommitValidationError, match=r"partition \{'cat': 'a'\} it replaces"):
        table.manage_snapshots().cherry_pick(picked.snapshot_id)
    assert _ids(table) == [1, 2]


def test_dynamic_overwrite_conflict_found_on_retry(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, partitioned=True)
    table.append(_rows([1], "a"))
    table.dynamic_partition_overwrite(_rows([10], "a"), branch="wap")
    table.append(_rows([2], "b"))
    ms = table.manage_snapshots().cherry_pick(_head(table, "wap").snapshot_id)
    catalog.load_table("db.t").append(_rows([3], "a"))  # lands while the pick is built
    files = {p for p in Path(table.location(), "metadata").iterdir()}
    with pytest.raises(CommitValidationError, match="it replaces changed since"):
        ms.commit_to()
    fresh = catalog.load_table("db.t")
    assert _ids(fresh) == [1, 2, 3]
    # The manifest lists the pick wrote are gone; only the winner's metadata was added.
    left = {p for p in Path(table.location(), "metadata").iterdir()} - files
    assert all(p.name.endswith(".metadata.json") for p in left)


def test_dynamic_overwrite_not_based_on_an_ancestor_is_refused(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, partitioned=True)
    table.append(_rows([1], "a"))
    table.append(_rows([2], "b"), branch="side")
    table.dynamic_partition_overwrite(_rows([10], "a"), branch="side")
    with pytest.raises(InvalidUpdateError, match="not based on an ancestor"):
        table.manage_snapshots().cherry_pick(_head(table, "side").snapshot_id)


def test_cherry_pick_in_a_transaction_with_other_changes(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]), branch="b")
    picked = _head(table, "b")
    table.append(_rows([3]))
    with table.transaction() as txn:
        with txn.manage_snapshots() as ms:
            ms.cherry_pick(picked.snapshot_id)
        txn.append(_rows([4]))
    head = _current(table)
    parent = table.snapshot_by_id(head.parent_snapshot_id or 0)
    assert parent is not None and parent.summary is not None
    assert parent.summary["source-snapshot-id"] == str(picked.snapshot_id)
    assert _ids(table) == [1, 2, 3, 4]


def test_cherry_pick_needs_a_table_or_transaction(catalog: InMemoryCatalog) -> None:
    from frazil.table import ManageSnapshots

    table = _table(catalog)
    table.append(_rows([1]))
    snapshot_id = _current(table).snapshot_id
    with pytest.raises(InvalidUpdateError, match=r"table.manage_snapshots\(\)"):
        ManageSnapshots(table.metadata).cherry_pick(snapshot_id)
