"""Schemas: lookups, indexes, and the rules every schema must follow."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from decimal import Decimal

import pytest
from frazil import Schema
from frazil.errors import InvalidSchemaError, UnknownFieldError
from frazil.schema import MAX_FIELD_ID
from frazil.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
    UnknownType,
    UUIDType,
    VariantType,
    default_json,
    optional,
    required,
)


def nested_schema() -> Schema:
    return Schema(
        required(1, "id", LongType()),
        optional(2, "Name", StringType()),
        required(
            3,
            "location",
            StructType((required(4, "lat", DoubleType()), required(5, "long", DoubleType()))),
        ),
        optional(
            6,
            "points",
            ListType(7, StructType((required(8, "x", LongType()), required(9, "y", LongType())))),
        ),
        optional(
            10,
            "props",
            MapType(11, StringType(), 12, StructType((optional(13, "v", IntegerType()),))),
        ),
        optional(14, "tags", ListType(15, StringType(), element_required=True)),
        schema_id=3,
        identifier_field_ids=[1],
    )


def test_find_by_id_and_dotted_name() -> None:
    schema = nested_schema()
    assert schema.find_field(4) == required(4, "lat", DoubleType())
    assert schema.find_field("location.lat") == schema.find_field(4)
    assert schema.find_field("points.element.x") == schema.find_field(8)
    assert schema.find_field("props.key").field_id == 11  # type: ignore[union-attr]
    assert schema.find_field("props.value.v").field_id == 13  # type: ignore[union-attr]
    assert schema.find_field("tags.element").field_id == 15  # type: ignore[union-attr]
    # Java's short names skip "element" and "value" of lists and maps of structs.
    assert schema.find_field("points.x").field_id == 8  # type: ignore[union-attr]
    assert schema.find_field("props.v").field_id == 13  # type: ignore[union-attr]
    assert schema.find_field("location.nope") is None
    assert schema.find_field(99) is None
    assert schema.find_column_name(9) == "points.element.y"
    with pytest.raises(UnknownFieldError, match="no field with name 'nope'"):
        schema.field("nope")


def test_case_insensitive_lookup_on_request() -> None:
    schema = nested_schema()
    assert schema.find_field("name") is None
    assert schema.find_field("name", case_sensitive=False).field_id == 2  # type: ignore[union-attr]
    assert schema.find_field("LOCATION.LAT", case_sensitive=False).field_id == 4  # type: ignore[union-attr]
    ambiguous = Schema(optional(1, "a", LongType()), optional(2, "A", LongType()))
    assert ambiguous.find_field("A").field_id == 2  # type: ignore[union-attr]
    with pytest.raises(UnknownFieldError, match="ambiguous"):
        ambiguous.find_field("a", case_sensitive=False)


def test_highest_field_id_and_parents() -> None:
    schema = nested_schema()
    assert schema.highest_field_id() == 15
    assert schema.parent_ids(8) == (6, 7)
    assert schema.parent_ids(1) == ()
    assert Schema().highest_field_id() == 0


def test_position_paths_through_structs() -> None:
    schema = nested_schema()
    assert schema.position_path(1) == (0,)
    assert schema.position_path(3) == (2,)
    assert schema.position_path(5) == (2, 1)
    assert schema.position_path(6) == (3,)
    # Inside lists and maps there is no position path from the top-level struct.
    assert schema.position_path(8) is None
    assert schema.position_path(13) is None
    assert set(schema.position_paths) == {1, 2, 3, 4, 5, 6, 10, 14}


def test_duplicate_field_ids_are_refused() -> None:
    with pytest.raises(InvalidSchemaError, match="duplicate field id 2"):
        Schema(optional(1, "a", LongType()), optional(2, "b", ListType(2, LongType())))
    with pytest.raises(InvalidSchemaError, match="duplicate field id 1"):
        Schema(optional(1, "a", StructType((optional(1, "b", LongType()),))))


def test_reserved_field_ids_are_refused() -> None:
    assert MAX_FIELD_ID == 2147483447
    Schema(optional(MAX_FIELD_ID, "ok", LongType()))
    with pytest.raises(InvalidSchemaError, match="reserved"):
        Schema(optional(2147483646, "_file", StringType()))
    with pytest.raises(InvalidSchemaError, match="reserved"):
        Schema(optional(1, "m", MapType(2, StringType(), MAX_FIELD_ID + 1, LongType())))


@pytest.mark.parametrize(
    ("schema_fields", "ids", "message"),
    [
        ((optional(1, "a", LongType()),), [1], "must be required"),
        ((required(1, "a", FloatType()),), [1], "cannot be float"),
        ((required(1, "a", DoubleType()),), [1], "cannot be double"),
        ((required(1, "a", StructType((required(2, "b", LongType()),))),), [1], "primitive"),
        ((required(1, "a", VariantType()),), [1], "primitive"),
        ((required(1, "a", LongType()),), [2], "not in the schema"),
        ((required(1, "a", LongType()),), [1, 1], "duplicate identifier"),
        (
            (optional(1, "s", StructType((required(2, "b", LongType()),))),),
            [2],
            "optional struct 's'",
        ),
        (
            (required(1, "l", ListType(2, StructType((required(3, "b", LongType()),)), True)),),
            [3],
            "nested in a list",
        ),
        (
            (required(1, "m", MapType(2, LongType(), 3, LongType(), True)),),
            [2],
            "nested in a map",
        ),
    ],
)
def test_identifier_field_rules(schema_fields: tuple, ids: list[int], message: str) -> None:
    with pytest.raises(InvalidSchemaError, match=message):
        Schema(*schema_fields, identifier_field_ids=ids)


def test_identifier_fields_may_be_nested_in_required_structs() -> None:
    schema = Schema(
        required(1, "s", StructType((required(2, "b", StringType()),))), identifier_field_ids=[2]
    )
    assert schema.identifier_field_names == ("s.b",)


def test_format_version_checks() -> None:
    v3_type = Schema(optional(1, "t", TimestampNanoType()))
    assert v3_type.min_format_version() == 3
    v3_type.check_format_version(3)
    with pytest.raises(InvalidSchemaError, match="timestamp_ns, which needs format version 3"):
        v3_type.check_format_version(2)
    defaults = Schema(optional(1, "n", IntegerType(), initial_default=3, write_default=3))
    assert defaults.min_format_version() == 3
    with pytest.raises(InvalidSchemaError, match="non-null initial-default"):
        defaults.check_format_version(2)
    assert nested_schema().min_format_version() == 1


def test_schema_json_round_trip_and_replace() -> None:
    schema = nested_schema()
    js = schema.to_json()
    assert js["schema-id"] == 3
    assert js["identifier-field-ids"] == [1]
    assert Schema.from_json(js) == schema
    # Identifier ids are omitted when empty, as Java does.
    assert "identifier-field-ids" not in Schema(optional(1, "a", LongType())).to_json()
    changed = dataclasses.replace(schema, schema_id=4)
    assert changed.schema_id == 4 and changed.fields == schema.fields
    with pytest.raises(InvalidSchemaError):
        dataclasses.replace(schema, identifier_field_ids=(2,))


def test_schema_json_without_id_reads_as_zero() -> None:
    schema = Schema.from_json(
        {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int"}]}
    )
    assert schema.schema_id == 0
    with pytest.raises(InvalidSchemaError, match='must be "struct"'):
        Schema.from_json({"type": "list", "fields": []})


def test_unknown_type_must_be_optional() -> None:
    Schema(optional(1, "u", UnknownType()))
    with pytest.raises(InvalidSchemaError, match="'u' of type unknown must be optional"):
        Schema(required(1, "u", UnknownType()))
    with pytest.raises(InvalidSchemaError, match=r"'l\.element' of type unknown"):
        Schema(optional(1, "l", ListType(2, UnknownType(), element_required=True)))


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(InvalidSchemaError, match="more than one field is named 'a'"):
        Schema(optional(1, "a", LongType()), optional(2, "a", StringType()))
    # A literal dotted name that collides with a nested path is ambiguous as well (Java).
    with pytest.raises(InvalidSchemaError, match=r"named 's\.b'"):
        Schema(
            optional(1, "s", StructType((optional(2, "b", LongType()),))),
            optional(3, "s.b", LongType()),
        )


def test_default_values_decode_through_frazil_values() -> None:
    schema = Schema(
        required(
            1,
            "id",
            UUIDType(),
            initial_default="0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb",
            write_default="ec5911be-b0a7-458c-8438-c9a3e53cffae",
        ),
        optional(2, "price", DecimalType(9, 2), initial_default="14.20"),
        optional(3, "day", DateType(), write_default="2017-11-16"),
        optional(4, "plain", IntegerType()),
    )
    assert schema.field(1).initial_default_value() == uuid.UUID(
        "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb"
    )
    assert schema.field(1).write_default_value() == uuid.UUID(
        "ec5911be-b0a7-458c-8438-c9a3e53cffae"
    )
    assert schema.field(2).initial_default_value() == Decimal("14.20")
    assert schema.field(2).write_default_value() is None
    assert schema.field(3).write_default_value() == dt.date(2017, 11, 16)
    assert schema.field(4).initial_default_value() is None
    assert default_json(DecimalType(9, 2), Decimal("1.5")) == "1.50"
    assert default_json(DateType(), dt.date(2017, 11, 16)) == "2017-11-16"


@pytest.mark.parametrize(
    ("field_type", "raw"),
    [
        (IntegerType(), "abc"),
        (IntegerType(), 2**40),
        (UUIDType(), "not-a-uuid"),
        (DateType(), "2017-13-01"),
        (DecimalType(4, 2), "123.456"),
        (StringType(), 5),
    ],
)
def test_invalid_default_values_are_refused(field_type: IcebergType, raw: object) -> None:
    with pytest.raises(InvalidSchemaError, match="field 1 \\(c\\): invalid initial-default"):
        Schema(optional(1, "c", field_type, initial_default=raw))
    with pytest.raises(InvalidSchemaError, match="invalid write-default"):
        Schema.from_json(
            {
                "type": "struct",
                "fields": [
                    {
                        "id": 1,
                        "name": "c",
                        "required": False,
                        "type": str(field_type),
                        "write-default": raw,
                    }
                ],
            }
        )


def test_nanosecond_timestamp_defaults_are_checked() -> None:
    # v3 nanosecond defaults decode (to int nanoseconds: datetime holds microseconds
    # only) and a malformed one is refused when the schema is built.
    schema = Schema(
        optional(1, "t", TimestampNanoType(), initial_default="2017-11-16T22:31:08.123456789"),
        optional(
            2,
            "tz",
            TimestamptzNanoType(),
            write_default="2017-11-16T22:31:08.123456789+00:00",
        ),
    )
    assert schema.field(1).initial_default == "2017-11-16T22:31:08.123456789"
    assert schema.field(1).initial_default_value() == 1_510_871_468_123_456_789
    assert schema.field(2).write_default_value() == 1_510_871_468_123_456_789
    for bad in ("2017-11-16T22:31:08.1234567891", "2017-13-16T22:31:08", 5):
        with pytest.raises(InvalidSchemaError, match="invalid initial-default"):
            Schema(optional(1, "t", TimestampNanoType(), initial_default=bad))
    with pytest.raises(InvalidSchemaError, match="invalid initial-default"):
        # timestamptz_ns needs a zone offset.
        Schema(optional(1, "t", TimestamptzNanoType(), initial_default="2017-11-16T22:31:08"))
