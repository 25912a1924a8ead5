"""A catalog held in this process's memory, for tests and experiments (pyiceberg has the same).

Its table pointers live in a dict guarded by a lock; metadata and data files are real files,
written through the FileIO under ``warehouse`` (a local directory or an object-store URI). It
does everything the persistent catalogs do except survive the process.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.catalog import (
    Catalog,
    Identifier,
    IdentifierLike,
    next_metadata_location,
    to_identifier,
)
from frazil.catalog._common import metadata_to_purge, purge_table_files
from frazil.errors import (
    CommitFailedError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    ValidationError,
)
from frazil.metadata import TableMetadata, read_metadata, write_metadata

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["InMemoryCatalog"]


class InMemoryCatalog(Catalog):
    """Properties: ``warehouse`` (required: where new tables go), and FileIO properties."""

    def __init__(self, name: str = "memory", **properties: str) -> None:
        super().__init__(name, **properties)
        if "warehouse" not in properties:
            raise ValidationError("InMemoryCatalog needs a 'warehouse' property")
        self._lock = threading.Lock()
        self._namespaces: dict[Identifier, dict[str, str]] = {}
        self._tables: dict[Identifier, str] = {}

    # --- namespaces ------------------------------------------------------------------------

    def create_namespace(
        self, namespace: IdentifierLike, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = to_identifier(namespace)
        with self._lock:
            if ns in self._namespaces:
                raise NamespaceAlreadyExistsError(f"namespace {'.'.join(ns)} already exists")
            self._namespaces[ns] = dict(properties or {})

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        parent = to_identifier(namespace) if namespace else ()
        return sorted(
            ns[: len(parent) + 1]
            for ns in self._namespaces
            if len(ns) > len(parent) and ns[: len(parent)] == parent
        )

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = to_identifier(namespace)
        with self._lock:
            if ns not in self._namespaces:
                raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
            if any(t[:-1] == ns for t in self._tables):
                raise NamespaceNotEmptyError(f"namespace {'.'.join(ns)} is not empty")
            del self._namespaces[ns]

    def load_namespace_properties(self, namespace: IdentifierLike) -> dict[str, str]:
        ns = to_identifier(namespace)
        if ns not in self._namespaces:
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        return dict(self._namespaces[ns])

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> Any:
        ns = to_identifier(namespace)
        with self._lock:
            if ns not in self._namespaces:
                raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
            props = self._namespaces[ns]
            for key in removals or ():
                props.pop(key, None)
            props.update(updates or {})

    # --- tables ----------------------------------------------------------------------------

    def _check_can_create(self, identifier: Identifier) -> None:
        if identifier[:-1] not in self._namespaces:
            raise NoSuchNamespaceError(f"namespace {'.'.join(identifier[:-1])} does not exist")
        if identifier in self._tables:
            raise TableAlreadyExistsError(f"table {'.'.join(identifier)} already exists")

    def _create_from_metadata(self, identifier: Identifier, metadata: TableMetadata) -> Table:
        metadata_location = next_metadata_location(metadata, None)
        with self._lock:
            if identifier in self._tables:
                raise TableAlreadyExistsError(f"table {'.'.join(identifier)} already exists")
            write_metadata(metadata, metadata_location, io=self._file_io(metadata.properties))
            self._tables[identifier] = metadata_location
        return self._created(identifier, metadata, metadata_location)

    def load_table(self, identifier: IdentifierLike) -> Table:
        from frazil.table._table import Table

        ident = to_identifier(identifier)
        location = self._current_metadata_location(ident)
        io = self._file_io()
        return Table(read_metadata(location, io=io), location, self.properties, ident, catalog=self)

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = to_identifier(namespace)
        return sorted(t for t in self._tables if t[:-1] == ns)

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Forget the table; ``purge`` also deletes its files, as the other catalogs do."""
        ident = to_identifier(identifier)
        location = self._current_metadata_location(ident)
        metadata = metadata_to_purge(ident, location, self._file_io()) if purge else None
        with self._lock:
            if self._tables.get(ident) != location:
                raise CommitFailedError(
                    f"table {'.'.join(ident)} changed or was dropped while it was being dropped"
                )
            del self._tables[ident]
        if metadata is not None:
            purge_table_files(metadata, location, self._file_io(metadata.properties)).check(
                ident, "the catalog no longer holds it"
            )

    def rename_table(
        self, from_identifier: IdentifierLike, to_identifier_: IdentifierLike
    ) -> Table:
        source, target = to_identifier(from_identifier), to_identifier(to_identifier_)
        with self._lock:
            if source not in self._tables:
                raise NoSuchTableError(f"table {'.'.join(source)} does not exist")
            if target in self._tables:
                raise TableAlreadyExistsError(f"table {'.'.join(target)} already exists")
            self._tables[target] = self._tables.pop(source)
        return self.load_table(target)

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        ident = to_identifier(identifier)
        read_metadata(metadata_location, io=self._file_io())
        with self._lock:
            if ident in self._tables:
                raise TableAlreadyExistsError(f"table {'.'.join(ident)} already exists")
            self._tables[ident] = metadata_location
        return self.load_table(ident)

    # --- commits ---------------------------------------------------------------------------

    def _current_metadata_location(self, identifier: Identifier) -> str:
        location = self._tables.get(identifier)
        if location is None:
            raise NoSuchTableError(f"table {'.'.join(identifier)} does not exist")
        return location

    def _swap(
        self,
        identifier: Identifier,
        expected_location: str,
        new_metadata: TableMetadata,
        new_location: str,
    ) -> None:
        with self._lock:
            current = self._tables.get(identifier)
            if current is None:
                raise NoSuchTableError(f"table {'.'.join(identifier)} was dropped")
            if current != expected_location:
                raise CommitFailedError(
                    f"table {'.'.join(identifier)} changed concurrently: expected "
                    f"{expected_location}, found {current}"
                )
            self._tables[identifier] = new_location
