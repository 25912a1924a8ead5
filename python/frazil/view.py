"""View metadata (the Iceberg view spec, format version 1).

The view spec in the repository is an early draft: its example has no
``view-uuid``, keeps ``schema-id``, ``default-catalog`` and
``default-namespace`` in each SQL representation, and has ``parent-version-id``
in versions and ``current-schema-id`` at the top. Apache Iceberg Java 1.10
writes the final format: ``view-uuid``; versions with ``version-id``,
``timestamp-ms``, ``schema-id``, ``summary``, ``default-catalog``,
``default-namespace`` and ``representations``; ``version-log``; ``schemas``;
``properties``.

frazil reads both. Fields of the final format are modelled; anything else in
the metadata, a version or a representation (the draft's fields) is kept in
``extras`` and written back where it was, so a draft file round-trips. A
version's :attr:`ViewVersion.effective_schema_id` falls back to the draft's
per-representation ``schema-id``. Metadata built with frazil has every field
Java requires and is written as Java writes it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import FrazilError, InvalidMetadataError, UnsupportedFormatVersionError
from frazil.schema import Schema

__all__ = [
    "SQLViewRepresentation",
    "UnknownViewRepresentation",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewRepresentation",
    "ViewVersion",
]

SUPPORTED_VIEW_FORMAT_VERSION = 1


def _extras(obj: Mapping[str, Any], known: set[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def _add_extras(out: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extras.items():
        out.setdefault(key, value)
    return out


@dataclass(frozen=True)
@checked
class SQLViewRepresentation:
    """A view's SQL text and its dialect."""

    sql: str
    dialect: str
    extras: Mapping[str, Any] = field(default_factory=dict, hash=False)

    type = "sql"

    def __post_init__(self) -> None:
        object.__setattr__(self, "extras", dict(self.extras))

    def to_json(self) -> dict[str, Any]:
        return _add_extras({"type": "sql", "sql": self.sql, "dialect": self.dialect}, self.extras)


@dataclass(frozen=True)
@checked
class UnknownViewRepresentation:
    """A representation of a type frazil does not know, kept as read."""

    type: str
    extras: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        return _add_extras({"type": self.type}, self.extras)


ViewRepresentation = SQLViewRepresentation | UnknownViewRepresentation


def _representation_from_json(node: Any) -> ViewRepresentation:
    what = "view representation"
    obj = js.as_object(node, what)
    kind = js.get_str(obj, "type", what).lower()
    if kind == "sql":
        return SQLViewRepresentation(
            sql=js.get_str(obj, "sql", "SQL view representation"),
            dialect=js.get_str(obj, "dialect", "SQL view representation"),
            extras=_extras(obj, {"type", "sql", "dialect"}),
        )
    return UnknownViewRepresentation(kind, _extras(obj, {"type"}))


