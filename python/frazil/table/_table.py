"""Tables: metadata plus the storage to read it from (spec: "Table Metadata", "Snapshots",
"Snapshot Reference", "File System Tables").

:class:`StaticTable` opens a table from a metadata file, or from a table directory with
``metadata/version-hint.text`` (Java's HadoopTables layout), locally or on an object store.
Catalogs, which also commit, come later and return the same :class:`Table`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

# Scans take expressions (or their text form, parsed by frazil.expressions): imported with
# the table rather than at the first scan, so that a process's first plan costs about what
# the later ones do (benches/bench_plan.py, "Fresh processes").
import frazil.expressions  # noqa: F401
from frazil import _native
from frazil.errors import NotFoundError, ValidationError
from frazil.io import FileIO
from frazil.metadata import TableMetadata, read_metadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot, SnapshotLogEntry, SnapshotRef
from frazil.sorting import SortOrder

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.expressions import Expression
    from frazil.table.inspect import InspectTable
    from frazil.table.maintenance import (
        ExpireSnapshotsResult,
        Maintenance,
        RewriteManifestsResult,
    )
    from frazil.table.manage_snapshots import ManageSnapshots
    from frazil.table.row_level.merge import MergeBuilder, UpsertResult
    from frazil.table.row_level.update import UpdateResult
    from frazil.table.scan import DataScan
    from frazil.table.transaction import Transaction, UpdateProperties
    from frazil.table.update_schema import UpdateSchema
    from frazil.table.update_sort_order import UpdateSortOrder
    from frazil.table.update_spec import UpdateSpec

__all__ = ["StaticTable", "Table", "timestamp_ms"]


def timestamp_ms(when: int | dt.datetime) -> int:
    """Milliseconds from the epoch of ``when`` (an int is taken as milliseconds; a naive
    datetime as UTC)."""
    if isinstance(when, bool):
        raise ValidationError(f"a timestamp must be milliseconds or a datetime, got {when!r}")
    if isinstance(when, int):
        return when
    if isinstance(when, dt.datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        delta = when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise ValidationError(
        f"a timestamp must be milliseconds (int) or a datetime, got {type(when).__name__}"
    )


class Table:
    """An Iceberg table: its metadata, where that metadata lives, and the properties used to
    reach its storage (``s3.endpoint``, ...; see :mod:`frazil.io`)."""

    def __init__(
        self,
        metadata: TableMetadata,
        metadata_location: str | None = None,
        properties: Mapping[str, str] | None = None,
        identifier: Sequence[str] = (),
        *,
        io: FileIO | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        self._catalog = catalog
        self._metadata = metadata
        self._metadata_location = metadata_location
        self._io_properties = dict(properties or {})
        self._identifier = tuple(identifier)
        self._io = io if io is not None else FileIO(self._io_properties)

    def __repr__(self) -> str:
        name = ".".join(self._identifier) or self._metadata_location or self.location()
        return f"{type(self).__name__}({name!r})"

    @property
    def metadata(self) -> TableMetadata:
        return self._metadata

    @property
    def metadata_location(self) -> str | None:
        return self._metadata_location

    @property
    def catalog(self) -> Catalog | None:
        """The catalog this table was loaded from (None: opened read-only from a file)."""
        return self._catalog

    def _set_metadata(self, metadata: TableMetadata, metadata_location: str) -> None:
        self._metadata = metadata
        self._metadata_location = metadata_location

    def refresh(self) -> Table:
        """Reload the table's current metadata from its catalog (spec: a table's UUID must not
        change on refresh)."""
        if self._catalog is None:
            return self
        fresh = self._catalog.load_table(self._identifier)
        if fresh.metadata_location != self._metadata_location:
            self._set_metadata(
                self._metadata.check_refreshed(fresh.metadata), fresh.metadata_location or ""
            )
        return self

    # --- changes (committed through the catalog; see frazil.table.transaction) ----------------

    def transaction(self) -> Transaction:
        """Collect changes and commit them at once (a context manager that commits on exit)."""
        from frazil.table.transaction import Transaction

        return Transaction(self)

    def _commit_builder(
        self, updates: tuple[Any, ...], requirements: tuple[Any, ...]
    ) -> TableMetadata:
        from frazil.table.transaction import BuilderChange, Transaction

        transaction = Transaction(self)
        transaction.add_change(BuilderChange(updates, requirements))
        transaction.commit_transaction()
        return self._metadata

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        """Evolve the schema; commits when the ``with`` block exits (or on ``commit_to()``)."""
        from frazil.table.update_schema import UpdateSchema

        return UpdateSchema(
            self._metadata,
            allow_incompatible_changes=allow_incompatible_changes,
            case_sensitive=case_sensitive,
            committer=self._commit_builder,
        )

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        from frazil.table.update_spec import UpdateSpec

        return UpdateSpec(
            self._metadata, case_sensitive=case_sensitive, committer=self._commit_builder
        )

    def update_sort_order(self, case_sensitive: bool = True) -> UpdateSortOrder:
        from frazil.table.update_sort_order import UpdateSortOrder

        return UpdateSortOrder(
            self._metadata, case_sensitive=case_sensitive, committer=self._commit_builder
        )

    def update_properties(self) -> UpdateProperties:
        from frazil.table.transaction import UpdateProperties

        return UpdateProperties(self)

    def manage_snapshots(self) -> ManageSnapshots:
        from frazil.table.manage_snapshots import ManageSnapshots

        return ManageSnapshots(self._metadata, committer=self._commit_builder, owner=self)

    # --- maintenance (see frazil.table.maintenance) -------------------------------------------

    @property
    def maintenance(self) -> Maintenance:
        """Expiring snapshots, removing orphan files, rewriting manifests."""
        from frazil.table.maintenance import Maintenance

        return Maintenance(self)

    def expire_snapshots(
        self, older_than: int | dt.datetime | None = None, retain_last: int | None = None
    ) -> ExpireSnapshotsResult:
        """Expire snapshots older than ``older_than`` (default: the table's
        ``history.expire.max-snapshot-age-ms``, 5 days) keeping at least ``retain_last``
        (default ``history.expire.min-snapshots-to-keep``, 1) per branch, then delete the
        files only they reached."""
        expire = self.maintenance.expire_snapshots()
        if older_than is not None:
            expire.older_than(older_than)
        if retain_last is not None:
            expire.retain_last(retain_last)
        return expire.commit()

    def remove_orphan_files(
        self,
        older_than: int | dt.datetime | None = None,
        dry_run: bool = False,
        location: str | None = None,
    ) -> list[str]:
        """Delete the files under the table's location (or ``location``) that nothing
        references and that are older than ``older_than`` (default three days ago); returns
        them (see :mod:`frazil.table.maintenance.orphans`)."""
        return self.maintenance.remove_orphan_files(older_than, dry_run, location)

    def rewrite_manifests(self) -> RewriteManifestsResult:
        """Rewrite the current data manifests clustered by partition into manifests of
        ``commit.manifest.target-size-bytes`` (a ``replace`` snapshot)."""
        return self.maintenance.rewrite_manifests()

    # --- writes (each commits one snapshot; see Transaction for several at once) ------------

    def append(
        self,
        data: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        """Append ``data`` (a pyarrow Table, RecordBatchReader or any ``__arrow_c_stream__``
        object) as new data files."""
        with self.transaction() as txn:
            txn.append(data, branch, snapshot_properties)

    def overwrite(
        self,
        data: Any,
        overwrite_filter: Expression | str | None = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> None:
        """Replace the rows matching ``overwrite_filter`` (default: every row) by ``data``, in
        one snapshot (whole files removed, partly matching ones rewritten)."""
        with self.transaction() as txn:
            txn.overwrite(data, overwrite_filter, branch, snapshot_properties, case_sensitive)

    def dynamic_partition_overwrite(
        self,
        data: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        """Replace every partition ``data`` has rows in by ``data``."""
        with self.transaction() as txn:
            txn.dynamic_partition_overwrite(data, branch, snapshot_properties)

    def delete(
        self,
        delete_filter: Expression | str,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> None:
        """Delete the rows matching ``delete_filter`` (copy-on-write where a file only partly
        matches)."""
        with self.transaction() as txn:
            txn.delete(delete_filter, branch, snapshot_properties, case_sensitive)

    def update(
        self,
        set: Mapping[str, Any],  # Spark's name, shadowing the builtin here only
        where: Expression | str | None = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> UpdateResult:
        """Set columns of the rows matching ``where`` (default: every row): ``set`` maps each
        column to a Python literal (converted to the column's type) or another column
        (``frazil.expressions.col("other")``). Copy-on-write or merge-on-read per
        ``write.update.mode``; one snapshot."""
        with self.transaction() as txn:
            result: UpdateResult = txn.update(
                set, where, branch, snapshot_properties, case_sensitive
            )
        return result

    def upsert(
        self,
        df: Any,
        join_cols: Sequence[str] | None = None,
        when_matched_update_all: bool = True,
        when_not_matched_insert_all: bool = True,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> UpsertResult:
        """pyiceberg's ``upsert``: rows of ``df`` whose ``join_cols`` (default: the identifier
        fields) match a row of the table replace it when their values differ; the others are
        inserted; one snapshot, per ``write.merge.mode``. A key twice in ``df`` is an error."""
        from frazil.table.row_level.merge import upsert

        return upsert(
            self,
            df,
            join_cols,
            when_matched_update_all,
            when_not_matched_insert_all,
            case_sensitive,
            branch,
            snapshot_properties,
        )

    def merge(
        self,
        source: Any,
        on: str | Sequence[str],
        *,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> MergeBuilder:
        """A ``MERGE`` of ``source`` into this table on the key columns ``on``: add
        ``when_matched_update``, ``when_matched_delete``, ``when_not_matched_insert`` and
        ``when_not_matched_by_source_delete`` clauses, then ``execute()`` (see
        :mod:`frazil.table.row_level.merge`)."""
        from frazil.table.row_level.merge import MergeBuilder

        return MergeBuilder(
            self,
            source,
            on,
            case_sensitive=case_sensitive,
            branch=branch,
            snapshot_properties=snapshot_properties,
        )

    def delete_by_key(
        self,
        keys: Any,
        key_columns: Sequence[str] | str | None = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        """Delete every row whose ``key_columns`` (default: the identifier fields) equal a
        row of ``keys``, with equality delete files (see :meth:`Transaction.row_delta`)."""
        with self.transaction() as txn:
            txn.delete_by_key(
                keys, key_columns, branch=branch, snapshot_properties=snapshot_properties
            )

    def add_files(
        self,
        file_paths: Sequence[str],
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        check_duplicate_files: bool = True,
    ) -> None:
        """Register existing Parquet files (metrics from their footers) as data files."""
        with self.transaction() as txn:
            txn.add_files(file_paths, branch, snapshot_properties, check_duplicate_files)

    @property
    def io_properties(self) -> dict[str, str]:
        """The storage properties this table was opened with."""
        return dict(self._io_properties)

    @property
    def io(self) -> FileIO:
        """The FileIO that reads this table's metadata, manifest lists and manifests."""
        return self._io

    @property
    def inspect(self) -> InspectTable:
        """The metadata tables (``table.inspect.snapshots()``, ``files()``, ...)."""
        from frazil.table.inspect import InspectTable

        return InspectTable(self)

    @property
    def identifier(self) -> tuple[str, ...]:
        return self._identifier

    @property
    def properties(self) -> Mapping[str, str]:
        return self._metadata.properties

    @property
    def format_version(self) -> int:
        return self._metadata.format_version

    def location(self) -> str:
        return self._metadata.location

    def schema(self) -> Schema:
        """The current schema."""
        return self._metadata.schema()

    def schemas(self) -> dict[int, Schema]:
        return self._metadata.schemas_by_id

    def spec(self) -> PartitionSpec:
        """The default partition spec."""
        return self._metadata.spec()

    def specs(self) -> dict[int, PartitionSpec]:
        return self._metadata.specs_by_id

    def sort_order(self) -> SortOrder:
        return self._metadata.sort_order()

    def sort_orders(self) -> dict[int, SortOrder]:
        return self._metadata.sort_orders_by_id

    def current_snapshot(self) -> Snapshot | None:
        return self._metadata.current_snapshot()

    def snapshots(self) -> list[Snapshot]:
        return list(self._metadata.snapshots)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return self._metadata.snapshot_by_id(snapshot_id)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points at, or None."""
        return self._metadata.snapshot_by_name(name)

    def snapshot_as_of_timestamp(
        self, timestamp: int | dt.datetime, inclusive: bool = True
    ) -> Snapshot | None:
        """The snapshot that was current at ``timestamp`` (ms or datetime), from the snapshot
        log (Java's ``SnapshotUtil.snapshotIdAsOfTime``); None before the first one."""
        when = timestamp_ms(timestamp)
        found: int | None = None
        for entry in self._metadata.snapshot_log:
            if entry.timestamp_ms < when or (inclusive and entry.timestamp_ms == when):
                found = entry.snapshot_id
        return None if found is None else self.snapshot_by_id(found)

    def history(self) -> list[SnapshotLogEntry]:
        """When the current snapshot changed, and to which (the snapshot log)."""
        return list(self._metadata.snapshot_log)

    def refs(self) -> dict[str, SnapshotRef]:
        return dict(self._metadata.refs)

    def name_mapping(self) -> Any:
        return self._metadata.name_mapping()

    def name(self) -> tuple[str, ...]:
        """The table's identifier in its catalog (pyiceberg's ``Table.name()``); empty for a
        table opened from a metadata file."""
        return self._identifier

    def scan(
        self,
        row_filter: Expression | str | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        snapshot_id: int | None = None,
        options: Mapping[str, Any] | None = None,
        limit: int | None = None,
        *,
        ref: str | None = None,
        as_of: int | dt.datetime | None = None,
    ) -> DataScan:
        """A scan of this table (see :class:`frazil.table.scan.DataScan`), with pyiceberg's
        parameters in pyiceberg's order. ``row_filter`` is an expression or its text form
        (``"id < 5 AND name LIKE 'a%'"``); at most one of ``snapshot_id``, ``ref`` (branch or
        tag) and ``as_of`` (ms or datetime) picks the snapshot, else the current one.

        A snapshot chosen by id, by time or by tag is read with that snapshot's schema: the
        filter and ``selected_fields`` use its column names, and the rows come back with its
        columns. The current state and a branch are read with the table's current schema
        (Java's rule: a branch's next commit is written with the current schema)."""
        from frazil.table.scan import DataScan

        return DataScan(
            self,
            row_filter=row_filter,
            selected_fields=selected_fields,
            case_sensitive=case_sensitive,
            snapshot_id=snapshot_id,
            options=options,
            limit=limit,
            ref=ref,
            as_of=as_of,
        )


_VERSION_FILE = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name


def _metadata_in_directory(table_location: str, io: FileIO) -> str:
    """The newest metadata file of a HadoopTables directory: ``version-hint.text`` names a
    version, which is a hint only (spec: File System Tables): newer versions written since are
    probed, and a missing or unreadable hint falls back to listing the directory. Everything
    goes through ``io``, so a table directory on an object store opens as a local one does."""
    metadata_dir = _join(table_location, "metadata")

    def version_file(version: int) -> str | None:
        for name in (f"v{version}.metadata.json", f"v{version}.gz.metadata.json"):
            if io.exists(_join(metadata_dir, name)):
                return name
        return None

    version: int | None
    try:
        version = int(io.read(_join(metadata_dir, "version-hint.text")).decode("utf-8").strip())
    except (NotFoundError, ValueError):
        version = None
    if version is None or version_file(version) is None:
        # Files directly in metadata/, by their paths (or keys) as the one location parser
        # reads them, whatever form the listing answers in.
        directory = _native.parse_location(metadata_dir)[3].rstrip("/")
        names = []
        for info in io.list(metadata_dir):
            parent, _, base = _native.parse_location(info.location)[3].rpartition("/")
            if parent == directory:
                names.append(base)
        versions = [int(m.group(1)) for m in map(_VERSION_FILE.match, names) if m]
        if not versions:
            raise NotFoundError(
                f"no table metadata at {table_location}: neither a metadata file nor a table "
                f"directory ({metadata_dir} has no v<N>.metadata.json)"
            )
        version = max(versions)
    while version_file(version + 1) is not None:
        version += 1
    name = version_file(version)
    assert name is not None
    return _join(metadata_dir, name)


class StaticTable(Table):
    """A read-only table opened from a metadata file."""

    @classmethod
    def from_metadata(
        cls, metadata_location: str | os.PathLike[str], properties: Mapping[str, str] | None = None
    ) -> StaticTable:
        """Open a table from a metadata file (``.metadata.json``, plain or gzip), or from a
        table directory holding ``metadata/version-hint.text``, through a
        :class:`~frazil.io.FileIO` configured by ``properties`` (``s3.endpoint``, ...)."""
        io = FileIO(properties)
        location = os.fspath(metadata_location)
        if not io.exists(location):
            location = _metadata_in_directory(location, io)
        metadata = read_metadata(location, io=io)
        return cls(metadata, location, properties, io=io)
