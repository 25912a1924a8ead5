"""Cherry-picking a snapshot onto a branch (Java's ``CherryPickOperation``).

- When the picked snapshot's parent is the branch head, the branch simply moves to it
  (fast-forward, no new snapshot), whatever its operation.
- Otherwise an ``append`` is re-applied: its added files are appended again in a new snapshot.
- A dynamic partition overwrite (an ``overwrite`` whose summary has ``replace-partitions=true``)
  is re-applied too, when it was based on an ancestor of the branch head (or on an empty table)
  and none of the partitions it replaced gained files since its parent: its added files are
  added and the files it removed are removed again (they must still be live).
- Any other snapshot can only be fast-forwarded: refused otherwise, as Java refuses it.

The new snapshot has the picked one's operation and names it in ``source-snapshot-id`` (and
``published-wap-id`` for a staged WAP snapshot). Every attempt refuses a snapshot that is
already an ancestor of the branch head or was already picked onto it, and a WAP id already
published there.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import pyarrow.compute as pc

from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_ADDED, STATUS_DELETED
from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, Snapshot, SnapshotRef
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    entry_files,
    latest_snapshot,
    manifest_rows,
    read_entries,
)
from frazil.table.snapshot._merging import MergingProducer, partition_key
from frazil.table.snapshot._validation import added_data_files
from frazil.table.updates import SetSnapshotRef, TableUpdate

__all__ = ["REPLACE_PARTITIONS", "CherryPick"]

# Java's SnapshotSummary.REPLACE_PARTITIONS_PROP, set by a dynamic partition overwrite.
REPLACE_PARTITIONS = "replace-partitions"
_STAGED_WAP_ID = "wap.id"
_PUBLISHED_WAP_ID = "published-wap-id"
_SOURCE_SNAPSHOT_ID = "source-snapshot-id"
_ALL_OPERATIONS = tuple(op.value for op in Operation)


def _ancestors(metadata: TableMetadata, head: Snapshot | None) -> list[Snapshot]:
    out: list[Snapshot] = []
    seen: set[int] = set()
    while head is not None and head.snapshot_id not in seen:
        out.append(head)
        seen.add(head.snapshot_id)
        parent = head.parent_snapshot_id
        head = None if parent is None else metadata.snapshot_by_id(parent)
    return out


def _is_dynamic_overwrite(snapshot: Snapshot) -> bool:
    if snapshot.operation != Operation.OVERWRITE.value:
        return False
    return (snapshot.summary or {}).get(REPLACE_PARTITIONS, "false").strip().lower() == "true"


class CherryPick(MergingProducer):
    """Apply snapshot ``snapshot_id`` to ``branch`` (default main); see the module docs."""

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
        # The partitions a picked dynamic overwrite replaced (None for other operations).
        self._replaced: set[Hashable] | None = None
        self._require_fast_forward = False
        # Whether the last attempt was a fast-forward (nothing of this producer's committed).
        self._fast_forwarded = False
        head = latest_snapshot(metadata, self.branch)
        if picked.operation == Operation.APPEND.value:
            self._pick_changes(metadata, replace=False)
        elif _is_dynamic_overwrite(picked):
            parent_id = picked.parent_snapshot_id
            if parent_id is not None and parent_id not in self._ancestor_ids(metadata, head):
                raise InvalidUpdateError(
                    f"cannot cherry-pick overwrite snapshot {snapshot_id}: it is not based on an "
                    f"ancestor of branch {self.branch!r} (its parent {parent_id} is not one), so "
                    "the partitions it replaced may have changed in ways it cannot detect"
                )
            self._pick_changes(metadata, replace=True)
        elif not self._is_fast_forward(head):
            raise InvalidUpdateError(
                f"cannot cherry-pick snapshot {snapshot_id} (operation {picked.operation!r}): "
                "only appends and dynamic partition overwrites can be re-applied, and its "
                f"parent is not the head of branch {self.branch!r} (no fast-forward)"
            )
        else:
            self._require_fast_forward = True

    def _pick_changes(self, metadata: TableMetadata, *, replace: bool) -> None:
        self._check_wap(metadata, latest_snapshot(metadata, self.branch))
        picked = self.picked
        wap_id = (picked.summary or {}).get(_STAGED_WAP_ID)
        if wap_id:
            self.snapshot_properties.setdefault(_PUBLISHED_WAP_ID, wap_id)
        self.snapshot_properties.setdefault(_SOURCE_SNAPSHOT_ID, str(picked.snapshot_id))
        if replace:
            self._replaced = set()
        for manifest in manifest_rows(picked, self.io):
            if int(manifest.get("content") or 0) != CONTENT_DATA:
                continue
            if manifest.get("added_snapshot_id") != picked.snapshot_id:
                continue
            spec_id = int(manifest["partition_spec_id"])
            entries = read_entries(manifest, self.io)
            ours = pc.fill_null(pc.equal(entries.column("snapshot_id"), picked.snapshot_id), False)
            status = entries.column("status")
            added = entries.filter(pc.and_(ours, pc.equal(status, STATUS_ADDED)))
            for file in entry_files(added):
                self.add_file(file, spec_id)
                if self._replaced is not None:
                    self._replaced.add(partition_key(spec_id, file.partition))
            if replace:
                removed = entries.filter(pc.and_(ours, pc.equal(status, STATUS_DELETED)))
                for file in entry_files(removed):
                    self.delete_file(file)

    @staticmethod
    def _ancestor_ids(metadata: TableMetadata, head: Snapshot | None) -> set[int]:
        return {s.snapshot_id for s in _ancestors(metadata, head)}

    def _is_fast_forward(self, head: Snapshot | None) -> bool:
        parent_id = self.picked.parent_snapshot_id
        return parent_id == (None if head is None else head.snapshot_id)

    def _check_wap(self, metadata: TableMetadata, head: Snapshot | None) -> None:
        """Java's ``WapUtil.validateWapPublish``: a staged WAP id is published once."""
        wap_id = (self.picked.summary or {}).get(_STAGED_WAP_ID)
        if not wap_id:
            return
        for snapshot in _ancestors(metadata, head):
            summary = snapshot.summary or {}
            if wap_id in (summary.get(_STAGED_WAP_ID), summary.get(_PUBLISHED_WAP_ID)):
                raise CommitValidationError(
                    f"cannot cherry-pick snapshot {self.picked.snapshot_id}: its WAP id "
                    f"{wap_id!r} was already published on branch {self.branch!r} (snapshot "
                    f"{snapshot.snapshot_id})"
                )

    @property
    def operation(self) -> str:
        return self.picked.operation or Operation.APPEND.value

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        picked_id = self.picked.snapshot_id
        ancestors = _ancestors(staged, parent)
        for snapshot in ancestors:
            if snapshot.snapshot_id == picked_id:
                raise CommitValidationError(
                    f"cannot cherry-pick snapshot {picked_id}: it is already an ancestor of "
                    f"branch {self.branch!r}"
                )
            if (snapshot.summary or {}).get(_SOURCE_SNAPSHOT_ID) == str(picked_id):
                raise CommitValidationError(
                    f"cannot cherry-pick snapshot {picked_id}: it was already cherry-picked onto "
                    f"branch {self.branch!r} as snapshot {snapshot.snapshot_id}"
                )
        self._check_replaced_partitions(staged, parent, ancestors)
        self._check_wap(staged, parent)

    def _check_replaced_partitions(
        self, staged: TableMetadata, parent: Snapshot | None, ancestors: list[Snapshot]
    ) -> None:
        """Java's ``validateReplacedPartitions``: no file was added to a replaced partition
        since the picked overwrite's parent."""
        if self._replaced is None or parent is None:
            return
        base_id = self.picked.parent_snapshot_id
        since: list[Snapshot] = []
        for snapshot in ancestors:
            if snapshot.snapshot_id == base_id:
                break
            since.append(snapshot)
        else:
            if base_id is not None:
                raise CommitValidationError(
                    f"cannot cherry-pick overwrite snapshot {self.picked.snapshot_id}: its "
                    f"parent {base_id} is no longer an ancestor of branch {self.branch!r}"
                )
        for spec_id, path, partition in added_data_files(staged, since, _ALL_OPERATIONS, self.io):
            if partition_key(spec_id, partition) in self._replaced:
                raise CommitValidationError(
                    f"cannot cherry-pick overwrite snapshot {self.picked.snapshot_id}: "
                    f"partition {partition} it replaces changed since its parent "
                    f"{base_id} ({path} was added)"
                )

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        head = latest_snapshot(staged, self.branch)
        if self._is_fast_forward(head):
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
            self._fast_forwarded = True
            return (SetSnapshotRef.of(self.branch, new_ref),)
        if self._require_fast_forward:
            raise CommitValidationError(
                f"cannot cherry-pick snapshot {self.picked.snapshot_id} (operation "
                f"{self.picked.operation!r}): branch {self.branch!r} moved, so it is no longer "
                "a fast-forward, and only appends and dynamic partition overwrites can be "
                "re-applied"
            )
        self._fast_forwarded = False
        return super().updates_for(staged)

    def cleanup(self, committed: bool) -> None:
        # A fast-forward commits none of the files an earlier attempt may have written.
        super().cleanup(committed and not self._fast_forwarded)
