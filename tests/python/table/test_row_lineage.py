"""v3 row lineage through copy-on-write (spec: "Row Lineage"): rows a delete or overwrite
copies unchanged into a new data file keep their ``_row_id`` and
``_last_updated_sequence_number``; the new file stores both under their reserved field ids,
while appended files store neither and inherit fresh ids from ``first_row_id``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import ValidationError
from frazil.manifest import read_manifest, read_manifest_list
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.write import write_data_files
from frazil.types import NestedField, parse_type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROW_ID = 2147483540
LAST_UPDATED = 2147483539
LINEAGE = ("id", "_row_id", "_last_updated_sequence_number")


def _schema() -> Schema:
    return Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )


def _rows(ids: list[int] | range, cat: str = "a") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


def _catalog(path: Path) -> InMemoryCatalog:
    catalog = InMemoryCatalog(warehouse=str(path))
    catalog.create_namespace("db")
    return catalog


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    return _catalog(tmp_path)


def _table(catalog: InMemoryCatalog, version: int = 3, **kwargs: Any) -> Table:
    return catalog.create_table("db.t", _schema(), format_version=version, **kwargs)


def _lineage(table: Table) -> dict[int, tuple[int, int]]:
    """id -> (_row_id, _last_updated_sequence_number) of every live row."""
    rows = table.scan(selected_fields=LINEAGE).to_arrow().to_pylist()
    return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}


def _added_files(table: Table) -> list[dict[str, Any]]:
    """The data files the current snapshot added, with their manifest entry's sequence."""
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    out = []
    for manifest in read_manifest_list(snapshot.manifest_list).to_pylist():
        for entry in read_manifest(manifest["manifest_path"], manifest_file=manifest).to_pylist():
            if entry["status"] == 1 and entry["snapshot_id"] == snapshot.snapshot_id:
                out.append(entry["data_file"])
    return out


def _parquet(location: str) -> pq.ParquetFile:
    return pq.ParquetFile(location.removeprefix("file://"))


def _field_ids(file: pq.ParquetFile) -> dict[str, int]:
    schema = file.schema_arrow
    return {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in schema}


def test_delete_keeps_lineage_of_surviving_rows(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows(range(10)))
    table.append(_rows(range(10, 15), "b"))
    before = _lineage(table)
    assert before[0] == (0, 1) and before[14] == (14, 2)
    next_row_id = table.metadata.next_row_id

    table.delete("id < 3")
    after = _lineage(table)
    assert after == {i: before[i] for i in range(3, 15)}

    # The rewritten file is an added file: it gets the snapshot's first_row_id range and the
    # table's next-row-id grows by its rows (spec: "Row Lineage", next-row-id), though its
    # stored ids take precedence when read.
    snapshot = table.current_snapshot()
    assert snapshot is not None
    (rewritten,) = _added_files(table)
    assert rewritten["record_count"] == 7
    assert snapshot.first_row_id == next_row_id
    assert rewritten["first_row_id"] == next_row_id
    assert snapshot.added_rows == 7
    assert table.metadata.next_row_id == next_row_id + 7


def test_rewritten_file_stores_lineage_with_reserved_ids_and_metrics(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog)
    table.append(_rows(range(10)))
    table.append(_rows(range(10, 12)))  # _last_updated_sequence_number 2 for these
    (appended,) = _added_files(table)
    # Appended files hold only new rows: no lineage columns (spec: "Row lineage assignment").
    assert set(_field_ids(_parquet(appended["file_path"]))) == {"id", "cat"}

    table.delete("id = 4")
    (rewritten,) = _added_files(table)
    file = _parquet(rewritten["file_path"])
    assert _field_ids(file) == {
        "id": 1,
        "cat": 2,
        "_row_id": ROW_ID,
        "_last_updated_sequence_number": LAST_UPDATED,
    }
    stored = file.read().to_pydict()
    assert stored["_row_id"] == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert stored["_last_updated_sequence_number"] == [1] * 9
    # Java's footer schema is the write schema: the table's plus the lineage fields.
    footer = json.loads(file.metadata.metadata[b"iceberg.schema"])
    assert [f["id"] for f in footer["fields"]] == [1, 2, ROW_ID, LAST_UPDATED]
    # Metrics as for any long column in the default mode (truncate(16): full bounds).
    assert dict(rewritten["value_counts"])[ROW_ID] == 9
    assert dict(rewritten["null_value_counts"])[LAST_UPDATED] == 0
    lower, upper = dict(rewritten["lower_bounds"]), dict(rewritten["upper_bounds"])
    assert int.from_bytes(lower[ROW_ID], "little") == 0
    assert int.from_bytes(upper[ROW_ID], "little") == 9
    assert int.from_bytes(lower[LAST_UPDATED], "little") == 1
    assert ROW_ID in dict(rewritten["column_sizes"])


def test_lineage_metrics_follow_the_default_mode(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, properties={"write.metadata.metrics.default": "counts"})
    table.append(_rows(range(5)))
    table.delete("id = 0")
    (rewritten,) = _added_files(table)
    assert dict(rewritten["value_counts"])[ROW_ID] == 4
    assert ROW_ID not in dict(rewritten["lower_bounds"] or [])


