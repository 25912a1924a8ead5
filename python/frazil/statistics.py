"""Table statistics files (spec: "Table statistics") and partition statistics files.

Statistics are informational: frazil reads and writes them back as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked

__all__ = ["BlobMetadata", "PartitionStatisticsFile", "StatisticsFile"]


@dataclass(frozen=True)
@checked
class BlobMetadata:
    """A Puffin blob of a statistics file: type, source snapshot, fields, properties."""

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "properties", dict(self.properties))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "fields": list(self.fields),
        }
        if self.properties:
            out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, node: Any) -> BlobMetadata:
        what = "blob metadata"
        obj = js.as_object(node, what)
        return cls(
            type=js.get_str(obj, "type", what),
            snapshot_id=js.get_long(obj, "snapshot-id", what),
            sequence_number=js.get_long(obj, "sequence-number", what),
            fields=js.get_int_list(obj, "fields", what),
            properties=js.opt_str_map(obj, "properties", what) or {},
        )


@dataclass(frozen=True)
@checked
class StatisticsFile:
    """A Puffin statistics file of a snapshot. ``key_metadata`` (base64) is kept if present."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()
    key_metadata: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "blob_metadata", tuple(self.blob_metadata))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
            "file-footer-size-in-bytes": self.file_footer_size_in_bytes,
        }
        if self.key_metadata is not None:
            out["key-metadata"] = self.key_metadata
        out["blob-metadata"] = [b.to_json() for b in self.blob_metadata]
        return out

    @classmethod
    def from_json(cls, node: Any) -> StatisticsFile:
        obj = js.as_object(node, "statistics file")
        snapshot_id = js.get_long(obj, "snapshot-id", "statistics file")
        what = f"statistics file of snapshot {snapshot_id}"
        return cls(
            snapshot_id=snapshot_id,
            statistics_path=js.get_str(obj, "statistics-path", what),
            file_size_in_bytes=js.get_long(obj, "file-size-in-bytes", what),
            file_footer_size_in_bytes=js.get_long(obj, "file-footer-size-in-bytes", what),
            blob_metadata=tuple(
                BlobMetadata.from_json(b) for b in js.get_list(obj, "blob-metadata", what)
            ),
            key_metadata=js.opt_str(obj, "key-metadata", what),
        )


@dataclass(frozen=True)
@checked
class PartitionStatisticsFile:
    """A partition statistics file of a snapshot."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
        }

    @classmethod
    def from_json(cls, node: Any) -> PartitionStatisticsFile:
        obj = js.as_object(node, "partition statistics file")
        snapshot_id = js.get_long(obj, "snapshot-id", "partition statistics file")
        what = f"partition statistics file of snapshot {snapshot_id}"
        return cls(
            snapshot_id=snapshot_id,
            statistics_path=js.get_str(obj, "statistics-path", what),
            file_size_in_bytes=js.get_long(obj, "file-size-in-bytes", what),
        )
