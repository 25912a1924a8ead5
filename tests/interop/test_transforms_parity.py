"""frazil.transforms against Apache Iceberg Java 1.10.2 (Transforms.fromString(t).bind(type)).

Thousands of seeded values per type, with the known pitfalls always included (see
generators.py). Each bulk test also checks both implementations against a plain
Python model of the spec ("Partition Transforms", "Truncate Transform Details"), so
that a disagreement says who is wrong. Where Java 1.10.2 contradicts the spec, frazil
must follow the spec; those places are tested separately below and say so.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import generators as gen
import pyarrow as pa
import pytest
from frazil import transforms
from frazil import values as fvalues
from frazil.errors import InvalidValueError
from java_referee import (
    JavaError,
    Referee,
    decimal_precision,
    decimal_scale,
    kind,
    make_decimal,
    unscaled,
)

pytestmark = pytest.mark.interop

N = 3000  # generated values per type (plus nulls), on top of the explicit edge cases
BUCKETS = [1, 2, 3, 16, 100, 1024, 2**31 - 1]
WIDTHS = [1, 2, 3, 10, 50, 100, 1000, 2**31 - 1]
LENGTHS = [1, 2, 3, 4, 5, 16]
TEMPORAL = ["year", "month", "day", "hour"]
TIMEZONES = [None, "UTC", "+05:30", "-08:00", "America/Los_Angeles", "Asia/Kathmandu"]
DECIMALS = [
    "decimal(1,0)",
    "decimal(2,1)",
    "decimal(9,2)",
    "decimal(9,9)",
    "decimal(18,6)",
    "decimal(19,0)",
    "decimal(28,4)",
    "decimal(38,0)",
    "decimal(38,10)",
    "decimal(38,38)",
]


def _seed(*parts: object) -> random.Random:
    return random.Random(repr(parts))


def _with_nulls(values: list[Any]) -> list[Any]:
    """The values with nulls at the start, middle and end (transforms map null to null)."""
    middle = len(values) // 2
    return [None, *values[:middle], None, *values[middle:], None]


# --- the spec, in plain Python -------------------------------------------------------


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01, proleptic Gregorian, any int."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month, day


def spec_temporal(transform: str, value: int, source: str) -> int:
    """year/month/day/hour as the spec defines them: whole units from the epoch, floored."""
    if source == "date":
        days = value
    else:
        days = value // gen.MICROS_PER_DAY
        if transform == "hour":
            return value // gen.MICROS_PER_HOUR
    if transform == "day":
        return days
    year, month, _ = civil_from_days(days)
    if transform == "year":
        return year - 1970
    return (year - 1970) * 12 + month - 1


def spec_truncate(value: Any, width: int, type_string: str) -> Any:
    """truncate[W] per the spec: v - (v mod W) with a non-negative remainder; strings to W
    code points, binary to W bytes."""
    family = kind(type_string)
    if family == "decimal":
        u = unscaled(value, decimal_scale(type_string))
        return make_decimal(u - u % width, decimal_scale(type_string))
    if family in ("string", "binary"):
        return value[:width]
    return value - value % width  # Python's % is already non-negative for W > 0


def java_truncate_int(value: int, width: int, bits: int) -> int:
    """Java's TruncateUtil.truncateInt/Long: the spec formula in wrapping int arithmetic."""

    def wrap(x: int) -> int:
        x &= (1 << bits) - 1
        return x - (1 << bits) if x >> (bits - 1) else x

    def rem(a: int, b: int) -> int:  # Java's %: the sign of the dividend
        r = abs(a) % b
        return -r if a < 0 else r

    return wrap(value - rem(wrap(rem(value, width) + width), width))


# --- Arrow arrays ---------------------------------------------------------------------


