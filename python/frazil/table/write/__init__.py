"""Arrow data written as Parquet data files of a table (spec: "Manifests" data_file fields,
Appendix D bounds; ``write.*`` table properties as Java's ``TableProperties`` names them).

:func:`write_data_files` checks the data against the table schema (:func:`check_arrow_schema`),
splits each batch by partition with the Rust core's transforms, orders rows by the table's sort
order, and writes one rolling Parquet writer per partition under ``write.data.path`` with
Java's layout; it yields a :class:`frazil.manifest.DataFile` per file. The snapshot producers
(append, overwrite, delete) commit what it yields. :func:`data_file_from_parquet` describes an
existing Parquet file for ``add_files``."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from frazil._threads import threads
from frazil.errors import FrazilTypeError, InvalidValueError, ValidationError
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table import _metadata_columns as meta
from frazil.table._properties import check_write_properties, downcast_ns
from frazil.table.write._add_files import data_file_from_parquet
from frazil.table.write._config import (
    MetricsMode,
    WriteConfig,
    default_metrics_mode,
    metrics_modes,
)
from frazil.table.write._deletes import (
    DeleteTarget,
    delete_file_config,
    write_deletion_vectors,
    write_equality_deletes,
    write_position_deletes,
)
from frazil.table.write._partition import Partitioner, sort_batch
from frazil.table.write._schema import (
    Conformer,
    SchemaMismatchError,
    check_arrow_schema,
    write_arrow_schema,
)
from frazil.table.write._writer import FileNamer, FileSettings, PartitionWriter
from frazil.types import NestedField

__all__ = [
    "Conformer",
    "DeleteTarget",
    "SchemaMismatchError",
    "WrittenDataFiles",
    "check_arrow_schema",
    "data_file_from_parquet",
    "delete_file_config",
    "write_arrow_schema",
    "write_data_files",
    "write_deletion_vectors",
    "write_equality_deletes",
    "write_files",
    "write_position_deletes",
]

# Buffered (not yet written) Arrow bytes across all open partitions before the largest
# buffers are written out as row groups: bounds memory when many partitions are open.
MAX_BUFFERED_BYTES = 256 << 20
# An in-memory Table up to this size is split by partition in one piece (one reordered copy
# of it at most): its partitions' files then get whole row groups, not budget-sized pieces.
MAX_TABLE_BYTES = 2 << 30


@dataclass(frozen=True)
class WrittenDataFiles:
    """Data files written already by :func:`write_data_files` under partition spec
    ``spec_id`` (by Spark executors, say), for a transaction's ``append``, ``overwrite`` or
    ``dynamic_partition_overwrite`` to commit in place of data. The transaction owns them: a
    commit that fails deletes them, one whose outcome is unknown keeps them."""

    files: tuple[DataFile, ...]
    spec_id: int

    def check_spec(self, metadata: TableMetadata) -> None:
        """The files' partition tuples follow ``spec_id``: it must still be the table's
        default spec, which the commit's snapshot producers assume."""
        if self.files and self.spec_id != metadata.default_spec_id:
            raise ValidationError(
                f"the data files were written under partition spec {self.spec_id}, but the "
                f"table's default spec is now {metadata.default_spec_id} (its partitioning "
                "changed meanwhile): write the data again"
            )


def _reader(data: Any) -> pa.RecordBatchReader:
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return data.to_reader()
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data])
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    raise FrazilTypeError(
        "data must be a pyarrow Table, RecordBatch or RecordBatchReader, or an object with "
        f"__arrow_c_stream__; got {type(data).__name__}"
    )


def write_data_files(
    metadata: TableMetadata,
    io: FileIO,
    data: Any,
    *,
    spec_id: int | None = None,
    properties: Mapping[str, str] | None = None,
    row_lineage: bool = False,
    partition_id: int = 0,
    task_id: int = 0,
    operation_id: str | None = None,
) -> Iterator[DataFile]:
    """Writes ``data`` (a pyarrow Table, RecordBatch, RecordBatchReader, or any object with
    ``__arrow_c_stream__``) to Parquet data files of the table and yields one
    :class:`DataFile` per file (content 0, ``PARQUET``, ``partition`` as
    ``{partition field name: value}`` in the form :func:`frazil.manifest.write_manifest`
    takes, metrics per ``write.metadata.metrics.*``).

    A stream is written as it arrives: memory holds the open row groups, not the data.
    ``properties`` override the table's. A file is yielded once it is complete; when the
    write fails, the files it wrote are deleted and the error raised.

    ``row_lineage`` (v3 tables): ``data`` may also carry ``_row_id`` and
    ``_last_updated_sequence_number`` (int64; a missing column is all null), written beside
    the table's columns with their reserved field ids, so that rows moved to a new file keep
    their lineage (spec: "Row Lineage"; what Spark's copy-on-write writes). Without it those
    names are not columns of the table and are refused.

    ``partition_id``, ``task_id`` and ``operation_id`` name the files as Java's
    ``OutputFileFactory`` does (``{partition:05d}-{task}-{operation}-{count:05d}.parquet``):
    a Spark task gives its partition and attempt ids and the job's id, so that files of
    different tasks of one write never collide (default: a fresh uuid as the operation)."""
    if spec_id is None:
        spec = metadata.spec()
    else:
        found = metadata.spec_by_id(spec_id)
        if found is None:
            raise InvalidValueError(f"partition spec {spec_id} is not a spec of the table")
        spec = found
    return write_files(
        metadata,
        io,
        data,
        schema=metadata.schema(),
        spec=spec,
        sorted_by=metadata.sort_order(),
        properties=properties,
        row_lineage=row_lineage,
        partition_id=partition_id,
        task_id=task_id,
        operation_id=operation_id,
    )


