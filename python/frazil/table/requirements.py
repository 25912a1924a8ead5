"""Commit requirements: what must still hold of the table for a commit's updates to apply
(spec: "Commit Conflict Resolution and Retry"; the REST catalog protocol's
``TableRequirement`` objects, ``{"type": "assert-current-schema-id", "current-schema-id": 3}``).

``validate(metadata)`` raises :class:`~frazil.errors.CommitFailedError` naming what changed;
``metadata`` is None when the table does not exist. :func:`requirements_for` derives the
requirements of a list of updates as Apache Iceberg Java's ``UpdateRequirements`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from frazil import _jsonutil as js
from frazil._checked import check_fields
from frazil.errors import CommitFailedError, InvalidMetadataError, InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.snapshots import MAIN_BRANCH
from frazil.table.updates import (
    AddPartitionSpec,
    AddSchema,
    RemovePartitionSpecs,
    RemoveSchemas,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetSnapshotRef,
    TableUpdate,
)

__all__ = [
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "TableRequirement",
    "requirement_from_json",
    "requirements_for",
    "validate_requirements",
]

_REQUIREMENTS: dict[str, type[TableRequirement]] = {}


class TableRequirement:
    """Base of every requirement. ``type`` is its REST protocol name."""

    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type:
            _REQUIREMENTS[cls.type] = cls

    def validate(self, metadata: TableMetadata | None) -> None:
        raise NotImplementedError

    def __post_init__(self) -> None:
        # Every field is checked against its annotation (the model's one mechanism).
        check_fields(self, InvalidUpdateError)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self._body()}

    def _body(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_json(cls, node: Any) -> TableRequirement:
        requirement = requirement_from_json(node)
        if cls is not TableRequirement and not isinstance(requirement, cls):
            raise InvalidMetadataError(
                f"expected a {cls.type!r} requirement, got {requirement.type!r}"
            )
        return requirement

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> TableRequirement:
        raise NotImplementedError


def requirement_from_json(node: Any) -> TableRequirement:
    """Read any requirement from its REST JSON object (dispatching on ``type``)."""
    obj = js.as_object(node, "table requirement")
    kind = js.get_str(obj, "type", "table requirement")
    cls = _REQUIREMENTS.get(kind.lower())
    if cls is None:
        known = ", ".join(sorted(_REQUIREMENTS))
        raise InvalidMetadataError(f"unknown table requirement type {kind!r} (known: {known})")
    return cls._read(obj, f"{cls.type} requirement")


def _exists(metadata: TableMetadata | None, what: str) -> TableMetadata:
    if metadata is None:
        raise CommitFailedError(f"requirement failed: {what}: the table does not exist")
    return metadata


@dataclass(frozen=True)
class AssertCreate(TableRequirement):
    """The table must not exist yet."""

    type = "assert-create"

    def validate(self, metadata: TableMetadata | None) -> None:
        if metadata is not None:
            raise CommitFailedError("requirement failed: the table already exists")

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AssertCreate:
        return cls()


@dataclass(frozen=True)
class AssertTableUUID(TableRequirement):
    """The table's UUID must be this one (case-insensitive, as Java compares)."""

    uuid: str
    type = "assert-table-uuid"

    def validate(self, metadata: TableMetadata | None) -> None:
        current = _exists(metadata, "table UUID").table_uuid
        if current is None or current.lower() != self.uuid.lower():
            raise CommitFailedError(
                f"requirement failed: table UUID does not match: expected {self.uuid}, "
                f"found {current}"
            )

    def _body(self) -> dict[str, Any]:
        return {"uuid": self.uuid}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AssertTableUUID:
        return cls(js.get_str(obj, "uuid", what))


