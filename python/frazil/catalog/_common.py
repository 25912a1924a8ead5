"""What the catalogs share beyond the commit: name checks, the schema a table is created with,
dropping a table's files (purge), create-table transactions and the view handle."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frazil.errors import (
    AlreadyExistsError,
    FrazilIOError,
    NotFoundError,
    PermissionDeniedError,
    UnsafeNameError,
    ValidationError,
)
from frazil.io import FileIO
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table.transaction import Transaction

if TYPE_CHECKING:
    from frazil.view import ViewMetadata

__all__ = [
    "CreateTableTransaction",
    "PropertiesUpdateSummary",
    "View",
    "check_safe_name",
    "os_error",
    "purge_table_files",
    "table_schema",
]


def check_safe_name(identifier: Iterable[str], what: str) -> None:
    """Refuse names that cannot safely become a path segment of a table's location (spec:
    tables live at ``<warehouse>/<namespace...>/<name>``): empty, ``.``/``..``, holding a
    slash, backslash, NUL or another control character, or a dot inside one level (a dot
    separates levels where Java's JdbcCatalog stores a namespace as ``a.b``). Quotes and other
    characters are stored as they are: SQL only ever sees them as parameters."""
    parts = tuple(identifier)
    for part in parts:
        reason = None
        if part in ("", ".", ".."):
            reason = "it is empty, '.' or '..'"
        elif any(c in part for c in "/\\"):
            reason = "it holds a path separator ('/' or '\\')"
        elif "." in part:
            reason = "it holds a '.', which separates namespace levels"
        elif any(unicodedata.category(c) == "Cc" for c in part):
            reason = "it holds a control character"
        if reason is not None:
            raise UnsafeNameError(f"invalid {what} name {part!r} in {'.'.join(parts)!r}: {reason}")


def os_error(what: str, error: OSError) -> FrazilIOError:
    """``error`` of a local file-system call as the matching FrazilIOError: NotFoundError,
    PermissionDeniedError, AlreadyExistsError, else FrazilIOError; the message is ``what``
    and the system's reason."""
    reason = error.strerror or str(error)
    if isinstance(error, FileNotFoundError):
        return NotFoundError(f"{what}: {reason}")
    if isinstance(error, PermissionError):
        return PermissionDeniedError(f"{what}: {reason}")
    if isinstance(error, FileExistsError):
        return AlreadyExistsError(f"{what}: {reason}")
    return FrazilIOError(f"{what}: {reason}")


def table_schema(schema: Schema | Any) -> Schema:
    """A frazil Schema, or the Iceberg schema of a pyarrow schema (ids assigned in order)."""
    if isinstance(schema, Schema):
        return schema
    import pyarrow as pa

    if isinstance(schema, pa.Schema):
        from frazil.table.read import schema_from_arrow

        return schema_from_arrow(schema)
    raise ValidationError(
        f"a table schema must be a frazil Schema or a pyarrow Schema, got {type(schema).__name__}"
    )


@dataclass(frozen=True)
class PropertiesUpdateSummary:
    """What :meth:`update_namespace_properties` did (pyiceberg's names)."""

    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class View:
    """A view loaded from a catalog: its identifier, metadata and metadata file."""

    identifier: tuple[str, ...]
    metadata: ViewMetadata
    metadata_location: str

    def schema(self) -> Schema | None:
        return self.metadata.schema()

    def sql(self, dialect: str = "spark") -> str | None:
        rep = self.metadata.current_version().sql_for(dialect)
        return None if rep is None else rep.sql


def _delete_all(io: FileIO, locations: Iterable[str]) -> None:
    unique = sorted(set(locations))
    if not unique:
        return
    with ThreadPoolExecutor(max_workers=min(16, len(unique))) as pool:
        list(pool.map(io.delete, unique))


def purge_table_files(metadata: TableMetadata, metadata_location: str | None, io: FileIO) -> None:
    """Delete every file of a dropped table that its metadata reaches, as Java's
    ``CatalogUtil.dropTableData``: data and delete files (unless ``gc.enabled`` is false),
    manifests, manifest lists, statistics files, and the metadata files in the log and the
    current one. Files nothing references (orphans) are not found and stay."""
    from frazil.manifest import read_manifest_list, read_manifests

    manifest_lists = [s.manifest_list for s in metadata.snapshots if s.manifest_list]
    manifests: set[str] = set()
    for snapshot in metadata.snapshots:
        manifests.update(snapshot.manifests or ())
    for location in manifest_lists:
        listed = read_manifest_list(location, io=io)
        manifests.update(str(p) for p in listed.column("manifest_path").to_pylist())
    gc_enabled = metadata.properties.get("gc.enabled", "true").strip().lower() != "false"
    if gc_enabled and manifests:
        rows = [{"manifest_path": m} for m in sorted(manifests)]
        for entries in read_manifests(rows, ["data_file.file_path"], io=io):
            files = entries.column("data_file").combine_chunks().field("file_path")
            _delete_all(io, (str(p) for p in files.to_pylist()))
    _delete_all(io, manifests)
    _delete_all(io, manifest_lists)
    _delete_all(io, [s.statistics_path for s in metadata.statistics])
    _delete_all(io, [s.statistics_path for s in metadata.partition_statistics])
    previous = [entry.metadata_file for entry in metadata.metadata_log]
    _delete_all(io, [*previous, *([metadata_location] if metadata_location else [])])


class CreateTableTransaction(Transaction):
    """A transaction on a table that does not exist yet: its commit creates the table with
    the staged metadata (the REST protocol's ``assert-create``: it fails with
    TableAlreadyExistsError, and deletes what the changes wrote, when a table of that name
    exists by then). :meth:`Catalog.commit_table` does the creating."""
