"""Metadata tables (Java's ``SnapshotsTable``, ``HistoryTable``, ``RefsTable``,
``MetadataLogEntriesTable``, ``ManifestsTable``, ``AllManifestsTable``, ``ManifestEntriesTable``,
``AllEntriesTable``, ``FilesTable`` and kin, ``PartitionsTable``, ``PositionDeletesTable``) as
pyarrow Tables, reached as ``table.inspect``.

Columns, their order, types and nullability are Java 1.10's: Spark's ``db.t.snapshots`` and
friends show the same. Timestamps are ``timestamp[us, UTC]`` (Iceberg ``timestamptz``).
Manifest lists and manifests are read through :mod:`frazil.manifest` (the Rust decoders) and
the table's FileIO. The tables live in one module per kind: ``_log`` (snapshots, history,
refs, metadata log), ``_manifests``, ``_files`` (entries and files, with ``readable_metrics``
from ``_readable_metrics``), ``_partitions`` and ``_position_deletes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from frazil.table.inspect import _log
from frazil.table.inspect._common import (
    DATA_MANIFEST,
    DELETE_MANIFEST,
    reachable_manifests,
    snapshot_manifests,
)
from frazil.table.inspect._files import entries_table, files_table
from frazil.table.inspect._manifests import all_manifests_table, manifests_table
from frazil.table.inspect._partitions import partitions_table
from frazil.table.inspect._position_deletes import position_deletes_table

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["InspectTable"]


class InspectTable:
    """The metadata tables of one :class:`~frazil.table.Table` (``table.inspect``)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    # -- metadata only ---------------------------------------------------------------------

    def snapshots(self) -> pa.Table:
        """One row per snapshot, in metadata order (Java's ``SnapshotsTable``)."""
        return _log.snapshots_table(self._table)

    def history(self) -> pa.Table:
        """One row per snapshot-log entry; ``is_current_ancestor`` says whether the snapshot is
        the current one or one of its ancestors (Java's ``HistoryTable``)."""
        return _log.history_table(self._table)

    def refs(self) -> pa.Table:
        """One row per branch or tag; ``type`` in upper case as Java's enum name."""
        return _log.refs_table(self._table)

    def metadata_log_entries(self) -> pa.Table:
        """The previous metadata files and then the current one, each with the snapshot that
        was current when it was written (Java's ``MetadataLogEntriesTable``)."""
        return _log.metadata_log_entries_table(self._table)

    # -- manifests -------------------------------------------------------------------------

    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        """The manifests of a snapshot (default: the current one), one row each, with the
        partition summaries' bounds as human strings (Java's ``ManifestsTable``)."""
        return manifests_table(self._table, snapshot_id)

    def all_manifests(self) -> pa.Table:
        """The manifests of every snapshot, each with the snapshot whose list names it in
        ``reference_snapshot_id`` (Java's ``AllManifestsTable``: a manifest shared by several
        snapshots appears once per snapshot)."""
        return all_manifests_table(self._table)

    # -- entries and files -----------------------------------------------------------------

    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        """Every entry of a snapshot's manifests (default: the current snapshot), DELETED
        ones too, with inherited snapshot ids and sequence numbers and ``readable_metrics``
        (Java's ``ManifestEntriesTable``)."""
        return entries_table(self._table, snapshot_manifests(self._table, snapshot_id))

    def all_entries(self) -> pa.Table:
        """Every entry of every manifest any snapshot lists, each manifest read once (Java's
        ``AllEntriesTable``)."""
        return entries_table(self._table, reachable_manifests(self._table))

    def files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data and delete files of a snapshot (Java's ``FilesTable``)."""
        return files_table(self._table, snapshot_manifests(self._table, snapshot_id))

    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live data files of a snapshot (Java's ``DataFilesTable``)."""
        manifests = snapshot_manifests(self._table, snapshot_id, (DATA_MANIFEST,))
        return files_table(self._table, manifests)

    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        """The live delete files of a snapshot (Java's ``DeleteFilesTable``)."""
        manifests = snapshot_manifests(self._table, snapshot_id, (DELETE_MANIFEST,))
        return files_table(self._table, manifests)

    def all_files(self) -> pa.Table:
        """The live files of every manifest any snapshot lists, each manifest read once
        (Java's ``AllFilesTable``: a file kept by several manifests appears once per
        manifest)."""
        return files_table(self._table, reachable_manifests(self._table))

    def all_data_files(self) -> pa.Table:
        """:meth:`all_files` of the data manifests (Java's ``AllDataFilesTable``)."""
        return files_table(self._table, reachable_manifests(self._table, (DATA_MANIFEST,)))

    def all_delete_files(self) -> pa.Table:
        """:meth:`all_files` of the delete manifests (Java's ``AllDeleteFilesTable``)."""
        return files_table(self._table, reachable_manifests(self._table, (DELETE_MANIFEST,)))

    # -- partitions and deletes ------------------------------------------------------------

    def partitions(self, snapshot_id: int | None = None) -> pa.Table:
        """Per partition of the table-wide partition struct: counts and sizes of the live data
        files, position and equality delete files, and the newest snapshot that added one of
        them (Java's ``PartitionsTable``; its ``spec_id`` is that newest file's spec)."""
        return partitions_table(self._table, snapshot_id)

    def position_deletes(self, snapshot_id: int | None = None) -> pa.Table:
        """Every deleted position of a snapshot's live position delete files and deletion
        vectors (Java's ``PositionDeletesTable``)."""
        return position_deletes_table(self._table, snapshot_id)
