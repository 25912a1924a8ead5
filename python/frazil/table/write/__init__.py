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
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from frazil.errors import FrazilTypeError, InvalidValueError
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.table.write._add_files import data_file_from_parquet
from frazil.table.write._config import WriteConfig, metrics_modes
from frazil.table.write._partition import Partitioner, sort_batch
from frazil.table.write._schema import (
    Conformer,
    SchemaMismatchError,
    check_arrow_schema,
    write_arrow_schema,
)
from frazil.table.write._writer import FileNamer, FileSettings, PartitionWriter

__all__ = [
    "Conformer",
    "SchemaMismatchError",
    "check_arrow_schema",
    "data_file_from_parquet",
    "write_arrow_schema",
    "write_data_files",
]

# Buffered (not yet written) Arrow bytes across all open partitions before the largest
# buffer is written out as a row group: bounds memory when many partitions are open.
MAX_BUFFERED_BYTES = 256 << 20


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
) -> Iterator[DataFile]:
    """Writes ``data`` (a pyarrow Table, RecordBatch, RecordBatchReader, or any object with
    ``__arrow_c_stream__``) to Parquet data files of the table and yields one
    :class:`DataFile` per file (content 0, ``PARQUET``, ``partition`` as
    ``{partition field name: value}`` in the form :func:`frazil.manifest.write_manifest`
    takes, metrics per ``write.metadata.metrics.*``).

    A stream is written as it arrives: memory holds the open row groups, not the data.
    ``properties`` override the table's. A file is yielded once it is complete; when the
    write fails, the files it wrote are deleted and the error raised."""
    props = {**metadata.properties, **(properties or {})}
    schema = metadata.schema()
    if spec_id is None:
        spec = metadata.spec()
    else:
        found = metadata.spec_by_id(spec_id)
        if found is None:
            raise InvalidValueError(f"partition spec {spec_id} is not a spec of the table")
        spec = found
    order = metadata.sort_order()
    config = WriteConfig.from_properties(metadata.location, props)
    modes = metrics_modes(schema, order, props)
    reader = _reader(data)
    conformer = check_arrow_schema(reader.schema, schema)
    partitioner = Partitioner(schema, spec)
    settings = FileSettings.build(
        schema,
        conformer.target,
        config,
        modes,
        spec.spec_id,
        order.order_id,
        io,
    )
    namer = FileNamer(config.data_path, str(uuid.uuid4()))
    return _write(reader, conformer, partitioner, settings, namer, order, data)


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
    try:
        batches: Iterator[pa.RecordBatch] = iter(reader)
        if isinstance(data, pa.Table) and order.fields and data.num_rows:
            # An in-memory table is sorted as a whole, so each file is sorted.
            whole = conformer.conform(data.combine_chunks().to_batches()[0])
            ordered = sort_batch(whole, settings.schema, order)
            batches = iter(pa.Table.from_batches([ordered]).to_batches(max_chunksize=1 << 17))
            presorted = True
        else:
            presorted = False
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if not presorted:
                batch = conformer.conform(batch)
                batch = sort_batch(batch, settings.schema, order)
            for partition, rows in partitioner.split(batch):
                writer = writers.get(partition.key)
                if writer is None:
                    writer = writers[partition.key] = PartitionWriter(settings, partition, namer)
                writer.write(rows)
                yield from _drain(writer)
            _bound_memory(writers)
            for writer in writers.values():
                yield from _drain(writer)
        for writer in writers.values():
            writer.close()
            yield from _drain(writer)
        succeeded = True
    finally:
        if not succeeded:
            _abort(writers, settings.io)


def _drain(writer: PartitionWriter) -> Iterator[DataFile]:
    while writer.done:
        yield writer.done.pop(0)


def _bound_memory(writers: Mapping[Any, PartitionWriter]) -> None:
    total = sum(w.buffered_bytes for w in writers.values())
    while total > MAX_BUFFERED_BYTES:
        largest = max(writers.values(), key=lambda w: w.buffered_bytes)
        total -= largest.buffered_bytes
        largest.flush()


def _abort(writers: Mapping[Any, PartitionWriter], io: FileIO) -> None:
    """Deletes what a failed write wrote (yielded files too: a caller stopping early or
    failing never commits them)."""
    for writer in writers.values():
        for location in writer.abort():
            try:
                io.delete(location)
            except Exception:
                pass
