"""Iceberg rows as Spark holds them: the Spark schema of a read and the Arrow batches in exactly
the form Spark expects (string not large_string, timestamps in UTC, Spark's list and map field
names, nullability).

Types Spark cannot hold are mapped (README "PySpark", type table):

=====================  ======================================================================
Iceberg                Spark
=====================  ======================================================================
uuid                   string, the canonical 8-4-4-4-12 lower-case form (as Iceberg Java's
                       Spark integration)
fixed(n)               binary
time                   long, microseconds from midnight (Spark 3.5 has no time type)
timestamp_ns           timestamp_ntz, truncated to microseconds (toward the past)
timestamptz_ns         timestamp, truncated to microseconds (toward the past)
unknown (v3)           void (always null)
=====================  ======================================================================

geometry, geography and variant columns are refused with an error naming the column: select
other columns."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import FrazilTypeError
from frazil.spark._pyspark import require


def _unsupported(name: str, arrow_type: pa.DataType) -> FrazilTypeError:
    return FrazilTypeError(
        f"column {name!r} has type {arrow_type}, which Spark cannot hold: leave it out of the "
        "read (columns=...)"
    )


def spark_type(arrow_type: pa.DataType, name: str, nullable_children: bool = True) -> Any:
    """The Spark type of a column frazil's reader gives as ``arrow_type``
    (:func:`frazil.table.read.read_task_schema`, uuid as ``pa.uuid()``)."""
    t = require("pyspark.sql.types")
    if isinstance(arrow_type, pa.BaseExtensionType):
        if arrow_type.extension_name == "arrow.uuid":
            return t.StringType()
        raise _unsupported(name, arrow_type)
    if pa.types.is_boolean(arrow_type):
        return t.BooleanType()
    if pa.types.is_int32(arrow_type):
        return t.IntegerType()
    if pa.types.is_int64(arrow_type) or pa.types.is_time64(arrow_type):
        return t.LongType()
    if pa.types.is_float32(arrow_type):
        return t.FloatType()
    if pa.types.is_float64(arrow_type):
        return t.DoubleType()
    if pa.types.is_decimal(arrow_type):
        return t.DecimalType(arrow_type.precision, arrow_type.scale)
    if pa.types.is_date32(arrow_type):
        return t.DateType()
    if pa.types.is_timestamp(arrow_type):
        return t.TimestampType() if arrow_type.tz is not None else t.TimestampNTZType()
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return t.StringType()
    if (
        pa.types.is_binary(arrow_type)
        or pa.types.is_large_binary(arrow_type)
        or pa.types.is_fixed_size_binary(arrow_type)
    ):
        return t.BinaryType()
    if pa.types.is_null(arrow_type):
        return t.NullType()
    if pa.types.is_struct(arrow_type):
        return t.StructType(
            [
                t.StructField(f.name, spark_type(f.type, f"{name}.{f.name}"), f.nullable)
                for f in arrow_type
            ]
        )
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        element = arrow_type.value_field
        return t.ArrayType(spark_type(element.type, f"{name}.element"), element.nullable)
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return t.MapType(
            spark_type(key.type, f"{name}.key"),
            spark_type(item.type, f"{name}.value"),
            item.nullable,
        )
    raise _unsupported(name, arrow_type)


def spark_schema(arrow_schema: pa.Schema) -> Any:
    """The Spark StructType of batches of ``arrow_schema`` (a read's schema)."""
    t = require("pyspark.sql.types")
    return t.StructType(
        [t.StructField(f.name, spark_type(f.type, f.name), f.nullable) for f in arrow_schema]
    )


def spark_arrow_schema(schema: Any) -> pa.Schema:
    """The Arrow schema Spark expects for batches of the Spark StructType ``schema``."""
    from frazil.spark._pyspark import spark_version

    types = require("pyspark.sql.pandas.types")
    if spark_version() >= (4, 0):
        result: pa.Schema = types.to_arrow_schema(schema, timezone="UTC")
    else:
        result = types.to_arrow_schema(schema)
    return result


# --- batches -----------------------------------------------------------------------------------

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# Where each of the 32 hex digits of a uuid goes in its 36-character text form.
_DIGIT_AT = np.array([i + (i >= 8) + (i >= 12) + (i >= 16) + (i >= 20) for i in range(32)])


def uuid_strings(array: pa.Array) -> pa.Array:
    """16-byte uuids as their canonical text (RFC 4122), vectorized: no Python object per
    value."""
    storage = array.storage if isinstance(array, pa.ExtensionArray) else array
    n = len(storage)
    if n == 0:
        return pa.array([], pa.string())
    values = storage.buffers()[1]
    raw = np.frombuffer(values, dtype=np.uint8, count=(storage.offset + n) * 16)
    raw = raw[storage.offset * 16 :].reshape(n, 16)
    digits = np.empty((n, 32), dtype=np.uint8)
    digits[:, 0::2] = _HEX[raw >> 4]
    digits[:, 1::2] = _HEX[raw & 0x0F]
    text = np.full((n, 36), ord("-"), dtype=np.uint8)
    text[:, _DIGIT_AT] = digits
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    validity = storage.buffers()[0]
    result = pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text.tobytes())]
    )
    if validity is not None and storage.null_count:
        result = pc.if_else(storage.is_valid(), result, pa.scalar(None, pa.string()))
    return result


