"""Catalogs: where tables are named and where their commits are made atomic (spec: "Optimistic
Concurrency", "Metastore Tables", "File System Tables").

:class:`Catalog` is the interface every catalog implements. The part every catalog shares is
here: a commit (:meth:`Catalog.commit_table`) checks that the table is still at the metadata
the commit was built on and that the requirements hold, applies the updates, writes the next
metadata file under the table's ``metadata/`` directory and asks the subclass to swap the
table's pointer to it atomically (:meth:`Catalog._swap`). A lost race raises
:class:`~frazil.errors.CommitFailedError`, which the table's transaction retries on refreshed
metadata.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil import _native
from frazil.errors import (
    CommitFailedError,
    FrazilError,
    FrazilIOError,
    UnsupportedOperationError,
    ValidationError,
)
from frazil.io import FileIO
from frazil.metadata import TableMetadata, read_metadata, write_metadata
from frazil.table._apply import apply_updates, apply_updates_from_empty
from frazil.table.requirements import AssertCreate, TableRequirement, validate_requirements
from frazil.table.updates import TableUpdate

if TYPE_CHECKING:
    from frazil.catalog._common import CreateTableTransaction
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.sorting import SortOrder
    from frazil.table._table import Table

__all__ = [
    "Catalog",
    "CommitTableResponse",
    "Identifier",
    "TableChange",
    "load_catalog",
    "next_metadata_location",
]

# A table or namespace name: ("ns", "table") or "ns.table".
Identifier = tuple[str, ...]
IdentifierLike = str | Sequence[str]

_JAVA_METADATA_NAME = re.compile(r"^(\d+)-[0-9a-fA-F-]+(\.gz)?\.metadata\.json$")
_HADOOP_METADATA_NAME = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")


def parse_version(metadata_location: str | None) -> int:
    """The version number in a metadata file name, ``00042-<uuid>.metadata.json`` or
    ``v42.metadata.json``; -1 when there is none (a new table) or the name has no number."""
    if metadata_location is None:
        return -1
    name = metadata_location.rstrip("/").rsplit("/", 1)[-1]
    match = _JAVA_METADATA_NAME.match(name) or _HADOOP_METADATA_NAME.match(name)
    return int(match.group(1)) if match else -1


def next_metadata_location(metadata: TableMetadata, previous_location: str | None) -> str:
    """Where the metadata file following ``previous_location`` goes, named as Java's
    ``BaseMetastoreTableOperations`` names it: ``<location>/metadata/<5-digit version>-<uuid>
    .metadata.json`` (under ``write.metadata.path`` when set; ``.gz.metadata.json`` when
    ``write.metadata.compression-codec`` is gzip)."""
    directory = metadata.properties.get("write.metadata.path") or (
        metadata.location.rstrip("/") + "/metadata"
    )
    codec = metadata.properties.get("write.metadata.compression-codec", "none").lower()
    if codec not in ("none", "gzip"):
        raise ValidationError(
            f"write.metadata.compression-codec must be none or gzip, got {codec!r}"
        )
    suffix = ".gz.metadata.json" if codec == "gzip" else ".metadata.json"
    version = parse_version(previous_location) + 1
    return f"{directory.rstrip('/')}/{version:05d}-{uuid.uuid4()}{suffix}"


@dataclass(frozen=True)
class CommitTableResponse:
    """What a commit produced: the new metadata and the file it was written to."""

    metadata: TableMetadata
    metadata_location: str


@dataclass(frozen=True)
class TableChange:
    """One table's part of a commit by requirements (the REST protocol's
    ``CommitTableRequest``): what must hold of the table's current metadata, and the updates
    to apply to it."""

    identifier: IdentifierLike
    requirements: Sequence[TableRequirement]
    updates: Sequence[TableUpdate]


# A commit by requirements that loses the race for the pointer re-reads the table and tries
# again, as Java's CatalogHandlers.commit (COMMIT_NUM_RETRIES_DEFAULT and the minimum wait of
# TableProperties, the wait doubling; capped so that a server's request stays short).
COMMIT_RETRIES = 4
_RETRY_WAIT_S = 0.1
_RETRY_WAIT_MAX_S = 1.0


def retry_wait(attempt: int) -> None:
    """Sleep before retry ``attempt`` (0-based) of a commit that lost a race."""
    time.sleep(min(_RETRY_WAIT_S * 2**attempt, _RETRY_WAIT_MAX_S))


def absolute_location(location: str) -> str:
    """``location`` with a relative local path made absolute against the current directory
    (URIs and absolute paths as they are). A catalog stores where a table lives for every
    later reader, whose current directory may differ; Java's catalogs qualify a warehouse path
    the same way (Hadoop's ``Path.makeQualified``)."""
    if "://" in location or location.lower().startswith("file:") or os.path.isabs(location):
        return location
    try:
        scheme = _native.parse_location(location)[0]
    except FrazilError:
        return location  # not a local path: the FileIO names the problem where it is used
    if scheme not in ("", "file"):
        return location
    try:
        return os.path.abspath(location)
    except OSError as error:  # the current directory was deleted
        raise FrazilIOError(
            f"cannot make the relative location {location!r} absolute: the current directory "
            f"is unavailable ({error.strerror or error})"
        ) from None


def to_identifier(identifier: IdentifierLike) -> Identifier:
    """``"a.b.t"`` or ``("a", "b", "t")`` as a tuple; refuses empty parts."""
    parts = tuple(identifier.split(".")) if isinstance(identifier, str) else tuple(identifier)
    if not parts or any(not isinstance(p, str) or not p for p in parts):
        raise ValidationError(f"invalid identifier {identifier!r}: empty or non-string parts")
    return parts


class Catalog(ABC):
    """A catalog of namespaces, tables and views. ``name`` is the catalog's name (the
    ``catalog_name`` column of a SQL catalog); ``properties`` configure it and the FileIO of
    its tables."""

    def __init__(self, name: str, **properties: str) -> None:
        self.name = name
        self.properties: dict[str, str] = dict(properties)
        if self.properties.get("warehouse"):
            self.properties["warehouse"] = absolute_location(self.properties["warehouse"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _file_io(self, properties: Mapping[str, str] | None = None) -> FileIO:
        return FileIO({**self.properties, **(properties or {})})

    def _plan_files(self, scan: Any) -> Iterator[Any] | None:
        """The tasks whose rows a read of ``scan`` returns, when this catalog plans scans
        itself (a REST catalog's server-side planning); None: the scan plans locally."""
        return None

    # --- namespaces ------------------------------------------------------------------------

    @abstractmethod
    def create_namespace(
        self, namespace: IdentifierLike, properties: Mapping[str, str] | None = None
    ) -> None: ...

    @abstractmethod
    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]: ...

    @abstractmethod
    def drop_namespace(self, namespace: IdentifierLike) -> None: ...

    @abstractmethod
    def load_namespace_properties(self, namespace: IdentifierLike) -> dict[str, str]: ...

    @abstractmethod
    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> Any: ...

    # --- tables ----------------------------------------------------------------------------

    def create_table(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """Create a table; ``schema`` is a frazil Schema or a pyarrow schema, ``location``
        defaults to ``<warehouse>/<namespace levels>/<name>``. An empty create-table
        transaction: one way to create a table."""
        return self.create_table_transaction(
            identifier, schema, location, partition_spec, sort_order, properties, format_version
        ).commit_transaction()

    def create_table_transaction(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> CreateTableTransaction:
        """A transaction on a new table: stage schema, property (and data) changes, and the
        commit creates the table with all of them, or fails if the name was taken meanwhile."""
        from frazil.catalog._common import CreateTableTransaction
        from frazil.table._table import Table

        ident = self._table_identifier(identifier)
        self._check_can_create(ident)
        metadata = self._new_metadata(
            ident, schema, location, partition_spec, sort_order, properties, format_version
        )
        return CreateTableTransaction(Table(metadata, None, self.properties, ident, catalog=self))

    # How each catalog stores a table (create_table and create-table transactions above).

    def _table_identifier(self, identifier: IdentifierLike, what: str = "table") -> Identifier:
        """``identifier`` as a tuple, checked: it has a namespace and every part is a safe
        path segment (a table's default location is built from it)."""
        from frazil.catalog._common import check_safe_name

        ident = to_identifier(identifier)
        if len(ident) < 2:
            raise ValidationError(f"a {what} identifier needs a namespace: got {identifier!r}")
        check_safe_name(ident, what)
        return ident

    def _table_location(self, identifier: Identifier, location: str | None) -> str:
        """Where a new table goes: ``location`` (a relative path made absolute), else
        ``<warehouse>/<namespace...>/<name>`` (Java's default location)."""
        if location:
            return absolute_location(location)
        warehouse = self.properties.get("warehouse")
        if not warehouse:
            raise ValidationError(
                f"catalog {self.name!r} has no 'warehouse' property: give a location"
            )
        return "/".join([warehouse.rstrip("/"), *identifier])

    @abstractmethod
    def _check_can_create(self, identifier: Identifier) -> None:
        """Raise NoSuchNamespaceError or TableAlreadyExistsError when a table cannot be
        created under ``identifier`` now (an early check; the creation itself is atomic)."""

    def _new_metadata(
        self,
        identifier: Identifier,
        schema: Schema | Any,
        location: str | None,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Mapping[str, str] | None,
        format_version: int | None,
    ) -> TableMetadata:
        """The metadata of a new table (not stored yet)."""
        from frazil.table.create import new_table_metadata

        # A pyarrow schema is converted there: its nanosecond timestamps depend on the format
        # version and the properties.
        return new_table_metadata(
            schema,
            self._table_location(identifier, location),
            partition_spec,
            sort_order,
            properties,
            format_version,
        )

    def _created(self, identifier: Identifier, metadata: TableMetadata, location: str) -> Table:
        """The table just stored with ``metadata`` at ``location`` (not read back: it is what
        was written)."""
        from frazil.table._table import Table

        object.__setattr__(metadata, "metadata_location", location)
        return Table(metadata, location, self.properties, identifier, catalog=self)

    @abstractmethod
    def _create_from_metadata(self, identifier: Identifier, metadata: TableMetadata) -> Table:
        """Store a new table with ``metadata`` atomically: of two creators of one name one
        wins, the other gets TableAlreadyExistsError and leaves no file behind."""

    @abstractmethod
    def load_table(self, identifier: IdentifierLike) -> Table: ...

    def table_exists(self, identifier: IdentifierLike) -> bool:
        from frazil.errors import NotFoundError

        try:
            self.load_table(identifier)
        except NotFoundError:
            return False
        return True

    @abstractmethod
    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]: ...

    def create_table_if_not_exists(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """The table ``identifier``: created as :meth:`create_table` creates it, or, when a
        table of that name exists (already, or created meanwhile by another writer), that
        table, loaded as it is (pyiceberg's method: the arguments are not compared with it)."""
        from frazil.errors import NoSuchTableError, TableAlreadyExistsError

        try:
            return self.create_table(
                identifier,
                schema,
                location,
                partition_spec,
                sort_order,
                properties,
                format_version,
            )
        except TableAlreadyExistsError as exists:
            try:
                return self.load_table(identifier)
            except NoSuchTableError:
                # The name is a view's (or the table was dropped again): say what refused it.
                raise exists from None

    @abstractmethod
    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Remove the table from the catalog; ``purge`` also deletes the files its metadata
        reaches, as Java's ``CatalogUtil.dropTableData``. A purge that cannot read or delete
        some of them raises :class:`~frazil.errors.PurgeIncompleteError` after deleting the
        rest: the table is dropped all the same."""

    def purge_table(self, identifier: IdentifierLike) -> None:
        """Drop the table and delete its files: ``drop_table(identifier, purge=True)``
        (pyiceberg's name)."""
        self.drop_table(identifier, purge=True)

    @abstractmethod
    def rename_table(
        self, from_identifier: IdentifierLike, to_identifier: IdentifierLike
    ) -> Table: ...

    @abstractmethod
    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table: ...

    # --- commits ---------------------------------------------------------------------------

    def current_metadata_location(self, identifier: IdentifierLike) -> str:
        """The table's current metadata file, without reading it (NoSuchTableError for a
        missing table): what a cache of metadata files, which never change once written, is
        keyed by (the REST server's)."""
        return self._current_metadata_location(self._table_identifier(identifier))

    def read_table_metadata(self, location: str) -> TableMetadata:
        """The table metadata in the file ``location``, read with this catalog's FileIO."""
        return read_metadata(location, io=self._file_io())

    @abstractmethod
    def _current_metadata_location(self, identifier: Identifier) -> str:
        """The table's current metadata file (raises NotFoundError for a missing table)."""

    @abstractmethod
    def _swap(
        self,
        identifier: Identifier,
        expected_location: str,
        new_metadata: TableMetadata,
        new_location: str,
    ) -> None:
        """Make ``new_location`` (already written) the table's current metadata if the current
        one is still ``expected_location``; raise CommitFailedError otherwise, and
        CommitStateUnknownError when the outcome cannot be known."""

    def _new_location(self, identifier: Identifier, metadata: TableMetadata, previous: str) -> str:
        """Where the next metadata file goes (Java's naming; the filesystem catalog overrides)."""
        return next_metadata_location(metadata, previous)

    def _write_new_metadata(
        self, identifier: Identifier, metadata: TableMetadata, location: str
    ) -> None:
        write_metadata(metadata, location, io=self._file_io(metadata.properties))

    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Commit ``updates`` to ``table`` (spec: "Optimistic Concurrency"). The table's metadata
        must still be current, as Java's ``BaseMetastoreTableOperations.commit(base, metadata)``
        requires: the transaction computed the updates from it, and updates such as
        RemoveSnapshots carry no requirement that would catch a concurrent change. Raises
        CommitFailedError when another writer committed first (retryable after a refresh).

        ``requirements`` derive from the table's metadata, so while the table is still at that
        metadata they hold: the check of the metadata location here and the subclass's
        compare-and-swap on it (:meth:`_swap`; the filesystem catalog's create-if-absent of the
        next version) make validating them again redundant. Only a table not created yet
        (``metadata_location`` None: a create-table transaction) has its requirements checked,
        against whatever the catalog holds under its name now."""
        identifier = table.identifier
        if table.metadata_location is None:
            return self._commit_create(table, requirements, updates)
        current_location = self._current_metadata_location(identifier)
        if current_location != table.metadata_location:
            raise CommitFailedError(
                f"table {'.'.join(identifier)} changed concurrently: it is at "
                f"{current_location}, the commit was built on {table.metadata_location}"
            )
        return self._commit_on(identifier, table.metadata, current_location, updates)

    def _commit_on(
        self,
        identifier: Identifier,
        base: TableMetadata,
        base_location: str,
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Apply ``updates`` to ``base`` (the table's metadata at ``base_location``), write the
        next metadata file and swap the pointer to it (CommitFailedError when the table moved
        on meanwhile: the file is deleted). Nothing is written when nothing changes."""
        new_metadata = apply_updates(base, updates, base_location)
        if new_metadata is base:
            return CommitTableResponse(base, base_location)
        new_location = self._new_location(identifier, new_metadata, base_location)
        self._write_new_metadata(identifier, new_metadata, new_location)
        try:
            self._swap(identifier, base_location, new_metadata, new_location)
        except CommitFailedError:
            # The file was never made current: nobody can be reading it.
            self._file_io(new_metadata.properties).delete(new_location)
            raise
        object.__setattr__(new_metadata, "metadata_location", new_location)
        self._delete_removed_metadata_files(base, new_metadata)
        return CommitTableResponse(new_metadata, new_location)

    def _read_current(
        self, identifier: Identifier, read: Callable[[str], TableMetadata] | None
    ) -> tuple[TableMetadata, str]:
        """The table's current metadata and its file (``read`` reads a metadata file; the
        REST server passes its cache of immutable files)."""
        location = self._current_metadata_location(identifier)
        return (read or self.read_table_metadata)(location), location

    def commit_updates(
        self,
        identifier: IdentifierLike,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
        *,
        read: Callable[[str], TableMetadata] | None = None,
        retries: int = COMMIT_RETRIES,
    ) -> CommitTableResponse:
        """Commit ``updates`` if ``requirements`` hold, as the REST protocol commits (Java's
        ``CatalogHandlers.updateTable``): the table's current metadata is read, every
        requirement validated against it (a failure is CommitFailedError, not retried: the
        client must refresh), the updates applied, the next metadata file written and the
        pointer swapped. A swap that loses a race re-reads the table and validates again, up to
        ``retries`` times. With ``assert-create`` (the only requirement it may have) the table
        is created from the updates alone (:meth:`_create_by_updates`)."""
        ident = self._table_identifier(identifier)
        if any(isinstance(r, AssertCreate) for r in requirements):
            return self._create_by_updates(ident, requirements, updates)
        if retries < 0:
            raise ValidationError(f"commit retries must be at least 0, got {retries}")
        attempt = 0
        while True:  # until it lands, or the last attempt raises
            base, location = self._read_current(ident, read)
            validate_requirements(requirements, base)
            try:
                return self._commit_on(ident, base, location, updates)
            except CommitFailedError:
                if attempt == retries:
                    raise
            retry_wait(attempt)
            attempt += 1

    def _create_by_updates(
        self,
        identifier: Identifier,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Create a table from ``updates`` alone (a REST create transaction: ``stage-create``,
        then a commit with ``assert-create``; Java's ``CatalogHandlers.create``). Its location
        is the updates' ``set-location``, checked as :meth:`create_table` checks one, else the
        default. A table of that name created meanwhile makes it TableAlreadyExistsError."""
        from frazil.errors import TableAlreadyExistsError
        from frazil.table.updates import SetLocation

        others = [r for r in requirements if not isinstance(r, AssertCreate)]
        if others:
            raise ValidationError(
                f"invalid create requirements: {[r.type for r in others]}: a commit that "
                "creates a table takes assert-create only"
            )
        self._check_can_create(identifier)
        given = [u.location for u in updates if isinstance(u, SetLocation)]
        location = self._table_location(identifier, given[-1] if given else None)
        metadata = apply_updates_from_empty([*updates, SetLocation(location)])
        try:
            created = self._create_from_metadata(identifier, metadata)
        except TableAlreadyExistsError as error:
            raise TableAlreadyExistsError(
                f"cannot create table {'.'.join(identifier)}: requirement failed: {error}"
            ) from None
        assert created.metadata_location is not None
        return CommitTableResponse(created.metadata, created.metadata_location)

    def commit_transaction(
        self,
        changes: Sequence[TableChange],
        *,
        read: Callable[[str], TableMetadata] | None = None,
        retries: int = COMMIT_RETRIES,
    ) -> list[CommitTableResponse]:
        """Commit changes to several tables all or nothing (the REST protocol's
        ``/transactions/commit``). This catalog cannot swap several pointers atomically, so a
        transaction of more than one table is refused (UnsupportedOperationError) rather
        than committed table by table; the SQL catalog overrides this with one database
        transaction."""
        if len(changes) == 1:
            change = changes[0]
            return [
                self.commit_updates(
                    change.identifier,
                    change.requirements,
                    change.updates,
                    read=read,
                    retries=retries,
                )
            ]
        raise UnsupportedOperationError(
            f"{type(self).__name__} {self.name!r} cannot commit to {len(changes)} tables "
            "atomically (each table's pointer is swapped on its own): commit them one by one, "
            "or use a SQL catalog"
        )

    def _delete_removed_metadata_files(self, base: TableMetadata, metadata: TableMetadata) -> None:
        """``write.metadata.delete-after-commit.enabled``: the metadata files that left the
        metadata log in this commit (trimmed to ``write.metadata.previous-versions-max``) are
        deleted, as Java's ``CatalogUtil.deleteRemovedMetadataFiles``. The commit has
        succeeded: a file that cannot be deleted is a warning naming it, as Java logs one."""
        from frazil.table._properties import METADATA_DELETE_AFTER_COMMIT, bool_property

        if not bool_property(metadata.properties, METADATA_DELETE_AFTER_COMMIT, False):
            return
        kept = {entry.metadata_file for entry in metadata.metadata_log}
        removed = sorted(
            {entry.metadata_file for entry in base.metadata_log if entry.metadata_file not in kept}
        )
        if not removed:
            return
        io = self._file_io(metadata.properties)
        failed: list[str] = []
        for location in removed:
            try:
                io.delete(location)
            except FrazilError as error:
                failed.append(f"{location} ({error})")
        if failed:
            import warnings

            from frazil.warnings import FrazilWarning

            warnings.warn(
                f"{METADATA_DELETE_AFTER_COMMIT}: the commit succeeded, but {len(failed)} old "
                f"metadata file(s) could not be deleted: {', '.join(failed)}",
                FrazilWarning,
                stacklevel=2,
            )

    def _commit_create(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Create ``table`` (staged, not in the catalog) with ``updates`` applied, if its
        requirements (``assert-create``) hold against the catalog's table of that name."""
        from frazil.errors import NoSuchTableError, TableAlreadyExistsError

        identifier = table.identifier
        try:
            existing = self.load_table(identifier).metadata
        except NoSuchTableError:
            existing = None
        try:
            validate_requirements(requirements, existing)
        except CommitFailedError as error:
            raise TableAlreadyExistsError(
                f"cannot create table {'.'.join(identifier)}: {error}"
            ) from None
        created = self._create_from_metadata(identifier, apply_updates(table.metadata, updates))
        assert created.metadata_location is not None
        return CommitTableResponse(created.metadata, created.metadata_location)


def load_catalog(name: str | None = "default", **properties: str) -> Catalog:
    """The catalog ``name``, configured by ``~/.frazil.yaml`` (or ``$FRAZIL_CONFIG``),
    ``FRAZIL_CATALOG__<NAME>__<KEY>`` variables and ``properties`` (see
    :mod:`frazil.catalog.config`)."""
    from frazil.catalog.config import load_catalog as load

    return load(name, **properties)
