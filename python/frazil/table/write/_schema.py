"""Arrow data checked against and conformed to a table schema before it is written.

The Arrow types of a written file are the reader's Iceberg -> Arrow mapping (the Rust core's,
:func:`frazil.table._arrow_schema.arrow_schema`) with every field, list element and map key/value
carrying its Iceberg id as ``PARQUET:field_id`` and the field's nullability: what Java's
Parquet writer produces (timestamptz as UTC microseconds, uuid as fixed[16], time as
microseconds). Columns match by name; the allowed promotions are the widening ones of the
spec's "Schema Evolution" plus the narrower Arrow integer and float types a table column
stands for (iceberg-python #2799: int8/int16 are written as the Iceberg int)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import FrazilTypeError, InvalidValueError, SchemaMismatchError
from frazil.schema import Schema
from frazil.table._arrow_schema import arrow_schema
from frazil.table._properties import DOWNCAST_NS_HINT
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
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

__all__ = ["Conformer", "SchemaMismatchError", "check_arrow_schema", "write_arrow_schema"]

FIELD_ID = b"PARQUET:field_id"


def _with_ids(f: NestedField, arrow: pa.Field) -> pa.Field:
    return pa.field(
        f.name,
        _annotate(f.field_type, arrow.type),
        nullable=not f.required,
        metadata={FIELD_ID: str(f.field_id).encode()},
    )


def _annotate(t: IcebergType, arrow: pa.DataType) -> pa.DataType:
    if isinstance(t, StructType):
        return pa.struct(
            [
                _with_ids(f, arrow.field(f.name))
                for f in t.fields
                if not isinstance(f.field_type, UnknownType)
            ]
        )
    if isinstance(t, ListType):
        return pa.list_(_with_ids(t.element_field, arrow.value_field))
    if isinstance(t, MapType):
        key, value = t.key_field, t.value_field
        return pa.map_(_with_ids(key, arrow.key_field), _with_ids(value, arrow.item_field))
    return arrow


def write_arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of the data files written for ``schema``. Columns of type
    ``unknown`` are not stored in data files (spec: "Primitive Types"), as Java omits them."""
    for name, f in schema.all_fields():
        kind = str(f.field_type)
        if kind == "variant" or kind.startswith(("geometry", "geography")):
            raise FrazilTypeError(f"writing column {name!r} of type {kind} is not supported")
    read = arrow_schema(schema)
    fields = [
        _with_ids(f, read.field(f.name))
        for f in schema.fields
        if not isinstance(f.field_type, UnknownType)
    ]
    return pa.schema(fields)


# --- checking ----------------------------------------------------------------------------------

_INTS: dict[type, tuple[pa.DataType, ...]] = {
    IntegerType: (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()),
    LongType: (
        pa.int8(),
        pa.int16(),
        pa.int32(),
        pa.int64(),
        pa.uint8(),
        pa.uint16(),
        pa.uint32(),
    ),
    FloatType: (pa.float16(), pa.float32()),
    DoubleType: (pa.float16(), pa.float32(), pa.float64()),
    BooleanType: (pa.bool_(),),
    DateType: (pa.date32(), pa.date64()),
    TimeType: (pa.time32("s"), pa.time32("ms"), pa.time64("us")),
}
_STRINGS = (pa.string(), pa.large_string(), pa.string_view())
_BINARIES = (pa.binary(), pa.large_binary(), pa.binary_view())


def _storage(t: pa.DataType) -> pa.DataType:
    # BaseExtensionType: pyarrow's canonical extension types (pa.uuid(), what pyiceberg 0.12
    # reads and writes) are not pa.ExtensionType, which is for types defined in Python.
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_dictionary(t):
        return t.value_type
    return t


def _primitive_fits(target: IcebergType, source: pa.DataType, downcast_ns: bool) -> bool:
    allowed = _INTS.get(type(target))
    if allowed is not None:
        return source in allowed
    if isinstance(target, StringType):
        return source in _STRINGS
    if isinstance(target, BinaryType):
        return source in _BINARIES or pa.types.is_fixed_size_binary(source)
    if isinstance(target, UUIDType):
        return bool(source == pa.binary(16))
    if isinstance(target, FixedType):
        return bool(source == pa.binary(target.length))
    if isinstance(target, DecimalType):
        return bool(
            pa.types.is_decimal(source)
            and source.scale == target.scale
            and source.precision <= target.precision
        )
    if isinstance(target, (TimestampType, TimestamptzType)):
        # Nanoseconds into a microsecond column lose precision: only when asked to (pyiceberg's
        # downcast-ns-timestamp-to-us-on-write).
        zoned = isinstance(target, TimestamptzType)
        return bool(
            pa.types.is_timestamp(source)
            and (source.unit != "ns" or downcast_ns)
            and (source.tz is not None) == zoned
        )
    if isinstance(target, (TimestampNanoType, TimestamptzNanoType)):
        zoned = isinstance(target, TimestamptzNanoType)
        return bool(pa.types.is_timestamp(source) and (source.tz is not None) == zoned)
    return False


