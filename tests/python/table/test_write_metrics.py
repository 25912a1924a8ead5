"""Metrics of written files equal metrics recomputed independently from the data (Java's
ParquetMetrics / MetricsConfig rules: NaN out of bounds, -0.0 below 0.0, code-point
truncation with incremented upper bounds, no counts or bounds inside lists and maps)."""

from __future__ import annotations

import datetime as dt
import math
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.errors import FrazilError
from frazil.io import FileIO
from frazil.table.write import check_arrow_schema, data_file_from_parquet, write_data_files
from frazil.table.write._metrics import truncate_binary_max, truncate_string_max
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from write_helpers import col, read_back, schema_of, table_metadata

SCHEMA = schema_of(
    col(1, "l", "long"),
    col(2, "i", "int"),
    col(3, "d", "double"),
    col(4, "f", "float"),
    col(5, "s", "string"),
    col(6, "b", "binary"),
    col(7, "flag", "boolean"),
    col(8, "day", "date"),
    col(9, "ts", "timestamp"),
    col(
        10, "lst", {"type": "list", "element-id": 11, "element": "long", "element-required": False}
    ),
)
ARROW = pa.schema(
    [
        ("l", pa.int64()),
        ("i", pa.int32()),
        ("d", pa.float64()),
        ("f", pa.float32()),
        ("s", pa.string()),
        ("b", pa.binary()),
        ("flag", pa.bool_()),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("lst", pa.list_(pa.int64())),
    ]
)
F32 = st.floats(width=32) | st.sampled_from([-0.0, 0.0, math.nan])
F64 = st.floats() | st.sampled_from([-0.0, 0.0, math.nan])
TEXT = st.text(alphabet=st.sampled_from("aé€\U0001d11ez\U0010ffff\ud7ff"), max_size=30) | st.text()
ROW = st.fixed_dictionaries(
    {
        "l": st.none() | st.integers(-(2**63), 2**63 - 1),
        "i": st.none() | st.integers(-(2**31), 2**31 - 1),
        "d": st.none() | F64,
        "f": st.none() | F32,
        "s": st.none() | TEXT,
        "b": st.none() | st.binary(max_size=24) | st.just(b"\xff" * 20),
        "flag": st.none() | st.booleans(),
        "day": st.none() | st.dates(),
        "ts": st.none() | st.datetimes(),
        "lst": st.none() | st.lists(st.none() | st.integers(-5, 5), max_size=3),
    }
)

EPOCH = dt.datetime(1970, 1, 1)


# --- the independent model --------------------------------------------------------------------


