"""Single values of Iceberg types: binary and JSON serialization (spec: Appendix D)
and the 32-bit hash behind ``bucket[N]`` (spec: Appendix B).

``type`` is an Iceberg type string as in Appendix C (``"int"``, ``"decimal(9,2)"``,
``"fixed[16]"``, ``"timestamptz"``, ...). :func:`to_json` and :func:`from_json` also
take a nested type as a dict in Appendix C JSON form, or as its JSON text.

Python values by type:

=========================  ============================================================
boolean                    ``bool``
int, long                  ``int`` (``bool`` is refused)
float, double              ``float`` (an ``int`` is accepted)
decimal(P,S)               ``decimal.Decimal`` (or ``int``), rescaled exactly to S
date                       ``datetime.date``
time                       ``datetime.time`` without tzinfo
timestamp                  naive ``datetime.datetime``
timestamptz                aware ``datetime.datetime``; read back in UTC
timestamp_ns               ``int`` nanoseconds from 1970-01-01 00:00:00, or a naive
                           ``datetime.datetime``; read back as ``int`` nanoseconds
timestamptz_ns             ``int`` nanoseconds from 1970-01-01 00:00:00 UTC, or an
                           aware ``datetime.datetime``; read back as ``int``
                           nanoseconds
string                     ``str``
uuid                       ``uuid.UUID``
fixed[L], binary           ``bytes`` (``bytearray`` and ``memoryview`` are accepted)
struct                     ``dict`` by field name (missing fields are null)
list                       ``list`` (or ``tuple``)
map                        ``dict``
=========================  ============================================================

The v3 nanosecond timestamps read back as ``int`` because ``datetime`` holds
microseconds only: a value would lose its last three digits. A ``datetime``
given for them is exact (a ``pandas.Timestamp``, a ``datetime`` subclass, keeps
its ``nanosecond`` too). ``unknown`` has no values (always null); single values
of ``variant``, ``geometry`` and ``geography`` are not supported
(:class:`~frazil.errors.UnknownTypeError`).

The encoding itself is done by frazil's Rust core; this module only converts
between these Python values and Iceberg's physical ones (days, microseconds,
unscaled decimals).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import json as _json
import uuid as _uuid
from collections.abc import Mapping
from typing import Any

from frazil import _native
from frazil.errors import FrazilTypeError, InvalidValueError, UnknownTypeError

__all__ = ["IcebergType", "from_bytes", "from_json", "hash", "to_bytes", "to_json"]

IcebergType = str | Mapping[str, Any]
"""An Appendix C type string, or a nested type as a dict (or JSON text)."""

_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICROSECOND = _dt.timedelta(microseconds=1)
_MAX_PRECISION = 38

Descriptor = tuple[Any, ...]


def _type_text(type: IcebergType) -> str:
    if isinstance(type, str):
        return type
    if isinstance(type, Mapping):
        return _json.dumps(type)
    raise FrazilTypeError(
        f"type must be an Iceberg type string such as 'int' or a dict of its JSON form, "
        f"got {type!r}"
    )


def _wrong(value: Any, name: str, expected: str) -> FrazilTypeError:
    return FrazilTypeError(
        f"{value!r} ({_class_of(value).__name__}) is not a valid value of type {name}: "
        f"expected {expected}"
    )


def _class_of(value: Any) -> type:
    """``type(value)``, which this module's ``type`` parameters shadow."""
    cls: type = value.__class__
    return cls


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(desc: Descriptor) -> str:
    kind = desc[0]
    if kind == "decimal":
        return f"decimal({desc[1]}, {desc[2]})"
    if kind == "fixed":
        return f"fixed[{desc[1]}]"
    if kind == "geometry":
        return f"geometry({desc[1]})"
    if kind == "geography":
        return f"geography({desc[1]}, {desc[2]})"
    if kind == "struct":
        return "struct<" + ", ".join(f"{f[1]}: {_type_name(f[3])}" for f in desc[1]) + ">"
    if kind == "list":
        return f"list<{_type_name(desc[3])}>"
    if kind == "map":
        return f"map<{_type_name(desc[2])}, {_type_name(desc[5])}>"
    return str(kind)


