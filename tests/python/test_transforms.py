"""Partition transforms from Python (spec: "Partition Transforms", Appendix B).

Expected values come from an independent pure-Python Murmur3 (written from
Appendix B's definition and checked against its test values) and from Python's
own integer, string and datetime arithmetic.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Context, Decimal
from typing import Any

import pyarrow as pa
import pytest
from frazil import errors
from frazil.transforms import (
    Transform,
    apply,
    bucket,
    day,
    hour,
    identity,
    month,
    truncate,
    void,
    year,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# ---------------------------------------------------------------- reference

_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k: int) -> int:
    k = (k * 0xCC9E2D51) & _MASK
    k = _rotl(k, 15)
    return (k * 0x1B873593) & _MASK


def murmur3_32(data: bytes) -> int:
    """Murmur3 x86 32-bit with seed 0 (spec: Appendix B), as a signed int."""
    h = 0
    blocks = len(data) // 4
    for i in range(blocks):
        h ^= _mix_k1(int.from_bytes(data[4 * i : 4 * i + 4], "little"))
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = data[4 * blocks :]
    if tail:
        h ^= _mix_k1(int.from_bytes(tail, "little"))
    h ^= len(data) & _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def long_bytes(value: int) -> bytes:
    """hashLong's input: the 8 little-endian bytes of a long."""
    return value.to_bytes(8, "little", signed=True)


def decimal_bytes(unscaled: int) -> bytes:
    """The minimum-length two's-complement big-endian bytes (Appendix B note 2)."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def bucket_of(data: bytes, n: int) -> int:
    """``bucket[N]`` of a value whose hash input is ``data``."""
    return (murmur3_32(data) & 0x7FFFFFFF) % n


# Decimal arithmetic without rounding: the default context keeps 28 digits.
EXACT = Context(prec=100)
EPOCH = datetime(1970, 1, 1)
EPOCH_DATE = date(1970, 1, 1)
UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
BUCKET_COUNTS = [1, 2, 16, 1000, 2**31 - 1]


def micros(dt: datetime) -> int:
    """Microseconds from the epoch of a naive (UTC) or aware datetime."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
    return (dt - EPOCH) // timedelta(microseconds=1)


def test_reference_murmur3_matches_appendix_b() -> None:
    # Guards the reference itself, so the property tests below mean something.
    assert murmur3_32(long_bytes(34)) == 2017239379
    assert murmur3_32(decimal_bytes(1420)) == -500754589
    assert murmur3_32(long_bytes(17486)) == -653330422
    assert murmur3_32(long_bytes(81_068_000_000)) == -662762989
    assert murmur3_32(long_bytes(1_510_871_468_000_000)) == -2047944441
    assert murmur3_32(b"iceberg") == 1210000089
    assert murmur3_32(UUID.bytes) == 1488055340
    assert murmur3_32(bytes([0, 1, 2, 3])) == -188683207
    assert decimal_bytes(-128) == b"\x80"
    assert decimal_bytes(-1) == b"\xff"
    assert decimal_bytes(128) == b"\x00\x80"
    assert decimal_bytes(0) == b"\x00"


# ---------------------------------------------------------------- bucket


