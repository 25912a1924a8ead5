"""frazil.values against Apache Iceberg Java 1.10.2: single-value binary serialization
(Appendix D, Conversions.toByteBuffer / fromByteBuffer), the 32-bit hash (Appendix B,
BucketUtil.hash) and single-value JSON (Appendix D, SingleValueParser.toJson / fromJson).

Thousands of seeded values per primitive type, pitfalls included (generators.py).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import random
import struct
from typing import Any
from zoneinfo import ZoneInfo

import generators as gen
import pytest
from frazil import values as fv
from frazil.errors import InvalidValueError
from java_referee import (
    JavaError,
    Referee,
    decimal_precision,
    decimal_scale,
    fixed_length,
    from_internal,
    kind,
    to_internal,
)

pytestmark = pytest.mark.interop

N = 3000  # generated values per type, on top of the explicit edge cases

PRIMITIVES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
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
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "string",
    "uuid",
    "fixed[1]",
    "fixed[7]",
    "fixed[16]",
    "binary",
]
ZONES = [
    dt.timezone.utc,
    dt.timezone(dt.timedelta(hours=5, minutes=30)),
    dt.timezone(dt.timedelta(hours=-8)),
    ZoneInfo("America/Los_Angeles"),
    ZoneInfo("Asia/Kathmandu"),
]


@functools.cache
def _python_values(type_string: str) -> list[Any]:
    """Seeded values of the type, as frazil.values takes them (date, Decimal, UUID...)."""
    rng = random.Random(f"values {type_string}")
    family = kind(type_string)
    if family == "boolean":
        return [True, False]
    if family == "int":
        return gen.ints(rng, N)
    if family == "long":
        return gen.ints(rng, N, gen.LONG_MIN, gen.LONG_MAX)
    if family in ("float", "double"):
        return gen.floats(rng, N, double=family == "double")
    if family == "decimal":
        return gen.decimals(rng, N, decimal_precision(type_string), decimal_scale(type_string))
    if family == "date":
        return [from_internal("date", d) for d in gen.days(rng, N)]
    if family == "time":
        return [from_internal("time", t) for t in gen.times(rng, N)]
    if family == "timestamp":
        return [from_internal("timestamp", t) for t in gen.micros(rng, N)]
    if family == "timestamptz":
        out = []
        for micros in gen.micros(rng, N):
            value = from_internal("timestamptz", micros)
            try:
                # the same instant seen from another zone: the zone must not matter
                value = value.astimezone(rng.choice(ZONES))
            except OverflowError:  # year 1 or 9999 seen from a zone beyond Python's range
                pass
            out.append(value)
        return out
    if family == "string":
        return gen.strings(rng, N)
    if family == "uuid":
        return gen.uuids(rng, N)
    if family == "fixed":
        return gen.binaries(rng, N, fixed_length(type_string))
    if family == "binary":
        return gen.binaries(rng, N)
    raise AssertionError(type_string)


def _same(type_string: str, got: Any, expected: Any) -> bool:
    """Value equality that also tells -0.0 from 0.0, NaN from NaN, and a decimal's scale."""
    family = kind(type_string)
    if family in ("float", "double"):
        if not isinstance(got, float):
            return False
        if math.isnan(expected):
            return math.isnan(got)
        return got == expected and math.copysign(1, got) == math.copysign(1, expected)
    if family == "decimal":
        return bool(got == expected and got.as_tuple().exponent == -decimal_scale(type_string))
    if family == "timestamptz":
        return bool(got == expected and got.tzinfo is not None)
    if family == "timestamp":
        return bool(got == expected and got.tzinfo is None)
    return bool(type(got) is type(expected) and got == expected)


def _internal(type_string: str, values: list[Any]) -> list[Any]:
    return [to_internal(type_string, v) for v in values]


