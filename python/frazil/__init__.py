"""frazil: a Rust-accelerated Python implementation of the Apache Iceberg table format."""

from __future__ import annotations

from frazil import errors, expressions, transforms, types, values
from frazil._native import __version__
from frazil.errors import FrazilError
from frazil.metadata import TableMetadata, check_same_table, read_metadata, write_metadata
from frazil.name_mapping import MappedField, NameMapping
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import (
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
)
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from frazil.table._table import StaticTable, Table
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
from frazil.view import SQLViewRepresentation, ViewHistoryEntry, ViewMetadata, ViewVersion

__all__ = [
    "BinaryType",
    "BlobMetadata",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "FrazilError",
    "GeographyType",
    "GeometryType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "MappedField",
    "MetadataLogEntry",
    "NameMapping",
    "NestedField",
    "NullOrder",
    "PartitionField",
    "PartitionSpec",
    "PartitionStatisticsFile",
    "PrimitiveType",
    "SQLViewRepresentation",
    "Schema",
    "Snapshot",
    "SnapshotLogEntry",
    "SnapshotRef",
    "SnapshotRefType",
    "SortDirection",
    "SortField",
    "SortOrder",
    "StaticTable",
    "StatisticsFile",
    "StringType",
    "StructType",
    "Table",
    "TableMetadata",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "VariantType",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewVersion",
    "__version__",
    "check_same_table",
    "errors",
    "expressions",
    "read_metadata",
    "transforms",
    "types",
    "values",
    "write_metadata",
]
