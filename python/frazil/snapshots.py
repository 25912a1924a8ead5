"""Snapshots, references and the metadata logs (spec: "Snapshots", "Snapshot Reference",
"Snapshot Retention Policy", Appendix C "Table Metadata and Snapshots")."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import InvalidMetadataError

__all__ = [
    "MAIN_BRANCH",
    "MetadataLogEntry",
    "Operation",
    "Snapshot",
    "SnapshotLogEntry",
    "SnapshotRef",
    "SnapshotRefType",
]

MAIN_BRANCH = "main"


class Operation(str, enum.Enum):
    """The snapshot summary's ``operation`` values of the spec."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
@checked
class Snapshot:
    """A snapshot. ``summary`` holds the whole summary map, ``operation`` included, as read
    (None when the JSON had none). ``manifest_list`` is set for v2+ snapshots; v1 snapshots may
    instead embed ``manifests``. v1 snapshots read with ``sequence_number`` 0 (Appendix E).
    ``first_row_id``, ``added_rows`` and ``key_id`` are the v3 fields Java writes."""

    snapshot_id: int
    timestamp_ms: int
    parent_snapshot_id: int | None = None
    sequence_number: int = 0
    manifest_list: str | None = None
    manifests: tuple[str, ...] | None = None
    summary: Mapping[str, str] | None = field(default=None, hash=False)
    schema_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None

    def __post_init__(self) -> None:
        if self.manifests is not None:
            object.__setattr__(self, "manifests", tuple(self.manifests))
        if self.summary is not None:
            object.__setattr__(self, "summary", dict(self.summary))
        if self.manifest_list is not None and self.manifests is not None:
            raise InvalidMetadataError(
                f"snapshot {self.snapshot_id}: 'manifests' must be omitted when 'manifest-list' "
                "is present (spec: Snapshots)"
            )

    @property
    def operation(self) -> str | None:
        return None if self.summary is None else self.summary.get("operation")

    def to_json(self) -> dict[str, Any]:
        """Java's form: ``sequence-number`` only when above 0 (never in v1 tables, whose
        snapshots all have 0), ``summary`` with ``operation`` first."""
        out: dict[str, Any] = {}
        if self.sequence_number > 0:
            out["sequence-number"] = self.sequence_number
        out["snapshot-id"] = self.snapshot_id
        if self.parent_snapshot_id is not None:
            out["parent-snapshot-id"] = self.parent_snapshot_id
        out["timestamp-ms"] = self.timestamp_ms
        if self.summary is not None:
            summary = {}
            if "operation" in self.summary:
                summary["operation"] = self.summary["operation"]
            summary.update((k, v) for k, v in self.summary.items() if k != "operation")
            out["summary"] = summary
        if self.manifest_list is not None:
            out["manifest-list"] = self.manifest_list
        else:
            out["manifests"] = list(self.manifests or ())
        if self.schema_id is not None:
            out["schema-id"] = self.schema_id
        if self.first_row_id is not None:
            out["first-row-id"] = self.first_row_id
        if self.added_rows is not None:
            out["added-rows"] = self.added_rows
        if self.key_id is not None:
            out["key-id"] = self.key_id
        return out

    @classmethod
    def from_json(cls, node: Any) -> Snapshot:
        obj = js.as_object(node, "snapshot")
        snapshot_id = js.get_long(obj, "snapshot-id", "snapshot")
        what = f"snapshot {snapshot_id}"
        summary = js.opt_str_map(obj, "summary", what)
        if summary and "operation" not in summary:
            # Java reads a non-empty summary without an operation as "overwrite" so that the
            # table stays readable; do the same.
            summary = {"operation": Operation.OVERWRITE.value, **summary}
        manifest_list = js.opt_str(obj, "manifest-list", what)
        manifests = None
        if manifest_list is None:
            manifests = js.get_str_list(obj, "manifests", what) if "manifests" in obj else None
            if manifests is None:
                raise InvalidMetadataError(f"{what} has neither 'manifest-list' nor 'manifests'")
        return cls(
            snapshot_id=snapshot_id,
            timestamp_ms=js.get_long(obj, "timestamp-ms", what),
            parent_snapshot_id=js.opt_long(obj, "parent-snapshot-id", what),
            sequence_number=js.opt_long(obj, "sequence-number", what) or 0,
            manifest_list=manifest_list,
            manifests=manifests,
            summary=summary,
            schema_id=js.opt_int(obj, "schema-id", what),
            first_row_id=js.opt_long(obj, "first-row-id", what),
            added_rows=js.opt_long(obj, "added-rows", what),
            key_id=js.opt_str(obj, "key-id", what),
        )


