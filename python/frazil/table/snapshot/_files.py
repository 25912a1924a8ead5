"""Reading a snapshot's manifests and writing new ones, for the snapshot producers (spec:
"Manifests", "Manifest Lists", "Sequence Number Inheritance"), over :mod:`frazil.manifest`."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import InvalidMetadataError
from frazil.io import FileIO
from frazil.manifest import (
    STATUS_ADDED,
    STATUS_DELETED,
    STATUS_EXISTING,
    DataFile,
    read_manifest,
    read_manifest_list,
    write_manifest,
)
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.snapshots import MAIN_BRANCH, Snapshot

__all__ = [
    "CONTENT_DATA",
    "CONTENT_DELETES",
    "entry_files",
    "latest_snapshot",
    "live_entries",
    "manifest_rows",
    "metadata_dir",
    "new_entries",
    "partition_key",
    "read_entries",
    "spec_of",
    "with_status",
    "write_entries",
]

CONTENT_DATA = 0
CONTENT_DELETES = 1


def latest_snapshot(metadata: TableMetadata, branch: str) -> Snapshot | None:
    """The head of ``branch``; the current snapshot when the branch does not exist yet, which
    a commit to it then creates (Java's ``SnapshotUtil.latestSnapshot``)."""
    if branch == MAIN_BRANCH:
        return metadata.current_snapshot()
    ref = metadata.ref(branch)
    if ref is None:
        return metadata.current_snapshot()
    return metadata.snapshot_by_id(ref.snapshot_id)


def metadata_dir(metadata: TableMetadata) -> str:
    """Where manifests and manifest lists go: ``write.metadata.path`` or
    ``<location>/metadata`` (Java's ``metadataFileLocation``)."""
    directory = metadata.properties.get("write.metadata.path") or (
        metadata.location.rstrip("/") + "/metadata"
    )
    return directory.rstrip("/")


def manifest_rows(snapshot: Snapshot | None, io: FileIO) -> list[dict[str, Any]]:
    """The manifest-list rows of ``snapshot`` (none without a snapshot)."""
    if snapshot is None:
        return []
    if snapshot.manifest_list is None:
        raise InvalidMetadataError(
            f"snapshot {snapshot.snapshot_id} embeds its manifests (a v1 snapshot without a "
            "manifest list): frazil cannot commit on top of it"
        )
    rows: list[dict[str, Any]] = read_manifest_list(snapshot.manifest_list, io=io).to_pylist()
    return rows


def spec_of(metadata: TableMetadata, spec_id: int, what: str) -> PartitionSpec:
    spec = metadata.spec_by_id(spec_id)
    if spec is None:
        raise InvalidMetadataError(f"{what} uses partition spec {spec_id}, which the table lacks")
    return spec


def read_entries(row: Mapping[str, Any], io: FileIO, committed: bool = True) -> pa.Table:
    """A manifest's entries; those of a committed manifest inherit their snapshot id and
    sequence numbers from its list row, a manifest written by this commit keeps nulls (filled
    when the new manifest list is written)."""
    return read_manifest(str(row["manifest_path"]), manifest_file=row if committed else None, io=io)


def live_entries(entries: pa.Table) -> pa.Table:
    """Entries that are not DELETED."""
    return entries.filter(pc.not_equal(entries.column("status"), STATUS_DELETED))


def entry_files(entries: pa.Table) -> list[DataFile]:
    """The ``data_file`` structs of ``entries`` as :class:`DataFile` views."""
    return DataFile.from_arrow(entries.column("data_file"))


def with_status(entries: pa.Table, status: int, snapshot_id: int | None = None) -> pa.Table:
    """``entries`` with their status set (and the snapshot id, when given: a DELETED entry
    carries the deleting snapshot's id, pitfalls: "Writing")."""
    n = entries.num_rows
    index = entries.schema.get_field_index("status")
    out = entries.set_column(index, "status", pa.array([status] * n, pa.int32()))
    if snapshot_id is not None:
        index = out.schema.get_field_index("snapshot_id")
        out = out.set_column(index, "snapshot_id", pa.array([snapshot_id] * n, pa.int64()))
    return out


def new_entries(
    files: Iterable[DataFile], data_sequence_number: int | None = None
) -> list[dict[str, Any]]:
    """ADDED entries for new files: snapshot id and sequence numbers left to inheritance, but
    for an explicit ``data_sequence_number`` (a rewrite's files keep the one of the snapshot it
    started from, so that equality deletes committed since still apply to them)."""
    return [
        {
            "status": STATUS_ADDED,
            "snapshot_id": None,
            "sequence_number": data_sequence_number,
            "file_sequence_number": None,
            "data_file": file.to_row(),
        }
        for file in files
    ]


def write_entries(
    location: str,
    entries: pa.Table | Sequence[Mapping[str, Any]],
    metadata: TableMetadata,
    spec: PartitionSpec,
    snapshot_id: int,
    io: FileIO,
    content: int = CONTENT_DATA,
) -> dict[str, Any]:
    """Writes a manifest of ``entries`` with ``spec`` over the table's current schema;
    returns its manifest-list row."""
    return write_manifest(
        location,
        entries,
        schema=metadata.schema().to_json(),
        spec=spec.to_json(),
        spec_id=spec.spec_id,
        format_version=metadata.format_version,
        snapshot_id=snapshot_id,
        content="deletes" if content == CONTENT_DELETES else "data",
        io=io,
    )


def partition_key(spec_id: int, partition: Mapping[str, Any] | None) -> Hashable:
    """A hashable key of a file's spec and partition tuple."""
    items = sorted((partition or {}).items())
    return (spec_id, tuple((k, repr(v)) for k, v in items))


STATUS_NAMES = {STATUS_EXISTING: "existing", STATUS_ADDED: "added", STATUS_DELETED: "deleted"}
