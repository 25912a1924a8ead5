"""Long and deeply nested filters (issue 22). Generated filters (key lists, upserts) join
thousands of terms with AND and OR: a chain of any length is one flat node, written to JSON as a
balanced binary tree (Java's form), so it parses, builds, binds and round-trips without a
recursion limit. Nesting (parentheses, NOT, AND within OR within AND) is refused beyond
MAX_DEPTH with an error that says so and names the limit.
"""

from __future__ import annotations

import copy
import functools
import operator
import pickle
from typing import Any

import pytest
from frazil import Schema
from frazil import types as t
from frazil.errors import ExpressionSyntaxError, ValidationError
from frazil.expressions import (
    MAX_DEPTH,
    And,
    EqualTo,
    Expression,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Not,
    NotEqualTo,
    Or,
    bind,
    from_json,
    parse,
)
from frazil.expressions.parser import MAX_PARENTHESES
from hypothesis import given, settings
from hypothesis import strategies as st

N = 10_000
SCHEMA = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "a", t.IntegerType()),
    t.optional(3, "s", t.StringType()),
)


def json_depth(node: Any) -> int:
    """How deep a ``json.loads`` result nests objects and arrays (without recursion)."""
    deepest = 0
    pending = [(node, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            pending.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, depth + 1) for v in item)
        deepest = max(deepest, depth)
    return deepest


def only_binary_nodes(node: Any) -> bool:
    """Every AND / OR node of expression JSON has exactly ``left`` and ``right`` (Java's
    ``ExpressionParser`` form)."""
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, dict) and item.get("type") in ("and", "or"):
            if set(item) != {"type", "left", "right"}:
                return False
            pending += [item["left"], item["right"]]
        elif isinstance(item, dict) and item.get("type") == "not":
            pending.append(item["child"])
    return True


@pytest.mark.parametrize("word", ["AND", "OR"])
def test_flat_chain_of_ten_thousand_terms(word: str) -> None:
    text = f" {word} ".join(f"id > {i}" for i in range(N))
    e = parse(text)
    cls = And if word == "AND" else Or
    assert isinstance(e, cls) and len(e.operands) == N
    assert e.operands[1234] == GreaterThan("id", 1234)
    assert str(e) == text
    assert parse(str(e)) == e and hash(parse(str(e))) == hash(e)
    j = e.to_json()
    assert only_binary_nodes(j)
    assert json_depth(j) == 14 + 1  # ceil(log2 10,000) binary levels, then the predicate
    assert from_json(j) == e and from_json(e.to_json_text()) == e
    assert bind(e, SCHEMA) == e
    assert bind(text, SCHEMA) == e
    # NOT over the chain binds (Rust pushes it into the 10,000 predicates when it plans).
    assert bind(Not(e), SCHEMA) == Not(e)


