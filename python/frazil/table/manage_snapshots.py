"""Branches, tags and the current snapshot (spec: "Snapshot Reference"; Java:
``SnapshotManager`` and ``UpdateSnapshotReferencesOperation``).

::

    with ManageSnapshots(metadata) as refs:
        refs.create_tag("v1.0", snapshot_id)
        refs.create_branch("audit", max_ref_age_ms=7 * 24 * 3600 * 1000)
        refs.rollback_to(older_snapshot_id)
        refs.cherry_pick(staged_snapshot_id)

Changes are collected in order and committed as ``set-snapshot-ref`` and
``remove-snapshot-ref`` updates; moving ``main`` changes the table's current snapshot. A
cherry-pick (Java's ``SnapshotManager.cherrypick``) is a snapshot producer
(:class:`~frazil.table.snapshot.CherryPick`): as in Java, the ref changes made before it are
staged first, then the cherry-pick, then what follows, all in one transaction, the
cherry-pick re-validated on every attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from frazil.errors import InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.snapshots import MAIN_BRANCH, SnapshotRef, SnapshotRefType
from frazil.table._apply import apply_updates
from frazil.table._builder import Committer, EvolutionBuilder
from frazil.table.requirements import requirements_for
from frazil.table.updates import RemoveSnapshotRef, SetSnapshotRef, TableUpdate

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table._table import Table
    from frazil.table.snapshot import CherryPick
    from frazil.table.transaction import Transaction

__all__ = ["ManageSnapshots"]


@dataclass(frozen=True)
class _RefChanges:
    """Ref changes built on ``base``, staged before a cherry-pick."""

    base: TableMetadata
    updates: tuple[TableUpdate, ...]


@dataclass(frozen=True)
class _Pick:
    producer: CherryPick
    updates: tuple[TableUpdate, ...]


class ManageSnapshots(EvolutionBuilder[dict[str, SnapshotRef]]):
    """Create, move and remove branches and tags; roll the table back or forward."""

    def __init__(
        self,
        metadata: TableMetadata,
        *,
        committer: Committer | None = None,
        owner: Table | Transaction | None = None,
    ) -> None:
        """``owner``: the table or transaction that commits this builder; a cherry-pick
        writes a manifest list through its storage and stages in its transaction."""
        super().__init__(metadata, committer)
        self._owner_of_commit = owner
        self._refs: dict[str, SnapshotRef] = dict(metadata.refs)
        # Ref changes since the last cherry-pick (since the start without one), against
        # ``_current``: the base with the steps before them applied.
        self._changes: dict[str, SnapshotRef | None] = {}
        self._current = metadata
        self._steps: list[_RefChanges | _Pick] = []

    def _snapshot(self, snapshot_id: int | None, what: str) -> int:
        if snapshot_id is None:
            current = self._refs.get(MAIN_BRANCH)
            if current is None:
                raise InvalidUpdateError(f"cannot {what}: the table has no current snapshot")
            return current.snapshot_id
        if self._current.snapshot_by_id(snapshot_id) is None:
            raise InvalidUpdateError(f"cannot {what}: unknown snapshot {snapshot_id}")
        return snapshot_id

    def _set(self, name: str, ref: SnapshotRef) -> ManageSnapshots:
        self._refs[name] = ref
        self._changes[name] = ref
        return self

    def _existing(self, name: str, kind: SnapshotRefType, what: str) -> SnapshotRef:
        ref = self._refs.get(name)
        if ref is None:
            raise InvalidUpdateError(f"cannot {what}: {kind.value} {name!r} does not exist")
        if ref.type is not kind:
            raise InvalidUpdateError(f"cannot {what}: {name!r} is a {ref.type.value}")
        return ref

    def create_branch(
        self,
        name: str,
        snapshot_id: int | None = None,
        *,
        min_snapshots_to_keep: int | None = None,
        max_snapshot_age_ms: int | None = None,
        max_ref_age_ms: int | None = None,
    ) -> ManageSnapshots:
        """A new branch at ``snapshot_id`` (default: the current snapshot)."""
        if name in self._refs:
            raise InvalidUpdateError(f"cannot create branch {name!r}: the ref already exists")
        target = self._snapshot(snapshot_id, f"create branch {name!r}")
        return self._set(
            name,
            SnapshotRef.branch(
                target,
                min_snapshots_to_keep=min_snapshots_to_keep,
                max_snapshot_age_ms=max_snapshot_age_ms,
                max_ref_age_ms=max_ref_age_ms,
            ),
        )

    def create_tag(
        self, name: str, snapshot_id: int | None = None, *, max_ref_age_ms: int | None = None
    ) -> ManageSnapshots:
        """A new tag at ``snapshot_id`` (default: the current snapshot)."""
        if name in self._refs:
            raise InvalidUpdateError(f"cannot create tag {name!r}: the ref already exists")
        target = self._snapshot(snapshot_id, f"create tag {name!r}")
        return self._set(name, SnapshotRef.tag(target, max_ref_age_ms))

    def remove_branch(self, name: str) -> ManageSnapshots:
        if name == MAIN_BRANCH:
            raise InvalidUpdateError("cannot remove the main branch")
        self._existing(name, SnapshotRefType.BRANCH, f"remove branch {name!r}")
        del self._refs[name]
        self._changes[name] = None
        return self

    def remove_tag(self, name: str) -> ManageSnapshots:
        self._existing(name, SnapshotRefType.TAG, f"remove tag {name!r}")
        del self._refs[name]
        self._changes[name] = None
        return self

    def replace_branch(self, name: str, snapshot_id: int) -> ManageSnapshots:
        """Point an existing branch at another snapshot, keeping its retention settings."""
        ref = self._existing(name, SnapshotRefType.BRANCH, f"move branch {name!r}")
        target = self._snapshot(snapshot_id, f"move branch {name!r}")
        return self._set(
            name,
            SnapshotRef(
                target,
                ref.type,
                ref.min_snapshots_to_keep,
                ref.max_snapshot_age_ms,
                ref.max_ref_age_ms,
            ),
        )

    def set_current_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Make any snapshot of the table current (Java: setCurrentSnapshot)."""
        target = self._snapshot(snapshot_id, "set the current snapshot")
        main = self._refs.get(MAIN_BRANCH)
        if main is None:
            return self._set(MAIN_BRANCH, SnapshotRef.branch(target))
        return self.replace_branch(MAIN_BRANCH, target)

    def rollback_to(self, snapshot_id: int) -> ManageSnapshots:
        """Make an ancestor of the current snapshot current again (Java: rollbackTo)."""
        main = self._refs.get(MAIN_BRANCH)
        ancestors: set[int] = set()
        current = None if main is None else self._current.snapshot_by_id(main.snapshot_id)
        while current is not None and current.snapshot_id not in ancestors:
            ancestors.add(current.snapshot_id)
            parent = current.parent_snapshot_id
            current = None if parent is None else self._current.snapshot_by_id(parent)
        if snapshot_id not in ancestors:
            raise InvalidUpdateError(
                f"cannot roll back to snapshot {snapshot_id}: it is not an ancestor of the "
                "current snapshot"
            )
        return self.set_current_snapshot(snapshot_id)

    def fast_forward(self, name: str, to: str) -> ManageSnapshots:
        """Move branch ``name`` to the head of ref ``to`` when its head is an ancestor of it
        (Java: fastForwardBranch)."""
        ref = self._existing(name, SnapshotRefType.BRANCH, f"fast-forward branch {name!r}")
        target = self._refs.get(to)
        if target is None:
            raise InvalidUpdateError(f"cannot fast-forward {name!r}: ref {to!r} does not exist")
        seen: set[int] = set()
        current = self._current.snapshot_by_id(target.snapshot_id)
        while current is not None and current.snapshot_id not in seen:
            if current.snapshot_id == ref.snapshot_id:
                return self.replace_branch(name, target.snapshot_id)
            seen.add(current.snapshot_id)
            parent = current.parent_snapshot_id
            current = None if parent is None else self._current.snapshot_by_id(parent)
        raise InvalidUpdateError(
            f"cannot fast-forward {name!r}: its head {ref.snapshot_id} is not an ancestor of "
            f"{to!r} ({target.snapshot_id})"
        )

    def cherry_pick(self, snapshot_id: int, branch: str | None = None) -> ManageSnapshots:
        """Apply snapshot ``snapshot_id`` to ``branch`` (default main; Java:
        ``SnapshotManager.cherrypick``): a fast-forward when its parent is the branch head,
        else its appended files (or, for a dynamic partition overwrite, its replacement of
        partitions that did not change since) committed again in a new snapshot. Other
        operations, a snapshot already on the branch or already picked onto it, and a WAP id
        already published are refused."""
        from frazil.table.snapshot import CherryPick

        io = self._io("cherry-pick")
        segment = self._segment_updates()
        if segment:
            self._steps.append(_RefChanges(self._current, segment))
            self._current = apply_updates(self._current, segment)
        self._changes = {}
        producer = CherryPick(self._current, io, snapshot_id, branch=branch)
        try:
            updates = producer.updates_for(self._current)
            self._current = apply_updates(self._current, updates)
        except BaseException:
            producer.cleanup(False)
            raise
        self._steps.append(_Pick(producer, updates))
        self._refs = dict(self._current.refs)
        return self

    def _owner(self, what: str) -> Table | Transaction:
        """The table or transaction that commits this builder."""
        if self._owner_of_commit is not None:
            return self._owner_of_commit
        raise InvalidUpdateError(
            f"cannot {what} here: it writes a snapshot, so it needs the builder of a table or "
            "transaction (table.manage_snapshots() or transaction.manage_snapshots())"
        )

    def _io(self, what: str) -> FileIO:
        from frazil.table.transaction import Transaction

        owner = self._owner(what)
        return owner.table.io if isinstance(owner, Transaction) else owner.io

    def _segment_updates(self) -> tuple[TableUpdate, ...]:
        out: list[TableUpdate] = []
        for name, ref in self._changes.items():
            before = self._current.refs.get(name)
            if ref is None:
                if before is not None:
                    out.append(RemoveSnapshotRef(name))
            elif ref != before:
                out.append(SetSnapshotRef.of(name, ref))
        return tuple(out)

    def apply(self) -> dict[str, SnapshotRef]:
        """The refs after these changes."""
        return dict(self._refs)

    def updates(self) -> tuple[TableUpdate, ...]:
        out: list[TableUpdate] = []
        for step in self._steps:
            out.extend(step.updates)
        out.extend(self._segment_updates())
        return tuple(out)

    def commit_to(
        self, metadata: TableMetadata | None = None, *, timestamp_ms: int | None = None
    ) -> TableMetadata:
        """As :meth:`EvolutionBuilder.commit_to`; with a cherry-pick, through the table's or
        transaction's commit: the steps are staged in order in one transaction."""
        picks = [s.producer for s in self._steps if isinstance(s, _Pick)]
        if not picks or metadata is not None or self._committer is None:
            return super().commit_to(metadata, timestamp_ms=timestamp_ms)
        from frazil.table.transaction import BuilderChange, Transaction

        owner = self._owner("cherry-pick")
        txn = owner if isinstance(owner, Transaction) else owner.transaction()
        steps: list[_RefChanges | _Pick] = list(self._steps)
        segment = self._segment_updates()
        if segment:
            steps.append(_RefChanges(self._current, segment))
        staged: list[CherryPick] = []
        try:
            for step in steps:
                if isinstance(step, _Pick):
                    txn.add_change(step.producer)
                    staged.append(step.producer)
                else:
                    requirements = requirements_for(step.base, step.updates)
                    txn.add_change(BuilderChange(step.updates, requirements))
        except BaseException:
            # A table's own transaction is abandoned: every pick's files go. A caller's
            # transaction cleans what was staged in it when it ends.
            for producer in picks:
                if producer not in staged or not isinstance(owner, Transaction):
                    producer.cleanup(False)
            raise
        if isinstance(owner, Transaction):
            self._result = txn.staged_metadata
        else:
            self._result = txn.commit_transaction().metadata
        return self._result