@dataclass(frozen=True)
class AssertRefSnapshotId(TableRequirement):
    """Branch or tag ``ref`` must point at ``snapshot_id``; None means it must not exist."""

    ref: str
    snapshot_id: int | None
    type = "assert-ref-snapshot-id"

    def validate(self, metadata: TableMetadata | None) -> None:
        current = _exists(metadata, f"ref {self.ref!r}").ref(self.ref)
        if current is None:
            if self.snapshot_id is not None:
                raise CommitFailedError(
                    f"requirement failed: branch or tag {self.ref!r} is missing, expected it at "
                    f"snapshot {self.snapshot_id}"
                )
            return
        kind = "branch" if current.is_branch else "tag"
        if self.snapshot_id is None:
            raise CommitFailedError(
                f"requirement failed: {kind} {self.ref!r} was created concurrently"
            )
        if current.snapshot_id != self.snapshot_id:
            raise CommitFailedError(
                f"requirement failed: {kind} {self.ref!r} has changed: expected snapshot "
                f"{self.snapshot_id}, found {current.snapshot_id}"
            )

    def _body(self) -> dict[str, Any]:
        # Java writes "snapshot-id": null for a ref that must not exist.
        return {"ref": self.ref, "snapshot-id": self.snapshot_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AssertRefSnapshotId:
        return cls(js.get_str(obj, "ref", what), js.opt_long(obj, "snapshot-id", what))


class _IntRequirement(TableRequirement):
    """A requirement that one int attribute of the metadata is unchanged."""

    _key: ClassVar[str]
    _attribute: ClassVar[str]
    _description: ClassVar[str]
    # Java skips the last-assigned-id checks when the table does not exist.
    _missing_ok: ClassVar[bool] = False

    def validate(self, metadata: TableMetadata | None) -> None:
        if metadata is None and self._missing_ok:
            return
        current = getattr(_exists(metadata, self._description), self._attribute)
        expected = getattr(self, self._attribute)
        if current != expected:
            raise CommitFailedError(
                f"requirement failed: {self._description} changed: expected {expected}, "
                f"found {current}"
            )

    def _body(self) -> dict[str, Any]:
        return {self._key: getattr(self, self._attribute)}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> TableRequirement:
        return cls(js.get_int(obj, cls._key, what))  # type: ignore[call-arg]


@dataclass(frozen=True)
class AssertLastAssignedFieldId(_IntRequirement):
    """The table's ``last-column-id`` must be this."""

    last_column_id: int
    type = "assert-last-assigned-field-id"
    _key = "last-assigned-field-id"
    _attribute = "last_column_id"
    _description = "last assigned field id"
    _missing_ok = True


@dataclass(frozen=True)
class AssertCurrentSchemaId(_IntRequirement):
    """The table's current schema id must be this."""

    current_schema_id: int
    type = "assert-current-schema-id"
    _key = "current-schema-id"
    _attribute = "current_schema_id"
    _description = "current schema id"


@dataclass(frozen=True)
class AssertLastAssignedPartitionId(_IntRequirement):
    """The table's ``last-partition-id`` must be this."""

    last_partition_id: int
    type = "assert-last-assigned-partition-id"
    _key = "last-assigned-partition-id"
    _attribute = "last_partition_id"
    _description = "last assigned partition id"
    _missing_ok = True


@dataclass(frozen=True)
class AssertDefaultSpecId(_IntRequirement):
    """The table's default partition spec id must be this."""

    default_spec_id: int
    type = "assert-default-spec-id"
    _key = "default-spec-id"
    _attribute = "default_spec_id"
    _description = "default partition spec id"


@dataclass(frozen=True)
class AssertDefaultSortOrderId(_IntRequirement):
    """The table's default sort order id must be this."""

    default_sort_order_id: int
    type = "assert-default-sort-order-id"
    _key = "default-sort-order-id"
    _attribute = "default_sort_order_id"
    _description = "default sort order id"


def validate_requirements(
    requirements: Iterable[TableRequirement], metadata: TableMetadata | None
) -> None:
    """Check every requirement against ``metadata``; raise CommitFailedError at the first
    that fails."""
    for requirement in requirements:
        requirement.validate(metadata)


def requirements_for(
    base: TableMetadata | None, updates: Iterable[TableUpdate]
) -> tuple[TableRequirement, ...]:
    """The requirements of committing ``updates`` on top of ``base`` (None: a new table), as
    Java's ``UpdateRequirements.forUpdateTable`` / ``forCreateTable`` derive them."""
    if base is None:
        return (AssertCreate(),)
    out: list[TableRequirement] = []
    if base.table_uuid is not None:
        out.append(AssertTableUUID(base.table_uuid))
    seen: set[str] = set()
    refs_seen: set[str] = set()

    def once(key: str, requirement: TableRequirement) -> None:
        if key not in seen:
            seen.add(key)
            out.append(requirement)

    def ref_unchanged(name: str) -> None:
        # One assertion per ref: Java may repeat it, always with the base's snapshot id.
        if name not in refs_seen:
            refs_seen.add(name)
            ref = base.ref(name)
            out.append(AssertRefSnapshotId(name, None if ref is None else ref.snapshot_id))

    def no_branch_changed() -> None:
        # Java's requireNoBranchesChanged: a branch other than main that moved meanwhile could
        # have been written with a schema or spec being removed.
        for name, ref in base.refs.items():
            if ref.is_branch and name != MAIN_BRANCH:
                ref_unchanged(name)

    for update in updates:
        if isinstance(update, SetSnapshotRef):
            ref_unchanged(update.ref_name)
        elif isinstance(update, AddSchema):
            once("field-id", AssertLastAssignedFieldId(base.last_column_id))
        elif isinstance(update, SetCurrentSchema):
            once("schema", AssertCurrentSchemaId(base.current_schema_id))
        elif isinstance(update, AddPartitionSpec):
            once("partition-id", AssertLastAssignedPartitionId(base.last_partition_id))
        elif isinstance(update, SetDefaultSpec):
            once("spec", AssertDefaultSpecId(base.default_spec_id))
        elif isinstance(update, SetDefaultSortOrder):
            once("order", AssertDefaultSortOrderId(base.default_sort_order_id))
        elif isinstance(update, RemoveSchemas):
            once("schema", AssertCurrentSchemaId(base.current_schema_id))
            no_branch_changed()
        elif isinstance(update, RemovePartitionSpecs):
            once("spec", AssertDefaultSpecId(base.default_spec_id))
            no_branch_changed()
    return tuple(out)
