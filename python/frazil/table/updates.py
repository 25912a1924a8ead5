"""Table metadata updates: the changes a commit applies (spec: "Table Metadata"; the REST
catalog protocol's ``TableUpdate`` objects).

Each update is an immutable value named after the REST protocol's ``action`` (``add-schema``,
``set-snapshot-ref``, ...) and reads and writes the protocol's JSON shape, for instance
``{"action": "add-schema", "schema": {...}, "last-column-id": 3}``. Field names follow Apache
Iceberg Java's ``MetadataUpdateParser``, which also accepts the older ``updated`` and ``removed``
keys of set-properties and remove-properties; frazil reads those too.

:func:`apply_updates` applies a sequence of updates to a :class:`~frazil.metadata.TableMetadata`
(see :mod:`frazil.table._apply` for the rules it keeps).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from frazil import _jsonutil as js
from frazil._checked import check_fields
from frazil.errors import InvalidMetadataError, InvalidUpdateError
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from frazil.sorting import SortOrder
from frazil.statistics import PartitionStatisticsFile, StatisticsFile

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata

__all__ = [
    "LAST_ADDED",
    "AddPartitionSpec",
    "AddSchema",
    "AddSnapshot",
    "AddSortOrder",
    "AssignUUID",
    "RemovePartitionSpecs",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSchemas",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "SetCurrentSchema",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetPartitionStatistics",
    "SetProperties",
    "SetSnapshotRef",
    "SetStatistics",
    "TableUpdate",
    "UpgradeFormatVersion",
    "update_from_json",
]

# Java's MetadataUpdate: -1 in set-current-schema, set-default-spec and set-default-sort-order
# means "the schema, spec or order added last in this commit".
LAST_ADDED = -1

_UPDATES: dict[str, type[TableUpdate]] = {}


class TableUpdate:
    """Base of every table update. ``action`` is its REST protocol name."""

    action: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.action:
            _UPDATES[cls.action] = cls

    def __post_init__(self) -> None:
        # Every field is checked against its annotation (the model's one mechanism).
        check_fields(self, InvalidUpdateError)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, **self._body()}

    def _body(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, node: Any) -> TableUpdate:
        """Read an update of this class (or, on :class:`TableUpdate`, of any class)."""
        update = update_from_json(node)
        if cls is not TableUpdate and not isinstance(update, cls):
            raise InvalidMetadataError(
                f"expected a {cls.action!r} update, got action {update.action!r}"
            )
        return update

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> TableUpdate:
        raise NotImplementedError


def update_from_json(node: Any) -> TableUpdate:
    """Read any table update from its REST JSON object (dispatching on ``action``)."""
    obj = js.as_object(node, "table update")
    action = js.get_str(obj, "action", "table update")
    cls = _UPDATES.get(action.lower())
    if cls is None:
        known = ", ".join(sorted(_UPDATES))
        raise InvalidMetadataError(f"unknown table update action {action!r} (known: {known})")
    return cls._read(obj, f"{cls.action} update")


def _required(obj: js.JsonObject, key: str, what: str) -> Any:
    if obj.get(key) is None:
        raise InvalidMetadataError(f"{what} is missing required field {key!r}")
    return obj[key]


def _long_list(obj: js.JsonObject, key: str, what: str) -> tuple[int, ...]:
    items = js.get_list(obj, key, what)
    return tuple(js.get_long({key: item}, key, what) for item in items)


@dataclass(frozen=True)
class AssignUUID(TableUpdate):
    """Set the table UUID (allowed only where the table has none yet)."""

    uuid: str
    action = "assign-uuid"

    def _body(self) -> dict[str, Any]:
        return {"uuid": self.uuid}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AssignUUID:
        return cls(js.get_str(obj, "uuid", what))


@dataclass(frozen=True)
class UpgradeFormatVersion(TableUpdate):
    """Upgrade the table format version (never downgrade)."""

    format_version: int
    action = "upgrade-format-version"

    def _body(self) -> dict[str, Any]:
        return {"format-version": self.format_version}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> UpgradeFormatVersion:
        return cls(js.get_int(obj, "format-version", what))


@dataclass(frozen=True)
class AddSchema(TableUpdate):
    """Add a schema. ``last_column_id`` is the deprecated REST field; when given it may raise
    the table's last-column-id above the schema's highest field id."""

    schema: Schema
    last_column_id: int | None = None
    action = "add-schema"

    def _body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": self.schema.to_json()}
        if self.last_column_id is not None:
            out["last-column-id"] = self.last_column_id
        return out

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AddSchema:
        return cls(
            Schema.from_json(_required(obj, "schema", what)),
            js.opt_int(obj, "last-column-id", what),
        )


@dataclass(frozen=True)
class SetCurrentSchema(TableUpdate):
    """Make a schema current; ``-1`` (:data:`LAST_ADDED`) is the schema added last."""

    schema_id: int
    action = "set-current-schema"

    def _body(self) -> dict[str, Any]:
        return {"schema-id": self.schema_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetCurrentSchema:
        return cls(js.get_int(obj, "schema-id", what))


@dataclass(frozen=True)
class RemoveSchemas(TableUpdate):
    """Remove schemas by id; the current schema cannot be removed. Java sends this when
    snapshots are expired with ``cleanExpiredMetadata(true)`` (the schemas no retained snapshot
    uses). The REST protocol's ``schema-ids`` is an array of int, read as Java's
    ``JsonUtil.getIntegerSet`` does (duplicates are harmless: removal is by set)."""

    schema_ids: tuple[int, ...]
    action = "remove-schemas"

    def _body(self) -> dict[str, Any]:
        return {"schema-ids": list(self.schema_ids)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemoveSchemas:
        return cls(js.get_int_list(obj, "schema-ids", what))


@dataclass(frozen=True)
class AddPartitionSpec(TableUpdate):
    """Add a partition spec."""

    spec: PartitionSpec
    action = "add-spec"

    def _body(self) -> dict[str, Any]:
        return {"spec": self.spec.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AddPartitionSpec:
        node = js.as_object(_required(obj, "spec", what), f"{what} spec")
        # The REST protocol's spec may omit spec-id (an unbound spec); it is assigned on apply.
        spec_id = js.opt_int(node, "spec-id", f"{what} spec")
        fields = js.get_list(node, "fields", f"{what} spec")
        return cls(PartitionSpec.from_json_fields(fields, spec_id if spec_id is not None else -1))


@dataclass(frozen=True)
class SetDefaultSpec(TableUpdate):
    """Make a partition spec the default; ``-1`` is the spec added last."""

    spec_id: int
    action = "set-default-spec"

    def _body(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetDefaultSpec:
        return cls(js.get_int(obj, "spec-id", what))


@dataclass(frozen=True)
class RemovePartitionSpecs(TableUpdate):
    """Remove partition specs by id; the default spec cannot be removed. Java sends this when
    snapshots are expired with ``cleanExpiredMetadata(true)`` (the specs no manifest of a
    retained snapshot uses). ``spec-ids`` is an array of int, as in the REST protocol."""

    spec_ids: tuple[int, ...]
    action = "remove-partition-specs"

    def _body(self) -> dict[str, Any]:
        return {"spec-ids": list(self.spec_ids)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemovePartitionSpecs:
        return cls(js.get_int_list(obj, "spec-ids", what))


@dataclass(frozen=True)
class AddSortOrder(TableUpdate):
    """Add a sort order."""

    sort_order: SortOrder
    action = "add-sort-order"

    def _body(self) -> dict[str, Any]:
        return {"sort-order": self.sort_order.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AddSortOrder:
        return cls(SortOrder.from_json(_required(obj, "sort-order", what)))


@dataclass(frozen=True)
class SetDefaultSortOrder(TableUpdate):
    """Make a sort order the default; ``-1`` is the order added last."""

    sort_order_id: int
    action = "set-default-sort-order"

    def _body(self) -> dict[str, Any]:
        return {"sort-order-id": self.sort_order_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetDefaultSortOrder:
        return cls(js.get_int(obj, "sort-order-id", what))


@dataclass(frozen=True)
class AddSnapshot(TableUpdate):
    """Add a snapshot (it becomes current only through a set-snapshot-ref of ``main``)."""

    snapshot: Snapshot
    action = "add-snapshot"

    def _body(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AddSnapshot:
        return cls(Snapshot.from_json(_required(obj, "snapshot", what)))


@dataclass(frozen=True)
class SetSnapshotRef(TableUpdate):
    """Create or move a branch or tag; setting ``main`` changes the current snapshot."""

    ref_name: str
    snapshot_id: int
    type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None
    action = "set-snapshot-ref"

    def __post_init__(self) -> None:
        super().__post_init__()
        # Checks the retention settings against the ref type, as SnapshotRef does.
        object.__setattr__(self, "type", self.ref.type)

    @property
    def ref(self) -> SnapshotRef:
        return SnapshotRef(
            self.snapshot_id,
            self.type,
            self.min_snapshots_to_keep,
            self.max_snapshot_age_ms,
            self.max_ref_age_ms,
        )

    @classmethod
    def of(cls, name: str, ref: SnapshotRef) -> SetSnapshotRef:
        return cls(
            name,
            ref.snapshot_id,
            ref.type,
            ref.min_snapshots_to_keep,
            ref.max_snapshot_age_ms,
            ref.max_ref_age_ms,
        )

    def _body(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name, **self.ref.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetSnapshotRef:
        name = js.get_str(obj, "ref-name", what)
        return cls.of(name, SnapshotRef.from_json(obj, name))


@dataclass(frozen=True)
class RemoveSnapshots(TableUpdate):
    """Remove snapshots (refs left pointing at them are removed as well)."""

    snapshot_ids: tuple[int, ...]
    action = "remove-snapshots"

    def _body(self) -> dict[str, Any]:
        return {"snapshot-ids": list(self.snapshot_ids)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemoveSnapshots:
        return cls(_long_list(obj, "snapshot-ids", what))


@dataclass(frozen=True)
class RemoveSnapshotRef(TableUpdate):
    """Remove a branch or tag; removing ``main`` leaves the table without a current snapshot."""

    ref_name: str
    action = "remove-snapshot-ref"

    def _body(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemoveSnapshotRef:
        return cls(js.get_str(obj, "ref-name", what))


@dataclass(frozen=True)
class SetLocation(TableUpdate):
    """Set the table's base location."""

    location: str
    action = "set-location"

    def _body(self) -> dict[str, Any]:
        return {"location": self.location}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetLocation:
        return cls(js.get_str(obj, "location", what))


