"""View evolution: creating a view and replacing its version (the Iceberg view spec; Java:
``ViewMetadata.Builder``, the referee where the spec is silent).

:func:`create_view` builds the metadata of a new view; :class:`ReplaceView` adds a new version
and makes it current; :func:`apply_view_updates` applies view updates (the REST protocol's
``add-view-version``, ``set-current-view-version``, ``add-schema``, ``set-location``,
``set-properties``, ``remove-properties``, ``assign-uuid``, ``upgrade-format-version``).

The rules, as Java keeps them:

* A version that equals an existing one (same summary, representations, default catalog and
  namespace and schema; id, timestamp and operation aside) reuses its id; so does a schema equal
  to an existing one. ``-1`` as a version's schema id is the schema added last, and ``-1`` in
  set-current-view-version the version added last.
* Each change of the current version appends to ``version-log``, at the version's timestamp if
  it was added in this commit, else at the time of the change.
* Old versions are expired down to ``version.history.num-entries`` (default 10; it must be
  positive), always keeping the current version and the versions added in this commit; the
  version log is cut before any version no longer kept.
* Replacing a view may not drop a SQL dialect the previous version had, unless the property
  ``replace.drop-dialect.allowed`` is ``true``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import CommitFailedError, InvalidMetadataError, InvalidUpdateError
from frazil.schema import Schema
from frazil.table._apply import same_schema
from frazil.table.updates import (
    LAST_ADDED,
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
)
from frazil.view import (
    SUPPORTED_VIEW_FORMAT_VERSION,
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
)

__all__ = [
    "VERSION_HISTORY_SIZE",
    "AddViewVersion",
    "AssertViewUUID",
    "ReplaceView",
    "SetCurrentViewVersion",
    "apply_view_updates",
    "create_view",
]

VERSION_HISTORY_SIZE = "version.history.num-entries"
_VERSION_HISTORY_SIZE_DEFAULT = 10
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"


@dataclass(frozen=True)
class AddViewVersion(TableUpdate):
    """Add a view version (``schema_id`` -1: the schema added last)."""

    view_version: ViewVersion
    action = "add-view-version"

    def _body(self) -> dict[str, Any]:
        return {"view-version": self.view_version.to_json()}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> AddViewVersion:
        if obj.get("view-version") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'view-version'")
        return cls(ViewVersion.from_json(obj["view-version"]))


@dataclass(frozen=True)
class SetCurrentViewVersion(TableUpdate):
    """Make a version current (-1: the version added last)."""

    view_version_id: int
    action = "set-current-view-version"

    def _body(self) -> dict[str, Any]:
        return {"view-version-id": self.view_version_id}

    @classmethod
    def _read(cls, obj: js.JsonObject, what: str) -> SetCurrentViewVersion:
        return cls(js.get_int(obj, "view-version-id", what))


@dataclass(frozen=True)
@checked(error=InvalidUpdateError)
class AssertViewUUID:
    """The REST requirement ``assert-view-uuid``."""

    uuid: str
    type = "assert-view-uuid"

    def validate(self, metadata: ViewMetadata | None) -> None:
        current = None if metadata is None else metadata.view_uuid
        if current is None or current.lower() != self.uuid.lower():
            raise CommitFailedError(
                f"requirement failed: view UUID does not match: expected {self.uuid}, "
                f"found {current}"
            )

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "uuid": self.uuid}

    @classmethod
    def from_json(cls, node: Any) -> AssertViewUUID:
        obj = js.as_object(node, "view requirement")
        if obj.get("type") != cls.type:
            raise InvalidMetadataError(f"expected an {cls.type!r} requirement, got {obj!r}")
        return cls(js.get_str(obj, "uuid", cls.type))


def _same_version(a: ViewVersion, b: ViewVersion) -> bool:
    return (
        a.summary == b.summary
        and a.representations == b.representations
        and a.default_catalog == b.default_catalog
        and a.default_namespace == b.default_namespace
        and a.schema_id == b.schema_id
    )


def _dialects(version: ViewVersion) -> set[str]:
    return {
        r.dialect.lower() for r in version.representations if isinstance(r, SQLViewRepresentation)
    }


class _ViewBuilder:
    def __init__(self, base: ViewMetadata | None, now: int) -> None:
        self.base = base
        self.now = now
        self.uuid = None if base is None else base.view_uuid
        self.format_version = SUPPORTED_VIEW_FORMAT_VERSION if base is None else base.format_version
        self.location = None if base is None else base.location
        self.properties = {} if base is None else dict(base.properties)
        self.schemas = [] if base is None else list(base.schemas)
        self.versions = [] if base is None else list(base.versions)
        self.history = [] if base is None else list(base.version_log)
        self.current: int | None = None if base is None else base.current_version_id
        self.last_added_schema: int | None = None
        self.last_added_version: int | None = None
        self.added_versions: set[int] = set()

    def apply(self, u: TableUpdate) -> None:
        if isinstance(u, AssignUUID):
            if self.uuid is not None and self.uuid.lower() != u.uuid.lower():
                raise InvalidUpdateError(f"cannot reassign the view UUID {self.uuid} to {u.uuid}")
            self.uuid = u.uuid
        elif isinstance(u, UpgradeFormatVersion):
            if u.format_version < self.format_version:
                raise InvalidUpdateError(
                    f"cannot downgrade a v{self.format_version} view to v{u.format_version}"
                )
            if u.format_version > SUPPORTED_VIEW_FORMAT_VERSION:
                raise InvalidUpdateError(
                    f"cannot upgrade view to format version v{u.format_version}: frazil "
                    f"supports v{SUPPORTED_VIEW_FORMAT_VERSION}"
                )
        elif isinstance(u, SetLocation):
            self.location = u.location
        elif isinstance(u, SetProperties):
            self.properties.update(u.updates)
        elif isinstance(u, RemoveProperties):
            for key in u.removals:
                self.properties.pop(key, None)
        elif isinstance(u, AddSchema):
            self._add_schema(u.schema)
        elif isinstance(u, AddViewVersion):
            self._add_version(u.view_version)
        elif isinstance(u, SetCurrentViewVersion):
            self._set_current(u.view_version_id)
        else:
            raise InvalidUpdateError(f"{u.action!r} is not a view update")

    def _add_schema(self, schema: Schema) -> None:
        existing = next((s for s in self.schemas if same_schema(s, schema)), None)
        if existing is not None:
            return
        new_id = max([0, *(s.schema_id + 1 for s in self.schemas)])
        self.schemas.append(dataclasses.replace(schema, schema_id=new_id))
        self.last_added_schema = new_id

    def _add_version(self, version: ViewVersion) -> None:
        if version.schema_id == LAST_ADDED:
            if self.last_added_schema is None:
                raise InvalidUpdateError("cannot use the last added schema: no schema was added")
            version = dataclasses.replace(version, schema_id=self.last_added_schema)
        if not any(s.schema_id == version.schema_id for s in self.schemas):
            raise InvalidUpdateError(
                f"cannot add view version {version.version_id} with unknown schema "
                f"{version.schema_id}"
            )
        existing = next((v for v in self.versions if _same_version(v, version)), None)
        if existing is not None:
            added = existing.version_id in self.added_versions
            self.last_added_version = existing.version_id if added else None
            return
        new_id = max([version.version_id, *(v.version_id + 1 for v in self.versions)])
        version = dataclasses.replace(version, version_id=new_id)
        self.versions.append(version)
        self.added_versions.add(new_id)
        self.last_added_version = new_id

    def _set_current(self, version_id: int) -> None:
        if version_id == LAST_ADDED:
            if self.last_added_version is None:
                raise InvalidUpdateError("cannot set the last added version: no version was added")
            version_id = self.last_added_version
        if version_id == self.current:
            return
        version = next((v for v in self.versions if v.version_id == version_id), None)
        if version is None:
            raise InvalidUpdateError(f"cannot set current version to unknown version {version_id}")
        self.current = version_id
        when = version.timestamp_ms if version_id in self.added_versions else self.now
        self.history.append(ViewHistoryEntry(when, version_id))

    def build(self) -> ViewMetadata:
        if self.location is None:
            raise InvalidUpdateError("a view needs a location")
        if self.current is None:
            raise InvalidUpdateError("a view needs a current version")
        versions = {v.version_id: v for v in self.versions}
        current = versions[self.current]
        if (
            self.base is not None
            and self.properties.get(REPLACE_DROP_DIALECT_ALLOWED, "false").lower() != "true"
        ):
            previous = self.base.current_version()
            lost = _dialects(previous) - _dialects(current)
            if lost:
                raise InvalidUpdateError(
                    f"cannot replace the view: it would lose the SQL dialects {sorted(lost)} "
                    f"(set {REPLACE_DROP_DIALECT_ALLOWED}=true to allow it)"
                )
        text = self.properties.get(VERSION_HISTORY_SIZE)
        try:
            size = int(text) if text is not None else _VERSION_HISTORY_SIZE_DEFAULT
        except ValueError:
            size = 0
        if size <= 0:
            raise InvalidUpdateError(f"{VERSION_HISTORY_SIZE} must be a positive integer: {text!r}")
        keep_count = max(size, len(self.added_versions | {self.current}))
        kept_versions = self.versions
        history = self.history
        if len(self.versions) > keep_count:
            # Ids are assigned in increasing order: keep the newest, and always the current.
            newest = sorted(versions, reverse=True)
            others = [i for i in newest if i != self.current]
            keep = {self.current, *others[: keep_count - 1]}
            kept_versions = [v for v in self.versions if v.version_id in keep]
            history = []
            for entry in self.history:
                if entry.version_id in keep:
                    history.append(entry)
                else:
                    history.clear()  # never leave a gap in the log
        return ViewMetadata(
            view_uuid=self.uuid if self.uuid is not None else str(uuid_module.uuid4()),
            format_version=self.format_version,
            location=self.location,
            current_version_id=self.current,
            versions=tuple(kept_versions),
            version_log=tuple(history),
            schemas=tuple(self.schemas),
            properties=self.properties,
            extras={} if self.base is None else self.base.extras,
        )


def apply_view_updates(
    metadata: ViewMetadata | None,
    updates: Iterable[TableUpdate],
    *,
    timestamp_ms: int | None = None,
) -> ViewMetadata:
    """Apply view updates in order to ``metadata`` (None: create a new view)."""
    now = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    builder = _ViewBuilder(metadata, now)
    for update in updates:
        builder.apply(update)
    return builder.build()


def _schema_with_aliases(
    schema: Schema, aliases: Sequence[str] | None, docs: Sequence[str | None] | None
) -> Schema:
    fields = list(schema.fields)
    for values, what in ((aliases, "aliases"), (docs, "docs")):
        if values is not None and len(values) != len(fields):
            raise InvalidUpdateError(
                f"got {len(values)} column {what} for a view schema of {len(fields)} columns"
            )
    if aliases is not None:
        fields = [dataclasses.replace(f, name=a) for f, a in zip(fields, aliases, strict=True)]
    if docs is not None:
        fields = [dataclasses.replace(f, doc=d) for f, d in zip(fields, docs, strict=True)]
    return Schema(
        fields=tuple(fields),
        schema_id=schema.schema_id,
        identifier_field_ids=schema.identifier_field_ids,
    )


class ReplaceView:
    """A new version of a view, made current. ``sql`` maps dialect -> SQL text (or give
    ``representations``). The default catalog and namespace default to the current version's.
    ``column_aliases``/``column_docs`` rename and document the schema's top-level columns."""

    def __init__(
        self,
        metadata: ViewMetadata,
        *,
        schema: Schema,
        sql: Mapping[str, str] | None = None,
        representations: Sequence[ViewRepresentation] | None = None,
        default_namespace: Sequence[str] | None = None,
        default_catalog: str | None = None,
        column_aliases: Sequence[str] | None = None,
        column_docs: Sequence[str | None] | None = None,
        summary: Mapping[str, str] | None = None,
        timestamp_ms: int | None = None,
    ) -> None:
        if not isinstance(metadata, ViewMetadata):
            raise InvalidUpdateError(f"ReplaceView needs a ViewMetadata, got {metadata!r}")
        self._base = metadata
        current = metadata.current_version()
        reps = list(representations or ())
        reps += [SQLViewRepresentation(text, dialect) for dialect, text in (sql or {}).items()]
        if not reps:
            raise InvalidUpdateError("a view version needs at least one representation")
        now = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
        self._schema = _schema_with_aliases(schema, column_aliases, column_docs)
        self._version = ViewVersion(
            version_id=max(v.version_id for v in metadata.versions) + 1,
            timestamp_ms=now,
            schema_id=LAST_ADDED,
            summary=dict(summary or {"operation": "replace"}),
            representations=tuple(reps),
            default_catalog=default_catalog
            if default_catalog is not None
            else current.default_catalog,
            default_namespace=tuple(default_namespace)
            if default_namespace is not None
            else current.default_namespace,
        )
        self._now = now

    def updates(self) -> tuple[TableUpdate, ...]:
        version = self._version
        existing = next((s for s in self._base.schemas if same_schema(s, self._schema)), None)
        if existing is None:
            return (
                AddSchema(self._schema),
                AddViewVersion(version),
                SetCurrentViewVersion(LAST_ADDED),
            )
        version = dataclasses.replace(version, schema_id=existing.schema_id)
        same = next((v for v in self._base.versions if _same_version(v, version)), None)
        if same is not None:
            # Back to a version the view has (Java reuses it rather than adding a copy).
            if same.version_id == self._base.current_version_id:
                return ()
            return (SetCurrentViewVersion(same.version_id),)
        return (AddViewVersion(version), SetCurrentViewVersion(LAST_ADDED))

    def requirements(self) -> tuple[AssertViewUUID, ...]:
        uuid = self._base.view_uuid
        return () if uuid is None else (AssertViewUUID(uuid),)

    def commit_to(self, metadata: ViewMetadata | None = None) -> ViewMetadata:
        target = self._base if metadata is None else metadata
        for requirement in self.requirements():
            requirement.validate(target)
        updates = self.updates()
        if not updates:
            return target
        return apply_view_updates(target, updates, timestamp_ms=self._now)


