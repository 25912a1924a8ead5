"""Removing delete files that apply to no live data file (Java's
``RemoveDanglingDeletesSparkAction``; spec: "Scan Planning" for which deletes apply).

A delete file is dangling when no live data file it could apply to remains:

- a deletion vector, or a file-scoped position delete file, whose data file is gone;
- a position delete file older than every live data file of its partition (spec and tuple),
  whose data sequence numbers it must reach (delete >= data), or with none left there;
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

import pyarrow.compute as pc

from frazil.manifest import DataFile
from frazil.table._deletes import is_file_scoped
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
EQUALITY_DELETES = 2


def dangling_delete_files(table: Table) -> list[tuple[int, DataFile]]:
    """The dangling delete files of the current snapshot, with their spec ids."""
    metadata, io = table.metadata, table.io
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return []
    live_paths: set[str] = set()
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
            floor = minimum.get(partition_key(spec_id, file.partition))
            if floor is None or sequence < floor:
                out.append((spec_id, file))
        elif file.content == EQUALITY_DELETES:
            if spec is not None and spec.is_unpartitioned():
                floor = overall
            else:
                floor = minimum.get(partition_key(spec_id, file.partition))
            if floor is None or sequence <= floor:
                out.append((spec_id, file))
    return out


def _path_bound(file: DataFile) -> str | None:
    lower = (file.lower_bounds or {}).get(2147483546)
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