@dataclass(frozen=True, kw_only=True)
@checked
class ViewVersion:
    """A version of a view. ``schema_id`` and ``default_namespace`` are None only for draft
    metadata that did not have them."""

    version_id: int
    timestamp_ms: int
    schema_id: int | None
    summary: Mapping[str, str] = field(default_factory=dict, hash=False)
    representations: tuple[ViewRepresentation, ...] = ()
    default_catalog: str | None = None
    default_namespace: tuple[str, ...] | None = ()
    extras: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", dict(self.summary))
        object.__setattr__(self, "representations", tuple(self.representations))
        object.__setattr__(self, "extras", dict(self.extras))
        if self.default_namespace is not None:
            object.__setattr__(self, "default_namespace", tuple(self.default_namespace))
        dialects: set[str] = set()
        for r in self.representations:
            if isinstance(r, SQLViewRepresentation):
                if r.dialect.lower() in dialects:
                    raise InvalidMetadataError(
                        f"view version {self.version_id}: more than one SQL representation for "
                        f"dialect {r.dialect!r}"
                    )
                dialects.add(r.dialect.lower())

    @property
    def operation(self) -> str | None:
        return self.summary.get("operation")

    @property
    def effective_schema_id(self) -> int | None:
        """``schema_id``, or for draft metadata the first representation's ``schema-id``."""
        if self.schema_id is not None:
            return self.schema_id
        for r in self.representations:
            value = r.extras.get("schema-id")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The SQL representation of ``dialect`` (case-insensitive), or None."""
        return next(
            (
                r
                for r in self.representations
                if isinstance(r, SQLViewRepresentation) and r.dialect.lower() == dialect.lower()
            ),
            None,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version-id": self.version_id, "timestamp-ms": self.timestamp_ms}
        if self.schema_id is not None:
            out["schema-id"] = self.schema_id
        out["summary"] = dict(self.summary)
        if self.default_catalog is not None:
            out["default-catalog"] = self.default_catalog
        if self.default_namespace is not None:
            out["default-namespace"] = list(self.default_namespace)
        out["representations"] = [r.to_json() for r in self.representations]
        return _add_extras(out, self.extras)

    @classmethod
    def from_json(cls, node: Any) -> ViewVersion:
        obj = js.as_object(node, "view version")
        version_id = js.get_int(obj, "version-id", "view version")
        what = f"view version {version_id}"
        return cls(
            version_id=version_id,
            timestamp_ms=js.get_long(obj, "timestamp-ms", what),
            schema_id=js.opt_int(obj, "schema-id", what),
            summary=js.get_str_map(obj, "summary", what),
            representations=tuple(
                _representation_from_json(r) for r in js.get_list(obj, "representations", what)
            ),
            default_catalog=js.opt_str(obj, "default-catalog", what),
            default_namespace=js.get_str_list(obj, "default-namespace", what)
            if obj.get("default-namespace") is not None
            else None,
            extras=_extras(
                obj,
                {
                    "version-id",
                    "timestamp-ms",
                    "schema-id",
                    "summary",
                    "representations",
                    "default-catalog",
                    "default-namespace",
                },
            ),
        )


@dataclass(frozen=True)
@checked
class ViewHistoryEntry:
    """An entry of ``version-log``: when a version became current."""

    timestamp_ms: int
    version_id: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "version-id": self.version_id}

    @classmethod
    def from_json(cls, node: Any) -> ViewHistoryEntry:
        obj = js.as_object(node, "view version-log entry")
        return cls(
            js.get_long(obj, "timestamp-ms", "view version-log entry"),
            js.get_int(obj, "version-id", "view version-log entry"),
        )


_VIEW_FIELDS = {
    "view-uuid",
    "format-version",
    "location",
    "properties",
    "schemas",
    "current-version-id",
    "versions",
    "version-log",
}


@dataclass(frozen=True, kw_only=True)
@checked
class ViewMetadata:
    """View metadata. ``view_uuid`` is None only for draft metadata without one.
    ``metadata_location`` is the file this was read from, if any (not compared, not copied
    by :meth:`replace`)."""

    view_uuid: str | None
    format_version: int = 1
    location: str
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...] = ()
    schemas: tuple[Schema, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)
    metadata_location: str | None = field(default=None, compare=False, init=False)

    def __post_init__(self) -> None:
        for name in ("versions", "version_log", "schemas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("properties", "extras"):
            object.__setattr__(self, name, dict(getattr(self, name)))
        self._validate()

    def _validate(self) -> None:
        if self.format_version > SUPPORTED_VIEW_FORMAT_VERSION or self.format_version < 1:
            raise UnsupportedFormatVersionError(
                f"cannot read view format version {self.format_version}: frazil supports view "
                f"format version {SUPPORTED_VIEW_FORMAT_VERSION}"
            )
        versions: dict[int, ViewVersion] = {}
        for version in self.versions:
            if version.version_id in versions:
                raise InvalidMetadataError(f"duplicate view version id {version.version_id}")
            versions[version.version_id] = version
        if self.current_version_id not in versions:
            raise InvalidMetadataError(
                f"current-version-id {self.current_version_id} is not among the view versions "
                f"{sorted(versions)}"
            )
        schema_ids: set[int] = set()
        for schema in self.schemas:
            if schema.schema_id in schema_ids:
                raise InvalidMetadataError(f"duplicate view schema id {schema.schema_id}")
            schema_ids.add(schema.schema_id)
        for version in self.versions:
            schema_id = version.effective_schema_id
            if schema_id is not None and schema_id not in schema_ids:
                raise InvalidMetadataError(
                    f"view version {version.version_id} uses schema {schema_id}, which is not "
                    f"among the schemas {sorted(schema_ids)}"
                )

    def replace(self, **changes: Any) -> ViewMetadata:
        return dataclasses.replace(self, **changes)

    def current_version(self) -> ViewVersion:
        return self.version_by_id(self.current_version_id)  # type: ignore[return-value]

    def version_by_id(self, version_id: int) -> ViewVersion | None:
        return next((v for v in self.versions if v.version_id == version_id), None)

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    def schema(self) -> Schema | None:
        """The current version's schema (None only for draft metadata without schemas)."""
        schema_id = self.current_version().effective_schema_id
        if schema_id is None:
            current = self.extras.get("current-schema-id")
            schema_id = current if isinstance(current, int) else None
        return None if schema_id is None else self.schema_by_id(schema_id)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.view_uuid is not None:
            out["view-uuid"] = self.view_uuid
        out["format-version"] = self.format_version
        out["location"] = self.location
        if self.properties:
            out["properties"] = dict(self.properties)
        out["schemas"] = [s.to_json() for s in self.schemas]
        out["current-version-id"] = self.current_version_id
        out["versions"] = [v.to_json() for v in self.versions]
        out["version-log"] = [e.to_json() for e in self.version_log]
        return _add_extras(out, self.extras)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(
        cls, text: str | bytes | Mapping[str, Any], metadata_location: str | None = None
    ) -> ViewMetadata:
        try:
            node = text if isinstance(text, Mapping) else js.parse_json(text, "view metadata")
            return _view_from_dict(js.as_object(node, "view metadata"), metadata_location)
        except FrazilError as error:
            if metadata_location is None:
                raise
            raise type(error)(f"{metadata_location}: {error}") from None
        except RecursionError:
            # Types nested thousands deep: the parsers recurse once per level.
            too_deep = js.too_deep("view metadata")
            if metadata_location is None:
                raise too_deep from None
            raise InvalidMetadataError(f"{metadata_location}: {too_deep}") from None


