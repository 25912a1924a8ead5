"""Planning ``rewrite_data_files``: Java 1.10.2's ``BinPackRewriteFilePlanner`` (and Spark's
``SparkShufflingDataRewritePlanner`` for the sort strategy) over frazil's scan tasks."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from frazil.errors import InvalidValueError, ValidationError
from frazil.partitioning import PartitionSpec
from frazil.table._deletes import is_file_scoped
from frazil.table.maintenance.rewrite_plan._common import (
    FileGroupInfo,
    RewritePlan,
    frozen_mapping,
    pack,
    partition_key,
    sort_groups,
)
from frazil.table.maintenance.rewrite_plan._options import RewriteDataFilesOptions

__all__ = [
    "RewriteFileGroup",
    "is_file_scoped",
    "output_spec_id",
    "plan_data_file_groups",
]

# The reserved field id of a position delete file's file_path column.
DELETE_FILE_PATH_ID = 2147483546
EQUALITY_DELETES = 2
PUFFIN = "PUFFIN"


class ContentFileLike(Protocol):
    """What the planner reads of a data file (a :class:`frazil.table.scan.DataFile`)."""

    @property
    def file_path(self) -> str: ...
    @property
    def file_size_in_bytes(self) -> int: ...
    @property
    def record_count(self) -> int: ...
    @property
    def spec_id(self) -> int: ...
    @property
    def partition(self) -> Mapping[str, Any] | None: ...


class DeleteFileLike(Protocol):
    """What the planner reads of a delete file of a task."""

    @property
    def file_path(self) -> str: ...
    @property
    def content(self) -> int: ...
    @property
    def file_format(self) -> str: ...
    @property
    def record_count(self) -> int: ...
    @property
    def referenced_data_file(self) -> str | None: ...
    @property
    def lower_bounds(self) -> Mapping[int, bytes] | None: ...
    @property
    def upper_bounds(self) -> Mapping[int, bytes] | None: ...
    @property
    def content_offset(self) -> int | None: ...
    @property
    def content_size_in_bytes(self) -> int | None: ...


class ScanTaskLike(Protocol):
    """A whole-file scan task (:class:`frazil.table.scan.FileScanTask` of ``plan_files()``)."""

    @property
    def file(self) -> ContentFileLike: ...
    @property
    def delete_files(self) -> Sequence[DeleteFileLike]: ...


def _is_dv(delete: DeleteFileLike) -> bool:
    return str(delete.file_format).upper() == PUFFIN


def _delete_identity(delete: DeleteFileLike) -> tuple[str, int | None, int | None]:
    # DeleteFileSet: location, content offset and content size.
    return (delete.file_path, delete.content_offset, delete.content_size_in_bytes)


@dataclass(frozen=True, eq=False)
class RewriteFileGroup:
    """One group of data files to rewrite together (Java's ``RewriteFileGroup``).

    ``partition`` (in ``info``) is in the table's current spec, ``partition_spec_id``; files
    of other specs are all grouped under the all-null partition of the current spec, as Java
    groups them. ``output_spec_id`` is the spec the rewritten files are written with.
    ``max_output_file_size`` is the target file size the writer rolls at (Java's
    ``maxOutputFileSize``), ``input_split_size`` the read split size of a bin-pack rewrite
    (each split one output file), ``expected_output_files`` the file count a sort rewrite
    shuffles into. ``input_bytes`` and ``record_count`` sum the files'
    ``file_size_in_bytes`` and ``record_count``; ``delete_files_count`` counts the distinct
    delete files applying to them."""

    info: FileGroupInfo
    tasks: tuple[ScanTaskLike, ...] = field(repr=False)
    partition_spec_id: int
    output_spec_id: int
    input_bytes: int
    record_count: int
    delete_files_count: int
    expected_output_files: int
    max_output_file_size: int
    input_split_size: int

    @property
    def input_file_count(self) -> int:
        return len(self.tasks)

    @property
    def data_files(self) -> tuple[ContentFileLike, ...]:
        """The files this group replaces (Java's ``rewrittenFiles``)."""
        return tuple(task.file for task in self.tasks)

    @property
    def file_paths(self) -> tuple[str, ...]:
        return tuple(task.file.file_path for task in self.tasks)

    @property
    def dangling_dvs(self) -> tuple[DeleteFileLike, ...]:
        """The deletion vectors of the group's files, which the commit removes with them
        (Java's ``danglingDVs``; their count is the result's ``removed_delete_files_count``)."""
        seen: dict[tuple[str, int | None, int | None], DeleteFileLike] = {}
        for task in self.tasks:
            for delete in task.delete_files:
                if _is_dv(delete):
                    seen.setdefault(_delete_identity(delete), delete)
        return tuple(seen.values())

    @property
    def requires_repartition(self) -> bool:
        """Whether Java's bin-pack runner shuffles the group's rows into the output spec
        (RANGE distribution): when its *first* file's spec is not the output spec."""
        return self.tasks[0].file.spec_id != self.output_spec_id


@dataclass
class _Partition:
    partition: Mapping[str, Any]
    tasks: list[ScanTaskLike] = field(default_factory=list)


class _Rules:
    """The file and group filters of ``BinPackRewriteFilePlanner``."""

    def __init__(self, options: RewriteDataFilesOptions) -> None:
        self.options = options

    def outside_size_range(self, task: ScanTaskLike) -> bool:
        size = task.file.file_size_in_bytes
        return size < self.options.min_file_size_bytes or size > self.options.max_file_size_bytes

    def too_many_deletes(self, task: ScanTaskLike) -> bool:
        # With delete-file-threshold 0, every file qualifies, deletes or not.
        return len(task.delete_files) >= self.options.delete_file_threshold

    def too_high_delete_ratio(self, task: ScanTaskLike) -> bool:
        deletes = task.delete_files
        if not deletes:
            return False
        # Only file-scoped deletes have a known count of deleted rows of this file.
        known = sum(d.record_count for d in deletes if is_file_scoped(d))
        records = task.file.record_count
        if records == 0:
            return False  # Java: 0.0 / 0 is NaN, and NaN >= threshold is false
        ratio = float(min(known, records)) / records
        return ratio >= self.options.delete_ratio_threshold

    def select(self, task: ScanTaskLike) -> bool:
        return (
            self.outside_size_range(task)
            or self.too_many_deletes(task)
            or self.too_high_delete_ratio(task)
        )

    def keep(self, group: list[ScanTaskLike]) -> bool:
        options = self.options
        size = _input_size(group)
        many = len(group) > 1
        return (
            (many and len(group) >= options.min_input_files)
            or (many and size > options.target_file_size_bytes)
            or size > options.max_file_size_bytes
            or any(self.too_many_deletes(t) for t in group)
            or any(self.too_high_delete_ratio(t) for t in group)
        )


def _input_size(tasks: Iterable[ScanTaskLike]) -> int:
    return sum(task.file.file_size_in_bytes for task in tasks)


def _group_by_partition(
    tasks: Iterable[ScanTaskLike], current: PartitionSpec
) -> dict[tuple[Hashable, ...], _Partition]:
    """Tasks by their partition in the current spec, in the order partitions first appear;
    a file of another spec counts as the current spec's all-null partition (its rows may
    belong to several partitions of the current spec)."""
    names = [f.name for f in current.fields]
    empty = dict.fromkeys(names)
    partitions: dict[tuple[Hashable, ...], _Partition] = {}
    seen: set[str] = set()
    for task in tasks:
        file = task.file
        if file.file_path in seen:
            raise ValidationError(
                f"data file {file.file_path} is in two scan tasks: plan a rewrite from whole-file "
                "tasks (DataScan.plan_files), not split ones"
            )
        seen.add(file.file_path)
        if file.spec_id == current.spec_id:
            values = file.partition or {}
            missing = [n for n in names if n not in values]
            if missing:
                raise ValidationError(
                    f"data file {file.file_path} of spec {file.spec_id} has no partition "
                    f"value for {missing}"
                )
            partition = {n: values[n] for n in names}
        else:
            partition = empty
        key = partition_key([partition[n] for n in names])
        entry = partitions.get(key)
        if entry is None:
            entry = partitions[key] = _Partition(frozen_mapping(partition))
        entry.tasks.append(task)
    return partitions


def output_spec_id(
    options: RewriteDataFilesOptions, specs: Mapping[int, PartitionSpec], current_spec_id: int
) -> int:
    """The spec rewritten files are written with: ``output-spec-id``, which the table must
    have, or the current spec."""
    spec_id = current_spec_id if options.output_spec_id is None else options.output_spec_id
    if spec_id not in specs:
        raise InvalidValueError(
            f"Cannot use output spec id {spec_id} because the table does not contain a "
            "reference to this spec-id."
        )
    return spec_id


def plan_data_file_groups(
    tasks: Iterable[ScanTaskLike],
    options: RewriteDataFilesOptions,
    *,
    specs: Mapping[int, PartitionSpec],
    current_spec_id: int,
) -> RewritePlan[RewriteFileGroup]:
    """The groups ``rewrite_data_files`` rewrites, as Java 1.10.2's planner forms them from the
    current snapshot's scan tasks (``table.scan(row_filter=...).plan_files()``, in plan order).

    Per partition of the current spec: the files to rewrite (all with ``rewrite-all``; else
    those smaller than ``min-file-size-bytes`` or larger than ``max-file-size-bytes``, with at
    least ``delete-file-threshold`` delete files, or whose file-scoped deletes remove at least
    ``delete-ratio-threshold`` of their rows), bin-packed in order into groups of at most
    ``max-file-group-size-bytes`` (next fit: one open group); then the groups kept (all with
    ``rewrite-all``; else those of at least ``min-input-files`` files, of more than one file
    and more than the target size, of more than ``max-file-size-bytes``, or holding a file with
    too many deletes). ``max-files-to-rewrite`` then keeps groups in planning order until that
    many files are taken, cutting the last one short. Groups are numbered in planning order and
    sorted by ``rewrite-job-order``.

    Java walks partitions in hash order (a HashSet of map entries whose hash mixes identity
    hash codes: it changes from run to run), which decides the global indices, the order under
    ``rewrite-job-order=none`` and which files ``max-files-to-rewrite`` keeps; frazil walks
    them in the order they first appear in the scan."""
    current = specs.get(current_spec_id)
    if current is None:
        raise ValidationError(f"the table has no partition spec {current_spec_id} (current spec)")
    output = output_spec_id(options, specs, current_spec_id)
    rules = _Rules(options)
    planned: list[tuple[_Partition, list[list[ScanTaskLike]]]] = []
    for entry in _group_by_partition(tasks, current).values():
        if options.rewrite_all:
            bins = pack(entry.tasks, _size, options.max_file_group_size_bytes)
        else:
            selected = [t for t in entry.tasks if rules.select(t)]
            bins = [
                b for b in pack(selected, _size, options.max_file_group_size_bytes) if rules.keep(b)
            ]
        planned.append((entry, bins))

    limit = options.max_files_to_rewrite
    taken = 0
    groups: list[RewriteFileGroup] = []
    in_partition: dict[int, int] = {}
    for index, (entry, bins) in enumerate(planned):
        for members in bins:
            if limit is not None:
                if taken >= limit:
                    continue
                count = min(len(members), limit - taken)
                taken += count
            else:
                count = len(members)
            # Java sizes the group (expected files, split size) by all its files, even when
            # max-files-to-rewrite cut it short.
            full_size = _input_size(members)
            in_partition[index] = in_partition.get(index, 0) + 1
            chosen = tuple(members[:count])
            groups.append(
                RewriteFileGroup(
                    info=FileGroupInfo(len(groups) + 1, in_partition[index], entry.partition),
                    tasks=chosen,
                    partition_spec_id=current_spec_id,
                    output_spec_id=output,
                    input_bytes=_input_size(chosen),
                    record_count=sum(t.file.record_count for t in chosen),
                    delete_files_count=len(
                        {_delete_identity(d) for t in chosen for d in t.delete_files}
                    ),
                    expected_output_files=options.expected_output_files(full_size),
                    max_output_file_size=options.write_max_file_size,
                    input_split_size=options.input_split_size(full_size),
                )
            )
    counts = tuple((entry.partition, len(bins)) for entry, bins in planned)
    return RewritePlan(
        groups=sort_groups(groups, options.rewrite_job_order),
        total_group_count=sum(c for _, c in counts),
        partition_group_counts=counts,
    )


def _size(task: ScanTaskLike) -> int:
    # ContentScanTask.length of a whole data file: its size.
    return task.file.file_size_in_bytes
