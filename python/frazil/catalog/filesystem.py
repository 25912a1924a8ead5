"""A catalog that is a directory tree: the spec's "File System Tables", laid out as Java's
``HadoopCatalog`` lays them out, so both read and write one warehouse.

``<warehouse>/<namespace levels>/<table>/metadata/v<N>.metadata.json`` plus
``version-hint.text`` naming the newest N; namespaces are the directories above. A commit
creates ``v<N+1>.metadata.json`` atomically if absent (FileIO ``write(overwrite=False)``: a
hard link locally, an ``If-None-Match: *`` put on object stores), so of two writers racing for
a version exactly one wins and the other retries; the hint is rewritten afterwards and is only
a hint (readers probe for newer versions, see ``frazil.table._table._metadata_in_directory``).

As in Java: a table's location is its directory (no custom locations), dropping a table
deletes its directory (with ``purge``, also the files its metadata reaches elsewhere), tables
cannot be renamed, namespaces have no stored properties, and there are no views.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from frazil import _native
from frazil.catalog import (
    Catalog,
    Identifier,
    IdentifierLike,
    absolute_location,
    parse_version,
    to_identifier,
)
from frazil.catalog._common import (
    PropertiesUpdateSummary,
    PurgeOutcome,
    check_safe_name,
    metadata_to_purge,
    os_error,
    purge_table_files,
)
from frazil.errors import (
    AlreadyExistsError,
    CommitFailedError,
    FrazilError,
    FrazilIOError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NotFoundError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
)
from frazil.metadata import TableMetadata, read_metadata, write_metadata
from frazil.table._table import _metadata_in_directory
from frazil.table.maintenance._delete import delete_all

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = ["FileSystemCatalog"]

_HINT = "version-hint.text"
# Object stores found to honour If-None-Match (by bucket root), probed once per process.
_CONDITIONAL_OK: set[str] = set()
_PROBE_LOCK = threading.Lock()


def _check_metadata_path(metadata: TableMetadata) -> None:
    """A file-system table's metadata is found in its ``metadata/`` directory, so it cannot
    go elsewhere: ``write.metadata.path`` is refused, as Java's ``HadoopTableOperations``
    refuses it ("Hadoop path-based tables cannot relocate metadata")."""
    from frazil.table._properties import METADATA_PATH

    if METADATA_PATH in metadata.properties:
        raise UnsupportedOperationError(
            f"table property {METADATA_PATH}={metadata.properties[METADATA_PATH]!r}: a "
            "file-system table keeps its metadata in its own metadata/ directory, where it is "
            "found (as Java's Hadoop tables); use a SQL catalog to put metadata elsewhere"
        )


def _metadata_suffix(metadata: TableMetadata) -> str:
    """``.gz.metadata.json`` under ``write.metadata.compression-codec=gzip`` (any case, as
    Java's ``Codec.fromName``), else ``.metadata.json``; from the first version on."""
    codec = metadata.properties.get("write.metadata.compression-codec", "none").strip().lower()
    return ".gz.metadata.json" if codec == "gzip" else ".metadata.json"


def _is_local(location: str) -> bool:
    return _native.parse_location(location)[0] in ("", "file")


def _local_path(location: str) -> str:
    if "://" in location or location.lower().startswith("file:"):
        return str(_native.parse_location(location)[3])
    return location


@contextlib.contextmanager
def _os_errors(action: str, path: str) -> Iterator[None]:
    """The OSError of a local directory operation as the FrazilIOError that says what failed
    and where (the FileIO does the same for files)."""
    try:
        yield
    except FrazilError:
        raise
    except OSError as error:
        raise os_error(f"cannot {action} {path}", error) from None


def _list_dir(path: str) -> list[str]:
    """The names in the local directory ``path``; none when it does not exist or is not a
    directory (a namespace or table that is not there)."""
    try:
        return os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        raise os_error(f"cannot list {path}", error) from None


class FileSystemCatalog(Catalog):
    """Properties: ``warehouse`` (a local directory or an object-store URI) and FileIO
    properties."""

    def __init__(self, name: str = "default", **properties: str) -> None:
        super().__init__(name, **properties)
        warehouse = properties.get("warehouse")
        if not warehouse:
            raise ValidationError(f"FileSystemCatalog {name!r} needs a 'warehouse' property")
        if _is_local(warehouse):
            warehouse = absolute_location(_local_path(warehouse))
        self.warehouse = warehouse.rstrip("/")
        self._local = _is_local(self.warehouse)

    def __repr__(self) -> str:
        return f"FileSystemCatalog({self.name!r}, {self.warehouse!r})"

    def _path(self, identifier: Identifier) -> str:
        return "/".join([self.warehouse, *identifier])

    def _checked(self, identifier: IdentifierLike, what: str) -> Identifier:
        ident = to_identifier(identifier)
        check_safe_name(ident, what)
        return ident

    def _is_table_dir(self, path: str) -> bool:
        io = self._file_io()
        if self._local:
            directory = os.path.join(path, "metadata")
            return any(n.endswith(".metadata.json") for n in _list_dir(directory))
        return any(i.location.endswith(".metadata.json") for i in io.list(path + "/metadata"))

    def _children(self, path: str) -> list[str]:
        """The directory names directly under ``path``."""
        if self._local:
            return sorted(n for n in _list_dir(path) if os.path.isdir(os.path.join(path, n)))
        prefix = _native.parse_location(path)[3].rstrip("/") + "/"
        names = set()
        for info in self._file_io().list(path):
            key = str(_native.parse_location(info.location)[3])
            if key.startswith(prefix) and "/" in key[len(prefix) :]:
                names.add(key[len(prefix) :].split("/", 1)[0])
        return sorted(names)

    # --- namespaces ------------------------------------------------------------------------

    def _namespace_exists(self, ns: Identifier) -> bool:
        path = self._path(ns)
        if self._local:
            return os.path.isdir(path) and not self._is_table_dir(path)
        return bool(self._children(path)) and not self._is_table_dir(path)

    def _require_namespace(self, ns: Identifier) -> None:
        if not self._namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)!r} does not exist in {self!r}")

    def _require_parent_namespace(self, ns: Identifier) -> None:
        """A new table's namespace must exist, except on an object store: there it cannot be
        created (no directories) and comes into being with its first table."""
        if self._local:
            self._require_namespace(ns)
        elif self._is_table_dir(self._path(ns)):
            raise NoSuchNamespaceError(f"{'.'.join(ns)!r} is a table, not a namespace")

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        return self._namespace_exists(self._checked(namespace, "namespace"))

    def create_namespace(
        self, namespace: IdentifierLike, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._checked(namespace, "namespace")
        if properties:
            raise UnsupportedOperationError(
                "a file-system catalog stores no namespace properties (as Java's HadoopCatalog)"
            )
        if not self._local:
            raise UnsupportedOperationError(
                "an object store has no directories: its namespaces exist through their tables"
            )
        path = self._path(ns)
        if os.path.lexists(path):
            raise NamespaceAlreadyExistsError(f"namespace {'.'.join(ns)!r} already exists")
        try:
            os.makedirs(path)
        except FileExistsError:
            raise NamespaceAlreadyExistsError(
                f"namespace {'.'.join(ns)!r} already exists ({path})"
            ) from None
        except OSError as error:
            raise os_error(f"cannot create namespace {'.'.join(ns)!r} at {path}", error) from None

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        parent = self._checked(namespace, "namespace") if namespace else ()
        if parent:
            self._require_namespace(parent)
        return [
            (*parent, name)
            for name in self._children(self._path(parent))
            if not self._is_table_dir(self._path((*parent, name)))
        ]

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = self._checked(namespace, "namespace")
        self._require_namespace(ns)
        path = self._path(ns)
        if self._local:
            if _list_dir(path):
                raise NamespaceNotEmptyError(f"namespace {'.'.join(ns)!r} is not empty ({path})")
            with _os_errors(f"drop namespace {'.'.join(ns)!r}: cannot remove", path):
                os.rmdir(path)
        elif self._children(path):
            raise NamespaceNotEmptyError(f"namespace {'.'.join(ns)!r} is not empty ({path})")

    def load_namespace_properties(self, namespace: IdentifierLike) -> dict[str, str]:
        ns = self._checked(namespace, "namespace")
        self._require_namespace(ns)
        return {"location": self._path(ns)}

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        raise UnsupportedOperationError(
            "a file-system catalog stores no namespace properties (as Java's HadoopCatalog)"
        )

    # --- tables ----------------------------------------------------------------------------

    def _table_location(self, identifier: Identifier, location: str | None) -> str:
        path = self._path(identifier)
        if location is not None and absolute_location(location).rstrip("/") != path:
            raise ValidationError(
                f"a file-system table lives in its directory {path}; it cannot be created at "
                f"{location}"
            )
        return path

    def _check_can_create(self, identifier: Identifier) -> None:
        self._require_parent_namespace(identifier[:-1])
        if self.table_exists(identifier):
            raise TableAlreadyExistsError(f"table {'.'.join(identifier)!r} already exists")

    def _create_from_metadata(self, ident: Identifier, metadata: TableMetadata) -> Table:
        _check_metadata_path(metadata)
        self._check_conditional_writes(metadata)
        location = f"{self._path(ident)}/metadata/v1{_metadata_suffix(metadata)}"
        if self.table_exists(ident):
            raise TableAlreadyExistsError(f"table {'.'.join(ident)!r} already exists")
        try:
            write_metadata(metadata, location, io=self._file_io(metadata.properties))
        except AlreadyExistsError:
            raise TableAlreadyExistsError(f"table {'.'.join(ident)!r} already exists") from None
        self._write_hint(ident, 1, metadata)
        return self._created(ident, metadata, location)

    def load_table(self, identifier: IdentifierLike) -> Table:
        from frazil.table._table import Table

        ident = self._table_identifier(identifier)
        location = self._current_metadata_location(ident)
        metadata = read_metadata(location, io=self._file_io())
        return Table(metadata, location, self.properties, ident, catalog=self)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        return self._is_table_dir(self._path(self._table_identifier(identifier)))

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = self._checked(namespace, "namespace")
        self._require_namespace(ns)
        return [
            (*ns, name)
            for name in self._children(self._path(ns))
            if self._is_table_dir(self._path((*ns, name)))
        ]

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Delete the table's directory (Java's HadoopCatalog does, purge or not); ``purge``
        first deletes the files its metadata reaches outside it, and raises
        PurgeIncompleteError, the directory being gone, when it could not read or delete some
        of them. A purge whose current metadata file cannot be read drops nothing."""
        ident = self._table_identifier(identifier)
        location = self._current_metadata_location(ident)
        io = self._file_io()
        outcome = PurgeOutcome()
        if purge:
            metadata = metadata_to_purge(ident, location, io)
            outcome = purge_table_files(metadata, location, self._file_io(metadata.properties))
        path = self._path(ident)
        left: dict[str, str] = {}
        if self._local:

            def failed(_function: object, failed_path: str, error: BaseException) -> None:
                # Gone already is deleted; a directory left non-empty by a file that could not
                # be deleted is reported through that file.
                if isinstance(error, FileNotFoundError) or (
                    isinstance(error, OSError) and error.errno == errno.ENOTEMPTY
                ):
                    return
                left[failed_path] = str(getattr(error, "strerror", None) or error)

            if sys.version_info >= (3, 12):
                shutil.rmtree(path, onexc=failed)
            else:
                shutil.rmtree(path, onerror=lambda f, p, info: failed(f, p, info[1]))
        else:
            failures = delete_all([info.location for info in io.list(path)], io.delete)
            left = {loc: str(error) for loc, error in failures.items()}
        if left:
            # Part of the directory stays: the table may still be found there.
            raise FrazilIOError(
                f"dropping table {'.'.join(ident)!r} left {len(left)} file(s) of its directory "
                f"{path} undeleted: {', '.join(f'{p} ({why})' for p, why in sorted(left.items()))}"
            )
        outcome.check(ident, f"its directory {path} is deleted")

    def rename_table(
        self, from_identifier: IdentifierLike, to_identifier_: IdentifierLike
    ) -> Table:
        raise UnsupportedOperationError(
            "file-system tables cannot be renamed: their location is their name (as Java's "
            "HadoopCatalog)"
        )

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Adopt a metadata file whose table location is this identifier's directory: it is
        copied as ``v1.metadata.json`` there."""
        ident = self._table_identifier(identifier)
        self._require_parent_namespace(ident[:-1])
        if self.table_exists(ident):
            raise TableAlreadyExistsError(f"table {'.'.join(ident)!r} already exists")
        metadata = read_metadata(metadata_location, io=self._file_io())
        if metadata.location.rstrip("/") != self._path(ident):
            raise ValidationError(
                f"cannot register {metadata_location} as {'.'.join(ident)}: its table location "
                f"{metadata.location} is not {self._path(ident)}"
            )
        return self._create_from_metadata(ident, metadata)

    # --- commits ---------------------------------------------------------------------------

    def _current_metadata_location(self, identifier: Identifier) -> str:
        try:
            return _metadata_in_directory(self._path(identifier), self._file_io())
        except NotFoundError:
            raise NoSuchTableError(f"table {'.'.join(identifier)!r} does not exist") from None

    def _new_location(self, identifier: Identifier, metadata: TableMetadata, previous: str) -> str:
        _check_metadata_path(metadata)
        version = parse_version(previous) + 1
        return f"{self._path(identifier)}/metadata/v{version}{_metadata_suffix(metadata)}"

    def _check_conditional_writes(self, metadata: TableMetadata) -> None:
        """Refuse to commit on an object store that does not honour ``If-None-Match: *``:
        a put that ignores it would silently overwrite another writer's version. The store is
        probed once per bucket: a second create-if-absent of one probe object must fail."""
        if self._local:
            return
        scheme, bucket = _native.parse_location(self.warehouse)[:2]
        root = f"{scheme}://{bucket}"
        with _PROBE_LOCK:
            if root in _CONDITIONAL_OK:
                return
            io = self._file_io(metadata.properties)
            probe = f"{self.warehouse}/.frazil-conditional-write-probe-{uuid.uuid4()}"
            refusal = (
                f"{root} does not support conditional writes (If-None-Match: *), so a "
                "file-system catalog cannot commit there atomically; use a SQL catalog"
            )
            try:
                io.write(probe, b"1", overwrite=False)
                try:
                    io.write(probe, b"2", overwrite=False)
                except AlreadyExistsError:
                    _CONDITIONAL_OK.add(root)
                    return
                raise UnsupportedOperationError(f"{refusal} (a second create-if-absent succeeded)")
            except FrazilIOError as error:
                if isinstance(error, AlreadyExistsError):
                    raise
                raise UnsupportedOperationError(f"{refusal} ({error})") from None
            finally:
                io.delete(probe)

    def _write_new_metadata(
        self, identifier: Identifier, metadata: TableMetadata, location: str
    ) -> None:
        self._check_conditional_writes(metadata)
        try:
            write_metadata(metadata, location, io=self._file_io(metadata.properties))
        except AlreadyExistsError:
            # Another writer created this version first: ours is not current, retry.
            raise CommitFailedError(
                f"table {'.'.join(identifier)!r} changed concurrently: {location} exists"
            ) from None

    def _write_hint(self, identifier: Identifier, version: int, metadata: TableMetadata) -> None:
        hint = f"{self._path(identifier)}/metadata/{_HINT}"
        self._file_io(metadata.properties).write(hint, str(version).encode())

    def _swap(
        self,
        identifier: Identifier,
        expected_location: str,
        new_metadata: TableMetadata,
        new_location: str,
    ) -> None:
        # The version file's atomic creation was the commit; the hint only speeds up readers,
        # so failing to write it must not turn a landed commit into a failed one.
        try:
            self._write_hint(identifier, parse_version(new_location), new_metadata)
        except FrazilIOError:
            pass
