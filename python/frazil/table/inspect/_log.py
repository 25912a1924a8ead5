"""The metadata tables read from the table metadata alone (Java's ``SnapshotsTable``,
``HistoryTable``, ``RefsTable`` and ``MetadataLogEntriesTable``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from frazil.errors import NotFoundError
from frazil.table.inspect._common import TIMESTAMPTZ, field, micros

if TYPE_CHECKING:
    from frazil.table._table import Table

SNAPSHOTS_SCHEMA = pa.schema(
    [
        field("committed_at", TIMESTAMPTZ, True),
        field("snapshot_id", pa.int64(), True),
        field("parent_id", pa.int64()),
        field("operation", pa.string()),
        field("manifest_list", pa.string()),
        field("summary", pa.map_(pa.string(), pa.field("value", pa.string(), nullable=False))),
    ]
)

HISTORY_SCHEMA = pa.schema(
    [
        field("made_current_at", TIMESTAMPTZ, True),
        field("snapshot_id", pa.int64(), True),
        field("parent_id", pa.int64()),
        field("is_current_ancestor", pa.bool_(), True),
    ]
)

REFS_SCHEMA = pa.schema(
    [
        field("name", pa.string(), True),
        field("type", pa.string(), True),
        field("snapshot_id", pa.int64(), True),
        field("max_reference_age_in_ms", pa.int64()),
        field("min_snapshots_to_keep", pa.int32()),
        field("max_snapshot_age_in_ms", pa.int64()),
    ]
)

METADATA_LOG_ENTRIES_SCHEMA = pa.schema(
    [
        field("timestamp", TIMESTAMPTZ, True),
        field("file", pa.string(), True),
        field("latest_snapshot_id", pa.int64()),
        field("latest_schema_id", pa.int32()),
        field("latest_sequence_number", pa.int64()),
    ]
)


def snapshots_table(table: Table) -> pa.Table:
    rows = [
        {
            "committed_at": micros(s.timestamp_ms),
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "operation": s.operation,
            "manifest_list": s.manifest_list,
            # Java's Snapshot.summary() leaves the operation out (it has its own column).
            "summary": None
            if s.summary is None
            else [(k, v) for k, v in s.summary.items() if k != "operation"],
        }
        for s in table.metadata.snapshots
    ]
    return pa.Table.from_pylist(rows, schema=SNAPSHOTS_SCHEMA)


def _ancestor_ids(table: Table, snapshot_id: int | None) -> Iterable[int]:
    """``snapshot_id`` and its parents, newest first, while they are in the metadata
    (expired parents end the chain, as in Java's ``SnapshotUtil.ancestorIds``)."""
    metadata = table.metadata
    seen: set[int] = set()
    while snapshot_id is not None and snapshot_id not in seen:
        snapshot = metadata.snapshot_by_id(snapshot_id)
        if snapshot is None:
            return
        seen.add(snapshot_id)
        yield snapshot_id
        snapshot_id = snapshot.parent_snapshot_id


def history_table(table: Table) -> pa.Table:
    metadata = table.metadata
    ancestors = set(_ancestor_ids(table, metadata.current_snapshot_id))
    rows = []
    for entry in metadata.snapshot_log:
        snapshot = metadata.snapshot_by_id(entry.snapshot_id)
        rows.append(
            {
                "made_current_at": micros(entry.timestamp_ms),
                "snapshot_id": entry.snapshot_id,
                "parent_id": None if snapshot is None else snapshot.parent_snapshot_id,
                "is_current_ancestor": entry.snapshot_id in ancestors,
            }
        )
    return pa.Table.from_pylist(rows, schema=HISTORY_SCHEMA)


def refs_table(table: Table) -> pa.Table:
    rows = [
        {
            "name": name,
            "type": ref.type.value.upper(),
            "snapshot_id": ref.snapshot_id,
            "max_reference_age_in_ms": ref.max_ref_age_ms,
            "min_snapshots_to_keep": ref.min_snapshots_to_keep,
            "max_snapshot_age_in_ms": ref.max_snapshot_age_ms,
        }
        for name, ref in table.metadata.refs.items()
    ]
    return pa.Table.from_pylist(rows, schema=REFS_SCHEMA)


def metadata_log_entries_table(table: Table) -> pa.Table:
    """Each metadata file with the snapshot current when it was written (Java's
    ``SnapshotUtil.snapshotIdAsOfTime``: the last snapshot-log entry at or before the file's
    timestamp)."""
    metadata = table.metadata
    files: list[tuple[int, str]] = [
        (e.timestamp_ms, e.metadata_file) for e in metadata.metadata_log
    ]
    current = table.metadata_location or metadata.metadata_location
    if current is None:
        raise NotFoundError(
            "metadata_log_entries needs the table's metadata file location; this table "
            "was built from metadata without one"
        )
    files.append((metadata.last_updated_ms, current))
    rows = []
    for timestamp_ms, location in files:
        snapshot_id = None
        for entry in metadata.snapshot_log:
            if entry.timestamp_ms <= timestamp_ms:
                snapshot_id = entry.snapshot_id
        snapshot = None if snapshot_id is None else metadata.snapshot_by_id(snapshot_id)
        rows.append(
            {
                "timestamp": micros(timestamp_ms),
                "file": location,
                "latest_snapshot_id": snapshot_id,
                "latest_schema_id": None if snapshot is None else snapshot.schema_id,
                "latest_sequence_number": None if snapshot is None else snapshot.sequence_number,
            }
        )
    return pa.Table.from_pylist(rows, schema=METADATA_LOG_ENTRIES_SCHEMA)
