"""Arrow scalars of Python values, built from their bytes.

pyarrow's own conversion of a Python value (``pa.scalar(5)``, ``pc.fill_null(x, False)``,
``pa.array([...])``) first asks whether the value is a pandas object, which imports pandas:
about a second in every fresh process, so in every PySpark worker that reads a task (see
tests/python/test_no_pandas.py). The reader builds the few scalars it needs (filter literals,
defaults, partition values) here instead, from the value's Arrow layout.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import struct
import uuid
from typing import Any

import pyarrow as pa

from frazil.errors import InvalidValueError

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_UNITS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}


def _fixed(arrow_type: pa.DataType, data: bytes) -> pa.Array:
    return pa.Array.from_buffers(arrow_type, 1, [None, pa.py_buffer(data)])


def _variable(arrow_type: pa.DataType, data: bytes, large: bool) -> pa.Array:
    offsets = struct.pack("<qq" if large else "<ii", 0, len(data))
    return pa.Array.from_buffers(arrow_type, 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _micros(value: Any) -> int:
    if isinstance(value, dt.datetime):
        delta = value - (_EPOCH_UTC if value.tzinfo is not None else _EPOCH)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days * 86_400_000_000
    raise InvalidValueError(f"{value!r} is not a date or timestamp")


def _timestamp(value: Any, arrow_type: pa.TimestampType) -> int:
    unit = arrow_type.unit
    if isinstance(value, str):
        # Nanosecond literals come as ISO text (a datetime has no nanoseconds).
        from frazil import values

        kind = "timestamptz_ns" if arrow_type.tz is not None else "timestamp_ns"
        nanos: int = values.from_json(kind, value)
        return nanos if unit == "ns" else nanos // (1_000 * _UNITS[unit])
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # already in the column's unit (timestamp_ns values are ints)
    micros = _micros(value)
    return micros * 1_000 if unit == "ns" else micros // _UNITS[unit]


def _time(value: Any, arrow_type: pa.DataType) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, dt.time):
        raise InvalidValueError(f"{value!r} is not a time")
    micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
    micros += value.microsecond
    unit = arrow_type.unit
    return micros * 1_000 if unit == "ns" else micros // _UNITS[unit]


def _unscaled(value: Any, scale: int) -> int:
    number = decimal.Decimal(value) if not isinstance(value, decimal.Decimal) else value
    unscaled = number.scaleb(scale, context=decimal.Context(prec=100))
    if unscaled != unscaled.to_integral_value():
        raise InvalidValueError(f"{value!r} does not fit scale {scale}")
    return int(unscaled)


def literal_array(value: Any, arrow_type: pa.DataType) -> pa.Array:
    """A one-element array holding ``value`` (a Python value of frazil.values' kinds)."""
    if value is None or pa.types.is_null(arrow_type):
        return pa.nulls(1, arrow_type)
    if pa.types.is_boolean(arrow_type):
        return _fixed(arrow_type, bytes([1 if value else 0]))
    if pa.types.is_integer(arrow_type):
        code = {8: "b", 16: "h", 32: "i", 64: "q"}[arrow_type.bit_width]
        code = code.upper() if pa.types.is_unsigned_integer(arrow_type) else code
        return _fixed(arrow_type, struct.pack("<" + code, value))
    if pa.types.is_float32(arrow_type) or pa.types.is_float64(arrow_type):
        code = "<f" if pa.types.is_float32(arrow_type) else "<d"
        return _fixed(arrow_type, struct.pack(code, value))
    if pa.types.is_date32(arrow_type):
        days = value if isinstance(value, int) else (value - _EPOCH.date()).days
        return _fixed(arrow_type, struct.pack("<i", days))
    if pa.types.is_timestamp(arrow_type):
        return _fixed(arrow_type, struct.pack("<q", _timestamp(value, arrow_type)))
    if pa.types.is_time32(arrow_type) or pa.types.is_time64(arrow_type):
        code = "<i" if pa.types.is_time32(arrow_type) else "<q"
        return _fixed(arrow_type, struct.pack(code, _time(value, arrow_type)))
    if pa.types.is_decimal128(arrow_type):
        unscaled = _unscaled(value, arrow_type.scale)
        return _fixed(arrow_type, unscaled.to_bytes(16, "little", signed=True))
    if pa.types.is_fixed_size_binary(arrow_type):
        data = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
        if len(data) != arrow_type.byte_width:
            raise InvalidValueError(f"{value!r} is not {arrow_type.byte_width} bytes")
        return _fixed(arrow_type, data)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return _variable(arrow_type, str(value).encode(), pa.types.is_large_string(arrow_type))
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        data = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
        return _variable(arrow_type, data, pa.types.is_large_binary(arrow_type))
    # Nested values (struct, list and map defaults) are rare: pyarrow converts them.
    return pa.array([_nested(value)], type=arrow_type)


def _nested(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, dict):
        return {k: _nested(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nested(v) for v in value]
    return value


def literal(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    """``value`` as a pyarrow scalar of ``arrow_type``."""
    return literal_array(value, arrow_type)[0]


@functools.cache
def boolean(value: bool) -> pa.Scalar:
    return literal(value, pa.bool_())


def literals(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """An array of ``values`` (none of them nested)."""
    if not values:
        return pa.nulls(0, arrow_type)
    return pa.concat_arrays([literal_array(v, arrow_type) for v in values])
