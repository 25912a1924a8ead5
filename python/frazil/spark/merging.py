"""``MERGE`` of a Spark DataFrame into a table (Spark's ``MERGE INTO``; spec: "Row-level
Deletes", "Row Lineage"), with the clauses and results of the local merge
(:mod:`frazil.table.row_level.merge`) and one commit on the driver.

The driver binds the clauses (:class:`~frazil.table.row_level._merge_clauses.MergeClauses`,
errors before any job runs), computes what pruning needs of the source's keys (their range and
partitions: one small job, skipped when a clause handles unmatched table rows) and plans the
candidate files exactly as the local merge does. Spark then reads those files' live rows with
``_file``, ``_pos`` (and ``_row_id``, ``_last_updated_sequence_number`` on v3) through frazil's
reader (:mod:`frazil.spark.reader`, every delete applied), joins them with the source on the
keys (``inner``, ``left``, ``right`` or ``full``: table rows are kept when copy-on-write rewrites
their files or a not-matched-by-source clause may delete them, source rows when a clause may
insert them), and repartitions by ``_file``, sorted by ``_pos``, so that every row of a target
file is in one task, in order. Each task applies the clauses with the local merge's code
(:meth:`MergeClauses.apply`, :meth:`MergeClauses.inserts`) and writes what changes with the
local change set (:class:`~frazil.table.row_level._changes.ChangeSet`): per
``write.merge.mode``, copy-on-write rewrites of its files, or position delete files (v2) or
deletion vectors merged with each file's existing deletes (v3, from the file's scan task JSON);
the new versions of updated rows and the inserts as new data files. It returns the files'
records and each clause's count; the driver stages them all in one ``ChangeSet`` and commits
once, with Java's validations and the lineage rules of the local merge.

A source key matching a table row twice (two source rows with its key), or inserted twice, is
an error naming it. Source rows whose key is null match nothing (they are inserted). Files no
commit takes are deleted (:mod:`frazil.spark._journal`); an unknown commit outcome keeps them.

Tables with ``timestamp_ns`` columns are refused: Spark holds microseconds, and the rows a
merge rewrites would lose their nanoseconds (use the local ``table.merge``).
"""

from __future__ import annotations

import functools
import itertools
import pickle
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import errors
from frazil.errors import CommitStateUnknownError, SparkJobError, ValidationError
from frazil.io import FileIO
from frazil.spark._journal import Journal
from frazil.spark._pyspark import require
from frazil.spark._tasks import TaskPayload, task_payload
from frazil.table import _metadata_columns as meta
from frazil.table.row_level._merge_clauses import Clause, KeyStats, MergeClauses, clause_counts
from frazil.table.row_level.merge import MERGE_MODE, MergeClauseBuilder, MergeResult

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata
    from frazil.schema import Schema
    from frazil.table import Table

__all__ = ["MergeJob", "SparkMergeBuilder", "merge"]

# Column names of the joined rows (the user's columns are renamed t<i> and s<i>).
FILE = "__file"
POS = "__pos"
ROW_ID = "__row_id"
SEQ = "__seq"
MATCHED = "__src"
PART = "__part"
RESULT = "result"
_LINEAGE = {meta.ROW_ID: ROW_ID, meta.LAST_UPDATED_SEQUENCE_NUMBER: SEQ}


