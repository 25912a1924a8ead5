"""Equality deletes (spec: "Equality Delete Files"): a data row is deleted when its values of
the delete file's equality fields equal one of the delete file's rows.

Equality follows the spec and Java's ``StructLikeSet``: NULL equals NULL, floats compare as
their bit patterns with NaN canonicalised (NaN equals NaN, -0.0 differs from +0.0), other
values by value after the data file's column is read into the table's type. A field later
dropped from the schema still applies: its values are read from the data file as stored.

The key sets of a task's delete files are read with pyarrow (only the equality columns, by
field id) and each batch is semi-joined against them with pyarrow's hash join: a pure-Python
first version, before the lead moves it to Rust.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import _native
from frazil import types as t
from frazil.errors import FrazilError, InvalidDataError
from frazil.io._arrow import open_arrow_file
from frazil.schema import Schema
from frazil.table._arrow_project import file_fields, plan_projection

EQUALITY_DELETES = 2
_ROW = "__frazil_row"


@dataclass(frozen=True)
class EqualityDeletes:
    """The rows of a task's equality delete files with the same equality field ids: ``keys``
    holds each field's normalised columns (see :func:`key_columns`), deduplicated."""

    field_ids: tuple[int, ...]
    keys: pa.Table


def _filler(arrow_type: pa.DataType) -> pa.Scalar:
    if pa.types.is_fixed_size_binary(arrow_type):
        return pa.scalar(b"\0" * arrow_type.byte_width, arrow_type)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.scalar(b"", arrow_type)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pa.scalar("", arrow_type)
    if pa.types.is_null(arrow_type):
        return pa.scalar(0, pa.int8())
    return pc.cast(pa.scalar(0, pa.int64()), arrow_type)


def key_columns(values: pa.Array) -> list[pa.Array]:
    """Two join columns for one key field: whether it is null, and its value (any value where
    null) in a form the hash join compares as Iceberg's equality."""
    if isinstance(values.type, pa.ExtensionType):
        values = values.storage
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
        values = pc.cast(values, pa.string())
    if pa.types.is_large_binary(values.type) or pa.types.is_binary_view(values.type):
        values = pc.cast(values, pa.binary())
    if pa.types.is_null(values.type):
        values = pa.nulls(len(values), pa.int8())
    is_null = pc.is_null(values)
    if pa.types.is_floating(values.type):
        wide = pc.cast(values, pa.float64())  # float keys were promoted or not: one width
        canonical = pc.if_else(pc.is_nan(wide), pa.scalar(float("nan")), wide)
        values = pc.fill_null(canonical, 0.0).view(pa.int64())
    else:
        values = pc.fill_null(values, _filler(values.type))
    return [is_null, values]


def _key_table(columns: Sequence[pa.Array]) -> pa.Table:
    arrays: list[pa.Array] = []
    for values in columns:
        arrays.extend(key_columns(values))
    return pa.table(arrays, names=[f"k{i}" for i in range(len(arrays))])


@functools.lru_cache(maxsize=16)
def _read_keys(
    location: str, field_ids: tuple[int, ...], schema_json: str, raw: _native.RawFileIO
) -> pa.Table:
    """One delete file's key rows (cached: a delete file applies to many data files)."""
    schema = Schema.from_json(json.loads(schema_json))
    try:
        parquet = pq.ParquetFile(open_arrow_file(raw, location), pre_buffer=True)
    except FrazilError:
        raise
    except Exception as error:
        raise InvalidDataError(f"{location}: not a readable Parquet file: {error}") from None
    with parquet:
        fields = file_fields(parquet.schema_arrow, location, None)
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
        batches = parquet.iter_batches(columns=list(projection.columns), use_threads=True)
        parts = [_key_table(projection.apply(b)) for b in batches]
    if not parts:
        return _key_table([pa.nulls(0, f.type) for f in arrow])
    keys = pa.concat_tables(parts)
    return keys.group_by(keys.column_names).aggregate([])


def _arrow_schema(schema: Schema) -> pa.Schema:
    from frazil.table.read import arrow_schema

    return arrow_schema(schema)


def equality_deletes(
    task: Any, raw: _native.RawFileIO, schemas: Sequence[Schema]
) -> list[EqualityDeletes]:
    """The key sets of a task's equality delete files, grouped by equality field ids. Each
    field is typed by the first of ``schemas`` (the scan's, then older ones) that has it."""
    groups: dict[tuple[int, ...], list[pa.Table]] = {}
    for delete in task.delete_files:
        if delete.content != EQUALITY_DELETES:
            continue
        location = delete.file_path
        if str(delete.file_format).upper() != "PARQUET":
            raise InvalidDataError(
                f"{location}: reading {delete.file_format} equality delete files is not "
                "supported yet"
            )
        ids = tuple(sorted(delete.equality_ids or ()))
        if not ids:
            raise InvalidDataError(f"{location}: equality delete file without equality_ids")
        fields = [_field(field_id, schemas, location) for field_id in ids]
        schema = Schema(*fields)
        keys = _read_keys(location, ids, json.dumps(schema.to_json()), raw)
        groups.setdefault(ids, []).append(keys)
    return [
        EqualityDeletes(ids, pa.concat_tables(tables) if len(tables) > 1 else tables[0])
        for ids, tables in groups.items()
    ]


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


def _row_index(length: int) -> pa.Array:
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), length)), 1)


def deleted_mask(deletes: EqualityDeletes, columns: Sequence[pa.Array]) -> pa.Array:
    """True for the rows whose key (``columns``, one per equality field id) is deleted."""
    rows = _row_index(len(columns[0]))
    data = _key_table(columns)
    keys = data.column_names
    hits = data.append_column(_ROW, rows).join(deletes.keys, keys=keys, join_type="left semi")
    return pc.is_in(rows, value_set=hits.column(_ROW).combine_chunks())
