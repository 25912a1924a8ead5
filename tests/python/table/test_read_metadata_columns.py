"""Metadata columns on read (spec: "Reserved Field IDs"; v3 "Row Lineage"): ``_file``,
``_pos`` (absolute, also when row groups are skipped or a split reads some of them),
``_spec_id``, ``_partition`` (typed by the table's unified partition type), ``_deleted``
(deleted rows kept and flagged: position deletes, deletion vectors, equality deletes), and
``_row_id`` / ``_last_updated_sequence_number`` inherited or as stored.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import Schema, read_task
from frazil import types as t
from frazil.errors import FrazilError, UnknownFieldError
from frazil.table.read import read_task_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_helpers import FIELD_ID, DataTable
from test_read_deletes import _dv, _equality

SCHEMA = Schema(t.required(1, "id", t.LongType()), t.optional(2, "v", t.StringType()))
MAX = 2**31 - 1


def _write(table: DataTable, ids: list[int], row_group_size: int = 7) -> str:
    return table.write_parquet(
        {"id": ids, "v": [str(i) for i in ids]}, row_group_size=row_group_size
    )


def _select(table: Any, *names: str, **scan: Any) -> list[dict[str, Any]]:
    result = table.scan(selected_fields=names, **scan).to_arrow()
    return sorted(result.to_pylist(), key=lambda r: (r.get("_file", ""), r.get("_pos", 0)))


def test_file_pos_and_spec_id(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a, b = _write(table, list(range(20))), _write(table, list(range(100, 105)))
    table.commit([table.data(a), table.data(b)])
    loaded = table.table()
    result = loaded.scan(selected_fields=("id", "_file", "_pos", "_spec_id")).to_arrow()
    assert result.column_names == ["id", "_file", "_pos", "_spec_id"]
    assert [(f.name, f.type, f.nullable) for f in result.schema][1:] == [
        ("_file", pa.string(), False),
        ("_pos", pa.int64(), False),
        ("_spec_id", pa.int32(), False),
    ]
    expected = [(i, a, i, 0) for i in range(20)] + [(100 + i, b, i, 0) for i in range(5)]
    got = [(r["id"], r["_file"], r["_pos"], r["_spec_id"]) for r in result.to_pylist()]
    assert sorted(got) == sorted(expected)
    # Only metadata columns, and after "*": every data column first.
    only = loaded.scan(selected_fields=("_pos",)).to_arrow()
    assert only.column_names == ["_pos"] and sorted(only.column("_pos").to_pylist()) == sorted(
        list(range(20)) + list(range(5))
    )
    every = loaded.scan().select("*", "_file").to_arrow()
    assert every.column_names == ["id", "v", "_file"]
    # Names resolve as data columns do: case-insensitively when the scan is.
    loose = loaded.scan(selected_fields=("_POS", "ID"), case_sensitive=False).to_arrow()
    assert loose.column_names == ["id", "_pos"]
    with pytest.raises(UnknownFieldError, match="_POS"):
        loaded.scan(selected_fields=("_POS",)).to_arrow()


def test_pos_is_absolute_when_row_groups_are_skipped(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a = _write(table, list(range(200)), row_group_size=13)
    table.commit([table.data(a)])
    deleted = {0, 12, 13, 14, 100, 155, 199}
    table.commit(deletes=[table.position_deletes([(a, p) for p in sorted(deleted)])])
    loaded = table.table()
    # The filter lets the reader skip row groups by their statistics.
    rows = _select(loaded, "id", "_pos", row_filter="id >= 150")
    assert [(r["id"], r["_pos"]) for r in rows] == [
        (i, i) for i in range(150, 200) if i not in deleted
    ]
    # Splits that read some row groups each, in small batches.
    scan = loaded.scan(options={"read.split.target-size": 200, "read.split.open-file-cost": 0})
    tasks = [task for group in scan.plan_tasks() for task in group.tasks]
    assert len(tasks) > 2
    seen = []
    for task in tasks:
        for batch in read_task(
            task,
            loaded.schema(),
            specs=loaded.specs(),
            batch_size=5,
            metadata_columns=("_pos", "_deleted"),
        ):
            seen.extend(
                zip(
                    batch.column("id").to_pylist(),
                    batch.column("_pos").to_pylist(),
                    batch.column("_deleted").to_pylist(),
                    strict=True,
                )
            )
    assert sorted(seen) == [(i, i, i in deleted) for i in range(200)]


def test_deleted_flags_position_deletes_dvs_and_equality_deletes(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA, format_version=3)
    a, b = _write(table, list(range(30))), _write(table, list(range(100, 110)))
    table.commit([table.data(a), table.data(b)])
    table.commit(deletes=[_dv(table, a, [1, 2, 29], "dv.puffin")])
    table.commit(deletes=[_equality(table, Schema(SCHEMA.fields[1]), {"v": ["5", "103"]})])
    loaded = table.table()
    deleted = {1, 2, 29, 5, 103}
    flagged = _select(loaded, "id", "_deleted", "_pos", "_file")
    assert [(r["id"], r["_deleted"]) for r in sorted(flagged, key=lambda r: r["id"])] == [
        (i, i in deleted) for i in [*range(30), *range(100, 110)]
    ]
    assert all(r["_pos"] == r["id"] % 100 for r in flagged)
    # Without _deleted the same rows are dropped, and positions stay those of the file.
    kept = _select(loaded, "id", "_pos")
    assert sorted(r["id"] for r in kept) == [
        i for i in [*range(30), *range(100, 110)] if i not in deleted
    ]
    assert all(r["_pos"] == r["id"] % 100 for r in kept)
    # A residual filter still applies to flagged rows.
    filtered = _select(loaded, "id", "_deleted", row_filter="id < 6")
    assert sorted((r["id"], r["_deleted"]) for r in filtered) == [
        (i, i in deleted) for i in range(6)
    ]


def test_deleted_with_parquet_position_deletes(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a = _write(table, list(range(25)), row_group_size=4)
    table.commit([table.data(a)])
    table.commit(deletes=[table.position_deletes([(a, 3), (a, 4), (a, 24)])])
    result = table.table().scan(selected_fields=("_deleted", "id"), limit=50).to_arrow()
    assert result.column_names == ["id", "_deleted"]
    assert sorted(result.to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "_deleted": i in (3, 4, 24)} for i in range(25)
    ]


SPECS = [
    {
        "spec-id": 0,
        "fields": [{"name": "cat", "transform": "identity", "source-id": 2, "field-id": 1000}],
    },
    {
        "spec-id": 1,
        "fields": [
            {"name": "category", "transform": "identity", "source-id": 2, "field-id": 1000},
            {"name": "day", "transform": "day", "source-id": 3, "field-id": 1001},
        ],
    },
]
PARTITIONED = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "cat", t.StringType()),
    t.optional(3, "ts", t.TimestampType()),
)


def test_partition_is_typed_by_the_unified_partition_type(tmp_path: Path) -> None:
    table = DataTable(tmp_path, PARTITIONED, specs=SPECS)
    when = dt.datetime(2024, 3, 5, 6, 7)
    old = table.write_parquet({"id": [1, 2], "cat": ["x", "x"], "ts": [when, when]})
    table.commit([table.data(old, {"cat": "x"})], spec_id=0)
    new = table.write_parquet({"id": [3], "cat": [None], "ts": [when]})
    table.commit([table.data(new, {"category": None, "day": 19787})], spec_id=1)
    loaded = table.table()
    result = loaded.scan(selected_fields=("id", "_partition", "_spec_id")).to_arrow()
    partition = result.schema.field("_partition")
    # Java's Partitioning.partitionType: by field id, the newest spec's names, optional fields.
    assert [(f.name, f.type, f.nullable) for f in partition.type] == [
        ("category", pa.string(), True),
        ("day", pa.date32(), True),
    ]
    got = sorted((r["id"], r["_partition"], r["_spec_id"]) for r in result.to_pylist())
    assert got == [
        (1, {"category": "x", "day": None}, 0),
        (2, {"category": "x", "day": None}, 0),
        (3, {"category": None, "day": dt.date(2024, 3, 5)}, 1),
    ]


def test_partition_of_an_unpartitioned_table_is_an_empty_struct(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    table.commit([table.data(_write(table, [1, 2]))])
    result = table.table().scan(selected_fields=("_partition",)).to_arrow()
    assert result.schema.field("_partition").type == pa.struct([])
    assert result.num_rows == 2 and result.column("_partition").null_count == 0


def test_data_column_named_like_a_metadata_column_is_data(tmp_path: Path) -> None:
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "_file", t.StringType()))
    table = DataTable(tmp_path, schema)
    path = table.write_parquet({"id": [1], "_file": ["mine"]})
    table.commit([table.data(path)])
    result = table.table().scan(selected_fields=("_file", "_pos")).to_arrow()
    assert result.to_pylist() == [{"_file": "mine", "_pos": 0}]


def test_unknown_names_and_lineage_before_v3(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    table.commit([table.data(_write(table, [1]))])
    loaded = table.table()
    # A v2 file has no first_row_id: no lineage (null), as Spark shows it.
    lineage = ("id", "_row_id", "_last_updated_sequence_number")
    assert loaded.scan(selected_fields=lineage).to_arrow().to_pylist() == [
        {"id": 1, "_row_id": None, "_last_updated_sequence_number": None}
    ]
    with pytest.raises(UnknownFieldError, match="_nope"):
        loaded.scan(selected_fields=("_nope",)).to_arrow()
    (task,) = loaded.scan().plan_files()
    with pytest.raises(UnknownFieldError, match="_posx"):
        list(read_task(task, loaded.schema(), metadata_columns=("_posx",)))


def _with_lineage(table: DataTable, ids: list[int], row_ids: list[int | None]) -> str:
    """A data file that stores _row_id (some null) and _last_updated_sequence_number."""
    fields = [
        pa.field("id", pa.int64(), False, {FIELD_ID: b"1"}),
        pa.field("v", pa.string(), True, {FIELD_ID: b"2"}),
        pa.field("_row_id", pa.int64(), True, {FIELD_ID: str(MAX - 107).encode()}),
        pa.field(
            "_last_updated_sequence_number", pa.int64(), True, {FIELD_ID: str(MAX - 108).encode()}
        ),
    ]
    data = pa.table(
        [ids, [str(i) for i in ids], row_ids, [7 if r is not None else None for r in row_ids]],
        schema=pa.schema(fields),
    )
    path = table.writer.path("lineage.parquet")
    pq.write_table(data, path)
    return path


def test_row_lineage_inherited_and_stored(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA, format_version=3)
    first = _write(table, list(range(10)))
    table.commit([table.data(first)])  # row ids 0..9, sequence number 1
    second = _write(table, [50, 51, 52])
    stored = _with_lineage(table, [60, 61, 62], [1000, None, 1002])
    table.commit([table.data(second), table.data(stored)])
    loaded = table.table()
    files = {task.file.file_path: task.file for task in loaded.scan().plan_files()}
    assert files[first].first_row_id == 0
    names = ("id", "_row_id", "_last_updated_sequence_number", "_pos")
    result = loaded.scan(selected_fields=names).to_arrow()
    assert result.schema.field("_row_id").type == pa.int64()
    by_id = {r["id"]: r for r in result.to_pylist()}
    for i in range(10):
        assert (by_id[i]["_row_id"], by_id[i]["_last_updated_sequence_number"]) == (i, 1)
    for name, ids in ((second, [50, 51, 52]), (stored, [60, 61, 62])):
        base = files[name].first_row_id
        assert base is not None and files[name].data_sequence_number == 2
        for pos, i in enumerate(ids):
            assert by_id[i]["_pos"] == pos
            if name == second:
                assert by_id[i]["_row_id"] == base + pos
                assert by_id[i]["_last_updated_sequence_number"] == 2
    # Stored values win; a null is inherited (first_row_id + _pos, the data sequence number).
    base = files[stored].first_row_id
    assert [
        (by_id[i]["_row_id"], by_id[i]["_last_updated_sequence_number"]) for i in (60, 61, 62)
    ] == [
        (1000, 7),
        (base + 1, 2),
        (1002, 7),
    ]


def test_read_task_schema_orders_metadata_after_data(tmp_path: Path) -> None:
    table = DataTable(tmp_path, PARTITIONED, specs=SPECS)
    loaded = table.table()
    schema = read_task_schema(
        loaded.schema(), None, ("_spec_id", "_partition", "_file"), loaded.specs()
    )
    assert schema.names == ["id", "cat", "ts", "_spec_id", "_partition", "_file"]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count=st.integers(1, 60),
    row_group_size=st.integers(1, 20),
    by_position=st.sets(st.integers(0, 59)),
    by_value=st.sets(st.integers(0, 59)),
    low=st.integers(0, 60),
    keep=st.booleans(),
)
def test_random_positions_and_flags_equal_python(
    tmp_path_factory: Any,
    count: int,
    row_group_size: int,
    by_position: set[int],
    by_value: set[int],
    low: int,
    keep: bool,
) -> None:
    table = DataTable(tmp_path_factory.mktemp("t"), SCHEMA)
    a = _write(table, list(range(count)), row_group_size=row_group_size)
    table.commit([table.data(a)])
    present = sorted(p for p in by_position if p < count)
    if present:
        table.commit(deletes=[table.position_deletes([(a, p) for p in present])])
    if by_value:  # equality deletes on v (the id as text)
        keys = {"v": [str(i) for i in sorted(by_value)]}
        table.commit(deletes=[_equality(table, Schema(SCHEMA.fields[1]), keys)])
    deleted = by_position | by_value
    names = ("id", "_pos", "_deleted") if keep else ("id", "_pos")
    result = table.table().scan(selected_fields=names, row_filter=f"id >= {low}").to_arrow()
    got = sorted(tuple(r.values()) for r in result.to_pylist())
    if keep:
        assert got == [(i, i, i in deleted) for i in range(low, count)]
    else:
        assert got == [(i, i) for i in range(low, count) if i not in deleted]


def _small(tmp_path: Path) -> Any:
    table = DataTable(tmp_path, SCHEMA)
    table.commit([table.data(_write(table, [1, 2, 3]))])
    return table.table()


@pytest.mark.parametrize(("module", "call"), [("polars", "to_polars"), ("duckdb", "to_duckdb")])
def test_missing_optional_engine_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, call: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails, as when not installed
    scan = _small(tmp_path).scan()
    with pytest.raises(FrazilError, match=f"{call}.*pip install {module}"):
        getattr(scan, call)(*(("t",) if call == "to_duckdb" else ()))


def test_metadata_columns_do_not_import_pandas(tmp_path: Path) -> None:
    # PySpark workers read tasks in fresh processes: importing pandas costs a second each.
    table = DataTable(tmp_path, PARTITIONED, specs=SPECS, format_version=3)
    path = table.write_parquet({"id": [1, 2, 3], "cat": ["x", "x", "x"], "ts": [None] * 3})
    table.commit([table.data(path, {"cat": "x"})], spec_id=0)
    table.commit(deletes=[table.position_deletes([(path, 1)], {"cat": "x"})], spec_id=0)
    location = table.table().metadata_location
    names = ("id", "_file", "_pos", "_spec_id", "_partition", "_deleted", "_row_id")
    script = f"""
        import sys
        import frazil
        table = frazil.StaticTable.from_metadata({location!r})
        result = table.scan(selected_fields={names!r}).to_arrow()
        assert sorted(result.column("_pos").to_pylist()) == [0, 1, 2], result
        assert sorted(result.column("_deleted").to_pylist()) == [False, False, True]
        print('pandas' in sys.modules)
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"
