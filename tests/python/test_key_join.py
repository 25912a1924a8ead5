"""The hash join of upserts in Rust: ``KeyIndex`` (the source rows' keys, probed with the target's)
and ``rows_differ`` (which rows an upsert would change).

Keys compare with SQL join equality, as Spark's joins do: a key holding a null matches nothing
(and is never a duplicate), NaN equals NaN, -0.0 equals 0.0. ``rows_differ`` compares stored
values: null equals null, NaN equals NaN, -0.0 differs from 0.0, nested values by value.

hypothesis: for random tables of several key types (nulls, NaNs, -0.0, multi-byte strings,
one to three key columns) given whole, as chunked tables or as separately chunked columns, the
matches, the unmatched rows and the row differences equal a pure-Python model.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import struct
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from frazil._native import KeyIndex, rows_differ
from frazil.errors import FrazilError, FrazilTypeError, ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

OTHER_NAN = struct.unpack("<d", b"\x01\x00\x00\x00\x00\x00\xf8\x7f")[0]
NEGATIVE_NAN = struct.unpack("<d", b"\x00\x00\x00\x00\x00\x00\xf8\xff")[0]
DOUBLES = st.sampled_from([0.0, -0.0, 1.5, -1.5, math.inf, math.nan, OTHER_NAN, NEGATIVE_NAN])
TEXT = st.text(alphabet="ab\u00e9\u65e5\U0001f9ca", max_size=3)

KEY_TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "int": (pa.int32(), st.integers(-3, 3)),
    "long": (pa.int64(), st.integers(-(2**63), 2**63 - 1) | st.integers(-2, 2)),
    "string": (pa.string(), TEXT),
    "large_string": (pa.large_string(), TEXT),
    "string_view": (pa.string_view(), TEXT | st.just("a string longer than twelve bytes")),
    "binary": (pa.binary(), st.binary(max_size=2)),
    "uuid": (pa.binary(16), st.sampled_from([uuid.UUID(int=i).bytes for i in range(3)])),
    "dictionary": (pa.dictionary(pa.int32(), pa.string()), TEXT),
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
    "double": (pa.float64(), DOUBLES),
    "float": (pa.float32(), DOUBLES),
}

Rows = list[tuple[Any, ...]]


def _join_key(value: Any) -> Any:
    """A value as join equality sees it: NaNs equal (and -0.0 == 0.0, as Python has it)."""
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, Decimal):
        return ("decimal", value)
    return value


def _model_join(source: Rows, probe: Rows) -> tuple[list[int], list[int], list[int]] | None:
    """The matches (probe rows, source rows) and the unmatched source rows; None on a
    duplicate key."""
    index: dict[tuple[Any, ...], int] = {}
    for r, row in enumerate(source):
        if any(v is None for v in row):
            continue
        key = tuple(_join_key(v) for v in row)
        if key in index:
            return None
        index[key] = r
    probe_rows, source_rows = [], []
    for r, row in enumerate(probe):
        if any(v is None for v in row):
            continue
        match = index.get(tuple(_join_key(v) for v in row))
        if match is not None:
            probe_rows.append(r)
            source_rows.append(match)
    matched = set(source_rows)
    return probe_rows, source_rows, [r for r in range(len(source)) if r not in matched]


def _columns(names: list[str], rows: Rows) -> list[pa.Array]:
    return [pa.array([r[i] for r in rows], type=KEY_TYPES[n][0]) for i, n in enumerate(names)]


def _as_input(names: list[str], rows: Rows, form: str, cuts: list[int]) -> Any:
    """The rows as a RecordBatch, a chunked Table or a list of separately chunked columns."""
    columns = _columns(names, rows)
    labels = [f"k{i}" for i in range(len(names))]
    if form == "batch":
        return pa.RecordBatch.from_arrays(columns, names=labels)
    if form == "table":
        bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
        batches = [
            pa.RecordBatch.from_arrays([c.slice(a, b - a) for c in columns], names=labels)
            for a, b in itertools.pairwise(bounds)
        ]
        schema = pa.schema([(label, c.type) for label, c in zip(labels, columns, strict=True)])
        return pa.Table.from_batches(batches, schema=schema)
    chunked = []
    for i, column in enumerate(columns):
        bounds = sorted({0, len(rows), *((c + i * 7) % (len(rows) + 1) for c in cuts)})
        chunks = [column.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
        chunked.append(pa.chunked_array(chunks, type=column.type))
    return chunked


@st.composite
def joins(draw: Any) -> tuple[list[str], Rows, Rows, str, str, list[int]]:
    names = draw(st.lists(st.sampled_from(sorted(KEY_TYPES)), min_size=1, max_size=3))
    row = st.tuples(*(st.none() | KEY_TYPES[n][1] for n in names))
    source = draw(st.lists(row, max_size=15))
    if draw(st.booleans()):
        # Mostly unique keys: keep the first row of each key.
        seen: set[tuple[Any, ...]] = set()
        unique = []
        for r in source:
            key = tuple(_join_key(v) for v in r)
            if any(v is None for v in r) or key not in seen:
                seen.add(key)
                unique.append(r)
        source = unique
    # Probe rows often repeat source rows, so that matches are common.
    probe = draw(st.lists(row | (st.sampled_from(source) if source else row), max_size=30))
    forms = st.sampled_from(["batch", "table", "columns"])
    cuts = draw(st.lists(st.integers(0, 40), max_size=3))
    return names, source, probe, draw(forms), draw(forms), cuts


@settings(max_examples=300, deadline=None)
@given(joins())
def test_the_join_equals_a_python_model(
    drawn: tuple[list[str], Rows, Rows, str, str, list[int]],
) -> None:
    names, source, probe, source_form, probe_form, cuts = drawn
    expected = _model_join(source, probe)
    keys = _as_input(names, source, source_form, cuts)
    if expected is None:
        with pytest.raises(ValidationError, match=r"^duplicate key in upsert input: \("):
            KeyIndex(keys, source="upsert input")
        return
    index = KeyIndex(keys, source="upsert input")
    assert len(index) == len(source)
    probe_rows, source_rows = index.probe(_as_input(names, probe, probe_form, cuts[::-1]))
    assert isinstance(probe_rows, pa.UInt32Array) and isinstance(source_rows, pa.UInt32Array)
    assert (probe_rows.to_pylist(), source_rows.to_pylist()) == expected[:2]
    unmatched = index.unmatched()
    assert isinstance(unmatched, pa.UInt32Array)
    assert unmatched.to_pylist() == expected[2]
    assert index.matched_count() == len(source) - len(expected[2])


def _stored(value: Any) -> Any:
    """A value as stored data compares: NaNs equal, -0.0 apart from 0.0, nested by value."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("struct", tuple((k, _stored(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_stored(v) for v in value))
    if isinstance(value, tuple):
        return ("entry", tuple(_stored(v) for v in value))
    return value


