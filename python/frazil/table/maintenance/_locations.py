"""Location comparison for maintenance: two spellings of one file must compare equal, so that a
live file is never taken for an unreferenced one (Java's ``DeleteOrphanFilesSparkAction``
compares by path with equal schemes and authorities).

The one location parser (``frazil._native.parse_location``) gives the store kind (``s3``,
``s3a`` and ``s3n`` are one; a plain path and a ``file:`` URI are one), its bucket and account,
and the key or path. On top of that the path is compared without repeated or trailing slashes,
and both as written and URL-decoded: a file matches a live location when any of its forms does,
so normalization can only keep more files, never delete one more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import unquote

from frazil import _native

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata

__all__ = ["LocationKey", "LocationSet", "location_keys", "metadata_dir", "path_keys"]

LocationKey = tuple[str, str, str, str]
_SLASHES = re.compile(r"/{2,}")


def _clean(path: str) -> str:
    return _SLASHES.sub("/", path).strip("/")


def _parse(location: str) -> tuple[str, str, str, str]:
    kind, bucket, account, path = _native.parse_location(location)
    return kind, bucket or "", account or "", path


def location_keys(location: str) -> set[LocationKey]:
    """The forms under which ``location`` is compared (store, bucket, account, path)."""
    kind, bucket, account, path = _parse(location)
    cleaned = _clean(path)
    return {(kind, bucket, account, cleaned), (kind, bucket, account, _clean(unquote(path)))}


def path_keys(location: str) -> set[str]:
    """The path forms of ``location`` alone, without its store (to notice a file whose path is
    live under another scheme or bucket)."""
    path = _parse(location)[3]
    return {_clean(path), _clean(unquote(path))}


class LocationSet:
    """Locations compared by their normalized forms."""

    def __init__(self, locations: Iterable[str] = ()) -> None:
        self._keys: set[LocationKey] = set()
        self._paths: set[str] = set()
        for location in locations:
            self.add(location)

    def add(self, location: str) -> None:
        self._keys |= location_keys(location)
        self._paths |= path_keys(location)

    def __contains__(self, location: object) -> bool:
        return isinstance(location, str) and not self._keys.isdisjoint(location_keys(location))

    def has_path(self, location: str) -> bool:
        """Whether ``location``'s path is in the set under any store."""
        return not self._paths.isdisjoint(path_keys(location))


def metadata_dir(metadata: TableMetadata) -> str:
    """Where the table's metadata files go: ``write.metadata.path``, else ``<location>/metadata``
    (Java's TableProperties.WRITE_METADATA_LOCATION)."""
    configured = metadata.properties.get("write.metadata.path")
    return (configured or metadata.location.rstrip("/") + "/metadata").rstrip("/")
