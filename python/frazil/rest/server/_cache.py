"""Table metadata by metadata file, parsed and serialized once (a metadata file never changes
once written: its location names its content). A load of an unchanged table costs the
catalog's pointer lookup and a copy of cached bytes; a commit's new metadata goes in directly.
Bounded, least recently used first out."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from frazil.catalog.rest.protocol import dumps

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.metadata import TableMetadata

__all__ = ["MetadataCache"]


class _Entry:
    __slots__ = ("_all", "_refs", "metadata")

    def __init__(self, metadata: TableMetadata) -> None:
        self.metadata = metadata
        self._all: bytes | None = None
        self._refs: bytes | None = None

    def json(self, refs_only: bool) -> bytes:
        """The metadata's JSON, every snapshot (``snapshots=all``) or only those a branch or
        tag references (``snapshots=refs``)."""
        if not refs_only:
            if self._all is None:
                self._all = dumps(self.metadata.to_dict()).encode("utf-8")
            return self._all
        if self._refs is None:
            node = self.metadata.to_dict()
            referenced = {ref.snapshot_id for ref in self.metadata.refs.values()}
            node["snapshots"] = [s for s in node["snapshots"] if s["snapshot-id"] in referenced]
            self._refs = dumps(node).encode("utf-8")
        return self._refs


class MetadataCache:
    def __init__(self, catalog: Catalog, size: int = 256) -> None:
        self._catalog = catalog
        self._size = size
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, location: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(location)
            if entry is not None:
                self._entries.move_to_end(location)
                return entry
        # Read outside the lock: two readers of one new file may both parse it, harmlessly.
        return self._put(location, self._catalog.read_table_metadata(location))

    def _put(self, location: str, metadata: TableMetadata) -> _Entry:
        entry = _Entry(metadata)
        with self._lock:
            self._entries[location] = entry
            self._entries.move_to_end(location)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return entry

    def read(self, location: str) -> TableMetadata:
        return self._entry(location).metadata

    def json(self, location: str, refs_only: bool = False) -> bytes:
        return self._entry(location).json(refs_only)

    def put(self, location: str, metadata: TableMetadata) -> None:
        """A file just written (a commit's or a create's)."""
        self._put(location, metadata)
