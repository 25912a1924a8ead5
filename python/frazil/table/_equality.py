"""Equality deletes (spec: "Equality Delete Files"): a data row is deleted when its values of
the delete file's equality fields equal one of the delete file's rows.

The join runs in Rust (``_native.EqualityDeleteSet``, src/arrow/equality_deletes.rs): a hash
set of the delete rows' keys, with the spec's and Java's equality (NULL equals NULL; floats as
Java's ``Float.compare``: NaN equals NaN, -0.0 differs from +0.0). Keys are read with pyarrow
(only the equality columns, by field id) into the table's types, so data and delete keys
compare by value. A field later dropped from the schema still applies: its values are read
from the data file as stored. A set is built once for the delete files a task shares with
others (bounded cache): a partition's delete files apply to every data file in it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil import types as t
from frazil.errors import InvalidDataError
from frazil.schema import Schema
from frazil.table._arrow_project import file_fields, plan_projection
from frazil.table._formats import EQUALITY_DELETE_FILE, open_data_file, read_whole
from frazil.table._memo import shared_lru

EQUALITY_DELETES = 2


@dataclass(frozen=True)
class EqualityDeletes:
    """The keys of a task's equality delete files with the same equality field ids."""

    field_ids: tuple[int, ...]
    keys: _native.EqualityDeleteSet


def deleted_mask(deletes: EqualityDeletes, columns: Sequence[pa.Array]) -> pa.Array:
    """True for the rows whose key (``columns``, one per equality field id) a delete row has."""
    schema = deletes.keys.key_schema
    arrays = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(columns, schema, strict=True)
    ]
    return deletes.keys.deleted_mask(pa.RecordBatch.from_arrays(arrays, schema=schema))


@shared_lru(16)
def _read_keys(
    location: str,
    file_format: str,
    record_count: int,
    field_ids: tuple[int, ...],
    schema_json: str,
    raw: _native.RawFileIO,
) -> pa.Table:
    """One delete file's key rows (cached: a delete file applies to many data files). Its
    Parquet page CRCs are always verified and its rows checked against its footer and its
    ``record_count`` (frazil.table._formats): a damaged delete file would bring deleted rows
    back without any error."""
    schema = Schema.from_json(json.loads(schema_json))
    # Parquet, ORC or Avro (Java writes delete files in the table's format).
    source = open_data_file(
        file_format,
        raw,
        location,
        what=EQUALITY_DELETE_FILE,
        record_count=record_count,
        verify_checksums=True,
    )
    with source:
        fields = file_fields(source.schema_arrow, location, None)
        targets = []
        for field_id in field_ids:
            target = schema.find_field(field_id)
            if target is None or not any(f.field_id == field_id for f in fields):
                raise InvalidDataError(
                    f"{location}: equality delete file has no column for equality field id "
                    f"{field_id}"
                )
            targets.append(target)
        arrow = _arrow_schema(Schema(*targets))
        projection = plan_projection(fields, tuple(targets), arrow, location, {})
        batches = read_whole(source, list(projection.columns))
        parts = [pa.Table.from_arrays(projection.apply(b), schema=arrow) for b in batches]
    if not parts:
        return arrow.empty_table()
    return pa.concat_tables(parts)


def _arrow_schema(schema: Schema) -> pa.Schema:
    from frazil.table._arrow_schema import arrow_schema

    return arrow_schema(schema)


def equality_deletes(
    task: Any, raw: _native.RawFileIO, schemas: Sequence[Schema]
) -> list[EqualityDeletes]:
    """The key sets of a task's equality delete files, grouped by equality field ids. Each
    field is typed by the first of ``schemas`` (the scan's, then older ones) that has it."""
    groups: dict[tuple[int, ...], tuple[str, list[tuple[str, str, int]]]] = {}
    for delete in task.delete_files:
        if delete.content != EQUALITY_DELETES:
            continue
        location = delete.file_path
        file_format = str(delete.file_format).upper()
        ids = tuple(sorted(delete.equality_ids or ()))
        if not ids:
            raise InvalidDataError(f"{location}: equality delete file without equality_ids")
        if ids not in groups:
            fields = [_field(field_id, schemas, location) for field_id in ids]
            groups[ids] = (json.dumps(Schema(*fields).to_json()), [])
        groups[ids][1].append((location, file_format, delete.record_count))
    return [
        EqualityDeletes(ids, _key_set(ids, tuple(sorted(locations)), schema_json, raw))
        for ids, (schema_json, locations) in groups.items()
    ]


@shared_lru(16)
def _key_set(
    field_ids: tuple[int, ...],
    locations: tuple[tuple[str, str, int], ...],
    schema_json: str,
    raw: _native.RawFileIO,
) -> _native.EqualityDeleteSet:
    """The keys of ``locations`` (cached: the data files of a partition share their delete
    files, so consecutive tasks ask for the same set)."""
    keys: _native.EqualityDeleteSet | None = None
    for location, file_format, record_count in locations:
        table = _read_keys(location, file_format, record_count, field_ids, schema_json, raw)
        if keys is None:
            keys = _native.EqualityDeleteSet(table.schema)
        for batch in table.to_batches():
            keys.add(batch, location)
    assert keys is not None
    return keys


def _field(field_id: int, schemas: Sequence[Schema], location: str) -> t.NestedField:
    for schema in schemas:
        found = schema.find_field(field_id)
        if found is not None:
            if not found.field_type.is_primitive:
                raise InvalidDataError(
                    f"{location}: equality field {field_id} ({found.name}) is not a primitive"
                )
            return t.NestedField(field_id, found.name, found.field_type, False)
    raise InvalidDataError(f"{location}: equality field id {field_id} is in no schema of the table")