def _check(
    f: NestedField, path: str, source: pa.Field, problems: list[str], downcast_ns: bool
) -> None:
    st = _storage(source.type)
    t = f.field_type
    if pa.types.is_null(st):
        if f.required:
            problems.append(f"{path}: required {t}, but the Arrow column is all null")
        return
    if isinstance(t, StructType):
        if not pa.types.is_struct(st):
            problems.append(f"{path}: expected a struct, got {source.type}")
            return
        _check_struct(t, path + ".", list(st), problems, downcast_ns)
    elif isinstance(t, ListType):
        if not (pa.types.is_list(st) or pa.types.is_large_list(st)) and not (
            pa.types.is_fixed_size_list(st) or pa.types.is_list_view(st)
        ):
            problems.append(f"{path}: expected a list, got {source.type}")
            return
        _check(t.element_field, path + ".element", st.value_field, problems, downcast_ns)
    elif isinstance(t, MapType):
        if not pa.types.is_map(st):
            problems.append(f"{path}: expected a map, got {source.type}")
            return
        key, value = t.key_field, t.value_field
        _check(key, path + ".key", st.key_field, problems, downcast_ns)
        _check(value, path + ".value", st.item_field, problems, downcast_ns)
    elif not _primitive_fits(t, st, downcast_ns):
        problem = f"{path}: Arrow type {source.type} cannot be written as {t}"
        if (
            isinstance(t, (TimestampType, TimestamptzType))
            and pa.types.is_timestamp(st)
            and st.unit == "ns"
            and (st.tz is not None) == isinstance(t, TimestamptzType)
        ):
            problem += (
                f" (microseconds) without losing its nanoseconds: {DOWNCAST_NS_HINT}, or write "
                f"it to a {t}_ns column (format version 3)"
            )
        problems.append(problem)


def _check_struct(
    t: StructType, prefix: str, sources: list[pa.Field], problems: list[str], downcast_ns: bool
) -> None:
    by_name: dict[str, pa.Field] = {}
    for s in sources:
        if s.name in by_name:
            problems.append(f"{prefix}{s.name}: the Arrow data has this column twice")
        by_name[s.name] = s
    names = {f.name for f in t.fields}
    for s in sources:
        if s.name not in names:
            problems.append(f"{prefix}{s.name}: not a column of the table schema")
    for f in t.fields:
        source = by_name.get(f.name)
        if source is None:
            if f.required and f.write_default is None:
                problems.append(f"{prefix}{f.name}: required {f.field_type}, missing")
            continue
        _check(f, prefix + f.name, source, problems, downcast_ns)


def check_arrow_schema(
    arrow: pa.Schema,
    table_schema: Schema,
    extra_fields: tuple[NestedField, ...] = (),
    *,
    downcast_ns: bool = False,
) -> Conformer:
    """Checks Arrow data of schema ``arrow`` against ``table_schema`` by name, and returns
    the :class:`Conformer` that turns its batches into batches of the written schema.
    ``extra_fields`` (optional primitives outside the table schema: the row lineage columns
    with their reserved ids) are written after the table's columns, null where missing.
    ``downcast_ns`` lets nanosecond timestamps into microsecond columns, their sub-microsecond
    digits dropped (rounded towards the past). Raises one :class:`SchemaMismatchError`
    listing every mismatch."""
    problems: list[str] = []
    extra = {f.name: f for f in extra_fields}
    sources = [f for f in arrow if f.name not in extra]
    _check_struct(table_schema.as_struct(), "", sources, problems, downcast_ns)
    for source in arrow:
        if source.name in extra:
            _check(extra[source.name], source.name, source, problems, downcast_ns)
    if problems:
        raise SchemaMismatchError(
            f"the Arrow schema does not match the table schema ({len(problems)} "
            "problem(s)):\n  " + "\n  ".join(problems)
        )
    target = write_arrow_schema(table_schema)
    for f in extra_fields:
        target = target.append(_with_ids(f, pa.field(f.name, _primitive_arrow(f))))
    return Conformer(table_schema, arrow, target, extra_fields)


def _primitive_arrow(f: NestedField) -> pa.DataType:
    return arrow_schema(Schema(NestedField(1, f.name, f.field_type, False))).field(0).type


# --- conforming --------------------------------------------------------------------------------


def _field_default(f: NestedField, length: int, target: pa.DataType) -> pa.Array:
    """A missing column: its write-default (v3) on every row, else nulls."""
    value = f.write_default_value() if f.write_default is not None else None
    if value is None:
        return pa.nulls(length, target)
    return pa.array([value] * 1, target).take(pa.array([0] * length, pa.int32()))


