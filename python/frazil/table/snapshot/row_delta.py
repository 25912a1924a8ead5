"""Row deltas: data files and delete files added, and data and delete files removed, in one
snapshot (Java's ``BaseRowDelta``; spec: "Row-level Deletes", "Commit Conflict Resolution and
Retry").

A merge-on-read delete, update or merge commits one: position deletes (v2) or deletion vectors
(v3) for the rows it removes, the new rows as data files, the deletion vectors it replaces (a
new vector holds the old one's positions too, spec: at most one vector per data file) removed;
an equality delete adds equality delete files. Its operation is ``overwrite`` when it adds data
files, else ``delete`` (spec: "Snapshots").

Each attempt validates what the caller asked for, as Java's validations decide (Spark's
``SparkPositionDeltaWrite`` asks, per command and isolation level):

- :meth:`RowDelta.validate_data_files_exist`: the data files the new position deletes
  reference were not removed since the change was built (by an ``overwrite`` or ``replace``,
  and by a ``delete`` too with :meth:`validate_deleted_files`): deletes of a file rewritten
  meanwhile would not apply to its rows' new copies.
- :meth:`RowDelta.validate_deleted_files`: the files this commit removes are all still live.
- :meth:`RowDelta.validate_no_conflicting_data_files`: no data file that may hold rows matching
  the conflict detection filter was added since (serializable isolation).
- :meth:`RowDelta.validate_no_conflicting_delete_files`: no delete file that may apply to rows
  matching the filter was added since, nor one for a data file this commit removes.
- always: no data file this commit removes is referenced by its own new deletes, and no
  deletion vector was added since for a data file this commit adds one for (two vectors for
  one file would break the table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import CommitValidationError
from frazil.io import FileIO
from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, Snapshot
from frazil.table.snapshot._merging import MergingProducer
from frazil.table.snapshot._validation import (
    added_dvs,
    check_no_new_data,
    check_no_new_deletes,
    describe,
    removed_since,
)

if TYPE_CHECKING:
    from frazil.expressions import Expression

__all__ = ["RowDelta"]


class RowDelta(MergingProducer):
    """Java's ``RowDelta``: :meth:`add_rows`, :meth:`add_deletes`, :meth:`remove_rows`,
    :meth:`remove_deletes`, and the validations to run on every attempt."""

    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        merge: bool | None = None,
        case_sensitive: bool = True,
    ) -> None:
        from frazil import expressions

        super().__init__(
            metadata, io, branch=branch, snapshot_properties=snapshot_properties, merge=merge
        )
        self.case_sensitive = case_sensitive
        self._conflict_filter: Expression = expressions.AlwaysTrue()
        self._referenced: set[str] = set()
        self._validate_deletes = False
        self._validate_new_data = False
        self._validate_new_deletes = False

    # --- building (Java's names) ------------------------------------------------------------

    def add_rows(self, file: Any, spec_id: int | None = None, *, owned: bool = False) -> RowDelta:
        self.add_file(file, spec_id, owned=owned)
        return self

    def add_deletes(self, file: Any, spec_id: int, *, owned: bool = False) -> RowDelta:
        self.add_delete(file, spec_id, owned=owned)
        return self

    def remove_rows(self, file: Any) -> RowDelta:
        self.delete_file(file)
        return self

    def remove_deletes(self, file: Any) -> RowDelta:
        self.remove_delete(file)
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> RowDelta:
        """Validate against what was committed since ``snapshot_id`` (default: the branch head
        this change was built on; Spark passes the snapshot its scan read)."""
        self.starting_snapshot_id = snapshot_id
        return self

    def validate_data_files_exist(self, paths: Iterable[str]) -> RowDelta:
        self._referenced.update(paths)
        return self

    def validate_deleted_files(self) -> RowDelta:
        self._validate_deletes = True
        return self

    def conflict_detection_filter(self, row_filter: Expression) -> RowDelta:
        self._conflict_filter = row_filter
        return self

    def validate_no_conflicting_data_files(self) -> RowDelta:
        self._validate_new_data = True
        return self

    def validate_no_conflicting_delete_files(self) -> RowDelta:
        self._validate_new_deletes = True
        return self

    @property
    def referenced_data_files(self) -> frozenset[str]:
        return frozenset(self._referenced)

    @property
    def changes_anything(self) -> bool:
        return self.adds_files or self.deletes_files or self.adds_deletes or self.removes_deletes

    # --- the producer -----------------------------------------------------------------------

    @property
    def operation(self) -> str:
        # Spec: "delete -- data files were removed and their contents logically deleted and/or
        # delete files were added to delete rows". Java 1.10 calls a delta that only removes
        # data files an overwrite; Spark commits such deletes as DeleteFiles, a delete.
        if self.adds_files:
            return Operation.OVERWRITE.value
        return Operation.DELETE.value

    def _validate(self, staged: TableMetadata, parent: Snapshot | None) -> None:
        removed_paths = set(self._delete_paths)
        own_references = sorted(removed_paths & self._referenced)
        if own_references:
            # validateNoConflictingFileAndPositionDeletes
            raise CommitValidationError(
                f"cannot delete data files that are referenced by new delete files: "
                f"{describe(own_references)}"
            )
        if parent is None:
            return
        if parent.snapshot_id == self.starting_snapshot_id:
            history: list[Snapshot] = []
        else:
            history = self.ancestors_since_start(staged, parent)
        if self._referenced and history:
            self._check_data_files_exist(staged, history)
        if self._validate_deletes:
            missing = self.missing_deletes(staged, parent)
            if missing:
                raise CommitValidationError(
                    "cannot commit: delete files to remove are no longer in the table (removed "
                    f"by a concurrent commit?): {describe(missing)}"
                )
        if not history:
            return
        if self._validate_new_data:
            check_no_new_data(staged, history, self._conflict_filter, self.case_sensitive, self.io)
        if self._validate_new_deletes:
            removed = self.removed_files(staged, parent) if removed_paths else None
            check_no_new_deletes(
                staged, history, self._conflict_filter, self.case_sensitive, self.io, removed
            )
        if self._dv_targets:
            clash = sorted(
                set(added_dvs(staged, history, self._conflict_filter, self.case_sensitive, self.io))
                & self._dv_targets
            )
            if clash:
                raise CommitValidationError(
                    f"found a concurrently added deletion vector for {describe(clash)}: its "
                    "positions would be lost (spec: at most one deletion vector per data file)"
                )

    def _check_data_files_exist(self, staged: TableMetadata, history: list[Snapshot]) -> None:
        """Java's ``validateDataFilesExist``: none of the referenced data files was removed by
        the snapshots since the start (``delete`` snapshots only count with
        :meth:`validate_deleted_files`: a file a concurrent delete dropped whole needs no
        deletes any more)."""
        operations: tuple[str, ...] = (Operation.OVERWRITE.value, Operation.REPLACE.value)
        if self._validate_deletes:
            operations += (Operation.DELETE.value,)
        missing = removed_since(
            staged,
            history,
            operations,
            self._referenced,
            self._conflict_filter,
            self.case_sensitive,
            self.io,
        )
        if missing:
            raise CommitValidationError(
                "cannot commit, missing data files (removed concurrently): "
                f"{describe(sorted(missing))}"
            )
