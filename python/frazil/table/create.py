"""The metadata of a new table (Java's ``TableMetadata.newTableMetadata``).

A new table's schema gets fresh field ids from 1 in Java's order, its partition spec and sort
order are rebound to those ids by column name, partition fields are numbered from 1000 (spec:
"Partitioning"), and the properties Java persists for new tables are set
(``write.parquet.compression-codec=zstd`` unless given).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Mapping
from typing import Any

from frazil.errors import InvalidUpdateError
from frazil.metadata import SUPPORTED_FORMAT_VERSION, TableMetadata
from frazil.partitioning import PARTITION_DATA_ID_START, PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortField, SortOrder
from frazil.table._properties import check_write_properties, downcast_ns
from frazil.table.update_schema import assign_fresh_ids
from frazil.types import StructType

__all__ = ["new_table_metadata"]

# Properties Java writes into every new table's metadata (TableMetadata.persistedProperties).
_PERSISTED_DEFAULTS = {"write.parquet.compression-codec": "zstd"}
# Reserved table properties that configure creation and are not stored (Java: TableProperties
# RESERVED_PROPERTIES).
_FORMAT_VERSION_PROPERTY = "format-version"


def _fresh_schema(schema: Schema) -> Schema:
    counter = iter(range(1, 1 << 31))
    fresh = assign_fresh_ids(schema.as_struct(), lambda: next(counter))
    assert isinstance(fresh, StructType)
    names = [schema.find_column_name(i) for i in schema.identifier_field_ids]
    provisional = Schema(fields=fresh.fields, schema_id=0)
    identifier_ids = []
    for name in names:
        assert name is not None
        identifier_ids.append(provisional.field(name).field_id)
    return Schema(fields=fresh.fields, schema_id=0, identifier_field_ids=tuple(identifier_ids))


def _rebind(source_id: int, old: Schema, new: Schema, what: str) -> int:
    name = old.find_column_name(source_id)
    if name is None:
        raise InvalidUpdateError(f"{what} refers to field id {source_id}, not in the schema")
    return new.field(name).field_id


def _fresh_spec(
    spec: PartitionSpec, old: Schema, new: Schema, format_version: int
) -> PartitionSpec:
    fields = []
    for position, f in enumerate(spec.fields):
        source = _rebind(f.source_id, old, new, f"partition field {f.name!r}")
        fields.append(
            PartitionField(source, PARTITION_DATA_ID_START + position, f.transform, f.name)
        )
    fresh = PartitionSpec(0, tuple(fields))
    fresh.check_compatible(new)
    return fresh


def _fresh_order(order: SortOrder, old: Schema, new: Schema) -> SortOrder:
    if order.is_unsorted():
        return SortOrder.unsorted()
    fields = tuple(
        dataclasses.replace(f, source_id=_rebind(f.source_id, old, new, f"sort field {f}"))
        for f in order.fields
        if isinstance(f, SortField)
    )
    fresh = SortOrder(1, fields)
    fresh.check_compatible(new)
    return fresh


def _table_schema(
    schema: Schema | Any, format_version: int, properties: Mapping[str, str]
) -> Schema:
    if isinstance(schema, Schema):
        return schema
    import pyarrow as pa

    if isinstance(schema, pa.Schema):
        from frazil.table._arrow_schema import schema_from_arrow

        return schema_from_arrow(
            schema, format_version=format_version, downcast_ns=downcast_ns(properties)
        )
    raise InvalidUpdateError(
        f"a table schema must be a frazil Schema or a pyarrow Schema, got {type(schema).__name__}"
    )


def new_table_metadata(
    schema: Schema | Any,
    location: str,
    partition_spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
    properties: Mapping[str, str] | None = None,
    format_version: int | None = None,
    *,
    table_uuid: str | None = None,
    timestamp_ms: int | None = None,
) -> TableMetadata:
    """The metadata of a new table at ``location``. The format version comes from
    ``format_version``, else the ``format-version`` property (not stored), else 2.

    ``schema`` is a frazil Schema or a pyarrow Schema; an Arrow schema's nanosecond
    timestamps are ``timestamp_ns`` columns on v3 and refused before, unless
    ``downcast-ns-timestamp-to-us-on-write`` (the property or its environment variable) makes
    them microsecond columns (see :func:`frazil.table._arrow_schema.schema_from_arrow`)."""
    props = dict(properties or {})
    requested = props.pop(_FORMAT_VERSION_PROPERTY, None)
    if format_version is None:
        try:
            format_version = 2 if requested is None else int(requested)
        except ValueError:
            raise InvalidUpdateError(
                f"property format-version must be 1, 2 or 3, got {requested!r}"
            ) from None
    if format_version not in range(1, SUPPORTED_FORMAT_VERSION + 1):
        raise InvalidUpdateError(
            f"format version must be 1 to {SUPPORTED_FORMAT_VERSION}, got {format_version!r}"
        )
    schema = _table_schema(schema, format_version, props)
    check_write_properties(props, schema, location=location)
    fresh_schema = _fresh_schema(schema)
    fresh_schema.check_format_version(format_version)
    spec = _fresh_spec(partition_spec or PartitionSpec(), schema, fresh_schema, format_version)
    order = _fresh_order(sort_order or SortOrder.unsorted(), schema, fresh_schema)
    for key, value in _PERSISTED_DEFAULTS.items():
        props.setdefault(key, value)
    return TableMetadata(
        format_version=format_version,
        table_uuid=table_uuid or str(uuid.uuid4()),
        location=location.rstrip("/"),
        last_sequence_number=0,
        last_updated_ms=timestamp_ms if timestamp_ms is not None else int(time.time() * 1000),
        last_column_id=fresh_schema.highest_field_id(),
        schemas=(fresh_schema,),
        current_schema_id=0,
        partition_specs=(spec,),
        default_spec_id=0,
        last_partition_id=spec.last_assigned_field_id,
        properties=props,
        sort_orders=(order,),
        default_sort_order_id=order.order_id,
        next_row_id=0 if format_version >= 3 else None,
    )
