"""Literal values of filter expressions: which Python values are accepted, how they compare,
and how they are written as text and as JSON.

A literal is a plain Python value:

=====================================  ===========================================
``bool``, ``int``, ``float``, ``str``  as they are (``int`` of any size)
``bytes``                              binary and fixed (``bytearray`` and ``memoryview``
                                       are copied to ``bytes``)
``decimal.Decimal``                    finite
``datetime.date``                      a date
``datetime.time``                      a time, without tzinfo
``datetime.datetime``                  naive: a timestamp; aware: a timestamptz
``uuid.UUID``                          a uuid
=====================================  ===========================================

NaN is refused (as Java's ``Literals.from`` refuses it): use ``IsNaN`` / ``NotNaN``.

Python's ``==`` says ``1 == 1.0 == True`` and ``0.0 == -0.0``, but Iceberg tells them apart
(``-0.0`` sorts before ``0.0``; ``1.0`` does not bind to a date column, ``1`` does), so
predicates compare their literals by :func:`literal_key`, which keeps the kind and the sign of
zero.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
import uuid as _uuid
from typing import Any

from frazil.errors import FrazilTypeError, InvalidValueError, ValidationError

__all__ = ["LiteralValue", "check_literal", "literal_key", "literal_text"]

LiteralValue = (
    bool
    | int
    | float
    | str
    | bytes
    | _decimal.Decimal
    | _dt.date
    | _dt.time
    | _dt.datetime
    | _uuid.UUID
)
"""The Python types a literal may have."""

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICROSECOND = _dt.timedelta(microseconds=1)

_SUPPORTED = (
    "bool, int, float, str, bytes, decimal.Decimal, datetime.date, datetime.time, "
    "datetime.datetime or uuid.UUID"
)


def check_literal(value: Any, where: str) -> LiteralValue:
    """``value`` as a literal (bytes-likes copied to ``bytes``), or a FrazilError naming it.

    ``where`` names the predicate for the message, e.g. ``"EqualTo('id', ...)"``.
    """
    if value is None:
        raise ValidationError(
            f"{where}: None is not a literal; test for null with IsNull / col(...).is_null()"
        )
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise ValidationError(
                f"{where}: NaN cannot be compared with a column; "
                f"use IsNaN / NotNaN (col(...).is_nan())"
            )
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, _decimal.Decimal):
        if not value.is_finite():
            raise ValidationError(f"{where}: {value!r} is not a finite decimal")
        return value
    if isinstance(value, _dt.datetime):
        return value
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, _dt.time):
        if value.tzinfo is not None:
            raise ValidationError(
                f"{where}: {value!r} has a tzinfo, but Iceberg's time has no zone; "
                f"give a naive datetime.time"
            )
        return value
    if isinstance(value, _uuid.UUID):
        return value
    raise FrazilTypeError(
        f"{where}: {value!r} ({value.__class__.__name__}) is not a supported literal; "
        f"use {_SUPPORTED}"
    )


def timestamp_micros(value: _dt.datetime) -> int:
    """Microseconds from the epoch: naive values as wall time, aware ones in UTC."""
    if value.utcoffset() is None:
        return (value - _EPOCH) // _MICROSECOND
    return (value - _EPOCH_UTC) // _MICROSECOND


def literal_key(value: LiteralValue) -> tuple[Any, ...]:
    """What predicates compare and hash literals by: the kind and the value, with the sign of
    zero for floats (Iceberg orders -0.0 before 0.0) and aware datetimes by their instant."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, bytes):
        return ("bytes", value)
    if isinstance(value, _decimal.Decimal):
        return ("decimal", value)
    if isinstance(value, _dt.datetime):
        if value.utcoffset() is None:
            return ("timestamp", value)
        return ("timestamptz", timestamp_micros(value))
    if isinstance(value, _dt.date):
        return ("date", value)
    if isinstance(value, _dt.time):
        return ("time", value)
    return ("uuid", value)


def quote_string(text: str) -> str:
    """A single-quoted string of the text form, ``'`` doubled."""
    return "'" + text.replace("'", "''") + "'"


def literal_text(value: LiteralValue) -> str:
    """The literal in the text form :func:`frazil.expressions.parse` reads back exactly.

    Values that are not numbers, booleans or strings carry a SQL-style type prefix
    (``DATE '2024-01-02'``, ``TIMESTAMP '...'``, ``DECIMAL '1.50'``, ``UUID '...'``) so that they
    read back as the same Python value; plain quoted text reads back as a ``str``.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "FLOAT 'inf'" if value > 0 else "FLOAT '-inf'"
        # repr is the shortest text that reads back as the same float.
        return repr(value)
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, _decimal.Decimal):
        return f"DECIMAL '{value}'"
    if isinstance(value, _dt.datetime):
        return f"TIMESTAMP '{value.isoformat()}'"
    if isinstance(value, _dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, _dt.time):
        return f"TIME '{value.isoformat()}'"
    return f"UUID '{value}'"


def parse_typed(kind: str, text: str) -> LiteralValue:
    """The value of a typed literal ``KIND 'text'`` (kind upper-case), or InvalidValueError."""
    try:
        if kind == "DATE":
            return _dt.date.fromisoformat(text.strip())
        if kind == "TIME":
            parsed_time = _dt.time.fromisoformat(text.strip())
            if parsed_time.tzinfo is not None:
                raise InvalidValueError("a time has no zone offset")
            return parsed_time
        if kind == "TIMESTAMP":
            stripped = text.strip()
            if stripped[-1:] in ("Z", "z"):
                stripped = stripped[:-1] + "+00:00"
            return _dt.datetime.fromisoformat(stripped)
        if kind == "DECIMAL":
            number = _decimal.Decimal(text.strip())
            if not number.is_finite():
                raise InvalidValueError("not a finite number")
            return number
        if kind == "UUID":
            return _uuid.UUID(text.strip())
        if kind == "FLOAT":
            number_f = float(text.strip())
            if math.isnan(number_f):
                raise InvalidValueError("NaN cannot be compared with a column: use IS NAN")
            return number_f
    except (ValueError, IndexError, _decimal.InvalidOperation) as e:
        detail = str(e) or "malformed"
        raise InvalidValueError(f"invalid {kind} literal {quote_string(text)}: {detail}") from None
    raise InvalidValueError(f"unknown literal type {kind}")  # pragma: no cover - callers check


TYPED_LITERALS = frozenset({"DATE", "TIME", "TIMESTAMP", "DECIMAL", "UUID", "FLOAT"})
"""Type prefixes of typed literals in the text form."""
