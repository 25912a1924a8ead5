"""Filter expressions: predicates over columns, combined with AND, OR and NOT.

Three ways to write the same filter::

    from frazil.expressions import And, EqualTo, LessThan, col, parse

    And(LessThan("id", 5), EqualTo("name", "a"))
    (col("id") < 5) & (col("name") == "a")
    parse("id < 5 AND name = 'a'")

Expressions are immutable and hashable; ``str(e)`` is the text form (``parse(str(e)) == e``)
and ``e.to_json()`` Java's expression JSON (:func:`from_json` reads it back). AND and OR are
n-ary and flat (``And(a, And(b, c)) == And(a, b, c)``), so that chains of thousands of terms
(generated filters: key lists, upserts) build, bind, plan and read like short ones; the JSON
writes them as balanced binary nodes. Nesting is limited to :data:`MAX_DEPTH` levels.
Literals are plain Python values (see :mod:`frazil.expressions._literals` for the accepted
types).

:func:`bind` resolves an expression against a schema in frazil's Rust core, as Java's binder
does: names become columns (case-insensitively on request), literals are converted to the
column's type (``'2024-01-02'`` against a date column is a ``datetime.date``), and what the
types already decide becomes a constant (``x < 1e40`` on a float column is ``AlwaysTrue()``,
``int_col = 3.5`` is ``AlwaysFalse()``). An impossible comparison raises a
:class:`~frazil.errors.ValidationError` naming the column, its type and the literal; an unknown
column an :class:`~frazil.errors.UnknownFieldError`. The core binds integers within +-2**127 and
decimals of at most 38 digits; larger ones are refused with a ValidationError.
"""

from __future__ import annotations

import json

from frazil import _native
from frazil.expressions._base import (
    MAX_DEPTH,
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    Expression,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Reference,
    SetPredicate,
    StartsWith,
    Term,
    Transform,
    UnaryPredicate,
    UnboundPredicate,
)
from frazil.expressions._json import from_json
from frazil.expressions._literals import LiteralValue
from frazil.expressions.builder import Column, col
from frazil.expressions.parser import parse
from frazil.schema import Schema

__all__ = [
    "MAX_DEPTH",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "Column",
    "EqualTo",
    "Expression",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "LiteralPredicate",
    "LiteralValue",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Or",
    "Reference",
    "SetPredicate",
    "StartsWith",
    "Term",
    "Transform",
    "UnaryPredicate",
    "UnboundPredicate",
    "as_expression",
    "bind",
    "col",
    "from_json",
    "parse",
]


def as_expression(value: Expression | str, what: str = "a filter") -> Expression:
    """``value`` as an expression: an expression as it is, a filter string parsed; anything
    else is a FrazilTypeError naming ``what`` it was given as."""
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, Expression):
        return value
    from frazil.errors import FrazilTypeError

    raise FrazilTypeError(
        f"{what} must be a frazil expression or its text form, got {type(value).__name__}"
    )


def bind(expression: Expression | str, schema: Schema, case_sensitive: bool = True) -> Expression:
    """``expression`` bound to ``schema`` and simplified, as Python objects.

    Binding runs in frazil's Rust core; the result names columns by their full dotted names
    as the schema spells them and holds values of the column types (the transform's result
    type for a transform term). A text filter is parsed first.
    """
    if isinstance(expression, str):
        expression = parse(expression)
    if not isinstance(expression, Expression):
        from frazil.errors import FrazilTypeError

        raise FrazilTypeError(
            f"bind needs an expression or a filter string, got {expression!r} "
            f"({expression.__class__.__name__})"
        )
    if not isinstance(schema, Schema):
        from frazil.errors import FrazilTypeError

        raise FrazilTypeError(f"bind needs a frazil.Schema, got {schema.__class__.__name__}")
    bound = _native.bind_expression(
        expression.to_json_text(), json.dumps(schema.to_json()), case_sensitive
    )
    return from_json(bound, schema)
