"""The Rust gather the writer reorders rows with (``frazil._native.gather_rows``): the same
rows as pyarrow's ``take`` for every Arrow type the writer handles (nulls, nested struct /
list / map, large strings, dictionaries, several chunks), and a FrazilError naming the column
for bad indices."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest
from frazil import _native
from frazil.errors import FrazilError
from frazil.table.write._partition import gather_rows
from hypothesis import given, settings
from hypothesis import strategies as st

_INT = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}

# (Arrow type, strategy of its non-null Python values)
_PRIMITIVES: list[tuple[pa.DataType, st.SearchStrategy[Any]]] = [
    *((t, st.integers(-(2 ** (b - 1)), 2 ** (b - 1) - 1)) for b, t in _INT.items()),
    (pa.bool_(), st.booleans()),
    (pa.float32(), st.floats(width=32)),
    (pa.float64(), st.floats()),
    (pa.string(), st.text(max_size=8)),
    (pa.large_string(), st.text(max_size=8)),
    (pa.binary(), st.binary(max_size=8)),
    (pa.large_binary(), st.binary(max_size=8)),
    (pa.binary(4), st.binary(min_size=4, max_size=4)),
    (
        pa.decimal128(12, 2),
        st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False),
    ),
    (pa.date32(), st.dates()),
    (pa.time64("us"), st.times()),
    (pa.timestamp("us"), st.datetimes()),
    (pa.timestamp("us", "UTC"), st.datetimes(timezones=st.just(dt.timezone.utc))),
    (pa.timestamp("ns", "UTC"), st.integers(-(2**62), 2**62)),
]


def _nullable(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values)


@st.composite
def _typed(draw: st.DrawFn, depth: int = 0) -> tuple[pa.DataType, st.SearchStrategy[Any]]:
    """An Arrow type and a strategy of its (nullable) Python values, nested up to depth 2."""
    kinds = ["primitive", "dictionary"] + (["struct", "list", "large_list", "map"] * (depth < 2))
    kind = draw(st.sampled_from(kinds))
    if kind == "primitive":
        t, values = draw(st.sampled_from(_PRIMITIVES))
        return t, _nullable(values)
    if kind == "dictionary":
        return pa.dictionary(pa.int32(), pa.string()), _nullable(st.sampled_from(["a", "b", "c"]))
    if kind == "struct":
        children = draw(st.lists(_typed(depth + 1), min_size=1, max_size=3))
        t = pa.struct([pa.field(f"f{i}", ct) for i, (ct, _) in enumerate(children)])
        values = st.fixed_dictionaries({f"f{i}": v for i, (_, v) in enumerate(children)})
        return t, _nullable(values)
    if kind == "map":
        key_type, keys = draw(st.sampled_from(_PRIMITIVES[:4]))
        item_type, items = draw(_typed(depth + 1))
        pairs = st.lists(st.tuples(keys, items), max_size=3, unique_by=lambda kv: kv[0])
        return pa.map_(key_type, item_type), _nullable(pairs)
    element_type, elements = draw(_typed(depth + 1))
    t = pa.list_(element_type) if kind == "list" else pa.large_list(element_type)
    return t, _nullable(st.lists(elements, max_size=3))


@st.composite
def _tables_and_indices(draw: st.DrawFn) -> tuple[pa.Table, list[int]]:
    columns = draw(st.lists(_typed(), min_size=1, max_size=4))
    rows = draw(st.integers(0, 12))
    arrays = [pa.array(draw(st.lists(v, min_size=rows, max_size=rows)), t) for t, v in columns]
    table = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
    # A table in several chunks: the gather counts rows across them.
    cut = draw(st.integers(0, rows))
    table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
    indices = draw(st.lists(st.integers(0, rows - 1), max_size=20)) if rows else []
    return table, indices


@settings(max_examples=150, deadline=None)
@given(_tables_and_indices(), st.sampled_from([pa.uint64(), pa.int64(), pa.int32()]))
def test_gather_equals_pyarrow_take(case: tuple[pa.Table, list[int]], index_type: Any) -> None:
    table, indices = case
    index_array = pa.array(indices, index_type)
    got = gather_rows(table, index_array)
    want = table.take(index_array)
    assert got.schema == table.schema
    assert got.num_rows == len(indices)
    assert got.combine_chunks().equals(want.combine_chunks()) or _nan_equal(got, want)
    assert got.to_pylist() == want.to_pylist() or _nan_equal(got, want)


def _nan_equal(a: pa.Table, b: pa.Table) -> bool:
    """Row lists equal but for NaN != NaN."""
    return repr(a.to_pylist()) == repr(b.to_pylist())


def test_schema_metadata_and_field_ids_kept() -> None:
    field = pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"})
    schema = pa.schema([field, pa.field("s", pa.large_string())], metadata={b"k": b"v"})
    table = pa.table({"id": [1, 2, 3], "s": ["x", None, "z"]}, schema=schema)
    got = _native.gather_rows(table, pa.array([2, 0], pa.uint64()))
    assert got.schema.equals(schema, check_metadata=True)
    assert got.to_pydict() == {"id": [3, 1], "s": ["z", "x"]}


def test_large_values_gathered_in_one_piece() -> None:
    big = "x" * 100_000
    table = pa.table({"s": pa.array([big, None, "y"] * 50, pa.large_string())})
    indices = pa.array(list(range(149, -1, -1)), pa.int64())
    assert _native.gather_rows(table, indices).equals(table.take(indices))


@pytest.mark.parametrize(
    ("indices", "message"),
    [
        (pa.array([0, 3], pa.int64()), "out of bounds"),
        (pa.array([-1], pa.int64()), "column 'n'"),
        (pa.array([0, None], pa.int64()), "must not be null"),
        (pa.array(["0"]), "must be integers"),
    ],
)
def test_bad_indices_raise_a_frazil_error(indices: pa.Array, message: str) -> None:
    table = pa.table({"n": [1, 2, 3], "s": ["a", "b", "c"]})
    with pytest.raises(FrazilError, match=message):
        _native.gather_rows(table, indices)


def test_decimal_and_nested_values_survive() -> None:
    t = pa.struct(
        [pa.field("d", pa.decimal128(12, 2)), pa.field("m", pa.map_(pa.string(), pa.int32()))]
    )
    values = [
        {"d": decimal.Decimal("1.25"), "m": [("a", 1)]},
        None,
        {"d": None, "m": None},
    ]
    table = pa.table({"v": pa.array(values, t)})
    got = _native.gather_rows(table, pa.array([2, 1, 0], pa.uint64()))
    assert got.column("v").to_pylist() == [
        {"d": None, "m": None},
        None,
        {"d": decimal.Decimal("1.25"), "m": [("a", 1)]},
    ]