# --- binary single-value serialization (Appendix D) ----------------------------------


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_to_bytes_matches_java(referee: Referee, type_string: str) -> None:
    values = _python_values(type_string)
    java = referee.to_bytes(type_string, _internal(type_string, values))
    mismatches = []
    for value, expected in zip(values, java, strict=True):
        assert not isinstance(expected, JavaError), (value, expected)
        got = fv.to_bytes(type_string, value)
        if isinstance(value, float) and math.isnan(value):
            # NaN payloads are not part of the spec (and Python floats do not keep a float's
            # payload): any NaN of the right width is right.
            fmt = "<f" if type_string == "float" else "<d"
            if not (len(got) == len(expected) and math.isnan(struct.unpack(fmt, got)[0])):
                mismatches.append((value, got, expected))
        elif got != expected:
            mismatches.append((value, got, expected))
    assert not mismatches, f"{len(mismatches)} differ from Java, first 10: {mismatches[:10]}"


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_from_bytes_decodes_java_bytes(referee: Referee, type_string: str) -> None:
    values = _python_values(type_string)
    java = referee.to_bytes(type_string, _internal(type_string, values))
    mismatches = []
    for value, data in zip(values, java, strict=True):
        assert isinstance(data, bytes)
        got = fv.from_bytes(type_string, data)
        if not _same(type_string, got, value):
            mismatches.append((data, got, value))
    assert not mismatches, f"{len(mismatches)} wrong, first 10: {mismatches[:10]}"


@pytest.mark.parametrize(
    ("type_string", "data"),
    [
        # "non-zero byte for true"
        ("boolean", b"\x02"),
        ("boolean", b"\xff"),
        # decimals with sign-extension padding (not minimal, as some writers store them)
        ("decimal(9,2)", b"\x00\x00\x00\x7f"),
        ("decimal(9,2)", b"\xff\xff\xff\x80"),
        ("decimal(38,10)", b"\xff" * 15 + b"\x01"),
        ("decimal(38,10)", bytes(16)),
        # bounds written before an int -> long or float -> double promotion
        ("long", struct.pack("<i", -5)),
        ("long", struct.pack("<i", 2**31 - 1)),
        ("double", struct.pack("<f", 1.5)),
        ("double", struct.pack("<f", -0.0)),
    ],
)
def test_from_bytes_reads_what_java_reads(referee: Referee, type_string: str, data: bytes) -> None:
    [expected] = referee.from_bytes(type_string, [data])
    assert not isinstance(expected, JavaError)
    assert _same(
        type_string, fv.from_bytes(type_string, data), from_internal(type_string, expected)
    )


# --- hash (Appendix B) ------------------------------------------------------------------


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_hash_matches_java(referee: Referee, type_string: str) -> None:
    values = _python_values(type_string)
    java = referee.hash(type_string, _internal(type_string, values))
    got = [fv.hash(type_string, v) for v in values]
    mismatches = [(v, g, j) for v, g, j in zip(values, got, java, strict=True) if g != j]
    assert not mismatches, f"{len(mismatches)} differ from Java, first 10: {mismatches[:10]}"
    assert all(type(g) is int and -(2**31) <= g < 2**31 for g in got)


def test_int_and_long_hash_alike(referee: Referee) -> None:
    # Appendix B note 1: promotion int -> long must not move a value to another bucket;
    # a date hashes its day count the same way.
    ints = gen.ints(random.Random("int/long"), N)
    expected = referee.hash("long", ints)
    assert [fv.hash("int", v) for v in ints] == expected
    assert [fv.hash("long", v) for v in ints] == expected
    days = [d for d in ints if gen.MIN_DAY <= d <= gen.MAX_DAY]
    assert [fv.hash("date", from_internal("date", d)) for d in days] == referee.hash("long", days)


# --- JSON single-value serialization (Appendix D) ---------------------------------------


def _finite(type_string: str, values: list[Any]) -> list[Any]:
    # NaN and infinities have no JSON number form; the spec does not say how to write them
    # (Java writes the strings "NaN" and "Infinity"), so they are left out here.
    if kind(type_string) in ("float", "double"):
        return [v for v in values if math.isfinite(v)]
    return values