def _unscaled(value: _decimal.Decimal | int, precision: int, scale: int, name: str) -> int:
    """The unscaled integer of ``value`` at ``scale``, if that is exact."""
    if _is_int(value):
        value = _decimal.Decimal(value)
    if not isinstance(value, _decimal.Decimal):
        raise _wrong(value, name, "a decimal.Decimal or an int")
    if not value.is_finite():
        raise InvalidValueError(f"{value!r} is not a finite value of type {name}")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    shift = exponent + scale
    coefficient = int("".join(map(str, digits))) if digits else 0
    if coefficient == 0:
        return 0
    if shift >= 0:
        # Bound the work before multiplying: too many digits fails below anyway.
        if len(digits) + shift > _MAX_PRECISION + 1:
            raise InvalidValueError(f"{value!r} has more than {precision} digits for type {name}")
        multiplier: int = 10**shift
        unscaled = coefficient * multiplier
    else:
        # A non-zero coefficient has fewer trailing zeros than digits.
        if -shift >= len(digits):
            raise InvalidValueError(
                f"{value!r} cannot be represented exactly with the scale {scale} of type {name}"
            )
        divisor: int = 10**-shift
        unscaled, remainder = divmod(coefficient, divisor)
        if remainder:
            raise InvalidValueError(
                f"{value!r} cannot be represented exactly with the scale {scale} of type {name}"
            )
    if unscaled >= 10**precision:
        raise InvalidValueError(f"{value!r} has more than {precision} digits for type {name}")
    return -unscaled if sign else unscaled


def _canonical(desc: Descriptor, value: Any) -> Any:
    """A Python value as the canonical primitive the native layer maps to a Literal."""
    kind = desc[0]
    name = _type_name(desc)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _wrong(value, name, "a bool")
        return value
    if kind in ("int", "long"):
        if not _is_int(value):
            raise _wrong(value, name, "an int")
        return value
    if kind in ("float", "double"):
        if _is_int(value):
            try:
                return float(value)
            except OverflowError:
                raise InvalidValueError(f"{value!r} is out of range for type {name}") from None
        if not isinstance(value, float):
            raise _wrong(value, name, "a float")
        return float(value)
    if kind == "decimal":
        return _unscaled(value, desc[1], desc[2], name)
    if kind == "date":
        if not isinstance(value, _dt.date) or isinstance(value, _dt.datetime):
            raise _wrong(value, name, "a datetime.date")
        return value.toordinal() - _EPOCH_ORDINAL
    if kind == "time":
        if not isinstance(value, _dt.time):
            raise _wrong(value, name, "a datetime.time")
        if value.tzinfo is not None:
            raise _wrong(value, name, "a datetime.time without tzinfo")
        seconds = (value.hour * 60 + value.minute) * 60 + value.second
        return seconds * 1_000_000 + value.microsecond
    if kind == "timestamp":
        if not isinstance(value, _dt.datetime) or value.utcoffset() is not None:
            raise _wrong(value, name, "a naive datetime.datetime (without tzinfo)")
        return (value - _EPOCH) // _MICROSECOND
    if kind == "timestamptz":
        if not isinstance(value, _dt.datetime) or value.utcoffset() is None:
            raise _wrong(value, name, "a timezone-aware datetime.datetime")
        return (value - _EPOCH_UTC) // _MICROSECOND
    if kind in ("timestamp_ns", "timestamptz_ns"):
        return _nanos(value, name, zoned=kind == "timestamptz_ns")
    if kind == "unknown":
        raise InvalidValueError(f"{value!r} is not a value of type unknown: it is always null")
    if kind in ("variant", "geometry", "geography"):
        raise UnknownTypeError(f"single values of type {name} are not supported")
    if kind == "string":
        if not isinstance(value, str):
            raise _wrong(value, name, "a str")
        return value
    if kind == "uuid":
        if not isinstance(value, _uuid.UUID):
            raise _wrong(value, name, "a uuid.UUID")
        return value.bytes
    if kind in ("fixed", "binary"):
        if not isinstance(value, bytes | bytearray | memoryview):
            raise _wrong(value, name, "bytes")
        return bytes(value)
    if kind == "struct":
        if not isinstance(value, Mapping):
            raise _wrong(value, name, "a dict keyed by field name")
        fields = desc[1]
        unknown = set(value) - {f[1] for f in fields}
        if unknown:
            raise InvalidValueError(
                f"{sorted(map(str, unknown))} are not fields of {name} (value {value!r})"
            )
        return [_optional(f[3], value.get(f[1])) for f in fields]
    if kind == "list":
        if not isinstance(value, list | tuple):
            raise _wrong(value, name, "a list")
        return [_optional(desc[3], v) for v in value]
    if kind == "map":
        if not isinstance(value, Mapping):
            raise _wrong(value, name, "a dict")
        pairs = []
        for k, v in value.items():
            if k is None:
                raise InvalidValueError(f"a key of {name} must not be None")
            pairs.append((_canonical(desc[2], k), _optional(desc[5], v)))
        return pairs
    raise FrazilTypeError(f"unsupported type {name}")  # pragma: no cover - exhaustive above


