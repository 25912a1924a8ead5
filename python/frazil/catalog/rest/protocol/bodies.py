"""The JSON bodies of config, namespaces, tables, views and commits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frazil import _jsonutil as js
from frazil.catalog.rest.protocol.routes import Endpoint, Identifier
from frazil.errors import (
    InvalidMetadataError,
    ValidationError,
)
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table.requirements import TableRequirement, requirement_from_json
from frazil.table.updates import (
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
    update_from_json,
)
from frazil.table.view_updates import AddViewVersion, AssertViewUUID, SetCurrentViewVersion
from frazil.view import ViewMetadata, ViewVersion

# --- shared pieces of the bodies ------------------------------------------------------------


def _namespace(node: Any, what: str) -> Identifier:
    levels = js.as_list(node, f"{what} namespace")
    return tuple(js.check_str(level, "namespace", what) for level in levels)


def _opt_bool(obj: js.JsonObject, key: str, what: str, default: bool) -> bool:
    return default if obj.get(key) is None else js.get_bool(obj, key, what)


def identifier_to_json(identifier: Sequence[str]) -> dict[str, Any]:
    """A table or view identifier as ``TableIdentifier`` (``{"namespace": [...], "name"}``)."""
    ident = tuple(identifier)
    return {"namespace": list(ident[:-1]), "name": ident[-1]}


def identifier_from_json(node: Any, what: str = "table identifier") -> Identifier:
    obj = js.as_object(node, what)
    if obj.get("namespace") is None:
        raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
    return (*_namespace(obj["namespace"], what), js.get_str(obj, "name", what))


def _str_map(obj: js.JsonObject, key: str, what: str) -> dict[str, str]:
    return js.opt_str_map(obj, key, what) or {}


# --- config and namespaces ------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigResponse:
    defaults: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[Endpoint, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}
        if self.endpoints is not None:
            out["endpoints"] = [str(e) for e in self.endpoints]
        return out

    @classmethod
    def from_json(cls, node: Any) -> ConfigResponse:
        what = "config response"
        obj = js.as_object(node, what)
        endpoints = None
        if obj.get("endpoints") is not None:
            endpoints = tuple(Endpoint.parse(e) for e in js.get_str_list(obj, "endpoints", what))
        return cls(_str_map(obj, "defaults", what), _str_map(obj, "overrides", what), endpoints)


@dataclass(frozen=True)
class CreateNamespaceRequest:
    namespace: Identifier
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"namespace": list(self.namespace), "properties": dict(self.properties)}

    @classmethod
    def from_json(cls, node: Any) -> CreateNamespaceRequest:
        what = "create namespace request"
        obj = js.as_object(node, what)
        if obj.get("namespace") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
        return cls(_namespace(obj["namespace"], what), _str_map(obj, "properties", what))


@dataclass(frozen=True)
class NamespaceResponse:
    """``CreateNamespaceResponse`` and ``GetNamespaceResponse``: a namespace and its
    properties (None: the server stores no properties)."""

    namespace: Identifier
    properties: Mapping[str, str] | None = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        props = None if self.properties is None else dict(self.properties)
        return {"namespace": list(self.namespace), "properties": props}

    @classmethod
    def from_json(cls, node: Any) -> NamespaceResponse:
        what = "namespace response"
        obj = js.as_object(node, what)
        if obj.get("namespace") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
        return cls(_namespace(obj["namespace"], what), js.opt_str_map(obj, "properties", what))


@dataclass(frozen=True)
class ListNamespacesResponse:
    namespaces: tuple[Identifier, ...]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "namespaces": [list(ns) for ns in self.namespaces],
            "next-page-token": self.next_page_token,
        }

    @classmethod
    def from_json(cls, node: Any) -> ListNamespacesResponse:
        what = "list namespaces response"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "namespaces", what) if obj.get("namespaces") is not None else []
        return cls(
            tuple(_namespace(ns, what) for ns in items), js.opt_str(obj, "next-page-token", what)
        )


@dataclass(frozen=True)
class UpdateNamespacePropertiesRequest:
    removals: tuple[str, ...] = ()
    updates: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        both = sorted(set(self.removals) & set(self.updates))
        if both:
            raise ValidationError(
                f"invalid namespace properties update: keys {both} are both removed and set"
            )

    def to_json(self) -> dict[str, Any]:
        return {"removals": list(self.removals), "updates": dict(self.updates)}

    @classmethod
    def from_json(cls, node: Any) -> UpdateNamespacePropertiesRequest:
        what = "update namespace properties request"
        obj = js.as_object(node, what)
        removals = js.get_str_list(obj, "removals", what) if obj.get("removals") is not None else ()
        return cls(tuple(dict.fromkeys(removals)), _str_map(obj, "updates", what))


@dataclass(frozen=True)
class UpdateNamespacePropertiesResponse:
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    missing: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        missing = None if self.missing is None else list(self.missing)
        return {"updated": list(self.updated), "removed": list(self.removed), "missing": missing}

    @classmethod
    def from_json(cls, node: Any) -> UpdateNamespacePropertiesResponse:
        what = "update namespace properties response"
        obj = js.as_object(node, what)
        missing = js.get_str_list(obj, "missing", what) if obj.get("missing") is not None else None
        return cls(
            js.get_str_list(obj, "updated", what), js.get_str_list(obj, "removed", what), missing
        )


@dataclass(frozen=True)
class ListTablesResponse:
    """The identifiers of tables (or views) in a namespace, one page of them."""

    identifiers: tuple[Identifier, ...]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "identifiers": [identifier_to_json(i) for i in self.identifiers],
            "next-page-token": self.next_page_token,
        }

    @classmethod
    def from_json(cls, node: Any) -> ListTablesResponse:
        what = "list tables response"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "identifiers", what) if obj.get("identifiers") is not None else []
        return cls(
            tuple(identifier_from_json(i, f"{what} identifier") for i in items),
            js.opt_str(obj, "next-page-token", what),
        )


# --- tables ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTableRequest:
    name: str
    schema: Schema
    location: str | None = None
    partition_spec: PartitionSpec | None = None
    write_order: SortOrder | None = None
    stage_create: bool = False
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "schema": self.schema.to_json()}
        if self.location is not None:
            out["location"] = self.location
        if self.partition_spec is not None:
            out["partition-spec"] = self.partition_spec.to_json()
        if self.write_order is not None:
            out["write-order"] = self.write_order.to_json()
        out["stage-create"] = self.stage_create
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, node: Any) -> CreateTableRequest:
        what = "create table request"
        obj = js.as_object(node, what)
        if obj.get("schema") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'schema'")
        spec = None
        if obj.get("partition-spec") is not None:
            spec_obj = js.as_object(obj["partition-spec"], f"{what} partition-spec")
            # The request's spec may be unbound (no spec-id); it becomes the table's spec 0.
            spec_id = js.opt_int(spec_obj, "spec-id", f"{what} partition-spec")
            fields = js.get_list(spec_obj, "fields", f"{what} partition-spec")
            spec = PartitionSpec.from_json_fields(fields, 0 if spec_id is None else spec_id)
        order = None
        if obj.get("write-order") is not None:
            order = SortOrder.from_json(obj["write-order"])
        return cls(
            name=js.get_str(obj, "name", what),
            schema=Schema.from_json(obj["schema"]),
            location=js.opt_str(obj, "location", what),
            partition_spec=spec,
            write_order=order,
            stage_create=_opt_bool(obj, "stage-create", what, False),
            properties=_str_map(obj, "properties", what),
        )


@dataclass(frozen=True)
class StorageCredential:
    prefix: str
    config: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "config": dict(self.config)}

    @classmethod
    def from_json(cls, node: Any) -> StorageCredential:
        what = "storage credential"
        obj = js.as_object(node, what)
        return cls(js.get_str(obj, "prefix", what), js.get_str_map(obj, "config", what))


def _credentials(obj: js.JsonObject, what: str) -> tuple[StorageCredential, ...]:
    if obj.get("storage-credentials") is None:
        return ()
    items = js.get_list(obj, "storage-credentials", what)
    return tuple(StorageCredential.from_json(c) for c in items)


@dataclass(frozen=True)
class LoadTableResult:
    """A table's metadata, the file it is in (None: staged, not committed), the table's
    configuration (FileIO properties, a ``token``) and storage credentials."""

    metadata: TableMetadata
    metadata_location: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    storage_credentials: tuple[StorageCredential, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metadata-location": self.metadata_location,
            "metadata": self.metadata.to_dict(),
            "config": dict(self.config),
        }
        if self.storage_credentials:
            out["storage-credentials"] = [c.to_json() for c in self.storage_credentials]
        return out

    @classmethod
    def from_json(cls, node: Any) -> LoadTableResult:
        what = "load table result"
        obj = js.as_object(node, what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        location = js.opt_str(obj, "metadata-location", what)
        return cls(
            TableMetadata.from_json(js.as_object(obj["metadata"], f"{what} metadata"), location),
            location,
            _str_map(obj, "config", what),
            _credentials(obj, what),
        )


@dataclass(frozen=True)
class LoadCredentialsResponse:
    storage_credentials: tuple[StorageCredential, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"storage-credentials": [c.to_json() for c in self.storage_credentials]}

    @classmethod
    def from_json(cls, node: Any) -> LoadCredentialsResponse:
        what = "load credentials response"
        obj = js.as_object(node, what)
        js.get_list(obj, "storage-credentials", what)
        return cls(_credentials(obj, what))


_VIEW_ONLY_UPDATES = (AddViewVersion, SetCurrentViewVersion)
_VIEW_UPDATES = (
    AssignUUID,
    UpgradeFormatVersion,
    AddSchema,
    SetLocation,
    SetProperties,
    RemoveProperties,
    AddViewVersion,
    SetCurrentViewVersion,
)


def _updates(obj: js.JsonObject, what: str, *, view: bool) -> tuple[TableUpdate, ...]:
    out = []
    for node in js.get_list(obj, "updates", what):
        update = update_from_json(node)
        if view and not isinstance(update, _VIEW_UPDATES):
            raise InvalidMetadataError(f"{what}: {update.action!r} is not a view update")
        if not view and isinstance(update, _VIEW_ONLY_UPDATES):
            raise InvalidMetadataError(f"{what}: {update.action!r} is a view update, not a table's")
        out.append(update)
    return tuple(out)


def _opt_identifier(obj: js.JsonObject, what: str) -> Identifier | None:
    node = obj.get("identifier")
    return None if node is None else identifier_from_json(node, f"{what} identifier")


@dataclass(frozen=True)
class CommitTableRequest:
    """Requirements and updates of one table's commit (``identifier`` required inside a
    transaction, optional on the table's own route)."""

    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]
    identifier: Identifier | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identifier is not None:
            out["identifier"] = identifier_to_json(self.identifier)
        out["requirements"] = [r.to_json() for r in self.requirements]
        out["updates"] = [u.to_json() for u in self.updates]
        return out

    @classmethod
    def from_json(cls, node: Any) -> CommitTableRequest:
        what = "commit table request"
        obj = js.as_object(node, what)
        requirements = tuple(
            requirement_from_json(r) for r in js.get_list(obj, "requirements", what)
        )
        return cls(requirements, _updates(obj, what, view=False), _opt_identifier(obj, what))