def write_files(
    metadata: TableMetadata,
    io: FileIO,
    data: Any,
    *,
    schema: Schema,
    spec: PartitionSpec,
    sorted_by: SortOrder | None,
    properties: Mapping[str, str] | None = None,
    modes: Mapping[int, MetricsMode] | None = None,
    content: int = 0,
    equality_ids: tuple[int, ...] | None = None,
    row_lineage: bool = False,
    partition_id: int = 0,
    task_id: int = 0,
    operation_id: str | None = None,
) -> Iterator[DataFile]:
    """:func:`write_data_files` with its choices explicit: the ``schema`` the data is
    written with (the table's, or the key columns of equality deletes), the partition
    ``spec``, the sort order ``sorted_by`` (None: as the data comes; the files get no sort
    order id), the metrics ``modes`` by field id (default: the table's), and the files'
    ``content`` (0 data, 2 equality deletes with their ``equality_ids``; delete files are
    named ``...-deletes.parquet`` as Java names them)."""
    props = {**metadata.properties, **(properties or {})}
    lineage = _lineage_fields(metadata, schema) if row_lineage else ()
    order = sorted_by if sorted_by is not None else SortOrder()
    # What frazil cannot honour (write.format.default=orc...) is refused, never ignored.
    check_write_properties(props, metadata.schema(), location=metadata.location)
    config = WriteConfig.from_properties(metadata.location, props)
    if modes is None:
        modes = metrics_modes(schema, order, props)
    if row_lineage:
        # Java's MetricsConfig finds no rule for these names: the default mode applies.
        lineage_mode = default_metrics_mode(schema, props)
        modes = {**modes, **{meta.FIELD_IDS[n]: lineage_mode for n in meta.ROW_LINEAGE}}
    reader = _reader(data)
    conformer = check_arrow_schema(
        reader.schema, schema, extra_fields=lineage, downcast_ns=downcast_ns(props)
    )
    partitioner = Partitioner(schema, spec)
    settings = FileSettings.build(
        schema,
        conformer.target,
        config,
        modes,
        spec.spec_id,
        order.order_id if sorted_by is not None else None,
        io,
        extra_fields=lineage,
        content=content,
        equality_ids=equality_ids,
    )
    namer = FileNamer(
        config.locations,
        str(uuid.uuid4()) if operation_id is None else operation_id,
        not spec.is_unpartitioned(),
        partition_id=partition_id,
        task_id=task_id,
        suffix="deletes" if content else None,
    )
    return _write(reader, conformer, partitioner, settings, namer, order, data)


def _lineage_fields(metadata: TableMetadata, schema: Schema) -> tuple[NestedField, ...]:
    """The row lineage fields written after the table's columns (Java's
    ``MetadataColumns.schemaWithRowLineage``)."""
    if metadata.format_version < 3:
        raise ValidationError(
            f"row lineage is written to v3 tables only; this table is v{metadata.format_version}"
        )
    taken = [n for n in meta.ROW_LINEAGE if schema.find_field_id(n) is not None]
    if taken:
        raise ValidationError(
            f"cannot write row lineage: the table has a column named {taken[0]!r}, the name of "
            "a row lineage metadata column (spec: Row Lineage)"
        )
    return tuple(meta.lineage_field(n) for n in meta.ROW_LINEAGE)


