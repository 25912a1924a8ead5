"""The position_deletes metadata table (Java's ``PositionDeletesTable``, read as Spark's
``PositionDeletesRowReader`` and ``DVIterator`` do): one row per deleted position of every live
position delete file and deletion vector of a snapshot.

Columns (Java 1.10): ``file_path`` and ``pos`` (spec: "Position Delete Files"), ``row`` (the
deleted row as the current schema, where a delete file stores it; null otherwise and always for
deletion vectors), ``partition`` (the table-wide partition struct, dropped when no spec has a
field), ``spec_id``, ``delete_file_path``, and for v3 tables ``content_offset`` and
``content_size_in_bytes`` (set for deletion vectors only).

Parquet delete files are read with pyarrow; deletion vectors through the Rust Puffin reader
(:class:`~frazil._native.PositionDeleteIndex`, which checks length, magic and CRC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.errors import InvalidDataError
from frazil.io import raw
from frazil.manifest import STATUS_DELETED, read_manifests
from frazil.table._arrow_project import file_fields, plan_projection
from frazil.table._deletes import FILE_PATH_COLUMN, POS_COLUMN, POSITION_DELETES
from frazil.table._formats import POSITION_DELETE_FILE, open_data_file, read_whole
from frazil.table.inspect._common import (
    DELETE_MANIFEST,
    Unified,
    field,
    partition_struct,
    snapshot_manifests,
    spec,
)
from frazil.table.read import scan_arrow_schema, table_uuid_type
from frazil.types import NestedField, StructType

if TYPE_CHECKING:
    from frazil.table._table import Table

# Reserved field id of the position delete file's ``row`` column (spec: "Reserved Field IDs").
ROW_FIELD_ID = 2147483544
ROW_COLUMN = "row"

__all__ = ["position_deletes_table"]


def position_deletes_schema(table: Table, unified: Unified) -> pa.Schema:
    """Java's ``PositionDeletesTable.calculateSchema``."""
    metadata = table.metadata
    fields = [
        field("file_path", pa.string(), True),
        field("pos", pa.int64(), True),
        field(ROW_COLUMN, pa.struct(list(_row_schema(table)))),
    ]
    if unified.arrow is not None:
        fields.append(field("partition", unified.arrow, True))
    fields += [field("spec_id", pa.int32(), True), field("delete_file_path", pa.string(), True)]
    if metadata.format_version >= 3:
        fields += [field("content_offset", pa.int64()), field("content_size_in_bytes", pa.int64())]
    return pa.schema(fields)


def _row_schema(table: Table) -> pa.Schema:
    # Fields nullable as before (a stored row may be partial), uuid as the table reads it.
    schema = table.metadata.schema()
    return scan_arrow_schema(schema, table_uuid_type(table.properties), nullability=False)