def create_view(
    location: str,
    schema: Schema,
    sql: Mapping[str, str],
    *,
    default_namespace: Sequence[str],
    default_catalog: str | None = None,
    column_aliases: Sequence[str] | None = None,
    column_docs: Sequence[str | None] | None = None,
    properties: Mapping[str, str] | None = None,
    view_uuid: str | None = None,
    timestamp_ms: int | None = None,
) -> ViewMetadata:
    """Metadata of a new view: version 1 with the given SQL (dialect -> text) and schema."""
    if not sql:
        raise InvalidUpdateError("a view needs at least one SQL representation")
    now = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    version = ViewVersion(
        version_id=1,
        timestamp_ms=now,
        schema_id=LAST_ADDED,
        summary={"operation": "create"},
        representations=tuple(SQLViewRepresentation(text, d) for d, text in sql.items()),
        default_catalog=default_catalog,
        default_namespace=tuple(default_namespace),
    )
    updates: list[TableUpdate] = [
        AssignUUID(view_uuid if view_uuid is not None else str(uuid_module.uuid4())),
        SetLocation(location),
        AddSchema(_schema_with_aliases(schema, column_aliases, column_docs)),
        AddViewVersion(version),
        SetCurrentViewVersion(LAST_ADDED),
    ]
    if properties:
        updates.insert(2, SetProperties(properties))
    return apply_view_updates(None, updates, timestamp_ms=now)
