"""Planning ``rewrite_position_delete_files``: Java 1.10.2's
``BinPackRewritePositionDeletePlanner`` over the live position delete files of a snapshot
(Java's ``position_deletes`` metadata table: position delete files and deletion vectors), and
the rule of Spark's ``SparkRewritePositionDeleteRunner`` for which delete rows a rewrite keeps."""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.errors import InvalidMetadataError, ValidationError
from frazil.expressions import Expression, parse
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table._metadata_columns import unified_partition_type
from frazil.table.maintenance.rewrite_plan._common import (
    FileGroupInfo,
    RewritePlan,
    frozen_mapping,
    java_key,
    pack,
    partition_key,
    sort_groups,
)
from frazil.table.maintenance.rewrite_plan._options import RewritePositionDeleteFilesOptions
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    CONTENT_DELETES,
    entry_files,
    live_entries,
    manifest_rows,
    read_entries,
)

__all__ = [
    "LiveDataFile",
    "PositionDeleteFile",
    "RewritePositionDeletesGroup",
    "live_data_files",
    "live_position_delete_files",
    "plan_position_delete_groups",
]

POSITION_DELETES = 1
PUFFIN = "PUFFIN"


class PositionDeleteFileLike(Protocol):
    """What the planner reads of a position delete file (:class:`PositionDeleteFile`)."""

    @property
    def file_path(self) -> str: ...
    @property
    def file_format(self) -> str: ...
    @property
    def content(self) -> int: ...
    @property
    def spec_id(self) -> int: ...
    @property
    def partition(self) -> Mapping[str, Any] | None: ...
    @property
    def record_count(self) -> int: ...
    @property
    def file_size_in_bytes(self) -> int: ...
    @property
    def content_offset(self) -> int | None: ...
    @property
    def content_size_in_bytes(self) -> int | None: ...
    @property
    def data_sequence_number(self) -> int | None: ...


class DataFileLike(Protocol):
    """A live data file: its location, spec and partition (:class:`LiveDataFile`, or a scan
    task's ``file``)."""

    @property
    def file_path(self) -> str: ...
    @property
    def spec_id(self) -> int: ...
    @property
    def partition(self) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True)
