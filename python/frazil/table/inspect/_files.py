"""The entries and files metadata tables (Java's ``ManifestEntriesTable``,
``AllEntriesTable``, ``FilesTable``, ``DataFilesTable``, ``DeleteFilesTable``,
``AllFilesTable``, ``AllDataFilesTable``, ``AllDeleteFilesTable``): manifest entries read
through the Rust manifest decoder, in Java's shape, with ``readable_metrics`` last."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.manifest import STATUS_DELETED, read_manifests
from frazil.table.inspect._common import Unified, field, partition_struct, spec
from frazil.table.inspect._readable_metrics import ReadableMetrics
from frazil.table.read import table_uuid_type

if TYPE_CHECKING:
    from frazil.table._table import Table


def _int_map(value: pa.DataType) -> pa.DataType:
    return pa.map_(pa.field("key", pa.int32(), False), pa.field("value", value, False))


def data_file_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``DataFile.getType``; without ``partition`` when the table has no partition
    field (Java drops the empty struct)."""
    fields = [
        field("content", pa.int32()),
        field("file_path", pa.string(), True),
        field("file_format", pa.string(), True),
        field("spec_id", pa.int32()),
        field("partition", partition or pa.struct([]), True),
        field("record_count", pa.int64(), True),
        field("file_size_in_bytes", pa.int64(), True),
        field("column_sizes", _int_map(pa.int64())),
        field("value_counts", _int_map(pa.int64())),
        field("null_value_counts", _int_map(pa.int64())),
        field("nan_value_counts", _int_map(pa.int64())),
        field("lower_bounds", _int_map(pa.binary())),
        field("upper_bounds", _int_map(pa.binary())),
        field("key_metadata", pa.binary()),
        field("split_offsets", pa.list_(pa.field("element", pa.int64(), False))),
        field("equality_ids", pa.list_(pa.field("element", pa.int32(), False))),
        field("sort_order_id", pa.int32()),
        field("first_row_id", pa.int64()),
        field("referenced_data_file", pa.string()),
        field("content_offset", pa.int64()),
        field("content_size_in_bytes", pa.int64()),
    ]
    if partition is None:
        fields = [f for f in fields if f.name != "partition"]
    return fields


def entries_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``ManifestEntry.getSchema``."""
    return [
        field("status", pa.int32(), True),
        field("snapshot_id", pa.int64()),
        field("sequence_number", pa.int64()),
        field("file_sequence_number", pa.int64()),
        field("data_file", pa.struct(data_file_fields(partition)), True),
    ]


def entries_table(table: Table, manifests: list[dict[str, Any]]) -> pa.Table:
    """Every entry of ``manifests``, DELETED ones too (Java's ``BaseEntriesTable``)."""
    entries = _read_entries(table, manifests, live_only=False)
    metrics = ReadableMetrics(table.metadata.schema(), table_uuid_type(table.properties))
    column = metrics.of(entries.column("data_file").combine_chunks())
    return entries.append_column(metrics.arrow_field, column)


def files_table(table: Table, manifests: list[dict[str, Any]]) -> pa.Table:
    """The live files of ``manifests`` (Java's ``BaseFilesTable``: a file kept by several
    of them appears once per manifest)."""
    entries = _read_entries(table, manifests, live_only=True)
    files = entries.column("data_file").combine_chunks()
    metrics = ReadableMetrics(table.metadata.schema(), table_uuid_type(table.properties))
    return pa.Table.from_struct_array(files).append_column(metrics.arrow_field, metrics.of(files))


def _read_entries(table: Table, manifests: list[dict[str, Any]], live_only: bool) -> pa.Table:
    unified = partition_struct(table)
    schema = pa.schema(entries_fields(unified.arrow))
    tables = read_manifests(manifests, io=table.io) if manifests else []
    parts = []
    for row, entries in zip(manifests, tables, strict=True):
        if live_only:
            entries = entries.filter(pc.not_equal(entries.column("status"), STATUS_DELETED))
        parts.append(_conform(table, entries, row["partition_spec_id"], unified, schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def _conform(
    table: Table, entries: pa.Table, spec_id: int, unified: Unified, schema: pa.Schema
) -> pa.Table:
    """One manifest's entries in the metadata table's shape: ``spec_id`` from the manifest
    list, the partition in the table-wide partition struct."""
    rows = entries.num_rows
    data_file = entries.column("data_file").combine_chunks()
    present = {data_file.type.field(i).name for i in range(data_file.type.num_fields)}
    file_type = schema.field("data_file").type
    children = []
    for child in file_type:
        if child.name == "spec_id":
            children.append(pa.array([spec_id] * rows, pa.int32()))
        elif child.name == "partition":
            children.append(
                unified.coerce(data_file.field("partition"), spec(table, spec_id), rows)
            )
        elif child.name in present:
            children.append(data_file.field(child.name).cast(child.type))
        else:
            children.append(pa.nulls(rows, child.type))
    columns = [entries.column(name).cast(schema.field(name).type) for name in schema.names[:4]]
    columns.append(pa.StructArray.from_arrays(children, fields=list(file_type)))
    return pa.Table.from_arrays(columns, schema=schema)
