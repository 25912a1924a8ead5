"""Removing orphan files: files under the table's location that no snapshot, metadata file or
statistics file references (Java's ``DeleteOrphanFilesSparkAction``).

Every file under the location is listed through the FileIO; the valid set is everything any
snapshot in the metadata reaches (manifest lists, manifests, live data and delete files), the
statistics and partition-statistics files, the current metadata file and those in the metadata
log, and ``metadata/version-hint.text``. Locations are compared normalized (see
:mod:`._locations`), so a live file is never deleted for being spelled differently. Only files
older than the cutoff (3 days by default) are removed: a younger one may belong to a commit in
progress. A file whose path is live but under another store (scheme, bucket) is a conflict and,
as in Java, refused by default. Hidden files and directories (a name starting with ``_`` or
``.``, such as Hadoop's ``.crc`` checksums) are not touched, except partition directories of a
field whose name starts so, and frazil's own temporary files.

frazil's FileIO writes a local file as ``.<name>.<pid>-<n>.tmp`` beside it and renames (or
links) it into place; a writer killed in between leaves the temporary file behind. Java skips
hidden files, so nothing else would ever remove these: files named exactly so (not other hidden
files) are orphans like any other, under the same age rule, which keeps the temporary file of
a writer still at work.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from frazil import _native
from frazil.errors import ValidationError
from frazil.table.maintenance._delete import DEFAULT_DELETE_THREADS, delete_all
from frazil.table.maintenance._locations import LocationSet, metadata_dir
from frazil.table.maintenance._reachable import (
    live_content_files,
    manifest_lists,
    statistics_files,
)

if TYPE_CHECKING:
    from frazil.io import FileInfo
    from frazil.metadata import TableMetadata
    from frazil.table._table import Table

__all__ = [
    "DEFAULT_ORPHAN_AGE_MS",
    "ListingRules",
    "check_prefix_mismatch_mode",
    "is_temp_file",
    "orphan_cutoff_ms",
    "reachable_metadata",
    "refuse_conflicts",
    "remove_orphan_files",
    "valid_files",
    "verdict",
]

DEFAULT_ORPHAN_AGE_MS = 3 * 24 * 60 * 60 * 1000
PrefixMismatchMode = Literal["error", "ignore", "delete"]
Verdict = Literal["keep", "orphan", "conflict"]
_LOG = logging.getLogger("frazil.maintenance")


def reachable_metadata(table: Table) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """Every location the table's metadata references except the data and delete files: the
    manifest lists and manifests of every snapshot, statistics files, the current and logged
    metadata files and ``version-hint.text``; and each distinct manifest's manifest-list row
    (what :func:`~._reachable.live_content_files` reads the data and delete files from)."""
    metadata = table.metadata
    found: set[str] = set()
    lists = manifest_lists(metadata.snapshots, table.io)
    found.update(s.manifest_list for s in metadata.snapshots if s.manifest_list)
    manifests = lists.rows
    found.update(manifests)
    found.update(statistics_files(metadata))
    if table.metadata_location:
        found.add(table.metadata_location)
    found.update(entry.metadata_file for entry in metadata.metadata_log)
    found.add(metadata_dir(metadata) + "/version-hint.text")
    return found, manifests


def valid_files(table: Table) -> set[str]:
    """Every location the table's metadata references, directly or through its snapshots."""
    found, manifests = reachable_metadata(table)
    found.update(live_content_files(manifests.values(), table.io))
    return found


def _hidden_partition_prefixes(metadata: TableMetadata) -> tuple[str, ...]:
    return tuple(
        f"{f.name}="
        for spec in metadata.partition_specs
        for f in spec.fields
        if f.name.startswith(("_", "."))
    )


# The temporary file name of src/io/local.rs (write_temp): ".{name}.{pid}-{n}.tmp".
_TEMP_FILE = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)-(?P<n>[0-9]+)\.tmp", re.DOTALL)


def is_temp_file(name: str) -> bool:
    """Whether the file name ``name`` is one of frazil's temporary files (see the module)."""
    return _TEMP_FILE.fullmatch(name) is not None


def _is_hidden(relative: str, partition_prefixes: tuple[str, ...]) -> bool:
    """Java's FileSystemWalker with its PartitionAwareHiddenPathFilter: a file is hidden when
    it, or a directory between it and the listed location, is named with a leading ``_`` or
    ``.`` and is not a partition directory of such a field. frazil's temporary files are not
    hidden (only their own name counts: one in a hidden directory stays hidden)."""
    *directories, file_name = relative.split("/")
    for name in directories:
        if name.startswith(("_", ".")) and not name.startswith(partition_prefixes):
            return True
    return (
        file_name.startswith(("_", "."))
        and not file_name.startswith(partition_prefixes)
        and not is_temp_file(file_name)
    )


