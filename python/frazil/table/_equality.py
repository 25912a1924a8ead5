"""Equality deletes (spec: "Equality Delete Files"): a data row is deleted when its values of
the delete file's equality fields equal one of the delete file's rows.

Equality follows the spec and Java's ``StructLikeSet``: NULL equals NULL, floats compare as
their bit patterns with NaN canonicalised (NaN equals NaN, -0.0 differs from +0.0), other
values by value after the data file's column is read into the table's type. A field later
dropped from the schema still applies: its values are read from the data file as stored.

The key sets of a task's delete files are read with pyarrow (only the equality columns, by
field id) and encoded field by field as codes among the delete rows' distinct values; a
batch's keys are encoded the same way with pyarrow's hash lookups (``index_in``), and a row is
deleted when its key's code exists. No acero join: that imports pyarrow.dataset and pandas.
A pure-Python first version, before the lead moves it to Rust.
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
from frazil.table._literals import literal

EQUALITY_DELETES = 2


@dataclass(frozen=True)
class _Step:
    """One equality field of a key: the distinct values the delete files hold for it, and the
    distinct codes of the key so far (this field included)."""

    values: pa.Array
    codes: pa.Array


@dataclass(frozen=True)
class EqualityDeletes:
    """The rows of a task's equality delete files with the same equality field ids, as one
    step per field (see :func:`deleted_mask`)."""

    field_ids: tuple[int, ...]
    steps: tuple[_Step, ...]


def normalised(values: pa.Array) -> pa.Array:
    """A key column in a form whose equality (``index_in``, nulls matching nulls) is
    Iceberg's: floats as their bits with NaN canonicalised, so NaN equals NaN and -0.0 is not
    +0.0."""
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
    if pa.types.is_floating(values.type):
        wide = pc.cast(values, pa.float64())  # float keys were promoted or not: one width
        nan = literal(float("nan"), pa.float64())
        values = pc.if_else(pc.is_nan(wide), nan, wide).view(pa.int64())
    return values


def _combine(codes: pa.Array | None, field_codes: pa.Array, width: int) -> pa.Array:
    """The codes of (key so far, this field): unique while below width * len(codes)."""
    field_codes = pc.cast(field_codes, pa.int64())
    if codes is None:
        return field_codes
    scaled = pc.multiply(codes, literal(width, pa.int64()))
    return pc.add(scaled, field_codes)


def _steps(columns: Sequence[pa.Array]) -> tuple[_Step, ...]:
    """Encodes the delete rows' keys field by field: each field's values by their index among
    the distinct values (nulls included), the key so far compressed to the index among its
    distinct codes, so codes stay below the number of delete rows."""
    steps = []
    codes: pa.Array | None = None
    for column in columns:
        values = pc.unique(normalised(column))
        field_codes = pc.index_in(normalised(column), value_set=values, skip_nulls=False)
        combined = _combine(codes, field_codes, len(values))
        distinct = pc.unique(combined)
        codes = pc.index_in(combined, value_set=distinct)
        steps.append(_Step(values, distinct))
    return tuple(steps)


def deleted_mask(deletes: EqualityDeletes, columns: Sequence[pa.Array]) -> pa.Array:
    """True for the rows whose key (``columns``, one per equality field id) a delete row has."""
    codes: pa.Array | None = None
    for step, column in zip(deletes.steps, columns, strict=True):
        field_codes = pc.index_in(normalised(column), value_set=step.values, skip_nulls=False)
        combined = _combine(codes, field_codes, len(step.values))
        codes = pc.index_in(combined, value_set=step.codes)  # null: no delete row has it
    assert codes is not None
    return pc.is_valid(codes)


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
        parts = [pa.Table.from_arrays(projection.apply(b), schema=arrow) for b in batches]
    if not parts:
        return arrow.empty_table()
    return pa.concat_tables(parts)


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
    out = []
    for ids, tables in groups.items():
        keys = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        columns = [keys.column(i).combine_chunks() for i in range(keys.num_columns)]
        out.append(EqualityDeletes(ids, _steps(columns)))
    return out


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
