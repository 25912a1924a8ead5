"""ORC and Avro data files written the way Iceberg Java writes them, for the reader tests.

ORC: pyarrow's ORC writer with Java's type attributes as field metadata (pyarrow writes field
metadata as ORC type attributes): ``iceberg.id``, ``iceberg.required``, uuid and fixed as binary
with ``iceberg.binary-type`` (and ``iceberg.length``), time as a long with ``iceberg.long-type``
TIME. Avro: fastavro with the schema Java's ``AvroSchemaUtil`` gives (records ``r<id>`` with
``field-id``, lists with ``element-id``, string maps with ``key-id``/``value-id``, other maps as
arrays of ``k<id>_v<id>`` records) and values in their raw Avro representation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
from frazil import Schema
from frazil import types as t
from read_helpers import file_schema

ICEBERG_ID = b"iceberg.id"


# --- ORC ---------------------------------------------------------------------------------------


def _orc_field(field: pa.Field, iceberg: t.NestedField) -> pa.Field:
    """The ORC-ready field of ``iceberg``."""
    ft = iceberg.field_type
    metadata = {ICEBERG_ID: str(iceberg.field_id).encode(), b"iceberg.required": b"false"}
    if iceberg.required:
        metadata[b"iceberg.required"] = b"true"
    arrow_type = field.type
    if isinstance(ft, t.StructType):
        children = [_orc_field(arrow_type.field(i), f) for i, f in enumerate(ft.fields)]
        arrow_type = pa.struct(children)
    elif isinstance(ft, t.ListType):
        arrow_type = pa.list_(_orc_field(arrow_type.value_field, ft.element_field))
    elif isinstance(ft, t.MapType):
        arrow_type = pa.map_(
            _orc_field(arrow_type.key_field, ft.key_field),
            _orc_field(arrow_type.item_field, ft.value_field),
        )
    elif isinstance(ft, t.UUIDType):
        arrow_type = pa.binary()
        metadata[b"iceberg.binary-type"] = b"UUID"
    elif isinstance(ft, t.FixedType):
        arrow_type = pa.binary()
        metadata[b"iceberg.binary-type"] = b"FIXED"
        metadata[b"iceberg.length"] = str(ft.length).encode()
    elif isinstance(ft, t.BinaryType):
        metadata[b"iceberg.binary-type"] = b"BINARY"
    elif isinstance(ft, t.TimeType):
        arrow_type = pa.int64()
        metadata[b"iceberg.long-type"] = b"TIME"
    elif isinstance(ft, t.LongType):
        metadata[b"iceberg.long-type"] = b"LONG"
    return pa.field(field.name, arrow_type, field.nullable, metadata=metadata)


def write_orc(path: Path | str, table: pa.Table, schema: Schema, **options: Any) -> None:
    """``table`` (columns of ``schema``'s Arrow types) as an ORC file in Java's shape."""
    base = file_schema(schema)
    target = pa.schema([_orc_field(base.field(i), f) for i, f in enumerate(schema.fields)])
    columns = []
    for i, field in enumerate(target):
        column = table.column(i)
        if column.type != field.type:
            # time64 -> int64 and fixed_size_binary -> binary keep the values' bits.
            column = _raw_cast(column, field.type)
        columns.append(column)
    orc.write_table(pa.Table.from_arrays(columns, schema=target), str(path), **options)


def _raw_cast(column: Any, arrow_type: pa.DataType) -> Any:
    source = column.type
    if pa.types.is_time(source) and pa.types.is_int64(arrow_type):
        return column.cast(pa.time64("us")).cast(pa.int64())
    return column.cast(arrow_type)


# --- Avro --------------------------------------------------------------------------------------


def _decimal_bytes(precision: int) -> int:
    size = 1
    while (8 * size - 1) * math.log10(2) < precision:
        size += 1
    return size


def avro_type(ft: t.IcebergType, field_id: int) -> Any:
    """The Avro schema of an Iceberg type in the shape Java writes (named types get unique
    names from ``field_id``)."""
    if isinstance(ft, t.StructType):
        return avro_record(ft.fields, f"r{field_id}")
    if isinstance(ft, t.ListType):
        element = avro_type(ft.element_type, ft.element_id)
        return {
            "type": "array",
            "items": element if ft.element_required else ["null", element],
            "element-id": ft.element_id,
        }
    if isinstance(ft, t.MapType):
        value = avro_type(ft.value_type, ft.value_id)
        value = value if ft.value_required else ["null", value]
        if isinstance(ft.key_type, t.StringType):
            return {"type": "map", "values": value, "key-id": ft.key_id, "value-id": ft.value_id}
        return {
            "type": "array",
            "logicalType": "map",
            "items": {
                "type": "record",
                "name": f"k{ft.key_id}_v{ft.value_id}",
                "fields": [
                    {
                        "name": "key",
                        "type": avro_type(ft.key_type, ft.key_id),
                        "field-id": ft.key_id,
                    },
                    {"name": "value", "type": value, "field-id": ft.value_id},
                ],
            },
        }
    simple = {
        t.BooleanType: "boolean",
        t.IntegerType: "int",
        t.LongType: "long",
        t.FloatType: "float",
        t.DoubleType: "double",
        t.StringType: "string",
        t.BinaryType: "bytes",
    }
    for kind, name in simple.items():
        if isinstance(ft, kind):
            return name
    if isinstance(ft, t.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(ft, t.TimeType):
        return {"type": "long", "logicalType": "time-micros"}
    if isinstance(ft, (t.TimestampType, t.TimestamptzType)):
        utc = isinstance(ft, t.TimestamptzType)
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": utc}
    if isinstance(ft, t.UUIDType):
        return {"type": "fixed", "name": f"uuid_fixed_{field_id}", "size": 16}
    if isinstance(ft, t.FixedType):
        return {"type": "fixed", "name": f"fixed_{field_id}", "size": ft.length}
    if isinstance(ft, t.DecimalType):
        return {
            "type": "fixed",
            "name": f"decimal_{ft.precision}_{ft.scale}_{field_id}",
            "size": _decimal_bytes(ft.precision),
            "logicalType": "decimal",
            "precision": ft.precision,
            "scale": ft.scale,
        }
    raise NotImplementedError(str(ft))


def avro_record(fields: tuple[t.NestedField, ...], name: str) -> dict[str, Any]:
    out = []
    for f in fields:
        inner = avro_type(f.field_type, f.field_id)
        field: dict[str, Any] = {"name": f.name, "field-id": f.field_id}
        if f.required:
            field["type"] = inner
        else:
            field["type"] = ["null", inner]
            field["default"] = None
        out.append(field)
    return {"type": "record", "name": name, "fields": out}


EPOCH = dt.datetime(1970, 1, 1)


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def avro_value(value: Any, ft: t.IcebergType) -> Any:
    """A Python value (as pyarrow's ``to_pylist`` gives it) in Avro's raw representation."""
    if value is None:
        return None
    if isinstance(ft, t.StructType):
        return {f.name: avro_value(value[f.name], f.field_type) for f in ft.fields}
    if isinstance(ft, t.ListType):
        return [avro_value(v, ft.element_type) for v in value]
    if isinstance(ft, t.MapType):
        pairs = [(avro_value(k, ft.key_type), avro_value(v, ft.value_type)) for k, v in value]
        if isinstance(ft.key_type, t.StringType):
            return dict(pairs)
        return [{"key": k, "value": v} for k, v in pairs]
    if isinstance(ft, t.DateType):
        return (value - dt.date(1970, 1, 1)).days
    if isinstance(ft, t.TimeType):
        return (
            (value.hour * 60 + value.minute) * 60 + value.second
        ) * 1_000_000 + value.microsecond
    if isinstance(ft, (t.TimestampType, t.TimestamptzType)):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return _micros(value - EPOCH)
    if isinstance(ft, t.DecimalType):
        # Enough precision for 38 digits: the default context's 28 would round them.
        with decimal.localcontext(prec=80):
            unscaled = int(value.scaleb(ft.scale).to_integral_value(rounding=decimal.ROUND_HALF_UP))
        return unscaled.to_bytes(_decimal_bytes(ft.precision), "big", signed=True)
    return value


def write_avro(
    path: Path | str, table: pa.Table, schema: Schema, codec: str = "deflate", **options: Any
) -> None:
    """``table`` (columns named as ``schema``'s fields) as an Avro data file in Java's shape."""
    avro_schema = avro_record(schema.fields, "table")
    records = [
        {f.name: avro_value(row[f.name], f.field_type) for f in schema.fields}
        for row in table.to_pylist()
    ]
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(avro_schema), records, codec=codec, **options)
