"""Conflict checks run on every attempt of a commit that removes data (spec: "Commit Conflict
Resolution and Retry"; Java's ``MergingSnapshotProducer.validateAddedDataFiles``,
``validateNoNewDeleteFiles`` and ``validateNoNewDeletesForDataFiles``).

They look at the snapshots committed to the branch since the change was built (its starting
snapshot), at the files those snapshots added themselves, and at which of them a filter may
touch (the inclusive partition projection and metrics evaluators, in the Rust core).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_ADDED, STATUS_DELETED, DataFile, entries_table
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.snapshots import Operation, Snapshot
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    manifest_rows,
    partition_key,
    read_entries,
    spec_of,
)

if TYPE_CHECKING:
    from frazil.expressions import Expression

__all__ = [
    "SERIALIZABLE",
    "SNAPSHOT",
    "added_dvs",
    "check_no_new_data",
    "check_no_new_deletes",
    "describe",
    "isolation_level",
    "matching",
    "removed_since",
]

SERIALIZABLE = "serializable"
POSITION_DELETES = 1
EQUALITY_DELETES = 2
# The ``file_path`` column of position delete files (spec: "Position Delete Files").
DELETE_FILE_PATH_ID = 2147483546
SNAPSHOT = "snapshot"


def isolation_level(properties: Mapping[str, str], key: str) -> str:
    """``write.delete.isolation-level`` or ``write.update.isolation-level`` (Java's default:
    serializable)."""
    value = properties.get(key, SERIALIZABLE).strip().lower()
    if value not in (SERIALIZABLE, SNAPSHOT):
        raise InvalidUpdateError(
            f"table property {key} must be serializable or snapshot, got {value!r}"
        )
    return value


def matching(
    entries: pa.Table,
    filter_json: str,
    metadata: TableMetadata,
    spec_json: str,
    case_sensitive: bool,
) -> tuple[list[bool], list[bool]]:
    """For each entry: whether some row of its file may match the filter, and whether every
    row does (partition projections and metrics, see ``src/expr/visitors/file_match.rs``)."""
    if entries.num_rows == 0:
        return [], []
    result: tuple[list[bool], list[bool]] = _native.match_files(
        entries,
        filter_json,
        json.dumps(metadata.schema().to_json()),
        spec_json,
        case_sensitive,
    )
    return result


def _added_entries(
    staged: TableMetadata,
    history: list[Snapshot],
    operations: tuple[str, ...],
    data: bool,
    io: FileIO,
    status: int = STATUS_ADDED,
) -> Iterator[tuple[dict[str, Any], pa.Table]]:
    """The entries each snapshot of ``history`` with one of ``operations`` added itself (or,
    with ``status`` deleted, removed itself), per manifest (data or delete manifests)."""
    for snapshot in history:
        if snapshot.operation not in operations:
            continue
        for manifest in manifest_rows(snapshot, io):
            is_data = int(manifest.get("content") or 0) == CONTENT_DATA
            if is_data != data or manifest.get("added_snapshot_id") != snapshot.snapshot_id:
                continue
            entries = read_entries(manifest, io)
            added = pc.and_(
                pc.equal(entries.column("status"), status),
                pc.equal(entries.column("snapshot_id"), snapshot.snapshot_id),
            )
            yield manifest, entries.filter(pc.fill_null(added, False))


def added_data_files(
    staged: TableMetadata,
    history: list[Snapshot],
    operations: tuple[str, ...],
    io: FileIO,
    *,
    data: bool = True,
    status: int = STATUS_ADDED,
) -> Iterator[tuple[int, str, dict[str, Any] | None]]:
    """``(spec id, path, partition)`` of every data file the snapshots of ``history`` with
    one of ``operations`` added: what a partition-replacing commit checks against. With
    ``data`` false, the delete files they added; with ``status`` deleted, the files they
    removed."""
    for manifest, entries in _added_entries(staged, history, operations, data, io, status):
        spec_id = int(manifest["partition_spec_id"])
        files = entries.column("data_file")
        partitions = pc.struct_field(files, "partition").to_pylist()
        paths = pc.struct_field(files, "file_path").to_pylist()
        for path, partition in zip(paths, partitions, strict=True):
            yield spec_id, path, partition


def _conflicts(
    staged: TableMetadata,
    history: list[Snapshot],
    operations: tuple[str, ...],
    data: bool,
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
) -> list[str]:
    filter_json = json.dumps(row_filter.to_json())
    found: list[str] = []
    for manifest, entries in _added_entries(staged, history, operations, data, io):
        spec = spec_of(staged, int(manifest["partition_spec_id"]), "a concurrent commit")
        might, _ = matching(
            entries, filter_json, staged, json.dumps(spec.to_json()), case_sensitive
        )
        paths = pc.struct_field(entries.column("data_file"), "file_path").to_pylist()
        found.extend(p for p, hit in zip(paths, might, strict=True) if hit)
    return found


def describe(paths: list[str]) -> str:
    """At most five of ``paths``, and how many more."""
    shown = ", ".join(paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def removed_since(
    staged: TableMetadata,
    history: list[Snapshot],
    operations: tuple[str, ...],
    paths: set[str] | frozenset[str],
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
) -> list[str]:
    """Which of the data files ``paths`` the snapshots of ``history`` with one of
    ``operations`` removed, among those whose rows may match ``row_filter`` (Java's
    ``validateDataFilesExist``)."""
    filter_json = json.dumps(row_filter.to_json())
    found: list[str] = []
    for manifest, entries in _added_entries(
        staged, history, operations, True, io, status=STATUS_DELETED
    ):
        names = pc.struct_field(entries.column("data_file"), "file_path")
        wanted = entries.filter(pc.is_in(names, pa.array(sorted(paths), pa.string())))
        if wanted.num_rows == 0:
            continue
        spec = spec_of(staged, int(manifest["partition_spec_id"]), "a concurrent commit")
        might, _ = matching(wanted, filter_json, staged, json.dumps(spec.to_json()), case_sensitive)
        hits = pc.struct_field(wanted.column("data_file"), "file_path").to_pylist()
        found.extend(p for p, hit in zip(hits, might, strict=True) if hit)
    return sorted(set(found))


def added_dvs(
    staged: TableMetadata,
    history: list[Snapshot],
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
) -> list[str]:
    """The data files that deletion vectors added by the snapshots of ``history`` (``overwrite``,
    ``delete`` and ``replace``) reference, among those whose rows may match ``row_filter``
    (Java's ``validateAddedDVs``)."""
    operations = (Operation.OVERWRITE.value, Operation.DELETE.value, Operation.REPLACE.value)
    filter_json = json.dumps(row_filter.to_json())
    found: list[str] = []
    for manifest, entries in _added_entries(staged, history, operations, False, io):
        files = entries.column("data_file")
        is_dv = pc.equal(pc.utf8_upper(pc.struct_field(files, "file_format")), "PUFFIN")
        dvs = entries.filter(pc.fill_null(is_dv, False))
        if dvs.num_rows == 0:
            continue
        spec = spec_of(staged, int(manifest["partition_spec_id"]), "a concurrent commit")
        might, _ = matching(dvs, filter_json, staged, json.dumps(spec.to_json()), case_sensitive)
        targets = pc.struct_field(dvs.column("data_file"), "referenced_data_file").to_pylist()
        found.extend(t for t, hit in zip(targets, might, strict=True) if hit and t is not None)
    return found


def check_no_new_data(
    staged: TableMetadata,
    history: list[Snapshot],
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
) -> None:
    """Serializable isolation: no data file that may hold rows matching ``row_filter`` was
    added by the snapshots of ``history`` (Java's ``validateAddedDataFiles``)."""
    ops = (Operation.APPEND.value, Operation.OVERWRITE.value)
    found = _conflicts(staged, history, ops, True, row_filter, case_sensitive, io)
    if found:
        raise CommitValidationError(
            f"found conflicting files that can contain records matching {row_filter}: "
            f"{describe(found)} (added concurrently; serializable isolation)"
        )


def check_no_new_deletes(
    staged: TableMetadata,
    history: list[Snapshot],
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
    removed: Mapping[str, tuple[PartitionSpec, DataFile]] | None = None,
    *,
    ignore_equality_deletes: bool = False,
) -> None:
    """No delete file that may apply to rows matching ``row_filter``, or to one of the
    ``removed`` data files (path: its spec and file), was added by the snapshots of
    ``history`` (Java's ``validateNoNewDeleteFiles`` / ``validateNoNewDeletesForDataFiles``):
    removing or rewriting the data would resurrect the rows they delete.
    ``ignore_equality_deletes``: a rewrite whose new files keep the old data sequence number
    stays reachable by equality deletes added since (Java ignores those then)."""
    ops = (Operation.OVERWRITE.value, Operation.DELETE.value)
    found = _conflicts(staged, history, ops, False, row_filter, case_sensitive, io)
    if found:
        raise CommitValidationError(
            f"found new delete files that can apply to records matching {row_filter}: "
            f"{describe(sorted(set(found)))} (added concurrently)"
        )
    if removed and staged.format_version >= 2:
        conflicts = _deletes_for_files(staged, history, ops, removed, io)
        if ignore_equality_deletes:
            conflicts = [c for c in conflicts if not c.startswith("equality deletes ")]
        if conflicts:
            raise CommitValidationError(
                "cannot commit: found new deletes for data files this commit removes "
                f"(added concurrently): {describe(conflicts)}"
            )


def _deletes_for_files(
    staged: TableMetadata,
    history: list[Snapshot],
    operations: tuple[str, ...],
    removed: Mapping[str, tuple[PartitionSpec, DataFile]],
    io: FileIO,
) -> list[str]:
    """Which delete files added by ``history`` apply to a ``removed`` data file, as Java's
    ``DeleteFileIndex.forDataFile`` decides for a file older than all of them (spec: "Scan
    Planning"): a deletion vector or file-scoped position delete file to the data file it
    references; another position delete file to the files of its partition that its
    ``file_path`` bounds may cover; an equality delete file to the files of its partition, or
    to every file when its spec is unpartitioned (global), whose metrics may hold one of its
    keys (the planner's overlap test, in the Rust core)."""
    by_partition: dict[Hashable, list[str]] = {}
    for path, (spec, file) in removed.items():
        by_partition.setdefault(partition_key(spec.spec_id, file.partition), []).append(path)
    reach = _EqualityReach(staged, removed)
    out: list[str] = []
    for manifest, entries in _added_entries(staged, history, operations, False, io):
        spec_id = int(manifest["partition_spec_id"])
        spec = spec_of(staged, spec_id, "a concurrent delete manifest")
        reached = reach.of(manifest, spec, entries)
        for row, file in enumerate(entries.column("data_file").to_pylist()):
            path = file["file_path"]
            content = int(file["content"])
            if content == POSITION_DELETES:
                lower = _bound(file, "lower_bounds")
                upper = _bound(file, "upper_bounds")
                target = file.get("referenced_data_file")
                if target is None and lower is not None and lower == upper:
                    target = lower.decode("utf-8", "replace")
                if target is not None:
                    if target in removed:
                        kind = "deletion vector" if _is_dv(file) else "position deletes"
                        out.append(f"{kind} {path} for {target}")
                    continue
                key = partition_key(spec_id, file.get("partition"))
                hits = [
                    p
                    for p in by_partition.get(key, [])
                    if (lower is None or lower <= p.encode())
                    and (upper is None or p.encode() <= upper)
                ]
                out.extend(f"position deletes {path} for {p}" for p in hits)
            elif content == EQUALITY_DELETES:
                if spec.is_unpartitioned():
                    hits = list(removed)
                else:
                    hits = by_partition.get(partition_key(spec_id, file.get("partition")), [])
                out.extend(f"equality deletes {path} for {p}" for p in hits if p in reached[row])
    return out


class _EqualityReach:
    """Which of the removed data files each new equality delete file may reach by metrics
    (``_native.equality_delete_reach``); the removed files' entries are built once per
    spec."""

    def __init__(
        self, staged: TableMetadata, removed: Mapping[str, tuple[PartitionSpec, DataFile]]
    ) -> None:
        self._schema_json = json.dumps(staged.schema().to_json())
        by_spec: dict[int, tuple[PartitionSpec, list[DataFile]]] = {}
        for spec, file in removed.values():
            by_spec.setdefault(spec.spec_id, (spec, []))[1].append(file)
        self._data = [
            (
                json.dumps(spec.to_json()),
                [str(f.file_path) for f in files],
                entries_table(
                    [{"status": STATUS_ADDED, "data_file": f.to_row()} for f in files],
                    spec=spec.to_json(),
                    schema=self._schema_json,
                ),
            )
            for spec, files in by_spec.values()
        ]

    def of(
        self, manifest: Mapping[str, Any], spec: PartitionSpec, entries: pa.Table
    ) -> list[set[str]]:
        """For each entry of the delete manifest ``manifest``, the removed paths it may
        reach (empty for entries that are not equality deletes)."""
        out: list[set[str]] = [set() for _ in range(entries.num_rows)]
        has_equality = pc.any(
            pc.equal(pc.struct_field(entries.column("data_file"), "content"), EQUALITY_DELETES)
        ).as_py()
        if not has_equality:
            return out
        spec_json = json.dumps(spec.to_json())
        for data_spec_json, paths, data_entries in self._data:
            reached = _native.equality_delete_reach(
                self._schema_json,
                data_entries,
                data_spec_json,
                entries,
                spec_json,
                str(manifest["manifest_path"]),
            )
            for row, positions in enumerate(reached):
                out[row].update(paths[i] for i in positions)
        return out


def _bound(file: Mapping[str, Any], column: str) -> bytes | None:
    bounds = file.get(column) or []
    for key, value in bounds.items() if isinstance(bounds, dict) else bounds:
        if key == DELETE_FILE_PATH_ID:
            return bytes(value)
    return None


def _is_dv(file: Mapping[str, Any]) -> bool:
    return str(file.get("file_format") or "").upper() == "PUFFIN"
