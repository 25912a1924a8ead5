"""frazil.expressions: the classes, the builder, and the round trips through text and JSON."""

from __future__ import annotations

import datetime as dt
import json
import math
import pickle
import uuid
from decimal import Decimal
from typing import Any

import frazil.expressions
import pytest
from expression_strategies import LITERALS, NAMES, RUST_KINDS, TERMS, expressions
from frazil import _native
from frazil.errors import FrazilError, FrazilTypeError, ValidationError
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
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Reference,
    StartsWith,
    Transform,
    col,
    from_json,
    parse,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# --- round trips -------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(expressions())
def test_text_round_trip(e: Expression) -> None:
    text = str(e)
    again = parse(text)
    assert again == e, text
    assert hash(again) == hash(e)
    assert str(again) == text


@settings(max_examples=400, deadline=None)
@given(expressions())
def test_json_round_trip(e: Expression) -> None:
    data = e.to_json()
    assert from_json(data) == e
    # Through JSON text too, with nothing Python-specific left in it.
    text = e.to_json_text()
    assert json.loads(text) == data
    assert from_json(text) == e


@settings(max_examples=300, deadline=None)
@given(expressions(RUST_KINDS))
def test_rust_reads_what_python_writes(e: Expression) -> None:
    """Rust's reader and its tagged writer agree with Python's on every value."""
    assert from_json(_native.unbound_expression_json(e.to_json_text())) == e


@settings(deadline=None)
@given(expressions())
def test_expressions_pickle(e: Expression) -> None:
    # Filters travel to other processes (Spark executors) by pickle.
    again = pickle.loads(pickle.dumps(e))
    assert again == e and hash(again) == hash(e)


@settings(deadline=None)
@given(expressions())
def test_equal_expressions_hash_equal_and_repr_rebuilds(e: Expression) -> None:
    copy = from_json(e.to_json())
    assert copy == e and hash(copy) == hash(e)
    assert {e, copy} == {e}
    namespace = dict(vars(frazil.expressions), datetime=dt, Decimal=Decimal, UUID=uuid.UUID)
    namespace["inf"] = math.inf
    assert eval(repr(e), namespace) == e


def test_json_form_is_javas() -> None:
    e = And(
        In("id", [3, 1, 2]),
        Or(GreaterThanOrEqual("d", 5), Not(IsNull(Transform("bucket[4]", "s")))),
    )
    assert e.to_json() == {
        "type": "and",
        "left": {"type": "in", "term": "id", "values": [1, 2, 3]},
        "right": {
            "type": "or",
            "left": {"type": "gt-eq", "term": "d", "value": 5},
            "right": {
                "type": "not",
                "child": {
                    "type": "is-null",
                    "term": {"type": "transform", "transform": "bucket[4]", "term": "s"},
                },
            },
        },
    }
    assert AlwaysTrue().to_json() is True and AlwaysFalse().to_json() is False


def test_json_tags_what_plain_json_cannot_carry() -> None:
    def value(v: Any) -> Any:
        return EqualTo("x", v).to_json()["value"]

    assert value(5) == 5 and value(True) is True and value(1.5) == 1.5
    assert value(2**63) == {"@": "int", "v": str(2**63)}
    assert value(-(2**63)) == -(2**63)
    assert value(math.inf) == {"@": "float", "v": "inf"}
    assert value(-math.inf) == {"@": "float", "v": "-inf"}
    assert value("0a") == {"@": "string", "v": "0a"}
    assert value(b"\x0a\x1b") == {"@": "binary", "v": "0a1b"}
    assert value(Decimal("1.50")) == {"@": "decimal", "v": "1.50"}
    assert value(dt.date(1970, 1, 2)) == {"@": "date", "v": 1}
    assert value(dt.date(1969, 12, 31)) == {"@": "date", "v": -1}
    assert value(dt.time(0, 0, 1, 5)) == {"@": "time", "v": 1_000_005}
    assert value(dt.datetime(1970, 1, 1, 0, 0, 0, 7)) == {"@": "timestamp", "v": 7}
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert value(dt.datetime(1970, 1, 1, 2, tzinfo=plus_two)) == {"@": "timestamptz", "v": 0}
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    assert value(u) == {"@": "uuid", "v": str(u)}


