"""Conflict checks run on every attempt of a commit that removes data (spec: "Commit Conflict
Resolution and Retry"; Java's ``MergingSnapshotProducer.validateAddedDataFiles``,
``validateNoNewDeleteFiles`` and ``validateNoNewDeletesForDataFiles``).

They look at the snapshots committed to the branch since the change was built (its starting
snapshot), at the files those snapshots added themselves, and at which of them a filter may
touch (the inclusive partition projection and metrics evaluators, in the Rust core).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_ADDED
from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, Snapshot
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    manifest_rows,
    read_entries,
    spec_of,
)

if TYPE_CHECKING:
    from frazil.expressions import Expression

__all__ = [
    "SERIALIZABLE",
    "SNAPSHOT",
    "check_no_new_data",
    "check_no_new_deletes",
    "isolation_level",
    "matching",
]

SERIALIZABLE = "serializable"
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
) -> Iterator[tuple[dict[str, Any], pa.Table]]:
    """The entries each snapshot of ``history`` with one of ``operations`` added itself, per
    manifest (data or delete manifests)."""
    for snapshot in history:
        if snapshot.operation not in operations:
            continue
        for manifest in manifest_rows(snapshot, io):
            is_data = int(manifest.get("content") or 0) == CONTENT_DATA
            if is_data != data or manifest.get("added_snapshot_id") != snapshot.snapshot_id:
                continue
            entries = read_entries(manifest, io)
            added = pc.and_(
                pc.equal(entries.column("status"), STATUS_ADDED),
                pc.equal(entries.column("snapshot_id"), snapshot.snapshot_id),
            )
            yield manifest, entries.filter(pc.fill_null(added, False))


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


def _describe(paths: list[str]) -> str:
    shown = ", ".join(paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


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
            f"{_describe(found)} (added concurrently; serializable isolation)"
        )


def check_no_new_deletes(
    staged: TableMetadata,
    history: list[Snapshot],
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
    removed_paths: frozenset[str] = frozenset(),
) -> None:
    """No delete file that may apply to rows matching ``row_filter``, or that references one
    of ``removed_paths``, was added by the snapshots of ``history`` (Java's
    ``validateNoNewDeleteFiles`` / ``validateNoNewDeletesForDataFiles``): removing or
    rewriting the data would resurrect the rows they delete."""
    ops = (Operation.OVERWRITE.value, Operation.DELETE.value)
    found = _conflicts(staged, history, ops, False, row_filter, case_sensitive, io)
    if removed_paths:
        for _, entries in _added_entries(staged, history, ops, False, io):
            files = entries.column("data_file")
            refs = pc.struct_field(files, "referenced_data_file").to_pylist()
            paths = pc.struct_field(files, "file_path").to_pylist()
            found.extend(p for p, r in zip(paths, refs, strict=True) if r in removed_paths)
    if found:
        raise CommitValidationError(
            f"found new delete files that apply to data this commit removes: "
            f"{_describe(sorted(set(found)))} (added concurrently)"
        )
