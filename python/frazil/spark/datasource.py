"""The Python Data Source ``frazil`` (Spark 4.x): ``spark.read.format("frazil")``,
``df.write.format("frazil")`` and ``df.writeStream.format("frazil")``.

Registered by :func:`register` or found by Spark itself through the top-level module
``pyspark_frazil`` (Spark 4 imports every ``pyspark_*`` module with a ``DefaultSource`` on its
first data source lookup). The table is the load/save path: ``"namespace.name"`` in the catalog
named by option ``catalog`` (default ``"default"``; catalogs come from
:func:`frazil.catalog.load_catalog`: the configuration file and ``FRAZIL_CATALOG__*``
variables, which reach Spark's Python workers), or a metadata file location (read only).

Read options: ``snapshot-id``, ``ref``, ``as-of-timestamp`` (ms), ``columns`` (comma
separated: Spark passes Python sources no column pruning), ``filter`` (frazil's text form), and
any scan option (``read.split.target-size``...). With ``spark.sql.python.filterPushdown.enabled``
on, Spark's filters that frazil applies exactly (comparisons, IN, IS [NOT] NULL, starts-with,
with no null or NaN value) are accepted and applied as part of the scan's filter; the rest are
handed back to Spark. Planning runs in the driver's Python worker (``partitions()``): each
partition carries its tasks' Appendix C JSON and what executors need to read them.

Writes: mode ``append``, or ``overwrite`` (every row of the table replaced, as Spark means it;
option ``overwrite-filter`` limits it to the rows matching a filter). Options ``write.*``
override the table's write properties for the write; ``snapshot-property.<key>`` options go
into the snapshot summary as ``<key>``. Each task writes its rows
with frazil's writer and returns the data file records; ``commit()`` makes the one Iceberg
commit; ``abort()`` deletes the attempt's files. A commit whose outcome is unknown deletes
nothing it may hold. A Python source gets the DataFrame's partitioning as it is: repartition
before writing for fewer files (:func:`frazil.spark.add_partition_columns`).

Streaming: each micro-batch is one commit whose snapshot summary records the query
(``spark.sql.streaming.queryId``: option ``query-id``, else derived from option
``checkpointLocation``) and the batch (``spark.sql.streaming.epochId``), as Java's streaming
writes do; a batch replayed after a restart from the checkpoint whose commit already happened is
skipped, not appended twice."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import FrazilError, ValidationError
from frazil.spark._pyspark import require

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.spark.reader import ReadJob
    from frazil.spark.writer import WriteJob
    from frazil.table import Table

_datasource = require("pyspark.sql.datasource")

QUERY_ID = "spark.sql.streaming.queryId"
EPOCH_ID = "spark.sql.streaming.epochId"
APP_ID = "spark.app.id"
_READ_OPTIONS = ("catalog", "path", "snapshot-id", "ref", "as-of-timestamp", "columns", "filter")


def register(spark: Any) -> None:
    """Registers the data source ``frazil`` in ``spark`` (Spark 4.x)."""
    spark.dataSource.register(FrazilDataSource)


def _table(options: Mapping[str, str]) -> Table:
    path = options.get("path")
    if not path:
        raise ValidationError(
            "the frazil data source needs a table: load('namespace.name') or save(...) with "
            "option('catalog', ...), or a metadata file location"
        )
    if path.endswith(".metadata.json"):
        from frazil.table import StaticTable

        return StaticTable.from_metadata(path)
    from frazil.catalog import load_catalog

    return load_catalog(options.get("catalog", "default")).load_table(path)


def _int_option(options: Mapping[str, str], name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValidationError(f"option {name!r} must be an integer, got {value!r}") from None


def _scan(table: Table, options: Mapping[str, str], extra: Expression | None = None) -> Any:
    from frazil import expressions as ex

    columns = options.get("columns")
    selected = ("*",) if not columns else tuple(c.strip() for c in columns.split(","))
    row_filter: Any = options.get("filter")
    if extra is not None:
        if row_filter is None:
            row_filter = extra
        else:
            from frazil.expressions.parser import parse

            row_filter = ex.And(parse(row_filter), extra)
    scan_options = {k: v for k, v in options.items() if k not in _READ_OPTIONS}
    return table.scan(
        row_filter=row_filter,
        selected_fields=selected,
        snapshot_id=_int_option(options, "snapshot-id"),
        ref=options.get("ref"),
        as_of=_int_option(options, "as-of-timestamp"),
        options=scan_options,
    )


# --- reads -------------------------------------------------------------------------------------


@dataclass
class TaskGroup(_datasource.InputPartition):  # type: ignore[misc,name-defined]
    """One Spark partition: a combined task's tasks (their JSON and sequence numbers:
    :func:`~frazil.spark._tasks.task_payload`) and the read job (plain data)."""

    job: ReadJob
    tasks: list[tuple[str, int | None, int | None]]


def _filter_expression(spark_filter: Any) -> Expression | None:
    """A Spark filter frazil applies exactly (its residual), or None to hand it back."""
    from frazil import expressions as ex

    name = type(spark_filter).__name__
    attribute = getattr(spark_filter, "attribute", None)
    if attribute is None:
        return None
    column = ".".join(attribute)

    def plain(value: Any) -> bool:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return isinstance(value, (bool, int, float, str, bytes, dt.date, dt.datetime))

    value = getattr(spark_filter, "value", None)
    term = ex.col(column)
    if name == "EqualTo" and plain(value):
        return term == value
    if name == "GreaterThan" and plain(value):
        return term > value
    if name == "GreaterThanOrEqual" and plain(value):
        return term >= value
    if name == "LessThan" and plain(value):
        return term < value
    if name == "LessThanOrEqual" and plain(value):
        return term <= value
    if name == "In" and value and all(plain(v) for v in value):
        return term.isin(list(value))
    if name == "IsNull":
        return term.is_null()
    if name == "IsNotNull":
        return term.not_null()
    if name == "StringStartsWith" and isinstance(value, str):
        return term.starts_with(value)
    return None


class _PushFilters:
    """The reader's ``pushFilters``, in a form Spark 4.3 accepts with pushdown on and off.

    Spark calls ``pushFilters`` only while ``spark.sql.python.filterPushdown.enabled`` is on,
    and refuses to plan a reader that overrides it while it is off (it compares the method's
    ``__func__`` with the base class's). A reader cannot see that setting, so this callable
    carries the base method as its ``__func__``: with pushdown off Spark treats the reader as
    one without pushdown (Spark filters every row itself); with it on Spark calls it, and the
    filters frazil applies exactly are taken."""

    def __init__(self, reader: FrazilReader) -> None:
        self.reader = reader
        # An instance attribute: a function stored on the class would be bound.
        self.__func__ = _datasource.DataSourceReader.pushFilters

    def __call__(self, filters: Sequence[Any]) -> Iterator[Any]:
        return self.reader.push_filters(filters)


class FrazilReader(_datasource.DataSourceReader):  # type: ignore[misc,name-defined]
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.pushed: list[Expression] = []
        self.pushFilters = _PushFilters(self)

    def push_filters(self, filters: Sequence[Any]) -> Iterator[Any]:
        """Accepts the filters frazil applies exactly (they become part of the scan's filter,
        pruning files and applied to every row) and hands the others back to Spark."""
        from frazil.expressions import bind

        table = _table(self.options)
        schema = table.scan(**_time_travel(self.options)).schema()
        for spark_filter in filters:
            expression = _filter_expression(spark_filter)
            if expression is not None:
                try:
                    bind(expression, schema)
                except FrazilError:
                    expression = None
            if expression is None:
                yield spark_filter
            else:
                self.pushed.append(expression)

    def partitions(self) -> Sequence[TaskGroup]:
        from frazil import expressions as ex
        from frazil.spark._tasks import task_payload
        from frazil.spark.reader import ReadJob

        extra = None
        for expression in self.pushed:
            extra = expression if extra is None else ex.And(extra, expression)
        scan = _scan(_table(self.options), self.options, extra)
        job = ReadJob.from_scan(scan)
        groups = [TaskGroup(job, [task_payload(t) for t in g.tasks]) for g in scan.plan_tasks()]
        return groups

    def read(self, partition: TaskGroup) -> Iterator[pa.RecordBatch]:
        yield from partition.job.read_tasks(partition.tasks)


def _time_travel(options: Mapping[str, str]) -> dict[str, Any]:
    return {
        "snapshot_id": _int_option(options, "snapshot-id"),
        "ref": options.get("ref"),
        "as_of": _int_option(options, "as-of-timestamp"),
    }


# --- writes ------------------------------------------------------------------------------------


@dataclass
class FilesWritten(_datasource.WriterCommitMessage):  # type: ignore[misc,name-defined]
    """A task's commit message: its data file records (plain data)."""

    rows: list[dict[str, Any]]


class FrazilWriter(_datasource.DataSourceArrowWriter):  # type: ignore[misc,name-defined]
    def __init__(self, options: Mapping[str, str], schema: Any, overwrite: bool) -> None:
        from frazil.spark.writer import WriteJob, check_schema_of

        self.options = dict(options)
        table = _table(self.options)
        self.overwrite = overwrite
        self.write_options = {k: v for k, v in self.options.items() if k.startswith("write.")}
        properties = {**table.properties, **self.write_options}
        check_schema_of(schema, table, properties)
        self.job: WriteJob = WriteJob.create(table, self.write_options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        return FilesWritten([f.to_row() for f in self.job.write_batches(iterator)])

    def _files(self, messages: Sequence[Any]) -> list[Any]:
        from frazil.manifest import DataFile

        return [DataFile.from_row(r) for m in messages if m is not None for r in m.rows]

    def commit(self, messages: Sequence[Any]) -> None:
        from frazil.spark.writer import commit_files

        mode = "overwrite" if self.overwrite else "append"
        commit_files(
            _table(self.options),
            self.job,
            self._files(messages),
            mode,
            self.options.get("overwrite-filter"),
            _summary(self.options),
        )

    def abort(self, messages: Sequence[Any]) -> None:
        reported = {f.file_path for f in self._files(messages)}
        self.job.clean_up(reported, committed=False, unknown=False)


def _summary(options: Mapping[str, str]) -> dict[str, str]:
    return {
        k.removeprefix("snapshot-property."): v
        for k, v in options.items()
        if k.startswith("snapshot-property.")
    }


def _query_id(options: Mapping[str, str]) -> str:
    query = options.get("query-id")
    if query:
        return query
    checkpoint = options.get("checkpointLocation") or options.get("checkpointlocation")
    if not checkpoint:
        raise ValidationError(
            "a streaming write to frazil needs option('checkpointLocation', ...) or "
            "option('query-id', ...): the query's identity recorded in each snapshot lets a "
            "batch replayed after a restart be recognised and skipped"
        )
    return str(uuid.uuid5(uuid.NAMESPACE_URL, checkpoint.rstrip("/")))


class FrazilStreamWriter(_datasource.DataSourceStreamArrowWriter):  # type: ignore[misc,name-defined]
    def __init__(self, options: Mapping[str, str], schema: Any, overwrite: bool) -> None:
        from frazil.spark.writer import check_schema_of

        if overwrite:
            raise ValidationError(
                "the frazil streaming sink appends (outputMode 'append'); complete mode would "
                "replace the table at every batch"
            )
        self.options = dict(options)
        self.query_id = _query_id(self.options)
        table = _table(self.options)
        self.write_options = {k: v for k, v in self.options.items() if k.startswith("write.")}
        check_schema_of(schema, table, {**table.properties, **self.write_options})

    def _job(self, batch_id: int) -> WriteJob:
        from frazil.spark.writer import WriteJob

        # One job per micro-batch, named after the query and the batch, so every attempt of a
        # batch shares its journal (and the driver cleans what the commit did not take).
        operation = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.query_id}/{batch_id}"))
        return WriteJob.create(_table(self.options), self.write_options, operation_id=operation)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        context = require("pyspark").TaskContext.get()
        batch_id = int(context.getLocalProperty("streaming.sql.batchId") or -1)
        job = self._job(batch_id)
        return FilesWritten([f.to_row() for f in job.write_batches(iterator)])

    def commit(self, messages: Sequence[Any], batchId: int) -> None:
        from frazil.manifest import DataFile
        from frazil.spark.writer import commit_files

        table = _table(self.options)
        job = self._job(batchId)
        files = [DataFile.from_row(r) for m in messages if m is not None for r in m.rows]
        if _committed_already(table, self.query_id, batchId):
            # A replayed batch: its rows are in the table; these files are duplicates.
            job.clean_up(set(), committed=False, unknown=False)
            return
        summary = {**_summary(self.options), QUERY_ID: self.query_id, EPOCH_ID: str(batchId)}
        commit_files(table, job, files, "append", None, summary)

    def abort(self, messages: Sequence[Any], batchId: int) -> None:
        self._job(batchId).clean_up(set(), committed=False, unknown=False)


def _committed_already(table: Table, query_id: str, batch_id: int) -> bool:
    """Whether the current branch holds a commit of this query for this batch or a later one
    (Java's streaming writes check the same summary properties)."""
    snapshot = table.current_snapshot()
    snapshots = {s.snapshot_id: s for s in table.snapshots()}
    while snapshot is not None:
        summary = snapshot.summary or {}
        if summary.get(QUERY_ID) == query_id:
            epoch = summary.get(EPOCH_ID)
            return epoch is not None and int(epoch) >= batch_id
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else snapshots.get(parent)
    return False


class FrazilDataSource(_datasource.DataSource):  # type: ignore[misc,name-defined]
    """``format("frazil")``: frazil tables through Spark 4's Python Data Source API."""

    @classmethod
    def name(cls) -> str:
        return "frazil"

    def schema(self) -> Any:
        from frazil.spark._schema import spark_schema
        from frazil.table import read as local

        scan = _scan(_table(self.options), self.options)
        arrow = local.read_task_schema(
            scan.schema(),
            local.projected_schema(scan),
            local.metadata_columns(scan),
            scan.table.specs(),
        )
        return spark_schema(arrow)

    def reader(self, schema: Any) -> FrazilReader:
        return FrazilReader(self.options)

    def writer(self, schema: Any, overwrite: bool) -> FrazilWriter:
        return FrazilWriter(self.options, schema, overwrite)

    def streamWriter(self, schema: Any, overwrite: bool) -> FrazilStreamWriter:
        return FrazilStreamWriter(self.options, schema, overwrite)