def arrow_array(type_string: str, values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    """Internal values (days, micros, ...) as an Arrow array of ``arrow_type``."""
    family = kind(type_string)
    if family == "date":
        return pa.array(values, pa.int32()).cast(arrow_type)
    if family in ("time", "timestamp", "timestamptz"):
        return pa.array(values, pa.int64()).cast(arrow_type)
    if family == "uuid":
        raw = [None if v is None else v.bytes for v in values]
        if isinstance(arrow_type, pa.ExtensionType):
            storage = pa.array(raw, arrow_type.storage_type)
            return pa.ExtensionArray.from_storage(arrow_type, storage)
        return pa.array(raw, arrow_type)
    return pa.array(values, arrow_type)


def _frazil(transform: str, array: pa.Array) -> pa.Array:
    result = transforms.apply(transform, array)
    assert isinstance(result, pa.Array)
    return result


# --- the cases ------------------------------------------------------------------------

# (iceberg type, arrow types, generator)
Generator = Callable[[random.Random], list[Any]]


def _decimal_arrow_types(type_string: str) -> list[pa.DataType]:
    """Every Arrow decimal width that holds the precision: 32 and 64-bit ones too."""
    precision, scale = decimal_precision(type_string), decimal_scale(type_string)
    out = [pa.decimal128(precision, scale)]
    if precision <= 18:
        out.append(pa.decimal64(precision, scale))
    if precision <= 9:
        out.append(pa.decimal32(precision, scale))
    return out


def _decimal_gen(type_string: str) -> Generator:
    precision, scale = decimal_precision(type_string), decimal_scale(type_string)
    return lambda r: gen.decimals(r, N, precision, scale)


SOURCES: list[tuple[str, list[pa.DataType], Generator]] = [
    ("int", [pa.int8()], lambda r: gen.ints(r, N, -(2**7), 2**7 - 1)),
    ("int", [pa.int16()], lambda r: gen.ints(r, N, -(2**15), 2**15 - 1)),
    ("int", [pa.int32()], lambda r: gen.ints(r, N)),
    ("long", [pa.int64()], lambda r: gen.ints(r, N, gen.LONG_MIN, gen.LONG_MAX)),
    *[(t, _decimal_arrow_types(t), _decimal_gen(t)) for t in DECIMALS],
    ("string", [pa.string(), pa.large_string()], lambda r: gen.strings(r, N)),
    ("binary", [pa.binary(), pa.large_binary()], lambda r: gen.binaries(r, N)),
    ("fixed[1]", [pa.binary(1)], lambda r: gen.binaries(r, N, 1)),
    ("fixed[16]", [pa.binary(16)], lambda r: gen.binaries(r, N, 16)),
    ("fixed[7]", [pa.binary(7)], lambda r: gen.binaries(r, N, 7)),
    ("uuid", [pa.binary(16), pa.uuid()], lambda r: gen.uuids(r, N)),
    ("date", [pa.date32()], lambda r: gen.days(r, N)),
    ("time", [pa.time64("us")], lambda r: gen.times(r, N)),
    ("timestamp", [pa.timestamp("us")], lambda r: gen.micros(r, N)),
    (
        "timestamptz",
        [pa.timestamp("us", tz) for tz in TIMEZONES if tz],
        lambda r: gen.micros(r, N),
    ),
]


def _transforms_for(type_string: str) -> list[str]:
    family = kind(type_string)
    out = [f"bucket[{n}]" for n in BUCKETS]
    if family in ("int", "long", "decimal"):
        out += [f"truncate[{w}]" for w in WIDTHS]
    if family in ("string", "binary"):
        out += [f"truncate[{w}]" for w in LENGTHS]
    if family in ("date", "timestamp", "timestamptz"):
        out += TEMPORAL if family != "date" else TEMPORAL[:3]
    return out


@functools.cache
def _source_values(type_string: str, arrow_type: str, make: Generator) -> tuple[Any, ...]:
    """The generated values of one source type (cached: many transforms share them)."""
    return tuple(make(_seed(type_string, arrow_type)))


CASES = [
    pytest.param(type_string, arrow_type, make, transform, id=f"{transform}-{arrow_type}")
    for type_string, arrow_types, make in SOURCES
    for arrow_type in arrow_types
    for transform in _transforms_for(type_string)
]


def _fits(type_string: str, value: Any) -> bool:
    """Whether a truncated value can be held by the source type (spec: result = source)."""
    family = kind(type_string)
    if family in ("int", "long"):
        bits = 32 if family == "int" else 64  # int8 and int16 results widen to int32
        return bool(-(2 ** (bits - 1)) <= value < 2 ** (bits - 1))
    if family == "decimal":
        return abs(unscaled(value, decimal_scale(type_string))) < 10 ** decimal_precision(
            type_string
        )
    return True


def _parity_values(
    type_string: str, arrow_type: pa.DataType, make: Generator, transform: str
) -> list[Any]:
    """The generated values, without those whose truncated value the source type cannot
    hold: frazil raises for those (tested below), so they cannot share an array."""
    values = list(_source_values(type_string, str(arrow_type), make))
    if transform.startswith("truncate"):
        width = int(transform[len("truncate[") : -1])
        values = [v for v in values if _fits(type_string, spec_truncate(v, width, type_string))]
    return values


@pytest.mark.parametrize(("type_string", "arrow_type", "make", "transform"), CASES)
def test_transform_matches_java(
    referee: Referee,
    type_string: str,
    arrow_type: pa.DataType,
    make: Generator,
    transform: str,
) -> None:
    values = _parity_values(type_string, arrow_type, make, transform)
    truncating = transform.startswith("truncate")
    width = int(transform[len("truncate[") : -1]) if truncating else 0
    values = _with_nulls(values)
    java_type = "int" if kind(type_string) == "int" else type_string
    expected_java = referee.transform(transform, java_type, values)
    got = _frazil(transform, arrow_array(type_string, values, arrow_type))

    # Result types: int32 for bucket and the temporal transforms, the source type for
    # truncate except that 8 and 16-bit ints widen to int32.
    if truncating:
        widened = arrow_type in (pa.int8(), pa.int16())
        assert got.type == (pa.int32() if widened else arrow_type)
    else:
        assert got.type == pa.int32()

    actual = got.to_pylist()
    mismatches = [
        (v, a, j) for v, a, j in zip(values, actual, expected_java, strict=True) if a != j
    ]
    # Java 1.10.2 wraps around in int arithmetic for truncate on int (see
    # test_truncate_int_where_java_overflows); everything else must match exactly.
    if truncating and kind(type_string) in ("int", "long"):
        bits = 64 if kind(type_string) == "long" else 32
        java_bugs = [m for m in mismatches if m[2] == java_truncate_int(m[0], width, bits) != m[1]]
        mismatches = [m for m in mismatches if m not in java_bugs]
    assert not mismatches, f"{len(mismatches)} values differ from Java, first 10: {mismatches[:10]}"
    assert not any(isinstance(j, JavaError) for j in expected_java)

    # Both against the spec's own definition, where there is a simple model of it.
    if truncating:
        spec = [None if v is None else spec_truncate(v, width, type_string) for v in values]
        assert actual == spec
        if kind(type_string) == "decimal":
            assert all(
                a is None or a.as_tuple().exponent == -decimal_scale(type_string) for a in actual
            )
    elif transform in TEMPORAL:
        spec = [None if v is None else spec_temporal(transform, v, type_string) for v in values]
        assert actual == spec
        # Java 1.10.2 floors negative values too (its DateTimeUtil adds one unit and
        # subtracts one for negatives): no discrepancy with the spec here.
        assert expected_java == spec


# --- where Java 1.10.2 and the spec part ways ----------------------------------------


@pytest.mark.parametrize(
    ("type_string", "arrow_type", "value", "width"),
    [
        ("int", pa.int32(), gen.INT_MIN, 10),
        ("int", pa.int32(), gen.INT_MIN + 5, 10),
        ("int", pa.int32(), gen.INT_MIN, 3),
        ("int", pa.int32(), gen.INT_MIN, 2**31 - 1),
        ("long", pa.int64(), gen.LONG_MIN, 10),
        ("long", pa.int64(), gen.LONG_MIN + 7, 10),
        ("long", pa.int64(), gen.LONG_MIN, 2**31 - 1),
    ],
)
def test_truncate_below_the_type_minimum_is_an_error(
    referee: Referee, type_string: str, arrow_type: pa.DataType, value: int, width: int
) -> None:
    # The spec's v - (v mod W) lies below the type's minimum here, so no value of the
    # source type is correct. Java 1.10.2 silently wraps around to a large positive
    # value (a contradiction of the spec); frazil raises InvalidValueError instead.
    bits = 64 if type_string == "long" else 32
    exact = spec_truncate(value, width, type_string)
    assert exact < -(2 ** (bits - 1))
    [java] = referee.transform(f"truncate[{width}]", type_string, [value])
    assert java == java_truncate_int(value, width, bits) == exact + 2**bits > 0
    with pytest.raises(InvalidValueError):
        transforms.truncate(pa.array([value], arrow_type), width)


@pytest.mark.parametrize(
    ("value", "width", "spec"),
    [
        (2**31 - 2, 2**31 - 1, 0),
        (2_000_000_000, 2_100_000_000, 0),
        (1_100_000_000, 1_100_000_001, 0),
        (5, 2**31 - 1, 0),
        (1, 2**31 - 1, 0),
    ],
)
def test_truncate_int_where_java_overflows(
    referee: Referee, value: int, width: int, spec: int
) -> None:
    # Java computes ((v % W) + W) % W in 32-bit ints; when 0 <= v < W and v + W is
    # above the int maximum, the sum overflows and Java returns a wrong, negative result.
    # The spec's formula on the true integers gives `spec`, which fits in an int: frazil
    # follows the spec.
    assert spec_truncate(value, width, "int") == spec
    [java] = referee.transform(f"truncate[{width}]", "int", [value])
    assert java == java_truncate_int(value, width, 32)
    if java == spec:
        pytest.fail(f"Java 1.10.2 no longer overflows for truncate[{width}]({value})")
    assert transforms.truncate(pa.array([value], pa.int32()), width).to_pylist() == [spec]


@pytest.mark.parametrize(
    ("type_string", "value", "width"),
    [
        ("decimal(38,0)", Decimal("-" + "9" * 38), 10),
        ("decimal(38,10)", Decimal("-" + "9" * 28 + "." + "9" * 10), 7),
        ("decimal(9,2)", Decimal("-9999999.99"), 10),
        ("decimal(1,0)", Decimal("-9"), 2),
        ("decimal(38,38)", Decimal("-0." + "9" * 38), 2),
    ],
)
def test_truncate_decimal_beyond_its_precision_is_an_error(
    referee: Referee, type_string: str, value: Decimal, width: int
) -> None:
    # The truncated value needs one digit more than the source type's precision.
    # Java 1.10.2 returns it anyway (BigDecimal has no precision limit), a value that
    # the decimal(P,S) partition field cannot hold; frazil raises InvalidValueError.
    scale = decimal_scale(type_string)
    exact = spec_truncate(value, width, type_string)
    assert abs(unscaled(exact, scale)) >= 10 ** decimal_precision(type_string)
    assert referee.transform(f"truncate[{width}]", type_string, [value]) == [exact]
    for arrow_type in _decimal_arrow_types(type_string):
        with pytest.raises(InvalidValueError):
            transforms.truncate(pa.array([value], arrow_type), width)


def test_temporal_transforms_of_far_dates(referee: Referee) -> None:
    # Dates far outside Python's years 1..9999, up to the int32 limits of date32:
    # both Java and frazil floor them exactly as the spec says.
    values = gen.days(_seed("far dates"), N, gen.INT_MIN, gen.INT_MAX)
    array = arrow_array("date", values, pa.date32())
    for transform in ("year", "month", "day"):
        spec = [spec_temporal(transform, v, "date") for v in values]
        assert referee.transform(transform, "date", values) == spec
        assert _frazil(transform, array).to_pylist() == spec


def test_temporal_transforms_of_far_timestamps(referee: Referee) -> None:
    # Timestamps over the whole int64 range. year, month and day always fit in an int.
    values = gen.micros(_seed("far timestamps"), N, gen.LONG_MIN, gen.LONG_MAX)
    values += [gen.LONG_MIN, gen.LONG_MAX, gen.LONG_MIN + 1, gen.LONG_MAX - 1]
    for arrow_type in (pa.timestamp("us"), pa.timestamp("us", "UTC")):
        type_string = "timestamp" if arrow_type.tz is None else "timestamptz"
        array = arrow_array(type_string, values, arrow_type)
        for transform in ("year", "month", "day"):
            spec = [spec_temporal(transform, v, type_string) for v in values]
            assert referee.transform(transform, type_string, values) == spec
            assert _frazil(transform, array).to_pylist() == spec


@pytest.mark.parametrize("value", [gen.LONG_MIN, gen.LONG_MAX, -(2**31 + 1) * gen.MICROS_PER_HOUR])
def test_hour_beyond_the_int_range_is_an_error(referee: Referee, value: int) -> None:
    # Hours from 1970 of these timestamps do not fit in the int result type. Java 1.10.2
    # casts the long to int and returns a wrapped-around hour; frazil raises.
    exact = spec_temporal("hour", value, "timestamp")
    assert not gen.INT_MIN <= exact <= gen.INT_MAX
    [java] = referee.transform("hour", "timestamp", [value])
    assert java != exact and java == (exact + 2**31) % 2**32 - 2**31
    with pytest.raises(InvalidValueError):
        transforms.hour(pa.array([value], pa.int64()).cast(pa.timestamp("us")))


def test_hours_at_the_int_limits(referee: Referee) -> None:
    # The last timestamps whose hour still fits in an int: Java and frazil agree.
    values = [
        gen.INT_MAX * gen.MICROS_PER_HOUR,
        (gen.INT_MAX + 1) * gen.MICROS_PER_HOUR - 1,
        gen.INT_MIN * gen.MICROS_PER_HOUR,
    ]
    spec = [spec_temporal("hour", v, "timestamp") for v in values]
    assert referee.transform("hour", "timestamp", values) == spec
    array = pa.array(values, pa.int64()).cast(pa.timestamp("us"))
    assert transforms.hour(array).to_pylist() == spec


# --- Arrow layouts: the same answers for sliced, chunked and all-null input -----------


@pytest.mark.parametrize(
    ("type_string", "arrow_type", "transform"),
    [
        ("int", pa.int32(), "bucket[16]"),
        ("long", pa.int64(), "truncate[10]"),
        ("decimal(38,10)", pa.decimal128(38, 10), "bucket[7]"),
        ("decimal(9,2)", pa.decimal128(9, 2), "truncate[50]"),
        ("string", pa.string(), "truncate[3]"),
        ("string", pa.large_string(), "bucket[16]"),
        ("binary", pa.binary(), "bucket[5]"),
        ("fixed[16]", pa.binary(16), "bucket[1024]"),
        ("timestamptz", pa.timestamp("us", "UTC"), "hour"),
        ("date", pa.date32(), "month"),
    ],
)
def test_sliced_and_chunked_input(
    referee: Referee, type_string: str, arrow_type: pa.DataType, transform: str
) -> None:
    make = dict((t, m) for t, _, m in SOURCES)[type_string]
    values = _with_nulls(_parity_values(type_string, arrow_type, make, transform)[:500])
    expected = referee.transform(transform, type_string, values)
    array = arrow_array(type_string, values, arrow_type)
    # A slice starts at a non-zero offset into the buffers (and the validity bitmap).
    for start, stop in ((1, len(values)), (3, 300), (13, 14), (0, 0)):
        got = _frazil(transform, array.slice(start, stop - start))
        assert got.to_pylist() == expected[start:stop]
    chunked = pa.chunked_array([array.slice(0, 17), array.slice(17, 0), array.slice(17)])
    result = transforms.apply(transform, chunked)
    assert isinstance(result, pa.ChunkedArray)
    assert result.to_pylist() == expected
    nulls = pa.nulls(5, arrow_type)
    assert _frazil(transform, nulls).to_pylist() == [None] * 5


@pytest.mark.parametrize(
    ("type_string", "arrow_type", "make"),
    [
        pytest.param(t, a, m, id=str(a))
        for t, arrow_types, m in SOURCES
        for a in arrow_types
        if a != pa.uuid()
    ],
)
def test_identity_and_void_match_java(
    referee: Referee, type_string: str, arrow_type: pa.DataType, make: Generator
) -> None:
    values = _with_nulls(list(_source_values(type_string, str(arrow_type), make))[:500])
    java_type = "int" if kind(type_string) == "int" else type_string
    array = arrow_array(type_string, values, arrow_type)
    identity = _frazil("identity", array)
    assert identity.type == arrow_type
    assert identity.equals(array)
    assert referee.transform("identity", java_type, values) == values
    void = _frazil("void", array)
    assert void.null_count == len(values)
    assert referee.transform("void", java_type, values) == [None] * len(values)


# --- v3 nanosecond timestamps ---------------------------------------------------------

NANOS_TYPES = [
    ("timestamp_ns", pa.timestamp("ns")),
    *[("timestamptz_ns", pa.timestamp("ns", tz)) for tz in TIMEZONES if tz],
]


def _nanos(rng: random.Random, n: int) -> list[int]:
    """Nanosecond timestamps: every offset within a microsecond around 0 (where a floor
    and a truncation differ), microsecond timestamps +-1 ns, and the whole long range."""
    values = [*range(-2001, 2002), gen.LONG_MIN, gen.LONG_MAX, gen.LONG_MIN + 1, gen.LONG_MAX - 1]
    # Microsecond timestamps whose nanoseconds fit a long (1677-09-21 to 2262-04-11).
    for micro in gen.micros(rng, n // 2, gen.LONG_MIN // 1000 + 1, gen.LONG_MAX // 1000 - 1):
        values += [micro * 1000 + d for d in (-1, 0, 1, 999)]
    assert all(gen.LONG_MIN <= v <= gen.LONG_MAX for v in values)
    while len(values) < 2 * n:
        values.append(rng.randint(gen.LONG_MIN, gen.LONG_MAX))
    return values


def _java_tokens(answer: str, expected: int) -> list[int | None]:
    """Java's newline-separated answers as ints (None for null); no value may fail."""
    tokens = answer.split("\n") if expected else []
    assert len(tokens) == expected
    failed = [t for t in tokens if t.startswith("!")]
    assert not failed, f"Java refused {len(failed)} values: {failed[:5]}"
    return [None if t == "~" else int(t) for t in tokens]


def _nanos_tokens(values: Sequence[int | None]) -> str:
    # The token of a timestamp_ns value is its nanoseconds (Referee.java's header).
    return "\n".join("~" if v is None else str(v) for v in values)


@pytest.mark.parametrize("n", BUCKETS)
def test_bucket_of_nanosecond_timestamps_matches_java(referee: Referee, n: int) -> None:
    # Java's BucketTimestampNano hashes floorDiv(nanos, 1000): the bucket of the
    # microsecond timestamp that holds the value, before 1970 too.
    values = _with_nulls(_nanos(_seed("nanos"), N))
    for type_string, arrow_type in NANOS_TYPES:
        answer = referee._cls.transform(f"bucket[{n}]", type_string, _nanos_tokens(values))
        java = _java_tokens(str(answer), len(values))
        array = pa.array(values, pa.int64()).cast(arrow_type)
        got = _frazil(f"bucket[{n}]", array)
        assert got.type == pa.int32()
        assert got.to_pylist() == java, type_string
        floored = [None if v is None else v // 1000 for v in values]
        as_micros = _frazil(f"bucket[{n}]", pa.array(floored, pa.int64()).cast(pa.timestamp("us")))
        assert as_micros.to_pylist() == java


def test_hash_of_nanosecond_timestamps_matches_java(referee: Referee) -> None:
    # frazil.values.hash takes int nanoseconds for the v3 types (see frazil.values).
    values = _nanos(_seed("nanos hash"), N // 3)
    for type_string in ("timestamp_ns", "timestamptz_ns"):
        java = _java_tokens(str(referee._cls.hash(type_string, _nanos_tokens(values))), len(values))
        assert [fvalues.hash(type_string, v) for v in values] == java


@pytest.mark.parametrize("transform", TEMPORAL)
def test_temporal_transforms_of_nanosecond_timestamps_match_java(
    referee: Referee, transform: str
) -> None:
    values = _with_nulls(_nanos(_seed("nanos temporal"), N))
    if transform == "hour":
        # Hours of the whole long range of nanoseconds fit in an int.
        assert (gen.LONG_MIN // 1000) // gen.MICROS_PER_HOUR >= gen.INT_MIN
    for type_string, arrow_type in NANOS_TYPES[:2]:
        answer = referee._cls.transform(transform, type_string, _nanos_tokens(values))
        java = _java_tokens(str(answer), len(values))
        got = _frazil(transform, pa.array(values, pa.int64()).cast(arrow_type)).to_pylist()
        assert got == java, type_string
        spec = [
            None if v is None else spec_temporal(transform, v // 1000, "timestamp") for v in values
        ]
        assert got == spec
