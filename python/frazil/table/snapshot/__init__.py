"""Snapshot producers: the changes that commit a new snapshot (spec: "Snapshots", "Sequence
Numbers", "Row Lineage", "Commit Conflict Resolution and Retry").

- :class:`FastAppend`, :class:`MergeAppend` (``append``);
- :class:`OverwriteFiles`, :class:`DeleteFiles` (``overwrite`` / ``delete``: files removed by
  a row filter, whole or by copy-on-write, or by path, and files added);
- :class:`ReplacePartitions` (dynamic partition overwrite);
- :class:`RewriteFiles` (``replace``);
- :class:`CherryPick` (fast-forward to another snapshot, or re-apply its appended files or
  dynamic partition overwrite on a branch).

Each is a :class:`~frazil.table.transaction.PendingChange`; :mod:`frazil.table.snapshot.api`
builds them from Arrow data for ``Table`` and ``Transaction``.
"""

from frazil.table.snapshot.append import FastAppend, MergeAppend
from frazil.table.snapshot.cherry_pick import CherryPick
from frazil.table.snapshot.overwrite import (
    DeleteFiles,
    OverwriteFiles,
    ReplacePartitions,
    RewriteFiles,
)
from frazil.table.snapshot.producer import SnapshotProducer, new_snapshot_id
from frazil.table.snapshot.summary import SummaryBuilder

__all__ = [
    "CherryPick",
    "DeleteFiles",
    "FastAppend",
    "MergeAppend",
    "OverwriteFiles",
    "ReplacePartitions",
    "RewriteFiles",
    "SnapshotProducer",
    "SummaryBuilder",
    "new_snapshot_id",
]
