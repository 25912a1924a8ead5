"""frazil.expressions.bind: binding in the Rust core, results as Python objects."""

from __future__ import annotations

import datetime as dt
import math
import sys
import uuid
from decimal import Decimal
from typing import Any

import pytest
from frazil import Schema
from frazil.errors import FrazilTypeError, UnknownFieldError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expression,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
    StartsWith,
    Transform,
    bind,
    col,
    from_json,
    parse,
)
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from hypothesis import given, settings
from hypothesis import strategies as st

UTC = dt.timezone.utc
U = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "f", FloatType()),
    NestedField(4, "dd", DoubleType()),
    NestedField(5, "s", StringType()),
    NestedField(6, "d", DateType()),
    NestedField(7, "t", TimeType()),
    NestedField(8, "ts", TimestampType()),
    NestedField(9, "tz", TimestamptzType()),
    NestedField(10, "price", DecimalType(9, 2)),
    NestedField(11, "u", UUIDType()),
    NestedField(12, "b", BinaryType()),
    NestedField(13, "fx", FixedType(4)),
    NestedField(14, "flag", BooleanType()),
    NestedField(
        15,
        "loc",
        StructType((NestedField(16, "City", StringType()), NestedField(17, "lat", DoubleType()))),
    ),
    NestedField(18, "tags", ListType(19, StringType(), element_required=False)),
    NestedField(20, "ts_ns", TimestampNanoType()),
    NestedField(21, "My Col", StringType()),
    NestedField(22, "big", DecimalType(38, 2)),
)


def bound(e: Expression | str, case_sensitive: bool = True) -> Expression:
    return bind(e, SCHEMA, case_sensitive)


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        # An int literal against a long column.
        ("id < 5", LessThan("id", 5)),
        ("5 < id", GreaterThan("id", 5)),
        # Strings parse to the column's type.
        ("d = '2024-01-02'", EqualTo("d", dt.date(2024, 1, 2))),
        ("d = DATE '2024-01-02'", EqualTo("d", dt.date(2024, 1, 2))),
        ("t < '10:30:00.5'", LessThan("t", dt.time(10, 30, 0, 500000))),
        (
            "ts >= '2024-01-02T10:00:00'",
            GreaterThanOrEqual("ts", dt.datetime(2024, 1, 2, 10)),
        ),
        ("tz = '2024-01-02T10:00:00+02:00'", EqualTo("tz", dt.datetime(2024, 1, 2, 8, tzinfo=UTC))),
        (
            "tz = TIMESTAMP '2024-01-02T08:00:00Z'",
            EqualTo("tz", dt.datetime(2024, 1, 2, 8, tzinfo=UTC)),
        ),
        ("price = '1.5'", EqualTo("price", Decimal("1.50"))),
        ("price = 1.50", EqualTo("price", Decimal("1.50"))),
        ("price = 1.5", EqualTo("price", Decimal("1.50"))),
        ("price < 3", LessThan("price", Decimal("3.00"))),
        ("big = 12345678901234567.89", EqualTo("big", Decimal("12345678901234567.89"))),
        ("u = 'F79C3E09-677C-4BBD-A479-3F349CB785E7'", EqualTo("u", U)),
        ("b = X'0a1b'", EqualTo("b", b"\x0a\x1b")),
        ("fx = X'00010203'", EqualTo("fx", b"\x00\x01\x02\x03")),
        ("flag = true", EqualTo("flag", True)),
        ("dd > 1", GreaterThan("dd", 1.0)),
        ("f < 0.1", LessThan("f", float.fromhex("0x1.99999ap-4"))),  # the float32 nearest 0.1
        # What the types decide becomes a constant (Java's aboveMax / belowMin).
        ("f < 1e40", AlwaysTrue()),
        ("f > 1e40", AlwaysFalse()),
        ("f = -1e40", AlwaysFalse()),
        ("i = 3.5", AlwaysFalse()),
        ("i != 3.5", AlwaysTrue()),
        ("i < 3.5", LessThanOrEqual("i", 3)),
        ("i > 3.5", GreaterThan("i", 3)),
        ("i < 99999999999", AlwaysTrue()),
        ("id < 99999999999999999999999", AlwaysTrue()),
        ("id > -99999999999999999999999", AlwaysTrue()),
        # 1e400 reads as an exact Decimal: beyond the largest double, yet not infinity.
        ("dd = 1e400", AlwaysFalse()),
        ("dd != 1e400", AlwaysTrue()),
        ("dd < 1e400", LessThanOrEqual("dd", sys.float_info.max)),
        ("dd >= 1e400", GreaterThan("dd", sys.float_info.max)),
        ("dd > -1e400", GreaterThan("dd", -math.inf)),
        ("dd < FLOAT 'inf'", LessThan("dd", math.inf)),
        ("price = 1.234", AlwaysFalse()),
        ("price < 1.234", LessThanOrEqual("price", Decimal("1.23"))),
        ("price > 12345678901234567.89", AlwaysFalse()),
        ("id IS NULL", AlwaysFalse()),
        ("id IS NOT NULL", AlwaysTrue()),
        ("i IN (2, 2.5, 1099511627776, 2)", EqualTo("i", 2)),
        ("i IN (2.5)", AlwaysFalse()),
        ("i NOT IN (2.5)", AlwaysTrue()),
        ("i IN (3, 1, 2)", In("i", [1, 2, 3])),
        ("f < 1e40 AND i = 1", EqualTo("i", 1)),
        ("f > 1e40 OR i = 1", EqualTo("i", 1)),
        ("NOT f > 1e40", AlwaysTrue()),
        ("NOT i = 1", Not(EqualTo("i", 1))),
        ("s LIKE 'ab%'", StartsWith("s", "ab")),
        ("dd IS NAN", IsNaN("dd")),
        ("\"My Col\" = 'x'", EqualTo("My Col", "x")),
        ("loc.City = 'x'", EqualTo("loc.City", "x")),
        ("loc.lat IS NOT NULL", NotNull("loc.lat")),
        # A transform's values have its result type.
        ("bucket[16](id) = 3", EqualTo(Transform("bucket[16]", "id"), 3)),
        ("truncate[2](s) = 'ab'", EqualTo(Transform("truncate[2]", "s"), "ab")),
        ("day(ts) = '2024-01-02'", EqualTo(Transform("day", "ts"), dt.date(2024, 1, 2))),
    ],
)
def test_binding(filter: str, expected: Expression) -> None:
    assert bound(filter) == expected
    assert bound(parse(filter)) == expected