def _violations(array: pa.Array, parent_nulls: pa.Array | None) -> int:
    """Nulls of ``array`` on rows where its parent struct is present."""
    if not array.null_count:
        return 0
    if parent_nulls is None:
        return int(array.null_count)
    return int(pc.sum(pc.and_(array.is_null(), pc.invert(parent_nulls))).as_py() or 0)


def _conform(
    f: NestedField,
    path: str,
    array: pa.Array,
    target: pa.DataType,
    nulls: list[str],
    parent_nulls: pa.Array | None = None,
) -> pa.Array:
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if f.required:
        count = _violations(array, parent_nulls)
        if count:
            nulls.append(f"{path}: {count} null value(s) in required {f.field_type}")
    t = f.field_type
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    mask = array.is_null() if array.null_count else None
    if isinstance(t, StructType):
        by_name = {c.name: c for c in t.fields}
        own_nulls = mask
        if parent_nulls is not None and own_nulls is not None:
            own_nulls = pc.or_(own_nulls, parent_nulls)
        elif own_nulls is None:
            own_nulls = parent_nulls
        children = []
        for child_field in target:
            child = by_name[child_field.name]
            if array.type.get_field_index(child_field.name) < 0:
                children.append(_field_default(child, len(array), child_field.type))
                continue
            values = array.field(child_field.name)
            children.append(
                _conform(child, f"{path}.{child.name}", values, child_field.type, nulls, own_nulls)
            )
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if isinstance(t, ListType):
        if not pa.types.is_list(array.type):
            array = array.cast(pa.list_(array.type.value_field))
        if array.offset:
            # ListArray.from_arrays takes no mask with sliced offsets: copy the slice.
            array = pa.concat_arrays([array])
            mask = array.is_null() if array.null_count else None
        values = _conform(
            t.element_field, path + ".element", array.values, target.value_type, nulls
        )
        return pa.ListArray.from_arrays(array.offsets, values, type=target, mask=mask)
    if isinstance(t, MapType):
        key, value = t.key_field, t.value_field
        if array.offset:
            array = pa.concat_arrays([array])
            mask = array.is_null() if array.null_count else None
        keys = _conform(key, path + ".key", array.keys, target.key_type, nulls)
        items = _conform(value, path + ".value", array.items, target.item_type, nulls)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
    if array.type == target:
        return array
    if pa.types.is_timestamp(target) and target.tz is not None:
        # Arrow stores UTC instants: re-labelling the zone keeps every value.
        array = array.cast(pa.timestamp(array.type.unit, "UTC"))
    if (
        pa.types.is_timestamp(target)
        and pa.types.is_timestamp(array.type)
        and (target.unit, array.type.unit) == ("us", "ns")
    ):
        # Checked: the downcast was asked for.
        array = _floor_to_micros(array)
    return array.cast(target)


def _floor_to_micros(array: pa.Array) -> pa.Array:
    """Nanosecond timestamps as microseconds, the sub-microsecond digits dropped: rounded
    towards the past, as a timestamp's digits are truncated (1969-12-31T23:59:59.9999985 is
    .999998, i.e. -2 us), where Arrow's unsafe cast rounds towards zero (-1 us). Integer
    arithmetic, so that no value near the ends of the int64 range overflows."""
    nanos = array.cast(pa.int64())
    quotient = pc.divide(nanos, 1000)  # truncated towards zero
    remainder = pc.subtract(nanos, pc.multiply(quotient, 1000))
    micros = pc.subtract(quotient, pc.cast(pc.less(remainder, 0), pa.int64()))
    return micros.cast(pa.timestamp("us", array.type.tz))


@dataclass(frozen=True)
class Conformer:
    """Turns batches of the checked Arrow schema into batches of :attr:`target` (the written
    schema); a null in a required field is a :class:`SchemaMismatchError` naming it."""

    table_schema: Schema
    source: pa.Schema
    target: pa.Schema
    extra_fields: tuple[NestedField, ...] = ()

    def conform(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        nulls: list[str] = []
        columns = []
        extra = {f.name: f for f in self.extra_fields}
        for field in self.target:
            iceberg = extra.get(field.name) or self.table_schema.find_field(field.name)
            assert iceberg is not None
            if batch.schema.get_field_index(field.name) < 0:
                columns.append(_field_default(iceberg, batch.num_rows, field.type))
                continue
            try:
                array = _conform(iceberg, field.name, batch.column(field.name), field.type, nulls)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                raise InvalidValueError(f"column {field.name!r}: {error}") from None
            columns.append(array)
        if nulls:
            raise SchemaMismatchError(
                "the Arrow data does not fit the table schema:\n  " + "\n  ".join(nulls)
            )
        return pa.RecordBatch.from_arrays(columns, schema=self.target)