NESTED_TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "struct": (
        pa.struct([("a", pa.int32()), ("b", pa.float64())]),
        st.fixed_dictionaries({"a": st.none() | st.integers(0, 2), "b": st.none() | DOUBLES}),
    ),
    "list": (pa.list_(pa.float64()), st.lists(st.none() | DOUBLES, max_size=3)),
    "map": (
        pa.map_(pa.string(), pa.int32()),
        st.lists(st.tuples(st.sampled_from(["a", "b"]), st.none() | st.integers(0, 1)), max_size=2),
    ),
    "bool": (pa.bool_(), st.booleans()),
}
DIFF_TYPES = {**KEY_TYPES, **NESTED_TYPES}


@st.composite
def row_pairs(draw: Any) -> tuple[list[str], Rows, Rows, list[int]]:
    names = draw(st.lists(st.sampled_from(sorted(DIFF_TYPES)), min_size=1, max_size=3))
    row = st.tuples(*(st.none() | DIFF_TYPES[n][1] for n in names))
    left = draw(st.lists(row, max_size=25))
    # The right side often repeats the left row, so that equal rows are common.
    right = [draw(st.just(r) | row) for r in left]
    return names, left, right, draw(st.lists(st.integers(0, 30), max_size=3))


def _diff_columns(names: list[str], rows: Rows, cuts: list[int]) -> list[pa.ChunkedArray]:
    out = []
    for i, n in enumerate(names):
        column = pa.array([r[i] for r in rows], type=DIFF_TYPES[n][0])
        bounds = sorted({0, len(rows), *((c + i) % (len(rows) + 1) for c in cuts)})
        out.append(
            pa.chunked_array(
                [column.slice(a, b - a) for a, b in itertools.pairwise(bounds)], column.type
            )
        )
    return out


@settings(max_examples=300, deadline=None)
@given(row_pairs())
def test_rows_differ_equals_a_python_model(drawn: tuple[list[str], Rows, Rows, list[int]]) -> None:
    names, left, right, cuts = drawn
    left_columns = _diff_columns(names, left, cuts)
    right_columns = _diff_columns(names, right, cuts[::-1])
    # The model reads the values back from Arrow (a map's entries as (key, value) tuples).
    left_values = [c.to_pylist() for c in left_columns]
    right_values = [c.to_pylist() for c in right_columns]
    expected = [
        any(
            _stored(lv[r]) != _stored(rv[r])
            for lv, rv in zip(left_values, right_values, strict=True)
        )
        for r in range(len(left))
    ]
    mask = rows_differ(left_columns, right_columns)
    assert isinstance(mask, pa.BooleanArray)
    assert mask.to_pylist() == expected
    labels = [f"c{i}" for i in range(len(names))]
    as_tables = rows_differ(
        pa.table(left_columns, names=labels), pa.table(right_columns, names=labels)
    )
    assert as_tables.to_pylist() == expected


