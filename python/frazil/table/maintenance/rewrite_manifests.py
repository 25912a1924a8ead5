"""Rewriting manifests: the live entries of the current snapshot's data manifests, clustered by
partition spec and partition, into manifests of about ``commit.manifest.target-size-bytes``
(spec: "Manifests"; Java's ``BaseRewriteManifests`` and Spark's ``RewriteManifestsSparkAction``).

The result is a ``replace`` snapshot on ``main``: entries are rewritten as EXISTING with their
snapshot ids and data and file sequence numbers, so the table's rows, and which deletes apply
to them, stay exactly as they were. Delete manifests are kept as they are (Java's core
``RewriteManifests`` does the same). The summary carries Java's ``manifests-created``,
``manifests-replaced``, ``manifests-kept`` and ``entries-processed`` and the parent's totals.

On a lost race the rewrite is retried on the new current snapshot: when every manifest it
replaced is still there (another writer appended), the manifests it wrote are reused and the
newcomers kept; otherwise it rewrites again. Files written for attempts that did not land are
deleted at the end.
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import CommitValidationError, ValidationError
from frazil.manifest import (
    STATUS_DELETED,
    STATUS_EXISTING,
    read_manifests,
    write_manifest,
    write_manifest_list,
)
from frazil.metadata import TableMetadata
from frazil.snapshots import MAIN_BRANCH, Operation, Snapshot, SnapshotRef
from frazil.table.maintenance._locations import metadata_dir
from frazil.table.maintenance._reachable import manifests_of
from frazil.table.snapshot.producer import new_snapshot_id
from frazil.table.transaction import PendingChange, Transaction
from frazil.table.updates import AddSnapshot, SetSnapshotRef, TableUpdate

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["RewriteManifestsResult", "rewrite_manifests"]

TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
TARGET_SIZE_BYTES_DEFAULT = 8 * 1024 * 1024
DATA_MANIFEST = 0
_TOTALS = (
    "total-data-files",
    "total-delete-files",
    "total-records",
    "total-files-size",
    "total-position-deletes",
    "total-equality-deletes",
)


@dataclass(frozen=True)
class RewriteManifestsResult:
    """The manifests replaced and written, and the ``replace`` snapshot (None when the table
    had no data manifest to rewrite, and nothing was committed)."""

    snapshot_id: int | None
    rewritten_manifests: tuple[str, ...]
    added_manifests: tuple[str, ...]
    entries_processed: int


def _target_size(metadata: TableMetadata) -> int:
    value = metadata.properties.get(TARGET_SIZE_BYTES)
    if value is None:
        return TARGET_SIZE_BYTES_DEFAULT
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size <= 0:
        raise ValidationError(
            f"table property {TARGET_SIZE_BYTES} must be a positive int: {value!r}"
        )
    return size


def _sorted_by_partition(entries: pa.Table) -> pa.Table:
    """Entries ordered by their partition tuple (field by field, nulls last), so that
    consecutive manifests cover disjoint partition ranges."""
    partition = entries.column("data_file").combine_chunks().field("partition")
    if not isinstance(partition.type, pa.StructType) or partition.type.num_fields == 0:
        return entries
    keys = {f"_p{i}": partition.field(i) for i in range(partition.type.num_fields)}
    keyed = entries
    for name, column in keys.items():
        keyed = keyed.append_column(name, column)
    order = pc.sort_indices(keyed, sort_keys=[(name, "ascending") for name in keys])
    return entries.take(order)


class _Rewrite(PendingChange):
    def __init__(self, table: Table) -> None:
        self._table = table
        self._commit_uuid = uuid.uuid4()
        self._attempt = 0
        self._written: list[str] = []
        self._replaced: set[str] = set()
        self._new_rows: list[dict[str, Any]] = []
        self.entries_processed = 0
        self.snapshot_id: int | None = None
        self.kept = 0
        self._manifest_count = 0
        # The updates of the last attempt and what they were built on: the transaction asks
        # twice for the same base (once when the change is added, once to commit).
        self._last: tuple[tuple[int, int, int | None], tuple[TableUpdate, ...]] | None = None

    # --- writing ------------------------------------------------------------------------------

    def _new_manifest_location(self, metadata: TableMetadata) -> str:
        self._manifest_count += 1
        return f"{metadata_dir(metadata)}/{self._commit_uuid}-m{self._manifest_count - 1}.avro"

    def _rewrite(
        self, metadata: TableMetadata, data_manifests: Sequence[Mapping[str, Any]], snapshot_id: int
    ) -> None:
        io = self._table.io
        target = _target_size(metadata)
        self._replaced = {str(row["manifest_path"]) for row in data_manifests}
        self._new_rows = []
        self.entries_processed = 0
        by_spec: dict[int, list[Mapping[str, Any]]] = {}
        for row in data_manifests:
            by_spec.setdefault(int(row["partition_spec_id"]), []).append(row)
        schema_json = metadata.schema().to_json()
        for spec_id in sorted(by_spec):
            rows = by_spec[spec_id]
            spec = metadata.spec_by_id(spec_id)
            if spec is None:
                raise ValidationError(
                    f"manifest {rows[0]['manifest_path']} names partition spec {spec_id}, "
                    "which the table lacks"
                )
            # Sequence numbers and snapshot ids come out inherited, so that the EXISTING
            # entries written below carry them explicitly (spec: Sequence Number Inheritance).
            tables = [t for t in read_manifests(rows, io=io) if t.num_rows]
            if not tables:
                continue
            entries = pa.concat_tables(tables, promote_options="permissive")
            entries = entries.filter(pc.not_equal(entries.column("status"), STATUS_DELETED))
            if entries.num_rows == 0:
                continue
            entries = entries.set_column(
                entries.schema.get_field_index("status"),
                "status",
                pa.array([STATUS_EXISTING] * entries.num_rows, entries.schema.field("status").type),
            )
            entries = _sorted_by_partition(entries)
            self.entries_processed += entries.num_rows
            # The size of a manifest is about proportional to its entries: estimate it from
            # the manifests being replaced.
            total_bytes = sum(int(r["manifest_length"]) for r in rows)
            total_entries = sum(t.num_rows for t in tables)
            per_entry = max(1.0, total_bytes / max(1, total_entries))
            count = max(1, math.ceil(per_entry * entries.num_rows / target))
            chunk = math.ceil(entries.num_rows / count)
            for start in range(0, entries.num_rows, chunk):
                location = self._new_manifest_location(metadata)
                self._written.append(location)
                row = write_manifest(
                    location,
                    entries.slice(start, chunk),
                    schema=schema_json,
                    spec=spec.to_json(),
                    spec_id=spec_id,
                    format_version=metadata.format_version,
                    snapshot_id=snapshot_id,
                    content="data",
                    io=io,
                )
                self._new_rows.append(row)

    # --- the change ---------------------------------------------------------------------------

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        current = staged.current_snapshot()
        if current is None:
            raise CommitValidationError("cannot rewrite manifests: the table has no snapshot")
        if current.manifest_list is None:
            raise CommitValidationError(
                f"cannot rewrite manifests: snapshot {current.snapshot_id} embeds its manifests "
                "(a v1 snapshot without a manifest list), which frazil does not rewrite"
            )
        built_on = (current.snapshot_id, staged.last_sequence_number, staged.next_row_id)
        if self._last is not None and self._last[0] == built_on:
            return self._last[1]
        io = self._table.io
        rows = manifests_of(current, io)
        paths = {str(r["manifest_path"]) for r in rows}
        snapshot_id = self.snapshot_id or new_snapshot_id(staged)
        if staged.snapshot_by_id(snapshot_id) is not None:
            snapshot_id = new_snapshot_id(staged)
        if not self._replaced or not self._replaced <= paths:
            data_manifests = [r for r in rows if r.get("content", DATA_MANIFEST) == DATA_MANIFEST]
            if not data_manifests:
                self.snapshot_id = None
                return ()
            self._rewrite(staged, data_manifests, snapshot_id)
        self.snapshot_id = snapshot_id
        kept = [r for r in rows if str(r["manifest_path"]) not in self._replaced]
        self.kept = len(kept)
        new_rows = [{**row, "added_snapshot_id": snapshot_id} for row in self._new_rows]

        self._attempt += 1
        sequence_number = staged.last_sequence_number + 1 if staged.format_version >= 2 else 0
        manifest_list = (
            f"{metadata_dir(staged)}/snap-{snapshot_id}-{self._attempt}-{self._commit_uuid}.avro"
        )
        self._written.append(manifest_list)
        next_row_id = write_manifest_list(
            manifest_list,
            [*new_rows, *kept],
            snapshot_id=snapshot_id,
            sequence_number=sequence_number,
            parent_snapshot_id=current.snapshot_id,
            format_version=staged.format_version,
            first_row_id=staged.next_row_id,
            io=io,
        )
        summary = {
            "operation": Operation.REPLACE.value,
            "manifests-created": str(len(new_rows)),
            "manifests-kept": str(len(kept)),
            "manifests-replaced": str(len(self._replaced)),
            "entries-processed": str(self.entries_processed),
        }
        parent_summary = current.summary or {}
        summary.update((k, parent_summary[k]) for k in _TOTALS if k in parent_summary)
        first_row_id = staged.next_row_id if staged.format_version >= 3 else None
        snapshot = Snapshot(
            snapshot_id=snapshot_id,
            parent_snapshot_id=current.snapshot_id,
            timestamp_ms=max(time.time_ns() // 1_000_000, staged.last_updated_ms),
            sequence_number=sequence_number,
            manifest_list=manifest_list,
            summary=summary,
            schema_id=staged.current_schema_id,
            first_row_id=first_row_id,
            added_rows=(
                None if first_row_id is None or next_row_id is None else next_row_id - first_row_id
            ),
        )
        main = staged.refs.get(MAIN_BRANCH) or SnapshotRef.branch(current.snapshot_id)
        updates = (
            AddSnapshot(snapshot),
            SetSnapshotRef.of(MAIN_BRANCH, dataclasses.replace(main, snapshot_id=snapshot_id)),
        )
        self._last = (built_on, updates)
        return updates

    def committed_files(self) -> set[str]:
        return {str(r["manifest_path"]) for r in self._new_rows}

    def cleanup(self, committed: bool) -> None:
        keep: set[str] = set()
        if committed and self.snapshot_id is not None:
            keep = self.committed_files()
            snapshot = self._table.metadata.snapshot_by_id(self.snapshot_id)
            if snapshot is not None and snapshot.manifest_list:
                keep.add(snapshot.manifest_list)
        for location in self._written:
            if location not in keep:
                self._table.io.delete(location)


def rewrite_manifests(table: Table) -> RewriteManifestsResult:
    """Rewrite the current snapshot's data manifests (see the module docs)."""
    if table.catalog is not None:
        table.refresh()
    change = _Rewrite(table)
    transaction = Transaction(table)
    transaction.add_change(change)
    transaction.commit_transaction()
    if change.snapshot_id is None:
        return RewriteManifestsResult(None, (), (), 0)
    return RewriteManifestsResult(
        change.snapshot_id,
        tuple(sorted(change._replaced)),
        tuple(str(r["manifest_path"]) for r in change._new_rows),
        change.entries_processed,
    )
