"""A data file's Arrow columns read into a projected Iceberg schema, by field id (spec: "Column
Projection", "Schema Evolution", "Default values").

A file's columns are matched to the schema's fields by the Parquet field ids (``PARQUET:field_id``
in pyarrow's field metadata) or, for files written without ids, through the table's name
mapping. The projection is planned once per file (:func:`plan_projection`) and applied to each
batch: renamed and reordered fields are found by id, dropped ones are not read, promoted
primitives are cast (int -> long, float -> double, decimal precision widening, date ->
timestamp), nested struct fields, list elements and map keys and values are matched by id at
every depth, and fields a file lacks are filled with their ``initial-default`` (v3), the value
of an identity partition, or null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import types as t
from frazil.errors import InvalidDataError
from frazil.name_mapping import MappedField, NameMapping
from frazil.table._literals import literal

FIELD_ID_KEY = b"PARQUET:field_id"

Convert = Callable[[pa.Array], pa.Array]
Make = Callable[[int], pa.Array]


@dataclass(frozen=True)
class FileField:
    """A field of a data file's Arrow schema with the Iceberg field id it carries (or is mapped
    to); ``children`` are a struct's fields, a list's element or a map's key and value."""

    name: str
    field_id: int | None
    arrow_type: pa.DataType
    children: tuple[FileField, ...]


