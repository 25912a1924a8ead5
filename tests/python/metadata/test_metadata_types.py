"""Iceberg types: Appendix C type strings and type JSON."""

from __future__ import annotations

import pytest
from frazil.errors import InvalidMetadataError, UnknownTypeError
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
    VariantType,
    optional,
    parse_type,
    required,
    type_from_json,
    type_to_json,
)


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("boolean", BooleanType(), "boolean"),
        ("int", IntegerType(), "int"),
        ("long", LongType(), "long"),
        ("float", FloatType(), "float"),
        ("double", DoubleType(), "double"),
        ("date", DateType(), "date"),
        ("time", TimeType(), "time"),
        ("timestamp", TimestampType(), "timestamp"),
        ("timestamptz", TimestamptzType(), "timestamptz"),
        ("timestamp_ns", TimestampNanoType(), "timestamp_ns"),
        ("timestamptz_ns", TimestamptzNanoType(), "timestamptz_ns"),
        ("string", StringType(), "string"),
        ("uuid", UUIDType(), "uuid"),
        ("binary", BinaryType(), "binary"),
        ("unknown", UnknownType(), "unknown"),
        ("variant", VariantType(), "variant"),
        ("fixed[16]", FixedType(16), "fixed[16]"),
        ("fixed[ 3 ]", FixedType(3), "fixed[3]"),
        # Appendix C lists both spellings of decimal; Java writes the one with a space.
        ("decimal(9,2)", DecimalType(9, 2), "decimal(9, 2)"),
        ("decimal(9, 2)", DecimalType(9, 2), "decimal(9, 2)"),
        ("decimal(38,0)", DecimalType(38, 0), "decimal(38, 0)"),
        # Java reads type names case-insensitively.
        ("LONG", LongType(), "long"),
        ("Decimal(10, 3)", DecimalType(10, 3), "decimal(10, 3)"),
        ("geometry", GeometryType(), "geometry(OGC:CRS84)"),
        ("geometry(srid:3857)", GeometryType("srid:3857"), "geometry(srid:3857)"),
        ("geography", GeographyType(), "geography(OGC:CRS84, spherical)"),
        (
            "geography(srid:4326, karney)",
            GeographyType("srid:4326", "karney"),
            "geography(srid:4326, karney)",
        ),
    ],
)
def test_type_strings_parse_and_print(text: str, expected: object, canonical: str) -> None:
    parsed = parse_type(text)
    assert parsed == expected
    assert str(parsed) == canonical
    assert parse_type(canonical) == expected


@pytest.mark.parametrize(
    "text",
    [
        "integer",
        "decimal(39, 2)",
        "decimal(0, 0)",
        "decimal(9)",
        "fixed[]",
        "fixed[-1]",
        "",
        "struct",
        "list<int>",
        "geography(c, flat)",
    ],
)
def test_bad_type_strings_are_refused(text: str) -> None:
    with pytest.raises(UnknownTypeError):
        parse_type(text)


def test_v3_types_need_format_version_3() -> None:
    for t in (
        TimestampNanoType(),
        TimestamptzNanoType(),
        UnknownType(),
        VariantType(),
        GeometryType(),
        GeographyType(),
    ):
        assert t.min_format_version == 3
    for t in (IntegerType(), DecimalType(9, 2), FixedType(3), StringType()):
        assert t.min_format_version == 1


def test_variant_is_neither_primitive_nor_nested() -> None:
    assert not VariantType().is_primitive
    assert not VariantType().is_nested
    assert LongType().is_primitive


def test_nested_type_json_matches_appendix_c() -> None:
    struct = StructType(
        (
            required(1, "id", UUIDType(), initial_default="0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb"),
            optional(
                2,
                "data",
                ListType(3, MapType(4, StringType(), 5, DoubleType(), value_required=False), True),
                doc="measurements",
            ),
        )
    )
    expected = {
        "type": "struct",
        "fields": [
            {
                "id": 1,
                "name": "id",
                "required": True,
                "type": "uuid",
                "initial-default": "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb",
            },
            {
                "id": 2,
                "name": "data",
                "required": False,
                "type": {
                    "type": "list",
                    "element-id": 3,
                    "element": {
                        "type": "map",
                        "key-id": 4,
                        "key": "string",
                        "value-id": 5,
                        "value": "double",
                        "value-required": False,
                    },
                    "element-required": True,
                },
                "doc": "measurements",
            },
        ],
    }
    assert type_to_json(struct) == expected
    assert type_from_json(expected) == struct


def test_children_of_nested_types() -> None:
    m = MapType(4, StringType(), 5, LongType(), value_required=True)
    assert [f.name for f in m.child_fields()] == ["key", "value"]
    assert m.key_field.required  # map keys are always required
    assert ListType(3, IntegerType()).element_field == NestedField(3, "element", IntegerType())


@pytest.mark.parametrize(
    ("node", "error"),
    [
        ({"type": "list", "element-id": 1, "element-required": True}, InvalidMetadataError),
        (
            {"type": "list", "element-id": "1", "element": "int", "element-required": True},
            InvalidMetadataError,
        ),
        (
            {"type": "map", "key-id": 1, "key": "string", "value-id": 2, "value": "int"},
            InvalidMetadataError,
        ),
        (
            {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]},
            InvalidMetadataError,
        ),
        (
            {
                "type": "struct",
                "fields": [{"id": True, "name": "a", "required": True, "type": "int"}],
            },
            InvalidMetadataError,
        ),
        ({"type": "tuple"}, UnknownTypeError),
        (17, UnknownTypeError),
    ],
)
def test_bad_type_json_is_refused(node: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        type_from_json(node)


def test_types_are_values() -> None:
    assert DecimalType(9, 2) == DecimalType(9, 2)
    assert hash(DecimalType(9, 2)) == hash(DecimalType(9, 2))
    assert DecimalType(9, 2) != DecimalType(9, 3)
    assert IntegerType() != LongType()
    assert {IntegerType(), IntegerType(), LongType()} == {IntegerType(), LongType()}


PARAMETERLESS = (
    BooleanType, IntegerType, LongType, FloatType, DoubleType, DateType, TimeType,
    TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType, StringType,
    UUIDType, BinaryType, UnknownType,
)  # fmt: skip


@pytest.mark.parametrize("kind", PARAMETERLESS)
def test_parameterless_types_are_immutable_values(kind: type) -> None:
    import copy
    import dataclasses
    import pickle

    value = kind()
    assert value == kind() and hash(value) == hash(kind())
    assert all(value != other() for other in PARAMETERLESS if other is not kind)
    assert dataclasses.is_dataclass(value) and dataclasses.replace(value) == value
    assert pickle.loads(pickle.dumps(value)) == value == copy.deepcopy(value)
    assert repr(value) == f"{kind.__name__}()"
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del value.type_name