@dataclass(frozen=True)
class SetProperties(TableUpdate):
    """Set (add or overwrite) table properties."""

    updates: Mapping[str, str] = field(default_factory=dict, hash=False)
    action = "set-properties"

    def _body(self) -> dict[str, Any]:
        return {"updates": dict(self.updates)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetProperties:
        key = "updates" if "updates" in obj else "updated"
        return cls(js.get_str_map(obj, key, what))


@dataclass(frozen=True)
class RemoveProperties(TableUpdate):
    """Remove table properties (absent keys are ignored, as in Java)."""

    removals: tuple[str, ...]
    action = "remove-properties"

    def _body(self) -> dict[str, Any]:
        return {"removals": list(self.removals)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemoveProperties:
        key = "removals" if "removals" in obj else "removed"
        return cls(js.get_str_list(obj, key, what))


@dataclass(frozen=True)
class SetStatistics(TableUpdate):
    """Set the statistics file of a snapshot (replacing any it had)."""

    statistics: StatisticsFile
    action = "set-statistics"

    @property
    def snapshot_id(self) -> int:
        return self.statistics.snapshot_id

    def _body(self) -> dict[str, Any]:
        # Java still writes the deprecated top-level snapshot-id.
        return {"snapshot-id": self.snapshot_id, "statistics": self.statistics.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetStatistics:
        stats = StatisticsFile.from_json(_required(obj, "statistics", what))
        outer = js.opt_long(obj, "snapshot-id", what)
        if outer is not None and outer != stats.snapshot_id:
            raise InvalidMetadataError(
                f"{what}: snapshot-id {outer} does not match the statistics file's "
                f"snapshot-id {stats.snapshot_id}"
            )
        return cls(stats)


@dataclass(frozen=True)
class RemoveStatistics(TableUpdate):
    """Remove the statistics file of a snapshot."""

    snapshot_id: int
    action = "remove-statistics"

    def _body(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemoveStatistics:
        return cls(js.get_long(obj, "snapshot-id", what))


@dataclass(frozen=True)
class SetPartitionStatistics(TableUpdate):
    """Set the partition statistics file of a snapshot."""

    partition_statistics: PartitionStatisticsFile
    action = "set-partition-statistics"

    @property
    def snapshot_id(self) -> int:
        return self.partition_statistics.snapshot_id

    def _body(self) -> dict[str, Any]:
        return {"partition-statistics": self.partition_statistics.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetPartitionStatistics:
        node = _required(obj, "partition-statistics", what)
        return cls(PartitionStatisticsFile.from_json(node))


@dataclass(frozen=True)
class RemovePartitionStatistics(TableUpdate):
    """Remove the partition statistics file of a snapshot."""

    snapshot_id: int
    action = "remove-partition-statistics"

    def _body(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> RemovePartitionStatistics:
        return cls(js.get_long(obj, "snapshot-id", what))


def apply_updates(
    metadata: TableMetadata,
    updates: Iterable[TableUpdate],
    metadata_location: str | None = None,
    *,
    timestamp_ms: int | None = None,
) -> TableMetadata:
    """Apply ``updates`` in order to ``metadata`` and return the new TableMetadata.

    ``metadata_location`` is where ``metadata`` was stored; it is appended to the
    ``metadata-log`` (default: ``metadata.metadata_location``, if any). ``timestamp_ms`` is the
    time of the change (default: now). See :mod:`frazil.table._apply` for the rules.
    """
    from frazil.table._apply import apply_updates as apply

    return apply(metadata, updates, metadata_location, timestamp_ms=timestamp_ms)
