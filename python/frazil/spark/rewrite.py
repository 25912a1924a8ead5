"""Compaction with Spark executors: ``rewrite_data_files`` (Java's
``RewriteDataFilesSparkAction``; spec: "Snapshots" operation ``replace``).

The local compaction (:func:`frazil.table.maintenance.rewrite_data_files.rewrite_data_files`)
decides everything: the options, the plan (Java's planner), the commit batches, the commits
(validated from the planned snapshot, with the starting sequence number), partial progress,
the result, dangling deletes. Only the rewriting of the file groups moves, through its
``rewriter`` hook: each commit batch is one Spark job with one task per file group, which reads
the group's live rows (every delete applied) from its scan tasks' Appendix C JSON (with their
data files' sequence numbers, for the rows' lineage), the table metadata's JSON and the FileIO's
properties, writes them again with
:func:`~frazil.table.maintenance.rewrite_data_files.rewrite_group` (sorted per group for the
``sort`` strategy, as locally) and returns its data file records.

Files no commit takes are deleted as :mod:`frazil.spark.writer` deletes them: a failing attempt
deletes its own, each attempt that succeeds records its files in a journal under
``metadata/spark-write-<job>/`` first, and after the job the driver deletes the recorded files of
attempts Spark discarded (or every file, when the job failed). The files returned are then the
commit's, added as its own: a commit that fails for certain deletes them, one whose outcome is
unknown keeps them.
"""

from __future__ import annotations

import json
import pickle
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.errors import FrazilError, SparkJobError
from frazil.io import FileIO
from frazil.spark._journal import Journal, delete_files
from frazil.spark._pyspark import require
from frazil.spark._tasks import TaskPayload, task_payload

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.manifest import DataFile
    from frazil.metadata import TableMetadata
    from frazil.sorting import SortOrder
    from frazil.table import Table
    from frazil.table.maintenance.rewrite_plan import (
        RewriteDataFilesOptions,
        RewriteDataFilesResult,
        RewriteFileGroup,
    )

__all__ = ["RewriteJob", "rewrite_data_files"]

# A group as a task gets it: (its 1-based index in the batch, output spec id, target file size,
# its scan tasks: Appendix C JSON and sequence numbers, see frazil.spark._tasks).
GroupItem = tuple[int, int, int, list[TaskPayload]]


@dataclass(frozen=True)
class RewriteJob:
    """What executors need to rewrite file groups: plain data only."""

    metadata_json: str
    io: FileIO
    sort_order_json: str | None
    operation_id: str
    journal: Journal
    fail_first_attempt: bool = False

    def rewrite_partition(self, items: Iterable[GroupItem]) -> Iterator[tuple[int, bytes]]:
        """mapPartitions' function: rewrites each group of the partition (one, as the driver
        slices them); yields ``(index, pickled data file rows)``."""
        from frazil.metadata import TableMetadata
        from frazil.sorting import SortOrder
        from frazil.spark._tasks import task_from_payload, task_threads
        from frazil.table.maintenance.rewrite_data_files import rewrite_group

        todo = list(items)
        if not todo:
            return
        task_threads()
        context = require("pyspark").TaskContext.get()
        metadata = TableMetadata.from_json(self.metadata_json)
        order = (
            None
            if self.sort_order_json is None
            else SortOrder.from_json(json.loads(self.sort_order_json))
        )
        written: list[DataFile] = []
        out: list[tuple[int, bytes]] = []
        try:
            for index, spec_id, target_size, payloads in todo:
                files = rewrite_group(
                    metadata,
                    self.io,
                    [task_from_payload(t) for t in payloads],
                    output_spec_id=spec_id,
                    target_file_size=target_size,
                    sort_order=order,
                    operation_id=self.operation_id,
                    partition_id=index,
                    task_id=context.taskAttemptId(),
                )
                written.extend(files)
                out.append((index, pickle.dumps([f.to_row() for f in files])))
            if self.fail_first_attempt and context.attemptNumber() == 0:
                raise FrazilError("frazil test hook: the first attempt of each task fails")
            self.journal.record(str(f.file_path) for f in written)
        except BaseException:
            delete_files(self.io, [str(f.file_path) for f in written])
            raise
        yield from out


