"""Which snapshots and refs an expiry keeps (spec: "Snapshot Retention Policy"; Java's
``RemoveSnapshots.internalApply``).

A ref is kept when it is ``main`` or its snapshot is younger than its ``max-ref-age-ms``
(the table's ``history.expire.max-ref-age-ms``, forever by default); a kept branch keeps the
ancestors that are either among its ``min-snapshots-to-keep`` newest or younger than its
``max-snapshot-age-ms`` (table defaults ``history.expire.min-snapshots-to-keep`` = 1 and
``history.expire.max-snapshot-age-ms`` = 5 days, or what the expiry was told); a kept tag keeps
its snapshot; a snapshot no ref reaches is kept while younger than the expiry's cutoff. Every
other snapshot expires, and so do the snapshots asked for by id, unless a kept ref points at
them (refused, as Java refuses it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from frazil.errors import ValidationError
from frazil.metadata import TableMetadata
from frazil.snapshots import MAIN_BRANCH, Snapshot, SnapshotRef
from frazil.table._properties import int_property

__all__ = [
    "GC_ENABLED",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "MIN_SNAPSHOTS_TO_KEEP",
    "RetentionPlan",
    "plan_retention",
]

MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
GC_ENABLED = "gc.enabled"
MAX_SNAPSHOT_AGE_MS_DEFAULT = 5 * 24 * 60 * 60 * 1000
MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1
MAX_REF_AGE_MS_DEFAULT = 2**63 - 1


def gc_enabled(metadata: TableMetadata) -> bool:
    """Java's ``gc.enabled`` (default true): false when the table's files may be shared with
    another table, so that nothing may delete them."""
    value = metadata.properties.get(GC_ENABLED, "true").strip().lower()
    if value not in ("true", "false"):
        raise ValidationError(f"table property {GC_ENABLED} must be true or false, got {value!r}")
    return value == "true"


@dataclass(frozen=True)
class RetentionPlan:
    """What an expiry removes from ``metadata``: snapshot ids and ref names (both sorted)."""

    expired_snapshot_ids: tuple[int, ...]
    removed_refs: tuple[str, ...]


def _ancestors(snapshot_id: int, by_id: Mapping[int, Snapshot]) -> Iterator[Snapshot]:
    """The snapshot and its parents, newest first, while they are in the metadata."""
    current = by_id.get(snapshot_id)
    seen: set[int] = set()
    while current is not None and current.snapshot_id not in seen:
        seen.add(current.snapshot_id)
        yield current
        parent = current.parent_snapshot_id
        current = None if parent is None else by_id.get(parent)


def plan_retention(
    metadata: TableMetadata,
    now_ms: int,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
) -> RetentionPlan:
    """The snapshots and refs to remove at ``now_ms``. ``older_than_ms`` and ``retain_last``
    replace the table's defaults (not a ref's own settings, which win, as in Java)."""
    properties = metadata.properties
    if older_than_ms is None:
        max_age = int_property(properties, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)
        older_than_ms = now_ms - max_age
    if retain_last is None:
        retain_last = int_property(properties, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)
    elif retain_last < 1:
        raise ValidationError(
            f"the number of snapshots to retain must be at least 1, got {retain_last}"
        )
    default_max_ref_age = int_property(properties, MAX_REF_AGE_MS, MAX_REF_AGE_MS_DEFAULT)
    by_id = {s.snapshot_id: s for s in metadata.snapshots}

    retained_refs: dict[str, SnapshotRef] = {}
    for name, ref in metadata.refs.items():
        if name == MAIN_BRANCH:
            retained_refs[name] = ref
            continue
        snapshot = by_id.get(ref.snapshot_id)
        if snapshot is None:
            continue  # a ref to a missing snapshot is invalid: Java removes it too
        max_ref_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_ref_age
        if now_ms - snapshot.timestamp_ms <= max_ref_age:
            retained_refs[name] = ref

    refs_by_snapshot: dict[int, list[str]] = {}
    for name, ref in retained_refs.items():
        refs_by_snapshot.setdefault(ref.snapshot_id, []).append(name)
    requested = set(snapshot_ids)
    for snapshot_id in sorted(requested):
        names = refs_by_snapshot.get(snapshot_id)
        if names:
            raise ValidationError(
                f"cannot expire snapshot {snapshot_id}: still referenced by refs {sorted(names)}"
            )

    retained: set[int] = set(refs_by_snapshot)
    reached: set[int] = set()
    for ref in retained_refs.values():
        if not ref.is_branch:
            reached.add(ref.snapshot_id)
            continue
        cutoff = (
            now_ms - ref.max_snapshot_age_ms
            if ref.max_snapshot_age_ms is not None
            else older_than_ms
        )
        keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else retain_last
        kept_here = 0
        still_keeping = True
        for ancestor in _ancestors(ref.snapshot_id, by_id):
            reached.add(ancestor.snapshot_id)
            if still_keeping and (kept_here < keep or ancestor.timestamp_ms >= cutoff):
                retained.add(ancestor.snapshot_id)
                kept_here += 1
            else:
                still_keeping = False
    # Snapshots no kept ref reaches (a dropped branch's, a rolled-back commit) stay while they
    # are younger than the expiry's cutoff.
    retained.update(
        s.snapshot_id
        for s in metadata.snapshots
        if s.snapshot_id not in reached and s.timestamp_ms >= older_than_ms
    )

    expired = {s.snapshot_id for s in metadata.snapshots if s.snapshot_id not in retained}
    expired |= requested & set(by_id)
    return RetentionPlan(
        tuple(sorted(expired)),
        tuple(sorted(name for name in metadata.refs if name not in retained_refs)),
    )
