"""The Rust core's per-file statistics the writer uses: byte-string bounds
(``bytes_min_max``, unsigned byte order as Iceberg's for strings and binary) and distinct
counts (``distinct_count``, behind the dictionary decision), against pyarrow."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from frazil import _native
from frazil.errors import FrazilError
from hypothesis import given, settings
from hypothesis import strategies as st

_BYTES_TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=30),
    st.sampled_from(_BYTES_TYPES),
    st.integers(0, 30),
)
def test_bytes_min_max_is_the_unsigned_byte_order(
    values: list[str | None], t: pa.DataType, cut: int
) -> None:
    raw = [None if v is None else v.encode() for v in values]
    typed = [
        v if pa.types.is_string(t) or pa.types.is_large_string(t) else b
        for v, b in zip(values, raw, strict=True)
    ]
    array = pa.array(typed, t)
    present = [b for b in raw if b is not None]
    want = (min(present), max(present)) if present else None
    assert _native.bytes_min_max(array) == want
    # Chunked and sliced alike.
    cut = min(cut, len(array))
    chunked = pa.chunked_array([array.slice(0, cut), array.slice(cut)], t)
    assert _native.bytes_min_max(chunked) == want
    assert _native.bytes_min_max(array.slice(cut)) == (
        (min(p), max(p)) if (p := [b for b in raw[cut:] if b is not None]) else None
    )


def test_bytes_min_max_refuses_other_types() -> None:
    with pytest.raises(FrazilError, match="not a string or binary"):
        _native.bytes_min_max(pa.array([1, 2]))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=40),
    st.sampled_from(
        [pa.int32(), pa.int64(), pa.date32(), pa.decimal128(12, 2), pa.string(), pa.binary(2)]
    ),
    st.integers(0, 40),
)
def test_distinct_count_equals_pyarrow(values: list[int | None], t: pa.DataType, cut: int) -> None:
    if pa.types.is_string(t):
        array = pa.array([None if v is None else str(v) for v in values], t)
    elif pa.types.is_fixed_size_binary(t):
        array = pa.array([None if v is None else f"{v:+d}".encode() for v in values], t)
    else:
        array = pa.array(values, pa.int32()).cast(t)
    sliced = array.slice(min(cut, len(array)))
    for a in (array, sliced):
        assert _native.distinct_count(a) == pc.count_distinct(a).as_py()
    assert _native.distinct_count(pa.array([True, False])) is None