@pytest.mark.parametrize("n", BUCKET_COUNTS)
def test_bucket_appendix_b_values(n: int) -> None:
    def expect(h: int) -> list[int]:
        return [(h & 0x7FFFFFFF) % n]

    cases: list[tuple[pa.Array, int]] = [
        (pa.array([34], pa.int8()), 2017239379),
        (pa.array([34], pa.int16()), 2017239379),
        (pa.array([34], pa.int32()), 2017239379),
        (pa.array([34], pa.int64()), 2017239379),
        (pa.array([Decimal("14.20")], pa.decimal128(4, 2)), -500754589),
        (pa.array([date(2017, 11, 16)], pa.date32()), -653330422),
        (pa.array([time(22, 31, 8)], pa.time64("us")), -662762989),
        (pa.array([datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("us")), -2047944441),
        (pa.array([datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("ms")), -2047944441),
        (pa.array([datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("s")), -2047944441),
        (
            pa.array(
                [datetime(2017, 11, 16, 14, 31, 8, tzinfo=timezone(timedelta(hours=-8)))],
                pa.timestamp("us", tz="-08:00"),
            ),
            -2047944441,
        ),
        (pa.array(["iceberg"], pa.string()), 1210000089),
        (pa.array(["iceberg"], pa.large_string()), 1210000089),
        (pa.array(["iceberg"], pa.string_view()), 1210000089),
        (pa.array([UUID.bytes], pa.binary(16)), 1488055340),
        (pa.array([bytes([0, 1, 2, 3])], pa.binary()), -188683207),
        (pa.array([bytes([0, 1, 2, 3])], pa.large_binary()), -188683207),
        (pa.array([bytes([0, 1, 2, 3])], pa.binary_view()), -188683207),
        (pa.array([bytes([0, 1, 2, 3])], pa.binary(4)), -188683207),
    ]
    for values, h in cases:
        result = bucket(values, n)
        assert result.type == pa.int32(), values.type
        assert result.to_pylist() == expect(h), values.type


int32s = st.integers(min_value=-(2**31), max_value=2**31 - 1)
int64s = st.integers(min_value=-(2**63), max_value=2**63 - 1)
bucket_counts = st.integers(min_value=1, max_value=2**31 - 1)


@given(st.lists(st.one_of(st.none(), int32s), max_size=50), bucket_counts)
def test_bucket_int_equals_long_and_reference(values: list[int | None], n: int) -> None:
    as_int = bucket(pa.array(values, pa.int32()), n)
    as_long = bucket(pa.array(values, pa.int64()), n)
    as_date = bucket(pa.array(values, pa.int32()).cast(pa.date32()), n)
    expected = [None if v is None else bucket_of(long_bytes(v), n) for v in values]
    assert as_int.to_pylist() == expected
    assert as_long.to_pylist() == expected
    assert as_date.to_pylist() == expected


@given(st.lists(st.one_of(st.none(), int64s), max_size=50), bucket_counts)
def test_bucket_long_reference(values: list[int | None], n: int) -> None:
    expected = [None if v is None else bucket_of(long_bytes(v), n) for v in values]
    assert bucket(pa.array(values, pa.int64()), n).to_pylist() == expected


@given(st.lists(st.one_of(st.none(), st.text()), max_size=30), bucket_counts)
def test_bucket_strings_reference(values: list[str | None], n: int) -> None:
    expected = [None if v is None else bucket_of(v.encode(), n) for v in values]
    for string_type in (pa.string(), pa.large_string(), pa.string_view()):
        assert bucket(pa.array(values, string_type), n).to_pylist() == expected, string_type


@given(st.lists(st.one_of(st.none(), st.binary(max_size=40)), max_size=30), bucket_counts)
def test_bucket_binary_reference(values: list[bytes | None], n: int) -> None:
    expected = [None if v is None else bucket_of(v, n) for v in values]
    for binary_type in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert bucket(pa.array(values, binary_type), n).to_pylist() == expected, binary_type


@given(
    st.lists(st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1), max_size=30),
    st.integers(min_value=0, max_value=38),
    bucket_counts,
)
def test_bucket_decimals_use_minimum_length_bytes(unscaled: list[int], scale: int, n: int) -> None:
    values = [Decimal(u).scaleb(-scale, EXACT) for u in unscaled]
    array = pa.array(values, pa.decimal128(38, scale))
    expected = [bucket_of(decimal_bytes(u), n) for u in unscaled]
    assert bucket(array, n).to_pylist() == expected


def test_bucket_decimal_edge_bytes() -> None:
    # -128 is the single byte 0x80, not two bytes and not sixteen.
    for unscaled in [-129, -128, -127, -1, 0, 1, 127, 128, 255, 256, -(10**18), 10**37]:
        array = pa.array([Decimal(unscaled)], pa.decimal128(38, 0))
        assert bucket(array, 2**31 - 1).to_pylist() == [
            bucket_of(decimal_bytes(unscaled), 2**31 - 1)
        ], unscaled
    assert decimal_bytes(-128) != (-128).to_bytes(2, "big", signed=True)


@given(st.lists(st.one_of(st.none(), st.uuids()), max_size=30), bucket_counts)
def test_bucket_uuids(values: list[uuid.UUID | None], n: int) -> None:
    raw = [None if v is None else v.bytes for v in values]
    expected = [None if v is None else bucket_of(v.bytes, n) for v in values]
    assert bucket(pa.array(raw, pa.binary(16)), n).to_pylist() == expected
    extension = pa.array(raw, pa.uuid())
    assert extension.type == pa.uuid()
    assert bucket(extension, n).to_pylist() == expected


def test_uuid_extension_type_survives_identity() -> None:
    extension = pa.array([UUID.bytes, None], pa.uuid())
    assert identity(extension).type == pa.uuid()
    assert identity(extension).equals(extension)
    assert void(extension).type == pa.uuid()


@given(
    st.lists(st.one_of(st.none(), st.datetimes(min_value=datetime(1, 1, 1))), max_size=30),
    bucket_counts,
)
def test_bucket_timestamps_reference(values: list[datetime | None], n: int) -> None:
    expected = [None if v is None else bucket_of(long_bytes(micros(v)), n) for v in values]
    assert bucket(pa.array(values, pa.timestamp("us")), n).to_pylist() == expected
    assert bucket(pa.array(values, pa.timestamp("us", tz="UTC")), n).to_pylist() == expected


@given(st.lists(st.one_of(st.none(), st.times()), max_size=30), bucket_counts)
def test_bucket_times_reference(values: list[time | None], n: int) -> None:
    def us(t: time) -> int:
        return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond

    expected = [None if v is None else bucket_of(long_bytes(us(v)), n) for v in values]
    assert bucket(pa.array(values, pa.time64("us")), n).to_pylist() == expected


# ---------------------------------------------------------------- truncate


def test_truncate_table_examples() -> None:
    assert truncate(pa.array([1, -1], pa.int32()), 10).to_pylist() == [0, -10]
    assert truncate(pa.array([1, -1], pa.int64()), 10).to_pylist() == [0, -10]
    decimals = truncate(pa.array([Decimal("10.65")], pa.decimal128(4, 2)), 50)
    assert decimals.type == pa.decimal128(4, 2)
    assert decimals.to_pylist() == [Decimal("10.50")]
    assert truncate(pa.array(["iceberg"]), 3).to_pylist() == ["ice"]


def floor_truncate(v: int, w: int) -> int:
    # Python's % already takes the sign of the divisor.
    return v - v % w


@given(st.lists(st.one_of(st.none(), int32s), max_size=50), st.integers(1, 2**31 - 1))
def test_truncate_ints(values: list[int | None], w: int) -> None:
    expected = [None if v is None else floor_truncate(v, w) for v in values]
    for int_type in (pa.int32(), pa.int64()):
        array = pa.array(values, int_type)
        if int_type == pa.int32() and any(e is not None and e < -(2**31) for e in expected):
            with pytest.raises(errors.InvalidValueError):
                truncate(array, w)
            continue
        result = truncate(array, w)
        assert result.type == int_type
        assert result.to_pylist() == expected


@given(st.lists(st.one_of(st.none(), int64s), max_size=50), st.integers(1, 2**31 - 1))
def test_truncate_longs(values: list[int | None], w: int) -> None:
    expected = [None if v is None else floor_truncate(v, w) for v in values]
    if any(e is not None and e < -(2**63) for e in expected):
        with pytest.raises(errors.InvalidValueError, match="truncate"):
            truncate(pa.array(values, pa.int64()), w)
    else:
        assert truncate(pa.array(values, pa.int64()), w).to_pylist() == expected


def test_truncate_narrow_ints_become_int32() -> None:
    result = truncate(pa.array([-128, -1, 127], pa.int8()), 10)
    assert result.type == pa.int32()
    assert result.to_pylist() == [-130, -10, 120]
    assert truncate(pa.array([-32768], pa.int16()), 100).to_pylist() == [-32800]


def test_truncate_refuses_results_below_the_minimum() -> None:
    with pytest.raises(errors.InvalidValueError, match="-2147483648"):
        truncate(pa.array([-(2**31)], pa.int32()), 10)
    with pytest.raises(errors.InvalidValueError, match="-9223372036854775808"):
        truncate(pa.array([-(2**63)], pa.int64()), 7)
    with pytest.raises(errors.InvalidValueError, match="precision"):
        truncate(pa.array([Decimal("-99.99")], pa.decimal128(4, 2)), 10)


@given(
    st.lists(st.one_of(st.none(), st.integers(-(10**17), 10**17)), max_size=30),
    st.integers(0, 6),
    st.integers(1, 10**6),
)
def test_truncate_decimals(unscaled: list[int | None], scale: int, w: int) -> None:
    values = [None if u is None else Decimal(u).scaleb(-scale, EXACT) for u in unscaled]
    result = truncate(pa.array(values, pa.decimal128(38, scale)), w)
    expected = [
        None if u is None else Decimal(floor_truncate(u, w)).scaleb(-scale, EXACT) for u in unscaled
    ]
    assert result.type == pa.decimal128(38, scale)
    assert result.to_pylist() == expected


@given(st.lists(st.one_of(st.none(), st.text()), max_size=30), st.integers(1, 20))
def test_truncate_strings_by_code_points(values: list[str | None], w: int) -> None:
    expected = [None if v is None else v[:w] for v in values]
    for string_type in (pa.string(), pa.large_string(), pa.string_view()):
        result = truncate(pa.array(values, string_type), w)
        assert result.type == string_type
        result.validate(full=True)
        assert result.to_pylist() == expected
        for v, r in zip(values, result.to_pylist(), strict=True):
            if v is not None:
                assert r is not None
                assert len(r) == min(w, len(v)) and v.startswith(r)


def test_truncate_counts_code_points_not_bytes_or_utf16_units() -> None:
    values = ["\U0001d11e\U0001d11eab", "😀😀😀", "ñandú", "abc"]
    assert truncate(pa.array(values), 2).to_pylist() == ["\U0001d11e\U0001d11e", "😀😀", "ña", "ab"]


@given(st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=30), st.integers(1, 20))
def test_truncate_binary_by_bytes(values: list[bytes | None], w: int) -> None:
    expected = [None if v is None else v[:w] for v in values]
    for binary_type in (pa.binary(), pa.large_binary(), pa.binary_view()):
        result = truncate(pa.array(values, binary_type), w)
        assert result.type == binary_type
        assert result.to_pylist() == expected


# ---------------------------------------------------------------- temporal


def months_of(d: date) -> int:
    return (d.year - 1970) * 12 + d.month - 1


@given(st.lists(st.one_of(st.none(), st.dates()), max_size=40))
def test_temporal_dates(values: list[date | None]) -> None:
    array = pa.array(values, pa.date32())
    assert year(array).to_pylist() == [None if d is None else d.year - 1970 for d in values]
    assert month(array).to_pylist() == [None if d is None else months_of(d) for d in values]
    assert day(array).to_pylist() == [None if d is None else (d - EPOCH_DATE).days for d in values]


def expected_temporal(values: list[datetime | None]) -> dict[str, list[int | None]]:
    utc = [
        None if v is None else (v.astimezone(timezone.utc).replace(tzinfo=None) if v.tzinfo else v)
        for v in values
    ]
    return {
        "year": [None if v is None else v.year - 1970 for v in utc],
        "month": [None if v is None else months_of(v.date()) for v in utc],
        "day": [None if v is None else micros(v) // 86_400_000_000 for v in utc],
        "hour": [None if v is None else micros(v) // 3_600_000_000 for v in utc],
    }


@given(st.lists(st.one_of(st.none(), st.datetimes(min_value=datetime(1, 1, 1))), max_size=40))
def test_temporal_timestamps(values: list[datetime | None]) -> None:
    expected = expected_temporal(values)
    for unit in ("us", "ns", "ms", "s"):
        if unit == "ns":
            in_range = [
                v for v in values if v is None or datetime(1678, 1, 1) < v < datetime(2262, 1, 1)
            ]
            exp = expected_temporal(in_range)
            array = pa.array(in_range, pa.timestamp(unit))
        elif unit in ("ms", "s"):
            # Whole seconds: the coarser units cannot hold the microseconds.
            trimmed = [None if v is None else v.replace(microsecond=0) for v in values]
            exp = expected_temporal(trimmed)
            array = pa.array(trimmed, pa.timestamp(unit))
        else:
            exp, array = expected, pa.array(values, pa.timestamp(unit))
        assert year(array).to_pylist() == exp["year"], unit
        assert month(array).to_pylist() == exp["month"], unit
        assert day(array).to_pylist() == exp["day"], unit
        assert hour(array).to_pylist() == exp["hour"], unit


zones = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.datetimes(
                min_value=datetime(1000, 1, 1), max_value=datetime(9000, 1, 1), timezones=zones
            ),
        ),
        max_size=40,
    ),
    st.sampled_from(["UTC", "+05:30", "-08:00", "America/Los_Angeles"]),
)
def test_temporal_timestamptz_uses_utc(values: list[datetime | None], zone: str) -> None:
    # The zone of the column never shifts the result: it is the stored UTC value.
    array = pa.array(values, pa.timestamp("us", tz=zone))
    expected = expected_temporal(values)
    assert year(array).to_pylist() == expected["year"]
    assert month(array).to_pylist() == expected["month"]
    assert day(array).to_pylist() == expected["day"]
    assert hour(array).to_pylist() == expected["hour"]