@dataclass(frozen=True)
class CommitTableResponse:
    metadata_location: str
    metadata: TableMetadata

    def to_json(self) -> dict[str, Any]:
        return {"metadata-location": self.metadata_location, "metadata": self.metadata.to_dict()}

    @classmethod
    def from_json(cls, node: Any) -> CommitTableResponse:
        what = "commit table response"
        obj = js.as_object(node, what)
        location = js.get_str(obj, "metadata-location", what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        metadata = js.as_object(obj["metadata"], f"{what} metadata")
        return cls(location, TableMetadata.from_json(metadata, location))


@dataclass(frozen=True)
class CommitTransactionRequest:
    """Commits to several tables, all or none (each change names its table, once)."""

    table_changes: tuple[CommitTableRequest, ...]

    def __post_init__(self) -> None:
        if not self.table_changes:
            raise ValidationError("invalid transaction: it changes no table")
        seen: set[Identifier] = set()
        for change in self.table_changes:
            if change.identifier is None:
                raise ValidationError("invalid transaction: a table change has no identifier")
            if change.identifier in seen:
                raise ValidationError(
                    f"invalid transaction: table {'.'.join(change.identifier)} is changed twice"
                )
            seen.add(change.identifier)

    def to_json(self) -> dict[str, Any]:
        return {"table-changes": [c.to_json() for c in self.table_changes]}

    @classmethod
    def from_json(cls, node: Any) -> CommitTransactionRequest:
        what = "commit transaction request"
        obj = js.as_object(node, what)
        changes = js.get_list(obj, "table-changes", what)
        return cls(tuple(CommitTableRequest.from_json(c) for c in changes))


@dataclass(frozen=True)
class RegisterTableRequest:
    name: str
    metadata_location: str
    overwrite: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "metadata-location": self.metadata_location}
        if self.overwrite:
            out["overwrite"] = True
        return out

    @classmethod
    def from_json(cls, node: Any) -> RegisterTableRequest:
        what = "register table request"
        obj = js.as_object(node, what)
        return cls(
            js.get_str(obj, "name", what),
            js.get_str(obj, "metadata-location", what),
            _opt_bool(obj, "overwrite", what, False),
        )


