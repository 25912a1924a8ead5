"""Equality deletes applied in Rust (spec: "Equality Delete Files"): ``EqualityDeleteSet`` is a
hash anti-join on the delete columns. A data row is deleted when its delete-column values equal
those of some delete row, a null matching a null; floats compare as Java's ``Float.compare``
(-0.0 and 0.0 differ, NaN equals NaN), the comparator Java's ``StructLikeSet`` uses.

hypothesis: for random delete and data rows over several key types, the mask and the filtered
batch equal a direct Python model of the rule.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from frazil._native import EqualityDeleteSet
from frazil.errors import FrazilError, FrazilTypeError, UnknownFieldError, ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

KEY_TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "int": (pa.int32(), st.integers(-3, 3)),
    "long": (pa.int64(), st.integers(-(2**63), 2**63 - 1) | st.integers(-2, 2)),
    "string": (pa.string(), st.text(alphabet="ab\u00e9", max_size=3)),
    "binary": (pa.binary(), st.binary(max_size=2)),
    "date": (pa.date32(), st.dates(dt.date(1969, 12, 30), dt.date(1970, 1, 2))),
    "decimal": (
        pa.decimal128(9, 2),
        st.decimals(min_value=-2, max_value=2, places=2, allow_nan=False, allow_infinity=False),
    ),
    "timestamp": (
        pa.timestamp("us", tz="UTC"),
        st.datetimes(dt.datetime(1969, 12, 31, 23, 59), dt.datetime(1970, 1, 1, 0, 1)).map(
            lambda d: d.replace(tzinfo=dt.timezone.utc)
        ),
    ),
    "double": (
        pa.float64(),
        st.sampled_from(
            [0.0, -0.0, 1.5, math.nan, struct.unpack("<d", b"\x01\x00\x00\x00\x00\x00\xf8\x7f")[0]]
        ),
    ),
}


def _java_key(value: Any) -> Any:
    """The value as Java's comparator sees it: NaNs equal, -0.0 apart from 0.0."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("nan",)
        return ("float", struct.pack(">d", value))
    if isinstance(value, Decimal):
        return ("decimal", value)
    return value


@st.composite
def tables(draw: Any) -> tuple[list[str], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    names = draw(st.lists(st.sampled_from(sorted(KEY_TYPES)), min_size=1, max_size=3, unique=True))
    row = st.tuples(*(st.none() | KEY_TYPES[n][1] for n in names))
    deletes = draw(st.lists(row, max_size=12))
    # Data rows often repeat delete rows, so that matches are common.
    data = draw(st.lists(row | (st.sampled_from(deletes) if deletes else row), max_size=30))
    return names, deletes, data


def _batch(names: list[str], rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    columns = [pa.array([r[i] for r in rows], type=KEY_TYPES[n][0]) for i, n in enumerate(names)]
    return pa.RecordBatch.from_arrays(columns, names=names)


@settings(max_examples=300, deadline=None)
@given(tables())
def test_deleted_exactly_when_a_delete_row_is_equal(
    drawn: tuple[list[str], list[tuple[Any, ...]], list[tuple[Any, ...]]],
) -> None:
    names, deletes, data = drawn
    keys = _batch(names, deletes)
    deleted = EqualityDeleteSet(keys.schema)
    deleted.add(keys, "deletes.parquet")
    model = {tuple(_java_key(v) for v in r) for r in deletes}
    assert len(deleted) == len(model)
    expected = [tuple(_java_key(v) for v in r) in model for r in data]
    batch = _batch(names, data)
    assert deleted.deleted_mask(batch).to_pylist() == expected
    # apply() keeps every other column and the surviving rows in order.
    rows = pa.RecordBatch.from_arrays(
        [pa.array(range(len(data)), pa.int64()), *batch.columns], names=["n", *names]
    )
    kept = deleted.apply(rows, names, "data.parquet")
    assert kept.column("n").to_pylist() == [i for i, d in enumerate(expected) if not d]
    assert kept.schema == rows.schema


def test_null_matches_only_null_and_keys_are_an_and() -> None:
    """The spec's example: ``id = 4 AND category IS NULL``."""
    keys = pa.RecordBatch.from_pydict(
        {"id": pa.array([4], pa.int32()), "category": pa.array([None], pa.string())}
    )
    deleted = EqualityDeleteSet(keys.schema)
    deleted.add(keys)
    data = pa.RecordBatch.from_pydict(
        {"id": pa.array([4, 4, None], pa.int32()), "category": pa.array([None, "a", None])}
    )
    assert deleted.deleted_mask(data).to_pylist() == [True, False, False]


def test_key_columns_by_index_and_in_any_batch_position() -> None:
    keys = pa.RecordBatch.from_pydict({"id": pa.array([2], pa.int64())})
    deleted = EqualityDeleteSet(keys.schema)
    deleted.add(keys)
    data = pa.RecordBatch.from_pydict({"s": ["a", "b"], "x": pa.array([2, 3], pa.int64())})
    assert deleted.apply(data, [1]).column("s").to_pylist() == ["b"]
    assert deleted.apply(data, ["x"]).column("s").to_pylist() == ["b"]


def test_bad_input_is_a_frazil_error_naming_it() -> None:
    keys = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int64())})
    deleted = EqualityDeleteSet(keys.schema)
    wrong = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int32())})
    with pytest.raises(FrazilTypeError, match=r"eq-deletes\.parquet.*\"id\""):
        deleted.add(wrong, "eq-deletes.parquet")
    data = pa.RecordBatch.from_pydict({"v": pa.array([1], pa.int64())})
    with pytest.raises(UnknownFieldError, match=r"data\.parquet.*\"id\""):
        deleted.apply(data, ["id"], "data.parquet")
    with pytest.raises(ValidationError, match=r"data\.parquet"):
        deleted.deleted_mask(pa.RecordBatch.from_pydict({}), "data.parquet")
    with pytest.raises(FrazilError):
        EqualityDeleteSet(pa.schema([]))