def test_floor_semantics_one_microsecond_before_1970() -> None:
    before = pa.array([datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("us"))
    for transform in (year, month, day, hour):
        assert transform(before).to_pylist() == [-1]
    assert year(pa.array([date(1969, 12, 31)])).to_pylist() == [-1]
    assert month(pa.array([date(1969, 12, 31)])).to_pylist() == [-1]
    assert day(pa.array([date(1969, 12, 31)])).to_pylist() == [-1]


# ------------------------------------------- identity, void, shapes, threads


def test_identity_and_void() -> None:
    array = pa.array([1.5, None, float("nan")])
    same = identity(array)
    assert same.to_pylist()[:2] == [1.5, None]
    assert same.is_nan().to_pylist() == [False, None, True]
    # Zero-copy: the very same values buffer comes back.
    assert same.buffers()[1].address == array.buffers()[1].address
    nulls = void(array)
    assert nulls.type == pa.float64()
    assert nulls.null_count == 3


def test_nulls_map_to_nulls() -> None:
    array = pa.array([None, 5, None], pa.int64())
    for name in ("bucket[4]", "truncate[3]", "identity"):
        assert apply(name, array).is_null().to_pylist() == [True, False, True], name
    all_null = pa.nulls(4, pa.timestamp("us"))
    for transform in (year, month, day, hour):
        assert transform(all_null).to_pylist() == [None] * 4


def test_empty_arrays() -> None:
    assert bucket(pa.array([], pa.string()), 4).to_pylist() == []
    assert truncate(pa.array([], pa.large_string()), 4).type == pa.large_string()
    assert hour(pa.array([], pa.timestamp("us"))).type == pa.int32()


def test_sliced_arrays() -> None:
    values = [f"välue{i}" if i % 3 else None for i in range(50)]
    for string_type in (pa.string(), pa.large_string(), pa.string_view()):
        array = pa.array(values, string_type)
        for transform in ("bucket[7]", "truncate[3]"):
            whole = apply(transform, array)
            assert apply(transform, array.slice(5, 30)).equals(whole.slice(5, 30)), transform
    ints = pa.array([None if i % 4 == 0 else i * 10**12 for i in range(50)], pa.timestamp("us"))
    for transform in ("bucket[7]", "year", "month", "day", "hour"):
        whole = apply(transform, ints)
        assert apply(transform, ints.slice(7, 33)).equals(whole.slice(7, 33)), transform


def test_chunked_arrays_stay_chunked() -> None:
    chunked = pa.chunked_array([[1, 2, None], [], [4]], pa.int64())
    result = bucket(chunked, 16)
    assert isinstance(result, pa.ChunkedArray)
    assert result.num_chunks == 3
    assert result.to_pylist() == [
        bucket_of(long_bytes(v), 16) if v else None for v in [1, 2, None, 4]
    ]
    empty = truncate(pa.chunked_array([], pa.string()), 3)
    assert isinstance(empty, pa.ChunkedArray)
    assert empty.type == pa.string() and len(empty) == 0
    assert day(pa.chunked_array([], pa.date32())).type == pa.int32()


class CapsuleArray:
    """Implements only the Arrow PyCapsule array protocol."""

    def __init__(self, array: pa.Array) -> None:
        self._array = array

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._array.__arrow_c_array__(requested_schema)


class CapsuleStream:
    """Implements only the Arrow PyCapsule stream protocol."""

    def __init__(self, chunked: pa.ChunkedArray) -> None:
        self._chunked = chunked

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._chunked.__arrow_c_stream__(requested_schema)


def test_pycapsule_inputs() -> None:
    array = pa.array(["iceberg", None])
    result = bucket(CapsuleArray(array), 16)
    assert isinstance(result, pa.Array)
    assert result.to_pylist() == [bucket_of(b"iceberg", 16), None]
    stream = truncate(CapsuleStream(pa.chunked_array([array, array])), 3)
    assert isinstance(stream, pa.ChunkedArray)
    assert stream.to_pylist() == ["ice", None, "ice", None]


def test_threads_give_the_single_threaded_result() -> None:
    n = 300_001
    longs = pa.array(
        [None if i % 13 == 0 else i * 7_777_777 - 10**12 for i in range(n)], pa.int64()
    )
    strings = pa.array([None if i % 7 == 0 else f"s{i}é" for i in range(n)], pa.large_string())
    cases = [
        ("bucket[100]", longs),
        ("truncate[1000]", longs),
        ("bucket[9]", strings),
        ("truncate[3]", strings),
        ("day", longs.cast(pa.timestamp("us"))),
        ("month", longs.cast(pa.timestamp("us", tz="UTC"))),
        ("year", longs.cast(pa.timestamp("us"))),
        ("hour", longs.cast(pa.timestamp("ms"))),
        (
            "year",
            pa.array([None if i % 5 == 0 else i * 41 - 6_000_000 for i in range(n)], pa.date32()),
        ),
        ("bucket[16]", pa.array([i ^ 0x5A5A for i in range(n)], pa.int32())),
        ("truncate[10]", pa.array([i * 7 - 9_000 for i in range(n)], pa.int32())),
        ("truncate[50]", longs.cast(pa.decimal128(24, 2))),
    ]
    for transform, values in cases:
        single = apply(transform, values, threads=1)
        for threads in (0, 2):
            assert apply(transform, values, threads=threads).equals(single), (transform, threads)
        sliced = values.slice(11, n - 20)
        assert apply(transform, sliced, threads=2).equals(single.slice(11, n - 20)), transform


# ---------------------------------------------------------------- errors


def test_bad_parameters() -> None:
    values = pa.array([1, 2], pa.int64())
    for n in (0, -1):
        with pytest.raises(errors.InvalidTransformError):
            bucket(values, n)
        with pytest.raises(errors.InvalidTransformError):
            truncate(values, n)
    for text in ("bucket[0]", "truncate[-3]", "bucket", "zorder"):
        with pytest.raises(errors.InvalidTransformError):
            apply(text, values)
    with pytest.raises(errors.FrazilTypeError):
        bucket(values, 1.5)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidTransformError):
        bucket(values, 4, threads=-1)