def _normal_text(type_string: str, obj: Any) -> Any:
    """A JSON value in a canonical form where the spec allows more than one text:
    trailing zeros of fractional seconds (Java writes the fewest digits, e.g. "22:31:08"),
    the case of hex digits (Java writes upper case, the spec's example lower case), and a
    float written as the nearest double of the float (a float's decimal text may be longer
    or shorter)."""
    family = kind(type_string)
    if family in ("time", "timestamp", "timestamptz") and isinstance(obj, str):
        head, _, zone = obj.partition("+") if family == "timestamptz" else (obj, "", "")
        if "." in head:
            head = head.rstrip("0").rstrip(".")
        return head + ("+" + zone if zone else "")
    if family in ("fixed", "binary") and isinstance(obj, str):
        return obj.lower()
    if family == "float" and isinstance(obj, float):
        return struct.unpack("<f", struct.pack("<f", obj))[0]
    return obj


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_to_json_matches_java(referee: Referee, type_string: str) -> None:
    values = _finite(type_string, _python_values(type_string))
    java = referee.to_json(type_string, _internal(type_string, values))
    mismatches = []
    for value, text in zip(values, java, strict=True):
        assert isinstance(text, str), (value, text)
        got = fv.to_json(type_string, value)
        json.dumps(got)  # must be JSON-compatible
        expected = json.loads(text)
        if type(got) is not type(expected) or _normal_text(type_string, got) != _normal_text(
            type_string, expected
        ):
            mismatches.append((value, got, text))
    assert not mismatches, f"{len(mismatches)} differ from Java, first 10: {mismatches[:10]}"


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_from_json_reads_java_json(referee: Referee, type_string: str) -> None:
    values = _finite(type_string, _python_values(type_string))
    java_texts = referee.to_json(type_string, _internal(type_string, values))
    wrong = []
    for value, text in zip(values, java_texts, strict=True):
        assert isinstance(text, str)
        got = fv.from_json(type_string, json.loads(text))
        if not _same(type_string, got, value):
            wrong.append((text, got, value))
    assert not wrong, f"frazil misreads {len(wrong)} of Java's texts, first 10: {wrong[:10]}"


@pytest.mark.parametrize("type_string", PRIMITIVES)
def test_java_reads_frazil_json(referee: Referee, type_string: str) -> None:
    values = _finite(type_string, _python_values(type_string))
    internal = _internal(type_string, values)
    ours = [json.dumps(fv.to_json(type_string, v)) for v in values]
    back = referee.from_json(type_string, ours)
    wrong = [
        (text, j, v)
        for text, j, v in zip(ours, back, internal, strict=True)
        if isinstance(j, JavaError)
        or not _same(type_string, from_internal(type_string, j), from_internal(type_string, v))
    ]
    assert not wrong, f"Java misreads {len(wrong)} of frazil's texts, first 10: {wrong[:10]}"