class SnapshotRefType(str, enum.Enum):
    BRANCH = "branch"
    TAG = "tag"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
@checked
class SnapshotRef:
    """A branch or tag with its retention settings (spec: Snapshot Reference). ``None`` for a
    setting means the table property default applies."""

    snapshot_id: int
    type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    def __post_init__(self) -> None:
        kind = self.type
        if not isinstance(kind, SnapshotRefType):
            if not isinstance(kind, str) or kind.lower() not in ("branch", "tag"):
                raise InvalidMetadataError(
                    f"snapshot reference type must be 'branch' or 'tag', got {kind!r}"
                )
            object.__setattr__(self, "type", SnapshotRefType(kind.lower()))
        if self.type is SnapshotRefType.TAG:
            for name in ("min_snapshots_to_keep", "max_snapshot_age_ms"):
                if getattr(self, name) is not None:
                    raise InvalidMetadataError(
                        f"tag of snapshot {self.snapshot_id}: {name.replace('_', '-')} applies "
                        "to branches only"
                    )
        for name in ("min_snapshots_to_keep", "max_snapshot_age_ms", "max_ref_age_ms"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise InvalidMetadataError(
                    f"snapshot reference to {self.snapshot_id}: {name.replace('_', '-')} must be "
                    f"positive, got {value}"
                )

    @classmethod
    def branch(cls, snapshot_id: int, **retention: int | None) -> SnapshotRef:
        return cls(snapshot_id, SnapshotRefType.BRANCH, **retention)

    @classmethod
    def tag(cls, snapshot_id: int, max_ref_age_ms: int | None = None) -> SnapshotRef:
        return cls(snapshot_id, SnapshotRefType.TAG, max_ref_age_ms=max_ref_age_ms)

    @property
    def is_branch(self) -> bool:
        return self.type is SnapshotRefType.BRANCH

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"snapshot-id": self.snapshot_id, "type": self.type.value}
        if self.min_snapshots_to_keep is not None:
            out["min-snapshots-to-keep"] = self.min_snapshots_to_keep
        if self.max_snapshot_age_ms is not None:
            out["max-snapshot-age-ms"] = self.max_snapshot_age_ms
        if self.max_ref_age_ms is not None:
            out["max-ref-age-ms"] = self.max_ref_age_ms
        return out

    @classmethod
    def from_json(cls, node: Any, name: str = "") -> SnapshotRef:
        what = f"snapshot reference {name!r}"
        obj = js.as_object(node, what)
        return cls(
            snapshot_id=js.get_long(obj, "snapshot-id", what),
            type=js.get_str(obj, "type", what),  # type: ignore[arg-type]
            min_snapshots_to_keep=js.opt_int(obj, "min-snapshots-to-keep", what),
            max_snapshot_age_ms=js.opt_long(obj, "max-snapshot-age-ms", what),
            max_ref_age_ms=js.opt_long(obj, "max-ref-age-ms", what),
        )


@dataclass(frozen=True)
@checked
class SnapshotLogEntry:
    """An entry of ``snapshot-log``: when the current snapshot changed, and to which."""

    timestamp_ms: int
    snapshot_id: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "snapshot-id": self.snapshot_id}

    @classmethod
    def from_json(cls, node: Any) -> SnapshotLogEntry:
        obj = js.as_object(node, "snapshot-log entry")
        return cls(
            js.get_long(obj, "timestamp-ms", "snapshot-log entry"),
            js.get_long(obj, "snapshot-id", "snapshot-log entry"),
        )


@dataclass(frozen=True)
@checked
class MetadataLogEntry:
    """An entry of ``metadata-log``: a previous metadata file and when it was replaced."""

    timestamp_ms: int
    metadata_file: str

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "metadata-file": self.metadata_file}

    @classmethod
    def from_json(cls, node: Any) -> MetadataLogEntry:
        obj = js.as_object(node, "metadata-log entry")
        return cls(
            js.get_long(obj, "timestamp-ms", "metadata-log entry"),
            js.get_str(obj, "metadata-file", "metadata-log entry"),
        )