class _SparkRewriter:
    """The local compaction's ``rewriter``: each batch of groups rewritten by one Spark job."""

    def __init__(
        self,
        spark: Any,
        table: Table,
        metadata: TableMetadata,
        order: SortOrder | None,
        fail_first_attempt: bool,
    ) -> None:
        self.spark = spark
        self.table = table
        self.metadata = metadata
        self.order = order
        self.fail_first_attempt = fail_first_attempt

    def __call__(self, groups: Sequence[RewriteFileGroup]) -> list[list[DataFile]]:
        from frazil.manifest import DataFile

        if not groups:
            return []
        io = self.table.io
        job_id = str(uuid.uuid4())
        journal = Journal.create(self.metadata.location, io, job_id)
        job = RewriteJob(
            metadata_json=self.metadata.to_json(),
            io=io,
            sort_order_json=None if self.order is None else json.dumps(self.order.to_json()),
            operation_id=job_id,
            journal=journal,
            fail_first_attempt=self.fail_first_attempt,
        )
        items: list[GroupItem] = [
            (index, g.output_spec_id, g.max_output_file_size, [task_payload(t) for t in g.tasks])
            for index, g in enumerate(groups, start=1)
        ]
        context = self.spark.sparkContext
        # One partition per group: parallelize slices a list of n items into n partitions of
        # one item each.
        rdd = context.parallelize(items, len(items)).mapPartitions(job.rewrite_partition)
        try:
            results = rdd.collect()
        except Exception as error:
            journal.clean_up(set(), committed=False, unknown=False)
            from frazil.spark.writer import _first_line

            raise SparkJobError(
                f"the Spark job rewriting {len(groups)} file groups of "
                f"{'.'.join(self.table.name()) or self.table.location()} failed; its files were "
                f"deleted: {_first_line(error)}"
            ) from error
        by_index = {index: [DataFile.from_row(r) for r in pickle.loads(b)] for index, b in results}
        written = [by_index[index] for index, *_ in items]
        # The files of attempts Spark discarded go now; those returned are the commit's own.
        journal.clean_up({str(f.file_path) for files in written for f in files}, True, False)
        return written


def rewrite_data_files(
    spark: Any,
    table: Table | str,
    strategy: str = "binpack",
    options: Mapping[str, object] | None = None,
    filter: Expression | str | None = None,  # Java's and pyiceberg's name
    sort_order: SortOrder | str | None = None,
    *,
    case_sensitive: bool = False,
    _fail_first_attempt: bool = False,
) -> RewriteDataFilesResult:
    """:func:`frazil.table.maintenance.rewrite_data_files.rewrite_data_files` of ``table`` (a
    frazil Table or ``"catalog.namespace.name"``) with each file group rewritten by a Spark
    task: the same arguments (``options`` by Java's names, ``filter``, ``sort_order`` for the
    ``sort`` strategy, ``case_sensitive``), plan, commits and result.
    ``_fail_first_attempt`` is a test hook: each task's first attempt fails after writing."""
    from frazil.spark.reader import resolve_table
    from frazil.table.maintenance.rewrite_data_files import rewrite_data_files as local

    require("pyspark")
    resolved = resolve_table(table)

    def rewriter(
        metadata: TableMetadata, order: SortOrder | None, _options: RewriteDataFilesOptions
    ) -> _SparkRewriter:
        return _SparkRewriter(spark, resolved, metadata, order, _fail_first_attempt)

    return local(
        resolved,
        strategy,
        options,
        filter,
        sort_order=sort_order,
        case_sensitive=case_sensitive,
        progress=False,
        rewriter=rewriter,
    )
