"""Cherry-picking a snapshot onto a branch (Java's ``CherryPickOperation``): when the picked
snapshot's parent is the branch head, the branch simply moves to it (fast-forward); otherwise
an ``append`` snapshot's added files are appended again in a new snapshot whose summary names
the source (``source-snapshot-id``, and ``published-wap-id`` for a staged WAP snapshot)."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow.compute as pc

from frazil.errors import InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_ADDED
from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, SnapshotRef
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    entry_files,
    latest_snapshot,
    manifest_rows,
    read_entries,
)
from frazil.table.snapshot._merging import MergingProducer
from frazil.table.updates import SetSnapshotRef, TableUpdate

__all__ = ["CherryPick"]


class CherryPick(MergingProducer):
    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        snapshot_id: int,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(metadata, io, branch=branch, snapshot_properties=snapshot_properties)
        picked = metadata.snapshot_by_id(snapshot_id)
        if picked is None:
            raise InvalidUpdateError(f"cannot cherry-pick unknown snapshot {snapshot_id}")
        self.picked = picked
        if picked.operation != Operation.APPEND.value:
            raise InvalidUpdateError(
                f"cannot cherry-pick snapshot {snapshot_id}: its operation is "
                f"{picked.operation!r}; only appends can be cherry-picked"
            )
        for manifest in manifest_rows(picked, io):
            if int(manifest.get("content") or 0) != CONTENT_DATA:
                continue
            if manifest.get("added_snapshot_id") != snapshot_id:
                continue
            entries = read_entries(manifest, io)
            added = pc.and_(
                pc.equal(entries.column("status"), STATUS_ADDED),
                pc.equal(entries.column("snapshot_id"), snapshot_id),
            )
            for file in entry_files(entries.filter(pc.fill_null(added, False))):
                self.add_file(file, int(manifest["partition_spec_id"]))
        self.snapshot_properties.setdefault("source-snapshot-id", str(snapshot_id))
        wap_id = (picked.summary or {}).get("wap.id")
        if wap_id is not None:
            self.snapshot_properties.setdefault("published-wap-id", wap_id)

    @property
    def operation(self) -> str:
        return Operation.APPEND.value

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        head = latest_snapshot(staged, self.branch)
        head_id = None if head is None else head.snapshot_id
        if self.picked.parent_snapshot_id == head_id:
            ref = staged.ref(self.branch)
            new_ref = (
                SnapshotRef.branch(self.picked.snapshot_id)
                if ref is None
                else SnapshotRef(
                    self.picked.snapshot_id,
                    ref.type,
                    ref.min_snapshots_to_keep,
                    ref.max_snapshot_age_ms,
                    ref.max_ref_age_ms,
                )
            )
            self._committed_manifests = frozenset()
            return (SetSnapshotRef.of(self.branch, new_ref),)
        return super().updates_for(staged)
