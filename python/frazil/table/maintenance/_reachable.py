"""The files a set of snapshots reaches: manifest lists, manifests, and the data and delete
files their manifests hold live (spec: "Manifest Lists", "Manifests"; Java's
``ReachableFileUtil`` and ``ReachableFileCleanup``).

Manifest lists and manifests are read through the table's FileIO and decoded by the Rust
manifest reader (only the columns needed), each manifest once however many snapshots share it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from frazil.manifest import STATUS_DELETED, read_manifest_list, read_manifests
from frazil.snapshots import Snapshot

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.metadata import TableMetadata

__all__ = [
    "FileKind",
    "live_content_files",
    "manifest_lists",
    "manifests_of",
    "statistics_files",
    "unique_manifests",
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


def manifest_lists(
    snapshots: Iterable[Snapshot], io: FileIO, threads: int = _READ_THREADS
) -> dict[int, list[dict[str, Any]]]:
    """The manifest-list rows of each snapshot, by snapshot id, read in parallel (the reads
    release the GIL)."""
    todo = list(snapshots)
    if len(todo) <= 1:
        return {s.snapshot_id: manifests_of(s, io) for s in todo}
    with ThreadPoolExecutor(max_workers=min(threads, len(todo))) as pool:
        rows = pool.map(lambda s: manifests_of(s, io), todo)
        return {s.snapshot_id: r for s, r in zip(todo, rows, strict=True)}


def unique_manifests(
    lists: Iterable[list[dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """The manifests of several manifest lists, once each, by path."""
    found: dict[str, dict[str, Any]] = {}
    for rows in lists:
        for row in rows:
            found.setdefault(str(row["manifest_path"]), row)
    return found


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
