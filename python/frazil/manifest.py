"""Manifests and manifest lists (Iceberg spec: "Manifests", "Manifest Lists").

Readers return pyarrow Tables with one row per manifest entry (or per
manifest-list entry), their columns named as in the spec. Decoding happens in
Rust, straight into Arrow, with the GIL released; sequence numbers and
snapshot ids are inherited from the manifest-list row when one is given.

The dataclasses at the end (:class:`ManifestFile`, :class:`ManifestEntry`,
:class:`DataFile`) are light views built on demand from table rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa

from frazil import _native
from frazil._checked import checked
from frazil.errors import InvalidDataError, InvalidValueError
from frazil.io import IOLike, raw, resolve

__all__ = [
    "DataFile",
    "ManifestEntry",
    "ManifestFile",
    "PartitionFieldSummary",
    "entries_table",
    "manifest_entries",
    "manifest_entry_schema",
    "manifest_file_schema",
    "manifest_files",
    "read_manifest",
    "read_manifest_list",
    "read_manifests",
    "write_manifest",
    "write_manifest_list",
]

Location: TypeAlias = "str | os.PathLike[str]"
Rows: TypeAlias = "pa.Table | pa.RecordBatch | Sequence[Mapping[str, Any]]"
JsonLike: TypeAlias = "str | Mapping[str, Any] | Sequence[Any]"

STATUS_EXISTING = 0
STATUS_ADDED = 1
STATUS_DELETED = 2


def _location(location: Location) -> str:
    return os.fspath(location)


_INHERITED = ("added_snapshot_id", "sequence_number", "first_row_id")


def _inherit(manifest_file: Mapping[str, Any] | None) -> tuple[int | None, int, int | None] | None:
    """What entries inherit from their manifest-list row (spec: "Sequence
    Number Inheritance").

    A row without a ``sequence_number`` key is a v1 list's, whose manifests
    have sequence number 0 (:func:`read_manifest_list` already fills the 0 in).
    A row that has the key with a null value is invalid: v2 and later lists
    always assign one, and inheriting 0 in its place would make every ADDED
    entry look older than the deletes that apply to it.
    """
    if manifest_file is None:
        return None
    sequence_number = manifest_file.get("sequence_number", 0)
    if sequence_number is None:
        raise InvalidDataError(
            f"manifest list row of {manifest_file.get('manifest_path', '(no manifest_path)')} has "
            "a null sequence_number: a v2+ manifest list must assign one (a v1 row has no "
            "sequence_number field and inherits 0)"
        )
    return (
        manifest_file.get("added_snapshot_id"),
        sequence_number,
        manifest_file.get("first_row_id"),
    )


def read_manifest_list(location: Location, *, io: IOLike = None) -> pa.Table:
    """Reads a manifest list: one row per manifest (``manifest_file`` fields).

    v1 lists read with ``content``, ``sequence_number`` and
    ``min_sequence_number`` of 0, as the spec requires (Appendix E). ``io`` is
    the :class:`~frazil.io.FileIO` (or its properties) to read through.
    """
    table: pa.Table = _native.read_manifest_list(_location(location), raw(io))
    return table


def read_manifest(
    location: Location,
    columns: Sequence[str] | None = None,
    manifest_file: Mapping[str, Any] | None = None,
    *,
    io: IOLike = None,
) -> pa.Table:
    """Reads a manifest: one row per entry (``status``, ``snapshot_id``,
    ``sequence_number``, ``file_sequence_number``, ``data_file``).

    ``columns`` selects top-level or dotted nested fields such as
    ``"data_file.file_path"``; fields not selected are not decoded.
    ``manifest_file`` is this manifest's row of :func:`read_manifest_list` (a
    dict): null snapshot ids and the sequence numbers of ADDED entries are
    inherited from it. The Avro key-value metadata (``schema``,
    ``partition-spec``, ...) is in the table's schema metadata. ``io`` is the
    :class:`~frazil.io.FileIO` (or its properties) to read through.
    """
    table: pa.Table = _native.read_manifest(
        _location(location),
        None if columns is None else list(columns),
        _inherit(manifest_file),
        raw(io),
    )
    return table


def read_manifests(
    manifest_files: Rows,
    columns: Sequence[str] | None = None,
    threads: int = 0,
    *,
    io: IOLike = None,
) -> list[pa.Table]:
    """Reads many manifests in parallel (``threads=0``: all cores), each with
    its manifest-list row's inheritance. Returns one table per manifest.

    The files are fetched through ``io`` (a :class:`~frazil.io.FileIO` or its
    properties) all at once, object-store requests overlapping, then decoded
    on ``threads`` workers."""
    if isinstance(manifest_files, (pa.Table, pa.RecordBatch)):
        # Only the inherited fields, not every row as a dict with its
        # partition summaries: planning calls this for every snapshot.
        wanted = [n for n in _INHERITED if n in manifest_files.schema.names]
        rows = manifest_files.select(["manifest_path", *wanted]).to_pylist()
    else:
        rows = list(manifest_files)
    locations = [str(row["manifest_path"]) for row in rows]
    tables: list[pa.Table] = _native.read_manifests(
        locations,
        [_inherit(row) for row in rows],
        None if columns is None else list(columns),
        threads,
        raw(io),
    )
    return tables


def _json(value: JsonLike) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def manifest_entry_schema(spec: JsonLike, schema: JsonLike) -> pa.Schema:
    """The Arrow schema of :func:`read_manifest`'s tables for a partition
    spec (JSON object or fields array) over a table schema (JSON)."""
    result: pa.Schema = _native.manifest_entry_schema(_json(spec), _json(schema))
    return result


def manifest_file_schema() -> pa.Schema:
    """The Arrow schema of :func:`read_manifest_list`'s tables."""
    result: pa.Schema = _native.manifest_file_schema()
    return result


