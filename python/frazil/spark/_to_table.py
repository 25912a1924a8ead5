"""Spark's Arrow batches in the form frazil's writer takes for a table's columns: what Spark
cannot hold comes back as it was read (:mod:`frazil.spark._schema`): uuid text to 16 bytes,
binary to fixed(n), microseconds (long) to time, and Spark's session zone to UTC."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil import types as t
from frazil.errors import InvalidValueError
from frazil.schema import Schema

_UUID_TEXT = 36
_DASHES = (8, 13, 18, 23)
_HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX_VALUE[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEX_VALUE[_c] = 10 + _i
_DIGITS = np.array([i for i in range(_UUID_TEXT) if i not in _DASHES])


def uuid_bytes(array: pa.Array, path: str) -> pa.Array:
    """uuid text (8-4-4-4-12 hex digits) as 16 bytes; anything else is an error naming the
    column and the value."""
    strings = array.cast(pa.string())
    valid = strings.is_valid()
    filled = pc.if_else(valid, strings, "00000000-0000-0000-0000-000000000000")
    lengths = pc.binary_length(filled).to_numpy(zero_copy_only=False)
    n = len(filled)
    bad = np.flatnonzero(lengths != _UUID_TEXT)
    if n and not bad.size:
        data = np.frombuffer(filled.buffers()[2], dtype=np.uint8)
        offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32)[filled.offset :][: n + 1]
        start = offsets[0]
        text = data[start : start + n * _UUID_TEXT].reshape(n, _UUID_TEXT)
        nibbles = _HEX_VALUE[text[:, _DIGITS]]
        dashes_ok = (text[:, list(_DASHES)] == ord("-")).all(axis=1)
        bad = np.flatnonzero((nibbles == 255).any(axis=1) | ~dashes_ok)
    if bad.size:
        value = strings[int(bad[0])].as_py()
        raise InvalidValueError(f"{path}: {value!r} is not a uuid (8-4-4-4-12 hex digits)")
    if n == 0:
        return pa.array([], pa.binary(16))
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    mask = None if strings.null_count == 0 else pc.invert(valid)
    result = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(16), n, [None, pa.py_buffer(packed.tobytes())]
    )
    if mask is not None:
        result = pc.if_else(valid, result, pa.scalar(None, pa.binary(16)))
    return result


def to_table(array: pa.Array, iceberg: t.IcebergType, path: str) -> pa.Array:
    """One column (or nested value) of Spark's batch in the form the writer takes for
    ``iceberg``."""
    source = array.type
    if isinstance(iceberg, t.UUIDType) and (
        pa.types.is_string(source) or pa.types.is_large_string(source)
    ):
        return uuid_bytes(array, path)
    if isinstance(iceberg, t.FixedType) and (
        pa.types.is_binary(source) or pa.types.is_large_binary(source)
    ):
        lengths = pc.binary_length(array)
        wrong = pc.and_(array.is_valid(), pc.not_equal(lengths, iceberg.length))
        if pc.any(wrong).as_py():
            index = pc.index(wrong, True).as_py()
            raise InvalidValueError(
                f"{path}: a value of {len(array[index].as_py())} bytes cannot be written as "
                f"{iceberg}"
            )
        return array.cast(pa.binary(iceberg.length))
    if isinstance(iceberg, t.TimeType) and pa.types.is_int64(source):
        return array.view(pa.time64("us")) if array.offset == 0 else array.cast(pa.time64("us"))
    if (
        isinstance(iceberg, (t.TimestamptzType, t.TimestamptzNanoType))
        and pa.types.is_timestamp(source)
        and source.tz not in (None, "UTC")
    ):
        # Spark's zone is its session's; the instants are the same in UTC.
        return array.cast(pa.timestamp(source.unit, "UTC"))
    if isinstance(iceberg, t.StructType) and pa.types.is_struct(source):
        by_name = {f.name: f for f in iceberg.fields}
        children = []
        fields = []
        for i, child in enumerate(source):
            target = by_name.get(child.name)
            value = array.field(i)
            if target is not None:
                value = to_table(value, target.field_type, f"{path}.{child.name}")
            children.append(value)
            fields.append(pa.field(child.name, value.type, child.nullable))
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if isinstance(iceberg, t.ListType) and (
        pa.types.is_list(source) or pa.types.is_large_list(source)
    ):
        values = to_table(array.values, iceberg.element_type, f"{path}.element")
        if values.type == array.values.type:
            return array
        mask = array.is_null() if array.null_count else None
        return type(array).from_arrays(array.offsets, values, mask=mask)
    if isinstance(iceberg, t.MapType) and pa.types.is_map(source):
        keys = to_table(array.keys, iceberg.key_type, f"{path}.key")
        items = to_table(array.items, iceberg.value_type, f"{path}.value")
        if keys.type == array.keys.type and items.type == array.items.type:
            return array
        offsets = array.offsets
        if array.null_count:
            offsets = pc.if_else(
                pa.concat_arrays([array.is_valid(), pa.array([True])]), offsets, None
            )
        return pa.MapArray.from_arrays(offsets, keys, items)
    return array


def batch_to_table(batch: pa.RecordBatch, schema: Schema) -> pa.RecordBatch:
    """Spark's ``batch`` with each column the table has in the writer's form (columns the
    table lacks are left for the writer's schema check to name)."""
    columns = []
    fields = []
    for field, column in zip(batch.schema, batch.columns, strict=True):
        target = schema.find_field(field.name)
        if target is not None:
            column = to_table(column, target.field_type, field.name)
        columns.append(column)
        fields.append(pa.field(field.name, column.type, field.nullable))
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))