@pytest.mark.parametrize("type_string", ["float", "double"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_json_as_java_writes_it(
    referee: Referee, type_string: str, value: float
) -> None:
    # The spec has no JSON form for NaN and infinities. Java (Jackson) writes the strings
    # "NaN", "Infinity", "-Infinity", and frazil writes the same; but Java 1.10.2's
    # fromJson then refuses its own output (it wants a JSON number), frazil reads it back.
    [text] = referee.to_json(type_string, [value])
    assert isinstance(text, str)
    assert fv.to_json(type_string, value) == json.loads(text)
    assert _same(type_string, fv.from_json(type_string, json.loads(text)), value)
    [java_back] = referee.from_json(type_string, [text])
    assert isinstance(java_back, JavaError)


# --- JSON of nested types ---------------------------------------------------------------

NESTED = {
    "type": "struct",
    "fields": [
        {"id": 1, "name": "a", "required": True, "type": "int"},
        {"id": 2, "name": "b", "required": False, "type": "string"},
        {"id": 3, "name": "c", "required": False, "type": "decimal(9,2)"},
        {
            "id": 4,
            "name": "d",
            "required": False,
            "type": {"type": "list", "element-id": 5, "element": "date", "element-required": False},
        },
        {
            "id": 6,
            "name": "e",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 7,
                "key": "string",
                "value-id": 8,
                "value-required": False,
                "value": {
                    "type": "struct",
                    "fields": [
                        {"id": 9, "name": "f", "required": False, "type": "double"},
                        {"id": 10, "name": "g", "required": False, "type": "uuid"},
                        {"id": 11, "name": "h", "required": False, "type": "timestamptz"},
                    ],
                },
            },
        },
        {"id": 12, "name": "i", "required": False, "type": "timestamp"},
        {"id": 13, "name": "j", "required": False, "type": "binary"},
        {"id": 14, "name": "k", "required": False, "type": "boolean"},
        {
            "id": 15,
            "name": "l",
            "required": False,
            "type": {
                "type": "list",
                "element-id": 16,
                "element-required": True,
                "element": {
                    "type": "list",
                    "element-id": 17,
                    "element": "long",
                    "element-required": False,
                },
            },
        },
        {
            "id": 18,
            "name": "m",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 19,
                "key": "int",
                "value-id": 20,
                "value": "fixed[4]",
                "value-required": False,
            },
        },
        {"id": 21, "name": "n", "required": False, "type": "time"},
        {"id": 22, "name": "o", "required": False, "type": "float"},
    ],
}
NESTED_TYPES = [
    pytest.param(NESTED, id="struct"),
    pytest.param(NESTED["fields"][3]["type"], id="list<date>"),
    pytest.param(NESTED["fields"][4]["type"], id="map<string,struct>"),
    pytest.param(NESTED["fields"][8]["type"], id="list<list<long>>"),
    pytest.param(NESTED["fields"][9]["type"], id="map<int,fixed[4]>"),
]


def _random_value(
    type_json: Any, rng: random.Random, depth: int = 0, null_map_values: bool = False
) -> Any:
    """A random Python value of a (nested) type; None where the type allows it, except in
    map values unless ``null_map_values``."""
    if isinstance(type_json, str):
        return rng.choice(_finite(type_json, _python_values(type_json)))
    size = rng.choice((0, 1, 2, 3, rng.randint(0, 6))) if depth < 3 else rng.randint(0, 1)
    if type_json["type"] == "struct":
        out = {}
        for field in type_json["fields"]:
            if not field["required"] and rng.random() < 0.2:
                out[field["name"]] = None
            else:
                out[field["name"]] = _random_value(field["type"], rng, depth + 1, null_map_values)
        return out
    if type_json["type"] == "list":
        optional = not type_json["element-required"]
        return [
            None
            if optional and rng.random() < 0.1
            else _random_value(type_json["element"], rng, depth + 1, null_map_values)
            for _ in range(size)
        ]
    optional = null_map_values and not type_json["value-required"]
    return {
        _random_value(type_json["key"], rng, depth + 1, null_map_values): (
            None
            if optional and rng.random() < 0.1
            else _random_value(type_json["value"], rng, depth + 1, null_map_values)
        )
        for _ in range(size)
    }


def _normal_json(type_json: Any, obj: Any) -> Any:
    """Canonical JSON of a nested value: struct fields that are null left out (Java leaves
    them out, the spec does not say), leaves as in _normal_text."""
    if obj is None:
        return None
    if isinstance(type_json, str):
        return _normal_text(type_json, obj)
    if type_json["type"] == "struct":
        return {
            str(f["id"]): _normal_json(f["type"], obj[str(f["id"])])
            for f in type_json["fields"]
            if obj.get(str(f["id"])) is not None
        }
    if type_json["type"] == "list":
        return [_normal_json(type_json["element"], x) for x in obj]
    return {
        "keys": [_normal_json(type_json["key"], k) for k in obj["keys"]],
        "values": [_normal_json(type_json["value"], v) for v in obj["values"]],
    }