def string_max(value: str, n: int) -> str | None:
    chars = list(value)
    if len(chars) <= n:
        return value
    chars = chars[:n]
    while chars:
        code = ord(chars[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


def binary_max(value: bytes, n: int) -> bytes | None:
    if len(value) <= n:
        return value
    data = bytearray(value[:n])
    while data:
        if data[-1] < 0xFF:
            data[-1] += 1
            return bytes(data)
        data.pop()
    return None


def float_key(v: float) -> tuple[float, bool]:
    return (v, math.copysign(1, v) > 0)


def encode(name: str, v: Any) -> bytes:
    if name == "l":
        return struct.pack("<q", v)
    if name == "i":
        return struct.pack("<i", v)
    if name == "d":
        return struct.pack("<d", v)
    if name == "f":
        return struct.pack("<f", v)
    if name == "s":
        return str(v).encode("utf-8")
    if name == "b":
        return bytes(v)
    if name == "flag":
        return b"\x01" if v else b"\x00"
    if name == "day":
        return struct.pack("<i", (v - dt.date(1970, 1, 1)).days)
    if name == "ts":
        return struct.pack("<q", (v - EPOCH) // dt.timedelta(microseconds=1))
    raise AssertionError(name)


def expected_metrics(rows: list[dict[str, Any]], length: int | None) -> dict[str, Any]:
    ids = {"l": 1, "i": 2, "d": 3, "f": 4, "s": 5, "b": 6, "flag": 7, "day": 8, "ts": 9}
    lower: dict[int, bytes] = {}
    upper: dict[int, bytes] = {}
    nulls: dict[int, int] = {}
    nans: dict[int, int] = {}
    for name, field_id in ids.items():
        column = [r[name] for r in rows]
        present = [v for v in column if v is not None]
        nulls[field_id] = len(column) - len(present)
        if name in ("d", "f"):
            nans[field_id] = sum(1 for v in present if math.isnan(v))
            present = [v for v in present if not math.isnan(v)]
            if name == "f":
                present = [struct.unpack("<f", struct.pack("<f", v))[0] for v in present]
            if present:
                lower[field_id] = encode(name, min(present, key=float_key))
                upper[field_id] = encode(name, max(present, key=float_key))
            continue
        if not present:
            continue
        if name == "s":
            low, high = (
                min(present, key=lambda s: s.encode()),
                max(present, key=lambda s: s.encode()),
            )
            if length is not None:
                low, high = low[:length], string_max(high, length)
        elif name == "b":
            low, high = min(present), max(present)
            if length is not None:
                low, high = low[:length], binary_max(high, length)
        else:
            low, high = min(present), max(present)
        lower[field_id] = encode(name, low)
        if high is not None:
            upper[field_id] = encode(name, high)
    return {
        "value_counts": dict.fromkeys(ids.values(), len(rows)),
        "null_value_counts": nulls,
        "nan_value_counts": nans,
        "lower_bounds": lower,
        "upper_bounds": upper,
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=25), full=st.booleans(), chunks=st.integers(1, 3))
def test_metrics_equal_an_independent_model(
    tmp_path: Path, rows: list[dict[str, Any]], full: bool, chunks: int
) -> None:
    props = {"write.metadata.metrics.default": "full"} if full else {}
    md = table_metadata(tmp_path, SCHEMA, properties=props)
    table = pa.Table.from_pylist(rows, schema=ARROW)
    step = max(1, len(rows) // chunks)
    batches = [b for i in range(0, len(rows), step) for b in table.slice(i, step).to_batches()]
    reader = pa.RecordBatchReader.from_batches(ARROW, batches)
    (f,) = write_data_files(md, FileIO(), reader)
    want = expected_metrics(rows, None if full else 16)
    assert f.record_count == len(rows)
    for key, value in want.items():
        assert getattr(f, key) == value, key
    # No counts or bounds for the list element (Java), but a column size.
    assert f.column_sizes is not None and 11 in f.column_sizes and 10 not in f.column_sizes
    back = read_back(f.file_path)
    assert back.to_pylist() == table.to_pylist() or _same_with_nan(back.to_pylist(), rows)


def _same_with_nan(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    def norm(v: Any) -> Any:
        if isinstance(v, float):
            return ("nan",) if math.isnan(v) else struct.pack("<d", v)
        return v

    return [{k: norm(v) for k, v in r.items() if k != "f"} for r in a] == [
        {k: norm(v) for k, v in r.items() if k != "f"} for r in b
    ]


def test_truncation_edges() -> None:
    assert truncate_string_max("ab\U0010ffff\U0010ffffz", 4) == "ac"
    assert truncate_string_max("\ud7ffxx"[0] + "abc", 1) == "\ue000"
    assert truncate_string_max("\U0010ffff" * 3, 2) is None
    assert truncate_string_max("abc", 3) == "abc"
    assert truncate_binary_max(b"\x01\xff\xff\x00", 3) == b"\x02"
    assert truncate_binary_max(b"\xff\xff\xff", 2) is None


def test_metrics_modes_per_column_and_inferred_limit(tmp_path: Path) -> None:
    props = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.s": "truncate(2)",
        "write.metadata.metrics.column.l": "none",
        "write.metadata.metrics.column.d": "full",
    }
    md = table_metadata(tmp_path, SCHEMA, properties=props)
    rows = [{"l": 1, "s": "héllo", "d": 1.0, "i": 3}]
    (f,) = write_data_files(md, FileIO(), pa.Table.from_pylist(rows, schema=ARROW))
    assert f.lower_bounds == {5: "hé".encode(), 3: struct.pack("<d", 1.0)}
    assert f.upper_bounds == {5: "hê".encode(), 3: struct.pack("<d", 1.0)}
    assert f.column_sizes is not None and 1 not in f.column_sizes and 2 in f.column_sizes
    assert f.value_counts is not None and 1 not in f.value_counts and f.value_counts[2] == 1
    # More than max-inferred primitive columns: only the first N get truncate(16).
    md2 = table_metadata(
        tmp_path, SCHEMA, properties={"write.metadata.metrics.max-inferred-column-defaults": "2"}
    )
    (g,) = write_data_files(md2, FileIO(), pa.Table.from_pylist(rows, schema=ARROW))
    assert set(g.lower_bounds or {}) == {1, 2}
    assert set(g.value_counts or {}) == {1, 2}


def test_schema_mismatches_are_listed_together(tmp_path: Path) -> None:
    arrow = pa.schema(
        [
            ("l", pa.string()),
            ("i", pa.int64()),
            ("extra", pa.int32()),
            ("ts", pa.timestamp("ns")),
            ("day", pa.timestamp("us", "UTC")),
        ]
    )
    with pytest.raises(FrazilError) as caught:
        check_arrow_schema(arrow, SCHEMA)
    message = str(caught.value)
    for name in ("l:", "i:", "extra:", "ts:", "day:"):
        assert name in message
    assert "5 problem" in message


def test_promotions_and_missing_optional_columns(tmp_path: Path) -> None:
    schema = schema_of(
        col(1, "l", "long", required=True),
        col(2, "d", "double"),
        col(3, "dec", "decimal(10, 2)"),
        col(4, "opt", "string"),
        col(5, "ts", "timestamptz"),
    )
    md = table_metadata(tmp_path, schema)
    data = pa.table(
        {
            "l": pa.array([1, 2], pa.int32()),  # nullable Arrow column without nulls
            "d": pa.array([1.5, None], pa.float32()),
            "dec": pa.array([1, None], pa.decimal128(4, 2)),
            "ts": pa.array([0, None], pa.timestamp("ms", "Europe/Paris")),
        }
    )
    (f,) = write_data_files(md, FileIO(), data)
    back = read_back(f.file_path)
    assert back.schema.field("l").type == pa.int64() and back.column("l").to_pylist() == [1, 2]
    assert back.column("d").to_pylist() == [1.5, None]
    assert back.column("opt").to_pylist() == [None, None]
    assert back.schema.field("ts").type == pa.timestamp("us", "UTC")
    assert back.column("ts").cast(pa.int64()).to_pylist() == [0, None]
    assert f.null_value_counts is not None and f.null_value_counts[4] == 2


def test_add_files_metrics_from_the_footer(tmp_path: Path) -> None:
    schema = schema_of(col(1, "n", "long"), col(2, "s", "string"), col(3, "k", "int"))
    md = table_metadata(tmp_path, schema, partition=[(3, "identity", "k")])
    data = pa.table(
        {
            "n": pa.array([5, None, -3], pa.int64()),
            "s": ["b" * 20, "a", None],
            "k": pa.array([7, 7, 7], pa.int32()),
        }
    )
    (written,) = write_data_files(md, FileIO(), data)
    found = data_file_from_parquet(written.file_path or "", md, FileIO())
    for key in ("partition", "record_count", "file_size_in_bytes", "column_sizes",
                "value_counts", "null_value_counts", "lower_bounds", "upper_bounds",
                "split_offsets"):  # fmt: skip
        assert getattr(found, key) == getattr(written, key), key


def test_add_files_refuses_conflicting_or_missing_ids(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    schema = schema_of(col(1, "n", "long"), col(2, "s", "string"))
    md = table_metadata(tmp_path, schema)
    bad = pa.schema(
        [
            pa.field("n", pa.string(), metadata={b"PARQUET:field_id": b"1"}),
            pa.field("z", pa.int64(), metadata={b"PARQUET:field_id": b"9"}),
        ]
    )
    path = str(tmp_path / "bad.parquet")
    pq.write_table(pa.table({"n": ["x"], "z": [1]}, schema=bad), path)
    with pytest.raises(FrazilError, match=r"(?s)bad\.parquet.*n: field id 1.*z: field id 9"):
        data_file_from_parquet(path, md, FileIO())
    plain = str(tmp_path / "plain.parquet")
    pq.write_table(pa.table({"n": [1], "s": ["x"]}), plain)
    with pytest.raises(FrazilError, match="no field ids"):
        data_file_from_parquet(plain, md, FileIO())
    mapped = md.replace(
        properties={
            "schema.name-mapping.default": '[{"field-id": 1, "names": ["n"]}, '
            '{"field-id": 2, "names": ["s"]}]'
        }
    )
    f = data_file_from_parquet(plain, mapped, FileIO())
    assert f.lower_bounds == {1: struct.pack("<q", 1), 2: b"x"}


def test_add_files_refuses_a_file_spanning_partitions(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    schema = schema_of(col(1, "n", "long"))
    md = table_metadata(tmp_path, schema, partition=[(1, "identity", "n")])
    path = str(tmp_path / "two.parquet")
    arrow = pa.schema([pa.field("n", pa.int64(), metadata={b"PARQUET:field_id": b"1"})])
    pq.write_table(pa.table({"n": [1, 2]}, schema=arrow), path)
    with pytest.raises(FrazilError, match="more than one partition"):
        data_file_from_parquet(path, md, FileIO())