def _relative(location: str, root: str) -> str:
    path = _native.parse_location(location)[3]
    base = _native.parse_location(root)[3].rstrip("/")
    return path[len(base) :].lstrip("/") if path.startswith(base) else path


def check_prefix_mismatch_mode(mode: str) -> None:
    if mode not in ("error", "ignore", "delete"):
        raise ValidationError(
            f"prefix_mismatch_mode must be 'error', 'ignore' or 'delete', got {mode!r}"
        )


def orphan_cutoff_ms(older_than: int | dt.datetime | None) -> int:
    """The age threshold: files last written before it may go (default three days ago)."""
    from frazil.table._table import timestamp_ms

    if older_than is None:
        return time.time_ns() // 1_000_000 - DEFAULT_ORPHAN_AGE_MS
    return timestamp_ms(older_than)


@dataclass(frozen=True)
class ListingRules:
    """Which listed files are candidates: not hidden (relative to ``root``) and last written
    before ``cutoff_ms``. Plain data, so that it can travel to where the listing runs."""

    root: str
    cutoff_ms: int
    partition_prefixes: tuple[str, ...]

    @classmethod
    def of(cls, metadata: TableMetadata, root: str, cutoff_ms: int) -> ListingRules:
        return cls(root, cutoff_ms, _hidden_partition_prefixes(metadata))

    def candidates(self, listed: Iterable[FileInfo]) -> tuple[list[str], int]:
        """The candidates among ``listed``, and how many files were kept for want of a
        modification time."""
        found = []
        unknown_age = 0
        for info in listed:
            if _is_hidden(_relative(info.location, self.root), self.partition_prefixes):
                continue
            if info.last_modified_ms is None:
                unknown_age += 1  # cannot prove it old enough: keep it
            elif info.last_modified_ms < self.cutoff_ms:
                found.append(info.location)
        return found, unknown_age


def warn_unknown_age(count: int) -> None:
    if count:
        _LOG.warning("kept %d files whose modification time the store did not give", count)


def verdict(referenced: bool, path_live: bool, mode: PrefixMismatchMode) -> Verdict:
    """What becomes of a candidate: kept when the table references it (under any spelling,
    see :mod:`._locations`); when only its path is live under another store (scheme,
    bucket), a conflict (``mode='error'``), kept (``'ignore'``) or an orphan (``'delete'``);
    else an orphan."""
    if referenced or (path_live and mode == "ignore"):
        return "keep"
    if path_live and mode == "error":
        return "conflict"
    return "orphan"


def refuse_conflicts(conflicts: Sequence[str]) -> None:
    """Java's refusal to decide about a file whose path is live under another store."""
    if conflicts:
        shown = ", ".join(conflicts[:5]) + (" ..." if len(conflicts) > 5 else "")
        raise ValidationError(
            f"{len(conflicts)} files have the path of a live file under another scheme or "
            f"bucket ({shown}): refusing to decide whether they are orphans; pass "
            "prefix_mismatch_mode='ignore' to keep them or 'delete' to delete them"
        )


def remove_orphan_files(
    table: Table,
    older_than: int | dt.datetime | None = None,
    dry_run: bool = False,
    location: str | None = None,
    *,
    prefix_mismatch_mode: PrefixMismatchMode = "error",
    delete_with: Callable[[str], None] | None = None,
    delete_threads: int = DEFAULT_DELETE_THREADS,
) -> list[str]:
    """Delete (or with ``dry_run`` only list) the files under ``location`` (the table's by
    default) that the table does not reference and that were last written before
    ``older_than`` (ms or datetime; default three days ago). Returns their locations, sorted,
    in the form the listing gave."""
    check_prefix_mismatch_mode(prefix_mismatch_mode)
    if table.catalog is not None:
        table.refresh()
    cutoff = orphan_cutoff_ms(older_than)
    root = location or table.location()
    rules = ListingRules.of(table.metadata, root, cutoff)
    candidates, unknown_age = rules.candidates(table.io.list(root))
    warn_unknown_age(unknown_age)
    valid = LocationSet(valid_files(table))
    orphans: list[str] = []
    conflicts: list[str] = []
    for candidate in candidates:
        referenced = candidate in valid
        path_live = not referenced and valid.has_path(candidate)
        outcome = verdict(referenced, path_live, prefix_mismatch_mode)
        if outcome == "orphan":
            orphans.append(candidate)
        elif outcome == "conflict":
            conflicts.append(candidate)
    refuse_conflicts(conflicts)
    orphans.sort()
    if not dry_run:
        delete_all(orphans, delete_with or table.io.delete, delete_threads)
    return orphans
