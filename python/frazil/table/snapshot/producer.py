"""The snapshot producer: one new snapshot per commit (spec: "Snapshots", "Sequence Numbers",
"Row Lineage", "Commit Conflict Resolution and Retry"; Java's ``SnapshotProducer``).

A producer is a :class:`~frazil.table.transaction.PendingChange`. It chooses its snapshot id
once (random, positive, as Java's ``SnapshotIdGeneratorUtil``) and writes the manifests of the
files it adds once, reusing them on every attempt (inheritance keeps them valid whatever
sequence number the snapshot finally gets). Each attempt (:meth:`SnapshotProducer.updates_for`)
reads the branch head from the metadata it is given, re-validates, builds the manifest list
(a new file per attempt, named ``snap-<id>-<attempt>-<uuid>.avro`` as Java names it) and
returns ``AddSnapshot`` and ``SetSnapshotRef(branch)``. :meth:`cleanup` deletes what the commit
does not reference, everything when it failed.
"""

from __future__ import annotations

import time
import uuid
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

from frazil.errors import CommitValidationError, FrazilError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import write_manifest_list
from frazil.metadata import TableMetadata
from frazil.snapshots import MAIN_BRANCH, Snapshot, SnapshotRef
from frazil.table._properties import int_property
from frazil.table.snapshot._files import latest_snapshot, metadata_dir
from frazil.table.snapshot.summary import SummaryBuilder, with_totals
from frazil.table.transaction import PendingChange
from frazil.table.updates import AddSnapshot, SetSnapshotRef, TableUpdate

__all__ = ["SnapshotProducer", "new_snapshot_id"]

_LONG_MAX = (1 << 63) - 1


def new_snapshot_id(metadata: TableMetadata | None = None) -> int:
    """A random positive long, regenerated on collision (Java: XOR of a random UUID's halves,
    masked positive)."""
    while True:
        value = uuid.uuid4().int
        candidate = ((value >> 64) ^ value) & _LONG_MAX
        if candidate and (metadata is None or metadata.snapshot_by_id(candidate) is None):
            return candidate