@dataclass(frozen=True)
class RenameTableRequest:
    """A table's (or view's) rename."""

    source: Identifier
    destination: Identifier

    def to_json(self) -> dict[str, Any]:
        return {
            "source": identifier_to_json(self.source),
            "destination": identifier_to_json(self.destination),
        }

    @classmethod
    def from_json(cls, node: Any) -> RenameTableRequest:
        what = "rename request"
        obj = js.as_object(node, what)
        for key in ("source", "destination"):
            if obj.get(key) is None:
                raise InvalidMetadataError(f"{what} is missing required field {key!r}")
        return cls(
            identifier_from_json(obj["source"], f"{what} source"),
            identifier_from_json(obj["destination"], f"{what} destination"),
        )


# --- views ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateViewRequest:
    name: str
    schema: Schema
    view_version: ViewVersion
    properties: Mapping[str, str] = field(default_factory=dict)
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.location is not None:
            out["location"] = self.location
        out["schema"] = self.schema.to_json()
        out["view-version"] = self.view_version.to_json()
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, node: Any) -> CreateViewRequest:
        what = "create view request"
        obj = js.as_object(node, what)
        for key in ("schema", "view-version"):
            if obj.get(key) is None:
                raise InvalidMetadataError(f"{what} is missing required field {key!r}")
        return cls(
            name=js.get_str(obj, "name", what),
            schema=Schema.from_json(obj["schema"]),
            view_version=ViewVersion.from_json(obj["view-version"]),
            properties=_str_map(obj, "properties", what),
            location=js.opt_str(obj, "location", what),
        )


