"""Compacting position deletes: ``rewrite_position_delete_files`` (Java's
``RewritePositionDeleteFilesSparkAction``; spec: "Position Delete Files", Puffin
"deletion-vector-v1").

The plan (:mod:`frazil.table.maintenance.rewrite_plan`) groups a partition's position delete
files; each group's rows are read, those for data files no longer live dropped (dangling), and
the rest written again: on a v2 table as position delete files of the partition, sorted and
rolled at the target size; on a v3 table as one deletion vector per data file (v2 files left
from before an upgrade converted, with the vector the file may have). The new files keep the
largest data sequence number of those they replace, so they reach the same data files. Each
commit is a ``replace`` that validates that the replaced files are still there and that no
vector was added since for a data file it writes one for.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.errors import CommitFailedError, CommitValidationError
from frazil.io import FileIO, raw
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.table._deletes import FILE_PATH_COLUMN, POS_COLUMN, read_position_delete_rows
from frazil.table.maintenance.rewrite_data_files import _progress
from frazil.table.maintenance.rewrite_plan import (
    PositionDeletesGroupRewriteResult,
    RewritePositionDeleteFilesOptions,
    RewritePositionDeleteFilesResult,
    RewritePositionDeletesGroup,
    commit_batches,
    plan_rewrite_position_delete_files,
)
from frazil.table.write import DeleteTarget, write_deletion_vectors, write_position_deletes

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table._table import Table

__all__ = ["rewrite_position_delete_files", "rewrite_position_group"]


def _positions(io: FileIO, file: Any) -> pa.Table:
    """A position delete file's (or deletion vector's) rows as ``file_path``, ``pos``."""
    if str(file.file_format).upper() == "PUFFIN":
        target = file.referenced_data_file
        index = _native.PositionDeleteIndex(target)
        index.read_deletion_vector(
            file.file_path,
            file.content_offset,
            file.content_size_in_bytes,
            record_count=file.record_count,
            referenced_data_file=target,
            io=raw(io),
        )
        positions = index.positions()
        return pa.table(
            {
                FILE_PATH_COLUMN: pa.array([target] * len(positions), pa.string()),
                POS_COLUMN: positions,
            }
        )
    rows = read_position_delete_rows(
        file.file_path, raw(io), str(file.file_format).upper(), file.record_count
    )
    paths = rows.column(FILE_PATH_COLUMN)
    if pa.types.is_dictionary(paths.type):
        paths = paths.cast(pa.string())
    return pa.table({FILE_PATH_COLUMN: paths, POS_COLUMN: rows.column(POS_COLUMN)})


def rewrite_position_group(
    metadata: TableMetadata,
    io: FileIO,
    group: RewritePositionDeletesGroup,
    operation_id: str | None = None,
    partition_id: int = 0,
) -> list[tuple[int, DataFile]]:
    """The group's live deletes written again (see the module docstring)."""
    if not group.files:
        return []
    rows = pa.concat_tables([_positions(io, f) for f in group.files])
    live = pc.is_in(
        rows.column(FILE_PATH_COLUMN), pa.array(sorted(group.live_data_paths), pa.string())
    )
    rows = rows.filter(pc.fill_null(live, False))
    first = group.files[0]
    by_path: dict[str, pa.Array] = {}
    for path in sorted(set(rows.column(FILE_PATH_COLUMN).to_pylist())):
        chosen = rows.filter(pc.equal(rows.column(FILE_PATH_COLUMN), path))
        by_path[path] = chosen.column(POS_COLUMN).combine_chunks()
    targets = [
        (DeleteTarget(path, first.spec_id, dict(first.partition or {})), positions)
        for path, positions in by_path.items()
    ]
    if not targets:
        return []
    if metadata.format_version >= 3:
        return write_deletion_vectors(
            metadata, io, targets, operation_id=operation_id, partition_id=partition_id
        )
    return write_position_deletes(
        metadata,
        io,
        targets,
        # A rewrite writes its partition's deletes together, rolled at the group's target.
        properties={
            "write.delete.granularity": "partition",
            "write.delete.target-file-size-bytes": str(group.max_output_file_size),
        },
        operation_id=operation_id,
        partition_id=partition_id,
    )


def _added_bytes(files: Sequence[tuple[int, DataFile]]) -> int:
    return sum(
        int(
            f.content_size_in_bytes
            if f.content_size_in_bytes is not None
            else f.file_size_in_bytes or 0
        )
        for _, f in files
    )


def rewrite_position_delete_files(
    table: Table,
    options: Mapping[str, object] | None = None,
    filter: Expression | str | None = None,  # Java's name
    *,
    case_sensitive: bool = False,
    progress: bool | None = None,
) -> RewritePositionDeleteFilesResult:
    """Compact ``table``'s position deletes (see the module docstring); returns Java's
    counts. ``options`` take Java's names (strings, or Python bools and ints)."""
    table.refresh()
    metadata = table.metadata
    parsed = RewritePositionDeleteFilesOptions.parse(options, metadata.properties)
    plan = plan_rewrite_position_delete_files(
        table, parsed, row_filter=filter, case_sensitive=case_sensitive
    )
    start = metadata.current_snapshot()
    results: list[PositionDeletesGroupRewriteResult] = []
    if start is None or not plan.groups:
        return RewritePositionDeleteFilesResult(())
    operation = str(uuid.uuid4())
    with _progress(progress, len(plan.groups)) as advance:
        for batch in commit_batches(plan, parsed):
            written = []
            for index, group in enumerate(batch, start=1):
                written.append(rewrite_position_group(metadata, table.io, group, operation, index))
                advance(1)
            try:
                _commit(table, start.snapshot_id, batch, written)
            except (CommitValidationError, CommitFailedError):
                if not parsed.partial_progress_enabled:
                    raise
                continue
            results.extend(
                PositionDeletesGroupRewriteResult.of(g, len(files), _added_bytes(files))
                for g, files in zip(batch, written, strict=True)
            )
    return RewritePositionDeleteFilesResult(tuple(results))


def _commit(
    table: Table,
    starting_snapshot_id: int,
    groups: Sequence[RewritePositionDeletesGroup],
    written: Sequence[Sequence[tuple[int, DataFile]]],
) -> None:
    from frazil.table.snapshot.overwrite import RewriteFiles

    table.refresh()
    producer = RewriteFiles(table.metadata, table.io)
    producer.starting_snapshot_id = starting_snapshot_id
    producer.delete_sequence_number = max(g.max_rewritten_data_sequence_number for g in groups)
    try:
        for group, files in zip(groups, written, strict=True):
            for old in group.files:
                producer.remove_delete(old)
            for spec_id, file in files:
                producer.add_delete(file, spec_id, owned=True)
    except BaseException:
        producer.cleanup(False)
        raise
    with table.transaction() as txn:
        try:
            txn.add_change(producer)
        except BaseException:
            producer.cleanup(False)
            raise
