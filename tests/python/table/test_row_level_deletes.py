"""Merge-on-read deletes (spec: "Row-level Deletes", "Position Delete Files", Puffin
"deletion-vector-v1") and row deltas with equality deletes ("Equality Delete Files"): what is
written, what the table reads afterwards, and the validations of concurrent commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import _native
from frazil.catalog.sql import SqlCatalog
from frazil.errors import CommitValidationError, UnsupportedOperationError, ValidationError
from frazil.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), pa.field("cat", pa.string())])
FILE_PATH_ID = 2147483546
POS_ID = 2147483545


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    return catalog


def _rows(ids: range | list[int], cat: str | None = None) -> pa.Table:
    ids = list(ids)
    cats = [cat or ("a" if i % 2 else "b") for i in ids]
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": cats}, schema=SCHEMA)


def _table(
    catalog: SqlCatalog,
    version: int,
    partition: str | None = "cat",
    name: str = "db.t",
    properties: dict[str, str] | None = None,
) -> Table:
    props = {
        "format-version": str(version),
        "write.delete.mode": "merge-on-read",
        "commit.retry.min-wait-ms": "1",
        **(properties or {}),
    }
    table = catalog.create_table(name, SCHEMA, properties=props)
    if partition is not None:
        with table.update_spec() as spec:
            spec.add_field(partition, "identity")
    for start in (0, 100, 200):
        table.append(_rows(range(start, start + 100)))
    return table


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _deletes(table: Table) -> list[Any]:
    seen: dict[tuple[str, int | None], Any] = {}
    for task in table.scan().plan_files():
        for d in task.delete_files:
            seen[(d.file_path, d.content_offset)] = d
    return list(seen.values())


def _in(ids: range | list[int]) -> str:
    return "id IN (" + ", ".join(str(i) for i in ids) + ")"


def test_v2_position_deletes_per_partition_sorted_with_metrics(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2)
    data_files = {t.file.file_path for t in table.scan().plan_files()}
    table.delete(_in([5, 7, 105, 205, 206]))
    assert _ids(table) == [i for i in range(300) if i not in (5, 7, 105, 205, 206)]
    assert {t.file.file_path for t in table.scan().plan_files()} == data_files  # no rewrite
    deletes = _deletes(table)
    # One file per partition (write.delete.granularity=partition, Java's default).
    assert sorted(d.partition["cat"] for d in deletes) == ["a", "b"]
    for delete in deletes:
        assert (delete.content, delete.file_format) == (1, "PARQUET")
        assert delete.file_path.endswith("-deletes.parquet")
        rows = pq.read_table(delete.file_path)
        schema = pq.read_schema(delete.file_path)
        assert [f.metadata[b"PARQUET:field_id"] for f in schema] == [
            str(FILE_PATH_ID).encode(),
            str(POS_ID).encode(),
        ]
        pairs = list(zip(rows["file_path"].to_pylist(), rows["pos"].to_pylist(), strict=True))
        assert pairs == sorted(pairs)  # spec: sorted by file_path then pos
        assert delete.record_count == len(pairs)
        paths = [p for p, _ in pairs]
        assert delete.lower_bounds[FILE_PATH_ID] == min(paths).encode()
        assert delete.upper_bounds[FILE_PATH_ID] == max(paths).encode()
        assert delete.lower_bounds[POS_ID] == _native.value_to_bytes(
            "long", min(p for _, p in pairs)
        )
        assert delete.value_counts[POS_ID] == len(pairs)
        referenced = set(paths)
        expected = next(iter(referenced)) if len(referenced) == 1 else None
        assert delete.referenced_data_file == expected
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.operation == "delete"
    assert snapshot.summary["added-position-deletes"] == "5"


def test_v2_file_granularity_writes_one_delete_file_per_data_file(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, properties={"write.delete.granularity": "file"})
    table.delete(_in([5, 7, 105, 205, 206]))
    deletes = _deletes(table)
    assert len(deletes) == 4  # 5 and 7 share a file; 105, 205 and 206 are in three more
    assert all(d.referenced_data_file is not None for d in deletes)


def test_v3_one_deletion_vector_per_data_file_merged_on_each_delete(catalog: SqlCatalog) -> None:
    table = _table(catalog, 3)
    table.delete(_in([1, 3, 5]))
    (first,) = _deletes(table)
    assert (first.file_format, first.record_count) == ("PUFFIN", 3)
    table.delete(_in([7, 9]))
    (second,) = _deletes(table)
    # The new vector holds both deletes; the old one was removed in the same commit.
    assert second.referenced_data_file == first.referenced_data_file
    assert second.record_count == 5
    blob = _native.read_puffin_blob(
        second.file_path, second.content_offset, second.content_size_in_bytes
    )
    index = _native.PositionDeleteIndex(second.referenced_data_file)
    index.add_deletion_vector(blob)
    assert len(index) == 5
    summary = table.current_snapshot().summary  # type: ignore[union-attr]
    assert summary["removed-dvs"] == "1" and summary["added-dvs"] == "1"
    assert summary["total-position-deletes"] == "5"
    assert _ids(table) == [i for i in range(300) if i not in (1, 3, 5, 7, 9)]


def test_v3_many_data_files_share_one_puffin_file(catalog: SqlCatalog) -> None:
    table = _table(catalog, 3)
    table.delete(_in([1, 2, 101, 102, 201]))
    deletes = _deletes(table)
    assert len(deletes) == 6 - 1  # five data files touched (a/b in three appends, 201 in one)
    assert len({d.file_path for d in deletes}) == 1
    assert len({d.content_offset for d in deletes}) == len(deletes)
    assert len({d.referenced_data_file for d in deletes}) == len(deletes)


def test_whole_files_are_dropped_and_their_vectors_go_with_them(catalog: SqlCatalog) -> None:
    table = _table(catalog, 3)
    table.delete("id = 1")  # a vector for one 'a' file
    table.delete("cat = 'a'")  # every 'a' file whole
    assert _ids(table) == [i for i in range(300) if i % 2 == 0]
    assert _deletes(table) == []
    summary = table.current_snapshot().summary  # type: ignore[union-attr]
    assert summary["deleted-data-files"] == "3"
    assert summary["removed-dvs"] == "1"  # the dangling vector removed as Java removes it
    assert summary["total-delete-files"] == "0"


def test_v2_position_deletes_are_folded_into_the_vector_after_an_upgrade(
    catalog: SqlCatalog,
) -> None:
    table = _table(catalog, 2, properties={"write.delete.granularity": "file"})
    table.delete(_in([1, 3]))
    (v2_delete,) = _deletes(table)
    with table.transaction() as txn:
        txn.set_properties({"format-version": "3"})
    table.delete("id = 5")
    (vector,) = _deletes(table)
    assert vector.file_format == "PUFFIN"
    assert vector.record_count == 3  # 1 and 3 folded in
    assert vector.referenced_data_file == v2_delete.referenced_data_file
    summary = table.current_snapshot().summary  # type: ignore[union-attr]
    assert summary["removed-position-delete-files"] == "1"
    assert _ids(table) == [i for i in range(300) if i not in (1, 3, 5)]


def test_merge_on_read_delete_matching_nothing_commits_nothing(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2)
    snapshots = len(table.snapshots())
    table.delete("id > 1000")
    assert len(table.snapshots()) == snapshots


def test_a_v2_table_refuses_deletion_vectors_and_a_v3_table_parquet_deletes(
    catalog: SqlCatalog,
) -> None:
    from frazil.errors import InvalidUpdateError
    from frazil.table.snapshot.row_delta import RowDelta
    from frazil.table.write import DeleteTarget, write_position_deletes

    table = _table(catalog, 2, partition=None)
    task = next(iter(table.scan().plan_files()))
    ((spec_id, written),) = write_position_deletes(
        table.metadata, table.io, [(DeleteTarget.of_task(task), [0])]
    )
    v3 = _table(catalog, 3, partition=None, name="db.v3")
    with pytest.raises(InvalidUpdateError, match="must use deletion vectors"):
        RowDelta(v3.metadata, v3.io).add_deletes(written, spec_id)
    with pytest.raises(UnsupportedOperationError, match="deletion vectors are written to v3"):
        from frazil.table.write import write_deletion_vectors

        write_deletion_vectors(table.metadata, table.io, [(DeleteTarget.of_task(task), [0])])


def test_positions_outside_the_data_file_are_refused(catalog: SqlCatalog) -> None:
    from frazil.errors import InvalidValueError
    from frazil.table.write import DeleteTarget, write_position_deletes

    table = _table(catalog, 2, partition=None)
    task = next(iter(table.scan().plan_files()))
    with pytest.raises(InvalidValueError, match=r"position 100 is outside data file"):
        write_position_deletes(table.metadata, table.io, [(DeleteTarget.of_task(task), [100])])


def test_another_delete_format_is_refused(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, properties={"write.delete.format.default": "orc"})
    with pytest.raises(UnsupportedOperationError, match=r"write\.delete\.format\.default='orc'"):
        table.delete("id = 1")
    assert _ids(table) == list(range(300))


# --- concurrency ---------------------------------------------------------------------------------


def test_a_concurrent_rewrite_of_a_referenced_file_fails_the_delete(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2)
    stale = catalog.load_table("db.t")
    # Another writer rewrites the file holding 1 (copy-on-write).
    with table.transaction() as txn:
        txn.set_properties({"write.delete.mode": "copy-on-write"})
    table.delete("id = 3")
    with pytest.raises(CommitValidationError, match="missing data files"):
        stale.delete("id = 1")
    assert 1 in _ids(catalog.load_table("db.t"))


def test_a_concurrent_whole_file_delete_does_not_fail_a_delete(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2)
    stale = catalog.load_table("db.t")
    table.delete("cat = 'a'")  # drops the file the stale delete references, whole
    stale.delete("id = 1")
    assert _ids(catalog.load_table("db.t")) == [i for i in range(300) if i % 2 == 0]


def test_concurrent_vectors_for_one_data_file_fail_the_second(catalog: SqlCatalog) -> None:
    table = _table(catalog, 3)
    stale = catalog.load_table("db.t")
    table.delete("id = 1")
    with pytest.raises(CommitValidationError, match="concurrently added deletion vector"):
        stale.delete("id = 3")  # the same data file
    fresh = catalog.load_table("db.t")
    assert len(_deletes(fresh)) == 1
    assert _ids(fresh) == [i for i in range(300) if i != 1]


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
def test_an_append_of_matching_rows_conflicts_under_serializable_only(
    catalog: SqlCatalog, level: str
) -> None:
    table = _table(catalog, 2, properties={"write.delete.isolation-level": level})
    stale = catalog.load_table("db.t")
    table.append(_rows([1000], "a"))
    if level == "serializable":
        with pytest.raises(CommitValidationError, match="conflicting files"):
            stale.delete("id >= 299")
        assert 299 in _ids(catalog.load_table("db.t"))
    else:
        stale.delete("id >= 299")
        ids = _ids(catalog.load_table("db.t"))
        assert 299 not in ids and 1000 in ids  # added after the delete's snapshot


def test_a_failed_commit_leaves_the_table_and_no_new_files(
    catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(catalog, 3)
    location = Path(table.location())
    before = {p for p in location.rglob("*") if p.is_file()}
    current = table.metadata_location

    def refuse(*args: Any, **kwargs: Any) -> Any:
        from frazil.errors import CommitFailedError

        raise CommitFailedError("lost every race")

    monkeypatch.setattr(type(catalog), "commit_table", refuse)
    from frazil.errors import CommitFailedError

    with pytest.raises(CommitFailedError):
        table.delete("id = 1")
    monkeypatch.undo()
    assert catalog.load_table("db.t").metadata_location == current
    assert {p for p in location.rglob("*") if p.is_file()} == before


# --- row deltas with equality deletes -----------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("partition", [None, "cat", "id"])
def test_row_delta_deletes_by_key_and_adds_rows_in_one_snapshot(
    catalog: SqlCatalog, version: int, partition: str | None
) -> None:
    table = _table(catalog, version, partition=partition)
    snapshots = len(table.snapshots())
    with table.transaction() as txn:
        txn.row_delta(
            add=_rows([5, 1000], "z"),
            delete_keys=pa.table({"id": pa.array([4, 5, 6], pa.int64())}),
            key_columns="id",
        )
    assert len(table.snapshots()) == snapshots + 1
    rows = sorted((r["id"], r["cat"]) for r in table.scan().to_arrow().to_pylist())
    expected = [(i, "a" if i % 2 else "b") for i in range(300) if i not in (4, 5, 6)]
    assert rows == sorted([*expected, (5, "z"), (1000, "z")])
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.operation == "overwrite"
    deletes = _deletes(table)
    assert deletes and all(d.content == 2 and d.equality_ids == [1] for d in deletes)
    for delete in deletes:
        assert pq.read_schema(delete.file_path).names == ["id"]  # the key column only
    specs = table.specs()
    by_spec = {d.spec_id for t in table.scan().plan_files() for d in t.delete_files}
    if partition == "id":
        # The key is the partition source: deletes are written per partition of the spec.
        assert by_spec == {table.spec().spec_id}
    else:
        # Else under an unpartitioned spec: global deletes.
        assert all(specs[s].is_unpartitioned() for s in by_spec)


def test_a_null_key_deletes_the_rows_whose_key_is_null(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, partition=None)
    table.append(pa.table({"id": pa.array([7000, 7001], pa.int64()), "cat": [None, "q"]}))
    table.delete_by_key(pa.table({"cat": pa.array([None, "q"], pa.string())}), "cat")
    rows = table.scan(row_filter="id >= 7000").to_arrow()
    assert rows.num_rows == 0
    assert len(_ids(table)) == 300  # no other row has a null or "q" category


def test_row_delta_refuses_bad_keys_before_writing(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, partition=None)
    keys = pa.table({"id": pa.array([1], pa.int64())})
    with pytest.raises(ValidationError, match="no key columns"):
        table.delete_by_key(keys)
    with pytest.raises(ValidationError, match="not a column of the table"):
        table.delete_by_key(keys, "nope")
    with pytest.raises(ValidationError, match="has no key column 'cat'"):
        table.delete_by_key(keys, "cat")
    assert len(table.snapshots()) == 3


def test_float_key_columns_are_refused(catalog: SqlCatalog) -> None:
    schema = pa.schema([pa.field("x", pa.float64())])
    table = catalog.create_table("db.f", schema, properties={"format-version": "2"})
    with pytest.raises(ValidationError, match="cannot be equality delete columns"):
        table.delete_by_key(pa.table({"x": [1.0]}), "x")


def test_identifier_fields_are_the_default_key(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, partition=None)
    with table.update_schema() as update:
        update.set_identifier_fields("id")
    table.delete_by_key(pa.table({"id": pa.array([1, 2], pa.int64())}))
    assert _ids(table) == [i for i in range(300) if i not in (1, 2)]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_rewritten_files_keep_equality_deletes_the_filter_does_not_reach(
    catalog: SqlCatalog, mode: str
) -> None:
    # A planner leaves out delete files whose rows cannot match a scan's filter; rewriting a
    # file keeps its other rows, whose deletes must still apply (equality deletes of other
    # keys here): planned without the filter, they do.
    table = _table(
        catalog,
        3,
        partition=None,
        properties={"write.delete.mode": mode, "write.update.mode": mode},
    )
    table.delete_by_key(pa.table({"id": pa.array([28, 29], pa.int64())}), "id")
    table.delete("id = 3")
    table.update({"cat": "z"}, "id = 5")
    ids = _ids(table)
    assert 28 not in ids and 29 not in ids and 3 not in ids
    assert len(ids) == 297
