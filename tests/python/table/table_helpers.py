"""Helpers shared by the table update and evolution tests."""

from __future__ import annotations

from frazil import Schema
from frazil.types import (
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestamptzType,
    optional,
    required,
)

UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"


def sample_schema() -> Schema:
    """A schema with every kind of nesting, ids 1..13, identifier field ``id``."""
    return Schema(
        required(1, "id", LongType()),
        optional(2, "data", StringType()),
        optional(3, "ts", TimestamptzType()),
        optional(
            4,
            "location",
            StructType((optional(5, "lat", FloatType()), optional(6, "long", FloatType()))),
        ),
        optional(
            7,
            "points",
            ListType(8, StructType((required(9, "x", LongType()), required(10, "y", LongType())))),
        ),
        optional(11, "props", MapType(12, StringType(), 13, IntegerType())),
        identifier_field_ids=[1],
    )
