"""A task's residual filter evaluated on Arrow columns (spec: "Scan Planning": rows of a file
must still be filtered by the residual).

The frazil expression is compiled once per task into a tree of pyarrow compute calls that
yields a boolean mask without nulls. Value semantics are the project's (src/expr/visitors/
compare.rs), as Java's ``Evaluator`` after ``rewriteNot`` except for null and NaN ordering:

- ``NOT`` is pushed into the predicates (``NOT a < 5`` is ``a >= 5``), never a three-valued
  negation;
- null: ``IS NULL``, ``IS NOT NAN``, ``!=``, ``NOT IN`` and ``NOT STARTS WITH`` hold; ordered
  comparisons, ``=``, ``IN``, ``STARTS WITH`` and ``IS NAN`` do not;
- NaN is unordered: ``<``, ``<=``, ``>``, ``>=``, ``=`` and ``IN`` are false for NaN, ``!=`` and
  ``NOT IN`` true; -0.0 sorts before and differs from +0.0 (spec: "Sorting").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from frazil import expressions as ex
from frazil import transforms as tr
from frazil.errors import UnknownFieldError, ValidationError
from frazil.schema import Schema
from frazil.table._literals import boolean, literal, literals

Mask: TypeAlias = Any  # a pyarrow BooleanArray without nulls
Evaluate = Callable[[Sequence[pa.Array]], Mask]


@dataclass(frozen=True)
class FilterColumn:
    """A column the filter reads: a field by id, through ``transform`` when the predicate
    tests a partition transform of it."""

    field_id: int
    transform: str | None


@dataclass(frozen=True)
class CompiledFilter:
    """``evaluate(columns)`` with one array per entry of ``columns`` (each a field's values,
    null where the field or a parent struct is null) gives the rows to keep. ``always`` is
    True or False when the filter does not depend on the rows."""

    columns: tuple[FilterColumn, ...]
    evaluate: Evaluate
    always: bool | None


def _junction(operands: list[ex.Expression], conjunction: bool) -> ex.Expression:
    """AND (or OR) of ``operands`` with the constants folded, as ``&`` and ``|`` fold them."""
    kept: list[ex.Expression] = []
    for operand in operands:
        if isinstance(operand, ex.AlwaysFalse if conjunction else ex.AlwaysTrue):
            return operand
        if not isinstance(operand, ex.AlwaysTrue if conjunction else ex.AlwaysFalse):
            kept.append(operand)
    if not kept:
        return ex.AlwaysTrue() if conjunction else ex.AlwaysFalse()
    if len(kept) == 1:
        return kept[0]
    return ex.And(*kept) if conjunction else ex.Or(*kept)


def pushed_nots(expression: ex.Expression, negated: bool = False) -> ex.Expression:
    if isinstance(expression, ex.Not):
        return pushed_nots(expression.child, not negated)
    if isinstance(expression, ex.And | ex.Or):
        # NOT (a AND b) is NOT a OR NOT b; recursion only as deep as the expression nests.
        operands = [pushed_nots(o, negated) for o in expression.operands]
        return _junction(operands, isinstance(expression, ex.And) != negated)
    if isinstance(expression, ex.AlwaysTrue):
        return ex.AlwaysFalse() if negated else expression
    if isinstance(expression, ex.AlwaysFalse):
        return ex.AlwaysTrue() if negated else expression
    if isinstance(expression, ex.UnboundPredicate):
        return expression.negate() if negated else expression
    raise ValidationError(f"cannot evaluate the filter {expression}: unknown expression kind")


def _full(value: bool, length: int) -> Mask:
    return pa.repeat(boolean(value), length)


def _scalar(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    return literal(value, arrow_type)


def _plain(values: pa.Array) -> pa.Array:
    if isinstance(values.type, pa.BaseExtensionType):
        return values.storage
    return values


def _is_float(values: pa.Array) -> bool:
    return bool(pa.types.is_floating(values.type))


def _zero_sign(values: pa.Array) -> pa.Array:
    """1 for +0.0, 0 for -0.0 (others are not looked at): 1/x keeps the sign of a zero."""
    inverse = pc.divide(literal(1.0, values.type), values)
    return pc.cast(pc.greater(inverse, literal(0.0, values.type)), pa.int8())


def _compare(op: str, values: pa.Array, value: Any) -> pa.Array:
    """An ordered comparison in Iceberg's order; null where the value is null."""
    function = getattr(pc, op)
    scalar = _scalar(value, values.type)
    result = function(values, scalar)
    if _is_float(values) and value == 0:
        # IEEE says -0.0 == +0.0; Iceberg orders -0.0 first: decide zeros by their signs.
        literal_sign = literal(0 if str(value).startswith("-") else 1, pa.int8())
        is_zero = pc.equal(values, literal(0.0, values.type))
        result = pc.if_else(is_zero, function(_zero_sign(values), literal_sign), result)
    return result