@pytest.mark.parametrize(
    ("transform", "values"),
    [
        ("hour", pa.array([date(2020, 1, 1)], pa.date32())),
        ("bucket[4]", pa.array([1.0], pa.float64())),
        ("bucket[4]", pa.array([1.0], pa.float32())),
        ("bucket[4]", pa.array([True])),
        # Iceberg's time is in microseconds: nanoseconds would lose digits.
        ("bucket[4]", pa.array([1], pa.time64("ns"))),
        ("truncate[4]", pa.array([date(2020, 1, 1)], pa.date32())),
        ("truncate[4]", pa.array([1.0], pa.float64())),
        ("year", pa.array([1], pa.int64())),
        ("day", pa.array(["2020-01-01"])),
        ("bucket[4]", pa.array([[1]], pa.list_(pa.int64()))),
    ],
)
def test_transform_not_defined_for_type(transform: str, values: pa.Array) -> None:
    with pytest.raises(errors.UnsupportedTransformError) as raised:
        apply(transform, values)
    assert type(raised.value) is errors.UnsupportedTransformError
    assert "Arrow type" in str(raised.value)


def test_bucket_of_nanosecond_timestamps_hashes_floored_micros() -> None:
    # v3 timestamp_ns / timestamptz_ns: Java buckets floorDiv(nanos, 1000) as a long.
    nanos = [0, 1, 999, 1000, -1, -999, -1000, -1001, 2**63 - 1, -(2**63), None]
    for tz in (None, "UTC", "+05:30"):
        array = pa.array(nanos, pa.int64()).cast(pa.timestamp("ns", tz))
        micros = pa.array([None if v is None else v // 1000 for v in nanos], pa.int64())
        assert bucket(array, 1000).to_pylist() == bucket(micros, 1000).to_pylist()


def test_out_of_range_values() -> None:
    with pytest.raises(errors.InvalidValueError) as raised:
        hour(pa.array([2**63 - 1], pa.timestamp("us")))
    assert type(raised.value) is errors.InvalidValueError
    with pytest.raises(errors.InvalidValueError):
        bucket(pa.array([2**62], pa.timestamp("s")), 4)


def test_wrong_python_objects() -> None:
    for bad in ([1, 2, 3], "abc", 42, None):
        with pytest.raises(errors.FrazilTypeError) as raised:
            bucket(bad, 4)
        assert type(raised.value) is errors.FrazilTypeError
    with pytest.raises(errors.FrazilTypeError):
        apply(16, pa.array([1]))  # type: ignore[arg-type]


def test_transform_objects_apply() -> None:
    t = Transform("bucket[16]")
    assert apply(t, pa.array([34])).to_pylist() == [bucket_of(long_bytes(34), 16)]


@settings(max_examples=25)
@given(st.integers(1, 2**31 - 1))
def test_bucket_results_are_in_range(n: int) -> None:
    result = bucket(pa.array(range(-500, 500), pa.int64()), n).to_pylist()
    assert all(r is not None and 0 <= r < n for r in result)


def test_narrow_decimal_types() -> None:
    values = [Decimal("10.65"), None, Decimal("-1.28"), Decimal("0.00")]
    wide = pa.array(values, pa.decimal128(9, 2))
    for narrow_type in (pa.decimal32(9, 2), pa.decimal64(9, 2)):
        narrow = pa.array(values, narrow_type)
        assert bucket(narrow, 1000).equals(bucket(wide, 1000)), narrow_type
        truncated = truncate(narrow, 50)
        assert truncated.type == narrow_type
        assert truncated.to_pylist() == [Decimal("10.50"), None, Decimal("-1.50"), Decimal("0.00")]
