"""Scans handed to polars and DuckDB (the real packages from PyPI): ``scan.to_polars()``,
``scan.to_duckdb(name, connection)`` and the Arrow PyCapsule stream protocol
(``__arrow_c_stream__``) read by ``pl.DataFrame(scan)`` and DuckDB's replacement scans.
Values are checked one by one (timestamps with zone, decimals of 38 digits, nested structs,
lists and maps incl. empty and NULL ones), and empty scans keep their typed columns.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from frazil import Schema
from frazil import types as t
from read_helpers import DataTable

UTC = dt.timezone.utc
SCHEMA = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "ts", t.TimestamptzType()),
    t.optional(3, "dec", t.DecimalType(38, 10)),
    t.optional(
        4,
        "s",
        t.StructType((t.optional(5, "a", t.IntegerType()), t.optional(6, "b", t.StringType()))),
    ),
    t.optional(7, "l", t.ListType(8, t.LongType(), element_required=False)),
    t.optional(9, "m", t.MapType(10, t.StringType(), 11, t.DoubleType(), value_required=False)),
    t.optional(12, "u", t.UUIDType()),
    t.optional(13, "tm", t.TimeType()),
    t.optional(14, "local", t.TimestampType()),
)
BIG = decimal.Decimal("1234567890123456789012345678.0123456789")
ROWS: dict[str, list[Any]] = {
    "id": [1, 2, 3],
    "ts": [dt.datetime(2024, 1, 1, 12, tzinfo=UTC), None, dt.datetime(1900, 1, 1, tzinfo=UTC)],
    "dec": [BIG, None, decimal.Decimal("-0.0000000001")],
    "s": [{"a": 1, "b": "x"}, None, {"a": None, "b": None}],
    "l": [[1, None, 3], [], None],
    "m": [[("k", 1.5), ("n", None)], [], None],
    "u": [uuid.UUID(int=1).bytes, None, uuid.UUID(int=2**128 - 1).bytes],
    "tm": [dt.time(1, 2, 3, 4), None, dt.time(23, 59, 59, 999999)],
    "local": [dt.datetime(2000, 2, 29, 1, 2, 3), None, dt.datetime(1969, 12, 31, 23, 59, 59)],
}


@pytest.fixture
def table(tmp_path: Path) -> Any:
    data = DataTable(tmp_path, SCHEMA)
    first = data.write_parquet({k: v[:2] for k, v in ROWS.items()})
    second = data.write_parquet({k: v[2:] for k, v in ROWS.items()})
    data.commit([data.data(first), data.data(second)])
    # Row 2 deleted by position: the engines see the rows after deletes.
    data.commit(deletes=[data.position_deletes([(first, 1)])])
    return data.table()


def _by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["id"])


def test_to_polars_values_and_types(table: Any) -> None:
    frame = table.scan().to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert dict(frame.schema) == {
        "id": pl.Int64(),
        "ts": pl.Datetime("us", "UTC"),
        "dec": pl.Decimal(38, 10),
        "s": pl.Struct({"a": pl.Int32(), "b": pl.String()}),
        "l": pl.List(pl.Int64()),
        "m": pl.Map(pl.String(), pl.Float64()),
        "u": pl.Binary(),
        "tm": pl.Time(),
        "local": pl.Datetime("us", None),
    }
    rows = _by_id(frame.to_dicts())
    assert [r["id"] for r in rows] == [1, 3]
    first, third = rows
    assert first["ts"] == dt.datetime(2024, 1, 1, 12, tzinfo=UTC)
    assert third["ts"] == dt.datetime(1900, 1, 1, tzinfo=UTC)
    assert (first["dec"], third["dec"]) == (BIG, decimal.Decimal("-0.0000000001"))
    assert (first["s"], third["s"]) == ({"a": 1, "b": "x"}, {"a": None, "b": None})
    assert (first["l"], third["l"]) == ([1, None, 3], None)
    assert (first["u"], third["u"]) == (uuid.UUID(int=1).bytes, b"\xff" * 16)
    assert (first["tm"], third["local"]) == (dt.time(1, 2, 3, 4), ROWS["local"][2])
    # Maps as key/value pairs; the NULL map stays NULL.
    assert frame.sort("id").get_column("m").to_arrow().to_pylist() == [
        [("k", 1.5), ("n", None)],
        None,
    ]


def test_to_polars_empty_map_is_not_null(table: Any) -> None:
    # Row 2 (empty map and list), before its position delete.
    first = table.snapshots()[0].snapshot_id
    frame = table.scan(row_filter="id = 2", snapshot_id=first).to_polars()
    assert frame.height == 1
    column = frame.get_column("m").to_arrow()
    assert column.to_pylist() == [[]] and column.null_count == 0
    assert frame.get_column("l").to_list() == [[]]


def test_polars_reads_the_scan_through_the_stream_protocol(table: Any) -> None:
    scan = table.scan(row_filter="id > 1", selected_fields=("id", "dec", "s"))
    frame = pl.DataFrame(scan)
    assert frame.equals(scan.to_polars())
    assert frame.to_dicts() == [{"id": 3, "dec": ROWS["dec"][2], "s": {"a": None, "b": None}}]


@pytest.mark.parametrize("how", ["filter", "no-snapshot"])
def test_empty_scans_keep_their_columns(table: Any, tmp_path: Path, how: str) -> None:
    if how == "filter":
        scan = table.scan(row_filter="id > 100")
    else:
        scan = DataTable(tmp_path / "empty", SCHEMA).table().scan()
    expected_names = [f.name for f in SCHEMA.fields]
    frame = scan.to_polars()
    assert frame.height == 0 and frame.columns == expected_names
    assert frame.schema["ts"] == pl.Datetime("us", "UTC")
    assert frame.schema["dec"] == pl.Decimal(38, 10)
    assert pl.DataFrame(scan).schema == frame.schema
    connection = scan.to_duckdb("rows")
    assert connection.sql("select count(*) from rows").fetchall() == [(0,)]
    described = {name: kind for name, kind, *_ in connection.sql("describe rows").fetchall()}
    assert {k: described[k] for k in ("id", "ts", "dec")} == {
        "id": "BIGINT",
        "ts": "TIMESTAMP WITH TIME ZONE",
        "dec": "DECIMAL(38,10)",
    }


def test_to_duckdb_values_and_types(table: Any) -> None:
    connection = table.scan().to_duckdb("rows")
    assert isinstance(connection, duckdb.DuckDBPyConnection)
    types = {name: kind for name, kind, *_ in connection.sql("describe rows").fetchall()}
    assert types == {
        "id": "BIGINT",
        "ts": "TIMESTAMP WITH TIME ZONE",
        "dec": "DECIMAL(38,10)",
        "s": "STRUCT(a INTEGER, b VARCHAR)",
        "l": "BIGINT[]",
        "m": "MAP(VARCHAR, DOUBLE)",
        "u": "UUID",  # pa.uuid() (issue 22): DuckDB's UUID type
        "tm": "TIME",
        "local": "TIMESTAMP",
    }
    # Instants as epoch microseconds (no session time zone involved).
    got = connection.sql(
        "select id, epoch_us(ts), dec::varchar, s.a, s.b, l, m['k'], m is null, "
        "cardinality(m), tm, local from rows order by id"
    ).fetchall()
    assert got == [
        (
            1,
            1704110400000000,
            str(BIG),
            1,
            "x",
            [1, None, 3],
            1.5,
            False,
            2,
            ROWS["tm"][0],
            ROWS["local"][0],
        ),
        (
            3,
            -2208988800000000,
            "-0.0000000001",
            None,
            None,
            None,
            None,
            True,
            None,
            ROWS["tm"][2],
            ROWS["local"][2],
        ),
    ]


def test_to_duckdb_reads_again_at_every_query(table: Any) -> None:
    # A registered stream would be used up by the first query; every query sees the rows.
    mine = duckdb.connect()
    scan = table.scan(row_filter="id >= 1")
    assert scan.to_duckdb("rows", connection=mine) is mine
    for _ in range(3):
        assert mine.sql("select sum(id), count(*) from rows").fetchall() == [(4, 2)]
    assert mine.sql("select id from rows where s.b = 'x'").fetchall() == [(1,)]


def test_duckdb_reads_the_scan_object_directly(table: Any) -> None:
    scan = table.scan(selected_fields=("id", "l", "m"))
    got = duckdb.sql("select id, l, m from scan order by id").to_arrow_table()
    assert got.column("id").to_pylist() == [1, 3]
    assert got.column("l").to_pylist() == [[1, None, 3], None]
    assert got.column("m").to_pylist() == [[("k", 1.5), ("n", None)], None]
    # The same through an explicit Arrow stream (a RecordBatchReader from the capsule).
    reader = pa.RecordBatchReader.from_stream(scan)
    assert reader.read_all().sort_by("id").equals(scan.to_arrow().sort_by("id"))
