"""What the catalogs share beyond the commit: name checks, the schema a table is created with,
dropping a table's files (purge), create-table transactions and the view handle."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from frazil.errors import (
    AlreadyExistsError,
    FrazilError,
    FrazilIOError,
    NotFoundError,
    PermissionDeniedError,
    PurgeIncompleteError,
    UnsafeNameError,
    ValidationError,
)
from frazil.io import FileIO
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table.transaction import Transaction

if TYPE_CHECKING:
    from frazil.view import ViewMetadata

T = TypeVar("T")

__all__ = [
    "CreateTableTransaction",
    "PropertiesUpdateSummary",
    "PurgeOutcome",
    "View",
    "check_safe_name",
    "metadata_to_purge",
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
        from frazil.table._arrow_schema import schema_from_arrow

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


@dataclass(frozen=True)
class PurgeOutcome:
    """What a purge could not do: the files it could not read (whose own references it could
    therefore not follow) and the files it could not delete, each with why."""

    unreadable: dict[str, str] = field(default_factory=dict)
    undeleted: dict[str, str] = field(default_factory=dict)

    def check(self, identifier: tuple[str, ...], dropped: str) -> None:
        """Raise PurgeIncompleteError when anything was left; ``dropped`` says what of the
        table is gone for certain (its catalog entry, its directory)."""
        if not self.unreadable and not self.undeleted:
            return
        name = ".".join(identifier)
        parts = [f"table {name!r} was dropped ({dropped}), but its purge is incomplete"]
        if self.unreadable:
            parts.append(
                f"{len(self.unreadable)} file(s) could not be read, so the files reachable only "
                f"through them were not found and not deleted: {_listing(self.unreadable)}"
            )
        if self.undeleted:
            parts.append(
                f"{len(self.undeleted)} file(s) could not be deleted: {_listing(self.undeleted)}"
            )
        raise PurgeIncompleteError("; ".join(parts), identifier, self.unreadable, self.undeleted)


def _listing(failures: dict[str, str], shown: int = 10) -> str:
    items = [f"{path} ({why})" for path, why in sorted(failures.items())[:shown]]
    more = len(failures) - shown
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


_PURGE_THREADS = 16


def _read_each(
    read: Callable[[str], T], locations: Iterable[str]
) -> tuple[dict[str, T], dict[str, str]]:
    """``read`` of every location (in parallel: the reads release the GIL): what was read, and
    for each location that failed, why."""
    todo = sorted(set(locations))
    if not todo:
        return {}, {}

    def attempt(location: str) -> tuple[str, T | None, str | None]:
        try:
            return location, read(location), None
        except FrazilError as error:
            return location, None, f"{type(error).__name__}: {error}"

    with ThreadPoolExecutor(max_workers=min(_PURGE_THREADS, len(todo))) as pool:
        outcomes = list(pool.map(attempt, todo))
    read_ok = {loc: value for loc, value, why in outcomes if why is None and value is not None}
    failed = {loc: why for loc, _, why in outcomes if why is not None}
    return read_ok, failed


def metadata_to_purge(identifier: tuple[str, ...], location: str, io: FileIO) -> TableMetadata:
    """The current metadata of a table about to be purged, read before anything is dropped:
    without it no file of the table can be found, so the drop is refused (and nothing
    happens) rather than leaving every file behind a missing entry."""
    from frazil.metadata import read_metadata

    try:
        return read_metadata(location, io=io)
    except FrazilError as error:
        raise type(error)(
            f"cannot purge table {'.'.join(identifier)!r}: its current metadata file cannot be "
            f"read, so nothing was dropped (drop it without purge to remove the catalog entry "
            f"only): {error}"
        ) from None


def purge_table_files(
    metadata: TableMetadata, metadata_location: str | None, io: FileIO
) -> PurgeOutcome:
    """Delete every file of a dropped table that its metadata reaches, as Java's
    ``CatalogUtil.dropTableData``: data and delete files (unless ``gc.enabled`` is false),
    manifests, manifest lists, statistics and partition-statistics files, and the metadata
    files in the log and the current one. Files nothing references (orphans) are not found and
    stay.

    A file that cannot be read (a damaged or missing manifest list or manifest) does not stop
    the purge, as it stops Java's (which then deletes nothing, after the catalog entry is
    gone): everything reachable that can be read is deleted, the unreadable file itself is
    left in place for inspection (the only record of what it referenced), and the outcome says
    which files could not be read or deleted."""
    from frazil.manifest import read_manifest, read_manifest_list
    from frazil.table.maintenance._delete import delete_all

    manifest_lists = {s.manifest_list for s in metadata.snapshots if s.manifest_list}
    manifests: set[str] = set()
    for snapshot in metadata.snapshots:
        manifests.update(snapshot.manifests or ())  # v1: embedded in the snapshot (Appendix E)
    lists, unreadable = _read_each(
        lambda location: read_manifest_list(location, io=io).column("manifest_path").to_pylist(),
        manifest_lists,
    )
    for paths in lists.values():
        manifests.update(str(p) for p in paths)
    content: set[str] = set()
    gc_enabled = metadata.properties.get("gc.enabled", "true").strip().lower() != "false"
    if gc_enabled:
        # Every entry, DELETED ones included (Java reads ManifestReader.entries()).
        entries, failed = _read_each(
            lambda location: (
                read_manifest(location, ["data_file.file_path"], io=io)
                .column("data_file")
                .combine_chunks()
                .field("file_path")
                .to_pylist()
            ),
            manifests,
        )
        unreadable.update(failed)
        for paths in entries.values():
            content.update(str(p) for p in paths)
    undeleted: dict[str, str] = {}

    def delete(locations: Iterable[str]) -> None:
        failures = delete_all(sorted(set(locations) - set(unreadable)), io.delete)
        undeleted.update({loc: f"{type(e).__name__}: {e}" for loc, e in failures.items()})

    delete(content)
    delete(manifests)
    delete(manifest_lists)
    delete(s.statistics_path for s in metadata.statistics)
    delete(s.statistics_path for s in metadata.partition_statistics)
    previous = [entry.metadata_file for entry in metadata.metadata_log]
    delete([*previous, *([metadata_location] if metadata_location else [])])
    return PurgeOutcome(dict(sorted(unreadable.items())), dict(sorted(undeleted.items())))


class CreateTableTransaction(Transaction):
    """A transaction on a table that does not exist yet: its commit creates the table with
    the staged metadata (the REST protocol's ``assert-create``: it fails with
    TableAlreadyExistsError, and deletes what the changes wrote, when a table of that name
    exists by then). :meth:`Catalog.commit_table` does the creating."""