def _in(values: pa.Array, members: Sequence[Any], value_sets: dict[Any, pa.Array]) -> pa.Array:
    """Membership in Iceberg's equality (-0.0 is not +0.0); null where the value is null.
    ``value_sets`` keeps the members as an array per Arrow type, made at the first batch
    (a joined key list holds thousands)."""
    zeros = [v for v in members if _is_float(values) and v == 0]
    value_set = value_sets.get(values.type)
    if value_set is None:
        others = [v for v in members if not (_is_float(values) and v == 0)]
        value_set = value_sets.setdefault(values.type, literals(others, values.type))
    result = pc.is_in(values, value_set=value_set)
    result = pc.if_else(pc.is_null(values), literal(None, pa.bool_()), result)
    for zero in zeros:
        result = pc.or_(result, _compare("equal", values, zero))
    return result


def _predicate(predicate: ex.UnboundPredicate, index: int) -> Evaluate:
    def column(columns: Sequence[pa.Array]) -> pa.Array:
        return _plain(columns[index])

    if isinstance(predicate, ex.IsNull):
        return lambda cs: pc.is_null(column(cs))
    if isinstance(predicate, ex.NotNull):
        return lambda cs: pc.is_valid(column(cs))
    if isinstance(predicate, (ex.IsNaN, ex.NotNaN)):
        wanted = isinstance(predicate, ex.IsNaN)

        def nan(cs: Sequence[pa.Array]) -> Mask:
            values = column(cs)
            if not _is_float(values):
                return _full(not wanted, len(values))
            found = pc.fill_null(pc.is_nan(values), boolean(False))
            return found if wanted else pc.invert(found)

        return nan
    if isinstance(predicate, ex.LiteralPredicate):
        value = predicate.value
        ops = {
            ex.LessThan: ("less", False),
            ex.LessThanOrEqual: ("less_equal", False),
            ex.GreaterThan: ("greater", False),
            ex.GreaterThanOrEqual: ("greater_equal", False),
            ex.EqualTo: ("equal", False),
            ex.NotEqualTo: ("equal", True),
        }
        if isinstance(predicate, (ex.StartsWith, ex.NotStartsWith)):
            negative = isinstance(predicate, ex.NotStartsWith)

            def starts(cs: Sequence[pa.Array]) -> Mask:
                found = pc.fill_null(pc.starts_with(column(cs), pattern=str(value)), boolean(False))
                return pc.invert(found) if negative else found

            return starts
        op, negative = ops[type(predicate)]

        def compare(cs: Sequence[pa.Array]) -> Mask:
            found = pc.fill_null(_compare(op, column(cs), value), boolean(False))
            return pc.invert(found) if negative else found

        return compare
    if isinstance(predicate, ex.SetPredicate):
        members = list(predicate.values)
        negative = isinstance(predicate, ex.NotIn)
        value_sets: dict[Any, pa.Array] = {}

        def member(cs: Sequence[pa.Array]) -> Mask:
            found = pc.fill_null(_in(column(cs), members, value_sets), boolean(False))
            return pc.invert(found) if negative else found

        return member
    raise ValidationError(f"cannot evaluate the predicate {predicate}")


