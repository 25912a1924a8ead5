"""The ``all_*`` entries and files tables (Java's AllEntriesTable, AllDataFilesTable,
AllDeleteFilesTable) and the ``readable_metrics`` column of the files and entries tables
(Java's MetricsUtil.readableMetricsStruct), on tables written with scan_helpers.TableWriter."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import values
from frazil.errors import InvalidDataError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scan_helpers import TableWriter, data_file, entry

T1 = 1_700_000_000_000
X_DAY = {"cat": "x", "ts_day": 19724}


def paths(result: pa.Table) -> list[str]:
    return sorted(Path(p).name for p in result.column("file_path").to_pylist())


@pytest.fixture
def history(tmp_path: Path) -> TableWriter:
    """Snapshot 1 adds a and b; 2 (child of 1) a delete file d; 3 (child of 1, not current)
    c; 4 (child of 2) marks a DELETED in a manifest of its own."""
    w = TableWriter(tmp_path / "t")
    a = data_file(w.path("a.parquet"), X_DAY, records=10)
    b = data_file(w.path("b.parquet"), X_DAY, records=5)
    w.commit(1, T1, [([entry(a), entry(b)], 0, "data")])
    d = data_file(w.path("d.parquet"), X_DAY, records=2, content=1)
    w.commit(2, T1 + 1, [([entry(d)], 0, "deletes")], parent=1)
    w.commit(3, T1 + 2, [([entry(data_file(w.path("c.parquet"), records=7))], 1, "data")], parent=1)
    gone = entry(a, status=2, snapshot_id=4, sequence_number=1, file_sequence_number=1)
    w.commit(4, T1 + 3, [([gone], 0, "data")], parent=2)
    return w


def test_all_tables_read_each_reachable_manifest_once(history: TableWriter) -> None:
    table = history.table(current=4)
    # m1 (a, b) is listed by snapshots 1 to 4, m2 (d) by 2 and 4: each is read once.
    entries = table.inspect.all_entries()
    assert entries.column_names == [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
        "data_file",
        "readable_metrics",
    ]
    assert entries.schema == table.inspect.entries().schema
    rows = sorted(
        (Path(r["data_file"]["file_path"]).name, r["status"], r["snapshot_id"])
        for r in entries.to_pylist()
    )
    assert rows == [
        ("a.parquet", 1, 1),
        ("a.parquet", 2, 4),
        ("b.parquet", 1, 1),
        ("c.parquet", 1, 3),
        ("d.parquet", 1, 2),
    ]
    # The files tables keep live entries only: a's DELETED entry is not a file.
    assert paths(table.inspect.all_data_files()) == ["a.parquet", "b.parquet", "c.parquet"]
    assert paths(table.inspect.all_delete_files()) == ["d.parquet"]
    assert paths(table.inspect.all_files()) == ["a.parquet", "b.parquet", "c.parquet", "d.parquet"]
    assert table.inspect.all_data_files().schema == table.inspect.files().schema
    assert table.inspect.all_delete_files().schema == table.inspect.files().schema


def test_all_tables_of_a_table_without_snapshots_are_empty(tmp_path: Path) -> None:
    table = TableWriter(tmp_path / "t").table()
    for name in ("all_entries", "all_files", "all_data_files", "all_delete_files"):
        result = getattr(table.inspect, name)()
        assert result.num_rows == 0, name
        assert result.column_names[-1] == "readable_metrics", name


NESTED = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "zeta", "required": True, "type": "long"},
        {
            "id": 2,
            "name": "loc",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 3, "name": "y", "required": False, "type": "float"},
                    {"id": 4, "name": "x", "required": True, "type": "double"},
                ],
            },
        },
        {
            "id": 5,
            "name": "tags",
            "required": False,
            "type": {
                "type": "list",
                "element-id": 6,
                "element": "string",
                "element-required": False,
            },
        },
        {
            "id": 7,
            "name": "m",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 8,
                "key": "string",
                "value-id": 9,
                "value": "int",
                "value-required": False,
            },
        },
        {"id": 10, "name": "Alpha", "required": False, "type": "date"},
    ],
}


def metrics_struct(bound: pa.DataType) -> pa.StructType:
    return pa.struct(
        [
            pa.field("column_size", pa.int64()),
            pa.field("value_count", pa.int64()),
            pa.field("null_value_count", pa.int64()),
            pa.field("nan_value_count", pa.int64()),
            pa.field("lower_bound", bound),
            pa.field("upper_bound", bound),
        ]
    )


def test_readable_metrics_of_nested_columns(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", schema=NESTED, specs=({"spec-id": 0, "fields": []},))
    f = data_file(
        w.path("a.parquet"),
        column_sizes=[(1, 100), (4, 40), (6, 60)],
        value_counts=[(1, 10), (4, 10), (6, 25)],
        null_value_counts=[(1, 0), (4, 1)],
        nan_value_counts=[(4, 2)],
        lower_bounds=[(1, values.to_bytes("long", -5)), (4, values.to_bytes("double", -1.5))],
        upper_bounds=[(1, values.to_bytes("long", 99)), (6, b"zz")],
    )
    w.commit(1, T1, [([entry(f)], 0, "data")])
    table = w.table()
    result = table.inspect.files()
    metrics = result.schema.field("readable_metrics")
    assert metrics.nullable
    # Primitive columns by full name, in Java's (case-sensitive) string order.
    assert metrics.type == pa.struct(
        [
            pa.field("Alpha", metrics_struct(pa.date32())),
            pa.field("loc.x", metrics_struct(pa.float64())),
            pa.field("loc.y", metrics_struct(pa.float32())),
            pa.field("m.key", metrics_struct(pa.string())),
            pa.field("m.value", metrics_struct(pa.int32())),
            pa.field("tags.element", metrics_struct(pa.string())),
            pa.field("zeta", metrics_struct(pa.int64())),
        ]
    )
    empty = dict.fromkeys(metrics_struct(pa.null()).names)
    (row,) = result.column("readable_metrics").to_pylist()
    assert row == {
        "Alpha": empty,
        "loc.x": {**empty, "column_size": 40, "value_count": 10, "null_value_count": 1}
        | {"nan_value_count": 2, "lower_bound": -1.5},
        "loc.y": empty,
        "m.key": empty,
        "m.value": empty,
        "tags.element": {**empty, "column_size": 60, "value_count": 25, "upper_bound": "zz"},
        "zeta": {"column_size": 100, "value_count": 10, "null_value_count": 0}
        | {"nan_value_count": None, "lower_bound": -5, "upper_bound": 99},
    }
    entries = table.inspect.entries()
    assert entries.column("readable_metrics").to_pylist() == [row]


def test_bounds_written_before_a_promotion_are_widened(tmp_path: Path) -> None:
    # Spec, "Schema Evolution": int->long, float->double and (v3) date->timestamp keep the
    # bounds files were written with; they read as the column's current type.
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "l", "required": False, "type": "long"},
            {"id": 2, "name": "d", "required": False, "type": "double"},
            {"id": 3, "name": "ts", "required": False, "type": "timestamp"},
        ],
    }
    w = TableWriter(tmp_path / "t", schema=schema, specs=({"spec-id": 0, "fields": []},))
    f = data_file(
        w.path("a.parquet"),
        lower_bounds=[
            (1, values.to_bytes("int", -7)),
            (2, values.to_bytes("float", 0.5)),
            (3, values.to_bytes("date", dt.date(1969, 12, 31))),
        ],
    )
    w.commit(1, T1, [([entry(f)], 0, "data")])
    (row,) = w.table().inspect.files().column("readable_metrics").to_pylist()
    assert row["l"]["lower_bound"] == -7
    assert row["d"]["lower_bound"] == 0.5
    assert row["ts"]["lower_bound"] == dt.datetime(1969, 12, 31)


def test_a_bound_that_does_not_decode_is_refused_by_column(tmp_path: Path) -> None:
    # (The manifest decoder already refuses bounds of the wrong width.)
    w = TableWriter(tmp_path / "t", specs=({"spec-id": 0, "fields": []},))
    f = data_file(w.path("a.parquet"), upper_bounds=[(3, b"a\xff")])
    w.commit(1, T1, [([entry(f)], 0, "data")])
    with pytest.raises(InvalidDataError, match=r"column cat \(string\).*61ff"):
        w.table().inspect.files()


# (Iceberg type, Arrow type, values): pyarrow's own conversion of the generated Python value
# is the expected bound, independent of frazil's decoding.
_INSTANTS = st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30))
TYPES: list[tuple[str, pa.DataType, st.SearchStrategy[Any]]] = [
    ("boolean", pa.bool_(), st.booleans()),
    ("int", pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    ("long", pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    ("float", pa.float32(), st.floats(width=32, allow_nan=False)),
    ("double", pa.float64(), st.floats(allow_nan=False)),
    (
        "decimal(9,2)",
        pa.decimal128(9, 2),
        st.decimals(min_value=-9999999, max_value=9999999, places=2),
    ),
    (
        "decimal(38,10)",
        pa.decimal128(38, 10),
        st.integers(-(10**38) + 1, 10**38 - 1).map(
            lambda u: decimal.Decimal(u).scaleb(-10, decimal.Context(prec=40))
        ),
    ),
    ("date", pa.date32(), st.dates()),
    ("time", pa.time64("us"), st.times()),
    ("timestamp", pa.timestamp("us"), _INSTANTS),
    (
        "timestamptz",
        pa.timestamp("us", tz="UTC"),
        _INSTANTS.map(lambda v: v.replace(tzinfo=dt.timezone.utc)),
    ),
    ("timestamp_ns", pa.timestamp("ns"), st.integers(-(2**63), 2**63 - 1)),
    ("string", pa.string(), st.text()),
    ("uuid", pa.uuid(), st.uuids().map(lambda u: u.bytes)),  # pyiceberg's type (issue 22)
    ("fixed[3]", pa.binary(3), st.binary(min_size=3, max_size=3)),
    ("binary", pa.binary(), st.binary()),
]


@st.composite
def typed_bounds(draw: st.DrawFn) -> tuple[str, pa.DataType, Any, Any]:
    kind, arrow_type, strategy = draw(st.sampled_from(TYPES))
    return kind, arrow_type, draw(strategy), draw(strategy | st.none())


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bounds=typed_bounds())
def test_bounds_decode_as_the_column_type(
    tmp_path_factory: pytest.TempPathFactory, bounds: tuple[str, pa.DataType, Any, Any]
) -> None:
    kind, arrow_type, lower, upper = bounds
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "c", "required": False, "type": kind}],
    }
    w = TableWriter(
        tmp_path_factory.mktemp("t"),
        schema=schema,
        specs=({"spec-id": 0, "fields": []},),
        format_version=3,
    )

    def encoded(value: Any) -> Any:
        if kind == "uuid":
            value = uuid.UUID(bytes=value)
        return values.to_bytes(kind, value)

    f = data_file(
        w.path("a.parquet"),
        lower_bounds=[(1, encoded(lower))],
        upper_bounds=None if upper is None else [(1, encoded(upper))],
    )
    w.commit(1, T1, [([entry(f)], 0, "data")])
    column = w.table().inspect.files().column("readable_metrics").combine_chunks().field("c")
    assert column.type.field("lower_bound").type == arrow_type
    expected = pa.array([lower, upper], arrow_type)
    assert column.field("lower_bound").to_pylist() == expected[:1].to_pylist()
    assert column.field("upper_bound").to_pylist() == expected[1:].to_pylist()


def test_an_unknown_column_has_null_bounds(tmp_path: Path) -> None:
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "u", "required": False, "type": "unknown"}],
    }
    w = TableWriter(
        tmp_path / "t", schema=schema, specs=({"spec-id": 0, "fields": []},), format_version=3
    )
    f = data_file(w.path("a.parquet"), value_counts=[(1, 3)])
    w.commit(1, T1, [([entry(f)], 0, "data")])
    (row,) = w.table().inspect.files().column("readable_metrics").to_pylist()
    assert row["u"]["value_count"] == 3
    assert row["u"]["lower_bound"] is None


def test_columns_are_ordered_as_java_strings(tmp_path: Path) -> None:
    # Java's String.compareTo orders by UTF-16 code units: U+1F600 (D83D DE00) sorts before
    # U+FFFD, although its code point is larger.
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "\ufffd", "required": False, "type": "int"},
            {"id": 2, "name": "\U0001f600", "required": False, "type": "int"},
            {"id": 3, "name": "b", "required": False, "type": "int"},
        ],
    }
    w = TableWriter(tmp_path / "t", schema=schema, specs=({"spec-id": 0, "fields": []},))
    w.commit(1, T1, [([entry(data_file(w.path("a.parquet")))], 0, "data")])
    metrics = w.table().inspect.files().schema.field("readable_metrics").type
    assert metrics.names == ["b", "\U0001f600", "\ufffd"]