def _conform_array(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` cast to ``target``; struct fields are matched by name and
    absent ones become nulls."""
    if array.type == target:
        return array
    if pa.types.is_struct(target) and target.num_fields == 0:
        # from_arrays without children would give a struct of length 0.
        return pa.array(
            [{}] * len(array), target, mask=array.is_null() if array.null_count else None
        )
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        names = {array.type.field(i).name for i in range(array.type.num_fields)}
        children = []
        for i in range(target.num_fields):
            field = target.field(i)
            if field.name in names:
                children.append(_conform_array(array.field(field.name), field.type))
            else:
                children.append(pa.nulls(len(array), field.type))
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    return array.cast(target)


def entries_table(entries: Rows, *, spec: JsonLike, schema: JsonLike) -> pa.Table:
    """Manifest entries (rows as :func:`write_manifest` takes them) as a Table of
    :func:`manifest_entry_schema`, the shape :func:`read_manifest` gives."""
    return _conform(entries, manifest_entry_schema(spec, schema))


def _conform(rows: Rows, schema: pa.Schema) -> pa.Table:
    """``rows`` as a Table of ``schema``; a value that does not fit its field's type
    (pyarrow refuses it) is an InvalidValueError."""
    try:
        return _conform_rows(rows, schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
        raise InvalidValueError(f"rows do not fit the manifest schema: {error}") from None


def _conform_rows(rows: Rows, schema: pa.Schema) -> pa.Table:
    if isinstance(rows, pa.RecordBatch):
        rows = pa.Table.from_batches([rows])
    if not isinstance(rows, pa.Table):
        return pa.Table.from_pylist(list(rows), schema=schema)
    columns = []
    for field in schema:
        if field.name in rows.column_names:
            column = rows.column(field.name).combine_chunks()
            columns.append(_conform_array(column, field.type))
        else:
            columns.append(pa.nulls(rows.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _write(location: str, data: bytes, io: IOLike) -> None:
    resolve(io).write(location, data)


def write_manifest(
    location: Location,
    entries: Rows,
    *,
    schema: JsonLike,
    spec: JsonLike,
    spec_id: int | None = None,
    format_version: int = 2,
    snapshot_id: int | None = None,
    content: str = "data",
    codec: str = "deflate",
    io: IOLike = None,
) -> dict[str, Any]:
    """Writes a manifest of ``entries`` (a Table or dicts in the shape of
    :func:`read_manifest`'s output; absent optional fields are null).

    ``schema`` is the table schema JSON and ``spec`` the partition spec JSON
    (object with ``spec-id`` and ``fields``, or the fields array with
    ``spec_id``). Entries without a snapshot id get ``snapshot_id``. v1 writes
    the v1 field set (with ``block_size_in_bytes``), v2 adds content and
    sequence numbers, v3 the row-lineage fields. Returns the manifest's
    manifest-list row (a dict for :func:`write_manifest_list`) with its
    counts and partition summaries; its ``sequence_number`` is None until a
    manifest list assigns it. The file is written through ``io`` (a
    :class:`~frazil.io.FileIO` or its properties), replacing any file there.
    """
    if content not in ("data", "deletes"):
        raise InvalidValueError(f"content must be 'data' or 'deletes', not {content!r}")
    spec_json = _json(spec)
    if spec_id is None:
        parsed = json.loads(spec_json)
        spec_id = int(parsed.get("spec-id", 0)) if isinstance(parsed, dict) else 0
    schema_json = _json(schema)
    table = entries_table(entries, spec=spec_json, schema=schema_json)
    loc = _location(location)
    data, row = _native.write_manifest(
        loc,
        table,
        schema_json,
        spec_json,
        spec_id,
        format_version,
        content == "deletes",
        snapshot_id,
        codec,
    )
    _write(loc, data, io)
    result: dict[str, Any] = row.to_pylist()[0]
    return result


def write_manifest_list(
    location: Location,
    manifests: Rows,
    *,
    snapshot_id: int,
    sequence_number: int = 0,
    parent_snapshot_id: int | None = None,
    format_version: int = 2,
    first_row_id: int | None = None,
    codec: str = "deflate",
    io: IOLike = None,
) -> int | None:
    """Writes a manifest list of ``manifests`` (rows as returned by
    :func:`write_manifest` or :func:`read_manifest_list`).

    Manifests without a sequence number get ``sequence_number`` (v2+). In v3,
    data manifests without a first row id get ids from ``first_row_id`` on;
    the next unassigned row id is returned (None otherwise). The file is
    written through ``io`` (a :class:`~frazil.io.FileIO` or its properties).
    """
    table = _conform(manifests, manifest_file_schema())
    data, next_row_id = _native.write_manifest_list(
        table,
        format_version,
        snapshot_id,
        parent_snapshot_id,
        sequence_number,
        first_row_id,
        codec,
    )
    _write(_location(location), data, io)
    result: int | None = next_row_id
    return result


@dataclass(frozen=True)
@checked
class PartitionFieldSummary:
    contains_null: bool
    contains_nan: bool | None
    lower_bound: bytes | None
    upper_bound: bytes | None


@dataclass(frozen=True)
@checked
class ManifestFile:
    """One row of a manifest list."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: int
    sequence_number: int | None
    min_sequence_number: int | None
    added_snapshot_id: int
    added_files_count: int | None
    existing_files_count: int | None
    deleted_files_count: int | None
    added_rows_count: int | None
    existing_rows_count: int | None
    deleted_rows_count: int | None
    partitions: list[PartitionFieldSummary] | None
    key_metadata: bytes | None
    first_row_id: int | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ManifestFile:
        values = dict(row)
        summaries = values.get("partitions")
        values["partitions"] = (
            None if summaries is None else [PartitionFieldSummary(**s) for s in summaries]
        )
        fields: dict[str, Any] = {name: values.get(name) for name in cls.__dataclass_fields__}
        return cls(**fields)


_MAPS = ("_sizes", "_counts", "_bounds")
# The Arrow types whose values (as ``to_pylist`` gives them) have DataFile's annotated types.
_INT = pa.types.is_integer


def _int_map(t: pa.DataType) -> bool:
    return bool(pa.types.is_map(t) and _INT(t.key_type) and _INT(t.item_type))


def _bytes_map(t: pa.DataType) -> bool:
    return bool(pa.types.is_map(t) and _INT(t.key_type) and pa.types.is_binary(t.item_type))


_GUARANTEES: dict[str, Callable[[pa.DataType], bool]] = {
    "content": _INT,
    "file_path": pa.types.is_string,
    "file_format": pa.types.is_string,
    "partition": pa.types.is_struct,
    "record_count": _INT,
    "file_size_in_bytes": _INT,
    "column_sizes": _int_map,
    "value_counts": _int_map,
    "null_value_counts": _int_map,
    "nan_value_counts": _int_map,
    "lower_bounds": _bytes_map,
    "upper_bounds": _bytes_map,
    "key_metadata": pa.types.is_binary,
    "split_offsets": lambda t: pa.types.is_list(t) and _INT(t.value_type),
    "equality_ids": lambda t: pa.types.is_list(t) and _INT(t.value_type),
    "sort_order_id": _INT,
    "first_row_id": _INT,
    "referenced_data_file": pa.types.is_string,
    "content_offset": _INT,
    "content_size_in_bytes": _INT,
}


def _guaranteed(t: pa.DataType) -> bool:
    """Whether a struct column of type ``t`` can only hold valid DataFile values (a field the
    struct lacks reads as None, which every DataFile field takes)."""
    if not pa.types.is_struct(t):
        return False
    for i in range(t.num_fields):
        child = t.field(i)
        if child.name not in DataFile.__dataclass_fields__:
            continue  # not taken
        fits = _GUARANTEES.get(child.name)
        if fits is None or not fits(child.type):
            return False
    return True


@dataclass(frozen=True)
@checked
class DataFile:
    """The ``data_file`` struct of a manifest entry. Maps are dicts."""

    content: int | None
    file_path: str | None
    file_format: str | None
    partition: dict[str, Any] | None
    record_count: int | None
    file_size_in_bytes: int | None
    column_sizes: dict[int, int] | None
    value_counts: dict[int, int] | None
    null_value_counts: dict[int, int] | None
    nan_value_counts: dict[int, int] | None
    lower_bounds: dict[int, bytes] | None
    upper_bounds: dict[int, bytes] | None
    key_metadata: bytes | None
    split_offsets: list[int] | None
    equality_ids: list[int] | None
    sort_order_id: int | None
    first_row_id: int | None
    referenced_data_file: str | None
    content_offset: int | None
    content_size_in_bytes: int | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> DataFile:
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            value = row.get(name)
            if isinstance(value, list) and name.endswith(_MAPS):
                value = dict(value)
            values[name] = value
        return cls(**values)

    @classmethod
    def from_arrow(cls, column: pa.Array | pa.ChunkedArray) -> list[DataFile]:
        """Views of a ``data_file`` struct column of :func:`read_manifest`'s tables. The
        column's Arrow type fixes the type of every value, so it is checked once, for the
        column, and the rows are not checked one by one (planning and commits build a view per
        data file; checking its six metric maps item by item would cost several times its
        construction); a column of another type is read with the checks of :meth:`from_row`."""
        rows = column.to_pylist()
        if not _guaranteed(column.type) or column.null_count:
            return [cls.from_row(row or {}) for row in rows]
        names = tuple(cls.__dataclass_fields__)
        maps = [name for name in names if name.endswith(_MAPS)]
        views = []
        for row in rows:
            values = {name: row.get(name) for name in names}
            for name in maps:
                if values[name] is not None:
                    values[name] = dict(values[name])
            view = object.__new__(cls)
            view.__dict__.update(values)
            views.append(view)
        return views

    def to_row(self) -> dict[str, Any]:
        """The ``data_file`` struct as :func:`write_manifest` takes it (maps as lists of
        key/value pairs); the inverse of :meth:`from_row`."""
        row: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, dict) and name != "partition":
                value = list(value.items())
            row[name] = value
        return row


@dataclass(frozen=True)
@checked
class ManifestEntry:
    status: int
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    data_file: DataFile

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ManifestEntry:
        return cls(
            status=row["status"],
            snapshot_id=row.get("snapshot_id"),
            sequence_number=row.get("sequence_number"),
            file_sequence_number=row.get("file_sequence_number"),
            data_file=DataFile.from_row(row.get("data_file") or {}),
        )


def manifest_files(table: pa.Table) -> list[ManifestFile]:
    """Views of a :func:`read_manifest_list` table's rows."""
    return [ManifestFile.from_row(row) for row in table.to_pylist()]


def manifest_entries(table: pa.Table) -> list[ManifestEntry]:
    """Views of a full :func:`read_manifest` table's rows."""
    return [ManifestEntry.from_row(row) for row in table.to_pylist()]
