"""The producer that adds and removes data files (Java's ``MergingSnapshotProducer`` with its
``ManifestFilterManager``): new files go to manifests written once; removed files are marked
DELETED (with this snapshot's id) in rewrites of the manifests that held them, the other live
entries of those manifests kept as EXISTING; manifests left without live files are dropped;
the data manifests and the delete manifests are then merged, separately, per
``commit.manifest-merge.*`` (Java's two ``ManifestMergeManager``s)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.errors import CommitValidationError, InvalidUpdateError
from frazil.io import FileIO
from frazil.manifest import STATUS_DELETED, STATUS_EXISTING, DataFile
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.snapshots import Snapshot
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    CONTENT_DELETES,
    entry_files,
    live_entries,
    manifest_rows,
    new_entries,
    partition_key,
    read_entries,
    spec_of,
    with_status,
    write_entries,
)
from frazil.table.snapshot._merge import ManifestMerger, MergeSettings
from frazil.table.snapshot.producer import SnapshotProducer

__all__ = ["MergingProducer", "partition_key"]

Row = dict[str, Any]


class MergingProducer(SnapshotProducer):
    """Adds files, removes files by path or by partition, merges manifests. ``merge``: None
    follows ``commit.manifest-merge.enabled``."""

    def __init__(
        self,
        metadata: TableMetadata,
        io: FileIO,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        merge: bool | None = None,
    ) -> None:
        super().__init__(metadata, io, branch=branch, snapshot_properties=snapshot_properties)
        self._merge = merge
        self._added: dict[int, list[DataFile]] = {}
        self._new_manifests: list[Row] | None = None
        self._delete_paths: dict[str, DataFile | None] = {}
        self._drop_partitions: set[Hashable] = set()
        self._drop_all = False
        # Rewrites of committed manifests, by path: (row or None when nothing was deleted,
        # deleted files with their spec). Valid for every attempt: the files to remove are
        # fixed, and a committed manifest never changes.
        self._filtered: dict[str, tuple[Row | None, list[tuple[PartitionSpec, DataFile]]]] = {}
        self._merger = ManifestMerger(io, self.snapshot_id, self.new_manifest_location)
        self._delete_merger = ManifestMerger(
            io, self.snapshot_id, self.new_manifest_location, CONTENT_DELETES
        )

    # --- building -------------------------------------------------------------------------

    def add_file(self, file: DataFile, spec_id: int | None = None, *, owned: bool = False) -> None:
        """Add a data file written with ``spec_id`` (default: the table's default spec).
        ``owned``: the file was written for this change and is deleted if it fails."""
        if self._new_manifests is not None:
            raise InvalidUpdateError("cannot add files after the change was applied")
        if file.content not in (None, 0):
            raise InvalidUpdateError(
                f"{file.file_path} has content {file.content}: only data files can be added here"
            )
        spec = spec_of(self.base, self.base.default_spec_id if spec_id is None else spec_id, "")
        self._added.setdefault(spec.spec_id, []).append(file)
        if owned and file.file_path is not None:
            self.own_data_file(file.file_path)

    def delete_file(self, file: DataFile | str) -> None:
        """Remove a data file (by path or DataFile); it must be live when the commit lands."""
        if isinstance(file, DataFile):
            if file.file_path is None:
                raise InvalidUpdateError("cannot delete a data file without a file_path")
            self._delete_paths[file.file_path] = file
        else:
            self._delete_paths.setdefault(str(file), None)

    def drop_partition(self, spec_id: int, partition: Mapping[str, Any]) -> None:
        """Remove every data file of a partition (dynamic partition overwrite)."""
        self._drop_partitions.add(partition_key(spec_id, partition))

    @property
    def added_files(self) -> list[tuple[int, DataFile]]:
        return [(spec_id, f) for spec_id, files in self._added.items() for f in files]

    @property
    def adds_files(self) -> bool:
        return any(self._added.values())

    @property
    def deletes_files(self) -> bool:
        return bool(self._delete_paths or self._drop_partitions or self._drop_all)

    def _merge_enabled(self, staged: TableMetadata) -> bool:
        return MergeSettings(staged.properties).enabled if self._merge is None else self._merge

    # --- one attempt ----------------------------------------------------------------------

    def _written_new_manifests(self) -> list[Row]:
        """The manifests of the added files, one per spec, written on the first attempt."""
        if self._new_manifests is None:
            rows = []
            for spec_id, files in self._added.items():
                if files:
                    spec = spec_of(self.base, spec_id, "the added files")
                    rows.append(
                        write_entries(
                            self.new_manifest_location(),
                            new_entries(files),
                            self.base,
                            spec,
                            self.snapshot_id,
                            self.io,
                        )
                    )
            self._new_manifests = rows
        return self._new_manifests

    def _filter_manifest(
        self, staged: TableMetadata, manifest: Row
    ) -> tuple[Row | None, list[tuple[PartitionSpec, DataFile]]]:
        path = str(manifest["manifest_path"])
        cached = self._filtered.get(path)
        if cached is not None:
            return cached
        spec = spec_of(staged, int(manifest["partition_spec_id"]), f"manifest {path}")
        entries = live_entries(read_entries(manifest, self.io))
        files = entries.column("data_file")
        paths = pc.struct_field(files, "file_path")
        mask = pc.is_in(paths, pa.array(list(self._delete_paths), pa.string()))
        if self._drop_partitions:
            partitions = pc.struct_field(files, "partition").to_pylist()
            dropped = [partition_key(spec.spec_id, p) in self._drop_partitions for p in partitions]
            mask = pc.or_(mask, pa.array(dropped, pa.bool_()))
        if self._drop_all:
            mask = pa.array([True] * entries.num_rows, pa.bool_())
        mask = pc.fill_null(mask, False)
        if not pc.any(mask).as_py():
            result: tuple[Row | None, list[tuple[PartitionSpec, DataFile]]] = (None, [])
        else:
            deleted = with_status(entries.filter(mask), STATUS_DELETED, self.snapshot_id)
            kept = with_status(entries.filter(pc.invert(mask)), STATUS_EXISTING)
            row = write_entries(
                self.new_manifest_location(),
                pa.concat_tables([kept, deleted]),
                staged,
                spec,
                self.snapshot_id,
                self.io,
            )
            result = (row, [(spec, f) for f in entry_files(deleted)])
        self._filtered[path] = result
        return result

    def _filter(
        self, staged: TableMetadata, manifests: Iterable[Row]
    ) -> tuple[list[Row], list[tuple[PartitionSpec, DataFile]]]:
        out: list[Row] = []
        deleted: list[tuple[PartitionSpec, DataFile]] = []
        for manifest in manifests:
            if not self.deletes_files:
                out.append(manifest)
                continue
            row, removed = self._filter_manifest(staged, manifest)
            out.append(manifest if row is None else row)
            deleted.extend(removed)
        found = {f.file_path for _, f in deleted}
        missing = [p for p in self._delete_paths if p not in found]
        if missing:
            raise CommitValidationError(
                f"cannot commit: files to delete are no longer in the table (removed by a "
                f"concurrent commit?): {', '.join(sorted(missing))}"
            )
        return out, deleted

    def removed_data_files(
        self, staged: TableMetadata, parent: Snapshot | None
    ) -> list[tuple[PartitionSpec, DataFile]]:
        """The data files this change removes from ``parent``, with their specs (the manifest
        rewrites are cached for :meth:`_manifests`). A CommitValidationError when a file to
        delete is no longer there."""
        if not self.deletes_files:
            return []
        data = [m for m in manifest_rows(parent, self.io) if int(m.get("content") or 0) == 0]
        return self._filter(staged, data)[1]

    def removed_files(
        self, staged: TableMetadata, parent: Snapshot | None
    ) -> dict[str, tuple[PartitionSpec, DataFile]]:
        """:meth:`removed_data_files` by path, for conflict checks."""
        return {str(f.file_path): (spec, f) for spec, f in self.removed_data_files(staged, parent)}

    def _manifests(self, staged: TableMetadata, parent: Snapshot | None) -> list[Row]:
        new = self._written_new_manifests()
        existing = manifest_rows(parent, self.io)
        data = [m for m in existing if int(m.get("content") or 0) == CONTENT_DATA]
        deletes = [m for m in existing if int(m.get("content") or 0) != CONTENT_DATA]
        filtered, deleted = self._filter(staged, data)
        for spec_id, file in self.added_files:
            self.summary.added_file(spec_of(self.base, spec_id, ""), file)
        for spec, file in deleted:
            self.summary.deleted_file(spec, file)

        def keep(m: Row) -> bool:
            # Only manifests with live files, or written by this commit (Java).
            return bool(
                m.get("added_files_count")
                or m.get("existing_files_count")
                or m.get("added_snapshot_id") in (None, self.snapshot_id)
            )

        data_manifests = [m for m in [*new, *filtered] if keep(m)]
        delete_manifests = [m for m in deletes if keep(m)]
        if self._merge_enabled(staged):
            data_manifests = self._merger.merge(staged, data_manifests)
            delete_manifests = self._delete_merger.merge(staged, delete_manifests)
        return [*data_manifests, *delete_manifests]
