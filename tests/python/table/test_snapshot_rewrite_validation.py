"""Validation of rewrites (``replace``) and of removals against concurrent delete files: a
rewrite keeps the table's records where the counts prove it, and a data file that gained a
deletion vector, a position delete file or an equality delete file since the change was built
cannot be rewritten or removed (Java's ``validateNoNewDeletesForDataFiles``, by
``DeleteFileIndex.forDataFile``'s rules)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitValidationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.snapshot import RewriteFiles
from frazil.table.write import write_data_files
from frazil.types import NestedField, parse_type
from snapshot_delete_helpers import (
    commit_deletes,
    deletion_vector,
    equality_deletes,
    position_deletes,
)


def _rows(ids: list[int], cat: str = "a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table(catalog: InMemoryCatalog, version: int = 2, partitioned: bool = False) -> Table:
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),) if partitioned else ())
    props = {"commit.retry.min-wait-ms": "1"}
    return catalog.create_table(
        "db.t", schema, partition_spec=spec, format_version=version, properties=props
    )


def _files(table: Table) -> dict[int, str]:
    """Data file path by record count (the tests give each file a distinct count)."""
    return {t.file.record_count or 0: str(t.file.file_path) for t in table.scan().plan_files()}


def _rewrite(table: Table, paths: list[str], rows: pa.Table) -> RewriteFiles:
    producer = RewriteFiles(table.metadata, table.io)
    for path in paths:
        producer.delete_file(path)
    for file in write_data_files(table.metadata, table.io, rows):
        producer.add_file(file, owned=True)
    return producer


def _commit(table: Table, producer: RewriteFiles) -> None:
    with table.transaction() as txn:
        txn.add_change(producer)


# --- record counts ------------------------------------------------------------------------


def test_rewrite_changing_the_record_count_is_refused(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    table.append(_rows([3]))
    files = _files(table)
    producer = _rewrite(table, [files[2], files[1]], _rows([1, 2]))  # drops the 3
    with pytest.raises(
        CommitValidationError,
        match="the 2 replaced data files hold 3 records, the 1 added ones 2",
    ):
        _commit(table, producer)
    assert _ids(catalog.load_table("db.t")) == [1, 2, 3]


def test_rewrite_keeping_the_records_lands(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2]))
    table.append(_rows([3]))
    files = _files(table)
    _commit(table, _rewrite(table, [files[2], files[1]], _rows([1, 2, 3])))
    head = table.current_snapshot()
    assert head is not None and head.operation == "replace"
    assert _ids(table) == [1, 2, 3]


def test_record_count_not_checked_when_delete_files_apply(catalog: InMemoryCatalog) -> None:
    # A compaction that applies a position delete holds fewer records, legitimately.
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    (path,) = _files(table).values()
    commit_deletes(table, [position_deletes(table, "pos.parquet", [(path, 0)])])
    assert _ids(table) == [2, 3]
    _commit(table, _rewrite(table, [path], _rows([2, 3])))
    assert _ids(table) == [2, 3]


# --- concurrent delete files for removed data files ---------------------------------------


def test_concurrent_deletion_vector_for_a_rewritten_file(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, version=3)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4]))
    table.append(_rows([5, 6]))
    files = _files(table)
    a, b, c = files[3], files[1], files[2]
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    other = catalog.load_table("db.t")
    dv = deletion_vector(other, "dv.puffin", a, [0])
    commit_deletes(other, [dv], operation="delete")
    with pytest.raises(CommitValidationError, match=f"deletion vector .*dv.puffin for {a}"):
        _commit(table, stale)
    fresh = catalog.load_table("db.t")
    assert _ids(fresh) == [2, 3, 4, 5, 6]
    # A deletion vector for another file does not conflict.
    stale = _rewrite(fresh, [b], _rows([4]))
    commit_deletes(other, [deletion_vector(other, "dv-c.puffin", c, [1])], operation="delete")
    _commit(fresh, stale)
    assert _ids(catalog.load_table("db.t")) == [2, 3, 4, 5]


def test_concurrent_partition_scoped_position_deletes(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4]))
    files = _files(table)
    a, b = files[3], files[1]
    other = catalog.load_table("db.t")
    # No referenced_data_file: it applies to the files its file_path bounds cover.
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    pos = position_deletes(other, "pos-ab.parquet", [(a, 0), (b, 0)], referenced=False)
    commit_deletes(other, [pos])
    with pytest.raises(CommitValidationError, match=f"position deletes .*pos-ab.parquet for {a}"):
        _commit(table, stale)
    # Bounds that exclude the rewritten file: no conflict.
    fresh = catalog.load_table("db.t")
    stale = _rewrite(fresh, [a], _rows([2, 3]))
    commit_deletes(other, [position_deletes(other, "pos-b.parquet", [(b, 1)], referenced=False)])
    _commit(fresh, stale)


def test_concurrent_equality_deletes_global_or_same_partition(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    (a,) = _files(table).values()
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq.parquet", [9])])  # global: applies
    with pytest.raises(CommitValidationError, match=f"equality deletes .*eq.parquet for {a}"):
        _commit(table, stale)


def test_equality_deletes_of_another_partition_do_not_conflict(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, partitioned=True)
    table.append(pa.concat_tables([_rows([1, 2, 3], "a"), _rows([4], "b")]))
    files = _files(table)
    a = files[3]
    other = catalog.load_table("db.t")
    stale = _rewrite(table, [a], _rows([1, 2, 3], "a"))
    commit_deletes(other, [equality_deletes(other, "eq-b.parquet", [4], {"cat": "b"})])
    _commit(table, stale)
    assert _ids(catalog.load_table("db.t")) == [1, 2, 3]
    table = catalog.load_table("db.t")
    (a,) = [p for n, p in _files(table).items() if n == 3]
    stale = _rewrite(table, [a], _rows([1, 2, 3], "a"))
    commit_deletes(other, [equality_deletes(other, "eq-a.parquet", [2], {"cat": "a"})])
    with pytest.raises(CommitValidationError, match=f"equality deletes .*eq-a.parquet for {a}"):
        _commit(table, stale)


@pytest.mark.parametrize(
    ("keys", "conflicts"),
    [([9], False), ([0, -4], False), ([2], True), ([0, 7], True), ([3, 40], True)],
)
def test_equality_deletes_whose_bounds_miss_the_file_do_not_conflict(
    catalog: InMemoryCatalog, keys: list[int], conflicts: bool
) -> None:
    # Java's DeleteFileIndex.forDataFile narrows equality deletes by the data file's metrics
    # (canContainEqDeletesForFile): keys outside the file's id bounds [1, 3] delete none of
    # its rows, so rewriting it does not undo them. frazil asks the planner's overlap test.
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    (a,) = _files(table).values()
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq.parquet", keys, metrics=True)])
    if not conflicts:
        _commit(table, stale)
        assert _ids(catalog.load_table("db.t")) == [1, 2, 3]
        return
    with pytest.raises(CommitValidationError, match=f"equality deletes .*eq.parquet for {a}"):
        _commit(table, stale)
    assert _ids(catalog.load_table("db.t")) == sorted({1, 2, 3} - set(keys))


def test_removing_a_file_that_equality_deletes_miss_by_bounds(catalog: InMemoryCatalog) -> None:
    # The same narrowing for a delete that removes the file whole (OverwriteFiles).
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([10, 11]))
    stale = catalog.load_table("db.t")
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq-11.parquet", [11], metrics=True)])
    stale.delete("id <= 3")  # removes [1, 2, 3] whole; the keys miss it
    assert _ids(catalog.load_table("db.t")) == [10]
    stale = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq-10.parquet", [10], metrics=True)])
    with pytest.raises(CommitValidationError, match=r"eq-10\.parquet"):
        stale.delete("id >= 10")
    assert _ids(catalog.load_table("db.t")) == []


def test_equality_deletes_against_a_file_without_metrics_conflict(
    catalog: InMemoryCatalog,
) -> None:
    # Without the data file's bounds nothing proves the keys miss it: a possible conflict.
    table = _table(catalog)
    table.update_properties().set("write.metadata.metrics.default", "none").commit()
    table.append(_rows([1, 2, 3]))
    (a,) = _files(table).values()
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq.parquet", [9], metrics=True)])
    with pytest.raises(CommitValidationError, match=f"equality deletes .*eq.parquet for {a}"):
        _commit(table, stale)


def test_equality_deletes_reach_only_the_removed_files_they_overlap(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    table.append(_rows([10, 11]))
    files = _files(table)
    low, high = files[3], files[2]
    stale = _rewrite(table, [low, high], _rows([1, 2, 3, 10, 11]))
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq.parquet", [11, 12], metrics=True)])
    with pytest.raises(CommitValidationError) as raised:
        _commit(table, stale)
    assert f"eq.parquet for {high}" in str(raised.value)
    assert low not in str(raised.value)


# --- dynamic partition overwrites against concurrent deletes --------------------------------


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_replacing_a_partition_that_gained_deletes_is_refused(
    catalog: InMemoryCatalog, level: str
) -> None:
    # Java's BaseReplacePartitions.validateNoConflictingDeletes (Spark sets it at both levels):
    # replacing the partition would silently undo the concurrent delete.
    table = _table(catalog, partitioned=True)
    table.update_properties().set("write.update.isolation-level", level).commit()
    table.append(pa.concat_tables([_rows([1, 2, 3], "a"), _rows([4], "b")]))
    stale = catalog.load_table("db.t")
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq-b.parquet", [4], {"cat": "b"})])
    stale.dynamic_partition_overwrite(_rows([7], "a"))  # another partition: lands
    assert _ids(catalog.load_table("db.t")) == [7]
    stale = catalog.load_table("db.t")
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq-a.parquet", [7], {"cat": "a"})])
    with pytest.raises(
        CommitValidationError, match=f"delete file added concurrently .*eq-a.parquet .*{level}"
    ):
        stale.dynamic_partition_overwrite(_rows([8], "a"))
    assert _ids(catalog.load_table("db.t")) == []


def test_replacing_a_partition_whose_files_were_removed_is_refused(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog, partitioned=True)
    table.update_properties().set("write.update.isolation-level", "snapshot").commit()
    table.append(pa.concat_tables([_rows([1, 2, 3], "a"), _rows([4], "b")]))
    stale = catalog.load_table("db.t")
    catalog.load_table("db.t").delete("cat = 'b'")
    stale.dynamic_partition_overwrite(_rows([5], "a"))  # b's removal is outside: lands
    assert _ids(catalog.load_table("db.t")) == [5]
    stale = catalog.load_table("db.t")
    (a,) = _files(stale).values()
    catalog.load_table("db.t").delete("id = 5")
    with pytest.raises(CommitValidationError, match=f"removed concurrently: {a} .*snapshot"):
        stale.dynamic_partition_overwrite(_rows([6], "a"))
    assert _ids(catalog.load_table("db.t")) == []


def test_rewrite_keeping_its_sequence_number_keeps_the_equality_deletes_that_apply(
    catalog: InMemoryCatalog,
) -> None:
    # A compaction of every data file keeps the starting snapshot's data sequence number: the
    # equality deletes committed since still apply to its files, so they must stay, although
    # they are older than every data file the table held when the rewrite committed (the
    # append after them). Java 1.10.2 drops them there (dropDeleteFilesOlderThan ignores the
    # rewrite's own files: apache/iceberg#10962) and the deleted rows come back.
    table = _table(catalog)
    table.append(_rows([1, 2, 3]))
    start = table.current_snapshot()
    assert start is not None
    (a,) = _files(table).values()
    stale = _rewrite(table, [a], _rows([1, 2, 3]))
    stale.starting_snapshot_id = start.snapshot_id
    stale.data_sequence_number = start.sequence_number
    other = catalog.load_table("db.t")
    commit_deletes(other, [equality_deletes(other, "eq.parquet", [2], metrics=True)])
    catalog.load_table("db.t").append(_rows([10]))
    _commit(table, stale)
    after = catalog.load_table("db.t")
    assert _ids(after) == [1, 3, 10]
    assert (after.current_snapshot().summary or {}).get("total-equality-deletes") == "1"  # type: ignore[union-attr]
