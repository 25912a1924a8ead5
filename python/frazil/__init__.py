"""frazil: a Rust-accelerated Python implementation of the Apache Iceberg table format.

Submodules and the names below load on first use (PEP 562), so that ``import frazil`` stays
cheap in processes that need little of it (a PySpark worker applying transforms).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from frazil import errors
from frazil._native import __version__
from frazil.errors import FrazilError

if TYPE_CHECKING:
    from frazil import expressions, transforms, types, values
    from frazil.catalog import load_catalog
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
    from frazil.table.read import read_task
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


# Name -> the module that defines it.
_LAZY: dict[str, str] = {
    "load_catalog": "frazil.catalog",
    "TableMetadata": "frazil.metadata",
    "check_same_table": "frazil.metadata",
    "read_metadata": "frazil.metadata",
    "write_metadata": "frazil.metadata",
    "MappedField": "frazil.name_mapping",
    "NameMapping": "frazil.name_mapping",
    "PartitionField": "frazil.partitioning",
    "PartitionSpec": "frazil.partitioning",
    "Schema": "frazil.schema",
    "MetadataLogEntry": "frazil.snapshots",
    "Snapshot": "frazil.snapshots",
    "SnapshotLogEntry": "frazil.snapshots",
    "SnapshotRef": "frazil.snapshots",
    "SnapshotRefType": "frazil.snapshots",
    "NullOrder": "frazil.sorting",
    "SortDirection": "frazil.sorting",
    "SortField": "frazil.sorting",
    "SortOrder": "frazil.sorting",
    "BlobMetadata": "frazil.statistics",
    "PartitionStatisticsFile": "frazil.statistics",
    "StatisticsFile": "frazil.statistics",
    "StaticTable": "frazil.table._table",
    "Table": "frazil.table._table",
    "read_task": "frazil.table.read",
    "BinaryType": "frazil.types",
    "BooleanType": "frazil.types",
    "DateType": "frazil.types",
    "DecimalType": "frazil.types",
    "DoubleType": "frazil.types",
    "FixedType": "frazil.types",
    "FloatType": "frazil.types",
    "GeographyType": "frazil.types",
    "GeometryType": "frazil.types",
    "IcebergType": "frazil.types",
    "IntegerType": "frazil.types",
    "ListType": "frazil.types",
    "LongType": "frazil.types",
    "MapType": "frazil.types",
    "NestedField": "frazil.types",
    "PrimitiveType": "frazil.types",
    "StringType": "frazil.types",
    "StructType": "frazil.types",
    "TimestampNanoType": "frazil.types",
    "TimestampType": "frazil.types",
    "TimestamptzNanoType": "frazil.types",
    "TimestamptzType": "frazil.types",
    "TimeType": "frazil.types",
    "UnknownType": "frazil.types",
    "UUIDType": "frazil.types",
    "VariantType": "frazil.types",
    "SQLViewRepresentation": "frazil.view",
    "ViewHistoryEntry": "frazil.view",
    "ViewMetadata": "frazil.view",
    "ViewVersion": "frazil.view",
}
_SUBMODULES = {"expressions", "transforms", "types", "values"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f"frazil.{name}")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'frazil' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
    "load_catalog",
    "read_metadata",
    "read_task",
    "transforms",
    "types",
    "values",
    "write_metadata",
]
