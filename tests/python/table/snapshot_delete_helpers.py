"""Delete files committed to a catalog table, as Java's ``RowDelta`` would commit them (frazil
writes no delete files itself): position delete files, deletion vectors and equality delete
files, each in a new delete manifest of a snapshot whose other manifests are the parent's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from frazil import _native
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.snapshots import Snapshot
from frazil.table import Table
from frazil.table.snapshot import SnapshotProducer
from frazil.table.snapshot._files import (
    CONTENT_DELETES,
    manifest_rows,
    new_entries,
    spec_of,
    write_entries,
)

FILE_PATH_ID, POS_ID = 2147483546, 2147483545


def _field(name: str, type_: pa.DataType, field_id: int) -> pa.Field:
    return pa.field(name, type_, False, metadata={b"PARQUET:field_id": str(field_id).encode()})


def _delete_file(path: str, content: int, records: int, **extra: Any) -> DataFile:
    row: dict[str, Any] = {
        "content": content,
        "file_path": path,
        "file_format": extra.pop("file_format", "PARQUET"),
        "partition": extra.pop("partition", {}),
        "record_count": records,
        "file_size_in_bytes": Path(path).stat().st_size,
    }
    row.update(extra)
    return DataFile.from_row(row)


def position_deletes(
    table: Table,
    name: str,
    rows: list[tuple[str, int]],
    *,
    partition: dict[str, Any] | None = None,
    referenced: bool = True,
) -> DataFile:
    """A Parquet position delete file of ``(data file, position)`` rows; it names its data
    file in ``referenced_data_file`` when it has one and ``referenced`` is set."""
    path = f"{table.location()}/data/{name}"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    columns = [pa.array([p for p, _ in rows]), pa.array([n for _, n in rows], pa.int64())]
    schema = pa.schema(
        [_field("file_path", pa.string(), FILE_PATH_ID), _field("pos", pa.int64(), POS_ID)]
    )
    pq.write_table(pa.Table.from_arrays(columns, schema=schema), path)
    targets = sorted({p for p, _ in rows})
    extra: dict[str, Any] = {"partition": partition or {}}
    if referenced and len(targets) == 1:
        extra["referenced_data_file"] = targets[0]
    # Java's position delete writers keep full file_path bounds.
    extra["lower_bounds"] = {FILE_PATH_ID: targets[0].encode()}
    extra["upper_bounds"] = {FILE_PATH_ID: targets[-1].encode()}
    return _delete_file(path, 1, len(rows), **extra)


def deletion_vector(
    table: Table,
    name: str,
    data_path: str,
    positions: list[int],
    partition: dict[str, Any] | None = None,
) -> DataFile:
    """A deletion vector (in its own Puffin file) for ``data_path``."""
    path = f"{table.location()}/data/{name}"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    (blob,) = _native.write_deletion_vector_puffin(path, [(data_path, positions)])
    return _delete_file(
        path,
        1,
        blob["record_count"],
        file_format="PUFFIN",
        partition=partition or {},
        referenced_data_file=blob["referenced_data_file"],
        content_offset=blob["content_offset"],
        content_size_in_bytes=blob["content_size_in_bytes"],
    )


def equality_deletes(
    table: Table,
    name: str,
    ids: list[int],
    partition: dict[str, Any] | None = None,
    *,
    metrics: bool = False,
) -> DataFile:
    """A Parquet equality delete file on column ``id`` (field 1); with ``metrics``, the
    value and null counts and bounds of ``id`` a Java writer records."""
    path = f"{table.location()}/data/{name}"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([_field("id", pa.int64(), 1)])
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}, schema=schema), path)
    extra: dict[str, Any] = {}
    if metrics:
        extra = {
            "value_counts": {1: len(ids)},
            "null_value_counts": {1: 0},
            "lower_bounds": {1: min(ids).to_bytes(8, "little", signed=True)},
            "upper_bounds": {1: max(ids).to_bytes(8, "little", signed=True)},
        }
    return _delete_file(path, 2, len(ids), partition=partition or {}, equality_ids=[1], **extra)


class _AddDeletes(SnapshotProducer):
    def __init__(self, table: Table, files: list[DataFile], spec_id: int, operation: str) -> None:
        super().__init__(table.metadata, table.io)
        self._files = files
        self._spec_id = spec_id
        self._operation = operation
        self._row: dict[str, Any] | None = None

    @property
    def operation(self) -> str:
        return self._operation

    def _manifests(self, staged: TableMetadata, parent: Snapshot | None) -> list[dict[str, Any]]:
        spec = spec_of(staged, self._spec_id, "delete files")
        if self._row is None:
            self._row = write_entries(
                self.new_manifest_location(),
                new_entries(self._files),
                staged,
                spec,
                self.snapshot_id,
                self.io,
                content=CONTENT_DELETES,
            )
        for file in self._files:
            self.summary.added_file(spec, file)
        existing = manifest_rows(parent, self.io)
        data = [m for m in existing if int(m.get("content") or 0) == 0]
        deletes = [m for m in existing if int(m.get("content") or 0) != 0]
        return [*data, self._row, *deletes]


def commit_deletes(
    table: Table, files: list[DataFile], *, spec_id: int = 0, operation: str = "overwrite"
) -> None:
    """Commit ``files`` in one new delete manifest (Java's RowDelta: operation ``overwrite``,
    or ``delete`` when it only adds deletes)."""
    with table.transaction() as txn:
        txn.add_change(_AddDeletes(table, files, spec_id, operation))
