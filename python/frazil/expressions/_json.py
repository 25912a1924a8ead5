"""Expressions as JSON, in the form of Java's ``ExpressionParser`` (the REST catalog's and
Appendix C's ``residual-filter``), with the tagged values of frazil's Rust core
(``src/expr/json.rs``) where plain JSON cannot carry a Python literal exactly:

=====================  ================================================================
bool                   plain ``true`` / ``false``
int                    plain when it fits a long; else ``{"@": "int", "v": "<digits>"}``
float                  plain when finite; ``{"@": "float", "v": "inf"}`` / ``"-inf"``
str                    ``{"@": "string", "v": text}`` (a plain JSON string is Appendix D
                       text of the column's type: hex against a binary column)
bytes                  ``{"@": "binary", "v": "<hex>"}``
decimal.Decimal        ``{"@": "decimal", "v": "<text>"}``
datetime.date          ``{"@": "date", "v": <days from 1970-01-01>}``
datetime.time          ``{"@": "time", "v": <microseconds from midnight>}``
datetime.datetime      ``{"@": "timestamp" or "timestamptz", "v": <microseconds>}`` (UTC)
uuid.UUID              ``{"@": "uuid", "v": "<text>"}``
=====================  ================================================================
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import json
import math
import uuid as _uuid
from typing import Any

from frazil import _native, values
from frazil.errors import UnknownFieldError, ValidationError
from frazil.expressions._base import (
    MAX_DEPTH,
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
from frazil.expressions._literals import LiteralValue, timestamp_micros
from frazil.schema import Schema
from frazil.types import PrimitiveType, type_to_json

__all__ = ["expression_to_json", "from_json"]

_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1
_INT_BOUNDS = {"int": (-(2**31), 2**31 - 1), "long": (_LONG_MIN, _LONG_MAX)}
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

_NAMES: dict[type[UnboundPredicate], str] = {
    IsNull: "is-null",
    NotNull: "not-null",
    IsNaN: "is-nan",
    NotNaN: "not-nan",
    LessThan: "lt",
    LessThanOrEqual: "lt-eq",
    GreaterThan: "gt",
    GreaterThanOrEqual: "gt-eq",
    EqualTo: "eq",
    NotEqualTo: "not-eq",
    StartsWith: "starts-with",
    NotStartsWith: "not-starts-with",
    In: "in",
    NotIn: "not-in",
}
_CLASSES = {name: cls for cls, name in _NAMES.items()}


def _tagged(kind: str, payload: Any) -> dict[str, Any]:
    return {"@": kind, "v": payload}


def literal_to_json(value: LiteralValue) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if _LONG_MIN <= value <= _LONG_MAX else _tagged("int", str(value))
    if isinstance(value, float):
        if math.isinf(value):
            return _tagged("float", "inf" if value > 0 else "-inf")
        return value
    if isinstance(value, str):
        return _tagged("string", value)
    if isinstance(value, bytes):
        return _tagged("binary", value.hex())
    if isinstance(value, _decimal.Decimal):
        return _tagged("decimal", str(value))
    if isinstance(value, _dt.datetime):
        kind = "timestamp" if value.utcoffset() is None else "timestamptz"
        return _tagged(kind, timestamp_micros(value))
    if isinstance(value, _dt.date):
        return _tagged("date", (value - _EPOCH_DATE).days)
    if isinstance(value, _dt.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
        return _tagged("time", micros + value.microsecond)
    return _tagged("uuid", str(value))


def _term_to_json(term: Term) -> Any:
    if isinstance(term, Reference):
        return term.name
    return {"type": "transform", "transform": term.transform, "term": term.name}


def expression_to_json(expression: Expression) -> Any:
    if isinstance(expression, AlwaysTrue):
        return True
    if isinstance(expression, AlwaysFalse):
        return False
    if isinstance(expression, And | Or):
        return _balanced_json("and" if isinstance(expression, And) else "or", expression.operands)
    if isinstance(expression, Not):
        return {"type": "not", "child": expression_to_json(expression.child)}
    if isinstance(expression, UnboundPredicate):
        out: dict[str, Any] = {
            "type": _NAMES[expression.__class__],
            "term": _term_to_json(expression.term),
        }
        if isinstance(expression, LiteralPredicate):
            out["value"] = literal_to_json(expression.value)
        elif isinstance(expression, SetPredicate):
            out["values"] = [literal_to_json(v) for v in expression._sorted()]
        return out
    raise ValidationError(f"not an expression: {expression!r}")  # pragma: no cover


def _balanced_json(kind: str, operands: tuple[Expression, ...]) -> Any:
    """An AND or OR of ``operands`` as Java's binary nodes, in a balanced tree (ceil(log2 n)
    levels, so that Java's recursive parser and every JSON reader's depth limit take chains of
    any length), the first ceil(n/2) operands on the left (``left`` of the node, and
    ``src/expr/json.rs``): three are ``(a AND b) AND c``, as Java nests them."""

    def tree(start: int, stop: int) -> Any:
        if stop - start == 1:
            return expression_to_json(operands[start])
        middle = start + (stop - start + 1) // 2
        return {"type": kind, "left": tree(start, middle), "right": tree(middle, stop)}

    return tree(0, len(operands))


# --- reading ---------------------------------------------------------------------------------


def _bad(what: str, node: Any) -> ValidationError:
    return ValidationError(f"invalid expression JSON ({what}): {json.dumps(node, default=repr)}")


def _tagged_value(node: dict[str, Any]) -> LiteralValue:
    kind = node.get("@")
    if "v" not in node:
        raise _bad('a tagged value needs "v"', node)
    payload = node["v"]

    def integer() -> int:
        if isinstance(payload, bool) or not isinstance(payload, int):
            raise _bad(f"the {kind} payload must be an integer", node)
        return payload

    def text() -> str:
        if not isinstance(payload, str):
            raise _bad(f"the {kind} payload must be a string", node)
        return payload

    try:
        if kind == "bool":
            if not isinstance(payload, bool):
                raise _bad("the bool payload must be true or false", node)
            return payload
        if kind == "int":
            return int(payload.strip()) if isinstance(payload, str) else integer()
        if kind == "float":
            if isinstance(payload, str):
                # Python's float() reads "inf", "-inf", "Infinity" and "nan" (refused later).
                return float(payload)
            if isinstance(payload, bool) or not isinstance(payload, int | float):
                raise _bad("the float payload must be a number", node)
            return float(payload)
        if kind == "string":
            return text()
        if kind == "binary":
            return bytes.fromhex(text())
        if kind == "decimal":
            return _decimal.Decimal(text().strip())
        if kind == "date":
            return _EPOCH_DATE + _dt.timedelta(days=integer())
        if kind == "time":
            seconds, micros = divmod(integer(), 1_000_000)
            return _dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
        if kind == "timestamp":
            return _EPOCH + _dt.timedelta(microseconds=integer())
        if kind == "timestamptz":
            return _EPOCH_UTC + _dt.timedelta(microseconds=integer())
        if kind == "uuid":
            return _uuid.UUID(text().strip())
    except (ValueError, OverflowError, ArithmeticError) as e:
        raise _bad(f"a malformed {kind} payload: {e}", node) from None
    raise _bad(f"unknown value tag {kind!r}", node)


class _Reader:
    def __init__(self, schema: Schema | None, case_sensitive: bool) -> None:
        self.schema = schema
        self.case_sensitive = case_sensitive

    def term_type(self, term: Term) -> str | None:
        """The Iceberg type (Appendix C text) of the term's values, if a schema was given."""
        if self.schema is None:
            return None
        field = self.schema.find_field(term.name, self.case_sensitive)
        if field is None:
            raise UnknownFieldError(
                f"cannot find column {term.name!r} of the expression in schema "
                f"{self.schema.schema_id}"
            )
        if not isinstance(field.field_type, PrimitiveType):
            return None  # null checks on nested columns carry no value
        source = type_to_json(field.field_type)
        if isinstance(term, Transform):
            result: str = _native.Transform(term.transform).result_type(source)
            return result
        assert isinstance(source, str)
        return source

    def value(self, node: Any, type_text: str | None) -> LiteralValue:
        if isinstance(node, dict) and "@" in node:
            return _tagged_value(node)
        if isinstance(node, dict | list) or node is None:
            raise _bad("a value must be a number, string, boolean or tagged object", node)
        if type_text is None:
            if isinstance(node, bool | int | float | str):
                return node
            raise _bad("a value must be a number, string, boolean or tagged object", node)
        if type_text in ("timestamp_ns", "timestamptz_ns"):
            # Python's datetime has no nanoseconds: keep the Appendix D text, which binds back
            # to the column exactly.
            if not isinstance(node, str):
                raise _bad(f"a {type_text} value must be a string", node)
            return node
        # The commonest key types read directly (a residual of a long filter holds thousands
        # of values); anything else, or out of range, takes the general path and its errors.
        if node.__class__ is str and type_text == "string":
            return node
        bounds = _INT_BOUNDS.get(type_text)
        if bounds is not None and node.__class__ is int and bounds[0] <= node <= bounds[1]:
            return node
        converted: LiteralValue = values.from_json(type_text, node)
        return converted

    def term(self, node: Any) -> Term:
        if isinstance(node, str):
            return Reference(node)
        if isinstance(node, dict):
            name = node.get("term")
            if not isinstance(name, str):
                raise _bad('a term object needs a "term" name', node)
            kind = node.get("type")
            if kind in ("reference", "ref"):
                return Reference(name)
            if kind == "transform":
                transform = node.get("transform")
                if not isinstance(transform, str):
                    raise _bad('a transform term needs "transform"', node)
                return Transform(transform, name)
            raise _bad("unknown term type", node)
        raise _bad("a term is a name or an object", node)

    def chain(self, node: dict[str, Any], kind: str) -> Expression:
        """An AND or OR node and the nodes of its kind beneath it, however deep (Java writes
        ``a AND b AND c`` left-deep), as one flat node: its operands are gathered with an
        explicit stack, so only the nesting of other kinds recurses."""
        operands: list[Expression] = []
        pending: list[Any] = [node]
        while pending:
            item = pending.pop()
            if (
                isinstance(item, dict)
                and isinstance(item.get("type"), str)
                and item["type"].lower() == kind
            ):
                for key in ("right", "left"):  # popped left first
                    if key not in item:
                        raise _bad(f"missing {key!r}", item)
                    pending.append(item[key])
            else:
                operands.append(self.expression(item))
        cls = And if kind == "and" else Or
        return cls(*operands)

    def expression(self, node: Any) -> Expression:
        if isinstance(node, bool):
            return AlwaysTrue() if node else AlwaysFalse()
        if not isinstance(node, dict):
            raise _bad("expected an object or a boolean", node)
        kind = node.get("type")
        if not isinstance(kind, str):
            raise _bad('missing "type"', node)
        kind = kind.lower()

        def child(key: str) -> Expression:
            if key not in node:
                raise _bad(f"missing {key!r}", node)
            return self.expression(node[key])

        if kind == "true":
            return AlwaysTrue()
        if kind == "false":
            return AlwaysFalse()
        if kind == "literal":
            if not isinstance(node.get("value"), bool):
                raise _bad("a literal expression needs a boolean value", node)
            return AlwaysTrue() if node["value"] else AlwaysFalse()
        if kind in ("and", "or"):
            return self.chain(node, kind)
        if kind == "not":
            return Not(child("child"))
        cls = _CLASSES.get(kind.replace("_", "-"))
        if cls is None:
            raise _bad(f"unknown type {kind!r}", node)
        if "term" not in node:
            raise _bad('missing "term"', node)
        term = self.term(node["term"])
        if issubclass(cls, UnaryPredicate):
            if "value" in node or "values" in node:
                raise _bad(f"{kind} takes no value", node)
            return cls(term)
        type_text = self.term_type(term)
        if issubclass(cls, SetPredicate):
            items = node.get("values")
            if not isinstance(items, list):
                raise _bad(f'{kind} needs a "values" array', node)
            return cls(term, [self.value(v, type_text) for v in items])
        if "value" not in node:
            raise _bad(f'{kind} needs a "value"', node)
        assert issubclass(cls, LiteralPredicate)
        return cls(term, self.value(node["value"], type_text))