class PositionDeleteFile:
    """A live position delete file (or deletion vector) of a snapshot: its ``data_file``
    struct (what a commit removes), the spec of its manifest and its sequence numbers."""

    file_path: str
    file_format: str
    content: int
    spec_id: int
    partition: Mapping[str, Any] = field(hash=False)
    record_count: int
    file_size_in_bytes: int
    content_offset: int | None
    content_size_in_bytes: int | None
    referenced_data_file: str | None
    data_sequence_number: int | None
    file_sequence_number: int | None
    data_file: DataFile = field(compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class LiveDataFile:
    """A live data file of a snapshot."""

    file_path: str
    spec_id: int
    partition: Mapping[str, Any] = field(hash=False)


def _length(file: PositionDeleteFileLike) -> int:
    # ScanTaskUtil.contentSizeInBytes: a deletion vector's blob, else the whole file.
    if str(file.file_format).upper() == PUFFIN:
        if file.content_size_in_bytes is None:
            raise InvalidMetadataError(
                f"deletion vector in {file.file_path} has no content_size_in_bytes"
            )
        return file.content_size_in_bytes
    return file.file_size_in_bytes


@dataclass(frozen=True, eq=False)
class RewritePositionDeletesGroup:
    """One group of position delete files to rewrite together (Java's
    ``RewritePositionDeletesGroup``).

    ``partition`` (in ``info``) is in the table's partition type over all specs (Java's
    ``Partitioning.partitionType``); ``input_bytes`` sums the files' sizes (a deletion
    vector's blob size), ``record_count`` their delete counts. The new delete files are
    committed with ``max_rewritten_data_sequence_number``. ``live_data_paths`` are the data
    files whose deletes the rewrite keeps (Spark's runner: a left-semi join of the delete rows
    on the live data files of the first delete file's partition); rows for other files are
    dropped."""

    info: FileGroupInfo
    files: tuple[PositionDeleteFileLike, ...] = field(repr=False)
    input_bytes: int
    record_count: int
    expected_output_files: int
    max_output_file_size: int
    input_split_size: int
    max_rewritten_data_sequence_number: int
    live_data_paths: frozenset[str] = field(repr=False)

    @property
    def input_file_count(self) -> int:
        return len(self.files)


class _Unified:
    """Partition tuples coerced to the table's partition type over all specs (Java's
    ``PartitionUtil.coercePartition``), by field id."""

    def __init__(self, schema: Schema, specs: Mapping[int, PartitionSpec]) -> None:
        self.specs = specs
        self.fields = unified_partition_type(schema, specs.values()).fields

    def by_id(self, spec_id: int, partition: Mapping[str, Any] | None, what: str) -> dict[int, Any]:
        spec = self.specs.get(spec_id)
        if spec is None:
            raise InvalidMetadataError(
                f"{what} uses partition spec {spec_id}, which the table lacks"
            )
        names = {f.field_id: f.name for f in spec.fields}
        values = partition or {}
        out: dict[int, Any] = {}
        for unified in self.fields:
            name = names.get(unified.field_id)
            if name is None:
                out[unified.field_id] = None
            elif name in values:
                out[unified.field_id] = values[name]
            else:
                raise ValidationError(f"{what} has no partition value for {name!r}")
        return out

    def named(self, values: Mapping[int, Any]) -> dict[str, Any]:
        return {f.name: values[f.field_id] for f in self.fields}


class _LiveData:
    """The live data files by partition, for the runner's rule of which delete rows stay."""

    def __init__(self, files: Iterable[DataFileLike], unified: _Unified) -> None:
        self._ids = [f.field_id for f in unified.fields]
        self._paths: dict[tuple[Hashable, ...], list[str]] = {}
        for file in files:
            values = unified.by_id(file.spec_id, file.partition, f"data file {file.file_path}")
            key = partition_key([values[i] for i in self._ids])
            self._paths.setdefault(key, []).append(file.file_path)
        self._kept: dict[tuple[tuple[int, Hashable], ...], frozenset[str]] = {}

    def matching(self, required: dict[int, Any]) -> frozenset[str]:
        """The paths of files whose partition equals ``required`` (field id to value; null
        equals null) on those fields."""
        wanted = tuple(sorted((i, java_key(v)) for i, v in required.items()))
        kept = self._kept.get(wanted)
        if kept is None:
            positions = [(self._ids.index(i), v) for i, v in wanted]
            kept = frozenset(
                path
                for key, paths in self._paths.items()
                if all(key[p] == v for p, v in positions)
                for path in paths
            )
            self._kept[wanted] = kept
        return kept


def plan_position_delete_groups(
    delete_files: Iterable[PositionDeleteFileLike],
    live_data_files: Iterable[DataFileLike],
    options: RewritePositionDeleteFilesOptions,
    *,
    specs: Mapping[int, PartitionSpec],
    schema: Schema,
) -> RewritePlan[RewritePositionDeletesGroup]:
    """The groups ``rewrite_position_delete_files`` rewrites, as Java 1.10.2's planner forms
    them from the table's live position delete files (:func:`live_position_delete_files`), and
    for each the live data files (:func:`live_data_files`) whose deletes it keeps.

    Per partition (each file's partition coerced to the table's partition type over all
    specs, so files of several specs share a group): the files smaller than
    ``min-file-size-bytes`` or larger than ``max-file-size-bytes`` (all with ``rewrite-all``),
    bin-packed in order into groups of at most ``max-file-group-size-bytes``; the groups kept
    hold at least ``min-input-files`` files, or more than one file and more than the target
    size, or more than ``max-file-size-bytes`` (all with ``rewrite-all``). Groups are numbered
    in planning order (partitions in the order they first appear; Java's is a hash order) and
    sorted by ``rewrite-job-order``."""
    unified = _Unified(schema, specs)
    by_partition: dict[tuple[Hashable, ...], tuple[dict[int, Any], list[PositionDeleteFileLike]]]
    by_partition = {}
    seen: set[tuple[str, int | None, int | None]] = set()
    for file in delete_files:
        what = f"delete file {file.file_path}"
        if file.content != POSITION_DELETES:
            raise ValidationError(f"{what} is not a position delete file (content {file.content})")
        identity = (file.file_path, file.content_offset, file.content_size_in_bytes)
        if identity in seen:
            raise ValidationError(f"{what} is given twice")
        seen.add(identity)
        values = unified.by_id(file.spec_id, file.partition, what)
        key = partition_key([values[f.field_id] for f in unified.fields])
        by_partition.setdefault(key, (values, []))[1].append(file)

    sizes = options
    planned: list[tuple[dict[int, Any], list[list[PositionDeleteFileLike]]]] = []
    for values, files in by_partition.values():
        if sizes.rewrite_all:
            bins = pack(files, _length, sizes.max_file_group_size_bytes)
        else:
            selected = [
                f
                for f in files
                if _length(f) < sizes.min_file_size_bytes or _length(f) > sizes.max_file_size_bytes
            ]
            bins = [
                b
                for b in pack(selected, _length, sizes.max_file_group_size_bytes)
                if _keep(b, sizes)
            ]
        planned.append((values, bins))

    live = _LiveData(live_data_files, unified)
    groups: list[RewritePositionDeletesGroup] = []
    counts: list[tuple[Mapping[str, Any], int]] = []
    for values, bins in planned:
        partition = frozen_mapping(unified.named(values))
        counts.append((partition, len(bins)))
        for index, members in enumerate(bins, start=1):
            size = sum(_length(f) for f in members)
            groups.append(
                RewritePositionDeletesGroup(
                    info=FileGroupInfo(len(groups) + 1, index, partition),
                    files=tuple(members),
                    input_bytes=size,
                    record_count=sum(f.record_count for f in members),
                    expected_output_files=sizes.expected_output_files(size),
                    max_output_file_size=sizes.write_max_file_size,
                    input_split_size=sizes.input_split_size(size),
                    max_rewritten_data_sequence_number=_max_sequence_number(members),
                    live_data_paths=live.matching(_runner_partition(members[0], unified)),
                )
            )
    return RewritePlan(
        groups=sort_groups(groups, sizes.rewrite_job_order),
        total_group_count=sum(c for _, c in counts),
        partition_group_counts=tuple(counts),
    )


def _keep(
    group: Sequence[PositionDeleteFileLike], options: RewritePositionDeleteFilesOptions
) -> bool:
    size = sum(_length(f) for f in group)
    many = len(group) > 1
    return (
        (many and len(group) >= options.min_input_files)
        or (many and size > options.target_file_size_bytes)
        or size > options.max_file_size_bytes
    )


def _runner_partition(first: PositionDeleteFileLike, unified: _Unified) -> dict[int, Any]:
    """The partition Spark's runner selects data files by: the fields of the group's first
    delete file's own spec (those the table still partitions by) and its values."""
    values = unified.by_id(first.spec_id, first.partition, f"delete file {first.file_path}")
    own = {f.field_id for f in unified.specs[first.spec_id].fields}
    return {i: v for i, v in values.items() if i in own}


def _max_sequence_number(files: Sequence[PositionDeleteFileLike]) -> int:
    numbers = []
    for file in files:
        if file.data_sequence_number is None:
            raise InvalidMetadataError(
                f"delete file {file.file_path} has no data sequence number (read it from a "
                "committed manifest, whose entries inherit theirs)"
            )
        numbers.append(file.data_sequence_number)
    return max(numbers)


# --- reading a snapshot's files --------------------------------------------------------------


def _filter_json(row_filter: Expression | str | None) -> str | None:
    if row_filter is None:
        return None
    expression = parse(row_filter) if isinstance(row_filter, str) else row_filter
    return json.dumps(expression.to_json())


def live_position_delete_files(
    metadata: TableMetadata,
    io: FileIO,
    *,
    snapshot: Snapshot | None = None,
    row_filter: Expression | str | None = None,
    case_sensitive: bool = False,
) -> list[PositionDeleteFile]:
    """The live position delete files and deletion vectors of ``snapshot`` (default: the
    current one), in manifest order: Java's ``position_deletes`` table planned with a
    ``baseTableFilter``. ``row_filter`` is a filter on the table's rows, of which only the
    partition part counts (its inclusive projection on each file's spec), never the files'
    metrics; Java's actions bind it case-insensitively unless Spark's ``caseSensitive``."""
    snap = metadata.current_snapshot() if snapshot is None else snapshot
    filter_json = _filter_json(row_filter)
    schema_json = json.dumps(metadata.schema().to_json())
    out: list[PositionDeleteFile] = []
    for manifest in manifest_rows(snap, io):
        if int(manifest.get("content") or 0) != CONTENT_DELETES:
            continue
        spec_id = int(manifest["partition_spec_id"])
        spec = metadata.spec_by_id(spec_id)
        if spec is None:
            raise InvalidMetadataError(
                f"manifest {manifest['manifest_path']} uses partition spec {spec_id}, which "
                "the table lacks"
            )
        entries = live_entries(read_entries(manifest, io))
        column = entries.column("data_file").combine_chunks()
        if entries.num_rows == 0:
            continue
        keep = pc.equal(column.field("content"), POSITION_DELETES)
        if filter_json is not None:
            # The partition alone: a record count that cannot prune, and no metrics.
            partition_only = pa.table(
                {
                    "data_file": pa.StructArray.from_arrays(
                        [column.field("partition"), pa.array([1] * len(column), pa.int64())],
                        names=["partition", "record_count"],
                    )
                }
            )
            might, _ = _native.match_files(
                partition_only,
                filter_json,
                schema_json,
                json.dumps(spec.to_json()),
                case_sensitive,
            )
            keep = pc.and_(keep, pa.array(might, pa.bool_()))
        kept = entries.filter(keep)
        for file, data_seq, file_seq in zip(
            entry_files(kept),
            kept.column("sequence_number").to_pylist(),
            kept.column("file_sequence_number").to_pylist(),
            strict=True,
        ):
            out.append(
                PositionDeleteFile(
                    file_path=str(file.file_path),
                    file_format=str(file.file_format),
                    content=int(file.content or 0),
                    spec_id=spec_id,
                    partition=frozen_mapping(file.partition or {}),
                    record_count=int(file.record_count or 0),
                    file_size_in_bytes=int(file.file_size_in_bytes or 0),
                    content_offset=file.content_offset,
                    content_size_in_bytes=file.content_size_in_bytes,
                    referenced_data_file=file.referenced_data_file,
                    data_sequence_number=data_seq,
                    file_sequence_number=file_seq,
                    data_file=file,
                )
            )
    return out


def live_data_files(
    metadata: TableMetadata, io: FileIO, *, snapshot: Snapshot | None = None
) -> list[LiveDataFile]:
    """The live data files of ``snapshot`` (default: the current one): Java's ``data_files``
    table, which Spark's position delete runner joins the delete rows with."""
    snap = metadata.current_snapshot() if snapshot is None else snapshot
    out: list[LiveDataFile] = []
    for manifest in manifest_rows(snap, io):
        if int(manifest.get("content") or 0) != CONTENT_DATA:
            continue
        spec_id = int(manifest["partition_spec_id"])
        for file in entry_files(live_entries(read_entries(manifest, io))):
            out.append(
                LiveDataFile(str(file.file_path), spec_id, frozen_mapping(file.partition or {}))
            )
    return out
