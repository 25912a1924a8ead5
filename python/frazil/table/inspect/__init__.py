"""Metadata tables (Java's ``SnapshotsTable``, ``HistoryTable``, ``RefsTable``,
``MetadataLogEntriesTable``, ``ManifestsTable``, ``AllManifestsTable``, ``ManifestEntriesTable``,
``FilesTable`` and kin, ``PartitionsTable``) as pyarrow Tables, reached as ``table.inspect``.

Columns, their order, types and nullability are Java 1.10's: Spark's ``db.t.snapshots`` and
friends show the same. Timestamps are ``timestamp[us, UTC]`` (Iceberg ``timestamptz``).
Manifest lists and manifests are read through :mod:`frazil.manifest` (the Rust decoders) and
the table's FileIO. ``readable_metrics`` (Java's derived column of decoded bounds) is not
produced.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import InvalidDataError, NotFoundError
from frazil.manifest import STATUS_DELETED, read_manifest_list, read_manifests
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table._human import human_string
from frazil.table._metadata_columns import unified_partition_type
from frazil.table.read import arrow_schema
from frazil.types import NestedField

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["InspectTable"]

TIMESTAMPTZ = pa.timestamp("us", tz="UTC")


def _field(name: str, type_: pa.DataType, required: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=not required)


SNAPSHOTS_SCHEMA = pa.schema(
    [
        _field("committed_at", TIMESTAMPTZ, True),
        _field("snapshot_id", pa.int64(), True),
        _field("parent_id", pa.int64()),
        _field("operation", pa.string()),
        _field("manifest_list", pa.string()),
        _field("summary", pa.map_(pa.string(), pa.field("value", pa.string(), nullable=False))),
    ]
)

HISTORY_SCHEMA = pa.schema(
    [
        _field("made_current_at", TIMESTAMPTZ, True),
        _field("snapshot_id", pa.int64(), True),
        _field("parent_id", pa.int64()),
        _field("is_current_ancestor", pa.bool_(), True),
    ]
)

REFS_SCHEMA = pa.schema(
    [
        _field("name", pa.string(), True),
        _field("type", pa.string(), True),
        _field("snapshot_id", pa.int64(), True),
        _field("max_reference_age_in_ms", pa.int64()),
        _field("min_snapshots_to_keep", pa.int32()),
        _field("max_snapshot_age_in_ms", pa.int64()),
    ]
)

METADATA_LOG_ENTRIES_SCHEMA = pa.schema(
    [
        _field("timestamp", TIMESTAMPTZ, True),
        _field("file", pa.string(), True),
        _field("latest_snapshot_id", pa.int64()),
        _field("latest_schema_id", pa.int32()),
        _field("latest_sequence_number", pa.int64()),
    ]
)


def _summaries(contains_nan_required: bool) -> pa.DataType:
    element = pa.struct(
        [
            _field("contains_null", pa.bool_(), True),
            _field("contains_nan", pa.bool_(), contains_nan_required),
            _field("lower_bound", pa.string()),
            _field("upper_bound", pa.string()),
        ]
    )
    return pa.list_(pa.field("element", element, nullable=False))


MANIFESTS_SCHEMA = pa.schema(
    [
        _field("content", pa.int32(), True),
        _field("path", pa.string(), True),
        _field("length", pa.int64(), True),
        _field("partition_spec_id", pa.int32(), True),
        _field("added_snapshot_id", pa.int64(), True),
        _field("added_data_files_count", pa.int32(), True),
        _field("existing_data_files_count", pa.int32(), True),
        _field("deleted_data_files_count", pa.int32(), True),
        _field("added_delete_files_count", pa.int32(), True),
        _field("existing_delete_files_count", pa.int32(), True),
        _field("deleted_delete_files_count", pa.int32(), True),
        _field("partition_summaries", _summaries(False), True),
    ]
)

# Java's AllManifestsTable: looser nullability, a required contains_nan, and the snapshot
# whose manifest list was read.
ALL_MANIFESTS_SCHEMA = pa.schema(
    [
        _field("content", pa.int32(), True),
        _field("path", pa.string(), True),
        _field("length", pa.int64(), True),
        _field("partition_spec_id", pa.int32()),
        _field("added_snapshot_id", pa.int64()),
        _field("added_data_files_count", pa.int32()),
        _field("existing_data_files_count", pa.int32()),
        _field("deleted_data_files_count", pa.int32()),
        _field("added_delete_files_count", pa.int32(), True),
        _field("existing_delete_files_count", pa.int32(), True),
        _field("deleted_delete_files_count", pa.int32(), True),
        _field("partition_summaries", _summaries(True)),
        _field("reference_snapshot_id", pa.int64(), True),
    ]
)


def _int_map(value: pa.DataType) -> pa.DataType:
    return pa.map_(pa.field("key", pa.int32(), False), pa.field("value", value, False))


def _data_file_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``DataFile.getType``; without ``partition`` when the table has no partition
    field (Java drops the empty struct)."""
    fields = [
        _field("content", pa.int32()),
        _field("file_path", pa.string(), True),
        _field("file_format", pa.string(), True),
        _field("spec_id", pa.int32()),
        _field("partition", partition or pa.struct([]), True),
        _field("record_count", pa.int64(), True),
        _field("file_size_in_bytes", pa.int64(), True),
        _field("column_sizes", _int_map(pa.int64())),
        _field("value_counts", _int_map(pa.int64())),
        _field("null_value_counts", _int_map(pa.int64())),
        _field("nan_value_counts", _int_map(pa.int64())),
        _field("lower_bounds", _int_map(pa.binary())),
        _field("upper_bounds", _int_map(pa.binary())),
        _field("key_metadata", pa.binary()),
        _field("split_offsets", pa.list_(pa.field("element", pa.int64(), False))),
        _field("equality_ids", pa.list_(pa.field("element", pa.int32(), False))),
        _field("sort_order_id", pa.int32()),
        _field("first_row_id", pa.int64()),
        _field("referenced_data_file", pa.string()),
        _field("content_offset", pa.int64()),
        _field("content_size_in_bytes", pa.int64()),
    ]
    if partition is None:
        fields = [f for f in fields if f.name != "partition"]
    return fields


