"""Tables on disk for the scan tests, written with frazil's own manifest writers (planning reads
manifests only: no data file exists).

:class:`TableWriter` commits snapshots one manifest at a time; a snapshot lists its parent's
manifests (as assigned in the parent's manifest list, so their sequence numbers stay) plus the
new ones. :meth:`TableWriter.write` writes the metadata JSON with the refs, snapshot log and
properties asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from frazil import StaticTable
from frazil import manifest as m

UUID = "0f5c5c6e-7d65-4c1b-8c53-5c3c8a5f0b21"

# id, ts, cat, price, flag, day: identity(cat) and day(ts) partition the default spec.
SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "cat", "required": False, "type": "string"},
        {"id": 4, "name": "price", "required": False, "type": "decimal(9,2)"},
        {"id": 5, "name": "flag", "required": False, "type": "boolean"},
        {"id": 6, "name": "dt", "required": False, "type": "date"},
    ],
}
BY_CAT_AND_DAY: dict[str, Any] = {
    "spec-id": 0,
    "fields": [
        {"name": "cat", "transform": "identity", "source-id": 3, "field-id": 1000},
        {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1001},
    ],
}
UNPARTITIONED: dict[str, Any] = {"spec-id": 1, "fields": []}


def long_bytes(value: int) -> bytes:
    return value.to_bytes(8, "little", signed=True)


def data_file(
    path: str,
    partition: Mapping[str, Any] | None = None,
    *,
    records: int = 10,
    size: int = 1000,
    content: int = 0,
    file_format: str = "PARQUET",
    **extra: Any,
) -> dict[str, Any]:
    """A manifest entry's ``data_file`` (also for delete files: ``content`` 1 or 2)."""
    out: dict[str, Any] = {
        "content": content,
        "file_path": path,
        "file_format": file_format,
        "partition": dict(partition or {}),
        "record_count": records,
        "file_size_in_bytes": size,
    }
    out.update(extra)
    return out


def entry(file: Mapping[str, Any], status: int = 1, **extra: Any) -> dict[str, Any]:
    """A manifest entry (ADDED by default; sequence numbers inherited unless given)."""
    out: dict[str, Any] = {"status": status, "data_file": dict(file)}
    out.update(extra)
    return out


