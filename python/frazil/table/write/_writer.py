"""Parquet files of one partition, rolled at ``write.target-file-size-bytes``.

pyarrow starts a row group at every write call, so batches are buffered per file until they
reach ``write.parquet.row-group-size-bytes`` of Arrow memory (or the writer is flushed to bound
the memory of many open partitions) and written as groups of at least that size. Files are named
as Java's ``OutputFileFactory`` names them:
``<partitionId>-<taskId>-<operationId>-<count>.parquet``."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import _native
from frazil.io import FileIO, raw
from frazil.io._arrow import open_arrow_output
from frazil.manifest import DataFile
from frazil.schema import Schema
from frazil.table.write._config import MetricsMode, WriteConfig
from frazil.table.write._location_provider import LocationProvider
from frazil.table.write._metrics import BoundsCollector, Leaf, footer_metrics, leaves
from frazil.table.write._metrics import _column as bounds_column
from frazil.table.write._partition import Partition
from frazil.types import (
    DoubleType,
    FloatType,
    NestedField,
    PrimitiveType,
    UnknownType,
    field_to_json,
)

__all__ = ["FileNamer", "FileSettings", "PartitionWriter"]

# Row groups of at least this many rows get their bounds computed in a thread of their own
# while pyarrow encodes them (both release the GIL).
_BOUNDS_ASIDE_ROWS = 1 << 19


@dataclass
class FileNamer:
    """Names new files as Java's ``OutputFileFactory`` and places them as its
    ``LocationProvider`` (``partitioned``: the spec has a non-void field)."""

    locations: LocationProvider
    operation_id: str
    partitioned: bool = True
    partition_id: int = 0
    task_id: int = 0
    # Java's OutputFileFactory suffix ("deletes" for delete files).
    suffix: str | None = None
    count: int = 0
    # Files of several partitions are opened from a thread pool.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def next(self, partition_path: str) -> str:
        with self.lock:
            self.count += 1
            count = self.count
        suffix = "" if self.suffix is None else f"-{self.suffix}"
        name = (
            f"{self.partition_id:05d}-{self.task_id}-{self.operation_id}-{count:05d}"
            f"{suffix}.parquet"
        )
        return self.locations.new_data_location(partition_path if self.partitioned else None, name)


@dataclass(frozen=True)
class FileSettings:
    """What every file of one write shares."""

    schema: Schema
    arrow_schema: pa.Schema
    config: WriteConfig
    modes: Mapping[int, MetricsMode]
    spec_id: int
    sort_order_id: int | None
    io: FileIO
    leaves: list[Leaf] = field(default_factory=list)
    parquet_paths: list[str] = field(default_factory=list)  # dotted, by leaf index
    types: dict[int, PrimitiveType] = field(default_factory=dict)
    bounds_targets: dict[int, tuple[tuple[str, ...], PrimitiveType, MetricsMode]] = field(
        default_factory=dict
    )
    # Fields written after the table's columns (row lineage), outside the table schema.
    extra_fields: tuple[NestedField, ...] = ()
    # write.parquet.bloom-filter-*: pyarrow's bloom_filter_options by Parquet path.
    bloom_filters: dict[str, dict[str, float | int]] = field(default_factory=dict)
    # write.parquet.stats-enabled.column.*=false: the Parquet paths that keep statistics (None:
    # all), and the field ids that do not.
    stats_paths: list[str] | None = None
    no_stats_ids: frozenset[int] = frozenset()
    # What the files hold: 0 data, 2 equality deletes (with the equality field ids).
    content: int = 0
    equality_ids: tuple[int, ...] | None = None

    @classmethod
    def build(
        cls,
        schema: Schema,
        arrow_schema: pa.Schema,
        config: WriteConfig,
        modes: Mapping[int, MetricsMode],
        spec_id: int,
        sort_order_id: int | None,
        io: FileIO,
        extra_fields: tuple[NestedField, ...] = (),
        content: int = 0,
        equality_ids: tuple[int, ...] | None = None,
    ) -> FileSettings:
        columns = leaves(arrow_schema)
        types: dict[int, PrimitiveType] = {}
        targets: dict[int, tuple[tuple[str, ...], PrimitiveType, MetricsMode]] = {}
        for f in (*(f for _name, f in schema.all_fields()), *extra_fields):
            t = f.field_type
            if isinstance(t, PrimitiveType) and not isinstance(t, UnknownType):
                types[f.field_id] = t
        for leaf in columns:
            if leaf.field_id is None or leaf.repeated:
                continue
            mode = modes[leaf.field_id]
            if mode.counts:
                targets[leaf.field_id] = (leaf.path, types[leaf.field_id], mode)
        paths = _parquet_paths(arrow_schema)
        path_of = {leaf.field_id: paths[leaf.index] for leaf in columns}
        bloom = {
            path_of[field_id]: {"ndv": _bloom_ndv(fpp, config.bloom_max_bytes), "fpp": fpp}
            for field_id, fpp in (
                (schema.find_field_id(name), fpp) for name, fpp in config.bloom_filters.items()
            )
            if field_id is not None and field_id in path_of
        }
        no_stats = frozenset(
            field_id
            for field_id in (schema.find_field_id(name) for name in config.no_stats)
            if field_id is not None and field_id in path_of
        )
        stats_paths = (
            [path_of[leaf.field_id] for leaf in columns if leaf.field_id not in no_stats]
            if no_stats
            else None
        )
        return cls(
            schema,
            arrow_schema,
            config,
            modes,
            spec_id,
            sort_order_id,
            io,
            columns,
            paths,
            types,
            targets,
            extra_fields,
            bloom,
            stats_paths,
            no_stats,
            content,
            equality_ids,
        )

    def iceberg_schema_json(self) -> str:
        """The schema the files are written with (Java's ``iceberg.schema`` footer key): the
        table's, plus the extra fields."""
        node = self.schema.to_json()
        node["fields"] = [*node["fields"], *(field_to_json(f) for f in self.extra_fields)]
        return json.dumps(node)

    def parquet_options(self) -> dict[str, Any]:
        config = self.config
        return {
            "compression": config.codec,
            "compression_level": config.compression_level,
            "data_page_size": config.page_size,
            "max_rows_per_page": config.page_row_limit,
            "dictionary_pagesize_limit": config.dict_size,
            "write_statistics": True if self.stats_paths is None else self.stats_paths,
            "bloom_filter_options": self.bloom_filters or None,
            # Java stores decimals of precision <= 9 as INT32 and <= 18 as INT64.
            "store_decimal_as_integer": True,
            "use_compliant_nested_type": True,
            # Java writes no Arrow schema; it stores the Iceberg schema instead.
            "store_schema": False,
            "write_page_checksum": config.page_checksum,
        }


# Java's Parquet writer decides on its first page (at most 20,000 values, parquet-mr's
# page.row-count-limit) whether a column's dictionary pays for itself; a smaller sample
# decides alike at a fifth of the cost (it runs once per file and column).
_DICTIONARY_SAMPLE = 4096


def _dictionary_pays(values: Any) -> bool:
    """parquet-mr's ``DictionaryValuesWriter.isCompressionSatisfying`` on a sample: the
    dictionary plus the bit-packed indices must be smaller than the plain values. pyarrow
    never falls back by itself (only past the dictionary size limit), so a column of unique
    values is hashed and written twice as a dictionary; Java writes it plain."""
    t = values.type
    present = len(values) - values.null_count
    if present == 0 or pa.types.is_boolean(t) or pa.types.is_dictionary(t):
        return True
    if (
        pa.types.is_binary(t)
        or pa.types.is_string(t)
        or pa.types.is_large_binary(t)
        or (pa.types.is_large_string(t))
    ):
        # Plain encoding stores a 4-byte length before each value.
        width = (pc.sum(pc.binary_length(values)).as_py() or 0) / present + 4
    elif pa.types.is_decimal(t) and t.precision <= 18:
        width = 4 if t.precision <= 9 else 8  # stored as INT32/INT64
    else:
        try:
            width = t.bit_width / 8
        except ValueError:
            return True
    # Distinct values by their bytes, in the Rust core (a few ns a value against pyarrow's
    # ~100): the count decides an encoding, not a value, so -0.0 and 0.0 being two is fine.
    counted = _native.distinct_count(values)
    distinct = int(pc.count_distinct(values).as_py()) if counted is None else counted
    index_bits = max(1, (distinct - 1).bit_length())
    return bool(distinct * width + present * index_bits / 8 < present * width)


def _dictionary_columns(settings: FileSettings, table: pa.Table) -> bool | list[str]:
    """pyarrow's ``use_dictionary``: every column but those whose first values show the
    dictionary does not pay (Java's fallback to plain, decided up front)."""
    sample = table.slice(0, _DICTIONARY_SAMPLE)
    chosen: list[str] = []
    for leaf in settings.leaves:
        path = settings.parquet_paths[leaf.index]
        if leaf.repeated or _dictionary_pays(bounds_column(sample, leaf.path)):
            chosen.append(path)
    return True if len(chosen) == len(settings.leaves) else chosen


# pyarrow's largest bitset (Arrow's BlockSplitBloomFilter::kMaximumBloomFilterBytes).
_BLOOM_MAX_BITSET = 128 << 20


def _bloom_ndv(fpp: float, max_bytes: int) -> int:
    """The distinct count pyarrow sizes a bloom filter for: the largest whose bitset at
    ``fpp`` stays within ``max_bytes`` (Arrow's ``OptimalNumOfBits``: ``-8 n / ln(1 -
    fpp^(1/8))`` bits, rounded up to a power of two). pyarrow lowers it to a row group's value
    count, so the bitset is never larger than the values need; parquet-java, given no count,
    always writes ``max_bytes``, and reads both alike (Parquet: "Bloom Filter")."""
    limit = min(1 << (max_bytes.bit_length() - 1), _BLOOM_MAX_BITSET)  # a power of two
    per_value = -math.log(1.0 - fpp ** (1.0 / 8))  # bits per value / 8
    ndv = max(1, int(limit * per_value))
    while ndv > 1 and 8.0 * ndv / per_value > limit * 8:
        ndv -= 1
    return min(ndv, 2**31 - 1)


def _parquet_paths(arrow_schema: pa.Schema) -> list[str]:
    """The Parquet column paths of the leaves (``a.list.element``, ``m.key_value.key``), as
    pyarrow's ``use_dictionary`` names them: from the footer of an empty file."""
    sink = pa.BufferOutputStream()
    pq.write_table(arrow_schema.empty_table(), sink, use_compliant_nested_type=True)
    parquet = pq.read_metadata(pa.BufferReader(sink.getvalue())).schema
    return [parquet.column(i).path for i in range(len(parquet))]


class _OpenFile:
    def __init__(self, settings: FileSettings, location: str, first: pa.Table) -> None:
        self.location = location
        self.sink = open_arrow_output(raw(settings.io), location)
        self.writer = pq.ParquetWriter(
            self.sink,
            settings.arrow_schema,
            use_dictionary=settings.config.dictionary and _dictionary_columns(settings, first),
            **settings.parquet_options(),
        )
        # Java's ParquetWriter stores the table schema under "iceberg.schema".
        self.writer.add_key_value_metadata({"iceberg.schema": settings.iceberg_schema_json()})
        self.bounds = BoundsCollector(settings.bounds_targets)
        self.rows = 0

    def written_bytes(self) -> int:
        return int(self.sink.tell())


class PartitionWriter:
    """Writes the rows of one partition to as many files as the target size asks."""

    def __init__(self, settings: FileSettings, partition: Partition, namer: FileNamer) -> None:
        self.settings = settings
        self.partition = partition
        self.namer = namer
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        self.file: _OpenFile | None = None
        self.compression_ratio = 0.5  # compressed/Arrow bytes, refined per row group
        self.done: list[DataFile] = []
        self.locations: list[str] = []  # every file opened, for clean-up after a failure

    def write(self, rows: pa.Table) -> None:
        """Buffers ``rows``; the caller flushes the writers that are :meth:`ready` (several
        at once, on its thread pool)."""
        if rows.num_rows == 0:
            return
        self.buffer.append(rows)
        self.buffered_bytes += rows.nbytes

    def ready(self) -> bool:
        """A row group's worth is buffered, or the open file would reach the target size."""
        if not self.buffer:
            return False
        if self.buffered_bytes >= self.settings.config.row_group_size:
            return True
        return self.file is not None and self._estimate() >= self.settings.config.target_file_size

    def _estimate(self) -> int:
        assert self.file is not None
        return self.file.written_bytes() + int(self.buffered_bytes * self.compression_ratio)

    def flush(self) -> None:
        """Writes the buffered rows as row groups of at least (and under twice)
        ``write.parquet.row-group-size-bytes`` of Arrow memory each (a large in-memory table is
        not one huge group), rolling the file whenever it reaches the target size."""
        if not self.buffer:
            return
        table = pa.concat_tables(self.buffer) if len(self.buffer) > 1 else self.buffer[0]
        self.buffer = []
        self.buffered_bytes = 0
        groups = max(1, table.nbytes // self.settings.config.row_group_size)
        group_rows = max(1, -(-table.num_rows // groups))
        for start in range(0, table.num_rows, group_rows):
            self._write_group(table.slice(start, group_rows))

    def _write_group(self, table: pa.Table) -> None:
        if self.file is None:
            location = self.namer.next(self.partition.path)
            self.locations.append(location)
            self.file = _OpenFile(self.settings, location, table)
        before = self.file.written_bytes()
        # Bounds and NaN counts over the whole row group (a few kernel calls per column),
        # beside the Parquet encoding when the group is large.
        if table.num_rows >= _BOUNDS_ASIDE_ROWS:
            aside = threading.Thread(target=self.file.bounds.update, args=(table,))
            aside.start()
        else:
            aside = None
            self.file.bounds.update(table)
        try:
            self.file.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        finally:
            if aside is not None:
                aside.join()
        self.file.bounds.check()
        self.file.rows += table.num_rows
        written = self.file.written_bytes() - before
        if table.nbytes and written > 0:
            self.compression_ratio = written / table.nbytes
        if self.file.written_bytes() >= self.settings.config.target_file_size:
            self.close_file()

    def close_file(self) -> None:
        if self.file is None:
            return
        open_file, self.file = self.file, None
        open_file.writer.close()
        size = open_file.written_bytes()
        open_file.sink.close()
        metadata = open_file.writer.writer.metadata
        self.done.append(self._data_file(open_file, metadata, size))

    def close(self) -> list[DataFile]:
        self.flush()
        self.close_file()
        return self.done

    def abort(self) -> list[str]:
        """Closes an open file without describing it; returns every location written."""
        if self.file is not None:
            try:
                self.file.writer.close()
                self.file.sink.close()
            except Exception:
                pass
            self.file = None
        return list(self.locations)

    def _data_file(self, open_file: _OpenFile, metadata: pq.FileMetaData, size: int) -> DataFile:
        settings = self.settings
        footer = footer_metrics(
            metadata, settings.leaves, settings.types, settings.modes, with_bounds=False
        )
        lower, upper, nans = open_file.bounds.bounds(settings.types, settings.modes)
        value_counts, null_counts = footer.value_counts, footer.null_value_counts
        for field_id in settings.no_stats_ids:
            # A column without Parquet statistics has Java's footer metrics: none; except
            # float and double columns, whose metrics Java's writer keeps itself.
            if isinstance(settings.types.get(field_id), FloatType | DoubleType):
                counted = open_file.bounds.counts.get(field_id)
                if counted is not None:
                    value_counts = {**(value_counts or {}), field_id: counted[0]}
                    null_counts = {**(null_counts or {}), field_id: counted[1]}
            else:
                lower.pop(field_id, None)
                upper.pop(field_id, None)
        return DataFile(
            content=settings.content,
            file_path=open_file.location,
            file_format="PARQUET",
            partition=dict(self.partition.values),
            record_count=footer.record_count,
            file_size_in_bytes=size,
            column_sizes=footer.column_sizes,
            value_counts=value_counts,
            null_value_counts=null_counts,
            nan_value_counts=nans,
            lower_bounds=lower,
            upper_bounds=upper,
            key_metadata=None,
            split_offsets=footer.split_offsets,
            equality_ids=None if settings.equality_ids is None else list(settings.equality_ids),
            sort_order_id=settings.sort_order_id,
            first_row_id=None,
            referenced_data_file=None,
            content_offset=None,
            content_size_in_bytes=None,
        )
