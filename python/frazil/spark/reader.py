"""A table's rows as a Spark DataFrame (spec: "Scan Planning", Appendix C "File Scan Task
Serialization").

The driver plans with frazil's planner (filter pushdown, partition and metrics pruning, the
delete-file index; locally or on executors: :mod:`frazil.spark.planning`) and groups tasks with
``plan_tasks()``. One Spark partition per combined task carries the tasks' Appendix C JSON;
executors turn each back into a task and read it with :func:`frazil.table.read.read_task`
(projection by field id, schema evolution, every kind of delete merged in Rust, the residual
filter applied exactly), then hand Spark the batches in its Arrow form
(:mod:`frazil.spark._schema`). What crosses to executors is plain data: task JSON, schema,
spec and name-mapping JSON, the FileIO's properties."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import FrazilTypeError, ValidationError
from frazil.expressions import Expression
from frazil.io import FileIO
from frazil.spark._pyspark import require
from frazil.spark._schema import conform_batch, spark_arrow_schema, spark_schema
from frazil.spark._tasks import TaskPayload, task_payload, task_payload_type, task_threads

if TYPE_CHECKING:
    from frazil.name_mapping import NameMapping
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.table import Table
    from frazil.table.scan import CombinedScanTask, DataScan

__all__ = ["ReadJob", "read", "resolve_table"]


def resolve_table(table: Any) -> Table:
    """A frazil Table, or ``"catalog.namespace.name"`` (the first part a catalog name for
    :func:`frazil.catalog.load_catalog`, the rest the table identifier)."""
    from frazil.table import Table

    if isinstance(table, Table):
        return table
    if not isinstance(table, str):
        raise FrazilTypeError(
            f"table must be a frazil Table or 'catalog.namespace.name', got {type(table).__name__}"
        )
    catalog_name, _, identifier = table.partition(".")
    if not identifier or "." not in identifier:
        raise ValidationError(
            f"table name {table!r} must be 'catalog.namespace.name' (e.g. 'default.db.events')"
        )
    from frazil.catalog import load_catalog

    return load_catalog(catalog_name).load_table(identifier)


@dataclass(frozen=True)
class ReadJob:
    """What executors need to read a scan's tasks: plain data only."""

    schema_json: str
    projected_json: str
    specs_json: tuple[str, ...]
    schemas_json: tuple[str, ...]
    name_mapping_json: str | None
    io: FileIO
    metadata_columns: tuple[str, ...]
    verify_checksums: bool
    arrow_schema: pa.Schema  # frazil's reader's batches
    target_schema: pa.Schema  # Spark's Arrow form of the same columns
    limit: int | None = None
    # False: every live row of a task's file, its residual filter not applied (a merge reads
    # whole files).
    apply_residual: bool = True
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_scan(cls, scan: DataScan) -> ReadJob:
        from frazil.table import read as local

        table = scan.table
        mapping = table.name_mapping()
        arrow = local.scan_schema(scan)
        if local.uuid_type(scan) != "uuid":
            # Spark holds uuids as text whichever Arrow type the table prefers.
            arrow = local.read_task_schema(
                scan.schema(),
                local.projected_schema(scan),
                local.metadata_columns(scan),
                table.specs(),
            )
        return cls(
            schema_json=json.dumps(scan.schema().to_json()),
            projected_json=json.dumps(local.projected_schema(scan).to_json()),
            specs_json=tuple(json.dumps(s.to_json()) for s in table.specs().values()),
            schemas_json=tuple(
                json.dumps(s.to_json())
                for s in sorted(table.schemas().values(), key=lambda s: -s.schema_id)
            ),
            name_mapping_json=None if mapping is None else mapping.to_json(),
            io=table.io,
            metadata_columns=local.metadata_columns(scan),
            verify_checksums=local.verify_checksums(table.properties, scan.options),
            arrow_schema=arrow,
            target_schema=spark_arrow_schema(spark_schema(arrow)),
            limit=scan.limit,
        )

    @cached_property
    def spark_schema(self) -> Any:
        return spark_schema(self.arrow_schema)

    def _objects(self) -> tuple[Schema, Schema, dict[int, PartitionSpec], list[Schema], Any]:
        from frazil.name_mapping import NameMapping
        from frazil.partitioning import PartitionSpec
        from frazil.schema import Schema

        cached = self._cache.get("objects")
        if cached is None:
            specs = [PartitionSpec.from_json(json.loads(s)) for s in self.specs_json]
            mapping: NameMapping | None = (
                None
                if self.name_mapping_json is None
                else NameMapping.from_json(self.name_mapping_json)
            )
            cached = (
                Schema.from_json(json.loads(self.schema_json)),
                Schema.from_json(json.loads(self.projected_json)),
                {s.spec_id: s for s in specs},
                [Schema.from_json(json.loads(s)) for s in self.schemas_json],
                mapping,
            )
            self._cache["objects"] = cached
        return cached

    def read_tasks(
        self, tasks: Sequence[TaskPayload | Mapping[str, Any]]
    ) -> Iterator[pa.RecordBatch]:
        """The rows of the tasks (:func:`~frazil.spark._tasks.task_payload`), in Spark's Arrow
        form; files read in parallel (at most :func:`task_threads` at once) and handed out in
        order."""
        from frazil.spark._tasks import task_from_payload
        from frazil.table._stream import ordered_parallel
        from frazil.table.read import BATCHES_AHEAD, READ_AHEAD_BYTES, read_task

        schema, projected, specs, schemas, mapping = self._objects()
        read = partial(
            read_task,
            table_schema=schema,
            projected_schema=projected,
            specs=specs,
            io=self.io,
            name_mapping=mapping,
            schemas=schemas,
            metadata_columns=self.metadata_columns,
            verify_checksums=self.verify_checksums,
            apply_residual=self.apply_residual,
        )
        sources = (partial(read, task_from_payload(task)) for task in tasks)
        stream = ordered_parallel(
            sources, task_threads(), BATCHES_AHEAD, READ_AHEAD_BYTES, lambda b: b.nbytes
        )
        for batch in stream:
            if batch.num_rows:
                yield conform_batch(batch, self.target_schema)

    def map_partition(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """mapInArrow's function: each input row holds one combined task's tasks."""
        for batch in batches:
            for tasks in batch.column(0).to_pylist():
                yield from self.read_tasks(tasks)


def _scan(
    table: Table,
    row_filter: Expression | str | None,
    columns: Sequence[str] | None,
    snapshot_id: int | None,
    ref: str | None,
    as_of: int | dt.datetime | None,
    options: Mapping[str, Any] | None,
) -> DataScan:
    if isinstance(columns, str):
        raise FrazilTypeError("columns takes a list of column names, not one string")
    return table.scan(
        row_filter=row_filter,
        selected_fields=("*",) if columns is None else tuple(columns),
        snapshot_id=snapshot_id,
        options=options,
        ref=ref,
        as_of=as_of,
    )


def plan(spark: Any, scan: DataScan) -> list[CombinedScanTask]:
    """The scan's combined tasks, planned locally or on executors
    (``read.data-planning-mode``: :mod:`frazil.spark.planning`)."""
    from frazil.spark.planning import plan_tasks

    return list(plan_tasks(spark, scan))


def read(
    spark: Any,
    table: Table | str,
    row_filter: Expression | str | None = None,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of: int | dt.datetime | None = None,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """The rows of ``table`` (a frazil Table or ``"catalog.namespace.name"``) as a Spark
    DataFrame: ``row_filter`` (a frazil expression or its text form) applied exactly,
    ``columns`` (default all; metadata columns ``_file``, ``_pos``, ``_spec_id``,
    ``_partition``, ``_deleted`` on request), at most one of ``snapshot_id``, ``ref`` and
    ``as_of`` for time travel, ``options`` as the scan's (``read.split.target-size``, ...).
    Planned on the driver when called; read by executors when Spark runs the DataFrame."""
    scan = _scan(resolve_table(table), row_filter, columns, snapshot_id, ref, as_of, options)
    job = ReadJob.from_scan(scan)
    groups = plan(spark, scan)
    return dataframe(spark, job, [[task_payload(t) for t in g.tasks] for g in groups])


def dataframe(spark: Any, job: ReadJob, groups: list[list[TaskPayload]]) -> Any:
    """The DataFrame reading ``groups`` (each a combined task's tasks, as
    :func:`~frazil.spark._tasks.task_payload` gives them) with ``job``: one Spark partition per
    group."""
    types = require("pyspark.sql.types")
    if not groups:
        return spark.createDataFrame([], job.spark_schema)
    task_schema = types.StructType(
        [types.StructField("tasks", types.ArrayType(task_payload_type(), False), False)]
    )
    rows = spark.sparkContext.parallelize([(g,) for g in groups], len(groups))
    tasks = spark.createDataFrame(rows, task_schema)
    frame = tasks.mapInArrow(job.map_partition, job.spark_schema)
    if job.limit is not None:
        frame = frame.limit(job.limit)
    return frame
