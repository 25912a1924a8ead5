"""Compaction: ``rewrite_data_files`` (Java's ``RewriteDataFilesSparkAction``; spec:
"Snapshots" operation ``replace``, "Commit Conflict Resolution and Retry", "Row Lineage").

The plan (:mod:`frazil.table.maintenance.rewrite_plan`, Java 1.10.2's planner) gives groups of
files; each group's live rows (every delete applied by frazil's reader) are written again,
``binpack`` in the order read, ``sort`` ordered by the table's sort order or the one given,
into files of the group's target size under the output spec, several groups at once
(``max-concurrent-file-group-rewrites``). The groups are committed as ``replace`` snapshots,
all at once or, with ``partial-progress.enabled``, in Java's batches: a batch whose commit
fails (a concurrent delete of one of its files, say) is counted as failed and the others land.

Each commit validates from the snapshot the plan read: its files are all still live, no
position delete or deletion vector was added for them since (their rows would come back);
with ``use-starting-sequence-number`` (default true) the new files keep that snapshot's
sequence number, so equality deletes committed since still apply to them and are no conflict,
as in Java. The deletion vectors of the rewritten files are removed with them. A v3 table's rows
keep their ``_row_id`` and ``_last_updated_sequence_number``. With
``remove-dangling-deletes``, delete files that apply to no live data file are removed
afterwards (:func:`remove_dangling_deletes`).
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import CommitFailedError, CommitValidationError, ValidationError
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table.maintenance.rewrite_plan import (
    FileGroupFailureResult,
    FileGroupRewriteResult,
    RewriteDataFilesOptions,
    RewriteDataFilesResult,
    RewriteFileGroup,
    Strategy,
    check_failed_commits,
    commit_batches,
    plan_rewrite_data_files,
)

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table._table import Table

__all__ = ["parse_sort_order", "rewrite_data_files", "rewrite_group"]

_SORT_TERM = re.compile(
    r"^\s*(?P<name>[^\s,]+)\s*(?P<direction>ASC|DESC)?\s*(?:NULLS\s+(?P<nulls>FIRST|LAST))?\s*$",
    re.IGNORECASE,
)


def parse_sort_order(text: str, schema: Schema) -> SortOrder:
    """A sort order as Java's procedure takes it: ``"id DESC NULLS LAST, name"`` (columns;
    ASC and, for ASC, NULLS FIRST by default, as Spark)."""
    fields = []
    for term in text.split(","):
        match = _SORT_TERM.match(term)
        if match is None:
            raise ValidationError(
                f"sort order {text!r}: cannot read {term.strip()!r} (expected "
                "'column [ASC|DESC] [NULLS FIRST|NULLS LAST]')"
            )
        field_id = schema.find_field_id(match.group("name"))
        if field_id is None:
            raise ValidationError(f"sort order {text!r}: no column {match.group('name')!r}")
        direction = SortDirection((match.group("direction") or "asc").lower())
        nulls = match.group("nulls")
        if nulls is None:
            null_order = (
                NullOrder.NULLS_FIRST if direction is SortDirection.ASC else NullOrder.NULLS_LAST
            )
        else:
            null_order = NullOrder(f"nulls-{nulls.lower()}")
        fields.append(SortField(field_id, "identity", direction, null_order))
    return SortOrder(*fields)


def _sort_order(
    table: Table, strategy: str, sort_order: SortOrder | str | None
) -> SortOrder | None:
    if strategy != "sort":
        if sort_order is not None:
            raise ValidationError("a sort order is an option of the sort strategy only")
        return None
    if isinstance(sort_order, str):
        return parse_sort_order(sort_order, table.schema())
    order = sort_order if sort_order is not None else table.sort_order()
    if not order.fields:
        raise ValidationError(
            "cannot sort data without a sort order: the table has none and none was given"
        )
    return order


def _rows(metadata: TableMetadata, io: FileIO, tasks: Sequence[Any]) -> Iterator[pa.RecordBatch]:
    from frazil.table.row_level._changes import lineage_columns
    from frazil.table.row_level._touched import read_rows

    lineage = lineage_columns(metadata)
    for task in tasks:
        yield from read_rows(metadata, io, task, None, lineage, apply_residual=False)


def rewrite_group(
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[Any],
    *,
    output_spec_id: int,
    target_file_size: int,
    sort_order: SortOrder | None,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[DataFile]:
    """The live rows of ``tasks`` written again as data files of ``output_spec_id`` rolled at
    ``target_file_size`` (sorted by ``sort_order`` when given), with their row lineage on v3
    tables. Runs anywhere (a Spark executor too): plain inputs, files returned."""
    from frazil.table.read import read_task_schema
    from frazil.table.row_level._changes import lineage_columns
    from frazil.table.write import write_files

    lineage = lineage_columns(metadata)
    schema = read_task_schema(
        metadata.schema(), metadata_columns=lineage, uuid_type="fixed_size_binary"
    )
    spec = metadata.spec_by_id(output_spec_id)
    if spec is None:
        raise ValidationError(f"output spec {output_spec_id} is not a spec of the table")
    data: Any
    if sort_order is not None:
        # A sort orders the whole group, so its rows are held at once (Java shuffles them).
        data = pa.Table.from_batches(list(_rows(metadata, io, tasks)), schema=schema)
    else:
        data = pa.RecordBatchReader.from_batches(schema, _rows(metadata, io, tasks))
    return list(
        write_files(
            metadata,
            io,
            data,
            schema=metadata.schema(),
            spec=spec,
            sorted_by=sort_order,
            properties={"write.target-file-size-bytes": str(target_file_size)},
            row_lineage=bool(lineage),
            partition_id=partition_id,
            task_id=task_id,
            operation_id=operation_id,
        )
    )


GroupRewriter = Callable[[Sequence[RewriteFileGroup]], list[list[DataFile]]]


def _local_rewriter(
    metadata: TableMetadata,
    io: FileIO,
    order: SortOrder | None,
    concurrency: int,
    advance: Callable[[int], None],
) -> GroupRewriter:
    operation = str(uuid.uuid4())

    def rewrite(groups: Sequence[RewriteFileGroup]) -> list[list[DataFile]]:
        def one(item: tuple[int, RewriteFileGroup]) -> list[DataFile]:
            index, group = item
            files = rewrite_group(
                metadata,
                io,
                group.tasks,
                output_spec_id=group.output_spec_id,
                target_file_size=group.max_output_file_size,
                sort_order=order,
                operation_id=operation,
                partition_id=index,
            )
            advance(1)
            return files

        items = list(enumerate(groups, start=1))
        if concurrency <= 1 or len(items) <= 1:
            return [one(item) for item in items]
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return list(pool.map(one, items))

    return rewrite


def rewrite_data_files(
    table: Table,
    strategy: str = "binpack",
    options: Mapping[str, object] | None = None,
    filter: Expression | str | None = None,  # Java's and pyiceberg's name
    *,
    sort_order: SortOrder | str | None = None,
    case_sensitive: bool = False,
    progress: bool | None = None,
    rewriter: Callable[[TableMetadata, SortOrder | None, RewriteDataFilesOptions], GroupRewriter]
    | None = None,
) -> RewriteDataFilesResult:
    """Compact ``table``'s data files (see the module docstring); returns Java's counts.
    ``options`` take Java's names and values (strings, or Python bools and ints);
    ``progress``: a progress bar on stderr (None: when stderr is a terminal). ``rewriter``
    (frazil.spark) rewrites the groups elsewhere."""
    if strategy == "binpack":
        chosen: Strategy = "binpack"
    elif strategy == "sort":
        chosen = "sort"
    else:
        raise ValidationError(f"unknown rewrite strategy {strategy!r} (binpack or sort)")
    table.refresh()
    metadata = table.metadata
    parsed = RewriteDataFilesOptions.parse(options, chosen, metadata.properties)
    order = _sort_order(table, strategy, sort_order)
    plan = plan_rewrite_data_files(
        table,
        parsed,
        strategy=chosen,
        row_filter=filter,
        case_sensitive=case_sensitive,
    )
    start = metadata.current_snapshot()
    results: list[FileGroupRewriteResult] = []
    failures: list[FileGroupFailureResult] = []
    if start is not None and plan.groups:
        with _progress(progress, len(plan.groups)) as advance:
            make = rewriter or (
                lambda m, o, p: _local_rewriter(
                    m, table.io, o, p.max_concurrent_file_group_rewrites, advance
                )
            )
            rewrite = make(metadata, order, parsed)
            failed_commits = 0
            for batch in commit_batches(plan, parsed):
                try:
                    written = rewrite(batch)
                except Exception:
                    if not parsed.partial_progress_enabled:
                        raise
                    failures.extend(FileGroupFailureResult.of(g) for g in batch)
                    failed_commits += 1
                    continue
                try:
                    _commit(table, start.snapshot_id, start.sequence_number, batch, written, parsed)
                except (CommitValidationError, CommitFailedError):
                    if not parsed.partial_progress_enabled:
                        raise
                    failures.extend(FileGroupFailureResult.of(g) for g in batch)
                    failed_commits += 1
                    continue
                results.extend(
                    FileGroupRewriteResult.of(g, len(files))
                    for g, files in zip(batch, written, strict=True)
                )
            if parsed.partial_progress_enabled:
                check_failed_commits(failed_commits, parsed)
    dangling = 0
    if parsed.remove_dangling_deletes and start is not None:
        from frazil.table.maintenance.dangling_deletes import remove_dangling_deletes

        dangling = len(remove_dangling_deletes(table))
    return RewriteDataFilesResult(tuple(results), tuple(failures), dangling)


def _commit(
    table: Table,
    starting_snapshot_id: int,
    starting_sequence_number: int,
    groups: Sequence[RewriteFileGroup],
    written: Sequence[Sequence[DataFile]],
    options: RewriteDataFilesOptions,
) -> None:
    """One ``replace`` commit of ``groups`` (their new files ``written``); the new files are
    deleted when it fails for certain."""
    from frazil.table.snapshot.overwrite import RewriteFiles

    table.refresh()
    producer = RewriteFiles(table.metadata, table.io)
    # Validate against what happened since the plan was made, not since this commit began.
    producer.starting_snapshot_id = starting_snapshot_id
    if options.use_starting_sequence_number and table.format_version >= 2:
        producer.data_sequence_number = starting_sequence_number
    try:
        for group, files in zip(groups, written, strict=True):
            for path in group.file_paths:
                producer.delete_file(path)
            for file in files:
                producer.add_file(file, group.output_spec_id, owned=True)
    except BaseException:
        producer.cleanup(False)
        raise
    with table.transaction() as txn:
        try:
            txn.add_change(producer)
        except BaseException:
            producer.cleanup(False)
            raise


class _progress:
    """A rich progress bar over the groups on stderr (when asked, or by default on a
    terminal); its value is a callable advancing it."""

    def __init__(self, enabled: bool | None, total: int) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.total = total
        self._bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if not self.enabled:
            return lambda n: None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.__enter__()
        task = self._bar.add_task("rewriting file groups", total=self.total)
        bar = self._bar
        return lambda n: bar.update(task, advance=n)

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
