"""Merging small manifests when committing (Java's ``ManifestMergeManager``;
``commit.manifest-merge.enabled``, ``commit.manifest.target-size-bytes``,
``commit.manifest.min-count-to-merge``).

Data and delete manifests are merged separately, with the same properties (Java has one merge
manager for each). Manifests are grouped by partition spec (highest spec id first) and
bin-packed by length from the end with a lookback of 1, so that the order of manifests is kept
and the under-filled bin is the newest, merged again next time. A bin of one is kept; the bin
holding the first manifest (the commit's new one, when it has one) is merged only when it has
at least ``min-count-to-merge`` manifests. A merged
manifest keeps this commit's ADDED and DELETED entries, drops older DELETED ones and keeps
everything else as EXISTING with explicit sequence numbers (pitfalls: "Writing"). Merges are
cached by their inputs, so a retry reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil.io import FileIO
from frazil.manifest import STATUS_ADDED, STATUS_DELETED, STATUS_EXISTING
from frazil.metadata import TableMetadata
from frazil.table._properties import bool_property, int_property
from frazil.table.snapshot._files import CONTENT_DATA, read_entries, spec_of, write_entries

__all__ = ["ManifestMerger", "MergeSettings", "pack_end"]

Row = dict[str, Any]


class MergeSettings:
    """The merge properties of a table, with Java's defaults."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        self.enabled = bool_property(properties, "commit.manifest-merge.enabled", True)
        self.target_size = int_property(
            properties, "commit.manifest.target-size-bytes", 8 << 20, minimum=1
        )
        self.min_count = int_property(
            properties, "commit.manifest.min-count-to-merge", 100, minimum=0
        )


def pack_end(items: Sequence[Row], target: int) -> list[list[Row]]:
    """Java's ``ListPacker(target, lookback=1).packEnd`` by ``manifest_length``: bins filled
    from the last item backwards, each closed when the next item would overflow it."""
    bins: list[list[Row]] = []
    current: list[Row] = []
    weight = 0
    for item in reversed(items):
        size = int(item["manifest_length"])
        if current and weight + size > target:
            bins.append(current)
            current, weight = [], 0
        current.append(item)
        weight += size
    if current:
        bins.append(current)
    return [list(reversed(b)) for b in reversed(bins)]


class ManifestMerger:
    """Merges a commit's manifests of one ``content`` (data or deletes); ``new_location``
    names (and records) each new file."""

    def __init__(
        self,
        io: FileIO,
        snapshot_id: int,
        new_location: Callable[[], str],
        content: int = CONTENT_DATA,
    ) -> None:
        self._io = io
        self._snapshot_id = snapshot_id
        self._new_location = new_location
        self._content = content
        self._cache: dict[tuple[str, ...], Row] = {}

    def merge(self, staged: TableMetadata, manifests: Sequence[Row]) -> list[Row]:
        """``manifests`` merged per the table's properties. The first one is the commit's new
        manifest when it has one: its bin waits for ``min-count-to-merge`` manifests (Java's
        ``mergeGroup`` treats the first manifest so, new or not)."""
        settings = MergeSettings(staged.properties)
        if not settings.enabled or not manifests:
            return list(manifests)
        first = manifests[0]
        groups: dict[int, list[Row]] = {}
        for manifest in manifests:
            groups.setdefault(int(manifest["partition_spec_id"]), []).append(manifest)
        out: list[Row] = []
        for spec_id in sorted(groups, reverse=True):
            for group in pack_end(groups[spec_id], settings.target_size):
                has_first = any(m is first for m in group)
                if len(group) == 1 or (has_first and len(group) < settings.min_count):
                    out.extend(group)
                else:
                    out.append(self._merged(staged, spec_id, group))
        return out

    def _merged(self, staged: TableMetadata, spec_id: int, group: list[Row]) -> Row:
        key = tuple(str(m["manifest_path"]) for m in group)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        tables = []
        for manifest in group:
            ours = manifest.get("added_snapshot_id") in (None, self._snapshot_id)
            tables.append(self._rewritten(read_entries(manifest, self._io, committed=not ours)))
        entries = pa.concat_tables(tables, promote_options="default")
        spec = spec_of(staged, spec_id, f"manifest {key[0]}")
        row = write_entries(
            self._new_location(),
            entries,
            staged,
            spec,
            self._snapshot_id,
            self._io,
            content=self._content,
        )
        self._cache[key] = row
        return row

    def _rewritten(self, entries: pa.Table) -> pa.Table:
        status = entries.column("status")
        ours = pc.equal(entries.column("snapshot_id"), self._snapshot_id)
        ours = pc.fill_null(ours, False)
        deleted = pc.equal(status, STATUS_DELETED)
        # Deletes of earlier snapshots are history that the merged manifest drops.
        entries = entries.filter(pc.or_(pc.invert(deleted), ours))
        status = entries.column("status")
        ours = pc.fill_null(pc.equal(entries.column("snapshot_id"), self._snapshot_id), False)
        keep = pc.or_(
            pc.equal(status, STATUS_DELETED), pc.and_(pc.equal(status, STATUS_ADDED), ours)
        )
        new_status = pc.if_else(keep, status, pa.scalar(STATUS_EXISTING, pa.int32()))
        index = entries.schema.get_field_index("status")
        return entries.set_column(index, "status", new_status.cast(pa.int32()))

    def clear_unused(self, used: set[str]) -> None:
        """Forget merges no longer used (their files are cleaned with the producer's)."""
        self._cache = {k: v for k, v in self._cache.items() if v["manifest_path"] in used}