def test_a_duplicate_key_names_the_key_and_both_rows() -> None:
    ids = list(range(20))
    ids[17] = 5
    regions = ["eu"] * 20
    source = pa.table({"id": pa.array(ids, pa.int64()), "region": regions})
    with pytest.raises(
        ValidationError,
        match=r'^duplicate key in upsert input: \(id=5, region="eu"\) appears in rows 5 and 17 ',
    ):
        KeyIndex(source, source="upsert input")
    # ValidationError is a ValueError and a FrazilError.
    with pytest.raises(ValueError, match=r"\(5\) appears in rows 5 and 17"):
        KeyIndex([pa.array(ids, pa.int32())])
    # Rows with a null key are never duplicates.
    assert len(KeyIndex([pa.array([None, None, 1])])) == 3


def test_a_probe_of_other_types_is_refused_naming_the_column() -> None:
    index = KeyIndex(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]}))
    with pytest.raises(FrazilTypeError, match=r"key column 0 is Int64 .* but Int32 in the probe"):
        index.probe([pa.array([1], pa.int32()), pa.array(["a"])])
    with pytest.raises(ValidationError, match="1 key columns given"):
        index.probe([pa.array([1], pa.int64())])
    with pytest.raises(FrazilTypeError, match="RecordBatch or Table"):
        index.probe(42)
    with pytest.raises(ValidationError, match="different lengths"):
        index.probe([pa.array([1], pa.int64()), pa.array(["a", "b"])])
    with pytest.raises(FrazilTypeError, match="cannot be a join key"):
        KeyIndex([pa.array([[1]])])
    with pytest.raises(FrazilError):
        KeyIndex([])


def test_rows_differ_refuses_mismatched_sides() -> None:
    with pytest.raises(FrazilTypeError, match="column 0 is Int32 on the left but Int64"):
        rows_differ([pa.array([1], pa.int32())], [pa.array([1], pa.int64())])
    with pytest.raises(ValidationError):
        rows_differ([pa.array([1])], [pa.array([1, 2])])
    with pytest.raises(ValidationError):
        rows_differ([pa.array([1])], [pa.array([1]), pa.array([1])])


def test_join_and_stored_float_equality_differ() -> None:
    index = KeyIndex([pa.array([-0.0, math.nan])])
    probe_rows, source_rows = index.probe([pa.array([0.0, OTHER_NAN, None])])
    assert (probe_rows.to_pylist(), source_rows.to_pylist()) == ([0, 1], [0, 1])
    mask = rows_differ([pa.array([-0.0, math.nan, None])], [pa.array([0.0, OTHER_NAN, None])])
    assert mask.to_pylist() == [True, False, False]


@pytest.mark.parametrize("kind", ["long", "string", "two columns"])
def test_concurrent_probes_match_sequential_ones(kind: str) -> None:
    n = 50_000
    ids = pa.array([(i * 7919) % (3 * n) for i in range(n)], pa.int64())
    strings = pa.array([f"key-{v:08d}-é" for v in ids.to_pylist()])

    def keys(values: pa.Array) -> list[pa.Array]:
        text = pa.array([f"key-{v:08d}-é" for v in values.to_pylist()])
        if kind == "long":
            return [values]
        if kind == "string":
            return [text]
        return [values, text]

    source = {"long": [ids], "string": [strings], "two columns": [ids, strings]}[kind]
    probe = pa.array(range(2 * n), pa.int64())
    parts = [probe.slice(i, 10_000) for i in range(0, len(probe), 10_000)]

    sequential = KeyIndex(source)
    expected = []
    for offset, part in zip(range(0, len(probe), 10_000), parts, strict=True):
        probe_rows, source_rows = sequential.probe(keys(part))
        expected.extend(
            (offset + p, s)
            for p, s in zip(probe_rows.to_pylist(), source_rows.to_pylist(), strict=True)
        )

    concurrent = KeyIndex(source)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda part: concurrent.probe(keys(part)), parts))
    got = []
    for offset, (probe_rows, source_rows) in zip(
        range(0, len(probe), 10_000), results, strict=True
    ):
        got.extend(
            (offset + p, s)
            for p, s in zip(probe_rows.to_pylist(), source_rows.to_pylist(), strict=True)
        )
    assert sorted(got) == sorted(expected) and len(got) > 0
    assert concurrent.unmatched().to_pylist() == sequential.unmatched().to_pylist()
    assert concurrent.matched_count() == sequential.matched_count()
    assert concurrent.matched_count() == len({s for _, s in expected})


def test_a_chunked_array_or_a_sliced_batch_is_a_key_column_list() -> None:
    batch = pa.record_batch(
        {"id": pa.array(range(10), pa.int64()), "s": [str(i) for i in range(10)]}
    )
    index = KeyIndex(batch.slice(3, 4))
    probe_rows, source_rows = index.probe(
        pa.table({"id": pa.array([6, 3], pa.int64()), "s": ["6", "3"]})
    )
    assert (probe_rows.to_pylist(), source_rows.to_pylist()) == ([0, 1], [3, 0])
    single = KeyIndex(pa.chunked_array([[1, 2], [], [3]], pa.int64()))
    assert len(single) == 3
    assert single.probe(pa.chunked_array([[3, 9, 1]], pa.int64()))[1].to_pylist() == [2, 0]
    assert single.unmatched().to_pylist() == [1]
