"""A Spark DataFrame into a table, with one Iceberg commit (spec: "Optimistic Concurrency",
"Snapshots", "Manifests").

The driver checks the DataFrame's schema against the table's (one error listing every
mismatch, before any executor writes), distributes the rows per ``write.distribution-mode``
(:mod:`frazil.spark._distribution`), and runs one Spark job in which every task writes its rows
with frazil's writer (:func:`frazil.table.write.write_data_files`: field ids, metrics, Java's
file layout and names, target file size) and returns its data file records. The driver then
commits them once through a frazil transaction (its retries and validations).

Files never committed are deleted, as Java's ``SparkWrite`` does: a task that fails deletes
what it wrote; every task that succeeded records its files in a journal under
``metadata/spark-write-<job id>/``, from which the driver deletes the files of attempts whose
output Spark discarded (speculative duplicates, retried stages) and, when the job or the commit
fails, every file of the job. A commit whose outcome is unknown keeps the files it may have
committed. A driver killed mid-write leaves files no snapshot references: orphan removal
finds them."""

from __future__ import annotations

import json
import pickle
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import (
    CommitStateUnknownError,
    FrazilError,
    FrazilTypeError,
    SparkJobError,
    ValidationError,
)
from frazil.expressions import Expression
from frazil.io import FileIO
from frazil.spark._journal import JOURNAL, Journal, delete_files, journaled_files
from frazil.spark._pyspark import require
from frazil.spark._schema import spark_arrow_schema
from frazil.spark._tasks import task_threads
from frazil.spark._to_table import batch_to_table
from frazil.spark.reader import resolve_table

if TYPE_CHECKING:
    from frazil.manifest import DataFile
    from frazil.table import Table

__all__ = ["JOURNAL", "WriteJob", "journaled_files", "write"]

MODES = ("append", "overwrite", "dynamic-overwrite")
# The snapshot summary's application id, as Java's SparkWrite records it.
APP_ID = "spark.app.id"