class SnapshotProducer(PendingChange):
    """Base of the producers. Subclasses give :meth:`operation`, :meth:`_manifests` (the new
    snapshot's manifest-list rows, filling :attr:`summary`) and optionally :meth:`_validate`."""

    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        branch = MAIN_BRANCH if branch is None else branch
        ref = metadata.ref(branch)
        if ref is not None and not ref.is_branch:
            raise InvalidUpdateError(
                f"{branch!r} is a tag, not a branch: tags cannot be targets for producing snapshots"
            )
        self.io = io
        self.base = metadata
        self.branch = branch
        self.snapshot_properties = dict(snapshot_properties or {})
        self.snapshot_id = new_snapshot_id(metadata)
        head = latest_snapshot(metadata, branch)
        # The head this change was built on: conflict validation looks at what was committed
        # to the branch since then.
        self.starting_snapshot_id = None if head is None else head.snapshot_id
        self._commit_uuid = str(uuid.uuid4())
        self._manifest_count = 0
        self._attempt = 0
        self._manifest_lists: list[str] = []
        # Manifests this producer wrote (new files, merged, filtered), by path.
        self._written: set[str] = set()
        # Data files written for this change (appended data, copy-on-write rewrites): deleted
        # when the commit fails. Files given by the caller are never deleted.
        self._owned_data_files: list[str] = []
        self._committed_manifests: frozenset[str] = frozenset()
        self.summary = SummaryBuilder(metadata.schema())

    # --- for subclasses -------------------------------------------------------------------

    @property
    @abstractmethod
    def operation(self) -> str:
        """The snapshot summary's ``operation``: append, overwrite, delete or replace."""

    @abstractmethod
    def _manifests(self, staged: TableMetadata, parent: Snapshot | None) -> list[dict[str, Any]]:
        """The new snapshot's manifest-list rows (new manifests first). Called once per
        attempt, after :meth:`_validate`; counts the changes into a fresh :attr:`summary`."""

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        """Raise CommitValidationError when the change cannot apply on ``parent``."""

    def new_manifest_location(self) -> str:
        """``<metadata>/<commit uuid>-m<n>.avro`` (Java's ``newManifestOutputFile``)."""
        location = f"{metadata_dir(self.base)}/{self._commit_uuid}-m{self._manifest_count}.avro"
        self._manifest_count += 1
        self._written.add(location)
        return location

    def own_data_file(self, location: str) -> None:
        self._owned_data_files.append(location)

    def ancestors_since_start(
        self, staged: TableMetadata, parent: Snapshot | None
    ) -> list[Snapshot]:
        """Snapshots committed to the branch since this change's starting snapshot, newest
        first (Java's ``validationHistory``); a CommitValidationError when the start is no
        longer an ancestor (the branch was rolled back or replaced)."""
        out: list[Snapshot] = []
        current = parent
        while current is not None and current.snapshot_id != self.starting_snapshot_id:
            out.append(current)
            parent_id = current.parent_snapshot_id
            current = None if parent_id is None else staged.snapshot_by_id(parent_id)
        if self.starting_snapshot_id is not None and current is None:
            raise CommitValidationError(
                f"cannot determine the history of branch {self.branch!r} since snapshot "
                f"{self.starting_snapshot_id}: it is no longer an ancestor of the branch head"
            )
        return out

    # --- the PendingChange protocol -------------------------------------------------------

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        parent = latest_snapshot(staged, self.branch)
        if staged.snapshot_by_id(self.snapshot_id) is not None:
            raise CommitValidationError(
                f"snapshot id {self.snapshot_id} was taken by a concurrent commit"
            )
        self._validate(staged, parent)
        self.summary = SummaryBuilder(
            staged.schema(),
            int_property(staged.properties, "write.summary.partition-limit", 0, minimum=0),
        )
        manifests = self._manifests(staged, parent)
        version = staged.format_version
        sequence_number = staged.last_sequence_number + 1 if version >= 2 else 0
        first_row_id = staged.next_row_id if version >= 3 else None
        self._attempt += 1
        location = (
            f"{metadata_dir(staged)}/snap-{self.snapshot_id}-{self._attempt}-"
            f"{self._commit_uuid}.avro"
        )
        self._manifest_lists.append(location)
        next_row_id = write_manifest_list(
            location,
            manifests,
            snapshot_id=self.snapshot_id,
            sequence_number=sequence_number,
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            format_version=version,
            first_row_id=first_row_id,
            io=self.io,
        )
        summary = self.summary.build()
        summary.update(self.snapshot_properties)
        # Totals carry on from the parent (Java takes the branch head's, so a new branch
        # would restart them at 0 although it holds the parent's files).
        previous = None if parent is None else (parent.summary or {})
        added_rows = None
        if version >= 3:
            assert first_row_id is not None and next_row_id is not None
            added_rows = next_row_id - first_row_id
        snapshot = Snapshot(
            snapshot_id=self.snapshot_id,
            timestamp_ms=max(int(time.time() * 1000), _last_timestamp(staged) + 1),
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            sequence_number=sequence_number,
            manifest_list=location,
            summary=with_totals(summary, previous, self.operation),
            schema_id=staged.current_schema_id,
            first_row_id=first_row_id,
            added_rows=added_rows,
        )
        ref = staged.ref(self.branch)
        new_ref = (
            SnapshotRef.branch(self.snapshot_id)
            if ref is None
            else SnapshotRef(
                self.snapshot_id,
                ref.type,
                ref.min_snapshots_to_keep,
                ref.max_snapshot_age_ms,
                ref.max_ref_age_ms,
            )
        )
        updates: tuple[TableUpdate, ...] = (
            AddSnapshot(snapshot),
            SetSnapshotRef.of(self.branch, new_ref),
        )
        referenced = frozenset(str(m["manifest_path"]) for m in manifests)
        self._committed_manifests = referenced
        return updates

    def cleanup(self, committed: bool) -> None:
        """After the commit: on success, delete the manifest lists of other attempts and the
        manifests the committed one does not reference; on failure everything written,
        data files included (never the caller's own files)."""
        keep: set[str] = set()
        if committed:
            keep = set(self._committed_manifests)
            if self._manifest_lists:
                keep.add(self._manifest_lists[-1])
        doomed = [p for p in [*self._manifest_lists, *sorted(self._written)] if p not in keep]
        if not committed:
            doomed.extend(self._owned_data_files)
        for location in doomed:
            try:
                self.io.delete(location)
            except FrazilError:
                pass  # already gone, or unreachable: orphan removal finds it later


def _last_timestamp(metadata: TableMetadata) -> int:
    # Keep the snapshot log ordered when the clock is behind the last snapshot.
    return max((s.timestamp_ms for s in metadata.snapshots), default=0)
