"""What both rewrite planners share: Java's ``BinPacking.ListPacker``, partition keys compared
as Java's ``StructLikeMap`` compares them, the plan, ``rewrite-job-order`` and the commit
batches of Java's commit services."""

from __future__ import annotations

import math
import struct
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar

from frazil.errors import CommitFailedError, ValidationError
from frazil.table.maintenance.rewrite_plan._options import (
    PARTIAL_PROGRESS_ENABLED,
    PARTIAL_PROGRESS_MAX_COMMITS,
    JobOrder,
    RewriteDataFilesOptions,
    _SizeBasedOptions,
)

__all__ = [
    "FileGroupInfo",
    "RewritePlan",
    "check_failed_commits",
    "commit_batches",
    "pack",
]

T = TypeVar("T")


def pack(
    items: Iterable[T],
    weight: Callable[[T], int],
    target_weight: int,
    lookback: int = 1,
    largest_bin_first: bool = False,
) -> list[list[T]]:
    """Java's ``BinPacking.ListPacker.pack``: each item goes into the first open bin it fits
    (total weight at most ``target_weight``), else into a new bin; when more than ``lookback``
    bins are open, the oldest (or, with ``largest_bin_first``, the heaviest, the first of
    equals) is closed. An item heavier than the target gets a bin of its own. Bins come out in
    the order they are closed, then the open ones oldest first."""
    if lookback <= 0:
        raise ValidationError(f"Bin look-back size must be greater than 0: {lookback}")
    bins: deque[tuple[list[T], list[int]]] = deque()  # (items, [weight])
    packed: list[list[T]] = []
    for item in items:
        w = weight(item)
        for members, total in bins:
            if total[0] + w <= target_weight:
                members.append(item)
                total[0] += w
                break
        else:
            bins.append(([item], [w]))
            if len(bins) > lookback:
                if largest_bin_first:
                    heaviest = max(range(len(bins)), key=lambda i: (bins[i][1][0], -i))
                    closed = bins[heaviest]
                    del bins[heaviest]
                else:
                    closed = bins.popleft()
                packed.append(closed[0])
    packed.extend(members for members, _ in bins)
    return packed


def java_key(value: Any) -> Hashable:
    """A partition value as Java's comparators tell values apart: ``Double.compare`` keeps
    -0.0 and 0.0 apart and takes every NaN as one value."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("double", "NaN")
        return ("double", struct.pack(">d", value))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    key: Hashable = value
    return key


def partition_key(values: Sequence[Any]) -> tuple[Hashable, ...]:
    return tuple(java_key(v) for v in values)


def frozen_mapping(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class FileGroupInfo:
    """Java's ``FileGroupInfo``: the group's 1-based index in the whole rewrite and in its
    partition (both in planning order, before ``rewrite-job-order`` sorts the groups), and the
    partition (field name to value)."""

    global_index: int
    partition_index: int
    partition: Mapping[str, Any] = field(hash=False)


class _Group(Protocol):
    @property
    def info(self) -> FileGroupInfo: ...

    @property
    def input_bytes(self) -> int: ...

    @property
    def input_file_count(self) -> int: ...


G = TypeVar("G", bound=_Group)


@dataclass(frozen=True, eq=False)
class RewritePlan(Generic[G]):
    """Java's ``FileRewritePlan``: the groups to rewrite, in ``rewrite-job-order``;
    ``total_group_count`` and :meth:`groups_in_partition` count the groups the planner formed
    before ``max-files-to-rewrite`` dropped any, as Java counts them (and as its partial-progress
    commit batching divides them)."""

    groups: tuple[G, ...]
    total_group_count: int
    partition_group_counts: tuple[tuple[Mapping[str, Any], int], ...]

    def groups_in_partition(self, partition: Mapping[str, Any]) -> int:
        """The number of groups formed in ``partition`` (0 for a partition whose files were
        all left alone)."""
        wanted = {k: java_key(v) for k, v in partition.items()}
        for candidate, count in self.partition_group_counts:
            if {k: java_key(v) for k, v in candidate.items()} == wanted:
                return count
        raise ValidationError(f"the plan has no partition {dict(partition)!r}")

    def __iter__(self) -> Iterator[G]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.groups)


def sort_groups(groups: list[G], order: JobOrder) -> tuple[G, ...]:
    """``RewriteFileGroup.comparator``: a stable sort by input bytes or input file count;
    ``none`` keeps planning order."""
    if order == "bytes-asc":
        return tuple(sorted(groups, key=lambda g: g.input_bytes))
    if order == "bytes-desc":
        return tuple(sorted(groups, key=lambda g: g.input_bytes, reverse=True))
    if order == "files-asc":
        return tuple(sorted(groups, key=lambda g: g.input_file_count))
    if order == "files-desc":
        return tuple(sorted(groups, key=lambda g: g.input_file_count, reverse=True))
    return tuple(groups)


def commit_batches(plan: RewritePlan[G], options: _SizeBasedOptions) -> tuple[tuple[G, ...], ...]:
    """Which groups go into which commit, as Java's actions commit them.

    Without ``partial-progress.enabled``: one commit of every group (none for an empty plan).
    With it, Java's commit service commits ``ceil(total_group_count / max-commits)`` groups at
    a time as their rewrites finish, and what is left when all are done: for groups finishing
    in plan order, consecutive slices of that size. ``total_group_count`` counts the groups
    ``max-files-to-rewrite`` dropped, so a limited rewrite may make fewer commits than
    ``max-commits``."""
    groups = plan.groups
    if not groups:
        return ()
    if not options.partial_progress_enabled:
        return (groups,)
    per_commit = -(-plan.total_group_count // options.partial_progress_max_commits)
    return tuple(groups[i : i + per_commit] for i in range(0, len(groups), per_commit))


def check_failed_commits(failed_commits: int, options: RewriteDataFilesOptions) -> None:
    """Refuses a partial-progress rewrite of data files with more failed commits than
    ``partial-progress.max-failed-commits`` (default: ``max-commits``), with Java's message.

    Count the failures as the batches of :func:`commit_batches` that did not commit. Java
    counts ``min(total group count, max-commits)`` minus the commits that succeeded, which
    is more than the batches formed when groups do not divide evenly (10 groups, max-commits
    6: 5 batches of 2, and Java sees 1 failure though all 5 committed)."""
    if not options.partial_progress_enabled:
        raise ValidationError(
            f"failed commits are counted only with {PARTIAL_PROGRESS_ENABLED}: without it the "
            "rewrite is one commit, and its failure fails the rewrite"
        )
    allowed = options.partial_progress_max_failed_commits
    if failed_commits > allowed:
        raise CommitFailedError(
            f"{PARTIAL_PROGRESS_ENABLED} is true but {failed_commits} rewrite commits failed. "
            f"This is more than the maximum allowed failures of {allowed}. Check the logs to "
            "determine why the individual commits failed. If this is persistent it may help to "
            f"increase {PARTIAL_PROGRESS_MAX_COMMITS} which will split the rewrite operation "
            "into smaller commits."
        )