def _nanos(value: Any, name: str, zoned: bool) -> int:
    """Nanoseconds from the epoch of an ``int`` or a ``datetime`` (naive for
    ``timestamp_ns``, aware for ``timestamptz_ns``)."""
    if _is_int(value):
        return int(value)
    expected = (
        "an int (nanoseconds) or a timezone-aware datetime.datetime"
        if zoned
        else "an int (nanoseconds) or a naive datetime.datetime (without tzinfo)"
    )
    if not isinstance(value, _dt.datetime) or (value.utcoffset() is not None) != zoned:
        raise _wrong(value, name, expected)
    micros = (value - (_EPOCH_UTC if zoned else _EPOCH)) // _MICROSECOND
    # pandas.Timestamp is a datetime that also holds nanoseconds.
    extra = getattr(value, "nanosecond", 0)
    return micros * 1000 + (extra if _is_int(extra) else 0)


def _optional(desc: Descriptor, value: Any) -> Any:
    return None if value is None else _canonical(desc, value)


def _python(desc: Descriptor, value: Any) -> Any:
    """A canonical primitive from the native layer as the rich Python value."""
    if value is None:
        return None
    kind = desc[0]
    name = _type_name(desc)
    try:
        if kind == "decimal":
            # From text, which is exact: scaleb() would round to the context's 28 digits.
            return _decimal.Decimal(f"{value}E-{desc[2]}")
        if kind == "date":
            return _dt.date.fromordinal(value + _EPOCH_ORDINAL)
        if kind == "time":
            seconds, micros = divmod(value, 1_000_000)
            return _dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
        if kind == "timestamp":
            return _EPOCH + value * _MICROSECOND
        if kind == "timestamptz":
            return _EPOCH_UTC + value * _MICROSECOND
    except (OverflowError, ValueError):
        raise InvalidValueError(
            f"the {name} value {value} is outside the range of Python's datetime module"
        ) from None
    if kind == "uuid":
        return _uuid.UUID(bytes=value)
    if kind == "struct":
        return {f[1]: _python(f[3], v) for f, v in zip(desc[1], value, strict=True)}
    if kind == "list":
        return [_python(desc[3], v) for v in value]
    if kind == "map":
        result = {}
        for k, v in value:
            key = _python(desc[2], k)
            try:
                result[key] = _python(desc[5], v)
            except TypeError:
                raise FrazilTypeError(
                    f"a key of {name} ({key!r}) cannot be a Python dict key"
                ) from None
        return result
    return value


def to_bytes(type: IcebergType, value: Any) -> bytes:
    """The Appendix D binary form of ``value`` (as stored in manifest bounds)."""
    text = _type_text(type)
    desc = _native.describe_type(text)
    if value is None:
        raise _wrong(value, _type_name(desc), "a value (None has no binary form)")
    return _native.value_to_bytes(text, _canonical(desc, value))


def from_bytes(type: IcebergType, data: bytes | bytearray | memoryview) -> Any:
    """The value of an Appendix D binary form."""
    text = _type_text(type)
    desc = _native.describe_type(text)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FrazilTypeError(f"data must be bytes, got {_class_of(data).__name__}")
    return _python(desc, _native.value_from_bytes(text, bytes(data)))


def to_json(type: IcebergType, value: Any) -> Any:
    """The Appendix D JSON form of ``value``, as ``json.loads`` would return it."""
    text = _type_text(type)
    desc = _native.describe_type(text)
    if value is None:
        return None
    return _json.loads(_native.value_to_json(text, _canonical(desc, value)))


def from_json(type: IcebergType, json_value: Any) -> Any:
    """The value of an Appendix D JSON form (a ``json.loads`` result)."""
    text = _type_text(type)
    desc = _native.describe_type(text)
    if json_value is None:
        return None
    try:
        json_text = _json.dumps(json_value, allow_nan=False)
    except TypeError:
        raise FrazilTypeError(
            f"{json_value!r} is not a JSON value (str, int, float, bool, list, dict or None)"
        ) from None
    except ValueError:
        raise InvalidValueError(
            f"{json_value!r} is not valid JSON: NaN and infinities are written as the strings "
            f"'NaN', 'Infinity' and '-Infinity'"
        ) from None
    return _python(desc, _native.value_from_json(text, json_text))


def hash(type: IcebergType, value: Any) -> int:
    """The Appendix B hash of ``value``: signed 32-bit Murmur3 x86, seed 0."""
    text = _type_text(type)
    desc = _native.describe_type(text)
    if value is None:
        raise _wrong(value, _type_name(desc), "a value (None has no hash)")
    return _native.value_hash(text, _canonical(desc, value))
