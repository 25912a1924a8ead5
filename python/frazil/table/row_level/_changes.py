"""What updates and merges share: rows read with their lineage, values assigned to columns,
and the commit of a change in either mode (spec: "Row-level Deletes", "Row Lineage").

A change is, per data file, the positions of the rows it removes (deleted, or replaced by new
versions) and the new versions of updated rows, plus brand-new rows (a merge's inserts).

- merge-on-read: the removed positions become position deletes (v2) or deletion vectors (v3)
  and the new versions and inserts new data files, in one row delta validated as Spark's
  ``SparkPositionDeltaWrite``: the referenced files still exist, an update or merge also
  checks that the files it removes are live and that no conflicting delete file was added,
  and serializable isolation that no conflicting data file was added.
- copy-on-write: each changed file is written again, its kept rows and new versions in place
  (their order kept), inserts in new files, in one overwrite validated as Spark's
  ``CopyOnWriteOperation``: no conflicting delete file added, nor (serializable) data file.

On a v3 table every written row carries its lineage: a kept row its ``_row_id`` and
``_last_updated_sequence_number`` as they were (stored, or inherited from its file), an
updated row its ``_row_id`` and a null sequence number (the commit's, inherited), an inserted
row neither (new ids from the file's ``first_row_id``). A row whose new values equal its old
ones is not changed at all (spec: "Row Lineage": its ``_last_updated_sequence_number`` only
moves when the row is modified).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import _native
from frazil.errors import FrazilTypeError, InvalidValueError, ValidationError
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table import _metadata_columns as meta
from frazil.table._literals import literal_array
from frazil.table._properties import MERGE_ON_READ, row_level_mode
from frazil.table._row_filter import CompiledFilter, filter_columns
from frazil.table.row_level._deltas import PositionDeltas, stage_deletes
from frazil.table.snapshot._validation import SERIALIZABLE, isolation_level
from frazil.table.write._partition import source_column

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table.snapshot._merging import MergingProducer
    from frazil.table.transaction import Transaction

__all__ = [
    "ChangeSet",
    "WrittenChanges",
    "assigned_values",
    "filter_mask",
    "lineage_columns",
    "rows_changed",
    "storage_type",
    "type_kind",
    "with_lineage",
    "write_rows",
]

MERGE_ISOLATION = "write.merge.isolation-level"


def lineage_columns(metadata: TableMetadata) -> tuple[str, ...]:
    """The row lineage metadata columns rows are read and written with (v3 tables)."""
    return meta.ROW_LINEAGE if metadata.format_version >= 3 else ()


def filter_mask(compiled: CompiledFilter, batch: pa.RecordBatch, schema: Schema) -> pa.Array:
    """Which rows of ``batch`` (columns of ``schema``) the compiled filter keeps."""
    if compiled.always is not None:
        return pa.array([compiled.always] * batch.num_rows, pa.bool_())
    columns = [source_column(batch, schema, c.field_id) for c in compiled.columns]
    columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    mask = compiled.evaluate(filter_columns(compiled, columns))
    return mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask


def assigned_values(
    schema: Schema,
    column: str,
    value: Any,
    arrow_type: pa.DataType,
    length: int,
    source: pa.RecordBatch | pa.Table | None = None,
) -> pa.Array:
    """The values ``value`` assigns to ``column`` for ``length`` rows: a column reference
    (``frazil.expressions.col("other")``, read from ``source``) cast to the column's type, or
    a Python literal converted to it as a filter's literal is (``"2024-01-01"`` for a date,
    ``5`` for a double). A value that does not fit the column is an error naming both."""
    from frazil import expressions as ex
    from frazil.expressions.builder import Column

    if isinstance(value, Column | ex.Reference):
        name = value.name
        if source is None or name not in source.column_names:
            raise ValidationError(f"cannot assign {name!r} to {column!r}: no such column")
        values = source.column(name)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        given, wanted = type_kind(storage_type(values.type)), type_kind(storage_type(arrow_type))
        if given != wanted and not (given == "integer" and wanted in ("float", "decimal")):
            # Parsing strings into numbers (or the like) is a mistake, not an assignment.
            raise InvalidValueError(
                f"cannot assign column {name!r} ({values.type}) to {column!r} ({arrow_type})"
            )
        try:
            return values if values.type == arrow_type else values.cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
            raise InvalidValueError(
                f"cannot assign column {name!r} ({values.type}) to {column!r} ({arrow_type}): "
                f"{error}"
            ) from None
    if value is None:
        return pa.nulls(length, arrow_type)
    try:
        bound = ex.bind(ex.EqualTo(column, value), schema)
    except FrazilTypeError:
        raise
    except Exception as error:
        raise InvalidValueError(f"cannot assign {value!r} to column {column!r}: {error}") from None
    converted = getattr(bound, "value", None)
    if not isinstance(bound, ex.EqualTo) or converted is None:
        # The binder folds a value outside the column's range into a constant.
        raise InvalidValueError(
            f"cannot assign {value!r} to column {column!r}: it is not a value of the column's "
            f"type ({schema.find_field(schema.find_field_id(column) or -1)})"
        )
    one = literal_array(converted, arrow_type)
    return pa.repeat(one[0], length) if length != 1 else one


def type_kind(arrow_type: pa.DataType) -> str:
    """The family of an Arrow type whose members a key may be cast between."""
    t = arrow_type
    for name, test in (
        ("integer", pa.types.is_integer),
        ("float", pa.types.is_floating),
        ("decimal", pa.types.is_decimal),
        ("string", lambda x: pa.types.is_string(x) or pa.types.is_large_string(x)),
        ("binary", lambda x: pa.types.is_binary(x) or pa.types.is_large_binary(x)),
        ("date", pa.types.is_date),
        ("time", pa.types.is_time),
        ("timestamp", pa.types.is_timestamp),
    ):
        if test(t):
            return name
    # Nested types by the kinds of their members: Arrow's field names of list elements and map
    # entries ("item", "element", "entries") are not part of the Iceberg type.
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"list<{type_kind(storage_type(t.value_type))}>"
    if pa.types.is_map(t):
        return f"map<{type_kind(storage_type(t.key_type))}, {type_kind(storage_type(t.item_type))}>"
    if pa.types.is_struct(t):
        members = ", ".join(f"{f.name}: {type_kind(storage_type(f.type))}" for f in t)
        return f"struct<{members}>"
    return str(t)


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """An Arrow type without its extension (conditions and casts compare storage values)."""
    return arrow_type.storage_type if isinstance(arrow_type, pa.BaseExtensionType) else arrow_type


def rows_changed(old: Sequence[pa.Array], new: Sequence[pa.Array]) -> pa.Array:
    """Per row, whether any of the columns differs (nulls compared as values, NaN equal to
    NaN, -0.0 different from 0.0), in the Rust core."""
    if not old:
        return pa.array([], pa.bool_())
    result: pa.Array = _native.rows_differ(list(old), list(new))
    return result


def with_lineage(rows: pa.Table, lineage: tuple[str, ...], row_ids: pa.Array | None) -> pa.Table:
    """``rows`` (table columns only) with lineage columns: ``row_ids`` kept (None: new rows)
    and a null sequence number (the commit's)."""
    if not lineage:
        return rows
    n = rows.num_rows
    ids = pa.nulls(n, pa.int64()) if row_ids is None else row_ids
    rows = rows.append_column(meta.ROW_ID, ids)
    return rows.append_column(meta.LAST_UPDATED_SEQUENCE_NUMBER, pa.nulls(n, pa.int64()))


def write_rows(
    metadata: TableMetadata,
    io: FileIO,
    tables: Iterable[pa.Table],
    *,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[DataFile]:
    """Rows of a change (table columns, then the lineage columns on v3) written as data files
    of the table's default spec; a failed write deletes what it wrote."""
    from frazil.table.write import write_data_files

    lineage = lineage_columns(metadata)
    schema = _write_schema(metadata, lineage)
    reader = pa.RecordBatchReader.from_batches(
        schema, (b for t in tables for b in _conformed(t, schema).to_batches())
    )
    return list(
        write_data_files(
            metadata,
            io,
            reader,
            row_lineage=bool(lineage),
            partition_id=partition_id,
            task_id=task_id,
        )
    )


@dataclass
class WrittenChanges:
    """The files a change wrote, wherever it wrote them (here, or a Spark executor that hands
    them to the driver's :class:`ChangeSet` through :meth:`to_plain`): copy-on-write, each
    rewritten data file with the files replacing it; the new rows' data files; merge-on-read,
    the delete files (with their spec ids) and the data files they delete rows from."""

    rewritten: list[tuple[str, list[DataFile]]] = field(default_factory=list)
    added: list[DataFile] = field(default_factory=list)
    deletes: list[tuple[int, DataFile]] = field(default_factory=list)
    deleted_from: list[str] = field(default_factory=list)

    def paths(self) -> list[str]:
        """Every file written."""
        files = [f for _, new in self.rewritten for f in new]
        files += self.added
        files += [f for _, f in self.deletes]
        return [str(f.file_path) for f in files]

    def extend(self, other: WrittenChanges) -> None:
        self.rewritten.extend(other.rewritten)
        self.added.extend(other.added)
        self.deletes.extend(other.deletes)
        self.deleted_from.extend(other.deleted_from)

    def to_plain(self) -> dict[str, Any]:
        """Plain data (data file rows), for pickling across processes."""
        return {
            "rewritten": [(old, [f.to_row() for f in new]) for old, new in self.rewritten],
            "added": [f.to_row() for f in self.added],
            "deletes": [(spec_id, f.to_row()) for spec_id, f in self.deletes],
            "deleted_from": list(self.deleted_from),
        }

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> WrittenChanges:
        return cls(
            rewritten=[
                (old, [DataFile.from_row(r) for r in new]) for old, new in plain["rewritten"]
            ],
            added=[DataFile.from_row(r) for r in plain["added"]],
            deletes=[(spec_id, DataFile.from_row(r)) for spec_id, r in plain["deletes"]],
            deleted_from=list(plain["deleted_from"]),
        )


@dataclass
class ChangeSet:
    """The changes of one update or merge: :meth:`remove` rows by position, :meth:`rewrite`
    whole files (copy-on-write), :meth:`insert` rows (new ones, or updated rows' new
    versions); :meth:`write` writes what is pending and returns the files, wherever the change
    runs (a Spark executor too); :meth:`add_written` takes files written elsewhere; then
    :meth:`stage` commits them all as one snapshot."""

    metadata: TableMetadata
    io: FileIO
    mode: str
    deltas: PositionDeltas = field(init=False)
    new_rows: list[pa.Table] = field(default_factory=list)
    # Every file written so far (deleted by discard()).
    written: WrittenChanges = field(default_factory=WrittenChanges)
    # The planned task of each data file rows are deleted from (merge-on-read), by path.
    tasks: dict[str, Any] = field(default_factory=dict)
    removed_rows: int = 0

    def __post_init__(self) -> None:
        self.deltas = PositionDeltas(self.metadata, self.io)

    @property
    def merge_on_read(self) -> bool:
        return self.mode == MERGE_ON_READ

    @property
    def lineage(self) -> tuple[str, ...]:
        return lineage_columns(self.metadata)

    def remove(self, task: Any, positions: pa.Array) -> None:
        """Merge-on-read: delete these live rows of ``task``'s file."""
        self.deltas.add(task, positions)
        self.removed_rows += len(positions)

    def insert(self, rows: pa.Table, row_ids: pa.Array | None = None) -> None:
        """Rows to write as new data (table columns; ``row_ids``: the ids updated rows keep)."""
        if rows.num_rows:
            self.new_rows.append(with_lineage(rows, self.lineage, row_ids))

    def rewrite(
        self, data_file: str, rows: Iterable[pa.Table], *, partition_id: int = 0, task_id: int = 0
    ) -> None:
        """Copy-on-write: the data file ``data_file`` replaced by ``rows`` (table columns, then
        the lineage columns as read and as :func:`with_lineage` sets them), written now."""
        files = write_rows(self.metadata, self.io, rows, partition_id=partition_id, task_id=task_id)
        self.written.rewritten.append((str(data_file), files))

    def write(self, *, partition_id: int = 0, task_id: int = 0) -> WrittenChanges:
        """Writes what is pending (the delete files, the new rows) and returns every file the
        change has written so far."""
        if self.deltas:
            tasks = self.deltas.tasks
            deletes = self.deltas.write(partition_id=partition_id, task_id=task_id)
            self.written.deletes.extend(deletes)
            for task in tasks:
                path = str(task.file.file_path)
                self.tasks[path] = task
                self.written.deleted_from.append(path)
            self.deltas = PositionDeltas(self.metadata, self.io)
        if self.new_rows:
            rows, self.new_rows = self.new_rows, []
            self.written.added.extend(
                write_rows(self.metadata, self.io, rows, partition_id=partition_id, task_id=task_id)
            )
        return self.written

    def add_written(self, written: WrittenChanges, tasks: Mapping[str, Any]) -> None:
        """Files written elsewhere (a Spark executor's :meth:`write`), to stage with the rest;
        ``tasks``: the planned task of each data file their deletes apply to."""
        self.written.extend(written)
        for path in written.deleted_from:
            self.tasks[path] = tasks[path]

    def discard(self) -> None:
        """Delete what was written (the change is not committed)."""
        for path in self.written.paths():
            try:
                self.io.delete(path)
            except Exception:
                pass
        self.written = WrittenChanges()

    def stage(
        self,
        txn: Transaction,
        *,
        command: str,
        conflict_filter: Expression,
        isolation_property: str,
        branch: str | None,
        snapshot_properties: Mapping[str, str] | None,
        case_sensitive: bool,
    ) -> MergingProducer | None:
        """Write what is pending and stage the change in ``txn`` as one snapshot (None:
        nothing changed)."""
        from frazil.table.snapshot.overwrite import OverwriteFiles
        from frazil.table.snapshot.row_delta import RowDelta

        level = isolation_level(self.metadata.properties, isolation_property)
        producer: MergingProducer | None = None
        try:
            written = self.write()
            if self.merge_on_read:
                delta = RowDelta(
                    self.metadata,
                    self.io,
                    branch=branch,
                    snapshot_properties=snapshot_properties,
                    case_sensitive=case_sensitive,
                )
                producer = delta
                tasks = [self.tasks[p] for p in dict.fromkeys(written.deleted_from)]
                stage_deletes(delta, self.metadata, written.deletes, tasks)
                for file in written.added:
                    delta.add_rows(file, owned=True)
                if not delta.changes_anything:
                    return None
                delta.conflict_detection_filter(conflict_filter)
                if command in ("update", "merge"):
                    delta.validate_deleted_files()
                    delta.validate_no_conflicting_delete_files()
                if level == SERIALIZABLE:
                    delta.validate_no_conflicting_data_files()
            else:
                overwrite = OverwriteFiles(
                    self.metadata,
                    self.io,
                    branch=branch,
                    snapshot_properties=snapshot_properties,
                    case_sensitive=case_sensitive,
                    conflict_filter=conflict_filter,
                    isolation_property=isolation_property,
                )
                producer = overwrite
                for old, files in written.rewritten:
                    overwrite.delete_file(old)
                    for file in files:
                        overwrite.add_file(file, owned=True)
                for file in written.added:
                    overwrite.add_file(file, owned=True)
                if not (overwrite.adds_files or overwrite.deletes_files):
                    return None
            txn.add_change(producer)
        except BaseException:
            self.discard()
            if producer is not None:
                producer.cleanup(False)  # the delete files it owns
            raise
        return producer


def _conformed(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """``rows`` in the writer's schema; a null in a required column (a merge inserting or an
    update assigning one) is refused naming the column, before anything is committed."""
    for column in schema:
        if not column.nullable and rows.column(column.name).null_count:
            raise ValidationError(
                f"column {column.name!r} is required, but the change would write a null into it"
            )
    try:
        return rows.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
        raise InvalidValueError(
            f"the changed rows do not fit the table's columns: {error}"
        ) from None


def _write_schema(metadata: TableMetadata, lineage: tuple[str, ...]) -> pa.Schema:
    """The Arrow schema rows are handed to the writer in: the table's columns as the reader
    gives them to writers (uuids as 16 bytes), then the lineage columns."""
    from frazil.table.read import read_task_schema

    return read_task_schema(
        metadata.schema(), metadata_columns=lineage, uuid_type="fixed_size_binary"
    )


def mode_of(metadata: TableMetadata, key: str) -> str:
    """``write.update.mode`` / ``write.merge.mode`` (merge-on-read refused on v1 tables)."""
    from frazil.table.snapshot.api import require_row_level_deletes

    mode = row_level_mode(metadata.properties, key)
    if mode == MERGE_ON_READ:
        require_row_level_deletes(metadata, key)
    return mode


def batches_of(tables: Iterable[pa.Table]) -> Iterator[pa.RecordBatch]:
    for table in tables:
        yield from table.to_batches()
