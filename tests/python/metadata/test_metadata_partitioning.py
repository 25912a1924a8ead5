"""Partition specs and sort orders: transforms, source checks, JSON."""

from __future__ import annotations

import pytest
from frazil import PartitionField, PartitionSpec, Schema, SortField, SortOrder
from frazil.errors import (
    InvalidMetadataError,
    InvalidTransformError,
    UnsupportedTransformError,
)
from frazil.sorting import NullOrder, SortDirection
from frazil.transforms import Transform
from frazil.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
    optional,
    required,
)


def schema() -> Schema:
    return Schema(
        required(1, "id", LongType()),
        optional(2, "ts", TimestampType()),
        optional(3, "name", StringType()),
        optional(4, "s", StructType((optional(5, "d", DateType()),))),
        optional(6, "l", ListType(7, IntegerType())),
        optional(8, "m", MapType(9, StringType(), 10, LongType())),
        optional(11, "price", DecimalType(9, 2)),
        optional(12, "flag", BooleanType()),
        optional(13, "ns", TimestampNanoType()),
        optional(14, "nstz", TimestamptzNanoType()),
        optional(15, "u", UnknownType()),
        optional(16, "v", VariantType()),
        optional(17, "x", DoubleType()),
    )


def spec(*fields: tuple[int, str, str]) -> PartitionSpec:
    return PartitionSpec(
        1,
        tuple(
            PartitionField(source, 1000 + i, transform, name)
            for i, (source, transform, name) in enumerate(fields)
        ),
    )


def test_known_transforms_are_canonicalised() -> None:
    assert PartitionField(1, 1000, "Bucket[16]", "b").transform == "bucket[16]"
    assert PartitionField(1, 1000, "IDENTITY", "b").transform == "identity"
    assert PartitionField(1, 1000, "Bucket[ 4 ]", "b").transform == "bucket[4]"
    assert PartitionField(1, 1000, Transform("day"), "b").transform == "day"
    assert SortField(1, "Truncate[4]").transform == "truncate[4]"
    assert str(PartitionField(1, 1000, "bucket[16]", "b").transform_model) == "bucket[16]"


@pytest.mark.parametrize(
    "text",
    ["bucket[0]", "truncate[0]", "bucket[99999999999]", "bucket[-3]", "bucket[x]", "truncate[]"],
)
def test_bad_parameters_of_known_transforms_are_refused(text: str) -> None:
    with pytest.raises(InvalidTransformError):
        PartitionField(1, 1000, text, "f")


def test_unknown_transforms_are_kept_and_refused_when_evaluated() -> None:
    # Written by a newer engine: kept as read, as Java keeps an UnknownTransform.
    field = PartitionField(2, 1000, "zorder", "z")
    assert field.transform == "zorder"
    assert not field.is_known_transform
    assert field.to_json()["transform"] == "zorder"
    unknown = PartitionSpec(1, (field,))
    unknown.check_compatible(schema())  # nothing to check against
    with pytest.raises(UnsupportedTransformError, match="'zorder' is not known"):
        _ = field.transform_model
    with pytest.raises(UnsupportedTransformError, match="'zorder' is not known"):
        unknown.partition_type(schema())
    # A transform of another name with a parameter is unknown as well.
    assert PartitionField(1, 1000, "geohash[5]", "g").transform == "geohash[5]"


def test_partition_type_uses_result_types() -> None:
    s = spec(
        (1, "bucket[16]", "id_bucket"),
        (2, "day", "ts_day"),
        (3, "truncate[3]", "n"),
        (11, "identity", "price"),
        (13, "hour", "ns_hour"),
        (14, "identity", "nstz"),
    )
    struct = s.partition_type(schema())
    # `day` gives `date`: the spec's transform table says int (the same day count), but
    # Java types day values as dates (their Avro logical type, JSON form and Arrow type
    # follow), and frazil's Rust core, the one owner of this rule, does as Java does.
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in struct.fields] == [
        (1000, "id_bucket", "int", False),
        (1001, "ts_day", "date", False),
        (1002, "n", "string", False),
        (1003, "price", "decimal(9, 2)", False),
        (1004, "ns_hour", "int", False),
        (1005, "nstz", "timestamptz_ns", False),
    ]