def as_sets(node: ex.And | ex.Or) -> list[ex.Expression]:
    """The operands of ``node``, with its equalities on one term joined into one set test:
    ``x = 1 OR x = 2 OR x IN (3)`` is ``x IN (1, 2, 3)``, ``x != 1 AND x NOT IN (2)`` is
    ``x NOT IN (1, 2)`` (the same rows, nulls and NaN included: a null satisfies != and NOT IN,
    NaN satisfies neither = nor IN), so that a generated key list of thousands of terms is one
    vectorized test, not thousands."""
    single, many = (ex.EqualTo, ex.In) if isinstance(node, ex.Or) else (ex.NotEqualTo, ex.NotIn)
    tests: dict[ex.Term, list[ex.UnboundPredicate]] = {}
    for operand in node.operands:
        if operand.__class__ is single or operand.__class__ is many:
            assert isinstance(operand, ex.UnboundPredicate)
            tests.setdefault(operand.term, []).append(operand)
    joined: dict[ex.Term, ex.Expression] = {}
    for term, group in tests.items():
        if len(group) < 2:
            continue
        values: list[Any] = []
        for test in group:
            if isinstance(test, ex.SetPredicate):
                values.extend(test.values)
            elif isinstance(test, ex.LiteralPredicate):
                values.append(test.value)
        # Only values of one kind join (a bound filter's always are): a set refuses 1 with
        # 1.0 or True, which an unbound filter may compare one by one.
        if len({v.__class__ for v in values}) == 1:
            joined[term] = many(term, values)
    if not joined:
        return list(node.operands)
    out: list[ex.Expression] = []
    placed: set[ex.Term] = set()
    for operand in node.operands:
        if operand.__class__ is single or operand.__class__ is many:
            assert isinstance(operand, ex.UnboundPredicate)
            if operand.term in joined:
                if operand.term not in placed:  # the term's first test stands for all of them
                    placed.add(operand.term)
                    out.append(joined[operand.term])
                continue
        out.append(operand)
    return out


@functools.lru_cache(maxsize=8)
def prepared(expression: ex.Expression) -> ex.Expression:
    """``expression`` with NOT pushed into the predicates and its equalities joined into set
    tests (:func:`as_sets`), made once per expression: the row filter and the row-group test
    of every file of a scan walk the same residual."""
    return _joined(pushed_nots(expression))


def _joined(expression: ex.Expression) -> ex.Expression:
    if isinstance(expression, ex.And | ex.Or):
        operands = [_joined(o) for o in as_sets(expression)]
        return _junction(operands, isinstance(expression, ex.And))
    return expression


def compile_filter(
    expression: ex.Expression, schema: Schema, case_sensitive: bool = True
) -> CompiledFilter:
    """Compiles ``expression`` (its references named as in ``schema``) for :func:`apply`."""
    pushed = prepared(expression)
    if isinstance(pushed, ex.AlwaysTrue):
        return CompiledFilter((), lambda cs: pa.nulls(0, pa.bool_()), True)
    if isinstance(pushed, ex.AlwaysFalse):
        return CompiledFilter((), lambda cs: pa.nulls(0, pa.bool_()), False)
    columns: list[FilterColumn] = []

    def slot(term: ex.Term) -> int:
        field_id = schema.find_field_id(term.name, case_sensitive)
        if field_id is None:
            raise UnknownFieldError(
                f"cannot evaluate the filter {expression}: no column {term.name!r} in the schema"
            )
        wanted = FilterColumn(field_id, term.transform if isinstance(term, ex.Transform) else None)
        if wanted not in columns:
            columns.append(wanted)
        return columns.index(wanted)

    def build(node: ex.Expression) -> Evaluate:
        if isinstance(node, ex.And | ex.Or):
            parts = [build(o) for o in node.operands]
            conjunction = isinstance(node, ex.And)
            combine = pc.and_ if conjunction else pc.or_

            def junction(cs: Sequence[pa.Array]) -> Mask:
                # The operands after the rows are decided (none left for an AND, all taken
                # for an OR) are not evaluated: a long chain often decides early.
                mask = parts[0](cs)
                for part in parts[1:]:
                    if (mask.true_count if conjunction else mask.false_count) == 0:
                        break
                    mask = combine(mask, part(cs))
                return mask

            return junction
        if isinstance(node, (ex.AlwaysTrue, ex.AlwaysFalse)):
            value = isinstance(node, ex.AlwaysTrue)
            return lambda cs: _full(value, len(cs[0]) if cs else 0)
        assert isinstance(node, ex.UnboundPredicate)
        return _predicate(node, slot(node.term))

    evaluate = build(pushed)  # fills `columns`
    return CompiledFilter(tuple(columns), evaluate, None)


def filter_columns(compiled: CompiledFilter, values: Sequence[pa.Array]) -> list[pa.Array]:
    """The filter's input columns from each field's values (``values`` in the order of
    ``compiled.columns``), transformed where a predicate tests a transform."""
    out = []
    for column, array in zip(compiled.columns, values, strict=True):
        out.append(array if column.transform is None else tr.apply(column.transform, array))
    return out
