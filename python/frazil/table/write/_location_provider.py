"""Where new data files go: Java's ``LocationProviders`` (Iceberg 1.10.2), the referee where the
spec is silent (it only says a file's location is stored in full, so any layout reads back).

* Default: ``<data path>/<partition path>/<file name>``, the data path being
  ``write.data.path`` or ``<table location>/data``.
* ``write.object-storage.enabled=true`` (Java's ``ObjectStoreLocationProvider``): 20 bits of
  the Murmur3 hash of ``<partition path>/<file name>`` (Appendix B's string hash, as Java's
  ``Hashing.murmur3_32_fixed``) as binary digits, in three directories of four digits and a
  fourth of the remaining eight, spread the files over many key prefixes:
  ``<data path>/0101/1100/0011/10100101/<partition path>/<file name>``. With
  ``write.object-storage.partitioned-paths=false`` the partition path is left out and the last
  eight digits prefix the file name (``.../0011/10100101-<file name>``, the hash then of the
  file name alone). When the data path lies outside the table location, the table's last two
  path segments (``<db>/<table>``) follow the hash, so that tables sharing a data path stay
  apart.

Java's deprecated ``write.object-storage.path`` and ``write.folder-storage.path`` are refused
(by :func:`frazil.table._properties.check_write_properties`, as Java 1.10.2 refuses them when
``write.data.path`` is unset), and so is ``write.location-provider.impl``, which names a Java
class."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from frazil import values
from frazil.errors import InvalidValueError
from frazil.table._properties import (
    DATA_PATH,
    OBJECT_STORAGE_ENABLED,
    OBJECT_STORAGE_PARTITIONED_PATHS,
    bool_property,
)

__all__ = ["LocationProvider", "strip_trailing_slash"]

_HASH_BITS = 20
_DIR_LENGTH = 4
_DIR_DEPTH = 3


def strip_trailing_slash(location: str) -> str:
    """Java's ``LocationUtil.stripTrailingSlash``: every trailing ``/``, but never the ``//``
    of a bare ``scheme://``."""
    while location.endswith("/") and not location.endswith("://"):
        location = location[:-1]
    return location


@dataclass(frozen=True)
class LocationProvider:
    """The data file locations of one table (``for_table``)."""

    data_path: str
    object_storage: bool = False
    partitioned_paths: bool = True
    # The "<db>/<table>" Java inserts after the hash when the data path is outside the table.
    context: str | None = None

    @classmethod
    def for_table(cls, location: str, properties: Mapping[str, str]) -> LocationProvider:
        """Java's ``LocationProviders.locationsFor(location, properties)`` (the properties
        already checked by ``check_write_properties``)."""
        table_location = strip_trailing_slash(location)
        data_path = strip_trailing_slash(properties.get(DATA_PATH) or f"{table_location}/data")
        if not bool_property(properties, OBJECT_STORAGE_ENABLED, False):
            return cls(data_path)
        return cls(
            data_path,
            object_storage=True,
            partitioned_paths=bool_property(properties, OBJECT_STORAGE_PARTITIONED_PATHS, True),
            # A plain prefix test, as Java's (``s3://b/t2`` starts with ``s3://b/t``).
            context=None if data_path.startswith(table_location) else _path_context(table_location),
        )

    def new_data_location(self, partition_path: str | None, file_name: str) -> str:
        """The location of a new data file: ``partition_path`` is the partition's
        ``name=value/...`` path, None for an unpartitioned spec (Java's writers call
        ``newDataLocation(filename)`` then, also for a spec of void fields only)."""
        if not self.object_storage:
            if partition_path is None:
                return f"{self.data_path}/{file_name}"
            return f"{self.data_path}/{partition_path}/{file_name}"
        if self.partitioned_paths and partition_path is not None:
            file_name = f"{partition_path}/{file_name}"
        entropy = _entropy_dirs(file_name)
        if self.context is not None:
            return f"{self.data_path}/{entropy}/{self.context}/{file_name}"
        if self.partitioned_paths:
            return f"{self.data_path}/{entropy}/{file_name}"
        return f"{self.data_path}/{entropy}-{file_name}"


def _entropy_dirs(name: str) -> str:
    """``ObjectStoreLocationProvider.computeHash``: the low 20 bits of the Murmur3 hash of
    ``name``'s UTF-8 bytes, most significant first, as ``dddd/dddd/dddd/dddddddd``."""
    bits = format(values.hash("string", name) & ((1 << _HASH_BITS) - 1), f"0{_HASH_BITS}b")
    split = _DIR_DEPTH * _DIR_LENGTH
    dirs = [bits[i : i + _DIR_LENGTH] for i in range(0, split, _DIR_LENGTH)]
    return "/".join([*dirs, bits[split:]])


def _path_context(location: str) -> str:
    """``ObjectStoreLocationProvider.pathContext``: ``<parent name>/<name>`` of the table
    location read as a Hadoop ``Path`` (scheme and authority dropped, ``//`` collapsed, a
    trailing ``/`` dropped); just the name when the path has no parent."""
    path = _hadoop_path(location)
    name = path[path.rfind("/") + 1 :]
    if path == "" or path == "/":
        return name  # no parent
    slash = path.rfind("/")
    if slash == -1:
        parent = "."  # Hadoop's CUR_DIR: a relative path of one segment
    else:
        parent = path[: slash if slash > 0 else 1]
    parent_name = parent[parent.rfind("/") + 1 :]
    context = f"{parent_name}/{name}"
    if context.endswith("/"):
        # A location ending in "." or ".." (Java: "Path context must not end with a slash").
        raise InvalidValueError(
            f"table location {location!r} ends in no directory name, which object-storage "
            "locations outside the table need as its context"
        )
    return context


def _hadoop_path(location: str) -> str:
    """The path part of ``new org.apache.hadoop.fs.Path(location)``: after a scheme (a ``:``
    before the first ``/``) and an authority (``//host``), with repeated ``/`` collapsed, a
    trailing ``/`` dropped (``Path.normalizePath``) and ``.`` and ``..`` segments resolved
    (``java.net.URI.normalize``)."""
    start = 0
    colon = location.find(":")
    slash = location.find("/")
    if colon != -1 and (slash == -1 or colon < slash):
        start = colon + 1
    if location.startswith("//", start) and len(location) - start > 2:
        next_slash = location.find("/", start + 2)
        start = next_slash if next_slash > 0 else len(location)
    path = location[start:]
    while "//" in path:
        path = path.replace("//", "/")
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return _remove_dots(path)


def _remove_dots(path: str) -> str:
    """RFC 2396's removal of ``.`` and ``<segment>/..`` (as ``java.net.URI.normalize``): a
    path ending in one of them keeps a trailing ``/``; a leading ``..`` stays."""
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    absolute = path.startswith("/")
    kept: list[str] = []
    for segment in segments[1:] if absolute else segments:
        if segment == ".":
            continue
        if segment == ".." and kept and kept[-1] != "..":
            kept.pop()
            continue
        kept.append(segment)
    trailing = segments[-1] in (".", "..") and bool(kept) and kept[-1] != ".."
    return ("/" if absolute else "") + "/".join(kept) + ("/" if trailing else "")
