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
    if isinstance(arrow_type, pa.BaseExtensionType):  # pa.uuid(): its storage, wrapped
        storage = literal_array(value, arrow_type.storage_type)
        return pa.ExtensionArray.from_storage(arrow_type, storage)
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
    # Nested values (struct, list and map defaults) are rare: pyarrow converts them (to the
    # storage types: pyarrow cannot convert Python values to a nested extension type).
    plain = pa.array([_nested(value)], type=storage_type(arrow_type))
    return with_type(plain, arrow_type)


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with every extension type (``pa.uuid()``) replaced by its storage type,
    at any depth."""
    if isinstance(arrow_type, pa.BaseExtensionType):
        return storage_type(arrow_type.storage_type)
    if pa.types.is_struct(arrow_type):
        return pa.struct([f.with_type(storage_type(f.type)) for f in arrow_type])
    if pa.types.is_list(arrow_type):
        return pa.list_(arrow_type.value_field.with_type(storage_type(arrow_type.value_type)))
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return pa.map_(
            key.with_type(storage_type(key.type)), item.with_type(storage_type(item.type))
        )
    return arrow_type


def with_type(values: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """``values`` as ``arrow_type``, which differs at most in extension types (and field
    nullability): extension arrays are made from their storage without a copy, at any depth
    (``cast`` to a nested extension type is not supported by every pyarrow)."""
    if values.type == arrow_type:
        return values
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    if isinstance(arrow_type, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(
            arrow_type, with_type(values, arrow_type.storage_type)
        )
    mask = values.is_null() if values.null_count else None
    if pa.types.is_struct(arrow_type):
        children = [with_type(values.field(i), f.type) for i, f in enumerate(arrow_type)]
        return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)
    if pa.types.is_list(arrow_type):
        offsets, child = _span(values)
        element = with_type(child, arrow_type.value_type)
        return pa.ListArray.from_arrays(offsets, element, type=arrow_type, mask=mask)
    if pa.types.is_map(arrow_type):
        offsets, child = _span(values)
        keys = with_type(child.field(0), arrow_type.key_type)
        items = with_type(child.field(1), arrow_type.item_type)
        return pa.MapArray.from_arrays(offsets, keys, items, type=arrow_type, mask=mask)
    return values.cast(arrow_type)


def _span(values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """A list or map array's offsets from 0 and the child values they span."""
    offsets = values.offsets
    first = offsets[0].as_py()
    child = values.values.slice(first, offsets[-1].as_py() - first)
    if first:
        offsets = pa.array([o - first for o in offsets.to_pylist()], offsets.type)
    return offsets, child


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