def from_json(
    node: Any, schema: Schema | None = None, *, case_sensitive: bool = True
) -> Expression:
    """The expression of Java's expression JSON (a ``json.loads`` result, or JSON text).

    Tagged values (``{"@": "date", "v": 19724}``) read as their Python value. Plain values read
    as JSON gives them (numbers, booleans, strings), unless a ``schema`` is given: then each is
    the Appendix D JSON of its column's type (the transform's result type for a transform term)
    and reads as that type's Python value (:func:`frazil.values.from_json`): this is how bound
    expressions and residuals, which Java and frazil write that way, come back with typed
    values. Values of ``timestamp_ns`` / ``timestamptz_ns`` columns stay their ISO text, as
    Python's datetime has no nanoseconds.
    """
    if schema is not None and not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a frazil.Schema, got {schema!r}")
    try:
        if isinstance(node, str | bytes | bytearray):
            try:
                node = json.loads(node)
            except ValueError as e:
                raise ValidationError(f"expression is not valid JSON: {e}") from None
        return _Reader(schema, case_sensitive).expression(node)
    except RecursionError:
        # Python's JSON reader and this one recurse per level: JSON nested deeper than the
        # interpreter's stack allows (an expression within MAX_DEPTH never is).
        raise ValidationError(
            f"expression JSON is nested too deeply: an expression nests at most {MAX_DEPTH} "
            f"levels (an AND or OR chain of n terms written as a balanced tree takes log2(n))"
        ) from None
