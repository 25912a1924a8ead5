"""The files a set of snapshots reaches: manifest lists, manifests, and the data and delete
files their manifests hold live (spec: "Manifest Lists", "Manifests"; Java's
``ReachableFileUtil`` and ``ReachableFileCleanup``).

Manifest lists and manifests are read through the table's FileIO and decoded by the Rust
manifest reader (only the columns needed), each manifest once however many snapshots share it
(Java's ``ReachableFileCleanup`` reads each manifest list with a projection too).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.manifest import STATUS_DELETED, read_manifest_list, read_manifests
from frazil.snapshots import Snapshot

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata

__all__ = [
    "FileKind",
    "ManifestLists",
    "live_content_files",
    "manifest_lists",
    "manifests_of",
    "statistics_files",
]

_READ_THREADS = 16
_ENTRY_COLUMNS = ("status", "data_file.content", "data_file.file_path")


class FileKind(str, enum.Enum):
    """What a table file is, with Java's ExpireSnapshots result counts in mind."""

    DATA = "data"
    POSITION_DELETES = "position-deletes"
    EQUALITY_DELETES = "equality-deletes"
    MANIFEST = "manifest"
    MANIFEST_LIST = "manifest-list"
    STATISTICS = "statistics"

    def __str__(self) -> str:
        return self.value


_CONTENT_KINDS = {0: FileKind.DATA, 1: FileKind.POSITION_DELETES, 2: FileKind.EQUALITY_DELETES}


def manifests_of(snapshot: Snapshot, io: FileIO) -> list[dict[str, Any]]:
    """``snapshot``'s manifest-list rows (``manifest_path``, ``content``, ...). A v1 snapshot
    that embeds its manifests (no manifest list) gives rows with the path only; its manifests
    carry their entries' snapshot ids themselves (spec: Appendix E)."""
    if snapshot.manifest_list is None:
        return [{"manifest_path": path} for path in snapshot.manifests or ()]
    rows: list[dict[str, Any]] = read_manifest_list(snapshot.manifest_list, io=io).to_pylist()
    return rows


# What the reachability walk needs of a manifest-list row: the path, and what its entries
# inherit (spec: "Sequence Number Inheritance", "First Row ID Inheritance").
_LIST_COLUMNS = ("manifest_path", "added_snapshot_id", "sequence_number", "first_row_id")


@dataclass(frozen=True)
class ManifestLists:
    """The manifests of several snapshots: each snapshot's manifest paths (by snapshot id),
    and each distinct manifest's manifest-list row once (by path; the columns of
    ``_LIST_COLUMNS`` the list has)."""

    paths: dict[int, list[str]]
    rows: dict[str, dict[str, Any]]

    def unique(self, snapshots: Iterable[Snapshot]) -> dict[str, dict[str, Any]]:
        """The manifests of ``snapshots``, once each, by path (in first-seen order)."""
        found: dict[str, dict[str, Any]] = {}
        for snapshot in snapshots:
            for path in self.paths[snapshot.snapshot_id]:
                if path not in found:
                    found[path] = self.rows[path]
        return found


def _read_list(snapshot: Snapshot, io: FileIO) -> tuple[list[str], pa.Table | None]:
    if snapshot.manifest_list is None:
        return [str(p) for p in snapshot.manifests or ()], None
    table = read_manifest_list(snapshot.manifest_list, io=io)
    table = table.select([c for c in _LIST_COLUMNS if c in table.schema.names])
    paths: list[str] = table.column("manifest_path").to_pylist()
    return paths, table


def manifest_lists(
    snapshots: Iterable[Snapshot], io: FileIO, threads: int = _READ_THREADS
) -> ManifestLists:
    """The manifest lists of ``snapshots``, read in parallel (the reads release the GIL); only
    the first row of each distinct manifest is turned into a dict (a long history lists the
    same manifests again and again)."""
    todo = list(snapshots)
    if len(todo) <= 1:
        read = [_read_list(s, io) for s in todo]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(todo))) as pool:
            read = list(pool.map(lambda s: _read_list(s, io), todo))
    paths: dict[int, list[str]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for snapshot, (manifest_paths, table) in zip(todo, read, strict=True):
        paths[snapshot.snapshot_id] = manifest_paths
        new = [i for i, path in enumerate(manifest_paths) if path not in rows]
        if not new:
            continue
        if table is None:  # a v1 snapshot that embeds its manifests (spec: Appendix E)
            fresh = [{"manifest_path": manifest_paths[i]} for i in new]
        else:
            fresh = table.take(new).to_pylist()
        for row in fresh:
            rows.setdefault(str(row["manifest_path"]), row)
    return ManifestLists(paths, rows)


def live_content_files(manifests: Iterable[Mapping[str, Any]], io: FileIO) -> dict[str, FileKind]:
    """The data and delete files the ``manifests`` (manifest-list rows) hold live, each with
    its kind. Java's ``ManifestFiles.readPaths`` reads live entries only: a DELETED entry's file
    is live in an earlier manifest, which decides for it."""
    rows = list(manifests)
    found: dict[str, FileKind] = {}
    if not rows:
        return found
    for table in read_manifests(rows, columns=list(_ENTRY_COLUMNS), io=io):
        statuses = table.column("status").to_pylist()
        data_file = table.column("data_file").combine_chunks()
        contents = data_file.field("content").to_pylist()
        paths = data_file.field("file_path").to_pylist()
        for status, content, path in zip(statuses, contents, paths, strict=True):
            if status != STATUS_DELETED:
                found.setdefault(path, _CONTENT_KINDS.get(content or 0, FileKind.DATA))
    return found


def statistics_files(metadata: TableMetadata) -> set[str]:
    """Every statistics and partition-statistics file the metadata lists."""
    return {s.statistics_path for s in metadata.statistics} | {
        s.statistics_path for s in metadata.partition_statistics
    }
