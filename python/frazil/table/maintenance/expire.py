"""Expiring snapshots (spec: "Snapshot Retention Policy"; Java's ``RemoveSnapshots`` with
``ReachableFileCleanup``, and Spark's ``ExpireSnapshotsSparkAction`` for the result counts).

The expiry first commits the metadata change (``remove-snapshot-ref`` for expired refs, then
``remove-snapshots``) through a :class:`~frazil.table.transaction.Transaction`, recomputed on
the latest metadata at every attempt. Only once that has landed are files deleted: those the
expired snapshots reach (manifest lists, manifests, live data and delete files, statistics
files) that no remaining snapshot reaches, decided by reading the manifest lists and manifests
of both sides, on a thread pool. A file a remaining snapshot references, under any spelling of
its location, is never deleted.

Reachability is used whatever the shape of the history (Java picks an incremental cleanup when
every snapshot descends from main; it is only an optimization and is unsafe otherwise, see
apache/iceberg #13614).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frazil.errors import FrazilError, ValidationError
from frazil.metadata import TableMetadata
from frazil.table._apply import apply_updates
from frazil.table.maintenance._delete import DEFAULT_DELETE_THREADS, delete_all
from frazil.table.maintenance._locations import LocationSet
from frazil.table.maintenance._reachable import (
    FileKind,
    live_content_files,
    manifest_lists,
    statistics_files,
)
from frazil.table.maintenance.retention import RetentionPlan, gc_enabled, plan_retention
from frazil.table.transaction import PendingChange, Transaction
from frazil.table.updates import (
    RemoveSnapshotRef,
    RemoveSnapshots,
    SetSnapshotRef,
    TableUpdate,
)

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table._table import Table

__all__ = [
    "ExpireSnapshots",
    "ExpireSnapshotsResult",
    "ExpiryCandidates",
    "expired_files",
    "expiry_candidates",
]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class ExpireSnapshotsResult:
    """What an expiry removed (or, for a dry run, would remove).

    ``files`` maps each deleted location (as the metadata names it) to its kind; ``failed``
    holds the ones whose deletion failed (left as orphans). The counts follow Java's
    ``ExpireSnapshots.Result``."""

    expired_snapshot_ids: tuple[int, ...]
    removed_refs: tuple[str, ...]
    files: Mapping[str, FileKind] = field(default_factory=dict)
    failed: tuple[str, ...] = ()
    dry_run: bool = False

    def _count(self, kind: FileKind) -> int:
        return sum(1 for k in self.files.values() if k is kind)

    @property
    def deleted_files(self) -> list[str]:
        """Every location deleted (or to delete), sorted."""
        return sorted(self.files)

    @property
    def deleted_data_files_count(self) -> int:
        return self._count(FileKind.DATA)

    @property
    def deleted_position_delete_files_count(self) -> int:
        return self._count(FileKind.POSITION_DELETES)

    @property
    def deleted_equality_delete_files_count(self) -> int:
        return self._count(FileKind.EQUALITY_DELETES)

    @property
    def deleted_manifests_count(self) -> int:
        return self._count(FileKind.MANIFEST)

    @property
    def deleted_manifest_lists_count(self) -> int:
        return self._count(FileKind.MANIFEST_LIST)

    @property
    def deleted_statistics_files_count(self) -> int:
        return self._count(FileKind.STATISTICS)


@dataclass(frozen=True)
class ExpiryCandidates:
    """What expiring the snapshots ``after`` lacks may delete, before the data and delete
    files are decided: the manifest lists and manifests no remaining snapshot reaches
    (``listed``), the manifests whose content files are candidates (``expired_manifests``)
    and those that stay (``remaining_manifests``), both by path with their manifest-list rows,
    and the statistics files no longer listed."""

    listed: dict[str, FileKind]
    expired_manifests: dict[str, dict[str, Any]]
    remaining_manifests: dict[str, dict[str, Any]]
    statistics: tuple[str, ...]

    def files(self, content: Mapping[str, FileKind]) -> dict[str, FileKind]:
        """Everything to delete, given the content files of ``expired_manifests`` that no
        remaining manifest holds live."""
        found = dict(self.listed)
        found.update(content)
        for location in self.statistics:
            found.setdefault(location, FileKind.STATISTICS)
        return found


def expiry_candidates(before: TableMetadata, after: TableMetadata, io: FileIO) -> ExpiryCandidates:
    """See :class:`ExpiryCandidates` (reads the manifest lists of both sides)."""
    remaining_ids = {s.snapshot_id for s in after.snapshots}
    expired = [s for s in before.snapshots if s.snapshot_id not in remaining_ids]
    remaining = list(after.snapshots)
    listed: dict[str, FileKind] = {}
    candidates: dict[str, dict[str, Any]] = {}
    remaining_manifests: dict[str, dict[str, Any]] = {}
    if expired:
        lists = manifest_lists([*expired, *remaining], io)
        live_lists = LocationSet(s.manifest_list for s in remaining if s.manifest_list)
        for snapshot in expired:
            location = snapshot.manifest_list
            if location is not None and location not in live_lists:
                listed[location] = FileKind.MANIFEST_LIST
        remaining_manifests = lists.unique(remaining)
        live_manifests = LocationSet(remaining_manifests)
        # Each distinct manifest is checked once, however many expired snapshots list it.
        candidates = {
            path: row for path, row in lists.unique(expired).items() if path not in live_manifests
        }
        listed.update(dict.fromkeys(candidates, FileKind.MANIFEST))
    live_statistics = LocationSet(statistics_files(after))
    statistics = tuple(
        location for location in sorted(statistics_files(before)) if location not in live_statistics
    )
    return ExpiryCandidates(listed, candidates, remaining_manifests, statistics)


def expired_files(before: TableMetadata, after: TableMetadata, io: FileIO) -> dict[str, FileKind]:
    """The files ``before``'s snapshots reach that ``after``'s do not: what expiring the
    snapshots ``after`` lacks may delete."""
    found = expiry_candidates(before, after, io)
    # Content files of manifests that stay are live by definition; only the manifests that
    # go can hold files to delete, and those are checked against every manifest that stays.
    content = live_content_files(found.expired_manifests.values(), io)
    if content:
        live_content = LocationSet(live_content_files(found.remaining_manifests.values(), io))
        content = {p: k for p, k in content.items() if p not in live_content}
    return found.files(content)


class _ExpireChange(PendingChange):
    """The metadata side of an expiry, recomputed on the latest metadata at each attempt."""

    def __init__(self, expire: ExpireSnapshots) -> None:
        self._expire = expire
        self.base: TableMetadata | None = None
        self.plan = RetentionPlan((), ())

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        self.base = staged
        self.plan = self._expire._plan(staged)
        updates = _updates(self.plan)
        if not updates:
            return ()
        # The plan holds only while the refs it kept are where it saw them: restating each
        # (a no-op when applied) makes the commit require that (AssertRefSnapshotId), so a
        # concurrent rollback or branch move fails the attempt and the plan is recomputed,
        # as Java's full metadata swap would.
        removed = set(self.plan.removed_refs)
        restated = tuple(
            SetSnapshotRef.of(name, ref)
            for name, ref in sorted(staged.refs.items())
            if name not in removed
        )
        return restated + updates


def _updates(plan: RetentionPlan) -> tuple[TableUpdate, ...]:
    # Java removes the refs first, then the snapshots (RemoveSnapshots.internalApply).
    updates: list[TableUpdate] = [RemoveSnapshotRef(name) for name in plan.removed_refs]
    if plan.expired_snapshot_ids:
        updates.append(RemoveSnapshots(plan.expired_snapshot_ids))
    return tuple(updates)


class ExpireSnapshots:
    """Builder of an expiry (``table.maintenance.expire_snapshots()``). Without any call it
    applies the table's ``history.expire.*`` defaults; ``older_than`` and ``retain_last``
    replace them, and refs' own retention settings win over both (spec: Snapshot Retention
    Policy). As in Java, snapshots asked for by id expire together with those the age rules
    expire."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._now_ms = _now_ms()
        self._ids: set[int] = set()
        self._older_than_ms: int | None = None
        self._retain_last: int | None = None
        self._delete: Callable[[str], None] | None = None
        self._threads = DEFAULT_DELETE_THREADS
        self._clean_files = True

    def by_id(self, snapshot_id: int) -> ExpireSnapshots:
        """Expire this snapshot (refused at commit when a kept branch or tag points at it)."""
        if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
            raise ValidationError(f"a snapshot id is an int, got {snapshot_id!r}")
        self._ids.add(snapshot_id)
        return self

    def by_ids(self, snapshot_ids: Iterable[int]) -> ExpireSnapshots:
        for snapshot_id in snapshot_ids:
            self.by_id(snapshot_id)
        return self

    def older_than(self, when: int | dt.datetime) -> ExpireSnapshots:
        """Expire snapshots older than ``when`` (ms from the epoch, or a datetime; naive is
        UTC) that no retention rule keeps."""
        from frazil.table._table import timestamp_ms

        self._older_than_ms = timestamp_ms(when)
        return self

    def retain_last(self, count: int) -> ExpireSnapshots:
        """Keep at least ``count`` ancestors of each branch without its own setting."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValidationError(
                f"the number of snapshots to retain must be an int of at least 1, got {count!r}"
            )
        self._retain_last = count
        return self

    def delete_with(self, delete: Callable[[str], None]) -> ExpireSnapshots:
        """Delete files with ``delete(location)`` instead of the table's FileIO."""
        self._delete = delete
        return self

    def delete_threads(self, threads: int) -> ExpireSnapshots:
        """How many files are deleted at once (default 16)."""
        if threads < 1:
            raise ValidationError(f"delete threads must be at least 1, got {threads}")
        self._threads = threads
        return self

    def clean_expired_files(self, clean: bool) -> ExpireSnapshots:
        """Whether files are deleted after the commit (Java's ``cleanExpiredFiles``)."""
        self._clean_files = clean
        return self

    def _plan(self, metadata: TableMetadata) -> RetentionPlan:
        if not gc_enabled(metadata):
            raise ValidationError(
                "cannot expire snapshots: gc.enabled is false (the table's files may be shared "
                "with another table, deleting them could corrupt it)"
            )
        return plan_retention(
            metadata,
            self._now_ms,
            older_than_ms=self._older_than_ms,
            retain_last=self._retain_last,
            snapshot_ids=self._ids,
        )

    def _expired_files(
        self, before: TableMetadata, after: TableMetadata, table: Table
    ) -> dict[str, FileKind]:
        """The files to delete (frazil.spark decides them on executors instead)."""
        return expired_files(before, after, table.io)

    def _delete_files(self, files: Iterable[str], table: Table) -> dict[str, Exception]:
        """Deletes ``files``; the failures (frazil.spark deletes on executors instead)."""
        return delete_all(files, self._delete or table.io.delete, self._threads)

    def dry_run(self) -> ExpireSnapshotsResult:
        """What :meth:`commit` would expire and delete, committing and deleting nothing."""
        return self.commit(dry_run=True)

    def _preview(self, table: Table) -> ExpireSnapshotsResult:
        before = table.metadata
        plan = self._plan(before)
        after = apply_updates(before, _updates(plan))
        files = self._expired_files(before, after, table) if self._clean_files else {}
        return ExpireSnapshotsResult(
            plan.expired_snapshot_ids, plan.removed_refs, files, dry_run=True
        )

    def commit(self, dry_run: bool = False) -> ExpireSnapshotsResult:
        """Expire the snapshots, then delete the files only they reached (unless
        ``dry_run``)."""
        table = self._table
        if table.catalog is not None:
            table.refresh()
        if dry_run:
            return self._preview(table)
        change = _ExpireChange(self)
        transaction = Transaction(table)
        transaction.add_change(change)
        transaction.commit_transaction()
        plan, base = change.plan, change.base
        if base is None:
            raise FrazilError("the expiry was never applied")  # commit_transaction applies it
        if not plan.expired_snapshot_ids and not plan.removed_refs:
            return ExpireSnapshotsResult((), ())
        files: dict[str, FileKind] = {}
        failed: dict[str, Exception] = {}
        if self._clean_files and plan.expired_snapshot_ids:
            files = self._expired_files(base, table.metadata, table)
            failed = self._delete_files(files, table)
        return ExpireSnapshotsResult(
            plan.expired_snapshot_ids, plan.removed_refs, files, tuple(sorted(failed))
        )
