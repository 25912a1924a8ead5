"""Snapshot summaries as Java writes them (spec: "Snapshots", optional summary fields; Java's
``SnapshotSummary`` and ``SnapshotProducer.summary``).

A :class:`SummaryBuilder` counts the files a commit adds and removes, in total and per
partition (``partitions.<path>`` entries, kept while the number of changed partitions stays
within ``write.summary.partition-limit``, default 0), and :func:`with_totals` carries the
``total-*`` counters forward from the branch's previous snapshot. A counter that is 0 is left
out; a total is left out when the previous one is unknown (pitfalls: "Summary totals").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from frazil.manifest import DataFile
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table.write._partition import Partitioner

__all__ = ["SummaryBuilder", "with_totals"]

CONTENT_DATA = 0
CONTENT_POSITION_DELETES = 1
CONTENT_EQUALITY_DELETES = 2

# (total, added, removed): SnapshotProducer.summary's updateTotal calls, in Java's order.
_TOTALS = (
    ("total-records", "added-records", "deleted-records"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    ("total-data-files", "added-data-files", "deleted-data-files"),
    ("total-delete-files", "added-delete-files", "removed-delete-files"),
    ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
    ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"),
)


@dataclass
class _Metrics:
    """Java's ``SnapshotSummary.UpdateMetrics``."""

    added_size: int = 0
    removed_size: int = 0
    added_files: int = 0
    removed_files: int = 0
    added_eq_delete_files: int = 0
    removed_eq_delete_files: int = 0
    added_pos_delete_files: int = 0
    removed_pos_delete_files: int = 0
    added_dvs: int = 0
    removed_dvs: int = 0
    added_delete_files: int = 0
    removed_delete_files: int = 0
    added_records: int = 0
    deleted_records: int = 0
    added_pos_deletes: int = 0
    removed_pos_deletes: int = 0
    added_eq_deletes: int = 0
    removed_eq_deletes: int = 0

    def count(self, file: DataFile, added: bool) -> None:
        size = file.file_size_in_bytes or 0
        if file.content_size_in_bytes is not None and file.referenced_data_file is not None:
            size = file.content_size_in_bytes  # a deletion vector counts its blob (Java)
        records = file.record_count or 0
        content = file.content or CONTENT_DATA
        prefix = "added" if added else "removed"
        setattr(self, f"{prefix}_size", getattr(self, f"{prefix}_size") + size)
        if content == CONTENT_DATA:
            if added:
                self.added_files += 1
                self.added_records += records
            else:
                self.removed_files += 1
                self.deleted_records += records
        elif content == CONTENT_POSITION_DELETES:
            is_dv = file.file_format is not None and file.file_format.upper() == "PUFFIN"
            kind = "dvs" if is_dv else "pos_delete_files"
            setattr(self, f"{prefix}_{kind}", getattr(self, f"{prefix}_{kind}") + 1)
            setattr(self, f"{prefix}_delete_files", getattr(self, f"{prefix}_delete_files") + 1)
            setattr(self, f"{prefix}_pos_deletes", getattr(self, f"{prefix}_pos_deletes") + records)
        else:
            setattr(
                self, f"{prefix}_eq_delete_files", getattr(self, f"{prefix}_eq_delete_files") + 1
            )
            setattr(self, f"{prefix}_delete_files", getattr(self, f"{prefix}_delete_files") + 1)
            setattr(self, f"{prefix}_eq_deletes", getattr(self, f"{prefix}_eq_deletes") + records)

    def items(self) -> list[tuple[str, str]]:
        """Java's ``UpdateMetrics.addTo``: the non-zero counters, in Java's order."""
        pairs = (
            ("added-data-files", self.added_files),
            ("deleted-data-files", self.removed_files),
            ("added-equality-delete-files", self.added_eq_delete_files),
            ("removed-equality-delete-files", self.removed_eq_delete_files),
            ("added-position-delete-files", self.added_pos_delete_files),
            ("removed-position-delete-files", self.removed_pos_delete_files),
            ("added-delete-files", self.added_delete_files),
            ("removed-delete-files", self.removed_delete_files),
            ("added-dvs", self.added_dvs),
            ("removed-dvs", self.removed_dvs),
            ("added-records", self.added_records),
            ("deleted-records", self.deleted_records),
            ("added-files-size", self.added_size),
            ("removed-files-size", self.removed_size),
            ("added-position-deletes", self.added_pos_deletes),
            ("removed-position-deletes", self.removed_pos_deletes),
            ("added-equality-deletes", self.added_eq_deletes),
            ("removed-equality-deletes", self.removed_eq_deletes),
        )
        return [(key, str(value)) for key, value in pairs if value > 0]


class SummaryBuilder:
    """The summary of one commit's file changes (Java's ``SnapshotSummary.Builder``)."""

    def __init__(self, schema: Schema, partition_limit: int = 0) -> None:
        self._schema = schema
        self._limit = partition_limit
        self._metrics = _Metrics()
        self._partitions: dict[str, _Metrics] = {}
        self._properties: dict[str, str] = {}
        self._partitioners: dict[int, Partitioner] = {}

    def set(self, key: str, value: str) -> None:
        self._properties[key] = value

    def added_file(self, spec: PartitionSpec, file: DataFile) -> None:
        self._count(spec, file, True)

    def deleted_file(self, spec: PartitionSpec, file: DataFile) -> None:
        self._count(spec, file, False)

    def _count(self, spec: PartitionSpec, file: DataFile, added: bool) -> None:
        self._metrics.count(file, added)
        partitioner = self._partitioners.get(spec.spec_id)
        if partitioner is None:
            partitioner = self._partitioners[spec.spec_id] = Partitioner(self._schema, spec)
        values = tuple((file.partition or {}).get(f.name) for f in spec.fields)
        path = partitioner._path(values) if spec.fields else ""
        self._partitions.setdefault(path, _Metrics()).count(file, added)

    def build(self) -> dict[str, str]:
        out = dict(self._properties)
        out.update(self._metrics.items())
        out["changed-partition-count"] = str(len(self._partitions))
        if len(self._partitions) <= self._limit:
            if self._partitions:
                out["partition-summaries-included"] = "true"
            for path, metrics in self._partitions.items():
                if path:
                    out[f"partitions.{path}"] = ",".join(f"{k}={v}" for k, v in metrics.items())
        return out


def _long(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def with_totals(
    summary: Mapping[str, str], previous: Mapping[str, str] | None, operation: str
) -> dict[str, str]:
    """``summary`` with the ``operation`` first and the ``total-*`` counters from the
    ``previous`` snapshot's summary (None: the branch has no snapshot yet, totals start at 0;
    an unknown or unparsable previous total leaves the new one out, as Java does)."""
    if previous is None:
        previous = {total: "0" for total, _, _ in _TOTALS}
    out = {"operation": operation, **summary}
    for total_key, added_key, removed_key in _TOTALS:
        total = _long(previous.get(total_key))
        if total is None:
            continue
        added = _long(summary.get(added_key))
        removed = _long(summary.get(removed_key))
        if total >= 0 and added is not None:
            total += added
        if total >= 0 and removed is not None:
            total -= removed
        if total >= 0:
            out[total_key] = str(total)
    return out
