"""Tables with many snapshots for the maintenance tests, built without a data writer: small
Parquet files written with pyarrow, and snapshots committed through the transaction spine by a
test-only PendingChange that writes manifests and manifest lists with frazil's writers."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from frazil.catalog.memory import InMemoryCatalog
from frazil.manifest import (
    STATUS_ADDED,
    STATUS_DELETED,
    STATUS_EXISTING,
    read_manifest_list,
    read_manifests,
    write_manifest,
    write_manifest_list,
)
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot, SnapshotRef
from frazil.table._table import Table
from frazil.table.transaction import PendingChange, Transaction
from frazil.table.updates import AddSnapshot, SetSnapshotRef, TableUpdate
from frazil.types import LongType, StringType, optional, required

SCHEMA = Schema(required(1, "id", LongType()), optional(2, "cat", StringType()))
SPEC = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),))
DAY_MS = 24 * 60 * 60 * 1000
_IDS = itertools.count(1000)


def make_table(warehouse: Path, name: str = "t", **properties: str) -> Table:
    catalog = InMemoryCatalog(warehouse=str(warehouse))
    catalog.create_namespace("db")
    return catalog.create_table(f"db.{name}", SCHEMA, partition_spec=SPEC, properties=properties)


def write_data_file(
    table: Table, ids: Sequence[int], cat: str | None, *, content: int = 0
) -> dict[str, Any]:
    """A Parquet file of rows ``(id, cat)`` (content 0), or of position deletes (content 1,
    ``ids`` being positions in ``cat``... unused here) under the table's data directory, and
    its ``data_file`` struct."""
    directory = f"{table.location()}/data/cat={cat}"
    Path(directory).mkdir(parents=True, exist_ok=True)
    location = f"{directory}/{uuid.uuid4()}.parquet"
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"1"}),
            pa.field("cat", pa.string(), metadata={b"PARQUET:field_id": b"2"}),
        ]
    )
    pq.write_table(pa.table({"id": list(ids), "cat": [cat] * len(ids)}, schema=schema), location)
    return {
        "content": content,
        "file_path": location,
        "file_format": "PARQUET",
        "partition": {"cat": cat},
        "record_count": len(ids),
        "file_size_in_bytes": Path(location).stat().st_size,
    }


class _Commit(PendingChange):
    """A test-only snapshot producer: adds ``added`` files and removes the files at
    ``removed`` (rewriting the manifests that hold them), on ``branch``."""

    def __init__(
        self,
        table: Table,
        added: Sequence[dict[str, Any]],
        removed: Iterable[str],
        branch: str,
        timestamp_ms: int,
        operation: str,
    ) -> None:
        self.table = table
        self.added = list(added)
        self.removed = set(removed)
        self.branch = branch
        self.timestamp_ms = timestamp_ms
        self.operation = operation
        self.snapshot_id = next(_IDS)
        # The transaction asks once when the change is added and again to commit, on the same
        # base: build once per base, so that no stray files are left behind.
        self._built: dict[tuple[int | None, int], tuple[TableUpdate, ...]] = {}

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        parent = staged.snapshot_by_name(self.branch)
        key = (None if parent is None else parent.snapshot_id, staged.last_sequence_number)
        if key not in self._built:
            self._built[key] = self._build(staged)
        return self._built[key]

    def _build(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        io = self.table.io
        metadata_dir = f"{staged.location}/metadata"
        parent = staged.snapshot_by_name(self.branch)
        rows: list[dict[str, Any]] = []
        if parent is not None and parent.manifest_list:
            rows = read_manifest_list(parent.manifest_list, io=io).to_pylist()
        kept = []
        sequence_number = staged.last_sequence_number + 1
        for row, entries in zip(rows, read_manifests(rows, io=io) if rows else [], strict=True):
            paths = entries.column("data_file").combine_chunks().field("file_path").to_pylist()
            if not self.removed.intersection(paths):
                kept.append(row)
                continue
            rewritten = []
            for entry in entries.to_pylist():
                if entry["status"] == STATUS_DELETED:
                    continue
                if entry["data_file"]["file_path"] in self.removed:
                    entry["status"] = STATUS_DELETED
                    entry["snapshot_id"] = self.snapshot_id
                else:
                    entry["status"] = STATUS_EXISTING
                rewritten.append(entry)
            kept.append(self._manifest(staged, metadata_dir, rewritten, row["content"]))
        new = []
        data = [f for f in self.added if f["content"] == 0]
        deletes = [f for f in self.added if f["content"] != 0]
        for files, content in ((data, 0), (deletes, 1)):
            if files:
                entries = [
                    {"status": STATUS_ADDED, "snapshot_id": self.snapshot_id, "data_file": f}
                    for f in files
                ]
                new.append(self._manifest(staged, metadata_dir, entries, content))
        manifest_list = f"{metadata_dir}/snap-{self.snapshot_id}-1-{uuid.uuid4()}.avro"
        write_manifest_list(
            manifest_list,
            [*new, *kept],
            snapshot_id=self.snapshot_id,
            sequence_number=sequence_number,
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            io=io,
        )
        snapshot = Snapshot(
            snapshot_id=self.snapshot_id,
            parent_snapshot_id=None if parent is None else parent.snapshot_id,
            timestamp_ms=self.timestamp_ms,
            sequence_number=sequence_number,
            manifest_list=manifest_list,
            summary={"operation": self.operation},
            schema_id=staged.current_schema_id,
        )
        old = staged.refs.get(self.branch)
        ref = SnapshotRef.branch(self.snapshot_id) if old is None else old
        return (
            AddSnapshot(snapshot),
            SetSnapshotRef.of(
                self.branch, SnapshotRef(self.snapshot_id, ref.type, *_retention(ref))
            ),
        )

    def _manifest(
        self, staged: TableMetadata, metadata_dir: str, entries: list[dict[str, Any]], content: int
    ) -> dict[str, Any]:
        return write_manifest(
            f"{metadata_dir}/{uuid.uuid4()}-m0.avro",
            entries,
            schema=staged.schema().to_json(),
            spec=SPEC.to_json(),
            snapshot_id=self.snapshot_id,
            content="deletes" if content else "data",
            io=self.table.io,
        )


def _retention(ref: SnapshotRef) -> tuple[int | None, int | None, int | None]:
    return ref.min_snapshots_to_keep, ref.max_snapshot_age_ms, ref.max_ref_age_ms


def commit(
    table: Table,
    added: Sequence[dict[str, Any]] = (),
    removed: Iterable[str] = (),
    *,
    branch: str = "main",
    timestamp_ms: int,
    operation: str = "append",
) -> int:
    """Commit a snapshot; returns its id."""
    change = _Commit(table, added, removed, branch, timestamp_ms, operation)
    transaction = Transaction(table)
    transaction.add_change(change)
    transaction.commit_transaction()
    return change.snapshot_id


def files_under(root: str) -> set[str]:
    return {str(p) for p in Path(root).rglob("*") if p.is_file()}


def rows_of(table: Table, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    result = table.scan(snapshot_id=snapshot_id).to_arrow()
    return sorted(
        zip(result.column("id").to_pylist(), result.column("cat").to_pylist(), strict=True)
    )
