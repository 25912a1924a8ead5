"""The partitions metadata table (Java's ``PartitionsTable``): per partition of the table-wide
partition struct, counts and sizes of the live files and the newest snapshot that added one."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import InvalidDataError
from frazil.manifest import STATUS_DELETED, read_manifests
from frazil.snapshots import Snapshot
from frazil.table.inspect._common import (
    TIMESTAMPTZ,
    field,
    micros,
    partition_struct,
    snapshot_manifests,
    spec,
    table_from_pylist,
)

if TYPE_CHECKING:
    from frazil.table._table import Table


def _partitions_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``PartitionsTable`` (without ``partition`` and ``spec_id`` when unpartitioned)."""
    fields = [
        field("partition", partition or pa.struct([]), True),
        field("spec_id", pa.int32(), True),
        field("record_count", pa.int64(), True),
        field("file_count", pa.int32(), True),
        field("total_data_file_size_in_bytes", pa.int64(), True),
        field("position_delete_record_count", pa.int64(), True),
        field("position_delete_file_count", pa.int32(), True),
        field("equality_delete_record_count", pa.int64(), True),
        field("equality_delete_file_count", pa.int32(), True),
        field("last_updated_at", TIMESTAMPTZ),
        field("last_updated_snapshot_id", pa.int64()),
    ]
    return fields if partition is not None else fields[2:]


def _group_key(value: Any) -> Any:
    """A partition value as a grouping key: every NaN one key (Java compares partitions with
    its comparators, under which NaN equals NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return ("NaN",)
    return value


class _Partition:
    """One row of the partitions table, accumulated (Java's ``PartitionsTable.Partition``)."""

    def __init__(self, partition: Any) -> None:
        self.partition = partition
        self.spec_id = 0
        self.counts = {"data": [0, 0, 0], "position": [0, 0], "equality": [0, 0]}
        self.last_updated_at: int | None = None
        self.last_updated_snapshot_id: int | None = None

    def update(
        self, snapshot: Snapshot | None, spec_id: int, content: int, records: int, size: int
    ) -> None:
        if snapshot is not None:
            committed = micros(snapshot.timestamp_ms)
            if self.last_updated_at is None or committed > self.last_updated_at:
                self.spec_id = spec_id
                self.last_updated_at = committed
                self.last_updated_snapshot_id = snapshot.snapshot_id
        if content == 0:
            data = self.counts["data"]
            data[0] += records
            data[1] += 1
            data[2] += size
        elif content in (1, 2):
            deletes = self.counts["position" if content == 1 else "equality"]
            deletes[0] += records
            deletes[1] += 1
        else:
            raise InvalidDataError(f"a manifest entry has unknown content {content}")

    def row(self) -> dict[str, Any]:
        data, position, equality = (
            self.counts["data"],
            self.counts["position"],
            self.counts["equality"],
        )
        return {
            "partition": self.partition,
            "spec_id": self.spec_id,
            "record_count": data[0],
            "file_count": data[1],
            "total_data_file_size_in_bytes": data[2],
            "position_delete_record_count": position[0],
            "position_delete_file_count": position[1],
            "equality_delete_record_count": equality[0],
            "equality_delete_file_count": equality[1],
            "last_updated_at": self.last_updated_at,
            "last_updated_snapshot_id": self.last_updated_snapshot_id,
        }


def partitions_table(table: Table, snapshot_id: int | None) -> pa.Table:
    """Per partition of the table-wide partition struct: counts and sizes of the live data
    files, position and equality delete files, and the newest snapshot that added one of
    them (Java's ``PartitionsTable``; its ``spec_id`` is that newest file's spec)."""
    unified = partition_struct(table)
    schema = pa.schema(_partitions_fields(unified.arrow))
    manifests = snapshot_manifests(table, snapshot_id)
    columns = [
        "status",
        "snapshot_id",
        "data_file.content",
        "data_file.partition",
        "data_file.record_count",
        "data_file.file_size_in_bytes",
    ]
    tables = read_manifests(manifests, columns, io=table.io) if manifests else []
    groups: dict[tuple[Any, ...], _Partition] = {}
    metadata = table.metadata
    for row, entries in zip(manifests, tables, strict=True):
        spec_id = row["partition_spec_id"]
        entries = entries.filter(pc.not_equal(entries.column("status"), STATUS_DELETED))
        files = entries.column("data_file").combine_chunks()
        if unified.arrow is None:
            partitions: list[Any] = [None] * entries.num_rows
        else:
            coerced = unified.coerce(
                files.field("partition"), spec(table, spec_id), entries.num_rows
            )
            partitions = coerced.to_pylist()
        for partition, snapshot_ref, content, records, size in zip(
            partitions,
            entries.column("snapshot_id").to_pylist(),
            files.field("content").to_pylist(),
            files.field("record_count").to_pylist(),
            files.field("file_size_in_bytes").to_pylist(),
            strict=True,
        ):
            key = () if partition is None else tuple(map(_group_key, partition.values()))
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Partition(partition)
            group.update(
                None if snapshot_ref is None else metadata.snapshot_by_id(snapshot_ref),
                spec_id,
                content,
                records,
                size,
            )
    rows = [g.row() for g in groups.values()]
    if unified.arrow is None:
        for r in rows:
            del r["partition"], r["spec_id"]
    return table_from_pylist(rows, schema)