def _view_from_dict(obj: Mapping[str, Any], metadata_location: str | None) -> ViewMetadata:
    what = "view metadata"
    version = js.get_int(obj, "format-version", what)
    if version > SUPPORTED_VIEW_FORMAT_VERSION or version < 1:
        raise UnsupportedFormatVersionError(
            f"cannot read view format version {version}: frazil supports view format version "
            f"{SUPPORTED_VIEW_FORMAT_VERSION}"
        )
    schemas = (
        tuple(Schema.from_json(s) for s in js.get_list(obj, "schemas", what))
        if obj.get("schemas") is not None
        else ()
    )
    view = ViewMetadata(
        view_uuid=js.opt_str(obj, "view-uuid", what),
        format_version=version,
        location=js.get_str(obj, "location", what),
        current_version_id=js.get_int(obj, "current-version-id", what),
        versions=tuple(ViewVersion.from_json(v) for v in js.get_list(obj, "versions", what)),
        version_log=tuple(
            ViewHistoryEntry.from_json(e) for e in js.get_list(obj, "version-log", what)
        ),
        schemas=schemas,
        properties=js.opt_str_map(obj, "properties", what) or {},
        extras=_extras(obj, _VIEW_FIELDS),
    )
    object.__setattr__(view, "metadata_location", metadata_location)
    return view