def merge(
    spark: Any,
    table: Table | str,
    source: Any,
    on: str | Sequence[str],
    *,
    case_sensitive: bool = True,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> SparkMergeBuilder:
    """A ``MERGE`` of the Spark DataFrame ``source`` into ``table`` (a frazil Table or
    ``"catalog.namespace.name"``) on the key columns ``on``: add the clauses of
    :meth:`frazil.table.Table.merge` (``when_matched_update``, ``when_matched_delete``,
    ``when_not_matched_insert``, ``when_not_matched_by_source_delete``), then ``execute()`` for
    the same :class:`~frazil.table.row_level.merge.MergeResult`."""
    return SparkMergeBuilder(
        spark,
        table,
        source,
        on,
        case_sensitive=case_sensitive,
        branch=branch,
        snapshot_properties=snapshot_properties,
    )


class SparkMergeBuilder(MergeClauseBuilder):
    """:func:`merge`'s builder: the local merge's clause methods; :meth:`execute` runs it on
    Spark."""

    def __init__(
        self,
        spark: Any,
        table: Table | str,
        source: Any,
        on: str | Sequence[str],
        *,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        from frazil.spark.reader import resolve_table

        require("pyspark")
        if not hasattr(source, "schema") or not hasattr(source, "mapInArrow"):
            raise errors.FrazilTypeError(
                f"the merge source must be a Spark DataFrame, got {type(source).__name__} "
                "(use table.merge for Arrow data)"
            )
        self._spark = spark
        self._table = resolve_table(table)
        self._source_df = source
        super().__init__(
            on,
            case_sensitive=case_sensitive,
            branch=branch,
            snapshot_properties=snapshot_properties,
        )

    def execute(self) -> MergeResult:
        """Run the merge on Spark and commit it once."""
        self._start()
        return _SparkMerge(self).run()


@dataclass(frozen=True)
class MergeSpec:
    """The merge as executors rebuild it: plain data only."""

    metadata_json: str
    source_schema: pa.Schema  # the source's columns as the table's writer takes them
    on: tuple[str, ...]
    clauses: tuple[Clause, ...]
    case_sensitive: bool
    mode: str

    def key_stats_partition(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """mapInArrow's function over the source's key columns: one row, the pickled
        :class:`KeyStats` of the task's keys."""
        from frazil.spark._tasks import task_threads

        task_threads()
        metadata, clauses = self.bind()
        stats: KeyStats | None = None
        for batch in batches:
            if not batch.num_rows:
                continue
            rows = _source_rows(
                batch.columns, batch.schema.names, metadata.schema(), self.source_schema
            )
            piece = clauses.key_stats(clauses.key_arrays(rows))
            stats = piece if stats is None else stats.merge(piece)
        if stats is not None:
            yield pa.RecordBatch.from_pydict({RESULT: [pickle.dumps(stats)]}, schema=_RESULT)

    def bind(self) -> tuple[TableMetadata, MergeClauses]:
        from frazil.metadata import TableMetadata

        metadata = TableMetadata.from_json(self.metadata_json)
        clauses = MergeClauses(
            metadata,
            self.source_schema,
            self.on,
            self.clauses,
            case_sensitive=self.case_sensitive,
            mode=self.mode,
        )
        return metadata, clauses


def _source_rows(
    columns: Sequence[pa.Array], names: Sequence[str], schema: Schema, source_schema: pa.Schema
) -> pa.Table:
    """Source columns in Spark's Arrow form as the merge's source schema has them (a column
    named like a table column in the writer's form: uuid text as 16 bytes, ...)."""
    from frazil.spark._to_table import batch_to_table

    batch = pa.RecordBatch.from_arrays(list(columns), names=list(names))
    converted = batch_to_table(batch, schema)
    wanted = pa.schema([source_schema.field(n) for n in names])
    return pa.Table.from_batches([converted]).cast(wanted)


_RESULT = pa.schema([pa.field(RESULT, pa.binary(), nullable=False)])


@dataclass(frozen=True)
class MergeJob:
    """What executors need to apply a merge's clauses to joined rows: plain data only (the
    merge, the table's FileIO, the scan task of each candidate file for merge-on-read)."""

    spec: MergeSpec
    io: FileIO
    source_names: tuple[str, ...]  # the source's columns, s<i>
    tasks: Mapping[str, TaskPayload]
    journal: Journal

    def map_partition(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """mapInArrow's function: the task's rows (sorted by ``__part``, ``__pos``) in runs
        of one target file each, or of source rows no table row matched; yields one row, the
        pickled clause counts and written files."""
        from frazil.spark._tasks import task_threads
        from frazil.table.row_level._changes import ChangeSet

        task_threads()
        context = require("pyspark").TaskContext.get()
        ids = {"partition_id": context.partitionId(), "task_id": context.taskAttemptId()}
        metadata, clauses = self.spec.bind()
        changes = ChangeSet(metadata, self.io, self.spec.mode)
        counts = [0] * len(clauses.clauses)
        inserts: list[pa.Table] = []
        try:
            for run in _runs(batches):
                if run.column(FILE)[0].is_valid:
                    self._one_file(metadata, clauses, changes, run, counts, ids)
                else:
                    inserts.append(self._source(metadata, run))
            if inserts:
                source = pa.concat_tables(inserts)
                _refuse_duplicates(clauses, source)
                tables, inserted = clauses.inserts(source)
                counts = [a + b for a, b in zip(counts, inserted, strict=True)]
                for table in tables:
                    changes.insert(table)
            written = changes.write(**ids)
            if written.paths():
                self.journal.record(written.paths())
        except BaseException:
            changes.discard()
            raise
        if any(counts) or written.paths():
            outcome = pickle.dumps((counts, written.to_plain()))
            yield pa.RecordBatch.from_pydict({RESULT: [outcome]}, schema=_RESULT)

    def _source(self, metadata: TableMetadata, run: pa.RecordBatch) -> pa.Table:
        columns = [run.column(f"s{i}") for i in range(len(self.source_names))]
        return _source_rows(columns, self.source_names, metadata.schema(), self.spec.source_schema)

    def _one_file(
        self,
        metadata: TableMetadata,
        clauses: MergeClauses,
        changes: Any,
        run: pa.RecordBatch,
        counts: list[int],
        ids: Mapping[str, int],
    ) -> None:
        from frazil.spark._tasks import task_from_payload
        from frazil.spark._to_table import batch_to_table

        path = str(run.column(FILE)[0].as_py())
        positions = run.column(POS)
        if len(positions) > 1:
            repeated = pc.equal(positions.slice(1), positions.slice(0, len(positions) - 1))
            if repeated.true_count:
                row = pc.index(repeated, True).as_py()
                source = self._source(metadata, run.slice(row, 1))
                raise _duplicate(clauses, source, 0)
        names = clauses.names
        target = pa.RecordBatch.from_arrays(
            [run.column(f"t{i}") for i in range(len(names))], names=names
        )
        target = batch_to_table(target, metadata.schema())
        arrays = [
            _as_type(target.column(i), clauses.arrow.field(n).type) for i, n in enumerate(names)
        ]
        fields = [clauses.arrow.field(n) for n in names]
        arrays.append(positions.cast(pa.int64()))
        fields.append(pa.field(meta.POS, pa.int64(), False))
        for name in clauses.lineage:
            arrays.append(run.column(_LINEAGE[name]).cast(pa.int64()))
            fields.append(clauses.arrow.field(name))
        batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
        matched = pc.indices_nonzero(pc.fill_null(run.column(MATCHED), False))
        source = self._source(metadata, run.take(matched))
        out = clauses.apply(batch, matched, source)
        for i, count in enumerate(out.counts):
            counts[i] += count
        if not out.changed:
            return
        if clauses.merge_on_read:
            task = task_from_payload(self.tasks[path])
            if out.removed is not None:
                changes.remove(task, out.removed)
            for rows, row_ids in out.new:
                changes.insert(rows, row_ids)
        else:
            assert out.rows is not None
            changes.rewrite(path, [out.rows], **ids)


def _as_type(values: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """A converted column in the reader's type for it (nested field names, uuid storage)."""
    target = arrow_type.storage_type if isinstance(arrow_type, pa.BaseExtensionType) else arrow_type
    return values if values.type == target else values.cast(target)


def _runs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The rows in runs of equal ``__part`` (sorted so by Spark), each as one batch."""
    pending: list[pa.RecordBatch] = []
    current: Any = None
    for batch in batches:
        if not batch.num_rows:
            continue
        parts = batch.column(PART)
        starts = [0]
        if len(parts) > 1:
            changes = pc.not_equal(parts.slice(1), parts.slice(0, len(parts) - 1))
            starts += [int(i) + 1 for i in pc.indices_nonzero(changes).to_pylist()]
        bounds = [*starts, batch.num_rows]
        for start, end in itertools.pairwise(bounds):
            piece = batch.slice(start, end - start)
            part = parts[start].as_py()
            if pending and part != current:
                yield _one(pending)
                pending = []
            current = part
            pending.append(piece)
    if pending:
        yield _one(pending)


def _one(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches).combine_chunks()
    return table.to_batches(max_chunksize=table.num_rows)[0]


def _duplicate(clauses: MergeClauses, source: pa.Table, row: int) -> ValidationError:
    keys = clauses.key_arrays(source)
    shown = ", ".join(
        f"{name}={values[row].as_py()!r}" for name, values in zip(clauses.keys, keys, strict=True)
    )
    return ValidationError(
        f"duplicate key in the merge source: ({shown}) is the key of more than one source row "
        "(the keys of the rows to merge must be unique)"
    )


def _refuse_duplicates(clauses: MergeClauses, source: pa.Table) -> None:
    """Source rows to insert (of one task: a key's rows are all in one task) must not repeat a
    non-null key."""
    keys = clauses.key_arrays(source)
    names = [f"k{i}" for i in range(len(keys))]
    table = pa.table(dict(zip(names, keys, strict=True)))
    valid = functools.reduce(pc.and_, [k.is_valid() for k in keys])
    if valid.true_count < 2:
        return
    table = table.append_column("row", pa.array(range(len(table)), pa.int64())).filter(valid)
    grouped = table.group_by(names).aggregate([("row", "count"), ("row", "min")])
    repeated = grouped.filter(pc.greater(grouped.column("row_count"), 1))
    if repeated.num_rows:
        raise _duplicate(clauses, source, int(repeated.column("row_min")[0].as_py()))


def _unsupported_columns(schema: Schema) -> list[str]:
    """Columns holding a type a merge through Spark would change (nanosecond timestamps)."""
    from frazil import types as t

    found = []

    def walk(name: str, field_type: Any) -> None:
        if isinstance(field_type, (t.TimestampNanoType, t.TimestamptzNanoType)):
            found.append(f"{name} ({field_type})")
        elif isinstance(field_type, t.StructType):
            for f in field_type.fields:
                walk(f"{name}.{f.name}", f.field_type)
        elif isinstance(field_type, t.ListType):
            walk(f"{name}.element", field_type.element_type)
        elif isinstance(field_type, t.MapType):
            walk(f"{name}.key", field_type.key_type)
            walk(f"{name}.value", field_type.value_type)

    for f in schema.fields:
        walk(f.name, f.field_type)
    return found


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _job_error(error: BaseException, what: str) -> Exception:
    """A failed Spark job as an error: a frazil error a Python worker raised (a duplicate key,
    a value that cannot be cast) as that error, else :class:`SparkJobError`."""
    from frazil.spark.writer import ERROR_LINE, _first_line

    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in reversed(lines):
        found = ERROR_LINE.match(line)
        cls = None if found is None else getattr(errors, found.group("name"), None)
        if found is not None and isinstance(cls, type) and issubclass(cls, errors.FrazilError):
            try:
                raised: Exception = cls(found.group("msg"))
            except Exception:
                break
            return raised
    return SparkJobError(f"{what} failed, nothing was committed: {_first_line(error)}")


class _SparkMerge:
    """One execution of a :class:`SparkMergeBuilder`."""

    def __init__(self, builder: SparkMergeBuilder) -> None:
        from frazil.spark._schema import spark_arrow_schema
        from frazil.spark._to_table import batch_to_table
        from frazil.table.row_level._changes import mode_of

        self.builder = builder
        self.spark = builder._spark
        self.table = builder._table
        self.txn = self.table.transaction()
        self.metadata = metadata = self.txn.staged_metadata
        self.io = self.table.io
        schema = metadata.schema()
        unsupported = _unsupported_columns(schema)
        if unsupported:
            raise ValidationError(
                "frazil.spark.merge: Spark holds timestamps in microseconds, and the rows a "
                f"merge rewrites would lose the nanoseconds of {', '.join(unsupported)}; merge "
                "this table with table.merge"
            )
        self.mode = mode_of(metadata, MERGE_MODE)
        source_df = builder._source_df
        self.source_names = tuple(source_df.columns)
        arrow = spark_arrow_schema(source_df.schema)
        empty = pa.RecordBatch.from_arrays([pa.array([], f.type) for f in arrow], schema=arrow)
        source_schema = batch_to_table(empty, schema).schema
        self.spec = MergeSpec(
            metadata_json=metadata.to_json(),
            source_schema=source_schema,
            on=tuple(builder._on),
            clauses=tuple(c.portable() for c in builder._clauses),
            case_sensitive=builder._case_sensitive,
            mode=self.mode,
        )
        # Bound here first: a bad clause is refused before any job runs.
        self.clauses = MergeClauses(
            metadata,
            source_schema,
            builder._on,
            builder._clauses,
            case_sensitive=builder._case_sensitive,
            mode=self.mode,
        )

    def _key_stats(self) -> KeyStats:
        """The source keys' stats (one job over the key columns)."""
        clauses = self.clauses
        empty = pa.table(
            {
                n: pa.array([], f.type)
                for n, f in zip(self.spec.source_schema.names, self.spec.source_schema, strict=True)
            }
        )
        stats = clauses.key_stats(clauses.key_arrays(empty))
        keys = self.builder._source_df.select(*[_quoted(k) for k in clauses.source_keys])
        try:
            rows = keys.mapInArrow(self.spec.key_stats_partition, _result_type()).collect()
        except Exception as error:
            raise _job_error(error, "the Spark job reading the merge source's keys") from error
        for row in rows:
            stats = stats.merge(pickle.loads(row[0]))
        return stats

    def _target(self, tasks: list[Any]) -> Any:
        """The candidate files' live rows with their positions (and lineage) as a DataFrame of
        ``t<i>``, ``__file``, ``__pos`` (``__row_id``, ``__seq``) columns."""
        from frazil.snapshots import MAIN_BRANCH
        from frazil.spark.reader import ReadJob, dataframe
        from frazil.table import Table
        from frazil.table.scan import DataScan
        from frazil.table.snapshot._files import latest_snapshot

        f = require("pyspark.sql.functions")
        head = latest_snapshot(self.metadata, self.builder._branch or MAIN_BRANCH)
        scan = DataScan(
            Table(self.metadata, io=self.io),
            selected_fields=("*", meta.FILE, meta.POS, *self.clauses.lineage),
            snapshot_id=None if head is None else head.snapshot_id,
            _table_schema=True,
        )
        job = replace(ReadJob.from_scan(scan), apply_residual=False)
        frame = dataframe(self.spark, job, [[task_payload(t)] for t in tasks])
        columns = [f.col(_quoted(n)).alias(f"t{i}") for i, n in enumerate(self.clauses.names)]
        columns += [f.col(meta.FILE).alias(FILE), f.col(meta.POS).alias(POS)]
        columns += [f.col(n).alias(_LINEAGE[n]) for n in self.clauses.lineage]
        return frame.select(*columns), job.spark_schema

    def _joined(self, tasks: list[Any]) -> Any:
        f = require("pyspark.sql.functions")
        clauses = self.clauses
        target, target_schema = self._target(tasks)
        source = self.builder._source_df.select(
            *[f.col(_quoted(n)).alias(f"s{i}") for i, n in enumerate(self.source_names)],
            f.lit(True).alias(MATCHED),
        )
        keys = []
        for name, source_name in zip(clauses.keys, clauses.source_keys, strict=True):
            t_index = clauses.names.index(name)
            s_index = self.source_names.index(source_name)
            spark_type = target_schema[name].dataType
            keys.append((f"t{t_index}", f.col(f"s{s_index}").cast(spark_type)))
        condition = functools.reduce(lambda a, b: a & b, [f.col(t) == s for t, s in keys])
        keep_target = clauses.by_source or not clauses.merge_on_read
        keep_source = clauses.inserting
        how = {
            (True, True): "full",
            (True, False): "left",
            (False, True): "right",
            (False, False): "inner",
        }[(keep_target, keep_source)]
        joined = target.join(source, condition, how)
        # Rows of a target file go to one task; unmatched source rows by key (so that a key's
        # rows meet, for the duplicate check).
        by_key = f.concat(f.lit("\u0000"), f.xxhash64(*[s for _, s in keys]).cast("string"))
        joined = joined.withColumn(PART, f.coalesce(f.col(FILE), by_key))
        return joined.repartition(f.col(PART)).sortWithinPartitions(PART, POS)

    def run(self) -> MergeResult:
        from frazil.spark.writer import APP_ID
        from frazil.table.row_level._changes import MERGE_ISOLATION, ChangeSet, WrittenChanges

        clauses = self.clauses
        stats = None if clauses.by_source else self._key_stats()
        tasks, prune = clauses.candidates(self.io, self.builder._branch, stats)
        counts = [0] * len(clauses.clauses)
        changes = ChangeSet(self.metadata, self.io, self.mode)
        job_id = str(uuid.uuid4())
        journal = Journal.create(self.metadata.location, self.io, job_id)
        reported: set[str | None] = set()
        if tasks or clauses.inserting:
            job = MergeJob(
                spec=self.spec,
                io=self.io,
                source_names=self.source_names,
                tasks={str(t.file.file_path): task_payload(t) for t in tasks}
                if clauses.merge_on_read
                else {},
                journal=journal,
            )
            frame = self._joined(tasks).mapInArrow(job.map_partition, _result_type())
            try:
                rows = frame.collect()
            except Exception as error:
                journal.clean_up(set(), committed=False, unknown=False)
                raise _job_error(error, f"the Spark job merging into {self._name()}") from error
            by_path = {str(t.file.file_path): t for t in tasks}
            written = WrittenChanges()
            for row in rows:
                task_counts, plain = pickle.loads(row[0])
                counts = [a + b for a, b in zip(counts, task_counts, strict=True)]
                written.extend(WrittenChanges.from_plain(plain))
            reported = set(written.paths())
            changes.add_written(written, by_path)
        summary = {
            APP_ID: self.spark.sparkContext.applicationId,
            **(self.builder._snapshot_properties or {}),
        }
        committed = False
        unknown = False
        try:
            changes.stage(
                self.txn,
                command="merge",
                conflict_filter=prune,
                isolation_property=MERGE_ISOLATION,
                branch=self.builder._branch,
                snapshot_properties=summary,
                case_sensitive=self.builder._case_sensitive,
            )
            self.txn.commit_transaction()
            committed = True
        except CommitStateUnknownError:
            unknown = True
            raise
        finally:
            journal.clean_up(reported, committed, unknown)
        return MergeResult(**clause_counts(clauses.kinds, counts))

    def _name(self) -> str:
        return ".".join(self.table.name()) or self.table.location()


def _result_type() -> Any:
    types = require("pyspark.sql.types")
    return types.StructType([types.StructField(RESULT, types.BinaryType(), False)])
