"""The producer that adds and removes data and delete files (Java's ``MergingSnapshotProducer``
with its two ``ManifestFilterManager``s): new files go to manifests written once (data and
delete files apart, one manifest per spec); removed files are marked DELETED (with this
snapshot's id) in rewrites of the manifests that held them, the other live entries of those
manifests kept as EXISTING; manifests left without live files are dropped; the data manifests
and the delete manifests are then merged, separately, per ``commit.manifest-merge.*`` (Java's
two ``ManifestMergeManager``s).

Delete files are removed when asked for (keyed by path and ``content_offset``: the deletion
vectors of one Puffin file share its path, pitfalls: "Planning and delete scoping"), and, as
Java removes them whenever a commit removes files: the deletion vectors of data files this
commit removes (they would dangle), and the delete files older than every live data file
(a data sequence number below the smallest of the data manifests: they apply to nothing)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
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
        self._owned_set: set[str] = set()
        self._merge = merge
        self._added: dict[int, list[DataFile]] = {}
        self._new_manifests: list[Row] | None = None
        # Added delete files by spec id, their manifests (written once), and the data files
        # the added deletion vectors reference (at most one vector per data file).
        self._added_deletes: dict[int, list[DataFile]] = {}
        self._new_delete_manifests: list[Row] | None = None
        self._dv_targets: set[str] = set()
        # Delete files to remove, by (path, content_offset).
        self._removed_deletes: dict[tuple[str, int | None], DataFile | None] = {}
        # The data sequence number of the added data files (a rewrite keeps its inputs'); None:
        # inherited from the snapshot.
        self.data_sequence_number: int | None = None
        # The same for added delete files (a rewrite of position deletes keeps the largest of
        # its inputs', so the new files still reach the data files the old ones did).
        self.delete_sequence_number: int | None = None
        self._delete_paths: dict[str, DataFile | None] = {}
        self._drop_partitions: set[Hashable] = set()
        self._drop_all = False
        # Rewrites of committed manifests, by path: (row or None when nothing was deleted,
        # deleted files with their spec). Valid for every attempt: the files to remove are
        # fixed, and a committed manifest never changes.
        self._filtered: dict[str, tuple[Row | None, list[tuple[PartitionSpec, DataFile]]]] = {}
        # The same for delete manifests, by (path, the smallest live data sequence number).
        self._filtered_deletes: dict[
            tuple[str, int], tuple[Row | None, list[tuple[PartitionSpec, DataFile]]]
        ] = {}
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

    def add_delete(self, file: DataFile, spec_id: int, *, owned: bool = False) -> None:
        """Add a delete file (position deletes, a deletion vector, equality deletes) written
        under ``spec_id``; ``owned``: written for this change, deleted if it fails. The format
        version decides which position deletes a table takes (Java's
        ``validateDeleteFileForVersion``): v2 Parquet files, v3 deletion vectors only."""
        if self._new_delete_manifests is not None:
            raise InvalidUpdateError("cannot add files after the change was applied")
        if file.content not in (1, 2):
            raise InvalidUpdateError(
                f"{file.file_path} has content {file.content}: only delete files can be added as "
                "deletes"
            )
        version = self.base.format_version
        is_dv = str(file.file_format or "").upper() == "PUFFIN"
        if version < 2:
            raise InvalidUpdateError("deletes are supported in format version 2 and above")
        if file.content == 1 and version == 2 and is_dv:
            raise InvalidUpdateError(
                f"must not use deletion vectors in a v2 table: {file.file_path}"
            )
        if file.content == 1 and version >= 3 and not is_dv:
            raise InvalidUpdateError(
                f"must use deletion vectors for position deletes in a v{version} table: "
                f"{file.file_path}"
            )
        if is_dv:
            target = file.referenced_data_file
            if target is None:
                raise InvalidUpdateError(
                    f"deletion vector in {file.file_path} has no referenced data file"
                )
            if target in self._dv_targets:
                raise InvalidUpdateError(
                    f"two deletion vectors added for data file {target} (spec: at most one)"
                )
            self._dv_targets.add(target)
        spec = spec_of(self.base, spec_id, f"delete file {file.file_path}")
        self._added_deletes.setdefault(spec.spec_id, []).append(file)
        if owned and file.file_path is not None and file.file_path not in self._owned_set:
            self._owned_set.add(file.file_path)
            self.own_data_file(file.file_path)

    def remove_delete(self, file: DataFile | Any) -> None:
        """Remove a delete file (a :class:`DataFile`, or a planned task's delete file) from
        the table, e.g. a deletion vector replaced by one holding its positions too."""
        path = file.file_path
        if path is None:
            raise InvalidUpdateError("cannot remove a delete file without a file_path")
        self._removed_deletes[(str(path), file.content_offset)] = (
            file if isinstance(file, DataFile) else None
        )

    @property
    def adds_deletes(self) -> bool:
        return any(self._added_deletes.values())

    @property
    def removes_deletes(self) -> bool:
        return bool(self._removed_deletes)

    @property
    def dv_targets(self) -> frozenset[str]:
        """The data files the added deletion vectors reference."""
        return frozenset(self._dv_targets)

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
    def added_deletes(self) -> list[tuple[int, DataFile]]:
        return [(spec_id, f) for spec_id, files in self._added_deletes.items() for f in files]

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
            self._new_manifests = self._write_added(
                self._added, self.data_sequence_number, "the added files", CONTENT_DATA
            )
        return self._new_manifests

    def _written_new_delete_manifests(self) -> list[Row]:
        """The manifests of the added delete files, one per spec, written once."""
        if self._new_delete_manifests is None:
            self._new_delete_manifests = self._write_added(
                self._added_deletes,
                self.delete_sequence_number,
                "the added delete files",
                CONTENT_DELETES,
            )
        return self._new_delete_manifests

    def _write_added(
        self,
        files_by_spec: Mapping[int, Sequence[DataFile]],
        sequence_number: int | None,
        what: str,
        content: int,
    ) -> list[Row]:
        """One manifest of ``content`` per spec of ``files_by_spec``."""
        rows = []
        for spec_id, files in files_by_spec.items():
            if files:
                spec = spec_of(self.base, spec_id, what)
                entries = new_entries(files, sequence_number)
                rows.append(
                    write_entries(
                        self.new_manifest_location(),
                        entries,
                        self.base,
                        spec,
                        self.snapshot_id,
                        self.io,
                        content,
                    )
                )
        return rows

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

    def _filter_delete_manifest(
        self, staged: TableMetadata, manifest: Row, removed_data: frozenset[str], min_sequence: int
    ) -> tuple[Row | None, list[tuple[PartitionSpec, DataFile]]]:
        path = str(manifest["manifest_path"])
        cached = self._filtered_deletes.get((path, min_sequence))
        if cached is not None:
            return cached
        spec = spec_of(staged, int(manifest["partition_spec_id"]), f"manifest {path}")
        entries = live_entries(read_entries(manifest, self.io))
        files = entries.column("data_file")
        keys = zip(
            pc.struct_field(files, "file_path").to_pylist(),
            pc.struct_field(files, "content_offset").to_pylist(),
            strict=True,
        )
        formats = pc.struct_field(files, "file_format").to_pylist()
        targets = pc.struct_field(files, "referenced_data_file").to_pylist()
        sequences = entries.column("sequence_number").to_pylist()
        marked = []
        for key, file_format, target, sequence in zip(
            keys, formats, targets, sequences, strict=True
        ):
            dangling = str(file_format).upper() == "PUFFIN" and target in removed_data
            # Java's dropDeleteFilesOlderThan: older than every live data file, it applies to none.
            old = sequence is not None and 0 < sequence < min_sequence
            marked.append(key in self._removed_deletes or dangling or old)
        mask = pa.array(marked, pa.bool_())
        if not marked or not pc.any(mask).as_py():
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
                CONTENT_DELETES,
            )
            result = (row, [(spec, f) for f in entry_files(deleted)])
        self._filtered_deletes[(path, min_sequence)] = result
        return result

    def _filter_deletes(
        self,
        staged: TableMetadata,
        manifests: Iterable[Row],
        removed_data: frozenset[str],
        min_sequence: int,
    ) -> tuple[list[Row], list[tuple[PartitionSpec, DataFile]]]:
        """The delete manifests without the delete files this commit removes; manifests are
        only rewritten when the commit removes files (as Java's filter manager decides)."""
        if not self._removed_deletes and not removed_data:
            return list(manifests), []
        out: list[Row] = []
        deleted: list[tuple[PartitionSpec, DataFile]] = []
        for manifest in manifests:
            row, removed = self._filter_delete_manifest(
                staged, manifest, removed_data, min_sequence
            )
            out.append(manifest if row is None else row)
            deleted.extend(removed)
        return out, deleted

    def missing_deletes(self, staged: TableMetadata, parent: Snapshot | None) -> list[str]:
        """The delete files to remove that ``parent`` no longer holds (Java's
        ``failMissingDeletePaths`` for delete files)."""
        if not self._removed_deletes:
            return []
        found: set[tuple[str, int | None]] = set()
        for manifest in manifest_rows(parent, self.io):
            if int(manifest.get("content") or 0) == CONTENT_DATA:
                continue
            files = live_entries(read_entries(manifest, self.io)).column("data_file")
            found.update(
                zip(
                    pc.struct_field(files, "file_path").to_pylist(),
                    pc.struct_field(files, "content_offset").to_pylist(),
                    strict=True,
                )
            )
        return sorted(
            path if offset is None else f"{path} (offset {offset})"
            for path, offset in self._removed_deletes
            if (path, offset) not in found
        )

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
        new_deletes = self._written_new_delete_manifests()
        existing = manifest_rows(parent, self.io)
        data = [m for m in existing if int(m.get("content") or 0) == CONTENT_DATA]
        deletes = [m for m in existing if int(m.get("content") or 0) != CONTENT_DATA]
        filtered, deleted = self._filter(staged, data)
        # Java: the smallest data sequence number of the filtered (committed) data manifests,
        # at most the table's last sequence number.
        min_sequence = min(
            (
                int(m["min_sequence_number"])
                for m in filtered
                if m.get("min_sequence_number") is not None
                and (m.get("added_files_count") or m.get("existing_files_count"))
            ),
            default=staged.last_sequence_number,
        )
        min_sequence = min(min_sequence, staged.last_sequence_number)
        if self.data_sequence_number is not None and self.adds_files:
            # The files this commit adds with an older data sequence number (a compaction
            # keeping its starting snapshot's) are live data too: deletes committed since
            # still apply to them and must stay. Java 1.10.2 looks at the committed manifests
            # only and drops such deletes when every older file is rewritten, resurrecting
            # their rows (apache/iceberg#10962); the spec: a replace does not change the data.
            min_sequence = min(min_sequence, self.data_sequence_number)
        removed_data = frozenset(str(f.file_path) for _, f in deleted)
        filtered_deletes, deleted_deletes = self._filter_deletes(
            staged, deletes, removed_data, min_sequence
        )
        for spec_id, file in self.added_files:
            self.summary.added_file(spec_of(self.base, spec_id, ""), file)
        for spec, file in deleted:
            self.summary.deleted_file(spec, file)
        for spec_id, file in self.added_deletes:
            self.summary.added_file(spec_of(self.base, spec_id, ""), file)
        for spec, file in deleted_deletes:
            self.summary.deleted_file(spec, file)

        def keep(m: Row) -> bool:
            # Only manifests with live files, or written by this commit (Java).
            return bool(
                m.get("added_files_count")
                or m.get("existing_files_count")
                or m.get("added_snapshot_id") in (None, self.snapshot_id)
            )

        data_manifests = [m for m in [*new, *filtered] if keep(m)]
        delete_manifests = [m for m in [*new_deletes, *filtered_deletes] if keep(m)]
        if self._merge_enabled(staged):
            data_manifests = self._merger.merge(staged, data_manifests)
            delete_manifests = self._delete_merger.merge(staged, delete_manifests)
        return [*data_manifests, *delete_manifests]
