"""Snapshot producers on the in-memory catalog: manifests, summaries, sequence numbers and row
lineage of appends, merges, overwrites, deletes, partition replacement, rewrites, branches and
cherry-picks, read back through the scan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import FrazilError, InvalidUpdateError
from frazil.manifest import read_manifest, read_manifest_list
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.snapshot import FastAppend, MergeAppend, RewriteFiles, new_snapshot_id
from frazil.table.snapshot._merge import pack_end
from frazil.table.write import write_data_files
from frazil.types import NestedField, parse_type


def _schema() -> Schema:
    return Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )


def _rows(ids: list[int], cat: str = "a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table(catalog: InMemoryCatalog, version: int = 2, **kwargs: Any) -> Table:
    return catalog.create_table("db.t", _schema(), format_version=version, **kwargs)


def _partitioned(catalog: InMemoryCatalog, version: int = 2) -> Table:
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),))
    return catalog.create_table("db.t", _schema(), partition_spec=spec, format_version=version)


def _ids(table: Table, **scan: Any) -> list[int]:
    return sorted(table.scan(**scan).to_arrow().column("id").to_pylist())


def _list(table: Table) -> list[dict[str, Any]]:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    rows: list[dict[str, Any]] = read_manifest_list(snapshot.manifest_list).to_pylist()
    return rows


def _entries(table: Table) -> list[dict[str, Any]]:
    out = []
    for m in _list(table):
        out.extend(read_manifest(m["manifest_path"], manifest_file=m).to_pylist())
    return out


def test_snapshot_ids_are_random_positive_longs() -> None:
    ids = {new_snapshot_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(0 < i < 2**63 for i in ids)
    assert max(ids) > 2**60  # spread over the whole range, not derived from time


@pytest.mark.parametrize("version", [1, 2, 3])
def test_append_summaries_sequence_numbers_and_totals(
    catalog: InMemoryCatalog, version: int
) -> None:
    table = _table(catalog, version)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4, 5]), snapshot_properties={"app": "test"})
    first, second = table.snapshots()
    assert second.parent_snapshot_id == first.snapshot_id
    assert second.summary is not None
    assert second.summary["operation"] == "append"
    assert second.summary["added-data-files"] == "1"
    assert second.summary["added-records"] == "2"
    assert second.summary["total-records"] == "5"
    assert second.summary["total-data-files"] == "2"
    assert second.summary["changed-partition-count"] == "1"
    assert second.summary["app"] == "test"
    assert int(second.summary["total-files-size"]) == sum(
        int(s.summary["added-files-size"]) for s in (first, second) if s.summary
    )
    expected_seq = (0, 0) if version == 1 else (1, 2)
    assert (first.sequence_number, second.sequence_number) == expected_seq
    assert table.metadata.last_sequence_number == expected_seq[1]
    # The new manifest comes first; entries inherit the sequence number of their snapshot.
    rows = _list(table)
    assert rows[0]["added_snapshot_id"] == second.snapshot_id
    if version >= 2:
        by_path = {e["data_file"]["file_path"]: e["sequence_number"] for e in _entries(table)}
        assert sorted(by_path.values()) == [1, 2]
    assert _ids(table) == [1, 2, 3, 4, 5]


def test_v3_row_lineage(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, 3)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4, 5]))
    first, second = table.snapshots()
    assert (first.first_row_id, first.added_rows) == (0, 3)
    assert second.first_row_id == 3
    assert table.metadata.next_row_id == 3 + (second.added_rows or 0)
    rows = _list(table)
    assert rows[0]["first_row_id"] == 3
    rows_by_id = {r["first_row_id"] for r in rows}
    assert rows_by_id == {0, 3}
    lineage = table.scan(selected_fields=("id", "_row_id")).to_arrow()
    assert sorted(lineage.column("_row_id").to_pylist()) == [0, 1, 2, 3, 4]


def test_manifests_written_once_and_one_list_per_commit(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    metadata = Path(table.location(), "metadata")
    manifests = [p for p in metadata.iterdir() if p.name.endswith("-m0.avro")]
    lists = [p for p in metadata.iterdir() if p.name.startswith("snap-")]
    assert len(manifests) == 1 and len(lists) == 1
    snapshot = table.current_snapshot()
    assert snapshot is not None
    name = lists[0].name
    assert name.startswith(f"snap-{snapshot.snapshot_id}-1-") and name.endswith(".avro")


def test_fast_append_keeps_parent_manifests(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, properties={"commit.manifest.min-count-to-merge": "2"})
    for i in range(3):
        with table.transaction() as txn:
            producer = FastAppend(txn.staged_metadata, table.io)
            for f in write_data_files(txn.staged_metadata, table.io, _rows([i])):
                producer.add_file(f, owned=True)
            txn.add_change(producer)
    assert len(_list(table)) == 3
    assert _ids(table) == [0, 1, 2]


def test_merge_append_bin_packs_into_existing_entries(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, properties={"commit.manifest.min-count-to-merge": "3"})
    table.append(_rows([1]))
    table.append(_rows([2]))
    assert len(_list(table)) == 2  # below the minimum count: not merged
    table.append(_rows([3]))
    rows = _list(table)
    assert len(rows) == 1
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert rows[0]["added_files_count"] == 1 and rows[0]["existing_files_count"] == 2
    entries = _entries(table)
    statuses = sorted((e["status"], e["sequence_number"]) for e in entries)
    # Existing entries keep their own sequence numbers, the new one gets the new snapshot's.
    assert statuses == [(0, 1), (0, 2), (1, 3)]
    assert _ids(table) == [1, 2, 3]


def test_merge_disabled_by_property(catalog: InMemoryCatalog) -> None:
    table = _table(
        catalog,
        properties={
            "commit.manifest-merge.enabled": "false",
            "commit.manifest.min-count-to-merge": "2",
        },
    )
    for i in range(3):
        table.append(_rows([i]))
    assert len(_list(table)) == 3


def test_pack_end_keeps_order_and_underfills_the_first_bin() -> None:
    items = [{"manifest_length": n, "n": i} for i, n in enumerate([5, 5, 5, 5, 5])]
    bins = pack_end(items, 10)
    assert [[m["n"] for m in b] for b in bins] == [[0], [1, 2], [3, 4]]


def test_overwrite_by_filter_with_copy_on_write(catalog: InMemoryCatalog) -> None:
    table = _partitioned(catalog)
    table.append(pa.concat_tables([_rows([1, 2], "a"), _rows([3, 4], "b")]))
    table.overwrite(_rows([10], "c"), overwrite_filter="cat = 'a' OR id = 3")
    assert _ids(table) == [4, 10]
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    s = snapshot.summary
    assert s["operation"] == "overwrite"
    # cat=a dropped whole, cat=b rewritten (one file out, one in), cat=c added.
    assert s["deleted-data-files"] == "2" and s["added-data-files"] == "2"
    assert s["deleted-records"] == "4" and s["added-records"] == "2"
    assert s["total-records"] == "2"
    deleted = [e for e in _entries(table) if e["status"] == 2]
    assert {e["snapshot_id"] for e in deleted} == {snapshot.snapshot_id}


def test_delete_drops_whole_files_by_strict_metrics(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([10, 11]))
    before = {e["data_file"]["file_path"] for e in _entries(table)}
    table.delete("id >= 10")
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["operation"] == "delete"
    assert snapshot.summary["deleted-data-files"] == "1"
    assert "added-data-files" not in snapshot.summary
    after = {e["data_file"]["file_path"] for e in _entries(table) if e["status"] != 2}
    assert after < before and len(after) == 1
    assert _ids(table) == [1, 2, 3]


def test_delete_rewrites_partly_matching_files(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(pa.table({"id": pa.array([1, 2, None], pa.int64()), "cat": ["a", "b", "c"]}))
    table.delete("id < 2")
    rows = table.scan().to_arrow()
    # The null row does not match id < 2 and stays (three-valued logic).
    assert sorted(rows.column("cat").to_pylist()) == ["b", "c"]
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["operation"] == "overwrite"
    assert snapshot.summary["deleted-records"] == "3"
    assert snapshot.summary["added-records"] == "2"


def test_delete_matching_nothing_commits_nothing(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    location = table.metadata_location
    table.delete("id > 100")
    assert table.metadata_location == location
    files = list(Path(table.location(), "data").rglob("*.parquet"))
    assert len(files) == 1  # the copy of the file that had no matching row was removed


def test_dynamic_partition_overwrite(catalog: InMemoryCatalog) -> None:
    table = _partitioned(catalog)
    table.append(pa.concat_tables([_rows([1, 2], "a"), _rows([3], "b")]))
    table.dynamic_partition_overwrite(_rows([7, 8], "b"))
    assert _ids(table) == [1, 2, 7, 8]
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["operation"] == "overwrite"
    assert snapshot.summary["changed-partition-count"] == "1"


def test_partition_summaries_within_limit(catalog: InMemoryCatalog) -> None:
    table = _partitioned(catalog)
    with table.update_properties() as props:
        props.set("write.summary.partition-limit", "10")
    table.append(pa.concat_tables([_rows([1, 2], "a b"), _rows([3], "c")]))
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    s = snapshot.summary
    assert s["partition-summaries-included"] == "true"
    assert s["partitions.cat=a+b"].startswith("added-data-files=1,added-records=2,")
    assert "partitions.cat=c" in s


def test_rewrite_files_is_a_replace(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]))
    old = [e["data_file"] for e in _entries(table)]
    with table.transaction() as txn:
        producer = RewriteFiles(txn.staged_metadata, table.io)
        for f in old:
            producer.delete_file(f["file_path"])
        for f in write_data_files(txn.staged_metadata, table.io, _rows([1, 2])):
            producer.add_file(f, owned=True)
        txn.add_change(producer)
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["operation"] == "replace"
    assert snapshot.summary["total-data-files"] == "1"
    assert _ids(table) == [1, 2]


def test_append_to_a_new_branch_leaves_main(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    main_id = table.metadata.current_snapshot_id
    table.append(_rows([2]), branch="audit")
    assert table.metadata.current_snapshot_id == main_id
    ref = table.metadata.ref("audit")
    assert ref is not None and ref.is_branch
    branch_head = table.snapshot_by_id(ref.snapshot_id)
    assert branch_head is not None and branch_head.parent_snapshot_id == main_id
    assert _ids(table) == [1]
    assert _ids(table, ref="audit") == [1, 2]
    assert branch_head.summary is not None and branch_head.summary["total-records"] == "2"


def test_cannot_write_to_a_tag(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    with table.manage_snapshots() as refs:
        refs.create_tag("v1")
    with pytest.raises(InvalidUpdateError, match="is a tag"):
        table.append(_rows([2]), branch="v1")


def test_cherry_pick_and_fast_forward(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]), branch="b")
    branch_ref = table.metadata.ref("b")
    assert branch_ref is not None
    # The branch head's parent is main's head: a fast-forward, no new snapshot.
    with table.transaction() as txn:
        txn.cherry_pick(branch_ref.snapshot_id)
    assert table.metadata.current_snapshot_id == branch_ref.snapshot_id
    # Now main moves on, and another branch snapshot must be re-applied.
    table.append(_rows([3]), branch="c")
    c_ref = table.metadata.ref("c")
    assert c_ref is not None
    table.append(_rows([4]))
    with table.transaction() as txn:
        txn.cherry_pick(c_ref.snapshot_id)
    head = table.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["source-snapshot-id"] == str(c_ref.snapshot_id)
    assert _ids(table) == [1, 2, 3, 4]


def test_add_files_registers_and_refuses_duplicates(
    catalog: InMemoryCatalog, tmp_path: Path
) -> None:
    table = _table(catalog)
    path = str(tmp_path / "external.parquet")
    pq.write_table(_rows([5, 6]), path)
    table.add_files([path])
    assert _ids(table) == [5, 6]
    with pytest.raises(FrazilError, match="already in the table"):
        table.add_files([path])
    assert Path(path).exists()


def test_transaction_with_schema_change_and_append(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    with table.transaction() as txn:
        with txn.update_schema() as update:
            update.add_column("extra", "int")
        txn.append(
            pa.table(
                {"id": pa.array([1], pa.int64()), "cat": ["a"], "extra": pa.array([7], pa.int32())}
            )
        )
    out = table.scan().to_arrow()
    assert out.column("extra").to_pylist() == [7]
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.schema_id == table.schema().schema_id


def test_merge_append_manifest_class_default(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    producer = MergeAppend(table.metadata, table.io)
    assert producer.operation == "append"


def test_fast_forward_a_branch(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1]))
    table.append(_rows([2]), branch="dev")
    dev = table.metadata.ref("dev")
    assert dev is not None
    with table.manage_snapshots() as refs:
        refs.fast_forward("main", "dev")
    assert table.metadata.current_snapshot_id == dev.snapshot_id
    table.append(_rows([3]))
    table.append(_rows([4]), branch="dev")  # dev and main have diverged
    with pytest.raises(InvalidUpdateError, match="not an ancestor"):
        with table.manage_snapshots() as refs:
            refs.fast_forward("main", "dev")
