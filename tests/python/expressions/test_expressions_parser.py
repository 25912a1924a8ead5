"""frazil.expressions.parse: every construct of the text form, and its error messages."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

import pytest
from frazil.errors import ExpressionSyntaxError, ValidationError
from frazil.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
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
    StartsWith,
    Transform,
    parse,
)
from hypothesis import given, settings
from hypothesis import strategies as st

a1, b2, c3 = EqualTo("a", 1), EqualTo("b", 2), EqualTo("c", 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id = 5", EqualTo("id", 5)),
        ("id == 5", EqualTo("id", 5)),
        ("id != 5", NotEqualTo("id", 5)),
        ("id <> 5", NotEqualTo("id", 5)),
        ("id < 5", LessThan("id", 5)),
        ("id <= 5", LessThanOrEqual("id", 5)),
        ("id > 5", GreaterThan("id", 5)),
        ("id >= 5", GreaterThanOrEqual("id", 5)),
        ("id>=5", GreaterThanOrEqual("id", 5)),
        # A literal on the left flips the comparison.
        ("5 < id", GreaterThan("id", 5)),
        ("5 <= id", GreaterThanOrEqual("id", 5)),
        ("5 > id", LessThan("id", 5)),
        ("5 >= id", LessThanOrEqual("id", 5)),
        ("'a' = s", EqualTo("s", "a")),
        ("true != b", NotEqualTo("b", True)),
        ("DATE '2024-01-02' <= d", GreaterThanOrEqual("d", dt.date(2024, 1, 2))),
        ("x IN (1, 2, 3)", In("x", [1, 2, 3])),
        ("x in (1)", In("x", [1])),
        ("x IN ()", In("x", [])),
        ("x NOT IN ('a', 'b')", NotIn("x", ["a", "b"])),
        ("x IS NULL", IsNull("x")),
        ("x is not null", NotNull("x")),
        ("x IS NAN", IsNaN("x")),
        ("x IS NOT NaN", NotNaN("x")),
        ("s LIKE 'ab%'", StartsWith("s", "ab")),
        ("s like '%'", StartsWith("s", "")),
        ("s NOT LIKE 'ab%'", NotStartsWith("s", "ab")),
        # A pattern without a wildcard is equality, as in SQL.
        ("s LIKE 'ab'", EqualTo("s", "ab")),
        ("s NOT LIKE 'ab'", NotEqualTo("s", "ab")),
        ("s STARTS WITH 'a_b%'", StartsWith("s", "a_b%")),
        ("s NOT STARTS WITH 'a'", NotStartsWith("s", "a")),
        ("TRUE", AlwaysTrue()),
        ("false", AlwaysFalse()),
        ("NOT a = 1", Not(a1)),
        ("NOT NOT a = 1", Not(Not(a1))),
        ("a = 1 AND b = 2", And(a1, b2)),
        ("a = 1 and b = 2 AND c = 3", And(And(a1, b2), c3)),
        ("a = 1 OR b = 2 AND c = 3", Or(a1, And(b2, c3))),
        ("a = 1 AND b = 2 OR c = 3", Or(And(a1, b2), c3)),
        ("(a = 1 OR b = 2) AND c = 3", And(Or(a1, b2), c3)),
        ("NOT a = 1 AND b = 2", And(Not(a1), b2)),
        ("NOT (a = 1 AND b = 2)", Not(And(a1, b2))),
        ("((a = 1))", a1),
        ("a = 1 AND TRUE", And(a1, AlwaysTrue())),
        ('"my col" = 1', EqualTo("my col", 1)),
        ('"say ""hi""" = 1', EqualTo('say "hi"', 1)),
        ('"and" = 1', EqualTo("and", 1)),
        ("location.city = 'x'", EqualTo("location.city", "x")),
        ('"a.b".c = 1', EqualTo("a.b.c", 1)),
        ('loc."my city" IS NULL', IsNull("loc.my city")),
        ("date = DATE '2024-01-02'", EqualTo("date", dt.date(2024, 1, 2))),
        ("bucket[16](id) = 3", EqualTo(Transform("bucket[16]", "id"), 3)),
        ("TRUNCATE[4](s) = 'ab'", EqualTo(Transform("truncate[4]", "s"), "ab")),
        ('day("my ts") IS NULL', IsNull(Transform("day", "my ts"))),
        ("year(loc.ts) > 50", GreaterThan(Transform("year", "loc.ts"), 50)),
    ],
)
def test_constructs(text: str, expected: Any) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("-7", -7),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("-170141183460469231731687303715884105729", -170141183460469231731687303715884105729),
        ("1.5", 1.5),
        ("1.50", 1.5),  # the float holds 1.50 exactly as written
        ("-2.5e3", -2500.0),
        ("1E-3", 0.001),
        ("0.1", 0.1),
        ("-0.0", -0.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e+16", 1e16),
        # No float holds these as written: they stay exact decimals.
        ("12345678901234567.89", Decimal("12345678901234567.89")),
        ("0.10000000000000000001", Decimal("0.10000000000000000001")),
        ("1e400", Decimal("1e400")),
        ("true", True),
        ("FALSE", False),
        ("'it''s'", "it's"),
        ("''", ""),
        ("'é ☃ 𝄞'", "é ☃ 𝄞"),
        ("X'0a1B'", b"\x0a\x1b"),
        ("x''", b""),
        ("DATE '2024-01-02'", dt.date(2024, 1, 2)),
        ("time '10:30:00.000001'", dt.time(10, 30, 0, 1)),
        ("TIMESTAMP '2024-01-02T10:30:00'", dt.datetime(2024, 1, 2, 10, 30)),
        ("TIMESTAMP '2024-01-02 10:30:00'", dt.datetime(2024, 1, 2, 10, 30)),
        (
            "TIMESTAMP '2024-01-02T10:30:00+02:00'",
            dt.datetime(2024, 1, 2, 8, 30, tzinfo=dt.timezone.utc),
        ),
        (
            "TIMESTAMP '2024-01-02T10:30:00Z'",
            dt.datetime(2024, 1, 2, 10, 30, tzinfo=dt.timezone.utc),
        ),
        ("DECIMAL '1.50'", Decimal("1.50")),
        (
            "uuid 'F79C3E09-677C-4BBD-A479-3F349CB785E7'",
            uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        ),
        ("FLOAT '-inf'", -math.inf),
        ("FLOAT '1.25'", 1.25),
    ],
)
def test_values(text: str, value: Any) -> None:
    parsed = parse(f"x = {text}")
    assert parsed == EqualTo("x", value)
    assert isinstance(parsed, EqualTo)
    assert type(parsed.value) is type(value)