@dataclass(frozen=True)
class WriteJob:
    """What executors need to write: plain data only (the table metadata's JSON, the FileIO's
    properties, the job's id)."""

    metadata_json: str
    io: FileIO
    operation_id: str
    journal: str
    properties: dict[str, str]
    fail_first_attempt: bool = False

    @property
    def spec_id(self) -> int:
        """The partition spec the files are written under: the table's default spec."""
        return int(json.loads(self.metadata_json)["default-spec-id"])

    def write_batches(self, batches: Iterator[pa.RecordBatch]) -> list[DataFile]:
        """In a Spark task: writes Spark's batches as data files of the table (named after
        the task), records them in the job's journal and returns them; on failure deletes
        them."""
        from frazil.metadata import TableMetadata
        from frazil.table.write import write_data_files

        context = require("pyspark").TaskContext.get()
        partition_id = context.partitionId()
        attempt = context.attemptNumber()
        task_id = context.taskAttemptId()
        task_threads()
        metadata = TableMetadata.from_json(self.metadata_json)
        schema = metadata.schema()
        stream = (batch_to_table(b, schema) for b in batches)
        first = next(stream, None)
        if first is None:
            return []
        reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, stream))
        written: list[DataFile] = []
        try:
            for file in write_data_files(
                metadata,
                self.io,
                reader,
                properties=self.properties,
                partition_id=partition_id,
                task_id=task_id,
                operation_id=self.operation_id,
            ):
                written.append(file)
            if self.fail_first_attempt and attempt == 0 and partition_id == 0:
                raise FrazilError("frazil test hook: the first attempt of task 0 fails")
            # Recorded before Spark sees the task's result: the driver deletes what no commit
            # took (a speculative duplicate's files, say) from these journals.
            Journal(self.io, self.journal).record(str(f.file_path) for f in written)
        except BaseException:
            delete_files(self.io, [f.file_path for f in written if f.file_path])
            raise
        return written

    def map_partition(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """mapInArrow's function: writes the task's rows, yields one row per data file."""
        for file in self.write_batches(batches):
            yield pa.RecordBatch.from_pydict(
                {"data_file": [pickle.dumps(file.to_row())]}, schema=RESULT_SCHEMA
            )

    def clean_up(self, reported: set[str | None], committed: bool, unknown: bool) -> None:
        """Deletes the job's files no commit took: after a commit, those of discarded
        attempts; after a failure, all of them; when the outcome is unknown, only files the
        commit cannot hold (never reported to the driver)."""
        Journal(self.io, self.journal).clean_up(reported, committed, unknown)

    @classmethod
    def create(
        cls,
        table: Table,
        options: Mapping[str, str],
        fail_first_attempt: bool = False,
        operation_id: str | None = None,
    ) -> WriteJob:
        """The job writing to ``table`` with write ``options``; ``operation_id`` (default a
        fresh uuid) names its files and its journal."""
        metadata = table.metadata
        operation_id = operation_id or str(uuid.uuid4())
        return cls(
            metadata_json=metadata.to_json(),
            io=table.io,
            operation_id=operation_id,
            journal=f"{metadata.location.rstrip('/')}/{JOURNAL}{operation_id}",
            properties=dict(options),
            fail_first_attempt=fail_first_attempt,
        )


RESULT_SCHEMA = pa.schema([pa.field("data_file", pa.binary(), nullable=False)])


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


def check_schema(df: Any, table: Table, properties: Mapping[str, str]) -> None:
    """The DataFrame's columns fit the table's (by name, types Spark can hold): one
    SchemaMismatchError listing every mismatch, raised before any executor writes."""
    check_schema_of(df.schema, table, properties)


def check_schema_of(schema: Any, table: Table, properties: Mapping[str, str]) -> None:
    """:func:`check_schema` for a Spark StructType."""
    from frazil.table._properties import downcast_ns
    from frazil.table.write import check_arrow_schema

    arrow = spark_arrow_schema(schema)
    empty = pa.RecordBatch.from_arrays([pa.array([], f.type) for f in arrow], schema=arrow)
    converted = batch_to_table(empty, table.schema())
    check_arrow_schema(converted.schema, table.schema(), downcast_ns=downcast_ns(properties))


def write(
    df: Any,
    table: Table | str,
    mode: str = "append",
    overwrite_filter: Expression | str | None = None,
    options: Mapping[str, str] | None = None,
    *,
    snapshot_properties: Mapping[str, str] | None = None,
    _fail_first_attempt: bool = False,
) -> Table:
    """Writes the rows of the Spark DataFrame ``df`` to ``table`` (a frazil Table or
    ``"catalog.namespace.name"``) in one commit, and returns the table after it.

    ``mode``: ``"append"``; ``"overwrite"`` (the rows matching ``overwrite_filter``, default
    every row, are replaced); ``"dynamic-overwrite"`` (every partition ``df`` has rows in is
    replaced, as Spark's dynamic partition overwrite). ``options`` override the table's write
    properties for this write (``write.distribution-mode``, ``write.target-file-size-bytes``,
    ...). ``snapshot_properties`` go into the snapshot summary, beside ``spark.app.id``.
    ``_fail_first_attempt`` is a test hook: task 0's first attempt fails after writing."""
    from frazil.manifest import DataFile
    from frazil.spark._distribution import distribute

    if mode not in MODES:
        raise ValidationError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if overwrite_filter is not None and mode != "overwrite":
        raise ValidationError(f"overwrite_filter is for mode 'overwrite', not {mode!r}")
    options = dict(options or {})
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise FrazilTypeError(f"write options are strings, got {key!r}: {value!r}")
    table = resolve_table(table)
    metadata = table.metadata
    properties = {**metadata.properties, **options}
    check_schema(df, table, properties)
    job = WriteJob.create(table, options, _fail_first_attempt)
    spark = df.sparkSession
    distributed = distribute(df, table, properties)
    files: list[DataFile] = []
    try:
        results = distributed.mapInArrow(job.map_partition, _result_type()).collect()
    except Exception as error:
        job.clean_up(set(), committed=False, unknown=False)
        raise SparkJobError(
            f"the Spark job writing to {'.'.join(table.name())} failed, nothing was "
            f"committed and its files were deleted: {_first_line(error)}"
        ) from error
    files = [DataFile.from_row(pickle.loads(row[0])) for row in results]
    summary = {APP_ID: spark.sparkContext.applicationId, **(snapshot_properties or {})}
    return commit_files(table, job, files, mode, overwrite_filter, summary)


def commit_files(
    table: Table,
    job: WriteJob,
    files: list[DataFile],
    mode: str,
    overwrite_filter: Expression | str | None,
    summary: Mapping[str, str],
) -> Table:
    """One commit of the job's ``files`` to ``table`` per ``mode``; then the job's other
    files are deleted (all of them when the commit failed, none it may hold when its outcome
    is unknown)."""
    from frazil.table.write import WrittenDataFiles

    committed = False
    unknown = False
    try:
        written = WrittenDataFiles(tuple(files), job.spec_id)
        txn = table.transaction()
        if mode == "append":
            txn.append(written, snapshot_properties=summary)
        elif mode == "overwrite":
            txn.overwrite(written, overwrite_filter, snapshot_properties=summary)
        else:
            txn.dynamic_partition_overwrite(written, snapshot_properties=summary)
        table = txn.commit_transaction()
        committed = True
    except CommitStateUnknownError:
        unknown = True
        raise
    finally:
        job.clean_up({f.file_path for f in files}, committed, unknown)
    return table


# A Python exception's last traceback line: "module.Name: message".
ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?(?P<name>[A-Z]\w*(?:Error|Exception)): (?P<msg>.+)$"
)


def _first_line(error: BaseException) -> str:
    """The line of a Spark error that says what went wrong (a Python worker's last line; an
    RDD job's error goes on with the JVM's stack, whose frames name error classes too)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    python = [line for line in lines if ERROR_LINE.match(line)]
    if not python:
        python = [
            line
            for line in lines
            if ("Error" in line or "Exception" in line) and not line.startswith("at ")
        ]
    return (python[-1] if python else lines[0] if lines else type(error).__name__)[:500]


def _result_type() -> Any:
    types = require("pyspark.sql.types")
    return types.StructType([types.StructField("data_file", types.BinaryType(), False)])
