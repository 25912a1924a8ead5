"""Property tests: random schemas (nested, every type, with defaults) and metadata round-trip."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Context, Decimal
from typing import Any

from frazil import (
    BlobMetadata,
    MetadataLogEntry,
    NameMapping,
    PartitionField,
    PartitionSpec,
    PartitionStatisticsFile,
    Schema,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
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
            BooleanType(),
            IntegerType(),
            LongType(),
            FloatType(),
            DoubleType(),
            DateType(),
            TimeType(),
            TimestampType(),
            TimestamptzType(),
            TimestampNanoType(),
            TimestamptzNanoType(),
            StringType(),
            UUIDType(),
            BinaryType(),
            UnknownType(),
            VariantType(),
            GeometryType(),
            GeographyType("srid:4326", "vincenty"),
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
            fields.flatmap(
                lambda fs: st.lists(NAMES, min_size=len(fs), max_size=len(fs), unique=True).map(
                    lambda names: StructType(
                        tuple(NestedField(0, n, t, r) for n, (t, r) in zip(names, fs, strict=True))
                    )
                )
            ),
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
        return st.floats(
            allow_nan=False, allow_infinity=False, width=32 if isinstance(t, FloatType) else 64
        )
    if isinstance(t, DecimalType):
        return st.integers(-(10**t.precision) + 1, 10**t.precision - 1).map(
            # Appendix D: positive scales as digits after the point, never an exponent.
            lambda unscaled: decimal_text(unscaled, t.scale)
        )
    if isinstance(t, DateType):
        return st.dates().map(dt.date.isoformat)
    if isinstance(t, TimeType):
        return st.times().map(lambda v: v.isoformat(timespec="microseconds"))
    if isinstance(t, TimestampType):
        return timestamps.map(lambda v: v.isoformat(timespec="microseconds"))
    if isinstance(t, TimestamptzType):
        return timestamps.map(lambda v: v.isoformat(timespec="microseconds") + "+00:00")
    if isinstance(t, (TimestampNanoType, TimestamptzNanoType)):
        zone = "+00:00" if isinstance(t, TimestamptzNanoType) else ""
        # Nanoseconds from 1970 in a long: 1677-09-21 to 2262-04-11.
        nano_range = st.datetimes(dt.datetime(1677, 9, 22), dt.datetime(2262, 4, 10))
        return st.tuples(nano_range, st.integers(0, 999)).map(
            lambda v: v[0].isoformat(timespec="microseconds") + f"{v[1]:03d}{zone}"
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


def decimal_text(unscaled: int, scale: int) -> str:
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    sign = "-" if unscaled < 0 else ""
    return sign + (f"{digits[:-scale]}.{digits[-scale:]}" if scale else digits)


def test_decimal_text() -> None:
    assert decimal_text(1420, 2) == "14.20"
    assert decimal_text(-5, 3) == "-0.005"
    assert decimal_text(10**30 - 1, 0) == "9" * 30
    wide = Context(prec=50)
    assert Decimal(decimal_text(-(10**37) + 3, 5)) == Decimal(-(10**37) + 3).scaleb(-5, wide)


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
    assert schema.highest_field_id() == max((f.field_id for _, f in schema.all_fields()), default=0)


@settings(max_examples=50, deadline=None)
@given(schemas(), st.booleans())
def test_random_schemas_round_trip_through_v3_metadata(schema: Schema, partition: bool) -> None:
    spec = PartitionSpec()
    top_level = [f for f in schema.fields if isinstance(f.field_type, PrimitiveType)]
    if partition and top_level:
        spec = PartitionSpec(0, (PartitionField(top_level[0].field_id, 1000, "void", "p"),))
    metadata = TableMetadata.new(
        schema,
        "file:///tmp/t",
        spec=spec,
        format_version=3,
        table_uuid="00000000-0000-0000-0000-000000000000",
        last_updated_ms=1,
    )
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


@st.composite
def table_metadata(draw: st.DrawFn) -> TableMetadata:
    """Random valid metadata: a snapshot chain with branches, tags, logs and statistics."""
    version = draw(st.integers(1, 3))
    schema = draw(schemas().filter(lambda s: s.min_format_version() <= version))
    count = draw(st.integers(0, 6))
    ids = draw(st.lists(st.integers(1, 2**63 - 1), min_size=count, max_size=count, unique=True))
    snapshots = []
    for position, snapshot_id in enumerate(ids):
        v1_manifests = version == 1 and draw(st.booleans())
        snapshots.append(
            Snapshot(
                snapshot_id=snapshot_id,
                parent_snapshot_id=ids[position - 1] if position else None,
                timestamp_ms=1_600_000_000_000 + position,
                sequence_number=position + 1 if version > 1 else 0,
                manifest_list=None if v1_manifests else f"file:///t/snap-{snapshot_id}.avro",
                manifests=("file:///t/m0.avro",) if v1_manifests else None,
                summary=draw(st.none() | st.just({"operation": "append", "added-records": "1"})),
                schema_id=draw(st.none() | st.just(schema.schema_id)),
                first_row_id=position * 10 if version >= 3 else None,
                added_rows=10 if version >= 3 else None,
            )
        )
    current = ids[-1] if ids and draw(st.booleans()) else None
    refs: dict[str, SnapshotRef] = {} if current is None else {"main": SnapshotRef.branch(current)}
    for name in draw(st.lists(NAMES.filter(lambda n: n != "main"), max_size=3, unique=True)):
        if not ids:
            break
        target = draw(st.sampled_from(ids))
        refs[name] = draw(
            st.builds(SnapshotRef.tag, st.just(target), st.none() | st.integers(1, 2**40))
            | st.builds(
                SnapshotRef.branch,
                st.just(target),
                min_snapshots_to_keep=st.none() | st.integers(1, 100),
                max_snapshot_age_ms=st.none() | st.integers(1, 2**40),
                max_ref_age_ms=st.none() | st.integers(1, 2**40),
            )
        )
    statistics = tuple(
        StatisticsFile(
            snapshot_id=i,
            statistics_path=f"file:///t/{i}.stats",
            file_size_in_bytes=100,
            file_footer_size_in_bytes=10,
            blob_metadata=(
                BlobMetadata(
                    "apache-datasketches-theta-v1",
                    i,
                    1,
                    (1,),
                    draw(st.dictionaries(NAMES, NAMES, max_size=2)),
                ),
            ),
        )
        for i in ids[:2]
    )
    return TableMetadata(
        format_version=version,
        table_uuid=str(draw(st.uuids())) if version > 1 or draw(st.booleans()) else None,
        location="file:///t",
        last_sequence_number=count if version > 1 else 0,
        last_updated_ms=1_700_000_000_000,
        last_column_id=schema.highest_field_id() + draw(st.integers(0, 3)),
        schemas=(schema,),
        current_schema_id=schema.schema_id,
        properties=draw(st.dictionaries(NAMES, st.text(max_size=5), max_size=3)),
        current_snapshot_id=current,
        snapshots=tuple(snapshots),
        snapshot_log=tuple(SnapshotLogEntry(s.timestamp_ms, s.snapshot_id) for s in snapshots),
        metadata_log=(MetadataLogEntry(1, "file:///t/metadata/v1.metadata.json"),),
        refs=refs,
        statistics=statistics,
        partition_statistics=tuple(
            PartitionStatisticsFile(i, f"file:///t/{i}.parquet", 7) for i in ids[:1]
        ),
        next_row_id=count * 10 if version >= 3 else None,
        extras=draw(
            st.dictionaries(
                st.sampled_from(["x-future", "y-future"]),
                st.integers() | st.text(max_size=3),
                max_size=2,
            )
        ),
    )


@settings(max_examples=100, deadline=None)
@given(table_metadata())
def test_random_table_metadata_round_trips(metadata: TableMetadata) -> None:
    text = metadata.to_json()
    again = TableMetadata.from_json(text)
    assert again == metadata
    assert json.loads(again.to_json()) == json.loads(text)
    if metadata.format_version == 1:
        assert "last-sequence-number" not in json.loads(text)
        assert json.loads(text)["schema"] == metadata.schema().to_json()
    if metadata.current_snapshot_id is not None:
        assert again.current_snapshot() == again.snapshot_by_name("main")