def _entries_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``ManifestEntry.getSchema``."""
    return [
        _field("status", pa.int32(), True),
        _field("snapshot_id", pa.int64()),
        _field("sequence_number", pa.int64()),
        _field("file_sequence_number", pa.int64()),
        _field("data_file", pa.struct(_data_file_fields(partition)), True),
    ]


def _partitions_fields(partition: pa.StructType | None) -> list[pa.Field]:
    """Java's ``PartitionsTable`` (without ``partition`` and ``spec_id`` when unpartitioned)."""
    fields = [
        _field("partition", partition or pa.struct([]), True),
        _field("spec_id", pa.int32(), True),
        _field("record_count", pa.int64(), True),
        _field("file_count", pa.int32(), True),
        _field("total_data_file_size_in_bytes", pa.int64(), True),
        _field("position_delete_record_count", pa.int64(), True),
        _field("position_delete_file_count", pa.int32(), True),
        _field("equality_delete_record_count", pa.int64(), True),
        _field("equality_delete_file_count", pa.int32(), True),
        _field("last_updated_at", TIMESTAMPTZ),
        _field("last_updated_snapshot_id", pa.int64()),
    ]
    return fields if partition is not None else fields[2:]


def _micros(millis: int) -> int:
    return millis * 1000


@dataclass(frozen=True)
class _Unified:
    """The table-wide partition struct: its partition field ids and Arrow type (None when no
    spec has a field)."""

    field_ids: tuple[int, ...]
    arrow: pa.StructType | None

    def coerce(self, partition: pa.StructArray, spec: PartitionSpec, rows: int) -> pa.Array:
        """``partition`` (of ``spec``'s struct) as this struct: fields by id, the ones
        ``spec`` lacks null (Java's ``PartitionUtil.coercePartition``)."""
        assert self.arrow is not None
        position = {f.field_id: i for i, f in enumerate(spec.fields)}
        children = []
        for field_id, target in zip(self.field_ids, self.arrow, strict=True):
            index = position.get(field_id)
            if index is None:
                children.append(pa.nulls(rows, target.type))
            else:
                children.append(partition.field(index).cast(target.type))
        return pa.StructArray.from_arrays(children, fields=list(self.arrow))


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
            committed = _micros(snapshot.timestamp_ms)
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