def _children_types(arrow_type: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(arrow_type):
        return [arrow_type.field(i) for i in range(arrow_type.num_fields)]
    if pa.types.is_map(arrow_type):
        return [arrow_type.key_field, arrow_type.item_field]
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        return [arrow_type.value_field]
    return []


def _id_of(field: pa.Field) -> int | None:
    raw = (field.metadata or {}).get(FIELD_ID_KEY)
    return None if raw is None else int(raw)


def _with_ids(field: pa.Field) -> FileField:
    children = tuple(_with_ids(c) for c in _children_types(field.type))
    return FileField(field.name, _id_of(field), field.type, children)


def _has_ids(field: pa.Field) -> bool:
    return _id_of(field) is not None or any(_has_ids(c) for c in _children_types(field.type))


def _mapped(
    field: pa.Field, mapped: MappedField | None, position_names: tuple[str, ...]
) -> FileField:
    """``field`` with ids from its mapping. List elements and map keys and values are mapped by
    their position (``element``, ``key``, ``value``), whatever the writer called them."""
    kids = _children_types(field.type)
    below = mapped.fields if mapped is not None else None
    children = []
    for i, child in enumerate(kids):
        if position_names:
            wanted = position_names[i]
            match = next((m for m in below or () if wanted in m.names), None)
        else:
            match = next((m for m in below or () if child.name in m.names), None)
        children.append(_mapped(child, match, _positions(child.type)))
    field_id = mapped.field_id if mapped is not None else None
    return FileField(field.name, field_id, field.type, tuple(children))


def _positions(arrow_type: pa.DataType) -> tuple[str, ...]:
    if pa.types.is_map(arrow_type):
        return ("key", "value")
    if pa.types.is_struct(arrow_type):
        return ()
    if _children_types(arrow_type):
        return ("element",)
    return ()


def file_fields(
    schema: pa.Schema, location: str, name_mapping: NameMapping | None
) -> tuple[FileField, ...]:
    """The top-level fields of a data file with their Iceberg ids: the file's own ids when any
    field has one, else the name mapping's; a file with neither is refused."""
    fields = [schema.field(i) for i in range(len(schema))]
    if any(_has_ids(f) for f in fields):
        return tuple(_with_ids(f) for f in fields)
    if name_mapping is None:
        raise InvalidDataError(
            f"{location}: the data file has no Parquet field ids and the table has no name "
            "mapping (schema.name-mapping.default) to give its columns ids"
        )
    out = []
    for field in fields:
        match = next((m for m in name_mapping.fields if field.name in m.names), None)
        out.append(_mapped(field, match, _positions(field.type)))
    return tuple(out)


# --- constants ---------------------------------------------------------------------------------


def constant(value: Any, arrow_type: pa.DataType) -> Make:
    """``length`` copies of ``value`` (null when None) as an array of ``arrow_type``."""
    if value is None:
        return lambda length: pa.nulls(length, arrow_type)
    scalar = literal(value, arrow_type)
    return lambda length: pa.repeat(scalar, length)


# --- primitives --------------------------------------------------------------------------------


def _decoded(arrow_type: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(arrow_type):
        return _decoded(arrow_type.value_type)
    if isinstance(arrow_type, pa.BaseExtensionType):
        return _decoded(arrow_type.storage_type)
    return arrow_type


def _plain(values: pa.Array) -> pa.Array:
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return values


def _primitive_allowed(source: pa.DataType, target: t.IcebergType) -> bool:
    """Whether a file column of Arrow type ``source`` reads as ``target``: the type itself, one
    of its Parquet representations, or a valid promotion (spec: "Schema Evolution"; v3 adds
    date -> timestamp)."""
    s = _decoded(source)
    small_ints = (pa.int8(), pa.int16(), pa.uint8(), pa.uint16())
    if isinstance(target, t.BooleanType):
        return bool(pa.types.is_boolean(s))
    if isinstance(target, t.IntegerType):
        return bool(s == pa.int32() or s in small_ints)
    if isinstance(target, t.LongType):
        return bool(s in (pa.int64(), pa.int32(), pa.uint32(), *small_ints))
    if isinstance(target, t.FloatType):
        return bool(s in (pa.float32(), pa.float16()))
    if isinstance(target, t.DoubleType):
        return bool(s in (pa.float64(), pa.float32(), pa.float16()))
    if isinstance(target, t.DecimalType):
        return bool(
            pa.types.is_decimal(s) and s.scale == target.scale and s.precision <= target.precision
        )
    if isinstance(target, t.DateType):
        return bool(pa.types.is_date(s))
    if isinstance(target, t.TimeType):
        return bool(pa.types.is_time(s))
    if isinstance(target, (t.TimestampType, t.TimestamptzType)):
        return bool(
            pa.types.is_timestamp(s)
            or (isinstance(target, t.TimestampType) and pa.types.is_date(s))
        )
    if isinstance(target, (t.TimestampNanoType, t.TimestamptzNanoType)):
        return bool(
            pa.types.is_timestamp(s)
            or (isinstance(target, t.TimestampNanoType) and pa.types.is_date(s))
        )
    if isinstance(target, t.StringType):
        return bool(
            pa.types.is_string(s)
            or pa.types.is_large_string(s)
            or pa.types.is_string_view(s)
            or pa.types.is_binary(s)
            or pa.types.is_large_binary(s)
        )
    if isinstance(target, t.UUIDType):
        return bool(pa.types.is_fixed_size_binary(s) and s.byte_width == 16)
    if isinstance(target, t.FixedType):
        return bool(pa.types.is_fixed_size_binary(s) and s.byte_width == target.length)
    if isinstance(target, (t.BinaryType, t.GeometryType, t.GeographyType)):
        return bool(
            pa.types.is_binary(s) or pa.types.is_large_binary(s) or pa.types.is_binary_view(s)
        )
    return False


def _primitive(
    source: FileField, target: t.NestedField, arrow_type: pa.DataType, where: str
) -> Convert:
    if not _primitive_allowed(source.arrow_type, target.field_type):
        raise InvalidDataError(
            f"{where}: field {target.field_id} ({target.name}) is {source.arrow_type} in the "
            f"data file, which cannot be read as {target.field_type}"
        )
    if source.arrow_type == arrow_type:
        return lambda values: values

    if isinstance(arrow_type, pa.BaseExtensionType):
        # pa.uuid(): the values cast to its storage, then wrapped (no copy).
        storage = _primitive(source, target, arrow_type.storage_type, where)
        return lambda values: pa.ExtensionArray.from_storage(arrow_type, storage(values))

    def cast(values: pa.Array) -> pa.Array:
        values = _plain(values)
        if values.type == arrow_type:
            return values
        try:
            return pc.cast(values, arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise InvalidDataError(
                f"{where}: field {target.field_id} ({target.name}): cannot read "
                f"{values.type} as {target.field_type}: {error}"
            ) from None

    return cast


# --- nested ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    location: str
    constants: Mapping[int, Any]


def _missing(target: t.NestedField, arrow_type: pa.DataType, ctx: _Context) -> Make:
    """A field the file does not have: its initial-default, its identity partition value, or
    null (a required field without either is refused: the file does not fit the schema)."""
    if target.initial_default is not None:
        return constant(target.initial_default_value(), arrow_type)
    if target.field_id in ctx.constants and ctx.constants[target.field_id] is not None:
        return constant(ctx.constants[target.field_id], arrow_type)
    if target.required:
        raise InvalidDataError(
            f"{ctx.location}: required field {target.field_id} ({target.name}) is not in the "
            "data file and has no initial-default"
        )
    return constant(None, arrow_type)


def _field(
    source: FileField, target: t.NestedField, arrow_type: pa.DataType, ctx: _Context
) -> Convert:
    where = ctx.location
    ft = target.field_type
    if isinstance(ft, t.StructType):
        if not pa.types.is_struct(_decoded(source.arrow_type)):
            raise InvalidDataError(
                f"{where}: field {target.field_id} ({target.name}) is a struct in the schema but "
                f"{source.arrow_type} in the data file"
            )
        return _struct(source.children, ft.fields, arrow_type, ctx)
    if isinstance(ft, t.ListType):
        if len(source.children) != 1 or pa.types.is_map(source.arrow_type):
            raise InvalidDataError(
                f"{where}: field {target.field_id} ({target.name}) is a list in the schema but "
                f"{source.arrow_type} in the data file"
            )
        element = _child(source.children, ft.element_field, arrow_type.value_type, ctx)
        return _list(element, arrow_type)
    if isinstance(ft, t.MapType):
        if not pa.types.is_map(source.arrow_type):
            raise InvalidDataError(
                f"{where}: field {target.field_id} ({target.name}) is a map in the schema but "
                f"{source.arrow_type} in the data file"
            )
        key = _child(source.children[:1], ft.key_field, arrow_type.key_type, ctx)
        value = _child(source.children[1:], ft.value_field, arrow_type.item_type, ctx)
        return _map(key, value, arrow_type)
    if source.children:
        raise InvalidDataError(
            f"{where}: field {target.field_id} ({target.name}) is {ft} in the schema but "
            f"{source.arrow_type} in the data file"
        )
    return _primitive(source, target, arrow_type, where)


def _child(
    sources: tuple[FileField, ...], target: t.NestedField, arrow_type: pa.DataType, ctx: _Context
) -> Convert:
    source = next((s for s in sources if s.field_id == target.field_id), None)
    if source is None:
        make = _missing(target, arrow_type, ctx)
        return lambda values: make(len(values))
    return _field(source, target, arrow_type, ctx)


def _validity(values: pa.Array) -> pa.Array | None:
    return pc.is_null(values) if values.null_count else None


def _struct(
    sources: tuple[FileField, ...],
    targets: tuple[t.NestedField, ...],
    arrow_type: pa.StructType,
    ctx: _Context,
) -> Convert:
    fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
    parts: list[tuple[int | None, Convert | Make]] = []
    for target, field in zip(targets, fields, strict=True):
        index = next((i for i, s in enumerate(sources) if s.field_id == target.field_id), None)
        if index is None:
            parts.append((None, _missing(target, field.type, ctx)))
        else:
            parts.append((index, _field(sources[index], target, field.type, ctx)))

    def convert(values: pa.Array) -> pa.Array:
        values = _plain(values)
        children = [
            fn(len(values)) if index is None else fn(values.field(index)) for index, fn in parts
        ]
        return pa.StructArray.from_arrays(children, fields=fields, mask=_validity(values))

    return convert


def _trimmed(values: pa.Array, child: pa.Array) -> tuple[pa.Array, pa.Array]:
    """A list or map array's offsets from 0 and the child values they span."""
    offsets = values.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    if first != 0 or last != len(child):
        child = child.slice(first, last - first)
        offsets = pc.subtract(offsets, literal(first, offsets.type))
    return pc.cast(offsets, pa.int32()), child


def _list(element: Convert, arrow_type: pa.DataType) -> Convert:
    def convert(values: pa.Array) -> pa.Array:
        values = _plain(values)
        if pa.types.is_fixed_size_list(values.type):
            values = pc.cast(values, pa.list_(values.type.value_field))
        offsets, child = _trimmed(values, values.values)
        return pa.ListArray.from_arrays(
            offsets, element(child), type=arrow_type, mask=_validity(values)
        )

    return convert


def _map(key: Convert, value: Convert, arrow_type: pa.DataType) -> Convert:
    def convert(values: pa.Array) -> pa.Array:
        values = _plain(values)
        offsets, keys = _trimmed(values, values.keys)
        _, items = _trimmed(values, values.items)
        return pa.MapArray.from_arrays(
            offsets, key(keys), value(items), type=arrow_type, mask=_validity(values)
        )

    return convert


@dataclass(frozen=True)
class Projection:
    """How one data file's batches become batches of the target fields: ``columns`` are the
    file's top-level columns to read."""

    columns: tuple[str, ...]
    parts: tuple[tuple[int | None, Any], ...]
    schema: pa.Schema

    def apply(self, batch: pa.RecordBatch) -> list[pa.Array]:
        """The target fields' arrays of a batch read with :attr:`columns`."""
        # pyarrow returns the columns read in the file's order, not the order asked for.
        out = []
        for index, fn in self.parts:
            if index is None:
                out.append(fn(batch.num_rows))
            else:
                out.append(fn(batch.column(self.columns[index])))
        return out


def plan_projection(
    file_schema: tuple[FileField, ...],
    targets: tuple[t.NestedField, ...],
    arrow_schema: pa.Schema,
    location: str,
    constants: Mapping[int, Any],
) -> Projection:
    """The projection of a file (its fields with ids) onto ``targets`` (Arrow types from
    ``arrow_schema``, field for field). ``constants`` holds identity partition values by
    source field id, used for fields the file lacks."""
    ctx = _Context(location, constants)
    columns: list[str] = []
    parts: list[tuple[int | None, Any]] = []
    for target, field in zip(targets, arrow_schema, strict=True):
        source = next((s for s in file_schema if s.field_id == target.field_id), None)
        if source is None:
            parts.append((None, _missing(target, field.type, ctx)))
            continue
        if source.name not in columns:
            columns.append(source.name)
        parts.append((columns.index(source.name), _field(source, target, field.type, ctx)))
    return Projection(tuple(columns), tuple(parts), arrow_schema)


# --- required values ---------------------------------------------------------------------------

Check = Callable[[pa.Array, str], None]


def _required_below(arrow_type: pa.DataType) -> list[tuple[int, pa.Field]]:
    """The children of a nested type that are non-nullable or hold such a field (a map's key,
    never null in Arrow, is not looked at)."""
    if pa.types.is_map(arrow_type):
        children = [(1, arrow_type.item_field)]
    else:
        children = list(enumerate(_children_types(arrow_type)))
    return [(i, c) for i, c in children if not c.nullable or _required_below(c.type)]


def required_checks(schema: pa.Schema) -> list[tuple[int, Check]]:
    """For each field of ``schema`` that is non-nullable or holds a non-nullable field (a
    required struct field, list element or map value): a check that a column of it has no
    null where the schema says there is none (nulls under a null parent are allowed), which
    raises :class:`InvalidDataError` naming the data file and the field."""
    checks: list[tuple[int, Check]] = []
    for index, field in enumerate(schema):
        if not field.nullable or _required_below(field.type):
            checks.append((index, _checker(field)))
    return checks


def _checker(field: pa.Field) -> Check:
    return lambda values, location: _check_required(values, field, field.name, location)


def _check_required(values: pa.Array, field: pa.Field, path: str, location: str) -> None:
    if not field.nullable and values.null_count:
        raise InvalidDataError(
            f"{location}: required field {path} has {values.null_count} null value(s) in the "
            "data file"
        )
    below = _required_below(field.type)
    if not below:
        return
    values = _plain(values)
    if values.null_count:
        values = values.filter(values.is_valid())  # what is under a null is not looked at
    if pa.types.is_struct(values.type):
        for index, child in below:
            _check_required(values.field(index), child, f"{path}.{child.name}", location)
        return
    offsets = values.offsets
    first = offsets[0].as_py() if len(offsets) else 0
    items = values.values.slice(first, (offsets[-1].as_py() if len(offsets) else 0) - first)
    for index, child in below:
        if pa.types.is_map(values.type):
            _check_required(items.field(index), child, f"{path}.value", location)
        else:
            _check_required(items, child, f"{path}.element", location)
