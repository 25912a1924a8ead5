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
    if "//" in path:  # the regex only when there is something to collapse (a hot path)
        path = _SLASHES.sub("/", path)
    return path.strip("/")


def _forms(path: str) -> tuple[str, ...]:
    """``path`` cleaned, as written and URL-decoded (one form when they agree)."""
    cleaned = _clean(path)
    if "%" not in path:
        return (cleaned,)
    decoded = _clean(unquote(path))
    return (cleaned,) if decoded == cleaned else (cleaned, decoded)


def _parse(location: str) -> tuple[str, str, str, str]:
    kind, bucket, account, path = _native.parse_location(location)
    return kind, bucket or "", account or "", path


def location_keys(location: str) -> set[LocationKey]:
    """The forms under which ``location`` is compared (store, bucket, account, path)."""
    kind, bucket, account, path = _parse(location)
    return {(kind, bucket, account, form) for form in _forms(path)}


def path_keys(location: str) -> set[str]:
    """The path forms of ``location`` alone, without its store (to notice a file whose path is
    live under another scheme or bucket)."""
    return set(_forms(_parse(location)[3]))


class LocationSet:
    """Locations compared by their normalized forms. Each location is parsed once; a query
    spelled exactly like a member is answered without parsing."""

    def __init__(self, locations: Iterable[str] = ()) -> None:
        self._exact: set[str] = set()
        self._keys: set[LocationKey] = set()
        self._paths: set[str] = set()
        for location in locations:
            self.add(location)

    def add(self, location: str) -> None:
        if location in self._exact:
            return
        self._exact.add(location)
        kind, bucket, account, path = _parse(location)
        for form in _forms(path):
            self._keys.add((kind, bucket, account, form))
            self._paths.add(form)

    def __contains__(self, location: object) -> bool:
        if not isinstance(location, str):
            return False
        return location in self._exact or not self._keys.isdisjoint(location_keys(location))

    def has_path(self, location: str) -> bool:
        """Whether ``location``'s path is in the set under any store."""
        return location in self._exact or not self._paths.isdisjoint(path_keys(location))


def metadata_dir(metadata: TableMetadata) -> str:
    """Where the table's metadata files go: ``write.metadata.path``, else ``<location>/metadata``
    (Java's TableProperties.WRITE_METADATA_LOCATION)."""
    configured = metadata.properties.get("write.metadata.path")
    return (configured or metadata.location.rstrip("/") + "/metadata").rstrip("/")
