"""Which rows of a branch head a filter (or a set of keys) touches: the live data files
whose every row matches (dropped whole), and the planned tasks of the files some rows of which
may match, read with their delete files applied and their rows' positions (spec: "Scan
Planning", ``_pos``: "Reserved Field IDs").

The strict and inclusive evaluators (Rust core) decide from partitions and metrics; the
positions come from frazil's reader (:func:`frazil.table.read.read_task`), the filter tested
on the rows with three-valued logic, the file's existing position, vector and equality deletes
already applied."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from frazil._threads import threads
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table import _metadata_columns as meta
from frazil.table._row_filter import CompiledFilter

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.io import FileIO

__all__ = ["Touched", "in_parallel", "live_positions", "read_rows", "touched_files"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Touched:
    """The live files of a head a filter touches: ``whole`` (every row matches, from
    partitions and metrics) and ``tasks`` (planned tasks of the files some of whose rows may
    match, each with its delete files)."""

    whole: list[DataFile]
    tasks: list[Any]


def touched_files(
    metadata: TableMetadata,
    io: FileIO,
    head: Snapshot | None,
    row_filter: Expression,
    case_sensitive: bool,
    *,
    whole_files: bool = True,
) -> Touched:
    """The files of ``head`` that ``row_filter`` touches. With ``whole_files`` false every
    touched file is a task (a caller that needs each row, e.g. to rewrite it)."""
    from frazil.table._table import Table
    from frazil.table.scan import DataScan
    from frazil.table.snapshot._rewrite import touched_data_files

    if head is None:
        return Touched([], [])
    whole, partial = touched_data_files(metadata, head, row_filter, case_sensitive, io)
    if not whole_files:
        partial = [*whole, *partial]
        whole = []
    wanted = {str(f.file_path) for f in partial}
    tasks: list[Any] = []
    if wanted:
        table = Table(metadata, io=io)
        # Planned without the filter: a planner leaves out the delete files whose rows cannot
        # match it (equality deletes of other keys), and a change that keeps or rewrites the
        # file's other rows needs every delete that applies to them. The callers test the
        # filter on the rows themselves.
        scan = DataScan(table, snapshot_id=head.snapshot_id, _table_schema=True)
        tasks = [t for t in scan.plan_files() if t.file.file_path in wanted]
    return Touched(whole, tasks)


def read_rows(
    metadata: TableMetadata,
    io: FileIO,
    task: Any,
    projected: Schema | None,
    metadata_columns: Sequence[str],
    *,
    apply_residual: bool,
) -> Iterator[pa.RecordBatch]:
    """The live rows of ``task`` (deletes applied), projected to ``projected`` (None: every
    column) with ``metadata_columns`` after them, uuids as their 16 bytes (the writer's
    form); with ``apply_residual`` only those the task's residual matches."""
    from frazil.table.read import read_task, verify_checksums

    return read_task(
        task,
        metadata.schema(),
        projected,
        specs=metadata.specs_by_id,
        io=io,
        name_mapping=metadata.name_mapping(),
        apply_residual=apply_residual,
        schemas=metadata.schemas,
        metadata_columns=tuple(metadata_columns),
        verify_checksums=verify_checksums(metadata.properties),
        uuid_type="fixed_size_binary",
    )


def filter_schema(schema: Schema, compiled: CompiledFilter) -> Schema:
    """The top-level columns of ``schema`` holding the columns the filter reads."""
    wanted: set[int] = set()
    for column in compiled.columns:
        parents = schema.parent_ids(column.field_id)
        wanted.add(parents[0] if parents else column.field_id)
    return Schema(*(f for f in schema.fields if f.field_id in wanted), schema_id=schema.schema_id)


def live_positions(
    metadata: TableMetadata, io: FileIO, task: Any, compiled: CompiledFilter
) -> pa.Array:
    """The positions of the rows of ``task``'s file that the compiled filter matches and no
    delete deletes (int64, ascending): only the filter's columns are read."""
    from frazil.table.row_level._changes import filter_mask

    schema = metadata.schema()
    batches = read_rows(
        metadata, io, task, filter_schema(schema, compiled), (meta.POS,), apply_residual=False
    )
    chunks = []
    for batch in batches:
        if batch.num_rows:
            chunks.append(batch.column(meta.POS).filter(filter_mask(compiled, batch, schema)))
    if not chunks:
        return pa.array([], pa.int64())
    return pa.concat_arrays(chunks) if len(chunks) > 1 else chunks[0]


def in_parallel(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``function`` over ``items`` on frazil's thread count (the reader and pyarrow release
    the GIL), results in order; the first failure is raised."""
    if len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(threads(), len(items))) as pool:
        return list(pool.map(function, items))
