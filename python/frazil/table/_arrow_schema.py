"""The Arrow schemas of Iceberg schemas, both ways: the types the reader decodes into
(:func:`arrow_schema`), the schema a scan hands out (:func:`scan_arrow_schema`: Iceberg
nullability stated, uuid as pyarrow's ``pa.uuid()`` or its storage type), and the Iceberg schema
of an Arrow schema (:func:`schema_from_arrow`, for ``create_table`` and ``union_by_name``). The
Iceberg -> Arrow mapping itself is the Rust core's (shared with the manifest decoder)."""

from __future__ import annotations

import functools
import json
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil import types as t
from frazil.errors import ValidationError
from frazil.schema import Schema

__all__ = [
    "UUID_TYPES",
    "UUID_TYPE_OPTION",
    "arrow_schema",
    "check_uuid_type",
    "scan_arrow_schema",
    "schema_from_arrow",
]


# The scan option (and table property) choosing the Arrow type of uuid columns, and its values:
# pyarrow's canonical UUID extension type (pyiceberg 0.12 reads uuid so), or its storage type.
UUID_TYPE_OPTION = "read.arrow.uuid-type"
UUID_TYPES = ("uuid", "fixed_size_binary")


def arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow types the reader decodes ``schema``'s columns into, every field nullable and
    uuid as ``fixed_size_binary(16)`` (the Rust core's Iceberg -> Arrow mapping, shared with
    the manifest decoder and the writer); :func:`scan_arrow_schema` is what a scan hands out."""
    return _arrow_schema(json.dumps(schema.to_json()), False, False)


def scan_arrow_schema(
    schema: Schema, uuid_type: str = "uuid", nullability: bool = True
) -> pa.Schema:
    """The Arrow schema a scan hands out ``schema``'s rows with: :func:`arrow_schema`'s types
    with the Iceberg nullability stated (a field, list element or map value is nullable
    exactly when it is optional, as pyiceberg's; every one with ``nullability=False``), and
    uuid columns as ``uuid_type`` (:data:`UUID_TYPES`: ``"uuid"``, pyarrow's ``pa.uuid()``,
    or ``"fixed_size_binary"``)."""
    uuid_type = check_uuid_type(uuid_type, "uuid_type")
    return _arrow_schema(json.dumps(schema.to_json()), nullability, uuid_type == "uuid")


def check_uuid_type(value: Any, where: str) -> str:
    """``value`` if it names a uuid Arrow type (:data:`UUID_TYPES`), else a ValidationError
    naming ``where`` (the option, property or argument it came from)."""
    if value not in UUID_TYPES:
        raise ValidationError(
            f"{where} must be one of {', '.join(map(repr, UUID_TYPES))}, got {value!r}"
        )
    return str(value)


@functools.lru_cache(maxsize=64)
def _arrow_schema(schema_json: str, nullability: bool, uuid_extension: bool) -> pa.Schema:
    result: pa.Schema = _native.iceberg_arrow_schema(schema_json, nullability, uuid_extension)
    return result


# Arrow time zones that mean UTC (an Iceberg timestamptz is stored as UTC instants; any zone
# would do for the values, but only these round-trip without surprising a reader).
_UTC_ZONES = {"utc", "etc/utc", "z", "+00:00", "-00:00", "gmt", "etc/gmt"}


def schema_from_arrow(
    arrow: pa.Schema, *, format_version: int | None = None, downcast_ns: bool = False
) -> Schema:
    """The Iceberg schema of an Arrow schema, field ids assigned in order (depth first, as
    the fields appear), nullable fields optional. Types Iceberg cannot hold (unsigned 64-bit
    integers, durations, intervals, unions, half floats, non-UTC zones...) are refused with an
    error naming the field and its Arrow type.

    Nanosecond timestamps become ``timestamp_ns``/``timestamptz_ns``, which need format
    version 3: for a table of an older ``format_version`` they are refused, naming both ways
    out, unless ``downcast_ns`` (pyiceberg's ``downcast-ns-timestamp-to-us-on-write``), which
    makes them ``timestamp``/``timestamptz`` (as pyiceberg, on any format version)."""
    if not isinstance(arrow, pa.Schema):
        raise ValidationError(f"expected a pyarrow Schema, got {type(arrow).__name__}")
    counter = iter(range(1, 1 << 31))

    def convert_field(f: pa.Field, path: str) -> t.NestedField:
        field_id = next(counter)
        return t.NestedField(field_id, f.name, convert(f.type, path), required=not f.nullable)

    def convert(ty: pa.DataType, path: str) -> t.IcebergType:
        if pa.types.is_dictionary(ty):
            return convert(ty.value_type, path)
        if pa.types.is_struct(ty):
            return t.StructType(
                tuple(
                    convert_field(ty.field(i), f"{path}.{ty.field(i).name}")
                    for i in range(ty.num_fields)
                )
            )
        if pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_fixed_size_list(ty):
            element_id = next(counter)
            element = ty.value_field
            return t.ListType(
                element_id, convert(element.type, f"{path}.element"), not element.nullable
            )
        if pa.types.is_map(ty):
            key_id, value_id = next(counter), next(counter)
            return t.MapType(
                key_id,
                convert(ty.key_type, f"{path}.key"),
                value_id,
                convert(ty.item_type, f"{path}.value"),
                not ty.item_field.nullable,
            )
        primitive = _arrow_primitive(ty)
        if downcast_ns and isinstance(primitive, (t.TimestampNanoType, t.TimestamptzNanoType)):
            zoned = isinstance(primitive, t.TimestamptzNanoType)
            primitive = t.TimestamptzType() if zoned else t.TimestampType()
        elif (
            format_version is not None
            and primitive is not None
            and primitive.min_format_version > format_version
        ):
            from frazil.errors import InvalidSchemaError
            from frazil.table._properties import DOWNCAST_NS_HINT

            hint = ""
            if isinstance(primitive, (t.TimestampNanoType, t.TimestamptzNanoType)):
                hint = f", or {DOWNCAST_NS_HINT}"
            raise InvalidSchemaError(
                f"field {path!r}: Arrow type {ty} is an Iceberg {primitive}, which needs format "
                f"version {primitive.min_format_version} (the table is v{format_version}): "
                f"use format-version {primitive.min_format_version}{hint}"
            )
        if primitive is None:
            raise ValidationError(
                f"field {path!r}: Arrow type {ty} has no Iceberg equivalent (Iceberg has "
                "boolean, int, long, float, double, decimal(P<=38), date, time (us), timestamp "
                "and timestamptz (us or ns, UTC), string, uuid, fixed, binary, struct, list, map)"
            )
        return primitive

    fields = tuple(convert_field(f, f.name) for f in arrow)
    return Schema(fields=fields)


def _arrow_primitive(ty: pa.DataType) -> t.IcebergType | None:
    types = pa.types
    if types.is_boolean(ty):
        return t.BooleanType()
    if types.is_int8(ty) or types.is_int16(ty) or types.is_int32(ty):
        return t.IntegerType()
    if types.is_uint8(ty) or types.is_uint16(ty):
        return t.IntegerType()
    if types.is_int64(ty) or types.is_uint32(ty):
        return t.LongType()
    if types.is_float32(ty):
        return t.FloatType()
    if types.is_float64(ty):
        return t.DoubleType()
    if types.is_decimal(ty) and ty.precision <= 38:
        return t.DecimalType(ty.precision, ty.scale)
    if types.is_date(ty):
        return t.DateType()
    if types.is_time64(ty) and ty.unit == "us":
        return t.TimeType()
    if types.is_timestamp(ty):
        zoned = ty.tz is not None
        if zoned and ty.tz.lower() not in _UTC_ZONES:
            return None
        if ty.unit == "ns":
            return t.TimestamptzNanoType() if zoned else t.TimestampNanoType()
        return t.TimestamptzType() if zoned else t.TimestampType()
    if types.is_string(ty) or types.is_large_string(ty) or types.is_string_view(ty):
        return t.StringType()
    if isinstance(ty, pa.BaseExtensionType) and ty.extension_name == "arrow.uuid":
        return t.UUIDType()
    if types.is_fixed_size_binary(ty):
        return t.FixedType(ty.byte_width)
    if types.is_binary(ty) or types.is_large_binary(ty) or types.is_binary_view(ty):
        return t.BinaryType()
    if types.is_null(ty):
        return t.UnknownType()
    return None
