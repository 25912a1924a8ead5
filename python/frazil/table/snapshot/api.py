"""The write operations of ``Table`` and ``Transaction`` (pyiceberg's names): Arrow data
written by :mod:`frazil.table.write` and committed by a snapshot producer staged in a
transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import FrazilTypeError, InvalidUpdateError, UnsupportedOperationError
from frazil.table._properties import DELETE_MODE, MERGE_ON_READ, row_level_mode
from frazil.table.snapshot._files import CONTENT_DATA, latest_snapshot, manifest_rows
from frazil.table.snapshot.append import MergeAppend
from frazil.table.snapshot.cherry_pick import CherryPick
from frazil.table.snapshot.overwrite import DeleteFiles, OverwriteFiles, ReplacePartitions
from frazil.table.snapshot.producer import SnapshotProducer

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table.snapshot._merging import MergingProducer
    from frazil.table.transaction import Transaction

__all__ = [
    "add_files",
    "append",
    "cherry_pick",
    "delete",
    "dynamic_partition_overwrite",
    "overwrite",
]


def _filter(value: Expression | str | None) -> Expression:
    from frazil import expressions

    if value is None:
        return expressions.AlwaysTrue()
    return expressions.as_expression(value)


def _stage(txn: Transaction, producer: SnapshotProducer) -> None:
    """Add ``producer`` to ``txn``; when that fails, the files it wrote go."""
    try:
        txn.add_change(producer)
    except BaseException:
        producer.cleanup(False)
        raise


def _write(txn: Transaction, producer: MergingProducer, data: Any) -> None:
    """Write ``data`` as new data files of the table, added to ``producer``; data files
    written already (:class:`~frazil.table.write.WrittenDataFiles`, e.g. by Spark executors)
    are added as they are."""
    from frazil.table.write import WrittenDataFiles, write_data_files

    try:
        if isinstance(data, WrittenDataFiles):
            data.check_spec(txn.staged_metadata)
            for file in data.files:
                producer.add_file(file, data.spec_id, owned=True)
            return
        for file in write_data_files(txn.staged_metadata, txn.table.io, data):
            producer.add_file(file, owned=True)
    except BaseException:
        producer.cleanup(False)
        raise


def append(
    txn: Transaction,
    data: Any,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> None:
    producer = MergeAppend(
        txn.staged_metadata, txn.table.io, branch=branch, snapshot_properties=snapshot_properties
    )
    _write(txn, producer, data)
    if producer.adds_files:
        _stage(txn, producer)


def overwrite(
    txn: Transaction,
    data: Any,
    overwrite_filter: Expression | str | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
) -> None:
    """Remove the rows matching ``overwrite_filter`` (default: all) and add ``data``, in one
    snapshot."""
    producer = OverwriteFiles(
        txn.staged_metadata,
        txn.table.io,
        row_filter=_filter(overwrite_filter),
        case_sensitive=case_sensitive,
        branch=branch,
        snapshot_properties=snapshot_properties,
    )
    _write(txn, producer, data)
    if producer.adds_files or producer.deletes_files:
        _stage(txn, producer)


def delete(
    txn: Transaction,
    delete_filter: Expression | str,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
) -> None:
    """Remove the rows matching ``delete_filter`` (nothing is committed when none match): per
    ``write.delete.mode``, partly matching files rewritten (copy-on-write, Java's default) or
    their rows deleted by position (merge-on-read)."""
    row_filter = _filter(delete_filter)
    metadata = txn.staged_metadata
    if row_level_mode(metadata.properties, DELETE_MODE) == MERGE_ON_READ:
        from frazil.table.row_level.delete import merge_on_read_delete

        require_row_level_deletes(metadata, DELETE_MODE)
        merge_on_read_delete(txn, row_filter, branch, snapshot_properties, case_sensitive)
        return
    producer = DeleteFiles(
        txn.staged_metadata,
        txn.table.io,
        row_filter=row_filter,
        case_sensitive=case_sensitive,
        branch=branch,
        snapshot_properties=snapshot_properties,
    )
    if producer.adds_files or producer.deletes_files:
        _stage(txn, producer)


def require_row_level_deletes(metadata: Any, mode_property: str) -> None:
    """Merge-on-read writes delete files, which format version 1 has not (spec: "Version 2:
    Row-level Deletes"): refused, as Java's commit refuses them, before anything is
    written."""
    if metadata.format_version < 2:
        raise UnsupportedOperationError(
            f"table property {mode_property}={MERGE_ON_READ} needs row-level deletes, which a "
            f"format version 1 table cannot hold: set {mode_property}=copy-on-write, or "
            "upgrade the table (format-version=2)"
        )


def dynamic_partition_overwrite(
    txn: Transaction,
    data: Any,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> None:
    """Replace every partition ``data`` touches with ``data``."""
    producer = ReplacePartitions(
        txn.staged_metadata, txn.table.io, branch=branch, snapshot_properties=snapshot_properties
    )
    _write(txn, producer, data)
    if producer.adds_files:
        _stage(txn, producer)


def add_files(
    txn: Transaction,
    paths: Iterable[str],
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    check_duplicate_files: bool = True,
) -> None:
    """Register existing Parquet files (metrics from their footers); files already in the
    table are refused."""
    from frazil.table.write import data_file_from_parquet

    if isinstance(paths, str):
        raise FrazilTypeError("add_files takes a list of paths, not one string")
    paths = list(paths)
    if paths and txn.staged_metadata.name_mapping() is None:
        # Files written without field ids are read by name (as pyiceberg does): record the
        # mapping of the current schema, so readers and this call assign the same ids.
        from frazil.name_mapping import NameMapping

        mapping = NameMapping.from_schema(txn.staged_metadata.schema()).to_json()
        txn.set_properties({"schema.name-mapping.default": mapping})
    metadata, io = txn.staged_metadata, txn.table.io
    if len(set(paths)) != len(paths):
        raise InvalidUpdateError("add_files was given the same path more than once")
    if check_duplicate_files and paths:
        live = _live_paths(txn, branch)
        present = sorted(p for p in paths if p in live)
        if present:
            raise InvalidUpdateError(f"cannot add files that are already in the table: {present}")
    producer = MergeAppend(metadata, io, branch=branch, snapshot_properties=snapshot_properties)
    for path in paths:
        producer.add_file(data_file_from_parquet(path, metadata, io))
    if producer.adds_files:
        _stage(txn, producer)


def _live_paths(txn: Transaction, branch: str | None) -> set[str]:
    import pyarrow.compute as pc

    from frazil.snapshots import MAIN_BRANCH
    from frazil.table.snapshot._files import live_entries, read_entries

    head = latest_snapshot(txn.staged_metadata, branch or MAIN_BRANCH)
    out: set[str] = set()
    for manifest in manifest_rows(head, txn.table.io):
        if int(manifest.get("content") or 0) == CONTENT_DATA:
            entries = live_entries(read_entries(manifest, txn.table.io))
            out.update(pc.struct_field(entries.column("data_file"), "file_path").to_pylist())
    return out


def cherry_pick(txn: Transaction, snapshot_id: int, branch: str | None = None) -> None:
    _stage(txn, CherryPick(txn.staged_metadata, txn.table.io, snapshot_id, branch=branch))
