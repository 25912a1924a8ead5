"""Metrics reports the REST client posts (spec: reportMetrics, ``ReportMetricsRequest``): a
commit report after each commit that made a new snapshot, its counters taken from the
snapshot summary as Java's ``CommitMetricsResult.from`` takes them. The client does not time
its commits, so ``total-duration`` and ``attempts`` (optional in Java's parser) are left out.

Reports are posted by :class:`ReportSender` on a thread of their own, so a commit returns
without waiting for its report's round trip (a commit through ``frazil serve`` should cost
about what a direct commit costs: benches/bench_rest.py).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from typing import Any

from frazil.snapshots import Snapshot

__all__ = ["REPORTS", "ReportSender", "commit_report"]

LOG = logging.getLogger("frazil.catalog.rest")

# Reports waiting to be sent beyond this are dropped (with a log line): a server that stopped
# answering must not let them pile up in memory.
MAX_PENDING_REPORTS = 256


class ReportSender:
    """Sends reports in the background, one at a time, best effort (a report that fails is
    logged by the sender it runs; Java's RESTMetricsReporter never fails a commit either).
    Pending reports are sent before the interpreter exits (the executor's own exit hook); a
    forked child starts with a fresh sender, since the parent's thread does not exist there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._executor = None
        self._pending = set()

    def submit(self, send: Callable[[], None]) -> None:
        with self._lock:
            if len(self._pending) >= MAX_PENDING_REPORTS:
                LOG.warning("%d metrics reports still unsent: one dropped", len(self._pending))
                return
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="frazil-rest-metrics")
            future = self._executor.submit(send)
            self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every report submitted so far is sent (or ``timeout`` seconds); True when
        none is left."""
        with self._lock:
            pending = set(self._pending)
        _, not_done = wait_all(pending, timeout=timeout)
        return not not_done


# One sender for every RestCatalog of the process (one thread, one fork hook).
REPORTS = ReportSender()

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
