"""Checking default values given to schema evolution (spec: "Default values").

Defaults are kept in their JSON single-value form (spec: Appendix D), as the metadata model
stores them. This checks that a value has the JSON shape its type needs, so that a default that
could never be read (a string for an ``int`` column, a fraction for a ``long``) is refused when
the column is added, naming the column.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from frazil.errors import InvalidUpdateError
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = ["check_default"]

_INT_RANGE: dict[type[PrimitiveType], int] = {IntegerType: 31, LongType: 63}
_DATE = re.compile(r"-?\d{4,}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?")
_ZONE = r"([+-]\d{2}:\d{2}|Z)"
_DECIMAL = re.compile(r"-?\d+(\.\d+)?")
_HEX = re.compile(r"([0-9a-fA-F]{2})*")


def _fail(name: str, value: Any, t: IcebergType, why: str) -> InvalidUpdateError:
    return InvalidUpdateError(f"invalid default value {value!r} for column {name!r} ({t}): {why}")


def check_default(value: Any, t: IcebergType, name: str) -> None:
    """Raise InvalidUpdateError unless ``value`` is a JSON single-value of type ``t``."""
    if not isinstance(t, PrimitiveType):
        # Java (Types.NestedField) refuses any non-null default on a nested type: a struct's
        # fields carry their own defaults.
        raise _fail(name, value, t, "a nested type's default must be null")
    if isinstance(t, BooleanType):
        ok = isinstance(value, bool)
    elif type(t) in _INT_RANGE:
        bits = _INT_RANGE[type(t)]
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not -(2**bits) <= value < 2**bits:
            raise _fail(name, value, t, "out of range")
    elif isinstance(t, (FloatType, DoubleType)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(t, DecimalType):
        ok = isinstance(value, str) and bool(_DECIMAL.fullmatch(value))
        if ok:
            digits = value.lstrip("-").split(".")
            scale = len(digits[1]) if len(digits) == 2 else 0
            precision = len(digits[0].lstrip("0")) + scale
            if scale != t.scale or precision > t.precision:
                raise _fail(
                    name, value, t, f"needs scale {t.scale} and at most {t.precision} digits"
                )
    elif isinstance(t, StringType):
        ok = isinstance(value, str)
    elif isinstance(t, UUIDType):
        ok = isinstance(value, str) and _is_uuid(value)
    elif isinstance(t, DateType):
        ok = isinstance(value, str) and bool(_DATE.fullmatch(value))
    elif isinstance(t, TimeType):
        ok = isinstance(value, str) and bool(_TIME.fullmatch(value))
    elif isinstance(t, (TimestampType, TimestampNanoType)):
        ok = isinstance(value, str) and bool(
            re.fullmatch(rf"{_DATE.pattern}T{_TIME.pattern}", value)
        )
    elif isinstance(t, (TimestamptzType, TimestamptzNanoType)):
        pattern = rf"{_DATE.pattern}T{_TIME.pattern}{_ZONE}"
        ok = isinstance(value, str) and bool(re.fullmatch(pattern, value))
    elif isinstance(t, (BinaryType, FixedType)):
        ok = isinstance(value, str) and bool(_HEX.fullmatch(value))
        if ok and isinstance(t, FixedType) and len(value) != 2 * t.length:
            raise _fail(name, value, t, f"needs exactly {t.length} bytes")
    else:
        raise _fail(name, value, t, f"defaults are not supported for {t}")
    if not ok:
        raise _fail(name, value, t, "not the JSON single-value form of this type (Appendix D)")


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36