def _normal_value(type_json: Any, value: Any) -> Any:
    """A nested Python value with null struct fields left out, for comparing."""
    if value is None:
        return None
    if isinstance(type_json, str):
        if kind(type_json) == "float":
            return struct.unpack("<f", struct.pack("<f", value))[0]
        if kind(type_json) == "timestamptz":
            return ("tz", value.astimezone(dt.timezone.utc))
        return (type(value).__name__, value)
    if type_json["type"] == "struct":
        return {
            f["name"]: _normal_value(f["type"], value[f["name"]])
            for f in type_json["fields"]
            if value.get(f["name"]) is not None
        }
    if type_json["type"] == "list":
        return [_normal_value(type_json["element"], x) for x in value]
    return [
        (_normal_value(type_json["key"], k), _normal_value(type_json["value"], v))
        for k, v in value.items()
    ]


def _leaf_diffs(type_json: Any, got: Any, expected: Any, path: str = "") -> list[str]:
    """Where two normalised nested values differ: one line per differing leaf."""
    if isinstance(type_json, str) or got is None or expected is None:
        return [] if got == expected else [f"{path or '.'} ({type_json}): {got!r} != {expected!r}"]
    if type_json["type"] == "struct":
        return [
            line
            for f in type_json["fields"]
            for line in _leaf_diffs(
                f["type"], got.get(f["name"]), expected.get(f["name"]), f"{path}.{f['name']}"
            )
        ]
    if len(got) != len(expected):
        return [f"{path}: {len(got)} items != {len(expected)}"]
    if type_json["type"] == "list":
        pairs = [
            (f"{path}[{i}]", type_json["element"], g, e)
            for i, (g, e) in enumerate(zip(got, expected, strict=True))
        ]
    else:
        pairs = [
            (f"{path}[{gk[1]!r}]", type_json["value"], gv, ev)
            for (gk, gv), (_, ev) in zip(got, expected, strict=True)
        ]
    return [line for p, t, g, e in pairs for line in _leaf_diffs(t, g, e, p)]


@pytest.mark.parametrize("type_json", NESTED_TYPES)
def test_nested_json_matches_java(referee: Referee, type_json: Any) -> None:
    rng = random.Random(f"nested {json.dumps(type_json)}")
    values = [_random_value(type_json, rng) for _ in range(300)]
    ours = [fv.to_json(type_json, v) for v in values]
    texts = [json.dumps(o) for o in ours]
    java = referee.json_round_trip(type_json, texts)
    mismatches = []
    for value, obj, text in zip(values, ours, java, strict=True):
        assert isinstance(text, str), (value, obj, text)  # Java must read frazil's JSON
        expected = json.loads(text)
        if _normal_json(type_json, obj) != _normal_json(type_json, expected):
            mismatches.append(f"JSON differs: frazil {json.dumps(obj)} Java {text}")
        # frazil reads Java's JSON back to the same value
        back = _normal_value(type_json, fv.from_json(type_json, expected))
        for line in _leaf_diffs(type_json, back, _normal_value(type_json, value)):
            mismatches.append(f"frazil reads Java's {line}")
    assert not mismatches, f"{len(mismatches)} wrong, first 5:\n" + "\n".join(mismatches[:5])


def test_null_map_values_in_json(referee: Referee) -> None:
    # A map with optional values may hold nulls. Java 1.10.2's SingleValueParser.fromJson
    # builds the map with Guava's ImmutableMap, which rejects null values (a
    # NullPointerException), so the parity test above avoids them. frazil therefore
    # refuses to write them (a default holding one would make the table unreadable to
    # Java) but reads them.
    type_json = NESTED["fields"][9]["type"]  # map<int, fixed[4]>, optional values
    text = json.dumps({"keys": [1, -2, 3], "values": [None, "00010203", None]})
    assert referee.json_round_trip(type_json, [text]) == [
        JavaError("java.lang.NullPointerException")
    ]
    value = {1: None, -2: b"\x00\x01\x02\x03", 3: None}
    assert fv.from_json(type_json, json.loads(text)) == value
    with pytest.raises(InvalidValueError):
        fv.to_json(type_json, value)
