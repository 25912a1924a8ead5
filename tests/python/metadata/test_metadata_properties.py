"""Property tests: random schemas (nested, every type, with defaults) and metadata round-trip."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

from frazil import NameMapping, PartitionField, PartitionSpec, Schema, TableMetadata
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)
from hypothesis import given, settings
from hypothesis import strategies as st

PRIMITIVES = st.one_of(
    st.sampled_from(
        [
            BooleanType(), IntegerType(), LongType(), FloatType(), DoubleType(), DateType(),
            TimeType(), TimestampType(), TimestamptzType(), TimestampNanoType(),
            TimestamptzNanoType(), StringType(), UUIDType(), BinaryType(), UnknownType(),
            VariantType(), GeometryType(), GeographyType("srid:4326", "vincenty"),
        ]
    ),
    st.builds(FixedType, st.integers(0, 64)),
    st.integers(1, 38).flatmap(lambda p: st.builds(DecimalType, st.just(p), st.integers(0, p))),
)

NAMES = st.text(
    alphabet=st.characters(blacklist_characters=".", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=8,
)


# Shapes are types whose ids are placeholders (0); real ids are assigned afterwards.
def shapes() -> st.SearchStrategy[IcebergType]:
    def extend(children: st.SearchStrategy[IcebergType]) -> st.SearchStrategy[IcebergType]:
        fields = st.lists(st.tuples(children, st.booleans()), min_size=0, max_size=4)
        return st.one_of(
            fields.flatmap(lambda fs: st.lists(NAMES, min_size=len(fs), max_size=len(fs),
                                               unique=True).map(
                lambda names: StructType(tuple(
                    NestedField(0, n, t, r) for n, (t, r) in zip(names, fs, strict=True)
                ))
            )),
            st.builds(lambda t, r: ListType(0, t, r), children, st.booleans()),
            st.builds(lambda k, v, r: MapType(0, k, 0, v, r), PRIMITIVES, children, st.booleans()),
        )

    return st.recursive(PRIMITIVES, extend, max_leaves=12)


def default_for(t: IcebergType) -> st.SearchStrategy[Any]:
    """A JSON single-value (Appendix D) of type t."""
    timestamps = st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31))
    if isinstance(t, BooleanType):
        return st.booleans()
    if isinstance(t, IntegerType):
        return st.integers(-(2**31), 2**31 - 1)
    if isinstance(t, LongType):
        return st.integers(-(2**63), 2**63 - 1)
    if isinstance(t, (FloatType, DoubleType)):
        return st.floats(allow_nan=False, allow_infinity=False, width=32 if isinstance(
            t, FloatType) else 64)
    if isinstance(t, DecimalType):
        return st.integers(-(10**t.precision) + 1, 10**t.precision - 1).map(
            lambda unscaled: str(Decimal(unscaled).scaleb(-t.scale))
        )
    if isinstance(t, DateType):
        return st.dates().map(dt.date.isoformat)
    if isinstance(t, TimeType):
        return st.times().map(lambda v: v.strftime("%H:%M:%S.%f"))
    if isinstance(t, TimestampType):
        return timestamps.map(lambda v: v.strftime("%Y-%m-%dT%H:%M:%S.%f"))
    if isinstance(t, TimestamptzType):
        return timestamps.map(lambda v: v.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00"))
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)):
        zone = "+00:00" if isinstance(t, TimestamptzNanoType) else ""
        return st.tuples(timestamps, st.integers(0, 999)).map(
            lambda v: v[0].strftime("%Y-%m-%dT%H:%M:%S.%f") + f"{v[1]:03d}{zone}"
        )
    if isinstance(t, StringType):
        return st.text()
    if isinstance(t, UUIDType):
        return st.uuids().map(str)
    if isinstance(t, FixedType):
        return st.binary(min_size=t.length, max_size=t.length).map(bytes.hex)
    if isinstance(t, BinaryType):
        return st.binary().map(bytes.hex)
    if isinstance(t, ListType):
        return st.lists(default_for(t.element_type), max_size=3)
    if isinstance(t, StructType):
        return st.fixed_dictionaries(
            {},
            optional={
                str(f.field_id): default_for(f.field_type)
                for f in t.fields
                if has_default(f.field_type)
            },
        )
    return st.nothing()  # unknown, variant, geospatial, map: no default here


def has_default(t: IcebergType) -> bool:
    if isinstance(t, ListType):
        return has_default(t.element_type)
    return not isinstance(t, (UnknownType, VariantType, GeometryType, GeographyType, MapType))


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    next_id = iter(range(1, 10_000))

    def assign(t: IcebergType) -> IcebergType:
        if isinstance(t, StructType):
            out = []
            for f in t.fields:
                field_id = next(next_id)
                field_type = assign(f.field_type)
                defaults: dict[str, Any] = {}
                if has_default(field_type) and draw(st.booleans()):
                    defaults["initial_default"] = draw(default_for(field_type))
                    defaults["write_default"] = draw(default_for(field_type))
                doc = draw(st.none() | st.text(max_size=10))
                is_required = f.required and not isinstance(field_type, UnknownType)
                out.append(NestedField(field_id, f.name, field_type, is_required, doc, **defaults))
            return StructType(tuple(out))
        if isinstance(t, ListType):
            element_id = next(next_id)
            element = assign(t.element_type)
            element_required = t.element_required and not isinstance(element, UnknownType)
            return ListType(element_id, element, element_required)
        if isinstance(t, MapType):
            key_id, value_id = next(next_id), next(next_id)
            key, value = assign(t.key_type), assign(t.value_type)
            if isinstance(key, UnknownType):
                key = StringType()
            value_required = t.value_required and not isinstance(value, UnknownType)
            return MapType(key_id, key, value_id, value, value_required)
        return t

    top = draw(shapes().filter(lambda t: isinstance(t, StructType)))
    assert isinstance(top, StructType)
    struct = assign(top)
    assert isinstance(struct, StructType)
    return Schema(fields=struct.fields, schema_id=draw(st.integers(0, 100)))


@settings(max_examples=200, deadline=None)
@given(schemas())
def test_random_schemas_round_trip_json(schema: Schema) -> None:
    text = json.dumps(schema.to_json())
    again = Schema.from_json(json.loads(text))
    assert again == schema
    assert again.to_json() == schema.to_json()
    # Every field is found again by id and by its full name.
    for name, f in schema.all_fields():
        assert schema.find_field(f.field_id) == f
        assert schema.find_field(name) == f
        assert schema.find_column_name(f.field_id) == name
    assert schema.highest_field_id() == max((f.field_id for _, f in schema.all_fields()),
                                            default=0)


@settings(max_examples=50, deadline=None)
@given(schemas(), st.booleans())
def test_random_schemas_round_trip_through_v3_metadata(schema: Schema, partition: bool) -> None:
    spec = PartitionSpec()
    top_level = [f for f in schema.fields if isinstance(f.field_type, PrimitiveType)]
    if partition and top_level:
        spec = PartitionSpec(0, (PartitionField(top_level[0].field_id, 1000, "void", "p"),))
    metadata = TableMetadata.new(schema, "file:///tmp/t", spec=spec, format_version=3,
                                 table_uuid="00000000-0000-0000-0000-000000000000",
                                 last_updated_ms=1)
    again = TableMetadata.from_json(metadata.to_json())
    assert again == metadata
    assert again.schema() == schema


@settings(max_examples=50, deadline=None)
@given(schemas())
def test_name_mapping_from_schema_round_trips(schema: Schema) -> None:
    mapping = NameMapping.from_schema(schema)
    assert NameMapping.from_json(mapping.to_json()) == mapping
    for name, f in schema.all_fields():
        assert mapping.field_id(name.split(".")) == f.field_id
