"""frazil.values: Appendix D single-value serialization and Appendix B hashing.

Expected values come from the spec's examples and from independent pure-Python
encodings (struct.pack, int.to_bytes, a pure-Python Murmur3), never from frazil.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
import uuid
from decimal import Context, Decimal
from typing import Any

import pytest
from frazil import values
from frazil.errors import FrazilTypeError, InvalidValueError, UnknownTypeError
from hypothesis import given
from hypothesis import strategies as st

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)
SPEC_UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")


# --- independent references -------------------------------------------------------------------


def murmur3_32(data: bytes) -> int:
    """Murmur3 x86 32-bit, seed 0, signed: written from the algorithm's description."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = 0
    body = len(data) // 4 * 4
    for i in range(0, body, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[body:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= rotl((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def min_twos_complement(n: int) -> bytes:
    """Java's BigInteger.toByteArray(): bitLength() // 8 + 1 bytes."""
    bit_length = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bit_length // 8 + 1, "big", signed=True)


def micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def reference_bytes(type_: str, value: Any) -> bytes:
    """Appendix D binary form computed with struct and int.to_bytes only."""
    if type_ == "boolean":
        return b"\x01" if value else b"\x00"
    if type_ == "int":
        return struct.pack("<i", value)
    if type_ == "long":
        return struct.pack("<q", value)
    if type_ == "float":
        return struct.pack("<f", value)
    if type_ == "double":
        return struct.pack("<d", value)
    if type_ == "date":
        return struct.pack("<i", (value - dt.date(1970, 1, 1)).days)
    if type_ == "time":
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return struct.pack("<q", seconds * 1_000_000 + value.microsecond)
    if type_ == "timestamp":
        return struct.pack("<q", micros(value - EPOCH))
    if type_ == "timestamptz":
        return struct.pack("<q", micros(value - EPOCH.replace(tzinfo=UTC)))
    if type_ == "string":
        return bytes(value.encode("utf-8"))
    if type_ == "uuid":
        return bytes(value.bytes)
    if type_.startswith("decimal"):
        scale = int(type_.split(",")[1].rstrip(")"))
        # A wide context: the default one rounds to 28 digits.
        return min_twos_complement(int(value.scaleb(scale, context=Context(prec=100))))
    return bytes(value)  # fixed, binary


# --- strategies -------------------------------------------------------------------------------


@st.composite
def decimals(draw: st.DrawFn) -> tuple[str, Decimal]:
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    bound = 10**precision - 1
    unscaled = draw(
        st.integers(-bound, bound)
        | st.sampled_from([bound, -bound, 0, -1, -128, 128]).filter(lambda u: abs(u) <= bound)
    )
    return f"decimal({precision},{scale})", Decimal(f"{unscaled}E-{scale}")


offsets = st.builds(
    dt.timezone, st.timedeltas(min_value=dt.timedelta(hours=-18), max_value=dt.timedelta(hours=18))
)
aware = st.datetimes(
    min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31), timezones=offsets
)


def fixed_values() -> st.SearchStrategy[tuple[str, Any]]:
    return st.integers(1, 40).flatmap(
        lambda n: st.tuples(st.just(f"fixed[{n}]"), st.binary(min_size=n, max_size=n))
    )


def primitive_pairs(*, nan: bool = True) -> st.SearchStrategy[tuple[str, Any]]:
    """(type string, Python value) for every primitive type."""
    simple: dict[str, st.SearchStrategy[Any]] = {
        "boolean": st.booleans(),
        "int": st.integers(-(2**31), 2**31 - 1),
        "long": st.integers(-(2**63), 2**63 - 1),
        "float": st.floats(width=32, allow_nan=nan),
        "double": st.floats(allow_nan=nan),
        "date": st.dates(),
        "time": st.times(),
        "timestamp": st.datetimes(),
        "timestamptz": aware,
        "string": st.text(),
        "uuid": st.uuids(),
        "binary": st.binary(),
    }
    pairs = [st.tuples(st.just(name), strategy) for name, strategy in simple.items()]
    return st.one_of(*pairs, decimals(), fixed_values())


def same(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN and tells Decimal scales apart."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, Decimal):
        return isinstance(b, Decimal) and str(a) == str(b)
    if isinstance(a, dt.datetime):
        return isinstance(b, dt.datetime) and a == b and (a.tzinfo is None) == (b.tzinfo is None)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and bool(a == b)


# --- Appendix B -------------------------------------------------------------------------------


SPEC_HASHES = [
    ("int", 34, 2017239379),
    ("long", 34, 2017239379),
    ("decimal(9,2)", Decimal("14.20"), -500754589),
    ("date", dt.date(2017, 11, 16), -653330422),
    ("time", dt.time(22, 31, 8), -662762989),
    ("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8), -2047944441),
    (
        "timestamptz",
        dt.datetime(2017, 11, 16, 14, 31, 8, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
        -2047944441,
    ),
    ("string", "iceberg", 1210000089),
    ("uuid", SPEC_UUID, 1488055340),
    ("fixed[4]", b"\x00\x01\x02\x03", -188683207),
    ("binary", b"\x00\x01\x02\x03", -188683207),
    ("boolean", True, 1392991556),
    ("float", 1.0, -142385009),
    ("float", 0.0, 1669671676),
    ("float", -0.0, 1669671676),
    ("double", 1.0, -142385009),
    ("double", 0.0, 1669671676),
    ("double", -0.0, 1669671676),
]


@pytest.mark.parametrize(("type_", "value", "expected"), SPEC_HASHES)
def test_appendix_b_examples(type_: str, value: Any, expected: int) -> None:
    assert values.hash(type_, value) == expected


def test_reference_murmur3_matches_spec() -> None:
    assert murmur3_32(b"iceberg") == 1210000089
    assert murmur3_32(bytes([0, 1, 2, 3])) == -188683207
    assert murmur3_32(struct.pack("<q", 34)) == 2017239379


@given(primitive_pairs(nan=False))
def test_hash_is_murmur3_of_the_canonical_bytes(pair: tuple[str, Any]) -> None:
    type_, value = pair
    if type_ in ("int", "date", "boolean"):
        # Note 1: ints (and dates and booleans) hash as the widened long.
        raw = struct.unpack("<i", reference_bytes(type_, value).ljust(4, b"\x00"))[0]
        expected = murmur3_32(struct.pack("<q", raw))
    elif type_ in ("float", "double"):
        canonical = 0.0 if value == 0.0 else float(value)
        expected = murmur3_32(struct.pack("<d", canonical))
    else:
        expected = murmur3_32(reference_bytes(type_, value))
    assert values.hash(type_, value) == expected


@given(st.integers(-(2**31), 2**31 - 1))
def test_hash_int_equals_hash_long(v: int) -> None:
    assert values.hash("int", v) == values.hash("long", v)
    days = dt.date(1970, 1, 1) + dt.timedelta(days=max(min(v, 2_900_000), -719_000))
    assert values.hash("date", days) == values.hash("long", (days - dt.date(1970, 1, 1)).days)


@given(st.floats(width=32))
def test_hash_float_equals_hash_double(f: float) -> None:
    assert values.hash("float", f) == values.hash("double", f)


nan_payloads = st.one_of(
    st.integers(0x7FF0_0000_0000_0001, 0x7FFF_FFFF_FFFF_FFFF),
    st.integers(0xFFF0_0000_0000_0001, 0xFFFF_FFFF_FFFF_FFFF),
)


@given(nan_payloads)
def test_all_nans_hash_equal(bits: int) -> None:
    nan = struct.unpack("<d", struct.pack("<Q", bits))[0]
    assert math.isnan(nan)
    expected = murmur3_32(struct.pack("<Q", 0x7FF8_0000_0000_0000))
    assert values.hash("double", nan) == expected
    assert values.hash("float", nan) == expected


def test_negative_zero_hashes_as_zero() -> None:
    assert values.hash("double", -0.0) == values.hash("double", 0.0)
    assert values.hash("float", -0.0) == values.hash("float", 0.0)


def test_decimal_hash_uses_minimum_bytes() -> None:
    # -128 is the single byte 0x80 and -1 the single byte 0xFF (pitfalls.md).
    assert values.hash("decimal(9,0)", Decimal(-128)) == murmur3_32(b"\x80")
    assert values.hash("decimal(9,0)", Decimal(-1)) == murmur3_32(b"\xff")
    assert values.hash("decimal(9,2)", Decimal("-1.28")) == murmur3_32(b"\x80")
    # The scale is part of the type, not of the hash.
    assert values.hash("decimal(9,2)", Decimal("14.20")) == values.hash(
        "decimal(9,3)", Decimal("1.420")
    )


# --- Appendix D, binary -----------------------------------------------------------------------


SPEC_BYTES = [
    ("boolean", False, b"\x00"),
    ("boolean", True, b"\x01"),
    ("int", 34, b"\x22\x00\x00\x00"),
    ("long", 34, b"\x22" + b"\x00" * 7),
    ("float", 1.0, b"\x00\x00\x80\x3f"),
    ("double", 1.0, b"\x00" * 6 + b"\xf0\x3f"),
    ("date", dt.date(2017, 11, 16), (17486).to_bytes(4, "little")),
    ("date", dt.date(1969, 12, 31), b"\xff\xff\xff\xff"),
    ("time", dt.time(23, 59, 59, 999999), (86_399_999_999).to_bytes(8, "little")),
    ("timestamp", dt.datetime(1969, 12, 31, 23, 59, 59, 999999), b"\xff" * 8),
    (
        "timestamptz",
        dt.datetime(1970, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
        b"\0" * 8,
    ),
    ("string", "\U0001d11e", b"\xf0\x9d\x84\x9e"),
    ("uuid", SPEC_UUID, bytes.fromhex("F79C3E09677C4BBDA4793F349CB785E7")),
    ("fixed[4]", b"\x00\x01\x02\x03", b"\x00\x01\x02\x03"),
    ("binary", b"", b""),
    ("decimal(9,2)", Decimal("14.20"), b"\x05\x8c"),
    ("decimal(9,2)", Decimal("-1.28"), b"\x80"),
    ("decimal(9,2)", Decimal("-0.01"), b"\xff"),
    ("decimal(9,2)", Decimal("0.00"), b"\x00"),
    ("decimal(9,2)", Decimal("1.28"), b"\x00\x80"),
]


@pytest.mark.parametrize(("type_", "value", "expected"), SPEC_BYTES)
def test_binary_examples(type_: str, value: Any, expected: bytes) -> None:
    assert values.to_bytes(type_, value) == expected
    # A timestamptz reads back in UTC, which compares equal to the same instant.
    assert same(values.from_bytes(type_, expected), value)


@given(primitive_pairs())
def test_binary_matches_struct_pack_and_round_trips(pair: tuple[str, Any]) -> None:
    type_, value = pair
    encoded = values.to_bytes(type_, value)
    if not (type_ in ("float", "double") and math.isnan(value)):
        assert encoded == reference_bytes(type_, value)
    decoded = values.from_bytes(type_, encoded)
    if type_ == "timestamptz":
        assert decoded == value and decoded.tzinfo == UTC
    else:
        assert same(decoded, value)
    assert values.from_bytes(type_, bytearray(encoded)) == decoded or type_ in ("float", "double")
    assert values.from_bytes(type_, memoryview(encoded)) == decoded or type_ in ("float", "double")


@given(decimals())
def test_decimal_encoding_is_minimal(pair: tuple[str, Decimal]) -> None:
    type_, value = pair
    encoded = values.to_bytes(type_, value)
    if len(encoded) > 1:
        # No redundant sign byte: the first byte is not just an extension of the second's sign.
        assert not (encoded[0] == 0x00 and encoded[1] < 0x80)
        assert not (encoded[0] == 0xFF and encoded[1] >= 0x80)
    assert len(encoded) <= 16
    assert same(values.from_bytes(type_, encoded), value)
    # Sign-extended (padded) encodings read back to the same value.
    pad = b"\xff" if encoded[0] >= 0x80 else b"\x00"
    padded = (pad * 16 + encoded)[-16:]
    assert same(values.from_bytes(type_, padded), value)


def test_bounds_of_promoted_columns() -> None:
    # Bounds written while a long column was an int, or a double a float (spec: Schema Evolution).
    assert values.from_bytes("long", struct.pack("<i", -5)) == -5
    assert values.from_bytes("double", struct.pack("<f", 1.5)) == 1.5
    # v3: a date promoted to a timestamp keeps 4-byte day bounds, read as midnight.
    assert values.from_bytes("timestamp", struct.pack("<i", -1)) == dt.datetime(1969, 12, 31)


def test_boolean_reads_any_non_zero_byte_as_true() -> None:
    assert values.from_bytes("boolean", b"\x02") is True
    assert values.from_bytes("boolean", b"\xff") is True
    assert values.from_bytes("boolean", b"\x00") is False


# --- Appendix D, JSON -------------------------------------------------------------------------


SPEC_JSON = [
    ("boolean", True, True),
    ("int", 34, 34),
    ("long", 34, 34),
    ("float", 1.0, 1.0),
    ("double", 1.0, 1.0),
    ("decimal(9,2)", Decimal("14.20"), "14.20"),
    ("date", dt.date(2017, 11, 16), "2017-11-16"),
    ("time", dt.time(22, 31, 8, 123456), "22:31:08.123456"),
    ("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8, 123456), "2017-11-16T22:31:08.123456"),
    (
        "timestamptz",
        dt.datetime(2017, 11, 16, 22, 31, 8, 123456, tzinfo=UTC),
        "2017-11-16T22:31:08.123456+00:00",
    ),
    ("string", "iceberg", "iceberg"),
    ("uuid", SPEC_UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("fixed[4]", b"\x00\x01\x02\xff", "000102ff"),
    ("binary", b"\x00\x01\x02\xff", "000102ff"),
    # Where the spec is silent, Java's text: no zero fraction, no trailing zeros.
    ("time", dt.time(22, 31, 8), "22:31:08"),
    ("time", dt.time(23, 59, 59, 999999), "23:59:59.999999"),
    ("timestamp", dt.datetime(1969, 12, 31, 23, 59, 59, 100000), "1969-12-31T23:59:59.1"),
    ("timestamptz", dt.datetime(1970, 1, 1, tzinfo=UTC), "1970-01-01T00:00:00+00:00"),
    ("decimal(9,2)", Decimal("-0.05"), "-0.05"),
    ("decimal(5,0)", Decimal("-7"), "-7"),
    ("double", math.inf, "Infinity"),
    ("double", -math.inf, "-Infinity"),
]


@pytest.mark.parametrize(("type_", "value", "expected"), SPEC_JSON)
def test_json_examples(type_: str, value: Any, expected: Any) -> None:
    assert values.to_json(type_, value) == expected
    assert same(values.from_json(type_, expected), value)


def test_json_nan_and_float_text() -> None:
    assert values.to_json("double", math.nan) == "NaN"
    assert math.isnan(values.from_json("float", "NaN"))
    # The shortest text of the float32, as Java's Float.toString writes it.
    assert json.dumps(values.to_json("float", 0.1)) == "0.1"
    assert values.from_json("double", 1) == 1.0


def test_json_timestamptz_reads_z_and_returns_utc() -> None:
    value = values.from_json("timestamptz", "2017-11-16T22:31:08Z")
    assert value == dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=UTC)
    assert value.utcoffset() == dt.timedelta(0)


def test_json_accepts_upper_case_hex_and_uuid() -> None:
    assert values.from_json("binary", "00AB") == b"\x00\xab"
    assert values.from_json("uuid", str(SPEC_UUID).upper()) == SPEC_UUID


@given(primitive_pairs())
def test_json_round_trip_primitives(pair: tuple[str, Any]) -> None:
    type_, value = pair
    encoded = values.to_json(type_, value)
    assert json.loads(json.dumps(encoded, allow_nan=False)) == encoded
    decoded = values.from_json(type_, encoded)
    assert same(decoded, value) or (type_ == "timestamptz" and decoded == value)


STRUCT = {
    "type": "struct",
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "int"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
    ],
}


def test_json_nested_examples() -> None:
    assert values.to_json(STRUCT, {"id": 1, "data": "bar"}) == {"1": 1, "2": "bar"}
    assert values.to_json(STRUCT, {"id": 1}) == {"1": 1}
    assert values.from_json(STRUCT, {"1": 1}) == {"id": 1, "data": None}
    assert values.from_json(json.dumps(STRUCT), {"1": 1, "2": "x"}) == {"id": 1, "data": "x"}
    list_type = {"type": "list", "element-id": 3, "element-required": True, "element": "int"}
    assert values.to_json(list_type, [1, 2, 3]) == [1, 2, 3]
    map_type = {
        "type": "map",
        "key-id": 4,
        "key": "string",
        "value-id": 5,
        "value-required": False,
        "value": "double",
    }
    assert values.to_json(map_type, {"a": 1.0, "b": 2}) == {
        "keys": ["a", "b"],
        "values": [1.0, 2.0],
    }
    # A null map value is read, but refused when written: Java cannot read it back.
    assert values.from_json(map_type, {"keys": ["a"], "values": [None]}) == {"a": None}
    with pytest.raises(InvalidValueError, match="null"):
        values.to_json(map_type, {"a": 1.0, "b": None})
    assert values.from_json(map_type, {"keys": ["a", "b"], "values": [1, 2]}) == {
        "a": 1.0,
        "b": 2.0,
    }


PRIMITIVE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "boolean": st.booleans(),
    "decimal(7,3)": st.integers(-9_999_999, 9_999_999).map(lambda u: Decimal(f"{u}E-3")),
    "date": st.dates(),
    "time": st.times(),
    "timestamp": st.datetimes(),
    "timestamptz": st.datetimes(min_value=dt.datetime(2, 1, 1), timezones=st.just(UTC)),
    "string": st.text(max_size=8),
    "uuid": st.uuids(),
    "binary": st.binary(max_size=8),
    "fixed[3]": st.binary(min_size=3, max_size=3),
}
KEY_TYPES = ["int", "long", "string", "date", "uuid", "decimal(7,3)"]


def nested_types() -> st.SearchStrategy[Any]:
    """Type shapes; field ids are assigned afterwards by `with_ids`."""
    leaves = st.sampled_from(sorted(PRIMITIVE_VALUES))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.tuples(st.just("list"), st.booleans(), inner),
            st.tuples(st.just("map"), st.sampled_from(KEY_TYPES), st.booleans(), inner),
            st.tuples(st.just("struct"), st.lists(st.tuples(st.booleans(), inner), max_size=4)),
        ),
        max_leaves=6,
    )


def with_ids(shape: Any, ids: list[int]) -> Any:
    """The Appendix C JSON of a shape, with fresh field ids."""

    def fresh() -> int:
        ids[0] += 1
        return ids[0]

    if isinstance(shape, str):
        return shape
    if shape[0] == "list":
        return {
            "type": "list",
            "element-id": fresh(),
            "element-required": shape[1],
            "element": with_ids(shape[2], ids),
        }
    if shape[0] == "map":
        return {
            "type": "map",
            "key-id": fresh(),
            "key": shape[1],
            "value-id": fresh(),
            "value-required": shape[2],
            "value": with_ids(shape[3], ids),
        }
    fields = []
    for required, inner in shape[1]:
        field_id = fresh()
        fields.append(
            {
                "id": field_id,
                "name": f"f{field_id}",
                "required": required,
                "type": with_ids(inner, ids),
            }
        )
    return {"type": "struct", "fields": fields}


def values_of(type_: Any) -> st.SearchStrategy[Any]:
    if isinstance(type_, str):
        return PRIMITIVE_VALUES[type_]
    if type_["type"] == "list":
        element = values_of(type_["element"])
        return st.lists(element if type_["element-required"] else st.none() | element, max_size=3)
    if type_["type"] == "map":
        value = values_of(type_["value"])
        # No null values even when optional: they are not written (Java cannot read them).
        return st.dictionaries(PRIMITIVE_VALUES[type_["key"]], value, max_size=3)
    return st.fixed_dictionaries(
        {
            f["name"]: values_of(f["type"]) if f["required"] else st.none() | values_of(f["type"])
            for f in type_["fields"]
        }
    )


@given(st.data())
def test_json_round_trip_nested(data: st.DataObject) -> None:
    type_ = with_ids(data.draw(nested_types()), [0])
    value = data.draw(values_of(type_))
    encoded = values.to_json(type_, value)
    text = json.dumps(encoded, allow_nan=False)
    assert same(values.from_json(type_, json.loads(text)), value)
    assert same(values.from_json(json.dumps(type_), encoded), value)


# --- refusals ---------------------------------------------------------------------------------

naive = dt.datetime(2017, 11, 16, 22, 31, 8)
REFUSED_VALUES = [
    ("int", "1", FrazilTypeError),
    ("int", True, FrazilTypeError),
    ("int", 1.0, FrazilTypeError),
    ("long", None, FrazilTypeError),
    ("boolean", 1, FrazilTypeError),
    ("double", "1.0", FrazilTypeError),
    ("decimal(9,2)", 14.2, FrazilTypeError),
    ("date", naive, FrazilTypeError),
    ("time", dt.time(1, tzinfo=UTC), FrazilTypeError),
    ("timestamp", naive.replace(tzinfo=UTC), FrazilTypeError),
    ("timestamptz", naive, FrazilTypeError),
    ("string", b"abc", FrazilTypeError),
    ("uuid", str(SPEC_UUID), FrazilTypeError),
    ("binary", "00", FrazilTypeError),
    ("int", 2**31, InvalidValueError),
    ("int", -(2**31) - 1, InvalidValueError),
    ("long", 2**63, InvalidValueError),
    ("long", 2**200, InvalidValueError),
    ("float", 1e300, InvalidValueError),
    ("double", 2**2000, InvalidValueError),
    ("decimal(9,2)", Decimal("14.201"), InvalidValueError),
    ("decimal(9,2)", Decimal("10000000.00"), InvalidValueError),
    ("decimal(9,2)", Decimal("1E+100000000"), InvalidValueError),
    ("decimal(9,2)", Decimal("1E-100000000"), InvalidValueError),
    ("decimal(9,2)", Decimal("NaN"), InvalidValueError),
    ("decimal(9,2)", Decimal("Infinity"), InvalidValueError),
    ("fixed[4]", b"abc", InvalidValueError),
    ("string", "\ud800", InvalidValueError),
]


@pytest.mark.parametrize(("type_", "value", "error"), REFUSED_VALUES)
def test_refused_values(type_: str, value: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        values.to_bytes(type_, value)
    message = str(info.value)
    assert type_.split("(")[0].split("[")[0] in message
    # The message names the value, except for fixed where it names both lengths.
    assert repr(value)[:10] in message or type_.startswith("fixed")
    with pytest.raises(error):
        values.hash(type_, value)
    if value is not None:
        with pytest.raises(error):
            values.to_json(type_, value)


def test_rescaling_is_exact() -> None:
    assert values.to_bytes("decimal(9,2)", Decimal("14.2")) == values.to_bytes(
        "decimal(9,2)", Decimal("14.20")
    )
    assert values.to_bytes("decimal(9,2)", Decimal("14.2000")) == b"\x05\x8c"
    assert values.to_bytes("decimal(9,2)", 14) == (1400).to_bytes(2, "big")
    assert values.to_bytes("decimal(38,0)", Decimal("9" * 38)) == min_twos_complement(int("9" * 38))
    with pytest.raises(InvalidValueError, match=r"14\.201.*decimal\(9, 2\)"):
        values.to_bytes("decimal(9,2)", Decimal("14.201"))
    assert (
        str(
            values.from_bytes(
                "decimal(38,10)",
                values.to_bytes("decimal(38,10)", Decimal("-" + "9" * 28 + "." + "9" * 10)),
            )
        )
        == "-" + "9" * 28 + "." + "9" * 10
    )


REFUSED_BYTES = [
    ("boolean", b""),
    ("int", b"\x00" * 3),
    ("int", b"\x00" * 8),
    ("long", b"\x00" * 7),
    ("float", b"\x00" * 8),
    ("double", b"\x00" * 5),
    ("date", b"\x00" * 8),
    ("time", b"\x00" * 4),
    ("timestamp", b"\x00" * 5),
    ("timestamp_ns", b"\x00" * 7),
    ("uuid", b"\x00" * 15),
    ("fixed[4]", b"\x00" * 5),
    ("decimal(9,2)", b""),
    ("decimal(38,2)", b"\x00" * 17),
    ("decimal(2,0)", b"\x00\x64"),
    ("string", b"\xff"),
    ("string", b"\xed\xa0\x80"),
    ("time", struct.pack("<q", 86_400_000_000)),
    # Valid Iceberg values that Python's datetime cannot hold.
    ("date", struct.pack("<i", 2**31 - 1)),
    ("timestamp", struct.pack("<q", 2**63 - 1)),
    ("timestamptz", struct.pack("<q", -(2**63))),
]


@pytest.mark.parametrize(("type_", "data"), REFUSED_BYTES)
def test_refused_bytes(type_: str, data: bytes) -> None:
    with pytest.raises(InvalidValueError):
        values.from_bytes(type_, data)


def test_wrong_length_messages_name_type_and_lengths() -> None:
    with pytest.raises(InvalidValueError, match=r"int.*4.*3"):
        values.from_bytes("int", b"\x00" * 3)
    with pytest.raises(InvalidValueError, match=r"fixed\[4\].*4.*3"):
        values.to_bytes("fixed[4]", b"abc")


REFUSED_JSON = [
    ("int", "1", FrazilTypeError),
    ("int", 1.5, FrazilTypeError),
    ("boolean", 1, FrazilTypeError),
    ("date", 17486, FrazilTypeError),
    ("int", 2**31, InvalidValueError),
    ("long", 2**70, InvalidValueError),
    ("double", math.nan, InvalidValueError),
    ("decimal(9,2)", "14.2", InvalidValueError),
    ("decimal(9,2)", "abc", InvalidValueError),
    ("decimal(9,2)", "12345678.90", InvalidValueError),
    ("timestamptz", "2017-11-16T14:31:08-08:00", InvalidValueError),
    ("timestamptz", "2017-11-16T22:31:08", InvalidValueError),
    ("timestamp", "2017-11-16T22:31:08+00:00", InvalidValueError),
    ("date", "2017-02-29", InvalidValueError),
    ("time", "22:31:08.1234567", InvalidValueError),
    ("uuid", "f79c3e09677c4bbda4793f349cb785e7", InvalidValueError),
    ("fixed[2]", "00", InvalidValueError),
    ("binary", "0g", InvalidValueError),
    ("date", "+100000-01-01", InvalidValueError),
    (STRUCT, [1, "x"], FrazilTypeError),
    (STRUCT, {"1": "x"}, FrazilTypeError),
]


@pytest.mark.parametrize(("type_", "json_value", "error"), REFUSED_JSON)
def test_refused_json(type_: Any, json_value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        values.from_json(type_, json_value)


def test_unknown_and_unsupported_types() -> None:
    for call in (values.to_bytes, values.hash, values.to_json):
        with pytest.raises(UnknownTypeError):
            call("integer", 1)
        with pytest.raises(UnknownTypeError):
            call("decimal(39,0)", Decimal(1))
    with pytest.raises(UnknownTypeError):
        values.from_bytes("frob", b"")
    with pytest.raises(UnknownTypeError):
        values.from_json({"type": "struct"}, {})
    # Appendix D: no binary form for nested types.
    with pytest.raises(FrazilTypeError, match="struct"):
        values.to_bytes(STRUCT, {"id": 1})
    with pytest.raises(FrazilTypeError):
        values.to_bytes(42, 1)  # type: ignore[arg-type]


def test_struct_with_unknown_field_is_refused() -> None:
    with pytest.raises(InvalidValueError, match="nope"):
        values.to_json(STRUCT, {"id": 1, "nope": 2})
    with pytest.raises(FrazilTypeError):
        values.to_json(STRUCT, [1, "x"])


def test_none_and_wrong_containers() -> None:
    # JSON null is the absent value; it has no binary form and no hash.
    assert values.to_json("int", None) is None
    assert values.from_json("int", None) is None
    with pytest.raises(FrazilTypeError):
        values.from_bytes("string", "abc")  # type: ignore[arg-type]
    map_type = {"type": "map", "key-id": 1, "key": "string", "value-id": 2}
    map_type |= {"value-required": True, "value": "int"}
    with pytest.raises(InvalidValueError):
        values.to_json(map_type, {None: 1})
    with pytest.raises(FrazilTypeError):
        values.to_json(map_type, [("a", 1)])
    with pytest.raises(FrazilTypeError):
        values.to_json(map_type, {"a": "1"})
    with pytest.raises(InvalidValueError):
        values.from_json(map_type, {"keys": ["a", "a"], "values": [1, 2]})


# --- v3 nanosecond timestamps: int nanoseconds (or datetime) in, int nanoseconds out ----

NS = 1_510_871_468_123_456_789  # 2017-11-16T22:31:08.123456789


def test_nanosecond_timestamps_examples() -> None:
    assert values.to_bytes("timestamp_ns", NS) == struct.pack("<q", NS)
    assert values.from_bytes("timestamp_ns", struct.pack("<q", NS)) == NS
    assert values.from_bytes("timestamptz_ns", struct.pack("<q", -1)) == -1
    assert values.to_json("timestamp_ns", NS) == "2017-11-16T22:31:08.123456789"
    assert values.to_json("timestamptz_ns", NS) == "2017-11-16T22:31:08.123456789+00:00"
    assert values.from_json("timestamp_ns", "2017-11-16T22:31:08.123456789") == NS
    # Appendix D: timestamptz values are written in UTC; Java refuses other offsets.
    assert values.from_json("timestamptz_ns", "2017-11-16T22:31:08.123456789+00:00") == NS
    with pytest.raises(InvalidValueError, match="UTC"):
        values.from_json("timestamptz_ns", "2017-11-16T23:31:08.123456789+01:00")
    # A date bound written before a v3 date -> timestamp_ns promotion: midnight.
    assert values.from_bytes("timestamp_ns", struct.pack("<i", 1)) == 86_400 * 10**9
    # Appendix B: the hash of the microseconds, floored.
    micros = values.hash("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8, 123456))
    assert values.hash("timestamp_ns", NS) == values.hash("timestamptz_ns", NS) == micros
    assert values.hash("timestamp_ns", -1) == values.hash("long", -1)


def test_nanosecond_timestamps_from_datetimes() -> None:
    naive = dt.datetime(2017, 11, 16, 22, 31, 8, 123456)
    aware = dt.datetime(2017, 11, 16, 23, 31, 8, 123456, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert values.to_bytes("timestamp_ns", naive) == struct.pack("<q", NS - 789)
    assert values.to_json("timestamptz_ns", aware) == "2017-11-16T22:31:08.123456+00:00"
    assert values.hash("timestamptz_ns", aware) == values.hash("timestamptz_ns", NS - 789)
    before = dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    assert values.to_bytes("timestamp_ns", before) == struct.pack("<q", -1000)

    class WithNanos(dt.datetime):
        """A datetime that holds nanoseconds too, as pandas.Timestamp does."""

        nanosecond = 789

    assert values.to_json("timestamp_ns", WithNanos(2017, 11, 16, 22, 31, 8, 123456)) == (
        "2017-11-16T22:31:08.123456789"
    )


@pytest.mark.parametrize(
    ("type_", "value", "error"),
    [
        ("timestamp_ns", dt.datetime(2017, 1, 1, tzinfo=dt.timezone.utc), FrazilTypeError),
        ("timestamptz_ns", dt.datetime(2017, 1, 1), FrazilTypeError),
        ("timestamp_ns", dt.date(2017, 1, 1), FrazilTypeError),
        ("timestamp_ns", 1.5, FrazilTypeError),
        ("timestamp_ns", True, FrazilTypeError),
        ("timestamp_ns", "2017-01-01", FrazilTypeError),
        ("timestamp_ns", 2**63, InvalidValueError),
        ("timestamptz_ns", -(2**63) - 1, InvalidValueError),
        ("unknown", 1, InvalidValueError),
        ("variant", 1, UnknownTypeError),
        ("geometry", b"", UnknownTypeError),
    ],
)
def test_refused_nanosecond_and_v3_values(type_: str, value: Any, error: type[Exception]) -> None:
    for call in (values.to_bytes, values.to_json, values.hash):
        with pytest.raises(error):
            call(type_, value)


@given(st.integers(-(2**63), 2**63 - 1))
def test_nanosecond_timestamps_round_trip(ns: int) -> None:
    for type_ in ("timestamp_ns", "timestamptz_ns"):
        assert values.from_bytes(type_, values.to_bytes(type_, ns)) == ns
        assert values.from_json(type_, values.to_json(type_, ns)) == ns
        assert values.hash(type_, ns) == values.hash("long", ns // 1000)


def test_unknown_is_always_null() -> None:
    assert values.to_json("unknown", None) is None
    assert values.from_json("unknown", None) is None