def conform(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` (frazil's reader's type) as ``target`` (Spark's Arrow type for it)."""
    source = array.type
    if source == target:
        return array
    if isinstance(source, pa.BaseExtensionType):
        if source.extension_name == "arrow.uuid" and pa.types.is_string(target):
            return uuid_strings(array)
        return conform(array.storage, target)
    if pa.types.is_fixed_size_binary(source) and pa.types.is_string(target):
        return uuid_strings(array)
    if pa.types.is_struct(source):
        children = [conform(array.field(i), target.field(i).type) for i in range(source.num_fields)]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_map(source):
        offsets = array.offsets
        keys = conform(array.keys, target.key_type)
        items = conform(array.items, target.item_type)
        if array.null_count:
            offsets = pc.if_else(
                pa.concat_arrays([array.is_valid(), pa.array([True])]), offsets, None
            )
        return pa.MapArray.from_arrays(offsets, keys, items, type=target)
    if pa.types.is_list(source) or pa.types.is_large_list(source):
        values = conform(array.values, target.value_type)
        offsets = array.offsets
        if pa.types.is_large_list(source) and not pa.types.is_large_list(target):
            offsets = offsets.cast(pa.int32())
        mask = array.is_null() if array.null_count else None
        return type(pa.array([], target)).from_arrays(offsets, values, type=target, mask=mask)
    if pa.types.is_time64(source):
        # Microseconds from midnight (Spark holds no time of day).
        return array.cast(pa.time64("us")).view(pa.int64()).cast(target)
    if pa.types.is_timestamp(source) and pa.types.is_timestamp(target):
        if source.unit == "ns":
            micros = _floor_div(array.view(pa.int64()), 1000)
            return micros.view(pa.timestamp("us", source.tz)).cast(target)
        return array.cast(target)
    return array.cast(target)


def _floor_div(values: pa.Array, divisor: int) -> pa.Array:
    """Integer division rounding toward negative infinity (pyarrow's truncates toward 0)."""
    quotient = pc.divide(values, divisor)
    remainder = pc.subtract(values, pc.multiply(quotient, divisor))
    return pc.if_else(pc.less(remainder, 0), pc.subtract(quotient, 1), quotient)


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` (frazil's reader's schema, same column order) in Spark's Arrow ``schema``."""
    columns = [conform(c, f.type) for c, f in zip(batch.columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def conform_batches(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema
) -> Iterable[pa.RecordBatch]:
    for batch in batches:
        yield conform_batch(batch, schema)