class TableWriter:
    """Writes a table's manifests, manifest lists and metadata JSON under ``root``."""

    def __init__(
        self,
        root: Path,
        schema: Mapping[str, Any] = SCHEMA,
        specs: Sequence[Mapping[str, Any]] = (BY_CAT_AND_DAY, UNPARTITIONED),
        format_version: int = 2,
        default_spec_id: int = 0,
    ) -> None:
        self.root = root
        self.meta = root / "metadata"
        self.meta.mkdir(parents=True, exist_ok=True)
        self.schema = dict(schema)
        self.specs = {int(s["spec-id"]): dict(s) for s in specs}
        self.format_version = format_version
        self.default_spec_id = default_spec_id
        self.snapshots: list[dict[str, Any]] = []
        self._manifests: dict[int, list[dict[str, Any]]] = {}
        self._count = 0
        self.next_row_id = 0

    def path(self, name: str) -> str:
        return str(self.root / "data" / name)

    def commit(
        self,
        snapshot_id: int,
        timestamp_ms: int,
        manifests: Sequence[tuple[Sequence[Mapping[str, Any]], int, str]],
        parent: int | None = None,
        carry: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        """A snapshot adding ``manifests``, each ``(entries, spec_id, "data" | "deletes")``,
        on top of ``parent``'s manifests (those ``carry`` accepts, given the manifest list
        row, when given: a rewrite leaves some out)."""
        sequence_number = len(self.snapshots) + 1
        rows = list(self._manifests.get(parent, [])) if parent is not None else []
        if carry is not None:
            rows = [row for row in rows if carry(row)]
        for entries, spec_id, content in manifests:
            self._count += 1
            rows.append(
                m.write_manifest(
                    self.meta / f"m{self._count}.avro",
                    list(entries),
                    schema=self.schema,
                    spec=self.specs[spec_id],
                    snapshot_id=snapshot_id,
                    content=content,
                    format_version=self.format_version,
                )
            )
        manifest_list = self.meta / f"snap-{snapshot_id}.avro"
        first_row_id = self.next_row_id if self.format_version >= 3 else None
        next_row_id = m.write_manifest_list(
            manifest_list,
            rows,
            snapshot_id=snapshot_id,
            sequence_number=sequence_number,
            parent_snapshot_id=parent,
            format_version=self.format_version,
            first_row_id=first_row_id,
        )
        # The rows as assigned (sequence numbers, first row ids), for the children to list.
        self._manifests[snapshot_id] = m.read_manifest_list(manifest_list).to_pylist()
        snapshot: dict[str, Any] = {
            "snapshot-id": snapshot_id,
            "sequence-number": sequence_number,
            "timestamp-ms": timestamp_ms,
            "manifest-list": str(manifest_list),
            "summary": {"operation": "append"},
            "schema-id": int(self.schema.get("schema-id", 0)),
        }
        if parent is not None:
            snapshot["parent-snapshot-id"] = parent
        if self.format_version >= 3:
            assert next_row_id is not None and first_row_id is not None
            snapshot["first-row-id"] = first_row_id
            snapshot["added-rows"] = next_row_id - first_row_id
            self.next_row_id = next_row_id
        self.snapshots.append(snapshot)

    def write(
        self,
        current: int | None = None,
        refs: Mapping[str, tuple[int, str]] | None = None,
        log: Sequence[tuple[int, int]] | None = None,
        properties: Mapping[str, str] | None = None,
        name: str = "v1.metadata.json",
    ) -> Path:
        """The metadata JSON; ``current`` defaults to the last snapshot, ``refs`` maps a name
        to ``(snapshot id, "branch" | "tag")`` (``main`` follows ``current``), ``log`` is the
        snapshot log as ``(snapshot id, ms)`` (default: every snapshot, in commit order)."""
        if current is None and self.snapshots:
            current = self.snapshots[-1]["snapshot-id"]
        all_refs = {n: {"snapshot-id": s, "type": t} for n, (s, t) in (refs or {}).items()}
        if current is not None:
            all_refs["main"] = {"snapshot-id": current, "type": "branch"}
        if log is None:
            log = [(s["snapshot-id"], s["timestamp-ms"]) for s in self.snapshots]
        metadata: dict[str, Any] = {
            "format-version": self.format_version,
            "table-uuid": UUID,
            "location": str(self.root),
            "last-sequence-number": len(self.snapshots),
            "last-updated-ms": max((s["timestamp-ms"] for s in self.snapshots), default=1),
            "last-column-id": max(f["id"] for f in self.schema["fields"]),
            "schemas": [self.schema],
            "current-schema-id": int(self.schema.get("schema-id", 0)),
            "partition-specs": list(self.specs.values()),
            "default-spec-id": self.default_spec_id,
            "last-partition-id": max(
                [999] + [f["field-id"] for s in self.specs.values() for f in s["fields"]]
            ),
            "properties": dict(properties or {}),
            "current-snapshot-id": -1 if current is None else current,
            "snapshots": self.snapshots,
            "snapshot-log": [{"snapshot-id": s, "timestamp-ms": t} for s, t in log],
            "metadata-log": [],
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
            "refs": all_refs,
        }
        if self.format_version >= 3:
            metadata["next-row-id"] = self.next_row_id
        if self.format_version == 1:
            metadata["schema"] = self.schema
            metadata["partition-spec"] = self.specs[self.default_spec_id]["fields"]
        location = self.meta / name
        location.write_text(json.dumps(metadata))
        return location

    def table(self, **kwargs: Any) -> Any:
        return StaticTable.from_metadata(str(self.write(**kwargs)))


def paths(scan: Any) -> list[str]:
    """The data files a scan plans, in plan order."""
    return [task.file.file_path for task in scan.plan_files()]


def names(scan: Any) -> set[str]:
    """The base names of the data files a scan plans."""
    return {Path(p).name for p in paths(scan)}