def test_quoted_text_stays_text_until_bound() -> None:
    # Dates, timestamps, decimals and UUIDs as plain quoted text are strings here; binding
    # converts them to the column's type.
    assert parse("d = '2024-01-02'") == EqualTo("d", "2024-01-02")
    assert parse("p = '1.50'") == EqualTo("p", "1.50")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id <", "expected a value after '<' at position 5, found end of input"),
        ("id < )", "expected a value after '<' at position 6, found ')'"),
        ("", "expected a filter at position 1, found an empty string"),
        (
            "id",
            "expected a comparison operator (=, !=, <>, <, <=, >, >=), IS, IN, LIKE, BETWEEN "
            "or STARTS WITH after 'id' at position 3, found end of input",
        ),
        ("a = 1 b = 2", "expected AND, OR or the end of the filter after '1' at position 7"),
        ("(a = 1", "expected ')' (to close the '(' at position 1) after '1' at position 7"),
        ("a = 1 AND", "expected a column name, NOT, TRUE, FALSE or '(' after 'AND' at position 10"),
        ("x IN (1, 2", "expected ',' or ')' in the list of values after '2' at position 11"),
        ("x IN 1", "expected '(' to open the list of values after 'IN' at position 6"),
        ("x IS 5", "expected NULL or NAN after 'IS' at position 6, found '5'"),
        ("x NOT 5", "expected IN, LIKE, BETWEEN or STARTS WITH after 'NOT' at position 7"),
        ('x = "a"', '"a" is a quoted column name, not a value: write text in single quotes'),
        ("x BETWEEN 1 OR 2", "expected AND after '1' at position 13, found 'OR'"),
        ("x = NULL", "NULL is not a value: test for null with IS NULL at position 5"),
        ("x = nan", "NaN is not a value: test for NaN with IS NAN at position 5"),
        ("x = 'abc", "unterminated string: expected a closing ' at position 9"),
        ('"abc = 1', "unterminated quoted identifier"),
        ('"" = 1', "a quoted identifier must not be empty at position 1"),
        ("x = 1 # 2", "unexpected character '#' at position 7"),
        ("x = 5abc", "malformed number '5a': expected a number at position 5"),
        ("x = X'0g'", "invalid binary literal X'0g': expected pairs of hex digits at position 5"),
        ("x = X'abc'", "invalid binary literal"),
        ("d = DATE '2024-13-01'", "invalid DATE literal '2024-13-01'"),
        ("d = UUID 'nope'", "invalid UUID literal 'nope'"),
        ("d = FLOAT 'nan'", "IS NAN"),
        ("s LIKE 'a%b'", "'%' in the LIKE pattern 'a%b' is supported only at the end"),
        ("s LIKE '%ab'", "is supported only at the end"),
        ("s LIKE 'a_b%'", "'_' in the LIKE pattern 'a_b%' is not supported"),
        ("s LIKE 5", "expected a quoted pattern such as 'abc%' after 'LIKE' at position 8"),
        ("s STARTS 'a'", "expected WITH after 'STARTS' at position 10"),
        ("bucket[0](x) = 1", "invalid transform 'bucket[0]'"),
        ("bucket[x](y) = 1", "expected the parameter of bucket[N]"),
        ("bucket(x) = 1", "invalid transform 'bucket'"),
        ("a. = 1", "expected a field name after '.' after '.' at position 4"),
        ("5 IS NULL", "expected a comparison operator (=, !=, <>, <, <=, >, >=) after '5'"),
        ("x IN (1, 1.0)", "equal in Python"),
    ],
)
def test_syntax_errors_name_the_position(text: str, message: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        parse(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValidationError) and isinstance(info.value, ValueError)


def test_deeply_nested_parentheses() -> None:
    assert parse("(" * 200 + "a = 1" + ")" * 200) == a1


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=30),
        st.lists(
            st.sampled_from(
                [
                    "a",
                    "=",
                    "1",
                    "'s'",
                    "(",
                    ")",
                    "AND",
                    "OR",
                    "NOT",
                    "IN",
                    "IS",
                    "NULL",
                    "LIKE",
                    ",",
                    ".",
                    "X'0a'",
                    "DATE",
                    "'2024-01-02'",
                    "bucket[2]",
                    "<",
                    "1.5",
                ]
            ),
            max_size=12,
        ).map(" ".join),
    )
)
def test_any_text_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        e = parse(text)
    except ExpressionSyntaxError:
        return
    assert parse(str(e)) == e