def test_mixed_chain_keeps_precedence() -> None:
    text = " OR ".join(f"id = {i} AND a = {i % 7}" for i in range(N // 2))
    e = parse(text)
    assert isinstance(e, Or) and len(e.operands) == N // 2
    assert e.operands[3] == And(EqualTo("id", 3), EqualTo("a", 3))
    assert str(e) == text and parse(str(e)) == e
    assert json_depth(e.to_json()) == 13 + 1 + 1  # the OR, one AND level, the predicate
    assert bind(e, SCHEMA) == e
    # An OR within an AND chain keeps its parentheses.
    text = " AND ".join(f"(id = {i} OR a = {i})" for i in range(1000))
    e = parse(text)
    assert isinstance(e, And) and len(e.operands) == 1000
    assert str(e) == text and parse(str(e)) == e


def test_folded_chains_are_flat() -> None:
    terms = [GreaterThan("id", i) for i in range(N)]
    flat = And(*terms)
    assert functools.reduce(And, terms) == flat
    assert functools.reduce(operator.and_, terms) == flat
    assert functools.reduce(lambda acc, term: And(term, acc), reversed(terms)) == flat
    assert parse(" AND ".join(str(term) for term in terms)) == flat
    folded = functools.reduce(Or, terms)
    assert isinstance(folded, Or) and folded.operands == tuple(terms)
    assert folded == functools.reduce(operator.or_, terms) == Or(*terms)
    assert bind(folded, SCHEMA) == folded
    # A fold shares its prefix with the steps before it; every step is a whole value.
    steps = list(itertools_accumulate(terms[:50]))
    assert [len(s.operands) for s in steps[1:]] == list(range(2, 51))
    assert steps[10] == And(*terms[:11]) and steps[-1] == And(*terms[:50])
    for value in (pickle.loads(pickle.dumps(folded)), copy.deepcopy(folded)):
        assert value == folded and hash(value) == hash(folded)
    # The pyiceberg view: left and right halves of the balanced binary node JSON writes.
    a, b, c = EqualTo("a", 1), EqualTo("a", 2), EqualTo("a", 3)
    assert And(a, b, c).left == And(a, b) and And(a, b, c).right == c
    assert And(a, b) == And(And(a, b).left, And(a, b).right)
    match Or(a, b, c):
        case Or(left, right):
            assert (left, right) == (Or(a, b), c)
    assert len(flat.left.operands) == len(flat.right.operands) == N // 2  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        flat.left = a  # type: ignore[misc]


def itertools_accumulate(terms: list[Expression]) -> list[Expression]:
    out: list[Expression] = []
    for term in terms:
        out.append(term if not out else And(out[-1], term))
    return out


def test_a_folded_chain_of_a_hundred_thousand_terms_is_freed_without_recursion() -> None:
    e: Expression = EqualTo("id", 0)
    for i in range(1, 100_000):
        e = e | EqualTo("id", i)
    assert isinstance(e, Or) and len(e.operands) == 100_000
    del e  # each step holds the one before: freeing the chain must not overflow the C stack


def test_java_left_deep_json_reads_flat() -> None:
    """Java writes ``a AND b AND c`` as ``and(and(a, b), c)``: any depth reads as one node."""
    terms = [LessThan("id", i) for i in range(N)]
    node: Any = terms[0].to_json()
    for term in terms[1:]:
        node = {"type": "and", "left": node, "right": term.to_json()}
    assert from_json(node) == And(*terms)
    # As text, as deep as Python's JSON reader goes.
    ors = [EqualTo("s", str(i)) for i in range(400)]
    text = '{"type":"or","left":' * 399 + ors[0].to_json_text()
    text += "".join(f',"right":{o.to_json_text()}}}' for o in ors[1:])
    assert from_json(text) == Or(*ors)
    broken = '{"type":"or","left":' * 399 + "true}" + ',"right":true}' * 398
    with pytest.raises(ValidationError, match=r"invalid expression JSON \(missing 'right'\)"):
        from_json(broken)
    deep = '{"type":"not","child":' * 5000 + "true" + "}" * 5000
    with pytest.raises(ValidationError, match="nested too deeply"):
        from_json(deep)


def _alternating(depth: int) -> str:
    """``id = 0 AND (id = 1 OR (id = 2 AND (...)))``: ``depth`` levels of AND and OR."""
    head = "".join(f"id = {i} {'AND' if i % 2 == 0 else 'OR'} (" for i in range(depth - 1))
    return head + f"id = {depth - 1} OR id = {depth}" + ")" * (depth - 1)


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("NOT " * N + "id = 1", MAX_DEPTH),
        ("(" * N + "id = 1" + ")" * N, MAX_PARENTHESES),
        (_alternating(N // 10), MAX_DEPTH),
        ("NOT " * (MAX_DEPTH + 1) + "id = 1", MAX_DEPTH),
        (_alternating(MAX_DEPTH + 1), MAX_DEPTH),
        ("(" * (MAX_PARENTHESES + 1) + "id = 1" + ")" * (MAX_PARENTHESES + 1), MAX_PARENTHESES),
    ],
)
def test_deep_nesting_is_a_clear_error(text: str, limit: int) -> None:
    with pytest.raises(ExpressionSyntaxError, match=f"nested too deeply.*at most {limit}\\b"):
        parse(text)


def test_nesting_up_to_the_limit_parses_binds_and_round_trips() -> None:
    deepest = [
        parse("NOT " * MAX_DEPTH + "id = 1"),
        parse(_alternating(MAX_DEPTH)),
        parse("(" * MAX_PARENTHESES + "id = 1" + ")" * MAX_PARENTHESES),
        # A chain of 100 operands (7 levels) each nested 93 deep.
        And(
            *[
                functools.reduce(lambda e, _: Not(e), range(MAX_DEPTH - 7), In("a", [i]))
                for i in range(100)
            ]
        ),
    ]
    for e in deepest:
        assert parse(str(e)) == e
        assert from_json(e.to_json_text()) == e
        bind(e, SCHEMA)  # Rust reads the JSON of anything the model accepts
    assert bind(deepest[0], SCHEMA) == EqualTo("id", 1)  # NOT NOT ... cancels out


@pytest.mark.parametrize(
    "make",
    [
        lambda: functools.reduce(lambda e, _: Not(e), range(MAX_DEPTH + 1), IsNull("s")),
        lambda: functools.reduce(
            lambda e, i: Or(And(e, EqualTo("id", i)), EqualTo("a", i)), range(N), IsNull("s")
        ),
        # 100 operands (7 levels) each nested 94 deep.
        lambda: And(
            *[
                functools.reduce(lambda e, _: Not(e), range(MAX_DEPTH - 6), EqualTo("id", i))
                for i in range(100)
            ]
        ),
    ],
)
def test_building_too_deep_an_expression_is_a_clear_error(make: Any) -> None:
    with pytest.raises(ValidationError, match=f"nested too deeply.*at most {MAX_DEPTH}"):
        make()


PREDICATES = st.builds(
    lambda cls, i: cls("id", i) if cls is not In else In("a", [i, i + 1]),
    st.sampled_from([EqualTo, NotEqualTo, LessThan, GreaterThan, In]),
    st.integers(-50, 50),
)


@st.composite
def long_filters(draw: st.DrawFn) -> Expression:
    """A long filter: chains of up to a few thousand operands, nested a few levels, built
    by the constructors, the operators or a fold."""
    depth = draw(st.integers(0, 3))

    def build(level: int) -> Expression:
        if level == depth:
            return draw(PREDICATES)
        width = draw(st.sampled_from([2, 3, 50, 1000, 3000] if level == 0 else [2, 3, 7]))
        operands = [build(level + 1) for _ in range(width)]
        cls = draw(st.sampled_from([And, Or]))
        how = draw(st.sampled_from(["constructor", "fold", "operator"]))
        if how == "constructor":
            e: Expression = cls(*operands)
        elif how == "fold":
            e = functools.reduce(cls, operands)
        else:
            e = functools.reduce(operator.and_ if cls is And else operator.or_, operands)
        return Not(e) if draw(st.booleans()) else e

    return build(0)


@settings(max_examples=30, deadline=None)
@given(long_filters())
def test_long_filters_round_trip(e: Expression) -> None:
    assert parse(str(e)) == e
    j = e.to_json()
    assert only_binary_nodes(j) and json_depth(j) <= 3 * 4 + 12 + 2
    assert from_json(j) == e and from_json(e.to_json_text()) == e
    assert bind(e, SCHEMA) == e