def _write(
    reader: pa.RecordBatchReader,
    conformer: Conformer,
    partitioner: Partitioner,
    settings: FileSettings,
    namer: FileNamer,
    order: Any,
    data: Any,
) -> Iterator[DataFile]:
    writers: dict[Any, PartitionWriter] = {}
    succeeded = False
    in_memory = isinstance(data, pa.Table)
    if in_memory:
        budget = max(MAX_BUFFERED_BYTES, min(data.nbytes, MAX_TABLE_BYTES))
    else:
        budget = MAX_BUFFERED_BYTES
    # Input is split in chunks: the split's fixed costs (a sort, one take) are paid per chunk,
    # not per batch. A stream's chunks stay below a row group, so files of a stream are
    # written (and yielded) as it arrives.
    chunk_bytes = budget if in_memory else min(settings.config.row_group_size, budget // 2)
    lanes = threads()
    pool = ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="frazil-write")
    try:
        presorted = False
        batches: Iterator[pa.RecordBatch] = iter(reader)
        if in_memory and order.fields and data.num_rows:
            # An in-memory table is sorted as a whole, so each file is sorted.
            whole = pa.Table.from_batches(
                [conformer.conform(b) for b in data.to_batches() if b.num_rows],
                schema=conformer.target,
            )
            batches = iter(sort_batch(whole, settings.schema, order).to_batches())
            presorted = True
        for chunk in _chunks(batches, conformer, chunk_bytes, presorted):
            if not presorted:
                chunk = sort_batch(chunk, settings.schema, order)
            # One reordered copy of the chunk, its columns moved in parallel by the Rust core
            # (without the GIL); each partition a slice of it.
            parts, chunk = partitioner.split(chunk)
            for partition, (start, length) in parts:
                rows = chunk.slice(start, length)
                for lane, piece in _lanes(rows, len(parts), lanes, settings):
                    writer = writers.get((partition.key, lane))
                    if writer is None:
                        writer = PartitionWriter(settings, partition, namer)
                        writers[(partition.key, lane)] = writer
                    writer.write(piece)
            _in_parallel(pool, _to_flush(writers, budget), PartitionWriter.flush)
            for writer in writers.values():
                yield from _drain(writer)
        _in_parallel(pool, list(writers.values()), PartitionWriter.close)
        for writer in writers.values():
            yield from _drain(writer)
        succeeded = True
    finally:
        pool.shutdown(wait=True)
        if not succeeded:
            _abort(writers, settings.io)


def _chunks(
    batches: Iterator[pa.RecordBatch], conformer: Conformer, limit: int, conformed: bool
) -> Iterator[pa.Table]:
    """The conformed batches gathered into tables of about ``limit`` Arrow bytes."""
    pending: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if not conformed:
            batch = conformer.conform(batch)
        pending.append(batch)
        size += batch.nbytes
        if size >= limit:
            yield pa.Table.from_batches(pending, schema=conformer.target)
            pending, size = [], 0
    if pending:
        yield pa.Table.from_batches(pending, schema=conformer.target)


def _drain(writer: PartitionWriter) -> Iterator[DataFile]:
    while writer.done:
        yield writer.done.pop(0)


def _lanes(
    rows: pa.Table, partitions: int, lanes: int, settings: FileSettings
) -> list[tuple[int, pa.Table]]:
    """``rows`` of one partition split among writers ("lanes") of that partition. pyarrow
    encodes one Parquet file on one thread, so a chunk with fewer partitions than cores
    (an unpartitioned table above all) would write on one core: its large slices go to
    several files, written at once, each a contiguous (so still sorted) run of at least one
    row group. Many partitions, or small slices, keep one file per partition (a stream's
    chunks are smaller than a row group, so a stream keeps one file at a time too)."""
    share = lanes // max(partitions, 1)
    count = min(share, rows.nbytes // settings.config.row_group_size)
    if count < 2:
        return [(0, rows)]
    step = -(-rows.num_rows // count)
    return [(i, rows.slice(i * step, step)) for i in range(count) if i * step < rows.num_rows]


def _to_flush(writers: Mapping[Any, PartitionWriter], budget: int) -> list[PartitionWriter]:
    """The writers with a row group's worth (or a full file) buffered, then the largest other
    buffers until the rest fit the budget."""
    chosen = [w for w in writers.values() if w.ready()]
    rest = [w for w in writers.values() if not w.ready()]
    total = sum(w.buffered_bytes for w in rest)
    for writer in sorted(rest, key=lambda w: w.buffered_bytes, reverse=True):
        if total <= budget:
            break
        chosen.append(writer)
        total -= writer.buffered_bytes
    return chosen


def _in_parallel(
    pool: ThreadPoolExecutor,
    writers: list[PartitionWriter],
    action: Callable[[PartitionWriter], object],
) -> None:
    """``action`` on every writer, several at once (pyarrow's Parquet writer and compute
    kernels release the GIL); waits for all, then raises the first failure."""
    if len(writers) <= 1:
        for writer in writers:
            action(writer)
        return
    futures = [pool.submit(action, writer) for writer in writers]
    wait(futures)
    for future in futures:
        future.result()


def _abort(writers: Mapping[Any, PartitionWriter], io: FileIO) -> None:
    """Deletes what a failed write wrote (yielded files too: a caller stopping early or
    failing never commits them)."""
    for writer in writers.values():
        for location in writer.abort():
            try:
                io.delete(location)
            except Exception:
                pass