@pytest.mark.parametrize(
    ("source", "transform", "error", "message"),
    [
        (12, "bucket[4]", UnsupportedTransformError, "bucket\\[4\\] cannot be applied to boolean"),
        (3, "day", UnsupportedTransformError, "day cannot be applied to string"),
        (17, "truncate[2]", UnsupportedTransformError, "truncate\\[2\\] cannot be applied"),
        (4, "identity", UnsupportedTransformError, "must be a primitive type"),
        (16, "identity", UnsupportedTransformError, "must be a primitive type"),
        (7, "identity", UnsupportedTransformError, "inside a list"),
        (9, "identity", UnsupportedTransformError, "inside a map"),
        (10, "bucket[2]", UnsupportedTransformError, "inside a map"),
        (15, "bucket[2]", UnsupportedTransformError, "cannot be applied to unknown"),
        (99, "identity", InvalidMetadataError, "cannot find source column 99"),
    ],
)
def test_partition_sources_are_checked(
    source: int, transform: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        spec((source, transform, "p")).check_compatible(schema())


def test_partition_type_with_dropped_sources() -> None:
    # As Java 1.10's PartitionSpec.partitionType: a field whose source column was dropped
    # is typed `unknown`, whatever its transform ("we cannot determine the type").
    s = spec((99, "bucket[4]", "b"), (98, "void", "v"), (97, "identity", "i"), (96, "day", "d"))
    assert [str(f.field_type) for f in s.partition_type(schema()).fields] == [
        "unknown",
        "unknown",
        "unknown",
        "unknown",
    ]


def test_allowed_partition_sources() -> None:
    spec(
        (5, "month", "d_month"),  # nested in a struct is fine
        (13, "day", "ns_day"),
        (14, "bucket[3]", "nstz_bucket"),
        (15, "void", "u_void"),
        (99, "void", "dropped"),  # a void field may have lost its source (v1 evolution)
    ).check_compatible(schema())


def test_partition_spec_rules() -> None:
    with pytest.raises(InvalidMetadataError, match="duplicate partition field id 1000"):
        PartitionSpec(
            0, (PartitionField(1, 1000, "identity", "a"), PartitionField(2, 1000, "identity", "b"))
        )
    with pytest.raises(InvalidMetadataError, match="duplicate partition field name 'a'"):
        PartitionSpec(
            0, (PartitionField(1, 1000, "identity", "a"), PartitionField(2, 1001, "bucket[2]", "a"))
        )
    assert PartitionSpec().is_unpartitioned()
    assert PartitionSpec().last_assigned_field_id == 999
    assert spec((1, "void", "a")).is_unpartitioned()
    assert not spec((1, "identity", "a")).is_unpartitioned()


def test_v1_partition_fields_without_ids_are_numbered_from_1000() -> None:
    fields = [
        {"name": "a", "transform": "identity", "source-id": 1},
        {"name": "b", "transform": "bucket[4]", "source-id": 3},
    ]
    read = PartitionSpec.from_json_fields(fields, 0)
    assert [f.field_id for f in read.fields] == [1000, 1001]
    assert read.last_assigned_field_id == 1001
    with pytest.raises(InvalidMetadataError, match="1 of 2 partition fields have no field-id"):
        PartitionSpec.from_json_fields([{**fields[0], "field-id": 1000}, fields[1]], 0)


def test_partition_spec_json_round_trip() -> None:
    s = spec((1, "bucket[16]", "id_bucket"), (2, "hour", "ts_hour"))
    assert s.to_json() == {
        "spec-id": 1,
        "fields": [
            {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1000},
            {"name": "ts_hour", "transform": "hour", "source-id": 2, "field-id": 1001},
        ],
    }
    assert PartitionSpec.from_json(s.to_json()) == s
    with pytest.raises(InvalidMetadataError, match="missing required field 'source-id'"):
        PartitionSpec.from_json(
            {"spec-id": 0, "fields": [{"name": "a", "transform": "day", "field-id": 1000}]}
        )


def test_sort_orders() -> None:
    order = SortOrder(
        1,
        (
            SortField(3, "identity", "ASC", "NULLS-LAST"),  # type: ignore[arg-type]
            SortField(1, "bucket[4]", SortDirection.DESC, NullOrder.NULLS_FIRST),
        ),
    )
    assert order.fields[0].direction is SortDirection.ASC
    assert order.fields[0].null_order is NullOrder.NULLS_LAST
    assert order.to_json() == {
        "order-id": 1,
        "fields": [
            {
                "transform": "identity",
                "source-id": 3,
                "direction": "asc",
                "null-order": "nulls-last",
            },
            {
                "transform": "bucket[4]",
                "source-id": 1,
                "direction": "desc",
                "null-order": "nulls-first",
            },
        ],
    }
    assert SortOrder.from_json(order.to_json()) == order
    order.check_compatible(schema())
    assert SortOrder().is_unsorted()


def test_a_sort_fields_null_order_defaults_by_its_direction() -> None:
    # Java's SortOrder builder and pyiceberg's SortField: nulls first when ascending, last
    # when descending, unless given.
    assert SortField(1).null_order is NullOrder.NULLS_FIRST
    assert SortField(1, "identity", "desc").null_order is NullOrder.NULLS_LAST  # type: ignore[arg-type]
    assert SortField(1, direction=SortDirection.DESC).null_order is NullOrder.NULLS_LAST
    explicit = SortField(1, "identity", SortDirection.DESC, NullOrder.NULLS_FIRST)
    assert explicit.null_order is NullOrder.NULLS_FIRST
    assert SortField(1, null_order="nulls-last").null_order is NullOrder.NULLS_LAST  # type: ignore[arg-type]
    with pytest.raises(InvalidMetadataError, match="null_order"):
        SortField(1, null_order=3)  # type: ignore[arg-type]


def test_sort_order_rules() -> None:
    with pytest.raises(InvalidMetadataError, match="reserved for the unsorted order"):
        SortOrder(0, (SortField(1),))
    with pytest.raises(InvalidMetadataError, match="must have id 0"):
        SortOrder(2, ())
    with pytest.raises(InvalidMetadataError, match="invalid value 'up'"):
        SortField(1, "identity", "up")  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTransformError, match="non-primitive"):
        SortOrder(1, (SortField(4),)).check_compatible(schema())
    with pytest.raises(UnsupportedTransformError, match="year cannot be applied to long"):
        SortOrder(1, (SortField(1, "year"),)).check_compatible(schema())
    with pytest.raises(InvalidMetadataError, match="cannot find source column 42"):
        SortOrder(1, (SortField(42),)).check_compatible(schema())


def test_sort_order_satisfies() -> None:
    by_day = SortOrder(1, (SortField(2, "day"), SortField(1)))
    by_hour = SortOrder(2, (SortField(2, "hour"), SortField(1), SortField(3)))
    assert by_hour.satisfies(by_day)
    assert not by_day.satisfies(by_hour)
    assert by_day.satisfies(SortOrder())
    assert not SortOrder(3, (SortField(2, "day", SortDirection.DESC),)).satisfies(by_day)