class InspectTable:
    """The metadata tables of one :class:`~frazil.table.Table` (``table.inspect``)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    # -- metadata only ---------------------------------------------------------------------

    def snapshots(self) -> pa.Table:
        """One row per snapshot, in metadata order (Java's ``SnapshotsTable``)."""
        rows = [
            {
                "committed_at": _micros(s.timestamp_ms),
                "snapshot_id": s.snapshot_id,
                "parent_id": s.parent_snapshot_id,
                "operation": s.operation,
                "manifest_list": s.manifest_list,
                # Java's Snapshot.summary() leaves the operation out (it has its own column).
                "summary": None
                if s.summary is None
                else [(k, v) for k, v in s.summary.items() if k != "operation"],
            }
            for s in self._table.metadata.snapshots
        ]
        return pa.Table.from_pylist(rows, schema=SNAPSHOTS_SCHEMA)

    def history(self) -> pa.Table:
        """One row per snapshot-log entry; ``is_current_ancestor`` says whether the snapshot is
        the current one or one of its ancestors (Java's ``HistoryTable``)."""
        metadata = self._table.metadata
        ancestors = set(self._ancestor_ids(metadata.current_snapshot_id))
        rows = []
        for entry in metadata.snapshot_log:
            snapshot = metadata.snapshot_by_id(entry.snapshot_id)
            rows.append(
                {
                    "made_current_at": _micros(entry.timestamp_ms),
                    "snapshot_id": entry.snapshot_id,
                    "parent_id": None if snapshot is None else snapshot.parent_snapshot_id,
                    "is_current_ancestor": entry.snapshot_id in ancestors,
                }
            )
        return pa.Table.from_pylist(rows, schema=HISTORY_SCHEMA)

    def refs(self) -> pa.Table:
        """One row per branch or tag; ``type`` in upper case as Java's enum name."""
        rows = [
            {
                "name": name,
                "type": ref.type.value.upper(),
                "snapshot_id": ref.snapshot_id,
                "max_reference_age_in_ms": ref.max_ref_age_ms,
                "min_snapshots_to_keep": ref.min_snapshots_to_keep,
                "max_snapshot_age_in_ms": ref.max_snapshot_age_ms,
            }
            for name, ref in self._table.metadata.refs.items()
        ]
        return pa.Table.from_pylist(rows, schema=REFS_SCHEMA)

    def metadata_log_entries(self) -> pa.Table:
        """The previous metadata files and then the current one, each with the snapshot that
        was current when it was written (Java's ``SnapshotUtil.snapshotIdAsOfTime``: the last
        snapshot-log entry at or before the file's timestamp)."""
        metadata = self._table.metadata
        files: list[tuple[int, str]] = [
            (e.timestamp_ms, e.metadata_file) for e in metadata.metadata_log
        ]
        current = self._table.metadata_location or metadata.metadata_location
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
                    "timestamp": _micros(timestamp_ms),
                    "file": location,
                    "latest_snapshot_id": snapshot_id,
                    "latest_schema_id": None if snapshot is None else snapshot.schema_id,
                    "latest_sequence_number": None
                    if snapshot is None
                    else snapshot.sequence_number,
                }
            )
        return pa.Table.from_pylist(rows, schema=METADATA_LOG_ENTRIES_SCHEMA)

    # -- manifests -------------------------------------------------------------------------

    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        """The manifests of a snapshot (default: the current one), one row each, with the
        partition summaries' bounds as human strings (Java's ``ManifestsTable``)."""
        snapshot = self._snapshot(snapshot_id)
        rows = [] if snapshot is None else self._manifest_rows(snapshot)
        return pa.Table.from_pylist([self._manifest_row(r) for r in rows], schema=MANIFESTS_SCHEMA)

    def all_manifests(self) -> pa.Table:
        """The manifests of every snapshot, each with the snapshot whose list names it in
        ``reference_snapshot_id`` (Java's ``AllManifestsTable``: a manifest shared by several
        snapshots appears once per snapshot)."""
        out = []
        for snapshot in self._table.metadata.snapshots:
            for row in self._manifest_rows(snapshot):
                out.append(
                    {**self._manifest_row(row), "reference_snapshot_id": snapshot.snapshot_id}
                )
        return pa.Table.from_pylist(out, schema=ALL_MANIFESTS_SCHEMA)

    def _manifest_rows(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        if snapshot.manifest_list is None:
            raise NotFoundError(
                f"snapshot {snapshot.snapshot_id} has no manifest list (a v1 snapshot with "
                "embedded manifests): frazil does not read those"
            )
        rows: list[dict[str, Any]] = read_manifest_list(
            snapshot.manifest_list, io=self._table.io
        ).to_pylist()
        return rows

    def _manifest_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        content = row["content"]
        data, deletes = content == 0, content == 1
        return {
            "content": content,
            "path": row["manifest_path"],
            "length": row["manifest_length"],
            "partition_spec_id": row["partition_spec_id"],
            "added_snapshot_id": row["added_snapshot_id"],
            "added_data_files_count": row["added_files_count"] if data else 0,
            "existing_data_files_count": row["existing_files_count"] if data else 0,
            "deleted_data_files_count": row["deleted_files_count"] if data else 0,
            "added_delete_files_count": row["added_files_count"] if deletes else 0,
            "existing_delete_files_count": row["existing_files_count"] if deletes else 0,
            "deleted_delete_files_count": row["deleted_files_count"] if deletes else 0,
            "partition_summaries": self._summaries(row["partition_spec_id"], row["partitions"]),
        }

    def _summaries(
        self, spec_id: int, summaries: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]] | None:
        if summaries is None:
            return None
        spec = self._spec(spec_id)
        partition_type = spec.partition_type(self._table.metadata.schema())
        if len(summaries) != len(spec.fields):
            raise InvalidDataError(
                f"a manifest of partition spec {spec_id} has {len(summaries)} partition "
                f"summaries for {len(spec.fields)} partition fields"
            )
        out = []
        for summary, field, typed in zip(
            summaries, spec.fields, partition_type.fields, strict=True
        ):
            out.append(
                {
                    "contains_null": summary["contains_null"],
                    "contains_nan": summary["contains_nan"],
                    "lower_bound": human_string(
                        field.transform, typed.field_type, summary["lower_bound"]
                    ),
                    "upper_bound": human_string(
                        field.transform, typed.field_type, summary["upper_bound"]
                    ),
                }
            )
        return out

    def _spec(self, spec_id: int) -> PartitionSpec:
        spec = self._table.metadata.spec_by_id(spec_id)
        if spec is None:
            raise InvalidDataError(
                f"a manifest names partition spec {spec_id}, which the table lacks"
            )
        return spec

    # -- entries and files -----------------------------------------------------------------

    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        """Every entry of a snapshot's manifests (default: the current snapshot), DELETED
        ones too, with inherited snapshot ids and sequence numbers (Java's
        ``ManifestEntriesTable``)."""
        snapshot = self._snapshot(snapshot_id)
        rows = [] if snapshot is None else self._manifest_rows(snapshot)
        return self._entries_table(rows, live_only=False)

    def files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data and delete files of a snapshot (Java's ``FilesTable``)."""
        return self._files(snapshot_id, contents=(0, 1))

    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data files of a snapshot (Java's ``DataFilesTable``)."""
        return self._files(snapshot_id, contents=(0,))

    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live delete files of a snapshot (Java's ``DeleteFilesTable``)."""
        return self._files(snapshot_id, contents=(1,))

    def all_files(self) -> pa.Table:
        """The live files of every manifest any snapshot lists, each manifest read once
        (Java's ``AllFilesTable``: a file kept by several manifests appears once per
        manifest)."""
        seen: dict[str, dict[str, Any]] = {}
        for snapshot in self._table.metadata.snapshots:
            for row in self._manifest_rows(snapshot):
                seen.setdefault(row["manifest_path"], row)
        entries = self._entries_table(list(seen.values()), live_only=True)
        return pa.Table.from_struct_array(entries.column("data_file").combine_chunks())

    def _files(self, snapshot_id: int | None, contents: tuple[int, ...]) -> pa.Table:
        snapshot = self._snapshot(snapshot_id)
        rows = [] if snapshot is None else self._manifest_rows(snapshot)
        rows = [r for r in rows if r["content"] in contents]
        entries = self._entries_table(rows, live_only=True)
        return pa.Table.from_struct_array(entries.column("data_file").combine_chunks())

    def _entries_table(self, manifests: list[dict[str, Any]], live_only: bool) -> pa.Table:
        unified = self._partition_struct()
        schema = pa.schema(_entries_fields(unified.arrow))
        tables = read_manifests(manifests, io=self._table.io) if manifests else []
        parts = []
        for row, table in zip(manifests, tables, strict=True):
            if live_only:
                table = table.filter(pc.not_equal(table.column("status"), STATUS_DELETED))
            parts.append(self._conform_entries(table, row["partition_spec_id"], unified, schema))
        if not parts:
            return schema.empty_table()
        return pa.concat_tables(parts)

    def _conform_entries(
        self, table: pa.Table, spec_id: int, unified: _Unified, schema: pa.Schema
    ) -> pa.Table:
        """One manifest's entries in the metadata table's shape: ``spec_id`` from the
        manifest list, the partition in the table-wide partition struct."""
        rows = table.num_rows
        data_file = table.column("data_file").combine_chunks()
        present = {data_file.type.field(i).name for i in range(data_file.type.num_fields)}
        file_type = schema.field("data_file").type
        children = []
        for field in file_type:
            if field.name == "spec_id":
                children.append(pa.array([spec_id] * rows, pa.int32()))
            elif field.name == "partition":
                children.append(
                    unified.coerce(data_file.field("partition"), self._spec(spec_id), rows)
                )
            elif field.name in present:
                children.append(data_file.field(field.name).cast(field.type))
            else:
                children.append(pa.nulls(rows, field.type))
        columns = [table.column(name).cast(schema.field(name).type) for name in schema.names[:4]]
        columns.append(pa.StructArray.from_arrays(children, fields=list(file_type)))
        return pa.Table.from_arrays(columns, schema=schema)

    def _partition_struct(self) -> _Unified:
        """Java's ``Partitioning.partitionType``: every partition field of every spec whose
        source column is still in the current schema, by field id, named as in the newest
        spec that has it (and typed by a non-void transform where one exists)."""
        metadata = self._table.metadata
        unified = unified_partition_type(metadata.schema(), metadata.partition_specs)
        if not unified.fields:
            return _Unified((), None)
        arrow = arrow_schema(
            Schema(fields=[NestedField(f.field_id, f.name, f.field_type) for f in unified.fields])
        )
        return _Unified(tuple(f.field_id for f in unified.fields), pa.struct(list(arrow)))

    # -- partitions ------------------------------------------------------------------------

    def partitions(self, snapshot_id: int | None = None) -> pa.Table:
        """Per partition of the table-wide partition struct: counts and sizes of the live data
        files, position and equality delete files, and the newest snapshot that added one of
        them (Java's ``PartitionsTable``; its ``spec_id`` is that newest file's spec)."""
        unified = self._partition_struct()
        schema = pa.schema(_partitions_fields(unified.arrow))
        snapshot = self._snapshot(snapshot_id)
        manifests = [] if snapshot is None else self._manifest_rows(snapshot)
        columns = [
            "status",
            "snapshot_id",
            "data_file.content",
            "data_file.partition",
            "data_file.record_count",
            "data_file.file_size_in_bytes",
        ]
        tables = read_manifests(manifests, columns, io=self._table.io) if manifests else []
        groups: dict[tuple[Any, ...], _Partition] = {}
        for row, table in zip(manifests, tables, strict=True):
            spec_id = row["partition_spec_id"]
            table = table.filter(pc.not_equal(table.column("status"), STATUS_DELETED))
            if unified.arrow is None:
                partitions: list[Any] = [None] * table.num_rows
            else:
                data_file = table.column("data_file").combine_chunks()
                coerced = unified.coerce(
                    data_file.field("partition"), self._spec(spec_id), table.num_rows
                )
                partitions = coerced.to_pylist()
            files = table.column("data_file").combine_chunks()
            for partition, snapshot_ref, content, records, size in zip(
                partitions,
                table.column("snapshot_id").to_pylist(),
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
                    self._table.metadata.snapshot_by_id(snapshot_ref)
                    if snapshot_ref is not None
                    else None,
                    spec_id,
                    content,
                    records,
                    size,
                )
        rows = [g.row() for g in groups.values()]
        if unified.arrow is None:
            for r in rows:
                del r["partition"], r["spec_id"]
        return pa.Table.from_pylist(rows, schema=schema)

    # -- helpers ---------------------------------------------------------------------------

    def _ancestor_ids(self, snapshot_id: int | None) -> Iterable[int]:
        """``snapshot_id`` and its parents, newest first, while they are in the metadata
        (expired parents end the chain, as in Java's ``SnapshotUtil.ancestorIds``)."""
        metadata = self._table.metadata
        seen: set[int] = set()
        while snapshot_id is not None and snapshot_id not in seen:
            snapshot = metadata.snapshot_by_id(snapshot_id)
            if snapshot is None:
                return
            seen.add(snapshot_id)
            yield snapshot_id
            snapshot_id = snapshot.parent_snapshot_id

    def _snapshot(self, snapshot_id: int | None) -> Snapshot | None:
        """The snapshot asked for, or the current one (None for a table without snapshots)."""
        if snapshot_id is None:
            return self._table.metadata.current_snapshot()
        snapshot = self._table.metadata.snapshot_by_id(snapshot_id)
        if snapshot is None:
            raise NotFoundError(f"table has no snapshot with id {snapshot_id}")
        return snapshot
