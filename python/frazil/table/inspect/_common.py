"""What every metadata table needs: the snapshot asked for, its manifests, partition specs,
and the table-wide partition struct (Java's ``Partitioning.partitionType``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import InvalidDataError, NotFoundError
from frazil.manifest import read_manifest_list
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table._literals import storage_type, with_type
from frazil.table._metadata_columns import unified_partition_type
from frazil.table.read import scan_arrow_schema, table_uuid_type
from frazil.types import NestedField

if TYPE_CHECKING:
    from frazil.table._table import Table

TIMESTAMPTZ = pa.timestamp("us", tz="UTC")
DATA_MANIFEST = 0
DELETE_MANIFEST = 1


def field(name: str, type_: pa.DataType, required: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=not required)


def micros(millis: int) -> int:
    return millis * 1000


@dataclass(frozen=True)
class Unified:
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
                children.append(with_type(partition.field(index), target.type))
        return pa.StructArray.from_arrays(children, fields=list(self.arrow))


def partition_struct(table: Table) -> Unified:
    """Java's ``Partitioning.partitionType``: every partition field of every spec whose
    source column is still in the current schema, by field id, named as in the newest spec
    that has it (and typed by a non-void transform where one exists)."""
    metadata = table.metadata
    unified = unified_partition_type(metadata.schema(), metadata.partition_specs)
    if not unified.fields:
        return Unified((), None)
    arrow = scan_arrow_schema(
        Schema(fields=[NestedField(f.field_id, f.name, f.field_type) for f in unified.fields]),
        table_uuid_type(table.properties),
    )
    return Unified(tuple(f.field_id for f in unified.fields), pa.struct(list(arrow)))


def table_from_pylist(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pylist`` for a schema that may nest extension types (``pa.uuid()`` in
    a partition struct), which pyarrow cannot convert Python values to: built with their
    storage types, then given ``schema``'s types without a copy."""
    plain = pa.schema([f.with_type(storage_type(f.type)) for f in schema])
    table = pa.Table.from_pylist(rows, schema=plain)
    if plain == schema:
        return table
    pairs = zip(table.columns, schema, strict=True)
    columns = [with_type(c.combine_chunks(), f.type) for c, f in pairs]
    return pa.Table.from_arrays(columns, schema=schema)


def snapshot(table: Table, snapshot_id: int | None) -> Snapshot | None:
    """The snapshot asked for, or the current one (None for a table without snapshots)."""
    if snapshot_id is None:
        return table.metadata.current_snapshot()
    found = table.metadata.snapshot_by_id(snapshot_id)
    if found is None:
        raise NotFoundError(f"table has no snapshot with id {snapshot_id}")
    return found


def manifest_rows(table: Table, snap: Snapshot) -> list[dict[str, Any]]:
    """The manifest list of ``snap``, one dict per manifest."""
    if snap.manifest_list is None:
        raise NotFoundError(
            f"snapshot {snap.snapshot_id} has no manifest list (a v1 snapshot with "
            "embedded manifests): frazil does not read those"
        )
    rows: list[dict[str, Any]] = read_manifest_list(snap.manifest_list, io=table.io).to_pylist()
    return rows


def snapshot_manifests(
    table: Table,
    snapshot_id: int | None,
    contents: Iterable[int] = (DATA_MANIFEST, DELETE_MANIFEST),
) -> list[dict[str, Any]]:
    """The manifests of a snapshot (default: the current one) holding ``contents``."""
    snap = snapshot(table, snapshot_id)
    wanted = set(contents)
    rows = [] if snap is None else manifest_rows(table, snap)
    return [r for r in rows if r["content"] in wanted]


def reachable_manifests(
    table: Table, contents: Iterable[int] = (DATA_MANIFEST, DELETE_MANIFEST)
) -> list[dict[str, Any]]:
    """Every manifest any snapshot lists, once each (Java's
    ``BaseAllMetadataTableScan.reachableManifests``: a set of manifests, which are equal when
    their paths are), in the order first met."""
    wanted = set(contents)
    seen: dict[str, dict[str, Any]] = {}
    for snap in table.metadata.snapshots:
        for row in manifest_rows(table, snap):
            if row["content"] in wanted:
                seen.setdefault(row["manifest_path"], row)
    return list(seen.values())


def spec(table: Table, spec_id: int) -> PartitionSpec:
    found = table.metadata.spec_by_id(spec_id)
    if found is None:
        raise InvalidDataError(f"a manifest names partition spec {spec_id}, which the table lacks")
    return found
