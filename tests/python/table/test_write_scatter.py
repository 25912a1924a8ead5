"""The Rust scatter the writer groups rows by partition with (``frazil._native.partition_rows``,
a counting sort): the same rows as pyarrow's ``take`` by the stable sort of the partition
codes, for every column type the writer handles (nulls, empty groups, sliced and chunked
input, big strings, types that fall back to ``take``), and a FrazilError for bad input."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from frazil import _native
from frazil.errors import FrazilError
from hypothesis import given, settings
from hypothesis import strategies as st
from test_write_gather import _PRIMITIVES, _nullable, _typed


def _codes(keys: list[pa.Array]) -> list[tuple[Any, ...]]:
    """The reference order of the core's groups: per field the value, null last."""
    rows = len(keys[0]) if keys else 0
    columns = [k.to_pylist() for k in keys]
    return [tuple((1, 0) if c[i] is None else (0, c[i]) for c in columns) for i in range(rows)]


def _expected(table: pa.Table, keys: list[pa.Array]) -> tuple[pa.Table, list[int], list[int]]:
    codes = _codes(keys)
    order = sorted(range(table.num_rows), key=lambda i: codes[i])  # stable
    lengths: list[int] = []
    firsts: list[int] = []
    for position, row in enumerate(order):
        if position == 0 or codes[row] != codes[order[position - 1]]:
            lengths.append(0)
            firsts.append(row)
        lengths[-1] += 1
    return table.take(pa.array(order, pa.int64())), lengths, firsts


@st.composite
def _cases(draw: st.DrawFn) -> tuple[pa.Table, list[pa.Array]]:
    primitive = st.sampled_from(_PRIMITIVES).map(lambda tv: (tv[0], _nullable(tv[1])))
    columns = draw(st.lists(st.one_of(_typed(), primitive), min_size=1, max_size=4))
    rows = draw(st.integers(0, 40))
    arrays = [pa.array(draw(st.lists(v, min_size=rows, max_size=rows)), t) for t, v in columns]
    # Sliced input: a leading row dropped from every column.
    table = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))]).slice(1)
    rows = table.num_rows
    cuts = sorted(draw(st.lists(st.integers(0, rows), max_size=3)))
    pieces = [table.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, rows], strict=True)]
    table = pa.concat_tables(pieces)
    key_type = st.sampled_from([pa.int32(), pa.int64(), pa.date32(), pa.uint8()])
    key_types = draw(st.lists(key_type, min_size=1, max_size=3))
    keys = []
    for t in key_types:
        values = draw(
            st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=rows, max_size=rows)
        )
        keys.append(pa.array(values, pa.int32()).cast(t))
    return table, keys


@settings(max_examples=200, deadline=None)
@given(_cases(), st.sampled_from([1, 2]))
def test_scatter_equals_take_by_sorted_codes(
    case: tuple[pa.Table, list[pa.Array]], threads: int
) -> None:
    table, keys = case
    grouped, lengths, firsts = _native.partition_rows(table, keys, threads=threads)
    want, want_lengths, want_firsts = _expected(table, keys)
    assert (lengths, firsts) == (want_lengths, want_firsts)
    got = table if grouped is None else grouped
    assert got.schema == table.schema
    assert got.num_rows == table.num_rows
    assert got.combine_chunks().equals(want.combine_chunks()) or repr(got.to_pylist()) == repr(
        want.to_pylist()
    )


def test_wide_keys_ranked_and_strings_big() -> None:
    big = "x" * 200_000
    table = pa.table(
        {
            "s": pa.array([big, None, "é", big + "y", ""] * 4, pa.string()),
            "b": pa.array([b"\x00\xff", None, b"", b"z", b"q"] * 4, pa.large_binary()),
            "d": pa.array([1, 2, None, 4, 5] * 4, pa.decimal128(30, 3)),
            "f": pa.array([True, None, False, True, False] * 4),
        }
    )
    ids = pa.array([2**62, -(2**62), None, 0, 7] * 4, pa.int64())
    buckets = pa.array(list(range(20)), pa.int32())
    grouped, lengths, firsts = _native.partition_rows(table, [ids, buckets])
    want, want_lengths, want_firsts = _expected(table, [ids, buckets])
    assert (lengths, firsts) == (want_lengths, want_firsts)
    assert grouped is not None
    assert grouped.equals(want)


def test_one_group_returns_no_copy() -> None:
    table = pa.table({"x": [1, 2, 3]})
    grouped, lengths, firsts = _native.partition_rows(table, [pa.array([5, 5, 5])])
    assert (grouped, lengths, firsts) == (None, [3], [0])
    assert _native.partition_rows(table, []) == (None, [3], [0])


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([pa.array([1, 2])], "2 values for 3 rows"),
        ([pa.array(["a", "b", "c"])], "not an integer"),
        ([pa.array([1.0, 2.0, 3.0])], "key 0"),
    ],
)
def test_bad_keys_raise_a_frazil_error(keys: list[Any], message: str) -> None:
    table = pa.table({"n": [1, 2, 3]})
    with pytest.raises(FrazilError, match=message):
        _native.partition_rows(table, keys)


def test_writer_partitions_match_take(tmp_path: Any) -> None:
    """The dictionary-coded path (string keys) through the Partitioner."""
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.table.write._partition import Partitioner

    schema = Schema.from_json(
        {
            "type": "struct",
            "schema-id": 0,
            "fields": [
                {"id": 1, "name": "s", "required": False, "type": "string"},
                {"id": 2, "name": "v", "required": False, "type": "long"},
            ],
        }
    )
    field = {"source-id": 1, "field-id": 1000, "name": "s", "transform": "identity"}
    spec = PartitionSpec.from_json({"spec-id": 0, "fields": [field]})
    rows = pa.table({"s": ["b", None, "a", "b", "a", None], "v": list(range(6))})
    parts, grouped = Partitioner(schema, spec).split(rows)
    seen = {}
    for part, (start, length) in parts:
        values = grouped.slice(start, length)
        assert pc.all(pc.equal(values.column("s"), part.values["s"])).as_py() in (True, None)
        seen[part.values["s"]] = values.column("v").to_pylist()
    assert seen == {"b": [0, 3], None: [1, 5], "a": [2, 4]}