def test_overwrite_keeps_lineage_and_new_rows_get_fresh_ids(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows(range(6)))
    table.append(_rows(range(6, 9), "b"))
    before = _lineage(table)
    next_row_id = table.metadata.next_row_id

    table.overwrite(_rows([100, 101]), overwrite_filter="id >= 4 and id < 7")
    snapshot = table.current_snapshot()
    assert snapshot is not None
    after = _lineage(table)
    for i in (0, 1, 2, 3, 7, 8):
        assert after[i] == before[i]
    new_ids = [after[100][0], after[101][0]]
    assert min(new_ids) >= next_row_id
    assert after[100][1] == after[101][1] == snapshot.sequence_number
    ids = [row_id for row_id, _ in after.values()]
    assert len(set(ids)) == len(ids)
    # Rewritten (4 + 2 surviving rows) and appended (2) rows all take id space.
    assert snapshot.added_rows == 8
    assert table.metadata.next_row_id == next_row_id + 8


def test_appends_after_a_rewrite_get_ids_above_next_row_id(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows(range(8)))
    table.delete("id in (1, 5)")
    table.delete("id = 6")  # a second rewrite copies the stored values again
    kept = _lineage(table)
    assert kept == {i: (i, 1) for i in (0, 2, 3, 4, 7)}
    next_row_id = table.metadata.next_row_id
    table.append(_rows([50, 51, 52]))
    snapshot = table.current_snapshot()
    assert snapshot is not None
    after = _lineage(table)
    assert [after[i] for i in (50, 51, 52)] == [
        (next_row_id + k, snapshot.sequence_number) for k in range(3)
    ]
    assert {i: after[i] for i in kept} == kept


def test_partitioned_and_sorted_rewrite_keeps_lineage(catalog: InMemoryCatalog) -> None:
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),))
    table = catalog.create_table("db.t", _schema(), partition_spec=spec, format_version=3)
    table.append(pa.concat_tables([_rows([9, 3, 7, 1], "x"), _rows([8, 2, 6], "y")]))
    before = _lineage(table)
    assert [before[i][0] for i in (9, 3, 7, 1)] == [0, 1, 2, 3]  # ids follow file order
    # A sort order set since: the rewrite reorders the rows, their lineage moves with them.
    with table.update_sort_order() as update:
        update.desc("id")
    table.delete("id in (3, 6)")
    assert _lineage(table) == {i: v for i, v in before.items() if i not in (3, 6)}
    for rewritten in _added_files(table):
        stored = _parquet(rewritten["file_path"]).read()
        assert stored.column("id").to_pylist() == sorted(stored.column("id").to_pylist())[::-1]


def test_v2_rewrite_writes_no_lineage(catalog: InMemoryCatalog) -> None:
    table = _table(catalog, version=2)
    table.append(_rows(range(4)))
    table.delete("id = 1")
    (rewritten,) = _added_files(table)
    assert set(_field_ids(_parquet(rewritten["file_path"]))) == {"id", "cat"}
    with pytest.raises(ValidationError, match="v3 tables only"):
        list(write_data_files(table.metadata, table.io, _rows([1]), row_lineage=True))


def test_without_row_lineage_the_names_are_not_columns(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    data = _rows([1]).append_column("_row_id", pa.array([7], pa.int64()))
    with pytest.raises(ValidationError, match="_row_id: not a column"):
        table.append(data)
    files = list(write_data_files(table.metadata, table.io, data, row_lineage=True))
    # Missing _last_updated_sequence_number is written as nulls (inherited on read).
    stored = _parquet(files[0].file_path).read().to_pydict()
    assert stored["_row_id"] == [7]
    assert stored["_last_updated_sequence_number"] == [None]


def test_a_table_column_named_like_a_lineage_column_is_refused(
    catalog: InMemoryCatalog,
) -> None:
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "_row_id", parse_type("long"), False),
    )
    table = catalog.create_table("db.t", schema, format_version=3)
    data = pa.table({"id": pa.array([1], pa.int64()), "_row_id": pa.array([5], pa.int64())})
    with pytest.raises(ValidationError, match="column named '_row_id'"):
        list(write_data_files(table.metadata, table.io, data, row_lineage=True))


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 6)),
        st.tuples(st.just("delete"), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_OPS)
def test_random_appends_and_deletes_keep_each_rows_lineage(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int]]
) -> None:
    """Each row keeps the _row_id and _last_updated_sequence_number it was first given,
    through any number of copy-on-write deletes; ids stay unique and below next-row-id."""
    table = _table(_catalog(tmp_path_factory.mktemp("lineage")))
    seen: dict[int, tuple[int, int]] = {}
    next_id = 0
    for op, n in ops:
        if op == "append":
            table.append(_rows(range(next_id, next_id + n)))
            next_id += n
        else:
            # Deletes every row with id % 4 == n: most files are only partly covered.
            table.delete(f"id in ({', '.join(str(i) for i in range(n, next_id, 4)) or -1})")
        live = _lineage(table)
        for row, lineage in live.items():
            assert seen.setdefault(row, lineage) == lineage
        row_ids = [r for r, _ in live.values()]
        assert len(set(row_ids)) == len(row_ids)
        assert all(r < table.metadata.next_row_id for r in row_ids)