def test_from_json_reads_javas_plain_values_and_variants() -> None:
    e = from_json(
        '{"type": "AND", "left": {"type": "lt_eq", "term": {"type": "reference", "term": "a"},'
        ' "value": 1.5}, "right": {"type": "literal", "value": true}}'
    )
    assert e == And(LessThanOrEqual("a", 1.5), AlwaysTrue())
    assert from_json({"type": "not-in", "term": "s", "values": ["a", "b"]}) == NotIn(
        "s", {"a", "b"}
    )
    assert from_json(False) == AlwaysFalse()
    assert from_json({"type": "true"}) == AlwaysTrue()


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"type": "eq", "term": "s"}, 'needs a "value"'),
        ({"type": "is-null", "term": "s", "value": 1}, "takes no value"),
        ({"type": "between", "term": "s"}, "unknown type"),
        ({"type": "in", "term": "s", "values": 1}, '"values" array'),
        ({"type": "eq", "term": 5, "value": 1}, "a term is a name"),
        ({"type": "eq", "term": "s", "value": {"@": "date", "v": "x"}}, "must be an integer"),
        ({"type": "eq", "term": "s", "value": {"@": "when", "v": 1}}, "unknown value tag"),
        ({"type": "eq", "term": "s", "value": [1]}, "a value must be"),
        ({"type": "and", "left": True}, "missing 'right'"),
        ("[1", "not valid JSON"),
        (7, "expected an object or a boolean"),
    ],
)
def test_from_json_refuses_bad_input(node: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        from_json(node)


def test_from_json_refuses_nan() -> None:
    with pytest.raises(ValidationError, match="IsNaN"):
        from_json({"type": "eq", "term": "x", "value": {"@": "float", "v": "nan"}})


# --- the classes ---------------------------------------------------------------------------------


@settings(deadline=None)
@given(NAMES, st.sampled_from(list(LITERALS)).flatmap(lambda k: LITERALS[k]))
def test_builder_builds_what_the_constructors_build(name: str, v: Any) -> None:
    c = col(name)
    assert (c == v) == EqualTo(name, v)
    assert (c != v) == NotEqualTo(name, v)
    assert (c < v) == LessThan(name, v)
    assert (c <= v) == LessThanOrEqual(name, v)
    assert (c > v) == GreaterThan(name, v)
    assert (c >= v) == GreaterThanOrEqual(name, v)
    assert c.isin([v]) == c.is_in([v]) == In(name, [v]) == In(Reference(name), (v,))
    assert c.notin([v]) == c.not_in([v]) == NotIn(name, [v])
    assert c.is_null() == IsNull(name) and c.not_null() == NotNull(name)
    assert c.is_nan() == IsNaN(name) and c.not_nan() == NotNaN(name)
    assert c.starts_with("ab") == StartsWith(name, "ab")
    assert c.not_starts_with("ab") == NotStartsWith(name, "ab")


def test_builder_operators_and_reflection() -> None:
    x = col("x")
    assert (5 < x) == GreaterThan("x", 5)
    assert (5 >= x) == LessThanOrEqual("x", 5)
    a, b, c = EqualTo("a", 1), EqualTo("b", 2), EqualTo("c", 3)
    assert (a & b) == And(a, b)
    assert (a | b) == Or(a, b)
    assert ~a == Not(a)
    assert ~~a == a
    assert And(a, b, c) == And(And(a, b), c) == parse("a = 1 AND b = 2 AND c = 3")
    assert Or(a, b, c) == Or(Or(a, b), c) == parse("a = 1 OR b = 2 OR c = 3")
    # The operators fold constants, as Java's Expressions.and/or/not do.
    assert (a & AlwaysTrue()) == a and (AlwaysTrue() & a) == a
    assert (a & AlwaysFalse()) == AlwaysFalse() and (a | AlwaysTrue()) == AlwaysTrue()
    assert (a | AlwaysFalse()) == a
    assert ~AlwaysTrue() == AlwaysFalse() and ~AlwaysFalse() == AlwaysTrue()
    assert col("location.city").ref == Reference("location.city")
    assert a.negate() == NotEqualTo("a", 1) and In("x", [1]).negate() == NotIn("x", [1])
    assert IsNull("x").negate() == NotNull("x") and StartsWith("s", "a").negate() == NotStartsWith(
        "s", "a"
    )


def test_truth_value_is_refused() -> None:
    with pytest.raises(FrazilTypeError, match=r"& \(and\)"):
        bool(EqualTo("a", 1))
    with pytest.raises(FrazilError, match="a < b < c"):
        1 < col("a") < 3  # noqa: B015 - the point: a chained comparison needs a truth value
    with pytest.raises(FrazilTypeError):
        if col("a") == 1:
            pass
    with pytest.raises(FrazilTypeError, match="another column"):
        col("a") == col("b")  # noqa: B015
    with pytest.raises(TypeError):
        hash(col("a"))


def test_literal_kinds_are_kept_apart() -> None:
    assert EqualTo("x", 1) != EqualTo("x", True)
    assert EqualTo("x", 1) != EqualTo("x", 1.0)
    assert EqualTo("x", 0.0) != EqualTo("x", -0.0)
    assert EqualTo("x", Decimal("1.5")) != EqualTo("x", 1.5)
    assert EqualTo("x", "a") != EqualTo("x", b"a")
    assert EqualTo("x", dt.date(2024, 1, 1)) != EqualTo("x", dt.datetime(2024, 1, 1))
    # The same instant is the same timestamptz literal.
    utc = dt.datetime(2024, 1, 1, 8, tzinfo=dt.timezone.utc)
    plus_two = dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert EqualTo("t", utc) == EqualTo("t", plus_two)
    assert hash(EqualTo("t", utc)) == hash(EqualTo("t", plus_two))
    assert In("x", [1, 2]) == In("x", (2, 1, 2)) and In("x", [1]) != NotIn("x", [1])
    assert In("x", [2, 1, 2]).values == (1, 2)
    # 0.0 and -0.0 are distinct Iceberg literals (-0.0 first), though Python calls them equal.
    both = In("f", [0.0, -0.0]).values
    assert len(both) == 2 and [math.copysign(1.0, v) for v in both] == [-1.0, 1.0]  # type: ignore[arg-type]
    assert EqualTo("x", bytearray(b"ab")).value == b"ab"


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: EqualTo("x", None), ValidationError, "IsNull"),
        (lambda: EqualTo("x", math.nan), ValidationError, "IsNaN"),
        (lambda: EqualTo("x", [1]), FrazilTypeError, r"\[1\] \(list\) is not a supported literal"),
        (lambda: EqualTo("x", object()), FrazilTypeError, "object"),
        (lambda: EqualTo("x", Decimal("NaN")), ValidationError, "not a finite decimal"),
        (lambda: EqualTo("x", dt.time(1, tzinfo=dt.timezone.utc)), ValidationError, "tzinfo"),
        (lambda: In("x", "abc"), FrazilTypeError, "collection"),
        (lambda: In("x", [1, 1.0]), ValidationError, "1 and 1.0"),
        (lambda: In("x", [True, 1]), ValidationError, "equal in Python"),
        (lambda: StartsWith("x", 5), FrazilTypeError, "prefix must be a str"),
        (lambda: EqualTo("", 1), ValidationError, "must not be empty"),
        (lambda: EqualTo(5, 1), FrazilTypeError, "column name"),
        (lambda: Transform("bucket[0]", "x"), FrazilError, "bucket"),
        (lambda: And(EqualTo("a", 1), True), FrazilTypeError, "expected an expression"),
    ],
)
def test_bad_construction_is_refused(make: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make()


def test_repr_and_str_read_well() -> None:
    e = And(LessThan("id", 5), Not(In("name", ["b", "a"])))
    assert repr(e) == "And(LessThan('id', 5), Not(In('name', ['a', 'b'])))"
    assert str(e) == "id < 5 AND NOT name IN ('a', 'b')"
    assert str(Or(And(EqualTo("a", 1), EqualTo("b", 2)), EqualTo("c", 3))) == (
        "a = 1 AND b = 2 OR c = 3"
    )
    assert str(And(EqualTo("a", 1), Or(EqualTo("b", 2), EqualTo("c", 3)))) == (
        "a = 1 AND (b = 2 OR c = 3)"
    )
    # AND and OR are flat (n-ary): a nested chain of the same kind is spliced in.
    nested = And(EqualTo("a", 1), And(EqualTo("b", 2), EqualTo("c", 3)))
    assert str(nested) == "a = 1 AND b = 2 AND c = 3"
    assert repr(nested) == "And(EqualTo('a', 1), EqualTo('b', 2), EqualTo('c', 3))"
    assert str(EqualTo("my col", "it's")) == "\"my col\" = 'it''s'"
    assert str(IsNull("and")) == '"and" IS NULL'
    assert str(StartsWith("s", "ab")) == "s LIKE 'ab%'"
    assert str(NotStartsWith("s", "a_b")) == "s NOT STARTS WITH 'a_b'"
    assert str(EqualTo(Transform("BUCKET[16]", "id"), 3)) == "bucket[16](id) = 3"
    assert repr(Transform("bucket[16]", "id")) == "Transform('bucket[16]', 'id')"
    assert str(EqualTo("d", dt.date(2024, 1, 2))) == "d = DATE '2024-01-02'"
    assert str(EqualTo("b", b"\x0a\x1b")) == "b = X'0a1b'"
    assert str(EqualTo("f", math.inf)) == "f = FLOAT 'inf'"
    assert str(In("x", [])) == "x IN ()"


@settings(deadline=None)
@given(TERMS)
def test_terms_are_values(term: Reference | Transform) -> None:
    again = from_json(IsNull(term).to_json())
    assert isinstance(again, IsNull)
    assert again.term == term and hash(again.term) == hash(term)
    assert parse(f"{term} IS NULL") == IsNull(term)