def test_python_values_bind() -> None:
    assert bound(col("d") == dt.date(2024, 1, 2)) == EqualTo("d", dt.date(2024, 1, 2))
    # A date against a timestamp column is midnight of that day.
    assert bound(col("ts") >= dt.date(2024, 1, 2)) == parse("ts >= TIMESTAMP '2024-01-02T00:00'")
    aware = dt.datetime(2024, 1, 2, 10, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert bound(col("tz") < aware) == LessThan("tz", dt.datetime(2024, 1, 2, 8, tzinfo=UTC))
    assert bound(col("price") == Decimal("1.5")) == EqualTo("price", Decimal("1.50"))
    assert bound(col("u") == U) == EqualTo("u", U)
    assert bound(col("b").isin([b"\x01", b"\x00"])) == In("b", [b"\x00", b"\x01"])
    assert bound(col("i") < 2**70) == AlwaysTrue()
    assert bound(col("dd") < float("inf")) == LessThan("dd", float("inf"))
    assert bound(col("t") == dt.time(1, 2, 3)) == EqualTo("t", dt.time(1, 2, 3))


def test_timestamp_ns_values_stay_text() -> None:
    e = bound("ts_ns = '2024-01-01T00:00:00.000000001'")
    assert e == EqualTo("ts_ns", "2024-01-01T00:00:00.000000001")
    # ... which binds back to the same nanosecond.
    assert bound(e) == e


def test_case_insensitive_binding_on_request() -> None:
    with pytest.raises(UnknownFieldError, match="cannot find column"):
        bound("ID < 5")
    assert bound("ID < 5", case_sensitive=False) == LessThan("id", 5)
    assert bound("LOC.city = 'x'", case_sensitive=False) == EqualTo("loc.City", "x")
    assert bound("\"my col\" = 'x'", case_sensitive=False) == EqualTo("My Col", "x")


@pytest.mark.parametrize(
    ("filter", "error", "parts"),
    [
        ("i = 'a'", ValidationError, ["i", "int", '"a"']),
        ("s = 5", ValidationError, ["s", "string", "5"]),
        ("s IS NAN", ValidationError, ["IS NAN", "s", "string"]),
        ("nope = 1", UnknownFieldError, ["nope"]),
        ("loc.nope = 1", UnknownFieldError, ["loc.nope"]),
        ("tags.element = 'a'", ValidationError, ["tags.element", "list or map"]),
        ("d = 'soon'", ValidationError, ["d", "date", "soon"]),
        ("ts = 'x'", ValidationError, ["ts", "timestamp", '"x"']),
        ("tz = '2024-01-02T10:00:00'", ValidationError, ["tz", "timestamptz", "zone offset"]),
        ("ts = '2024-01-02T10:00:00+01:00'", ValidationError, ["ts", "timestamp", "zone offset"]),
        ("price = 'cheap'", ValidationError, ["price", "decimal(9, 2)", "cheap"]),
        ("u = 'not-a-uuid'", ValidationError, ["u", "uuid", "not-a-uuid"]),
        ("b = 'ab'", ValidationError, ["b", "binary", '"ab"']),
        ("fx = X'01'", ValidationError, ["fx", "fixed[4]"]),
        ("i LIKE 'a%'", ValidationError, ["STARTS WITH", "string column", "i", "int"]),
        ("loc = 1", ValidationError, ["loc", "struct"]),
        ("loc IS NULL", ValidationError, ["loc", "struct"]),
        ("flag = 1", ValidationError, ["flag", "boolean", "1"]),
        ("tz = TIMESTAMP '2024-01-02T10:00:00'", ValidationError, ["tz", "no time zone"]),
        ("bucket[4](loc) = 1", ValidationError, ["bucket[4]", "loc"]),
    ],
)
def test_impossible_comparisons_name_column_type_and_literal(
    filter: str, error: type[Exception], parts: list[str]
) -> None:
    with pytest.raises(error) as info:
        bound(filter)
    message = str(info.value)
    for part in parts:
        assert part in message, (part, message)


def test_bind_refuses_bad_arguments() -> None:
    with pytest.raises(FrazilTypeError, match="Schema"):
        bind(EqualTo("i", 1), SCHEMA.to_json())  # type: ignore[arg-type]
    with pytest.raises(FrazilTypeError, match="expression"):
        bind(5, SCHEMA)  # type: ignore[arg-type]


def test_from_json_with_schema_types_plain_values() -> None:
    # What Java writes for a bound filter: Appendix D JSON of each column's type.
    node = {
        "type": "and",
        "left": {"type": "eq", "term": "d", "value": "2024-01-02"},
        "right": {"type": "in", "term": "b", "values": ["0a1b", "ff"]},
    }
    assert from_json(node, SCHEMA) == And(
        EqualTo("d", dt.date(2024, 1, 2)), In("b", [b"\x0a\x1b", b"\xff"])
    )
    # Without a schema, plain strings stay strings.
    assert from_json(node) == And(EqualTo("d", "2024-01-02"), In("b", ["0a1b", "ff"]))
    assert from_json({"type": "eq", "term": "ID", "value": 1}, SCHEMA, case_sensitive=False) == (
        EqualTo("ID", 1)
    )
    with pytest.raises(UnknownFieldError, match="nope"):
        from_json({"type": "eq", "term": "nope", "value": 1}, SCHEMA)


# --- binding is stable: a bound expression binds to itself -----------------------------------

COLUMN_VALUES: list[tuple[str, st.SearchStrategy[Any]]] = [
    ("id", st.integers(-(2**70), 2**70)),
    ("i", st.one_of(st.integers(-(2**40), 2**40), st.floats(allow_nan=False))),
    ("f", st.floats(allow_nan=False)),
    ("dd", st.one_of(st.floats(allow_nan=False), st.integers(-(2**60), 2**60))),
    ("s", st.text(st.characters(exclude_categories=("Cs",)), max_size=5)),
    ("d", st.one_of(st.dates(), st.dates().map(str))),
    ("t", st.times()),
    ("ts", st.datetimes()),
    ("tz", st.datetimes(timezones=st.just(UTC))),
    (
        "price",
        st.one_of(
            st.decimals(allow_nan=False, allow_infinity=False, places=3, max_value=10**8),
            st.integers(-(10**8), 10**8),
        ),
    ),
    ("u", st.uuids()),
    ("b", st.binary(max_size=4)),
    ("flag", st.booleans()),
]


@st.composite
def predicates_on_schema(draw: st.DrawFn) -> Expression:
    name, values = draw(st.sampled_from(COLUMN_VALUES))
    kind = draw(st.sampled_from(["cmp", "in", "null"]))
    if kind == "in":
        cls = draw(st.sampled_from([In, NotIn]))
        return cls(name, draw(st.lists(values, max_size=4, unique_by=lambda v: v)))
    if kind == "null":
        return draw(st.sampled_from([IsNull, NotNull]))(name)
    op = draw(st.sampled_from([EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan]))
    return op(name, draw(values))


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        predicates_on_schema(),
        lambda c: st.one_of(st.builds(And, c, c), st.builds(Or, c, c), st.builds(Not, c)),
        max_leaves=5,
    )
)
def test_bound_expressions_bind_to_themselves(e: Expression) -> None:
    once = bound(e)
    assert bound(once) == once
    assert from_json(once.to_json(), SCHEMA) == once
