"""Removing delete files that apply to no live data file (Java's
``RemoveDanglingDeletesSparkAction``; spec: "Scan Planning" for which deletes apply).

A delete file is dangling when no live data file it could apply to remains:

- a deletion vector, or a file-scoped position delete file, whose data file is gone;
- a position delete file with no live data file of its partition (spec and tuple) that it
  can reach: one not newer than it (data <= delete) whose path lies within its ``file_path``
  bounds (a compaction that keeps its rewrite's data sequence number leaves old deletes at the
  new files' number, naming only the files rewritten);
- an equality delete file not newer than every live data file it could apply to (delete >
  data): those of its partition, or every live data file for a global one (an unpartitioned
  spec). Java 1.10.2 compares a global equality delete with the data files of its own
  (unpartitioned) spec only, so it drops one that still applies to data files of other specs:
  frazil follows the spec and keeps it.

They are removed in one ``replace`` snapshot, which validates that they are still there.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from frazil.io import FileIO, raw
from frazil.manifest import DataFile
from frazil.table._deletes import FILE_PATH_COLUMN, is_file_scoped, read_position_delete_rows
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    entry_files,
    live_entries,
    manifest_rows,
    partition_key,
    read_entries,
)

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["dangling_delete_files", "remove_dangling_deletes"]

POSITION_DELETES = 1
# The reserved field id of a position delete file's file_path column (spec "Position Delete
# Files").
FILE_PATH_ID = 2147483546
EQUALITY_DELETES = 2


def dangling_delete_files(table: Table) -> list[tuple[int, DataFile]]:
    """The dangling delete files of the current snapshot, with their spec ids."""
    metadata, io = table.metadata, table.io
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return []
    live_paths: set[str] = set()
    # Per partition, its live data files' paths and data sequence numbers.
    live_by_partition: dict[Hashable, list[tuple[str, int]]] = {}
    minimum: dict[Hashable, int] = {}
    overall: int | None = None
    deletes: list[tuple[int, DataFile, int]] = []
    for manifest in manifest_rows(snapshot, io):
        spec_id = int(manifest["partition_spec_id"])
        entries = live_entries(read_entries(manifest, io))
        if entries.num_rows == 0:
            continue
        sequences = entries.column("sequence_number").to_pylist()
        files = entry_files(entries)
        if int(manifest.get("content") or 0) == CONTENT_DATA:
            live_paths.update(pc.struct_field(entries.column("data_file"), "file_path").to_pylist())
            for file, sequence in zip(files, sequences, strict=True):
                key = partition_key(spec_id, file.partition)
                minimum[key] = min(minimum.get(key, sequence), sequence)
                live_by_partition.setdefault(key, []).append((str(file.file_path), sequence))
                overall = sequence if overall is None else min(overall, sequence)
            continue
        deletes.extend(
            (spec_id, file, sequence) for file, sequence in zip(files, sequences, strict=True)
        )
    out: list[tuple[int, DataFile]] = []
    for spec_id, file, sequence in deletes:
        spec = metadata.spec_by_id(spec_id)
        if file.content == POSITION_DELETES:
            if is_file_scoped(file):
                target = file.referenced_data_file or _path_bound(file)
                if target not in live_paths:
                    out.append((spec_id, file))
                    continue
            candidates = {
                path
                for path, data_sequence in live_by_partition.get(
                    partition_key(spec_id, file.partition), []
                )
                if data_sequence <= sequence and _within_path_bounds(file, path)
            }
            # Bounds only narrow it: the paths the file names decide.
            if not candidates or not candidates & _named_paths(io, file):
                out.append((spec_id, file))
        elif file.content == EQUALITY_DELETES:
            if spec is not None and spec.is_unpartitioned():
                floor = overall
            else:
                floor = minimum.get(partition_key(spec_id, file.partition))
            if floor is None or sequence <= floor:
                out.append((spec_id, file))
    return out


def _named_paths(io: FileIO, file: DataFile) -> set[str]:
    """The data file paths a position delete file names."""
    rows = read_position_delete_rows(
        str(file.file_path), raw(io), str(file.file_format).upper(), int(file.record_count or 0)
    )
    paths = rows.column(FILE_PATH_COLUMN)
    if pa.types.is_dictionary(paths.type):
        paths = paths.cast(pa.string())
    return {str(p) for p in pc.unique(paths).to_pylist()}


def _within_path_bounds(file: DataFile, path: str) -> bool:
    """Whether ``path`` lies within the delete file's ``file_path`` bounds (UTF-8 bytes order,
    spec "Appendix D"); without bounds any path may."""
    encoded = path.encode("utf-8")
    lower = (file.lower_bounds or {}).get(FILE_PATH_ID)
    upper = (file.upper_bounds or {}).get(FILE_PATH_ID)
    if lower is not None and encoded < lower:
        return False
    # An upper bound may be truncated: a path it is a prefix of is within it.
    return upper is None or encoded <= upper or encoded.startswith(upper)


def _path_bound(file: DataFile) -> str | None:
    lower = (file.lower_bounds or {}).get(FILE_PATH_ID)
    return None if lower is None else lower.decode("utf-8", "replace")


def remove_dangling_deletes(table: Table) -> list[DataFile]:
    """Remove the dangling delete files in one ``replace`` commit; returns them."""
    from frazil.table.snapshot.overwrite import RewriteFiles

    found = dangling_delete_files(table)
    if not found:
        return []
    producer = RewriteFiles(table.metadata, table.io)
    for _, file in found:
        producer.remove_delete(file)
    with table.transaction() as txn:
        txn.add_change(producer)
    return [file for _, file in found]
