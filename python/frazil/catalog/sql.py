"""A catalog in a SQL database, shared with Apache Iceberg Java's ``JdbcCatalog`` (spec:
"Metastore Tables").

The tables are Java's (1.10, ``JdbcUtil``), created when absent as Java creates them:
``iceberg_tables`` (``catalog_name``, ``table_namespace``, ``table_name``,
``metadata_location``, ``previous_metadata_location``, and ``iceberg_type`` of schema version
V1, added by ``ALTER TABLE`` when missing, ``TABLE`` or ``VIEW``; NULL rows are tables written
by V0 catalogs) and ``iceberg_namespace_properties`` (``catalog_name``, ``namespace``,
``property_key``, ``property_value``). A namespace is stored as its levels joined by ``.``,
and exists when a table lives in it or under it, or it has properties (Java marks a namespace
created without properties with ``exists=true``).

A commit is Java's check-and-put: ``UPDATE ... SET metadata_location = new WHERE
metadata_location = expected``; no row updated means another writer won
(:class:`~frazil.errors.CommitFailedError`, retried by the transaction), a connection lost
after the statement was sent leaves the outcome unknown
(:class:`~frazil.errors.CommitStateUnknownError`). Tables are created at
``<warehouse>/<namespace levels>/<table>`` (Java's default location).

Properties: ``uri`` (see :func:`frazil.catalog._sqldb.open_database`), ``warehouse``,
``busy-timeout-ms`` (SQLite; default 30000), ``connect-timeout-s`` (PostgreSQL; default 10),
``pool-size`` (PostgreSQL: idle connections kept for reuse; default 4, 0 for none),
``init-catalog-tables`` (default true) and FileIO properties.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil.catalog import (
    COMMIT_RETRIES,
    Catalog,
    CommitTableResponse,
    Identifier,
    IdentifierLike,
    TableChange,
    next_metadata_location,
    retry_wait,
    to_identifier,
)
from frazil.catalog._common import (
    PropertiesUpdateSummary,
    View,
    check_safe_name,
    metadata_to_purge,
    purge_table_files,
    table_schema,
)
from frazil.catalog._sqldb import Database, SqliteDatabase, open_database
from frazil.errors import (
    AlreadyExistsError,
    CommitFailedError,
    CommitStateUnknownError,
    FrazilIOError,
    LostConnectionError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
    ViewAlreadyExistsError,
)
from frazil.metadata import TableMetadata, read_metadata, write_metadata
from frazil.table._apply import apply_updates
from frazil.table.requirements import AssertCreate, validate_requirements

if TYPE_CHECKING:
    from frazil.schema import Schema
    from frazil.table._table import Table
    from frazil.table.updates import TableUpdate
    from frazil.table.view_updates import AssertViewUUID
    from frazil.view import ViewMetadata

__all__ = ["SqlCatalog"]

TABLES = "iceberg_tables"
NAMESPACE_PROPERTIES = "iceberg_namespace_properties"
_EXISTS = "exists"  # Java's reserved marker of a namespace created without properties
_IS_TABLE = "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
_IS_VIEW = "iceberg_type = 'VIEW'"
_KEY = "catalog_name = ? AND table_namespace = ? AND table_name = ?"

# Java's JdbcUtil statements (V0 table, V1 column added), verbatim in structure.
_CREATE_TABLES = (
    f"CREATE TABLE {TABLES}(catalog_name VARCHAR(255) NOT NULL,"
    "table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
    "metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, table_namespace, table_name))"
)
_ADD_TYPE_COLUMN = f"ALTER TABLE {TABLES} ADD COLUMN iceberg_type VARCHAR(5)"
_CREATE_NAMESPACE_PROPERTIES = (
    f"CREATE TABLE {NAMESPACE_PROPERTIES}(catalog_name VARCHAR(255) NOT NULL,"
    "namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, namespace, property_key))"
)
_INSERT_PROPERTY = (
    f"INSERT INTO {NAMESPACE_PROPERTIES} (catalog_name, namespace, property_key, property_value) "
    "VALUES (?,?,?,?)"
)


def _like_prefix(namespace: str) -> str:
    """``namespace.%`` with LIKE's wildcards escaped by ``!`` (as Java's namespaceExists)."""
    return namespace.replace("!", "!!").replace("_", "!_").replace("%", "!%") + ".%"


def _name(identifier: Identifier) -> str:
    return ".".join(identifier)


class SqlCatalog(Catalog):
    """A catalog in SQLite or PostgreSQL, interchangeable with Java's JdbcCatalog (see the
    module docs). ``SqlCatalog("prod", uri="sqlite:////data/catalog.db", warehouse=...)``."""

    def __init__(self, name: str = "default", **properties: str) -> None:
        super().__init__(name, **properties)
        uri = properties.get("uri")
        if not uri:
            raise ValidationError(f"SqlCatalog {name!r} needs a 'uri' property")
        self._db: Database = open_database(uri, self.properties)
        if self.properties.get("init-catalog-tables", "true").lower() != "false":
            self._create_tables()

    def __repr__(self) -> str:
        return f"SqlCatalog({self.name!r}, {self._db.description!r})"

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._db.dialect

    def _create_tables(self) -> None:
        # Java's atomicCreateTable: create when absent; a racing creator's table is fine.
        for table, create in (
            (TABLES, _CREATE_TABLES),
            (NAMESPACE_PROPERTIES, _CREATE_NAMESPACE_PROPERTIES),
        ):
            if not self._db.table_exists(table):
                try:
                    self._db.execute(create)
                except FrazilIOError:
                    if not self._db.table_exists(table):
                        raise
        # Java's updateSchemaIfRequired with jdbc.schema-version=V1: views need the column.
        if not self._db.column_exists(TABLES, "iceberg_type"):
            try:
                self._db.execute(_ADD_TYPE_COLUMN)
            except FrazilIOError:
                if not self._db.column_exists(TABLES, "iceberg_type"):
                    raise

    def _default_location(self, identifier: Identifier) -> str:
        return self._table_location(identifier, None)

    # --- namespaces ------------------------------------------------------------------------

    def _namespace(self, namespace: IdentifierLike) -> Identifier:
        ns = to_identifier(namespace)
        check_safe_name(ns, "namespace")
        return ns

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        text = _name(self._namespace(namespace))
        params = (self.name, text, _like_prefix(text))
        return bool(
            self._db.query(
                f"SELECT table_namespace FROM {TABLES} WHERE catalog_name = ? AND "
                "(table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1",
                params,
            )
            or self._db.query(
                f"SELECT namespace FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ? AND "
                "(namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1",
                params,
            )
        )

    def _require_namespace(self, ns: Identifier) -> None:
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {_name(ns)!r} does not exist in {self!r}")

    def create_namespace(
        self, namespace: IdentifierLike, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._namespace(namespace)
        if self.namespace_exists(ns):
            raise NamespaceAlreadyExistsError(f"namespace {_name(ns)!r} already exists")
        props = {**dict(properties or {}), _EXISTS: "true"}
        insert = _INSERT_PROPERTY
        try:
            self._db.transaction(
                [(insert, (self.name, _name(ns), str(k), str(v))) for k, v in props.items()]
            )
        except AlreadyExistsError:
            raise NamespaceAlreadyExistsError(f"namespace {_name(ns)!r} already exists") from None

    def _all_namespaces(self) -> set[Identifier]:
        rows = self._db.query(
            f"SELECT DISTINCT table_namespace FROM {TABLES} WHERE catalog_name = ?", (self.name,)
        ) + self._db.query(
            f"SELECT DISTINCT namespace FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ?",
            (self.name,),
        )
        return {tuple(str(r[0]).split(".")) for r in rows if r[0]}

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        parent = self._namespace(namespace) if namespace else ()
        if parent:
            self._require_namespace(parent)
        depth = len(parent) + 1
        return sorted(
            {
                ns[:depth]
                for ns in self._all_namespaces()
                if len(ns) >= depth and ns[: depth - 1] == parent
            }
        )

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = self._namespace(namespace)
        self._require_namespace(ns)
        tables, views = self.list_tables(ns), self.list_views(ns)
        children = self.list_namespaces(ns)
        if tables or views or children:
            raise NamespaceNotEmptyError(
                f"namespace {_name(ns)!r} is not empty: {len(tables)} table(s), {len(views)} "
                f"view(s), {len(children)} namespace(s)"
            )
        self._db.execute(
            f"DELETE FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ? AND namespace = ?",
            (self.name, _name(ns)),
        )

    def load_namespace_properties(self, namespace: IdentifierLike) -> dict[str, str]:
        ns = self._namespace(namespace)
        self._require_namespace(ns)
        rows = self._db.query(
            f"SELECT property_key, property_value FROM {NAMESPACE_PROPERTIES} "
            "WHERE catalog_name = ? AND namespace = ?",
            (self.name, _name(ns)),
        )
        props = {str(k): str(v) for k, v in rows if k is not None and v is not None}
        props.pop(_EXISTS, None)
        if "location" not in props and self.properties.get("warehouse"):
            props["location"] = self._default_location(ns)
        return props

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self._namespace(namespace)
        removals, updates = set(removals or ()), dict(updates or {})
        if _EXISTS in removals or _EXISTS in updates:
            raise ValidationError(f"cannot set or remove the reserved property {_EXISTS!r}")
        if removals & set(updates):
            raise ValidationError(
                f"properties both set and removed: {sorted(removals & set(updates))}"
            )
        self._require_namespace(ns)
        key = "catalog_name = ? AND namespace = ? AND property_key = ?"
        statements: list[tuple[str, tuple[Any, ...]]] = []
        for k in sorted(removals):
            statements.append(
                (f"DELETE FROM {NAMESPACE_PROPERTIES} WHERE {key}", (self.name, _name(ns), k))
            )
        existing = self.load_namespace_properties(ns)
        for k, v in updates.items():
            if k in existing and self._db.query(
                f"SELECT 1 FROM {NAMESPACE_PROPERTIES} WHERE {key}", (self.name, _name(ns), k)
            ):
                statements.append(
                    (
                        f"UPDATE {NAMESPACE_PROPERTIES} SET property_value = ? WHERE {key}",
                        (str(v), self.name, _name(ns), k),
                    )
                )
            else:
                statements.append(
                    (
                        _INSERT_PROPERTY,
                        (self.name, _name(ns), str(k), str(v)),
                    )
                )
        counts = self._db.transaction(statements)
        removed = [k for k, n in zip(sorted(removals), counts[: len(removals)], strict=True) if n]
        missing = [
            k for k, n in zip(sorted(removals), counts[: len(removals)], strict=True) if not n
        ]
        return PropertiesUpdateSummary(removed=removed, updated=sorted(updates), missing=missing)

    # --- tables ----------------------------------------------------------------------------

    def _key(self, ident: Identifier) -> tuple[str, str, str]:
        return (self.name, _name(ident[:-1]), ident[-1])

    def _pointer(self, ident: Identifier, kind: str) -> str | None:
        rows = self._db.query(
            f"SELECT metadata_location FROM {TABLES} WHERE {_KEY} AND {kind}", self._key(ident)
        )
        return None if not rows else str(rows[0][0])

    def _refuse_existing(self, ident: Identifier, *, as_view: bool) -> None:
        if self._pointer(ident, _IS_TABLE) is not None:
            error = ViewAlreadyExistsError if as_view else TableAlreadyExistsError
            raise error(f"a table {_name(ident)!r} already exists")
        if self._pointer(ident, _IS_VIEW) is not None:
            error = ViewAlreadyExistsError if as_view else TableAlreadyExistsError
            raise error(f"a view {_name(ident)!r} already exists")

    def _insert(self, ident: Identifier, location: str, kind: str) -> None:
        self._db.execute(
            f"INSERT INTO {TABLES} (catalog_name, table_namespace, table_name, "
            "metadata_location, previous_metadata_location, iceberg_type) VALUES (?,?,?,?,NULL,?)",
            (*self._key(ident), location, kind),
        )

    def _check_can_create(self, identifier: Identifier) -> None:
        self._require_namespace(identifier[:-1])
        self._refuse_existing(identifier, as_view=False)

    def _create_from_metadata(self, ident: Identifier, metadata: TableMetadata) -> Table:
        """Write a new table's first metadata file and insert its row (atomic: of two creators
        one wins; the loser's file is deleted). Its early checks were _check_can_create."""
        location = next_metadata_location(metadata, None)
        io = self._file_io(metadata.properties)
        write_metadata(metadata, location, io=io)
        try:
            self._insert(ident, location, "TABLE")
        except AlreadyExistsError:
            io.delete(location)
            raise TableAlreadyExistsError(
                f"a table or view {_name(ident)!r} already exists"
            ) from None
        except BaseException:
            io.delete(location)
            raise
        return self._created(ident, metadata, location)

    def load_table(self, identifier: IdentifierLike) -> Table:
        from frazil.table._table import Table

        ident = self._table_identifier(identifier)
        location = self._current_metadata_location(ident)
        metadata = read_metadata(location, io=self._file_io())
        return Table(metadata, location, self.properties, ident, catalog=self)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        return self._pointer(self._table_identifier(identifier), _IS_TABLE) is not None

    def _list(self, namespace: IdentifierLike, kind: str) -> list[Identifier]:
        ns = self._namespace(namespace)
        self._require_namespace(ns)
        rows = self._db.query(
            f"SELECT table_name FROM {TABLES} "
            f"WHERE catalog_name = ? AND table_namespace = ? AND {kind}",
            (self.name, _name(ns)),
        )
        return sorted((*ns, str(r[0])) for r in rows)

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        return self._list(namespace, _IS_TABLE)

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Remove the table from the catalog; ``purge`` also deletes its files (data,
        manifests, manifest lists, statistics, metadata) as Java's dropTableData does, and
        raises PurgeIncompleteError, the row being gone, when it could not read or delete some
        of them. A purge whose current metadata file cannot be read drops nothing."""
        ident = self._table_identifier(identifier)
        metadata = None
        location = self._pointer(ident, _IS_TABLE)
        if location is None:
            raise NoSuchTableError(f"table {_name(ident)!r} does not exist")
        if purge:
            metadata = metadata_to_purge(ident, location, self._file_io())
        deleted = self._db.execute(
            f"DELETE FROM {TABLES} WHERE {_KEY} AND metadata_location = ? AND {_IS_TABLE}",
            (*self._key(ident), location),
        )
        if not deleted:
            raise CommitFailedError(
                f"table {_name(ident)!r} changed or was dropped while it was being dropped"
            )
        if metadata is not None:
            purge_table_files(metadata, location, self._file_io(metadata.properties)).check(
                ident, "its catalog entry is gone"
            )

    def rename_table(
        self, from_identifier: IdentifierLike, to_identifier_: IdentifierLike
    ) -> Table:
        source, target = (
            self._table_identifier(from_identifier),
            self._table_identifier(to_identifier_),
        )
        self._rename(source, target, _IS_TABLE, "table")
        return self.load_table(target)

    def _rename(self, source: Identifier, target: Identifier, kind: str, what: str) -> None:
        if self._pointer(source, kind) is None:
            error = NoSuchTableError if what == "table" else NoSuchViewError
            raise error(f"{what} {_name(source)!r} does not exist")
        self._require_namespace(target[:-1])
        self._refuse_existing(target, as_view=what == "view")
        try:
            changed = self._db.execute(
                f"UPDATE {TABLES} SET table_namespace = ?, table_name = ? WHERE {_KEY} AND {kind}",
                (_name(target[:-1]), target[-1], *self._key(source)),
            )
        except AlreadyExistsError:
            error_type = TableAlreadyExistsError if what == "table" else ViewAlreadyExistsError
            raise error_type(f"{_name(target)!r} already exists") from None
        if not changed:
            error = NoSuchTableError if what == "table" else NoSuchViewError
            raise error(f"{what} {_name(source)!r} does not exist")

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Add an existing table to the catalog by its metadata file."""
        ident = self._table_identifier(identifier)
        self._require_namespace(ident[:-1])
        self._refuse_existing(ident, as_view=False)
        read_metadata(metadata_location, io=self._file_io())
        try:
            self._insert(ident, metadata_location, "TABLE")
        except AlreadyExistsError:
            raise TableAlreadyExistsError(f"table {_name(ident)!r} already exists") from None
        return self.load_table(ident)

    # --- commits ---------------------------------------------------------------------------

    def _current_metadata_location(self, identifier: Identifier) -> str:
        location = self._pointer(identifier, _IS_TABLE)
        if location is None:
            raise NoSuchTableError(f"table {_name(identifier)!r} does not exist")
        return location

    @contextlib.contextmanager
    def _swapping(self, what: str, new_locations: Sequence[str]) -> Iterator[None]:
        """The errors of a pointer swap's statements: a lost connection leaves the commit's
        outcome unknown, a locked SQLite database did not run the statement (retryable)."""
        try:
            yield
        except LostConnectionError as error:
            raise CommitStateUnknownError(
                f"commit to {what}: the catalog did not answer ({error}); "
                f"{', '.join(new_locations)} may or may not be current: refresh to find out"
            ) from None
        except FrazilIOError as error:
            if isinstance(self._db, SqliteDatabase) and "locked" in str(error):
                # The statement did not run (SQLite rolls back atomically): safe to retry.
                raise CommitFailedError(f"commit to {what}: {error}") from None
            raise

    def _put_statement(
        self, ident: Identifier, expected: str, new_location: str, kind: str
    ) -> tuple[str, tuple[str, ...]]:
        """Java's check-and-put: the pointer moves only if it is still ``expected``."""
        return (
            f"UPDATE {TABLES} SET metadata_location = ?, previous_metadata_location = ? "
            f"WHERE {_KEY} AND metadata_location = ? AND {kind}",
            (new_location, expected, *self._key(ident), expected),
        )

    def _check_and_put(
        self, ident: Identifier, expected: str, new_location: str, kind: str, what: str
    ) -> None:
        with self._swapping(f"{what} {_name(ident)!r}", [new_location]):
            changed = self._db.execute(*self._put_statement(ident, expected, new_location, kind))
        if changed:
            return
        current = self._pointer(ident, kind)
        if current is None:
            self._file_io().delete(new_location)
            error_type = NoSuchTableError if what == "table" else NoSuchViewError
            raise error_type(f"cannot commit to {what} {_name(ident)!r}: it was dropped")
        raise CommitFailedError(
            f"{what} {_name(ident)!r} changed concurrently: expected {expected}, found {current}"
        )

    def _swap(
        self,
        identifier: Identifier,
        expected_location: str,
        new_metadata: TableMetadata,
        new_location: str,
    ) -> None:
        self._check_and_put(identifier, expected_location, new_location, _IS_TABLE, "table")

    def commit_transaction(
        self,
        changes: Sequence[TableChange],
        *,
        read: Callable[[str], TableMetadata] | None = None,
        retries: int = COMMIT_RETRIES,
    ) -> list[CommitTableResponse]:
        """Commit changes to several tables all or nothing (the REST protocol's
        ``/transactions/commit``): each table's requirements are validated against its current
        metadata and its next metadata file written, then every pointer is swapped in one
        database transaction, each only if it is still where it was read (a table the
        transaction leaves unchanged is checked the same way, so its requirements still hold
        at the commit). A requirement that fails is CommitFailedError and nothing changes; a
        pointer that moved meanwhile rolls the whole transaction back, and it is tried again
        from the reads, up to ``retries`` times. Tables are not created in a transaction."""
        if retries < 0:
            raise ValidationError(f"commit retries must be at least 0, got {retries}")
        if len(changes) == 1:
            return super().commit_transaction(changes, read=read, retries=retries)
        idents = [self._table_identifier(c.identifier) for c in changes]
        if len(set(idents)) != len(idents):
            raise ValidationError("a transaction changes each table once")
        if not changes:
            return []
        for ident, change in zip(idents, changes, strict=True):
            if any(isinstance(r, AssertCreate) for r in change.requirements):
                raise UnsupportedOperationError(
                    f"cannot create table {_name(ident)} in a multi-table transaction"
                )
        attempt = 0
        while True:  # until it lands, or the last attempt raises
            staged = self._stage_transaction(idents, changes, read)
            try:
                self._swap_all(staged)
            except NoSuchTableError:
                self._delete_staged(staged)
                raise
            except CommitFailedError:
                self._delete_staged(staged)
                if attempt == retries:
                    raise
                retry_wait(attempt)
                attempt += 1
                continue
            out = []
            for _, base, base_location, new_metadata, new_location in staged:
                if new_location is None:
                    out.append(CommitTableResponse(base, base_location))
                    continue
                object.__setattr__(new_metadata, "metadata_location", new_location)
                self._delete_removed_metadata_files(base, new_metadata)
                out.append(CommitTableResponse(new_metadata, new_location))
            return out

    def _stage_transaction(
        self,
        idents: Sequence[Identifier],
        changes: Sequence[TableChange],
        read: Callable[[str], TableMetadata] | None,
    ) -> list[tuple[Identifier, TableMetadata, str, TableMetadata, str | None]]:
        """Read, validate and apply each change and write its next metadata file: (table,
        base, base file, new metadata, new file or None when unchanged). On any error the
        files written so far are deleted."""
        staged: list[tuple[Identifier, TableMetadata, str, TableMetadata, str | None]] = []
        try:
            for ident, change in zip(idents, changes, strict=True):
                base, location = self._read_current(ident, read)
                validate_requirements(change.requirements, base)
                new_metadata = apply_updates(base, change.updates, location)
                if new_metadata is base:
                    staged.append((ident, base, location, base, None))
                    continue
                new_location = self._new_location(ident, new_metadata, location)
                self._write_new_metadata(ident, new_metadata, new_location)
                staged.append((ident, base, location, new_metadata, new_location))
        except BaseException:
            self._delete_staged(staged)
            raise
        return staged

    def _delete_staged(
        self, staged: Sequence[tuple[Identifier, TableMetadata, str, TableMetadata, str | None]]
    ) -> None:
        """The metadata files a transaction wrote and never made current."""
        for _, _, _, metadata, location in staged:
            if location is not None:
                self._file_io(metadata.properties).delete(location)

    def _swap_all(
        self, staged: Sequence[tuple[Identifier, TableMetadata, str, TableMetadata, str | None]]
    ) -> None:
        """Every pointer swapped (or, for an unchanged table, checked) in one transaction."""
        statements = [
            self._put_statement(ident, base_location, new_location or base_location, _IS_TABLE)
            for ident, _, base_location, _, new_location in staged
        ]

        def all_swapped(counts: list[int]) -> None:
            for (ident, _, base_location, _, _), count in zip(staged, counts, strict=True):
                if not count:
                    raise CommitFailedError(
                        f"transaction: table {_name(ident)!r} changed concurrently (it is no "
                        f"longer at {base_location}); no table was changed"
                    )

        names = ", ".join(_name(s[0]) for s in staged)
        new_locations = [s[4] for s in staged if s[4] is not None]
        try:
            with self._swapping(f"tables {names}", new_locations):
                self._db.transaction(statements, check=all_swapped)
        except CommitFailedError:
            for ident, _, _, _, _ in staged:
                if self._pointer(ident, _IS_TABLE) is None:
                    raise NoSuchTableError(
                        f"cannot commit the transaction: table {_name(ident)!r} was dropped"
                    ) from None
            raise

    # --- views -----------------------------------------------------------------------------

    def create_view(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        sql: str | Mapping[str, str],
        *,
        dialect: str = "spark",
        default_namespace: IdentifierLike | None = None,
        default_catalog: str | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        column_aliases: list[str] | None = None,
        column_docs: list[str | None] | None = None,
    ) -> View:
        """Create a view: ``sql`` is its text in ``dialect``, or a dialect -> text mapping.
        The default namespace is the view's own unless given."""
        from frazil.table.view_updates import create_view

        ident = self._table_identifier(identifier, "view")
        self._require_namespace(ident[:-1])
        self._refuse_existing(ident, as_view=True)
        texts = {dialect: sql} if isinstance(sql, str) else dict(sql)
        namespace = to_identifier(default_namespace) if default_namespace else ident[:-1]
        metadata = create_view(
            self._table_location(ident, location).rstrip("/"),
            table_schema(schema),
            texts,
            default_namespace=namespace,
            default_catalog=default_catalog,
            column_aliases=column_aliases,
            column_docs=column_docs,
            properties=properties,
        )
        new_location = self._write_view(metadata, None)
        try:
            self._insert(ident, new_location, "VIEW")
        except BaseException as error:
            self._file_io().delete(new_location)
            if isinstance(error, AlreadyExistsError):
                raise ViewAlreadyExistsError(f"view {_name(ident)!r} already exists") from None
            raise
        return self.load_view(ident)

    def _write_view(self, metadata: ViewMetadata, previous: str | None) -> str:
        from frazil.catalog import parse_version

        directory = metadata.location.rstrip("/") + "/metadata"
        import uuid

        location = f"{directory}/{parse_version(previous) + 1:05d}-{uuid.uuid4()}.metadata.json"
        self._file_io(metadata.properties).write(
            location, metadata.to_json().encode("utf-8"), overwrite=False
        )
        return location

    def load_view(self, identifier: IdentifierLike) -> View:
        from frazil.view import ViewMetadata

        ident = self._table_identifier(identifier, "view")
        location = self._pointer(ident, _IS_VIEW)
        if location is None:
            raise NoSuchViewError(f"view {_name(ident)!r} does not exist")
        data = self._file_io().read(location)
        return View(ident, ViewMetadata.from_json(data, location), location)

    def view_exists(self, identifier: IdentifierLike) -> bool:
        return self._pointer(self._table_identifier(identifier, "view"), _IS_VIEW) is not None

    def list_views(self, namespace: IdentifierLike) -> list[Identifier]:
        return self._list(namespace, _IS_VIEW)

    def replace_view(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        sql: str | Mapping[str, str],
        *,
        dialect: str = "spark",
        default_namespace: IdentifierLike | None = None,
        default_catalog: str | None = None,
        column_aliases: list[str] | None = None,
        column_docs: list[str | None] | None = None,
        retries: int = 4,
    ) -> View:
        """Make a new version current (Java's ``replace``), retried on a concurrent change."""
        from frazil.table.view_updates import ReplaceView

        ident = self._table_identifier(identifier, "view")
        texts = {dialect: sql} if isinstance(sql, str) else dict(sql)

        def replace(base: ViewMetadata) -> ViewMetadata:
            change = ReplaceView(
                base,
                schema=table_schema(schema),
                sql=texts,
                default_namespace=to_identifier(default_namespace) if default_namespace else None,
                default_catalog=default_catalog,
                column_aliases=column_aliases,
                column_docs=column_docs,
            )
            return change.commit_to(base)

        return self._commit_view(ident, replace, retries)

    def commit_view(
        self,
        identifier: IdentifierLike,
        requirements: Sequence[AssertViewUUID],
        updates: Sequence[TableUpdate],
        *,
        retries: int = COMMIT_RETRIES,
    ) -> View:
        """Commit view updates if ``requirements`` (``assert-view-uuid``) hold (the REST
        protocol's view commit; Java's ``CatalogHandlers.updateView``): validated against the
        view's current metadata (a failure is CommitFailedError, not retried), applied, written
        and swapped; a lost race re-reads and validates again."""
        from frazil.table.view_updates import apply_view_updates

        ident = self._table_identifier(identifier, "view")

        def commit(base: ViewMetadata) -> ViewMetadata:
            for requirement in requirements:
                requirement.validate(base)
            return apply_view_updates(base, updates)

        return self._commit_view(ident, commit, retries)

    def _commit_view(
        self, ident: Identifier, change: Callable[[ViewMetadata], ViewMetadata], retries: int
    ) -> View:
        """``change`` of the view's current metadata written and swapped in, retried on a lost
        race (``change`` returning its argument commits nothing)."""
        if retries < 0:
            raise ValidationError(f"view commit retries must be at least 0, got {retries}")
        attempt = 0
        while True:  # until it lands, or the last attempt raises
            view = self.load_view(ident)
            new_metadata = change(view.metadata)
            if new_metadata is view.metadata:
                return view
            new_location = self._write_view(new_metadata, view.metadata_location)
            try:
                self._check_and_put(ident, view.metadata_location, new_location, _IS_VIEW, "view")
            except CommitFailedError:
                self._file_io().delete(new_location)
                if attempt == retries:
                    raise
                retry_wait(attempt)
                attempt += 1
                continue
            return self.load_view(ident)

    def drop_view(self, identifier: IdentifierLike) -> None:
        ident = self._table_identifier(identifier, "view")
        deleted = self._db.execute(
            f"DELETE FROM {TABLES} WHERE {_KEY} AND {_IS_VIEW}", self._key(ident)
        )
        if not deleted:
            raise NoSuchViewError(f"view {_name(ident)!r} does not exist")

    def rename_view(self, from_identifier: IdentifierLike, to_identifier_: IdentifierLike) -> View:
        source = self._table_identifier(from_identifier, "view")
        target = self._table_identifier(to_identifier_, "view")
        self._rename(source, target, _IS_VIEW, "view")
        return self.load_view(target)
