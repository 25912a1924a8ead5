"""Metrics reports the REST client posts (spec: reportMetrics, ``ReportMetricsRequest``): a
commit report after each commit that made a new snapshot, its counters taken from the
snapshot summary as Java's ``CommitMetricsResult.from`` takes them. The client does not time
its commits, so ``total-duration`` and ``attempts`` (optional in Java's parser) are left out.
"""

from __future__ import annotations

from typing import Any

from frazil.snapshots import Snapshot

__all__ = ["commit_report"]

# CommitMetricsResult's name -> (the snapshot summary key it counts, its unit).
_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("added-data-files", "added-data-files", "count"),
    ("removed-data-files", "deleted-data-files", "count"),
    ("total-data-files", "total-data-files", "count"),
    ("added-delete-files", "added-delete-files", "count"),
    ("added-equality-delete-files", "added-equality-delete-files", "count"),
    ("added-positional-delete-files", "added-position-delete-files", "count"),
    ("added-dvs", "added-dvs", "count"),
    ("removed-delete-files", "removed-delete-files", "count"),
    ("removed-equality-delete-files", "removed-equality-delete-files", "count"),
    ("removed-positional-delete-files", "removed-position-delete-files", "count"),
    ("removed-dvs", "removed-dvs", "count"),
    ("total-delete-files", "total-delete-files", "count"),
    ("added-records", "added-records", "count"),
    ("removed-records", "deleted-records", "count"),
    ("total-records", "total-records", "count"),
    ("added-files-size-bytes", "added-files-size", "bytes"),
    ("removed-files-size-bytes", "removed-files-size", "bytes"),
    ("total-files-size-bytes", "total-files-size", "bytes"),
    ("added-positional-deletes", "added-position-deletes", "count"),
    ("removed-positional-deletes", "removed-position-deletes", "count"),
    ("total-positional-deletes", "total-position-deletes", "count"),
    ("added-equality-deletes", "added-equality-deletes", "count"),
    ("removed-equality-deletes", "removed-equality-deletes", "count"),
    ("total-equality-deletes", "total-equality-deletes", "count"),
)


def commit_report(table_name: str, snapshot: Snapshot) -> dict[str, Any]:
    """The ``commit-report`` of ``snapshot`` (Java's ``CommitReportParser`` JSON)."""
    summary = dict(snapshot.summary or {})
    metrics: dict[str, Any] = {}
    for name, key, unit in _COUNTERS:
        raw = summary.get(key)
        if raw is None:
            continue
        try:
            value = int(raw)
        except ValueError:
            continue  # a summary value that is not a count is not reported, as Java skips it
        metrics[name] = {"unit": unit, "value": value}
    report: dict[str, Any] = {
        "report-type": "commit-report",
        "table-name": table_name,
        "snapshot-id": snapshot.snapshot_id,
        "sequence-number": snapshot.sequence_number or 0,
        "operation": summary.get("operation", "append"),
        "metrics": metrics,
    }
    return report
