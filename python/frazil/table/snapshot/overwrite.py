"""Producers that remove data (spec: "Snapshots" operations ``overwrite``, ``delete`` and
``replace``; "Commit Conflict Resolution and Retry"): Java's ``BaseOverwriteFiles`` (with
Spark's copy-on-write delete), ``BaseReplacePartitions`` and ``BaseRewriteFiles``.

The files to remove are decided once, against the branch head the change was built on. Every
attempt then checks that they are all still live (else CommitValidationError naming them), and
that no delete file added since applies to them; under serializable isolation (the
``write.delete.isolation-level`` / ``write.update.isolation-level`` properties, default
serializable as in Java) also that no data file matching the filter was added since. Under
snapshot isolation such files are kept and the commit lands.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_DELETED, DataFile
from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, Snapshot
from frazil.table.snapshot._files import latest_snapshot, spec_of
from frazil.table.snapshot._merging import MergingProducer, partition_key
from frazil.table.snapshot._rewrite import remove_rows
from frazil.table.snapshot._validation import (
    SERIALIZABLE,
    added_data_files,
    added_dvs,
    check_no_new_data,
    check_no_new_deletes,
    describe,
    isolation_level,
)
from frazil.table.snapshot.cherry_pick import REPLACE_PARTITIONS

if TYPE_CHECKING:
    from frazil.expressions import Expression

__all__ = ["DeleteFiles", "OverwriteFiles", "ReplacePartitions", "RewriteFiles"]

DELETE_ISOLATION = "write.delete.isolation-level"
UPDATE_ISOLATION = "write.update.isolation-level"


class OverwriteFiles(MergingProducer):
    """Remove the rows matching ``row_filter`` (whole files, or by copy-on-write) and the
    files given to :meth:`delete_file`, and add the files given to :meth:`add_file`, in one
    snapshot. Its operation is Java's: ``delete`` when it only removes, ``append`` when it
    only adds, else ``overwrite``."""

    isolation_property = UPDATE_ISOLATION
    # A row-level command (Spark's copy-on-write DELETE): the files it removes are decided up
    # front, the filter only finds them.
    row_level = False

    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        *,
        row_filter: Expression | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        merge: bool | None = None,
        conflict_filter: Expression | None = None,
        isolation_property: str | None = None,
    ) -> None:
        super().__init__(
            metadata, io, branch=branch, snapshot_properties=snapshot_properties, merge=merge
        )
        self.row_filter = row_filter
        self.case_sensitive = case_sensitive
        # A row-level change's scan filter (Spark's conflictDetectionFilter), and the property
        # of its isolation level (write.update / write.merge / write.delete).
        self._explicit_conflict_filter = conflict_filter
        if isolation_property is not None:
            self.isolation_property = isolation_property
        if row_filter is not None:
            remove_rows(self, latest_snapshot(metadata, self.branch), row_filter, case_sensitive)

    @property
    def operation(self) -> str:
        if self.deletes_files and not self.adds_files:
            return Operation.DELETE.value
        if self.adds_files and not self.deletes_files:
            return Operation.APPEND.value
        return Operation.OVERWRITE.value

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        if parent is None or parent.snapshot_id == self.starting_snapshot_id:
            return
        history = self.ancestors_since_start(staged, parent)
        conflict_filter = self._conflict_filter()
        if isolation_level(staged.properties, self.isolation_property) == SERIALIZABLE:
            check_no_new_data(staged, history, conflict_filter, self.case_sensitive, self.io)
        if self.deletes_files:
            from frazil import expressions

            removed = self.removed_files(staged, parent)
            # Java's BaseOverwriteFiles: new delete files matching the filter conflict only for
            # an overwrite by row filter; files removed by name (Spark's copy-on-write of a
            # row-level command) conflict only with deletes for those files.
            by_filter = self.row_filter is not None and not self.row_level
            deletes_filter = conflict_filter if by_filter else expressions.AlwaysFalse()
            check_no_new_deletes(
                staged, history, deletes_filter, self.case_sensitive, self.io, removed
            )

    def _conflict_filter(self) -> Expression:
        from frazil import expressions

        if self._explicit_conflict_filter is not None:
            return self._explicit_conflict_filter
        if self.row_filter is not None:
            return self.row_filter
        # Explicit files only: any concurrent change conflicts (Java: alwaysTrue).
        return expressions.AlwaysTrue() if self.deletes_files else expressions.AlwaysFalse()


class DeleteFiles(OverwriteFiles):
    """Delete the rows matching ``row_filter`` (``table.delete``): whole files where every row
    matches, copy-on-write rewrites where some do."""

    isolation_property = DELETE_ISOLATION
    row_level = True


class ReplacePartitions(MergingProducer):
    """Dynamic partition overwrite: every partition the added files touch is replaced (every
    file, for an unpartitioned spec). Operation ``overwrite``."""

    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        merge: bool | None = None,
    ) -> None:
        super().__init__(
            metadata, io, branch=branch, snapshot_properties=snapshot_properties, merge=merge
        )
        self._replaced: set[Any] = set()
        self._replace_all = False

    @property
    def operation(self) -> str:
        return Operation.OVERWRITE.value

    def _manifests(self, staged: TableMetadata, parent: Snapshot | None) -> list[dict[str, Any]]:
        rows = super()._manifests(staged, parent)
        # Java's BaseReplacePartitions marks its snapshots so: a cherry-pick re-applies them.
        self.summary.set(REPLACE_PARTITIONS, "true")
        return rows

    def add_file(self, file: Any, spec_id: int | None = None, *, owned: bool = False) -> None:
        super().add_file(file, spec_id, owned=owned)
        spec = spec_of(self.base, self.base.default_spec_id if spec_id is None else spec_id, "")
        if spec.is_unpartitioned():
            # Java replaces all data of an unpartitioned table, in every spec.
            self._replace_all = self._drop_all = True
        self._replaced.add(partition_key(spec.spec_id, file.partition))
        self.drop_partition(spec.spec_id, file.partition or {})

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        if parent is None or parent.snapshot_id == self.starting_snapshot_id:
            return
        history = self.ancestors_since_start(staged, parent)
        level = isolation_level(staged.properties, UPDATE_ISOLATION)

        def replaced(found: Iterator[tuple[int, str, dict[str, Any] | None]]) -> list[str]:
            return [
                path
                for spec_id, path, partition in found
                if self._replace_all or partition_key(spec_id, partition) in self._replaced
            ]

        # Java's BaseReplacePartitions as Spark's dynamic overwrite sets it up per isolation
        # level: serializable checks data and deletes, snapshot deletes only.
        if level == SERIALIZABLE:
            ops = (Operation.APPEND.value, Operation.OVERWRITE.value)
            added = replaced(added_data_files(staged, history, ops, self.io))
            if added:
                raise CommitValidationError(
                    f"found a conflicting file added concurrently to a replaced "
                    f"partition: {added[0]} (serializable isolation)"
                )
        # validateNoConflictingDeletes: a replaced partition's data files removed, or delete
        # files added to it, since the change was built (validateDeletedDataFiles,
        # validateNoNewDeleteFiles): replacing the partition would silently undo that delete.
        removing = (Operation.OVERWRITE.value, Operation.REPLACE.value, Operation.DELETE.value)
        removed = replaced(
            added_data_files(staged, history, removing, self.io, status=STATUS_DELETED)
        )
        if removed:
            raise CommitValidationError(
                f"found a data file of a replaced partition removed concurrently: "
                f"{removed[0]} ({level} isolation)"
            )
        deleting = (Operation.OVERWRITE.value, Operation.DELETE.value)
        deletes = replaced(added_data_files(staged, history, deleting, self.io, data=False))
        if deletes:
            raise CommitValidationError(
                f"found a delete file added concurrently to a replaced partition: "
                f"{deletes[0]} ({level} isolation)"
            )


class RewriteFiles(MergingProducer):
    """Replace a set of data files by another holding the same rows (compaction); operation
    ``replace``. The replaced files must still be live, and no delete file may have been
    added for them since (Java's ``BaseRewriteFiles``). Where the record counts prove it, the
    rewrite must keep the table's records (spec: "Snapshots": a ``replace`` does not change
    table data)."""

    @property
    def operation(self) -> str:
        return Operation.REPLACE.value

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        from frazil import expressions

        if not self._delete_paths and not self.removes_deletes:
            raise InvalidUpdateError("a rewrite needs files to delete")
        if self.adds_deletes and self._delete_paths:
            raise InvalidUpdateError(
                "a rewrite replaces data files or delete files, not both at once"
            )
        removed = self.removed_data_files(staged, parent)
        if self._delete_paths:
            self._check_record_counts(parent, removed)
        missing = self.missing_deletes(staged, parent)
        if missing:
            # The spec: a replace must verify that the files it deletes are still there.
            raise CommitValidationError(
                "cannot commit: delete files to replace are no longer in the table (removed "
                f"by a concurrent commit?): {describe(missing)}"
            )
        if parent is None or parent.snapshot_id == self.starting_snapshot_id:
            return
        history = self.ancestors_since_start(staged, parent)
        if self._delete_paths:
            check_no_new_deletes(
                staged,
                history,
                expressions.AlwaysFalse(),
                True,
                self.io,
                {str(f.file_path): (spec, f) for spec, f in removed},
                ignore_equality_deletes=self.data_sequence_number is not None,
            )
        if self.dv_targets:
            clash = sorted(
                set(added_dvs(staged, history, expressions.AlwaysTrue(), True, self.io))
                & self.dv_targets
            )
            if clash:
                raise CommitValidationError(
                    f"found a concurrently added deletion vector for {describe(clash)}"
                )

    def _check_record_counts(
        self, parent: Snapshot | None, removed: list[tuple[Any, DataFile]]
    ) -> None:
        """The added files hold as many records as the replaced ones. Java 1.10 has no such
        check (its ``validateReplacedAndAddedFiles`` only asks for files to delete); frazil
        makes it where the counts are exact: when the branch has no live delete file, every
        record of a data file is live. With delete files, a compaction that applied them
        legitimately holds fewer records, so nothing is checked."""
        if parent is not None and _long((parent.summary or {}).get("total-delete-files")) != 0:
            return
        replaced = sum(int(f.record_count or 0) for _, f in removed)
        added_files = [f for _, f in self.added_files]
        added = sum(int(f.record_count or 0) for f in added_files)
        if replaced != added:
            raise CommitValidationError(
                f"a rewrite (replace) must not change the table's records: the "
                f"{len(removed)} replaced data files hold {replaced} records, the "
                f"{len(added_files)} added ones {added}"
            )


def _long(text: str | None) -> int | None:
    """A summary total; None when absent or not a number (then nothing can be proved)."""
    try:
        return None if text is None else int(text)
    except ValueError:
        return None