@dataclass(frozen=True)
class LoadViewResult:
    metadata_location: str
    metadata: ViewMetadata
    config: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "metadata-location": self.metadata_location,
            "metadata": self.metadata.to_dict(),
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, node: Any) -> LoadViewResult:
        what = "load view result"
        obj = js.as_object(node, what)
        location = js.get_str(obj, "metadata-location", what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        metadata = ViewMetadata.from_json(js.as_object(obj["metadata"], f"{what} metadata"))
        object.__setattr__(metadata, "metadata_location", location)
        return cls(location, metadata, _str_map(obj, "config", what))


@dataclass(frozen=True)
class CommitViewRequest:
    updates: tuple[TableUpdate, ...]
    requirements: tuple[AssertViewUUID, ...] = ()
    identifier: Identifier | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identifier is not None:
            out["identifier"] = identifier_to_json(self.identifier)
        out["requirements"] = [r.to_json() for r in self.requirements]
        out["updates"] = [u.to_json() for u in self.updates]
        return out

    @classmethod
    def from_json(cls, node: Any) -> CommitViewRequest:
        what = "commit view request"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "requirements", what) if obj.get("requirements") else []
        requirements = []
        for item in items:
            kind = js.get_str(js.as_object(item, "view requirement"), "type", "view requirement")
            if kind != AssertViewUUID.type:
                raise InvalidMetadataError(
                    f"unknown view requirement type {kind!r} (known: {AssertViewUUID.type})"
                )
            requirements.append(AssertViewUUID.from_json(item))
        return cls(_updates(obj, what, view=True), tuple(requirements), _opt_identifier(obj, what))
