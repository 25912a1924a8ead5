"""Applying table updates to table metadata (spec: "Table Metadata"; Java:
``TableMetadata.Builder``, the referee where the spec is silent).

The rules kept here, besides each update's own checks:

* ``last-updated-ms`` is set to the time of the change (never earlier than before).
* ``last-column-id`` becomes the highest of itself and every added schema's highest field id;
  a new field id must be above the old ``last-column-id`` (ids are never reused), and a field
  of the current schema may only be promoted and must stay in its struct.
* ``last-partition-id`` likewise for partition field ids; a partition field id used before
  keeps its source column (and transform, except for v1's ``void``).
* An added schema, spec or sort order that equals an existing one (ignoring its own id; a spec
  by source, transform and name as Java's ``compatibleWith``) reuses that one's id. ``-1`` in
  set-current-schema, set-default-spec and set-default-sort-order means the one added last.
* remove-schemas and remove-partition-specs refuse the current schema and the default spec
  (as ``removeSchemas`` / ``removeSpecs`` of Java's builder, judged at that point of the
  batch); ids the table does not have are ignored, yet a non-empty removal is a change all the
  same, as Java records it (a new metadata file is written). ``last-column-id`` and
  ``last-partition-id`` stay: removed ids are never reused.
* ``last-sequence-number`` follows added snapshots, whose sequence numbers must increase (v2+);
  v3 snapshots must carry ``first-row-id`` >= ``next-row-id``, which grows by ``added-rows``.
* ``snapshot-log`` gets an entry when ``main`` moves; entries of snapshots that were only
  intermediate in this commit are dropped, and removing a snapshot drops the log before it.
* ``metadata-log`` gets the previous metadata file, trimmed to
  ``write.metadata.previous-versions-max`` entries (default 100).
* The result is constructed as a TableMetadata, so every rule of the model is checked again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from frazil.errors import InvalidUpdateError
from frazil.metadata import SUPPORTED_FORMAT_VERSION, TableMetadata
from frazil.partitioning import PARTITION_DATA_ID_START, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import MAIN_BRANCH, MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef
from frazil.sorting import UNSORTED_ORDER_ID, SortOrder
from frazil.table.updates import (
    LAST_ADDED,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableUpdate,
    UpgradeFormatVersion,
)
from frazil.types import IcebergType, PrimitiveType

__all__ = [
    "METADATA_PREVIOUS_VERSIONS_MAX",
    "apply_updates",
    "apply_updates_from_empty",
    "check_evolution",
    "same_schema",
    "same_spec",
]

METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
_PREVIOUS_VERSIONS_MAX_DEFAULT = 100


def same_schema(a: Schema, b: Schema) -> bool:
    """Same fields (ids, names, types, docs, defaults) and identifier fields; the schema id is
    ignored (Java: Schema.sameSchema)."""
    return a.fields == b.fields and set(a.identifier_field_ids) == set(b.identifier_field_ids)


def same_spec(a: PartitionSpec, b: PartitionSpec) -> bool:
    """Same source, transform and name field by field (Java: PartitionSpec.compatibleWith)."""
    return len(a.fields) == len(b.fields) and all(
        (x.source_id, x.transform, x.name) == (y.source_id, y.transform, y.name)
        for x, y in zip(a.fields, b.fields, strict=True)
    )


def _kind(t: IcebergType) -> str:
    return "primitive" if isinstance(t, PrimitiveType) else type(t).__name__


def check_evolution(current: Schema, new: Schema) -> None:
    """Refuse a new schema that changes a field of the current one in a way schema evolution
    never does (spec: Schema Evolution): a type other than a promotion (narrowing, struct <->
    primitive) or a move to another struct (grouping or ungrouping fields)."""
    from frazil.table.update_schema import is_promotion_allowed

    for name, f in new.all_fields():
        old = current.find_field(f.field_id)
        if old is None:
            continue
        old_name = current.find_column_name(f.field_id)
        if _kind(old.field_type) != _kind(f.field_type):
            raise InvalidUpdateError(
                f"field {f.field_id} ({old_name!r}) cannot change from {old.field_type} to "
                f"{f.field_type} (spec: Schema Evolution)"
            )
        if isinstance(old.field_type, PrimitiveType) and not is_promotion_allowed(
            old.field_type, f.field_type
        ):
            raise InvalidUpdateError(
                f"field {f.field_id} ({old_name!r}): {old.field_type} -> {f.field_type} is not an "
                "allowed type promotion (spec: Schema Evolution)"
            )
        old_parents, new_parents = current.parent_ids(f.field_id), new.parent_ids(f.field_id)
        if old_parents[-1:] != new_parents[-1:]:
            raise InvalidUpdateError(
                f"field {f.field_id} moved from {old_name!r} to {name!r}: fields cannot move "
                "between structs (spec: Schema Evolution)"
            )


class _Builder:
    """Mutable working copy of the metadata while updates are applied."""

    def __init__(self, base: TableMetadata, now: int) -> None:
        self.base: TableMetadata | None = base
        self.now = now
        self.base_last_column_id = base.last_column_id
        self.base_last_partition_id = base.last_partition_id
        self.base_last_updated_ms = base.last_updated_ms
        self.format_version = base.format_version
        self.table_uuid = base.table_uuid
        self.location = base.location
        self.last_sequence_number = base.last_sequence_number
        self.last_column_id = base.last_column_id
        self.schemas = list(base.schemas)
        self.current_schema_id = base.current_schema_id
        self.specs = list(base.partition_specs)
        self.default_spec_id = base.default_spec_id
        self.last_partition_id = base.last_partition_id
        self.properties = dict(base.properties)
        self.current_snapshot_id = base.current_snapshot_id
        self.snapshots = list(base.snapshots)
        self.snapshot_log = list(base.snapshot_log)
        self.sort_orders = list(base.sort_orders)
        self.default_sort_order_id = base.default_sort_order_id
        self.refs = dict(base.refs)
        self.statistics = {s.snapshot_id: s for s in base.statistics}
        self.partition_statistics = {s.snapshot_id: s for s in base.partition_statistics}
        self.next_row_id = base.next_row_id
        self.changed = False
        self.last_added_schema: int | None = None
        self.last_added_spec: int | None = None
        self.last_added_order: int | None = None
        self._added_schema_ids: set[int] = set()
        self._added_spec_ids: set[int] = set()
        self._added_order_ids: set[int] = set()
        self.added_snapshots: set[int] = set()
        self.removed_snapshots = False
        # (snapshot id) of every main-branch change in this batch, in order.
        self.main_changes: list[int] = []

    # --- dispatch -------------------------------------------------------------------------------

    def apply(self, update: TableUpdate) -> None:
        handler = getattr(self, "_" + type(update).__name__, None)
        if handler is None or not isinstance(update, TableUpdate):
            raise InvalidUpdateError(f"not a table update: {update!r}")
        handler(update)

    # --- table identity and format ----------------------------------------------------------------

    def _AssignUUID(self, u: AssignUUID) -> None:
        if self.table_uuid is not None and self.table_uuid.lower() != u.uuid.lower():
            raise InvalidUpdateError(
                f"cannot reassign the table UUID {self.table_uuid} to {u.uuid}: a table's UUID "
                "never changes (spec: Table Metadata Fields)"
            )
        if self.table_uuid is None:
            self.table_uuid = u.uuid
            self.changed = True

    def _UpgradeFormatVersion(self, u: UpgradeFormatVersion) -> None:
        new = u.format_version
        if new > SUPPORTED_FORMAT_VERSION:
            raise InvalidUpdateError(
                f"cannot upgrade table to format version v{new}: frazil supports up to "
                f"v{SUPPORTED_FORMAT_VERSION}"
            )
        if new < self.format_version:
            raise InvalidUpdateError(
                f"cannot downgrade a v{self.format_version} table to v{new}: format versions "
                "can only be upgraded"
            )
        if new == self.format_version:
            return
        if new >= 3 and self.next_row_id is None:
            # Row lineage starts counting at 0 when a table is upgraded to v3 (Java: nextRowId).
            self.next_row_id = 0
        self.format_version = new
        self.changed = True

    def _SetLocation(self, u: SetLocation) -> None:
        if u.location != self.location:
            self.location = u.location
            self.changed = True

    def _SetProperties(self, u: SetProperties) -> None:
        if u.updates:
            self.properties.update(u.updates)
            self.changed = True

    def _RemoveProperties(self, u: RemoveProperties) -> None:
        if u.removals:
            for key in u.removals:
                self.properties.pop(key, None)
            self.changed = True

    # --- schemas ----------------------------------------------------------------------------------

    def _AddSchema(self, u: AddSchema) -> None:
        schema = u.schema
        schema.check_format_version(self.format_version)
        new_last = max(self.last_column_id, schema.highest_field_id(), u.last_column_id or 0)
        self._check_new_field_ids(schema)
        existing = next((s for s in self.schemas if same_schema(s, schema)), None)
        if existing is None and self.schemas:
            check_evolution(self._current_schema(), schema)
        if existing is not None:
            if new_last != self.last_column_id:
                self.last_column_id = new_last
                self.changed = True
            # Java: "-1" then names it only if it was added in this batch.
            self.last_added_schema = (
                existing.schema_id if existing.schema_id in self._added_schema_ids else None
            )
            return
        new_id = max([0, self.current_schema_id, *(s.schema_id + 1 for s in self.schemas)])
        if schema.schema_id != new_id:
            schema = Schema(
                fields=schema.fields,
                schema_id=new_id,
                identifier_field_ids=schema.identifier_field_ids,
            )
        self.schemas.append(schema)
        self._added_schema_ids.add(new_id)
        self.last_column_id = new_last
        self.last_added_schema = new_id
        self.changed = True

    def _check_new_field_ids(self, schema: Schema) -> None:
        known: set[int] = set()
        for s in self.schemas:
            known |= s.field_ids()
        for name, f in schema.all_fields():
            if f.field_id not in known and f.field_id <= self.base_last_column_id:
                raise InvalidUpdateError(
                    f"schema field {name!r} has id {f.field_id}, which is not in any schema but "
                    f"not above last-column-id {self.base_last_column_id}: field ids are never "
                    "reused (spec: Schema Evolution)"
                )

    def _SetCurrentSchema(self, u: SetCurrentSchema) -> None:
        schema_id = u.schema_id
        if schema_id == LAST_ADDED:
            if self.last_added_schema is None:
                raise InvalidUpdateError("cannot set the last added schema: no schema was added")
            schema_id = self.last_added_schema
        if schema_id == self.current_schema_id:
            return
        if not any(s.schema_id == schema_id for s in self.schemas):
            raise InvalidUpdateError(f"cannot set current schema to unknown schema {schema_id}")
        self.current_schema_id = schema_id
        self.changed = True

    def _RemoveSchemas(self, u: RemoveSchemas) -> None:
        remove = set(u.schema_ids)
        if self.current_schema_id in remove:
            raise InvalidUpdateError(
                f"cannot remove schema {self.current_schema_id}: it is the table's current schema"
            )
        if remove:
            # Java's removeSchemas filters the list and records the change even when no id
            # matched; a snapshot naming a removed schema is not checked (Java's neither).
            self.schemas = [s for s in self.schemas if s.schema_id not in remove]
            self.changed = True

    def _current_schema(self) -> Schema:
        schema_id = self.current_schema_id
        if schema_id < 0:
            # Built from empty, before set-current-schema: Java's builder starts at
            # currentSchemaId 0 (an unset int), so a spec or sort order added first binds to
            # schema 0. DuckDB's create sends set-current-schema last, after add-spec.
            schema_id = 0
        current = next((s for s in self.schemas if s.schema_id == schema_id), None)
        if current is None:
            # Only metadata built from empty has none: its updates must set one first.
            raise InvalidUpdateError(
                "a partition spec or sort order was added before any current schema was set"
            )
        return current

    # --- partition specs --------------------------------------------------------------------------

    def _AddPartitionSpec(self, u: AddPartitionSpec) -> None:
        spec = u.spec
        existing = next((s for s in self.specs if same_spec(s, spec)), None)
        if existing is not None:
            self.last_added_spec = (
                existing.spec_id if existing.spec_id in self._added_spec_ids else None
            )
            return
        spec.check_compatible(self._current_schema())
        if self.format_version == 1:
            expected = list(
                range(PARTITION_DATA_ID_START, PARTITION_DATA_ID_START + len(spec.fields))
            )
            if [f.field_id for f in spec.fields] != expected:
                raise InvalidUpdateError(
                    f"partition spec {spec} does not use the sequential field ids from "
                    f"{PARTITION_DATA_ID_START} that format v1 requires (spec: Partition Evolution)"
                )
        self._check_partition_field_ids(spec)
        new_id = max([0, *(s.spec_id + 1 for s in self.specs)])
        spec = PartitionSpec(new_id, spec.fields)
        self.specs.append(spec)
        self._added_spec_ids.add(new_id)
        self.last_partition_id = max(self.last_partition_id, spec.last_assigned_field_id)
        self.last_added_spec = new_id
        self.changed = True

    def _check_partition_field_ids(self, spec: PartitionSpec) -> None:
        history: dict[int, list[Any]] = {}
        for s in self.specs:
            for f in s.fields:
                history.setdefault(f.field_id, []).append(f)
        for f in spec.fields:
            before = history.get(f.field_id)
            if before is None:
                if f.field_id <= self.base_last_partition_id:
                    raise InvalidUpdateError(
                        f"partition field {f.name!r} has id {f.field_id}, which no spec used but "
                        f"is not above last-partition-id {self.base_last_partition_id}: "
                        "partition field ids are never reused (spec: Partition Evolution)"
                    )
                continue
            for old in before:
                same_transform = old.transform == f.transform or "void" in (
                    old.transform,
                    f.transform,
                )
                if old.source_id != f.source_id or not same_transform:
                    raise InvalidUpdateError(
                        f"partition field {f.name!r} reuses id {f.field_id} of field {old} with "
                        "a different source or transform (spec: Partition Evolution)"
                    )

    def _SetDefaultSpec(self, u: SetDefaultSpec) -> None:
        spec_id = u.spec_id
        if spec_id == LAST_ADDED:
            if self.last_added_spec is None:
                raise InvalidUpdateError("cannot set the last added spec: no spec was added")
            spec_id = self.last_added_spec
        if spec_id == self.default_spec_id:
            return
        if not any(s.spec_id == spec_id for s in self.specs):
            raise InvalidUpdateError(f"cannot set default spec to unknown spec {spec_id}")
        self.default_spec_id = spec_id
        self.changed = True

    def _RemovePartitionSpecs(self, u: RemovePartitionSpecs) -> None:
        remove = set(u.spec_ids)
        if self.default_spec_id in remove:
            raise InvalidUpdateError(
                f"cannot remove partition spec {self.default_spec_id}: it is the table's "
                "default spec"
            )
        if remove:
            # As removeSchemas: Java's removeSpecs records the change even when no id matched,
            # and does not look for manifests still written with a removed spec.
            self.specs = [s for s in self.specs if s.spec_id not in remove]
            self.changed = True

    # --- sort orders ------------------------------------------------------------------------------

    def _AddSortOrder(self, u: AddSortOrder) -> None:
        order = u.sort_order
        if order.is_unsorted():
            existing: SortOrder | None = next(
                (o for o in self.sort_orders if o.is_unsorted()), None
            )
        else:
            existing = next((o for o in self.sort_orders if o.fields == order.fields), None)
        if existing is not None:
            self.last_added_order = (
                existing.order_id if existing.order_id in self._added_order_ids else None
            )
            return
        order.check_compatible(self._current_schema())
        if order.is_unsorted():
            new_id = UNSORTED_ORDER_ID
        else:
            new_id = max([1, *(o.order_id + 1 for o in self.sort_orders)])
            order = SortOrder(new_id, order.fields)
        self.sort_orders.append(order)
        self._added_order_ids.add(new_id)
        self.last_added_order = new_id
        self.changed = True

    def _SetDefaultSortOrder(self, u: SetDefaultSortOrder) -> None:
        order_id = u.sort_order_id
        if order_id == LAST_ADDED:
            if self.last_added_order is None:
                raise InvalidUpdateError(
                    "cannot set the last added sort order: no sort order was added"
                )
            order_id = self.last_added_order
        if order_id == self.default_sort_order_id:
            return
        if not any(o.order_id == order_id for o in self.sort_orders):
            raise InvalidUpdateError(f"cannot set default sort order to unknown order {order_id}")
        self.default_sort_order_id = order_id
        self.changed = True

    # --- snapshots and refs -----------------------------------------------------------------------

    def _snapshot(self, snapshot_id: int) -> Snapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)

    def _AddSnapshot(self, u: AddSnapshot) -> None:
        snapshot = u.snapshot
        if self._snapshot(snapshot.snapshot_id) is not None:
            raise InvalidUpdateError(f"snapshot {snapshot.snapshot_id} already exists")
        if self.format_version == 1:
            if snapshot.sequence_number != 0:
                raise InvalidUpdateError(
                    f"snapshot {snapshot.snapshot_id} has sequence number "
                    f"{snapshot.sequence_number}; v1 snapshots have none (spec: Appendix E)"
                )
        elif snapshot.sequence_number <= self.last_sequence_number:
            raise InvalidUpdateError(
                f"cannot add snapshot {snapshot.snapshot_id} with sequence number "
                f"{snapshot.sequence_number}: it must be above last-sequence-number "
                f"{self.last_sequence_number} (spec: Sequence Numbers)"
            )
        if self.format_version >= 3:
            if snapshot.first_row_id is None or snapshot.added_rows is None:
                raise InvalidUpdateError(
                    f"cannot add snapshot {snapshot.snapshot_id} to a v3 table without "
                    "first-row-id and added-rows (spec: Row Lineage)"
                )
            assert self.next_row_id is not None
            if snapshot.first_row_id < self.next_row_id:
                raise InvalidUpdateError(
                    f"cannot add snapshot {snapshot.snapshot_id}: first-row-id "
                    f"{snapshot.first_row_id} is behind the table's next-row-id {self.next_row_id}"
                )
            self.next_row_id += snapshot.added_rows
        self.last_sequence_number = max(self.last_sequence_number, snapshot.sequence_number)
        self.snapshots.append(snapshot)
        self.added_snapshots.add(snapshot.snapshot_id)
        self.changed = True

    def _SetSnapshotRef(self, u: SetSnapshotRef) -> None:
        ref = u.ref
        if self.refs.get(u.ref_name) == ref:
            return
        snapshot = self._snapshot(ref.snapshot_id)
        if snapshot is None:
            raise InvalidUpdateError(
                f"cannot set {u.ref_name!r} to unknown snapshot {ref.snapshot_id}"
            )
        if u.ref_name == MAIN_BRANCH:
            if not ref.is_branch:
                raise InvalidUpdateError("cannot set 'main' to a tag: it must be a branch")
            self.current_snapshot_id = ref.snapshot_id
            # A rollback to an older snapshot is logged at the time of the change (Java).
            when = snapshot.timestamp_ms if ref.snapshot_id in self.added_snapshots else self.now
            self.snapshot_log.append(SnapshotLogEntry(when, ref.snapshot_id))
            self.main_changes.append(ref.snapshot_id)
        self.refs[u.ref_name] = ref
        self.changed = True

    def _RemoveSnapshotRef(self, u: RemoveSnapshotRef) -> None:
        if u.ref_name in self.refs:
            del self.refs[u.ref_name]
            if u.ref_name == MAIN_BRANCH:
                self.current_snapshot_id = None
            self.changed = True

    def _RemoveSnapshots(self, u: RemoveSnapshots) -> None:
        remove = set(u.snapshot_ids)
        kept = [s for s in self.snapshots if s.snapshot_id not in remove]
        if len(kept) == len(self.snapshots):
            return
        self.snapshots = kept
        for snapshot_id in remove:
            self.statistics.pop(snapshot_id, None)
            self.partition_statistics.pop(snapshot_id, None)
        for name in [n for n, r in self.refs.items() if r.snapshot_id in remove]:
            self._RemoveSnapshotRef(RemoveSnapshotRef(name))
        self.removed_snapshots = True
        self.changed = True

    def _SetStatistics(self, u: SetStatistics) -> None:
        self.statistics[u.snapshot_id] = u.statistics
        self.changed = True

    def _RemoveStatistics(self, u: RemoveStatistics) -> None:
        if self.statistics.pop(u.snapshot_id, None) is not None:
            self.changed = True

    def _SetPartitionStatistics(self, u: SetPartitionStatistics) -> None:
        self.partition_statistics[u.snapshot_id] = u.partition_statistics
        self.changed = True

    def _RemovePartitionStatistics(self, u: RemovePartitionStatistics) -> None:
        if self.partition_statistics.pop(u.snapshot_id, None) is not None:
            self.changed = True

    # --- result -----------------------------------------------------------------------------------

    def _final_snapshot_log(self) -> list[SnapshotLogEntry]:
        # Java's updateSnapshotLog: snapshots added in this batch that main passed through but
        # did not end on were never visible; drop them. A removed snapshot drops the history
        # before it, so the log never claims a snapshot was current over a gap.
        intermediate = {
            sid
            for sid in self.main_changes
            if sid in self.added_snapshots and sid != self.current_snapshot_id
        }
        if not intermediate and not self.removed_snapshots:
            return self.snapshot_log
        live = {s.snapshot_id for s in self.snapshots}
        out: list[SnapshotLogEntry] = []
        for entry in self.snapshot_log:
            if entry.snapshot_id in live:
                if entry.snapshot_id not in intermediate:
                    out.append(entry)
            elif self.removed_snapshots:
                out.clear()
        return out

    def _final_metadata_log(self, previous: str | None) -> list[MetadataLogEntry]:
        log = [] if self.base is None else list(self.base.metadata_log)
        if previous is None:
            return log
        text = self.properties.get(METADATA_PREVIOUS_VERSIONS_MAX)
        try:
            limit = int(text) if text is not None else _PREVIOUS_VERSIONS_MAX_DEFAULT
        except ValueError:
            raise InvalidUpdateError(
                f"table property {METADATA_PREVIOUS_VERSIONS_MAX} must be an integer, got {text!r}"
            ) from None
        limit = max(1, limit)
        if len(log) >= limit:
            log = log[len(log) - limit + 1 :]
        log.append(MetadataLogEntry(self.base_last_updated_ms, previous))
        return log

    def build(self, previous_location: str | None) -> TableMetadata:
        if not self.changed and self.base is not None:
            return self.base
        refs: dict[str, SnapshotRef] = dict(self.refs)
        return TableMetadata(
            format_version=self.format_version,
            table_uuid=self.table_uuid,
            location=self.location,
            last_sequence_number=self.last_sequence_number,
            last_updated_ms=max(self.now, self.base_last_updated_ms),
            last_column_id=self.last_column_id,
            schemas=tuple(self.schemas),
            current_schema_id=self.current_schema_id,
            partition_specs=tuple(self.specs),
            default_spec_id=self.default_spec_id,
            last_partition_id=self.last_partition_id,
            properties=self.properties,
            current_snapshot_id=self.current_snapshot_id,
            snapshots=tuple(self.snapshots),
            snapshot_log=tuple(self._final_snapshot_log()),
            metadata_log=tuple(self._final_metadata_log(previous_location)),
            sort_orders=tuple(self.sort_orders),
            default_sort_order_id=self.default_sort_order_id,
            refs=refs,
            statistics=tuple(self.statistics.values()),
            partition_statistics=tuple(self.partition_statistics.values()),
            next_row_id=self.next_row_id,
            extras={} if self.base is None else self.base.extras,
        )

    @classmethod
    def empty(cls, format_version: int, now: int) -> _Builder:
        """A builder of new metadata with nothing yet (Java's ``TableMetadata.buildFromEmpty``):
        its updates give the schema, spec, sort order and location."""
        builder = cls.__new__(cls)
        builder.base = None
        builder.now = now
        builder.base_last_column_id = 0
        builder.base_last_partition_id = PARTITION_DATA_ID_START - 1
        builder.base_last_updated_ms = 0
        builder.format_version = format_version
        builder.table_uuid = None
        builder.location = ""
        builder.last_sequence_number = 0
        builder.last_column_id = 0
        builder.schemas = []
        builder.current_schema_id = -1
        builder.specs = []
        builder.default_spec_id = -1
        builder.last_partition_id = PARTITION_DATA_ID_START - 1
        builder.properties = {}
        builder.current_snapshot_id = None
        builder.snapshots = []
        builder.snapshot_log = []
        builder.sort_orders = []
        builder.default_sort_order_id = -1
        builder.refs = {}
        builder.statistics = {}
        builder.partition_statistics = {}
        builder.next_row_id = 0 if format_version >= 3 else None
        builder.changed = True
        builder.last_added_schema = None
        builder.last_added_spec = None
        builder.last_added_order = None
        builder._added_schema_ids = set()
        builder._added_spec_ids = set()
        builder._added_order_ids = set()
        builder.added_snapshots = set()
        builder.removed_snapshots = False
        builder.main_changes = []
        return builder


def apply_updates(
    metadata: TableMetadata,
    updates: Iterable[TableUpdate],
    metadata_location: str | None = None,
    *,
    timestamp_ms: int | None = None,
) -> TableMetadata:
    """Apply ``updates`` in order; see the module docstring. Returns ``metadata`` itself when
    nothing changes (then nothing is logged either)."""
    if not isinstance(metadata, TableMetadata):
        raise InvalidUpdateError(f"apply_updates needs a TableMetadata, got {metadata!r}")
    now = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    builder = _Builder(metadata, now)
    for update in updates:
        builder.apply(update)
    previous = metadata_location if metadata_location is not None else metadata.metadata_location
    return builder.build(previous)


def apply_updates_from_empty(
    updates: Iterable[TableUpdate], *, timestamp_ms: int | None = None
) -> TableMetadata:
    """The metadata of a new table made of ``updates`` alone (the REST protocol's create
    transaction, committed with ``assert-create``; Java's ``TableMetadata.buildFromEmpty`` and
    ``CatalogHandlers.create``): it starts at the format version of the first
    ``upgrade-format-version`` (default 2), with no schema, spec, sort order or location, which
    the updates must add and set. A table UUID is assigned when the updates give none."""
    updates = list(updates)
    version = next((u.format_version for u in updates if isinstance(u, UpgradeFormatVersion)), 2)
    if version not in range(1, SUPPORTED_FORMAT_VERSION + 1):
        raise InvalidUpdateError(
            f"cannot create a table of format version v{version}: frazil supports v1 to "
            f"v{SUPPORTED_FORMAT_VERSION}"
        )
    now = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    builder = _Builder.empty(version, now)
    for update in updates:
        builder.apply(update)
    if builder.table_uuid is None:
        builder.table_uuid = str(uuid.uuid4())
    if builder.current_schema_id >= 0:
        # Unpartitioned and unsorted unless the updates say otherwise (as a new table).
        if builder.default_spec_id < 0:
            builder.apply(AddPartitionSpec(PartitionSpec()))
            builder.apply(SetDefaultSpec(LAST_ADDED))
        if builder.default_sort_order_id < 0:
            builder.apply(AddSortOrder(SortOrder.unsorted()))
            builder.apply(SetDefaultSortOrder(LAST_ADDED))
    for what, missing in (
        ("no current schema", builder.current_schema_id < 0),
        ("no location", not builder.location),
    ):
        if missing:
            raise InvalidUpdateError(f"cannot create a table: its updates set {what}")
    return builder.build(None)
