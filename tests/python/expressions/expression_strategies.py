"""Hypothesis strategies for random filter expressions: names that need quoting, every kind
of literal, every predicate, nested AND / OR / NOT."""

from __future__ import annotations

import datetime as dt
from typing import Any

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
)
from hypothesis import strategies as st

# Text without lone surrogates (not valid UTF-8, so not valid JSON for Rust's reader).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)

NAME_PARTS = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
    st.sampled_from(["and", "OR", "not", "in", "Is", "null", "nan", "like", "true", "date"]),
    st.sampled_from(["my col", 'q"uote', "x'y", "1st", "é", "a-b", " ", "(", ","]),
    TEXT.filter(bool),
)
NAMES = st.lists(NAME_PARTS, min_size=1, max_size=3).map(".".join)

TRANSFORMS = st.one_of(
    st.sampled_from(["identity", "year", "month", "day", "hour", "void"]),
    st.integers(1, 1000).map(lambda n: f"bucket[{n}]"),
    st.integers(1, 1000).map(lambda n: f"truncate[{n}]"),
)
TERMS = st.one_of(
    NAMES.map(Reference),
    st.builds(Transform, TRANSFORMS, NAMES),
)

OFFSETS = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
    lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
)

INTS = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**127), 2**127 - 1))
LITERALS: dict[str, st.SearchStrategy[Any]] = {
    "bool": st.booleans(),
    "int": INTS,
    "bigint": st.integers(-(2**200), 2**200),
    "float": st.floats(allow_nan=False),
    "str": TEXT,
    "bytes": st.binary(max_size=8),
    "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=None),
    "date": st.dates(),
    "time": st.times(),
    "timestamp": st.datetimes(),
    "timestamptz": st.datetimes(timezones=OFFSETS),
    "uuid": st.uuids(),
}
# What Rust's tagged reader carries (ints within i128).
RUST_KINDS = [k for k in LITERALS if k != "bigint"]

LITERAL_CLASSES = [EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]
UNARY_CLASSES = [IsNull, NotNull, IsNaN, NotNaN]


def predicates(kinds: list[str]) -> st.SearchStrategy[Expression]:
    literal = st.sampled_from(kinds).flatmap(lambda k: LITERALS[k])
    # Sets hold values of one kind: values of different kinds may be equal in Python (1, 1.0)
    # and are then refused, which test_expressions_model checks separately.
    value_sets = st.sampled_from(kinds).flatmap(lambda k: st.lists(LITERALS[k], max_size=4))
    return st.one_of(
        st.builds(lambda c, t: c(t), st.sampled_from(UNARY_CLASSES), TERMS),
        st.builds(lambda c, t, v: c(t, v), st.sampled_from(LITERAL_CLASSES), TERMS, literal),
        st.builds(
            lambda c, t, v: c(t, v), st.sampled_from([StartsWith, NotStartsWith]), TERMS, TEXT
        ),
        st.builds(lambda c, t, v: c(t, v), st.sampled_from([In, NotIn]), TERMS, value_sets),
    )


def expressions(kinds: list[str] | None = None) -> st.SearchStrategy[Expression]:
    leaves = st.one_of(
        predicates(kinds or list(LITERALS)),
        st.just(AlwaysTrue()),
        st.just(AlwaysFalse()),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.builds(And, children, children),
            st.builds(Or, children, children),
            st.builds(Not, children),
        ),
        max_leaves=8,
    )


__all__ = ["LITERALS", "NAMES", "RUST_KINDS", "TERMS", "TEXT", "expressions", "predicates"]