def position_deletes_table(table: Table, snapshot_id: int | None) -> pa.Table:
    unified = partition_struct(table)
    schema = position_deletes_schema(table, unified)
    manifests = snapshot_manifests(table, snapshot_id, (DELETE_MANIFEST,))
    tables = read_manifests(manifests, io=table.io) if manifests else []
    parts = []
    for manifest, entries in zip(manifests, tables, strict=True):
        spec_id = manifest["partition_spec_id"]
        files = entries.column("data_file").combine_chunks()
        live = pc.and_(
            pc.not_equal(entries.column("status").combine_chunks(), STATUS_DELETED),
            pc.equal(files.field("content"), POSITION_DELETES),
        )
        files = files.filter(live)
        partitions = (
            None
            if unified.arrow is None
            else unified.coerce(files.field("partition"), spec(table, spec_id), len(files))
        )
        for index, delete in enumerate(files.to_pylist()):
            columns = _deleted_positions(table, delete, schema.field(ROW_COLUMN).type)
            rows = len(columns["pos"])
            if partitions is not None:
                columns["partition"] = partitions.take(
                    pa.repeat(pa.scalar(index, pa.int64()), rows)
                )
            columns["spec_id"] = pa.repeat(pa.scalar(spec_id, pa.int32()), rows)
            columns["delete_file_path"] = pa.repeat(pa.scalar(delete["file_path"]), rows)
            for name in ("content_offset", "content_size_in_bytes"):
                columns[name] = pa.repeat(pa.scalar(delete.get(name), pa.int64()), rows)
            parts.append(pa.Table.from_arrays([columns[n] for n in schema.names], schema=schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def _deleted_positions(
    table: Table, delete: dict[str, Any], row_type: pa.StructType
) -> dict[str, pa.Array]:
    """``file_path``, ``pos`` and ``row`` of one delete file."""
    file_format = str(delete["file_format"]).upper()
    if file_format == "PUFFIN":
        return _deletion_vector(table, delete, row_type)
    if file_format == "PARQUET":
        return _parquet(table, delete["file_path"], delete["record_count"], row_type)
    raise InvalidDataError(
        f"{delete['file_path']}: reading {file_format} position delete files is not supported yet"
    )


def _deletion_vector(
    table: Table, delete: dict[str, Any], row_type: pa.StructType
) -> dict[str, pa.Array]:
    location, data_file = delete["file_path"], delete["referenced_data_file"]
    offset, size = delete["content_offset"], delete["content_size_in_bytes"]
    if data_file is None or offset is None or size is None:
        raise InvalidDataError(
            f"{location}: a deletion vector needs referenced_data_file, content_offset and "
            "content_size_in_bytes"
        )
    index = _native.PositionDeleteIndex(data_file)
    index.read_deletion_vector(
        location,
        offset,
        size,
        record_count=delete["record_count"],
        referenced_data_file=data_file,
        io=raw(table.io),
    )
    positions: pa.Array = index.positions()
    rows = len(positions)
    return {
        "file_path": pa.repeat(pa.scalar(data_file), rows),
        "pos": positions,
        # Deletion vectors do not keep the deleted rows (Spark's DVIterator).
        ROW_COLUMN: pa.nulls(rows, row_type),
    }


def _parquet(
    table: Table, location: str, record_count: int, row_type: pa.StructType
) -> dict[str, pa.Array]:
    # Read as the scan reads delete files (frazil.table._formats): page CRCs verified, rows
    # checked against the footer and record_count, errors naming the file.
    with open_data_file(
        "PARQUET",
        raw(table.io),
        location,
        what=POSITION_DELETE_FILE,
        record_count=record_count,
        verify_checksums=True,
    ) as source:
        file_schema = source.schema_arrow
        projection = None
        if ROW_COLUMN in file_schema.names:
            # The stored row, by field id, as the current schema (as the reader projects
            # data files): renamed, added and dropped columns resolved.
            target = NestedField(
                ROW_FIELD_ID, ROW_COLUMN, StructType(table.metadata.schema().fields)
            )
            projection = plan_projection(
                file_fields(file_schema, location, None),
                (target,),
                pa.schema([pa.field(ROW_COLUMN, row_type)]),
                location,
                {},
            )
        columns = [FILE_PATH_COLUMN, POS_COLUMN]
        missing = [c for c in columns if c not in file_schema.names]
        if missing:
            raise InvalidDataError(
                f"{location}: the {POSITION_DELETE_FILE} has no column {missing[0]!r}"
            )
        columns += [] if projection is None else list(projection.columns)
        batches = list(read_whole(source, columns, whole=True))
        schema = pa.schema([file_schema.field(c) for c in columns])
        read = pa.Table.from_batches(batches, schema=schema)
    out = {
        "file_path": read.column(FILE_PATH_COLUMN).combine_chunks().cast(pa.string()),
        "pos": read.column(POS_COLUMN).combine_chunks().cast(pa.int64()),
    }
    if projection is None:
        out[ROW_COLUMN] = pa.nulls(read.num_rows, row_type)
    else:
        batches = read.combine_chunks().to_batches() or [
            pa.RecordBatch.from_pylist([], schema=read.schema)
        ]
        out[ROW_COLUMN] = pa.concat_arrays([projection.apply(b)[0] for b in batches])
    return out
