"""Appends (Java's ``FastAppend`` and ``MergeAppend``; spec: "Snapshots", operation
``append``).

A fast append writes the new files' manifests and lists them before every manifest of the
parent, untouched. A merge append (Java's default for ``newAppend()``) does the same and then
merges small manifests per ``commit.manifest-merge.*``. Appends never conflict: on a retry
they simply re-apply on the new branch head.
"""

from __future__ import annotations

from typing import Any

from frazil.metadata import TableMetadata
from frazil.snapshots import Operation, Snapshot
from frazil.table.snapshot._files import manifest_rows, spec_of
from frazil.table.snapshot._merging import MergingProducer

__all__ = ["FastAppend", "MergeAppend"]


class MergeAppend(MergingProducer):
    """Append data files, merging manifests (``merge=None``: per
    ``commit.manifest-merge.enabled``, default true)."""

    @property
    def operation(self) -> str:
        return Operation.APPEND.value


class FastAppend(MergingProducer):
    """Append data files in new manifests; the parent's manifests are kept as they are."""

    @property
    def operation(self) -> str:
        return Operation.APPEND.value

    def _manifests(self, staged: TableMetadata, parent: Snapshot | None) -> list[dict[str, Any]]:
        new = self._written_new_manifests()
        for spec_id, file in self.added_files:
            self.summary.added_file(spec_of(self.base, spec_id, ""), file)
        return [*new, *manifest_rows(parent, self.io)]
