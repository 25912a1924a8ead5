"""Merge-on-read deletes by filter (``write.delete.mode=merge-on-read``; spec: "Row-level
Deletes"): files whose every row matches are dropped whole, the matching live rows of the
others are deleted by position (v2 position delete files, v3 deletion vectors), in one
``delete`` snapshot (a row delta), validated as Spark's merge-on-read ``DELETE`` is
(``SparkPositionDeltaWrite``): the files the deletes reference still exist unless a concurrent
``delete`` dropped them, and under serializable isolation (``write.delete.isolation-level``,
Java's default) no data file that may hold matching rows was added since."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from frazil.expressions import bind
from frazil.table._row_filter import compile_filter
from frazil.table.row_level._deltas import PositionDeltas
from frazil.table.row_level._touched import in_parallel, live_positions, touched_files
from frazil.table.snapshot._files import latest_snapshot
from frazil.table.snapshot._validation import SERIALIZABLE, isolation_level
from frazil.table.snapshot.overwrite import DELETE_ISOLATION
from frazil.table.snapshot.row_delta import RowDelta

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table.transaction import Transaction

__all__ = ["merge_on_read_delete"]


def merge_on_read_delete(
    txn: Transaction,
    row_filter: Expression,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
) -> RowDelta | None:
    """Stage in ``txn`` the deletion of the rows matching ``row_filter``; returns the staged
    row delta (None when no row matched: nothing is committed)."""
    metadata, io = txn.staged_metadata, txn.table.io
    delta = RowDelta(
        metadata,
        io,
        branch=branch,
        snapshot_properties=snapshot_properties,
        case_sensitive=case_sensitive,
    )
    level = isolation_level(metadata.properties, DELETE_ISOLATION)
    # A filter on a column the table lacks is refused even when no file would be read.
    compiled = compile_filter(
        bind(row_filter, metadata.schema(), case_sensitive), metadata.schema()
    )
    head = latest_snapshot(metadata, delta.branch)
    touched = touched_files(metadata, io, head, row_filter, case_sensitive)
    for file in touched.whole:
        delta.remove_rows(file)
    deltas = PositionDeltas(metadata, io)
    found = in_parallel(lambda task: live_positions(metadata, io, task, compiled), touched.tasks)
    for task, positions in zip(touched.tasks, found, strict=True):
        deltas.add(task, positions)
    try:
        deltas.add_to(delta)
        if not delta.changes_anything:
            return None
        delta.conflict_detection_filter(row_filter)
        if level == SERIALIZABLE:
            delta.validate_no_conflicting_data_files()
        txn.add_change(delta)
    except BaseException:
        delta.cleanup(False)
        raise
    return delta
