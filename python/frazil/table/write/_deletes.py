"""Delete files written for row-level changes (spec: "Row-level Deletes", "Delete Formats":
"Position Delete Files", "Equality Delete Files"; Puffin ``deletion-vector-v1``).

- :func:`write_position_deletes`: v2 position delete files, Parquet with ``file_path`` and
  ``pos`` (reserved field ids 2147483546 and 2147483545), rows sorted by path then position,
  one file per partition of the data files they delete from (``write.delete.granularity=
  partition``, Java's ``TableProperties`` default) or per data file (``file``, Spark's
  default), rolled at ``write.delete.target-file-size-bytes``. Counts and bounds are kept on
  both columns (Java 1.10's writer drops them when a file names several data files), so a
  planner prunes a delete file by path and a split by position; ``referenced_data_file`` is set
  when a file deletes from one data file only.
- :func:`write_deletion_vectors`: v3 deletion vectors, one Puffin file per call with one blob
  per data file (as Java's ``BaseDVFileWriter`` writes one per task), each an entry with its
  ``content_offset`` and ``content_size_in_bytes``.
- :func:`write_equality_deletes`: equality delete files holding the key columns only, written
  by the data file writer under the table's spec or an unpartitioned one.

The Parquet settings of delete files are Java's ``write.delete.parquet.*``, each falling back to
its ``write.parquet.*`` (``Parquet.WriteBuilder``'s delete context); their format is
``write.delete.format.default`` (default: the data format), of which frazil writes Parquet
only: another is refused, never silently replaced.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import _native
from frazil.errors import InvalidValueError, UnsupportedOperationError, ValidationError
from frazil.io import FileIO, raw
from frazil.io._arrow import open_arrow_output
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table._properties import check_write_properties, int_property
from frazil.table.write._config import WriteConfig, metrics_modes
from frazil.table.write._location_provider import LocationProvider
from frazil.table.write._metrics import leaves, split_offsets
from frazil.table.write._partition import partition_path

__all__ = [
    "DELETE_FILE_PATH_ID",
    "DELETE_POS_ID",
    "DeleteTarget",
    "delete_file_config",
    "write_deletion_vectors",
    "write_equality_deletes",
    "write_position_deletes",
]

# Spec: "Reserved Field IDs".
DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545
POSITION_DELETES = 1
EQUALITY_DELETES = 2

DELETE_FORMAT = "write.delete.format.default"
DELETE_GRANULARITY = "write.delete.granularity"
DELETE_TARGET_FILE_SIZE = "write.delete.target-file-size-bytes"
DELETE_TARGET_FILE_SIZE_DEFAULT = 64 * 1024 * 1024
GRANULARITY_PARTITION = "partition"
GRANULARITY_FILE = "file"
# Rows per row group of a position delete file: the file rolls between groups.
_POSITIONS_PER_GROUP = 1 << 20
_DELETE_PARQUET_PREFIX = "write.delete.parquet."
_PARQUET_PREFIX = "write.parquet."


@dataclass(frozen=True)
class DeleteTarget:
    """A data file rows are deleted from: its location, the id of its partition spec and its
    partition tuple (by partition field name, as :attr:`DataFile.partition`), and its record
    count (positions must be below it; None: unknown)."""

    file_path: str
    spec_id: int
    partition: Mapping[str, Any]
    record_count: int | None = None

    @classmethod
    def of_task(cls, task: Any) -> DeleteTarget:
        """The target of a planned :class:`~frazil.table.scan.FileScanTask`'s data file."""
        file = task.file
        return cls(
            str(file.file_path), int(task.spec_id), dict(file.partition or {}), file.record_count
        )


@dataclass(frozen=True)
class DeleteFileConfig:
    """What the delete file writers read from the table properties."""

    parquet: WriteConfig
    target_file_size: int
    granularity: str


def _delete_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The properties with each ``write.delete.parquet.X`` in place of ``write.parquet.X``
    (Java's delete context falls back to the data file settings)."""
    out = dict(properties)
    for key, value in properties.items():
        if key.startswith(_DELETE_PARQUET_PREFIX):
            out[_PARQUET_PREFIX + key[len(_DELETE_PARQUET_PREFIX) :]] = value
    return out


def delete_file_config(
    metadata: TableMetadata, properties: Mapping[str, str] | None = None
) -> DeleteFileConfig:
    """The delete writers' settings for ``metadata``'s table (``properties`` override its own);
    a delete format frazil cannot write, or a value it cannot read, is refused naming the
    property."""
    props = {**metadata.properties, **(properties or {})}
    check_write_properties(props, metadata.schema(), location=metadata.location)
    chosen = props.get(DELETE_FORMAT)
    if chosen is not None and chosen.strip().lower() != "parquet":
        # v3 position deletes are deletion vectors whatever the format; equality deletes and
        # v2 position deletes are written as Parquet only.
        raise UnsupportedOperationError(
            f"table property {DELETE_FORMAT}={chosen!r}: frazil writes delete files as Parquet "
            f"(and deletion vectors on v3 tables) only; set {DELETE_FORMAT}=parquet, or write "
            "this table's deletes with an engine that writes that format"
        )
    granularity = props.get(DELETE_GRANULARITY, GRANULARITY_PARTITION).strip().lower()
    if granularity not in (GRANULARITY_PARTITION, GRANULARITY_FILE):
        raise InvalidValueError(
            f"table property {DELETE_GRANULARITY}={props[DELETE_GRANULARITY]!r} must be "
            f"{GRANULARITY_PARTITION} or {GRANULARITY_FILE}"
        )
    return DeleteFileConfig(
        parquet=WriteConfig.from_properties(metadata.location, _delete_properties(props)),
        target_file_size=int_property(
            props, DELETE_TARGET_FILE_SIZE, DELETE_TARGET_FILE_SIZE_DEFAULT, minimum=1
        ),
        granularity=granularity,
    )


class _Namer:
    """Delete file names as Java's ``OutputFileFactory`` with the suffix ``deletes`` gives
    them: ``<partition>-<task>-<operation>-<count>-deletes.<ext>``."""

    def __init__(
        self, locations: LocationProvider, operation_id: str | None, partition_id: int, task_id: int
    ) -> None:
        self.locations = locations
        self.operation_id = operation_id or str(uuid.uuid4())
        self.partition_id = partition_id
        self.task_id = task_id
        self.count = 0

    def next(self, partition: str | None, extension: str) -> str:
        self.count += 1
        name = (
            f"{self.partition_id:05d}-{self.task_id}-{self.operation_id}-{self.count:05d}"
            f"-deletes.{extension}"
        )
        return self.locations.new_data_location(partition, name)


def _positions(values: Any, target: DeleteTarget) -> pa.Array:
    """``values`` (an int64 array, a list of ints, or a ``PositionDeleteIndex``) as a sorted
    int64 array of distinct positions inside the target file."""
    if isinstance(values, _native.PositionDeleteIndex):
        array = values.positions()
    else:
        array = (
            pa.array(values, pa.int64())
            if not isinstance(values, (pa.Array, pa.ChunkedArray))
            else values
        )
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type != pa.int64():
        array = array.cast(pa.int64())
    if array.null_count:
        raise InvalidValueError(f"a null position to delete from {target.file_path}")
    if len(array) > 1:
        array = pc.unique(array)
        array = array.take(pc.sort_indices(array))
    if len(array):
        low, high = pc.min_max(array).values()
        if low.as_py() < 0 or (
            target.record_count is not None and high.as_py() >= target.record_count
        ):
            bad = low.as_py() if low.as_py() < 0 else high.as_py()
            raise InvalidValueError(
                f"position {bad} is outside data file {target.file_path} "
                f"({target.record_count} rows)"
            )
    return array


def _spec(metadata: TableMetadata, spec_id: int) -> PartitionSpec:
    spec = metadata.spec_by_id(spec_id)
    if spec is None:
        raise ValidationError(f"partition spec {spec_id} is not a spec of the table")
    return spec


def _grouped(
    metadata: TableMetadata,
    deletes: Iterable[tuple[DeleteTarget, Any]],
    granularity: str,
) -> list[tuple[DeleteTarget, list[tuple[str, pa.Array]]]]:
    """The deletes by delete file to write: per (spec, partition) or per data file, each with
    its data files sorted by path (spec: rows "sorted by file_path then pos")."""
    groups: dict[Any, tuple[DeleteTarget, dict[str, list[pa.Array]]]] = {}
    for target, values in deletes:
        positions = _positions(values, target)
        if len(positions) == 0:
            continue
        _spec(metadata, target.spec_id)
        if granularity == GRANULARITY_FILE:
            key: Any = target.file_path
        else:
            key = (target.spec_id, tuple(sorted((k, repr(v)) for k, v in target.partition.items())))
        group = groups.setdefault(key, (target, {}))
        group[1].setdefault(target.file_path, []).append(positions)
    out = []
    for first, by_path in groups.values():
        files = []
        for path in sorted(by_path):
            parts = by_path[path]
            merged = parts[0] if len(parts) == 1 else _positions(pa.concat_arrays(parts), first)
            files.append((path, merged))
        out.append((first, files))
    return out


_POSITION_SCHEMA = pa.schema(
    [
        pa.field(
            "file_path",
            pa.string(),
            False,
            {b"PARQUET:field_id": str(DELETE_FILE_PATH_ID).encode()},
        ),
        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(DELETE_POS_ID).encode()}),
    ]
)
# The file's Iceberg schema (Java stores it under "iceberg.schema"); reserved ids, so written
# as JSON directly rather than through Schema, which refuses them in table schemas.
_POSITION_ICEBERG_JSON = json.dumps(
    {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": DELETE_FILE_PATH_ID, "name": "file_path", "required": True, "type": "string"},
            {"id": DELETE_POS_ID, "name": "pos", "required": True, "type": "long"},
        ],
    }
)


def _parquet_options(config: WriteConfig) -> dict[str, Any]:
    return {
        "compression": config.codec,
        "compression_level": config.compression_level,
        "data_page_size": config.page_size,
        "max_rows_per_page": config.page_row_limit,
        "dictionary_pagesize_limit": config.dict_size,
        "use_dictionary": config.dictionary,
        "store_schema": False,
        "write_page_checksum": config.page_checksum,
    }


def write_position_deletes(
    metadata: TableMetadata,
    io: FileIO,
    deletes: Iterable[tuple[DeleteTarget, Any]],
    *,
    properties: Mapping[str, str] | None = None,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[tuple[int, DataFile]]:
    """Writes v2 position delete files deleting, from each target data file, its positions
    (an int64 array, ints, or a ``PositionDeleteIndex``); returns each file with its spec id.
    When a write fails, the files it wrote are deleted."""
    if metadata.format_version < 2:
        raise UnsupportedOperationError(
            "row-level deletes need format version 2 or later; this table is v1 (upgrade it "
            "with format-version=2)"
        )
    config = delete_file_config(metadata, properties)
    namer = _Namer(config.parquet.locations, operation_id, partition_id, task_id)
    written: list[tuple[int, DataFile]] = []
    try:
        for first, files in _grouped(metadata, deletes, config.granularity):
            spec = _spec(metadata, first.spec_id)
            folder = (
                None if spec.is_unpartitioned() else partition_path(metadata, spec, first.partition)
            )
            written.extend(
                (first.spec_id, f)
                for f in _write_position_files(metadata, io, config, namer, folder, first, files)
            )
    except BaseException:
        for _, f in written:
            _delete_quietly(io, f.file_path)
        raise
    return written


def _write_position_files(
    metadata: TableMetadata,
    io: FileIO,
    config: DeleteFileConfig,
    namer: _Namer,
    folder: str | None,
    first: DeleteTarget,
    files: list[tuple[str, pa.Array]],
) -> list[DataFile]:
    """One partition's (or data file's) deletes, rolled at the target size between row
    groups."""
    out: list[DataFile] = []
    writer: _PositionFile | None = None

    def batches() -> Iterable[pa.RecordBatch]:
        for path, positions in files:
            for start in range(0, len(positions), _POSITIONS_PER_GROUP):
                chunk = positions.slice(start, _POSITIONS_PER_GROUP)
                paths = pa.DictionaryArray.from_arrays(
                    pa.array([0] * len(chunk), pa.int32()), pa.array([path])
                ).cast(pa.string())
                yield pa.record_batch([paths, chunk], schema=_POSITION_SCHEMA)

    try:
        for batch in batches():
            if writer is None:
                writer = _PositionFile(metadata, io, config, namer.next(folder, "parquet"))
            writer.write(batch)
            if writer.size() >= config.target_file_size:
                out.append(writer.close(first))
                writer = None
        if writer is not None:
            out.append(writer.close(first))
            writer = None
    except BaseException:
        if writer is not None:
            writer.abort()
        for f in out:
            _delete_quietly(io, f.file_path)
        raise
    return out


class _PositionFile:
    def __init__(
        self, metadata: TableMetadata, io: FileIO, config: DeleteFileConfig, location: str
    ) -> None:
        self.io = io
        self.location = location
        self.sink = open_arrow_output(raw(io), location)
        self.writer = pq.ParquetWriter(
            self.sink, _POSITION_SCHEMA, **_parquet_options(config.parquet)
        )
        # Java's Parquet writer stores the file's Iceberg schema under "iceberg.schema".
        self.writer.add_key_value_metadata({"iceberg.schema": _POSITION_ICEBERG_JSON})
        self.rows = 0
        self.paths: set[str] = set()
        self.low_path: str | None = None
        self.high_path: str | None = None
        self.low_pos: int | None = None
        self.high_pos: int | None = None

    def write(self, batch: pa.RecordBatch) -> None:
        self.writer.write_batch(batch, row_group_size=max(batch.num_rows, 1))
        self.rows += batch.num_rows
        path = batch.column(0)[0].as_py()
        self.paths.add(path)
        # Rows arrive sorted by path, then position.
        self.low_path = path if self.low_path is None else min(self.low_path, path)
        self.high_path = path if self.high_path is None else max(self.high_path, path)
        low, high = pc.min_max(batch.column(1)).values()
        self.low_pos = low.as_py() if self.low_pos is None else min(self.low_pos, low.as_py())
        self.high_pos = high.as_py() if self.high_pos is None else max(self.high_pos, high.as_py())

    def size(self) -> int:
        return int(self.sink.tell())

    def close(self, first: DeleteTarget) -> DataFile:
        self.writer.close()
        size = self.size()
        self.sink.close()
        footer = self.writer.writer.metadata
        sizes: dict[int, int] = {}
        for group in range(footer.num_row_groups):
            for leaf in leaves(_POSITION_SCHEMA):
                assert leaf.field_id is not None
                chunk = footer.row_group(group).column(leaf.index)
                sizes[leaf.field_id] = sizes.get(leaf.field_id, 0) + chunk.total_compressed_size
        assert self.low_path is not None and self.high_path is not None
        assert self.low_pos is not None and self.high_pos is not None
        referenced = next(iter(self.paths)) if len(self.paths) == 1 else None
        return DataFile(
            content=POSITION_DELETES,
            file_path=self.location,
            file_format="PARQUET",
            partition=dict(first.partition),
            record_count=self.rows,
            file_size_in_bytes=size,
            column_sizes=sizes,
            value_counts={DELETE_FILE_PATH_ID: self.rows, DELETE_POS_ID: self.rows},
            null_value_counts={DELETE_FILE_PATH_ID: 0, DELETE_POS_ID: 0},
            nan_value_counts=None,
            lower_bounds={
                DELETE_FILE_PATH_ID: self.low_path.encode("utf-8"),
                DELETE_POS_ID: _native.value_to_bytes("long", self.low_pos),
            },
            upper_bounds={
                DELETE_FILE_PATH_ID: self.high_path.encode("utf-8"),
                DELETE_POS_ID: _native.value_to_bytes("long", self.high_pos),
            },
            key_metadata=None,
            split_offsets=split_offsets(footer),
            equality_ids=None,
            sort_order_id=None,
            first_row_id=None,
            referenced_data_file=referenced,
            content_offset=None,
            content_size_in_bytes=None,
        )

    def abort(self) -> None:
        try:
            self.writer.close()
            self.sink.close()
        except Exception:
            pass
        _delete_quietly(self.io, self.location)


def write_deletion_vectors(
    metadata: TableMetadata,
    io: FileIO,
    vectors: Iterable[tuple[DeleteTarget, Any]],
    *,
    operation_id: str | None = None,
    partition_id: int = 0,
    task_id: int = 0,
) -> list[tuple[int, DataFile]]:
    """Writes one Puffin file holding a deletion vector for each target data file (its
    positions: an int64 array, ints, or a ``PositionDeleteIndex`` holding every position the
    file's vector must delete, earlier ones included: spec, at most one vector per data file)
    and returns each vector's delete file entry with its spec id. Nothing is written when no
    target has positions."""
    if metadata.format_version < 3:
        raise UnsupportedOperationError(
            f"deletion vectors are written to v3 tables; this table is v{metadata.format_version} "
            "(its position deletes are Parquet files)"
        )
    config = delete_file_config(metadata)
    targets: list[tuple[DeleteTarget, pa.Array]] = []
    seen: set[str] = set()
    for target, values in vectors:
        positions = _positions(values, target)
        if len(positions) == 0:
            continue
        if target.file_path in seen:
            raise ValidationError(
                f"two deletion vectors for data file {target.file_path}: merge them (spec: at "
                "most one deletion vector per data file)"
            )
        seen.add(target.file_path)
        _spec(metadata, target.spec_id)
        targets.append((target, positions))
    if not targets:
        return []
    # Java's DV writer asks the file factory for an unpartitioned location: one Puffin file
    # per task holds the vectors of data files in any partition.
    location = _Namer(config.parquet.locations, operation_id, partition_id, task_id).next(
        None, "puffin"
    )
    entries = _native.write_deletion_vector_puffin(
        location, [(t.file_path, p) for t, p in targets], raw(io)
    )
    out = []
    for (target, _), entry in zip(targets, entries, strict=True):
        out.append(
            (
                target.spec_id,
                DataFile(
                    content=POSITION_DELETES,
                    file_path=location,
                    file_format="PUFFIN",
                    partition=dict(target.partition),
                    record_count=int(entry["record_count"]),
                    file_size_in_bytes=int(entry["file_size_in_bytes"]),
                    column_sizes=None,
                    value_counts=None,
                    null_value_counts=None,
                    nan_value_counts=None,
                    lower_bounds=None,
                    upper_bounds=None,
                    key_metadata=None,
                    split_offsets=None,
                    equality_ids=None,
                    sort_order_id=None,
                    first_row_id=None,
                    referenced_data_file=target.file_path,
                    content_offset=int(entry["content_offset"]),
                    content_size_in_bytes=int(entry["content_size_in_bytes"]),
                ),
            )
        )
    return out


def write_equality_deletes(
    metadata: TableMetadata,
    io: FileIO,
    keys: Any,
    field_ids: Sequence[int],
    *,
    spec_id: int,
    properties: Mapping[str, str] | None = None,
    operation_id: str | None = None,
) -> list[tuple[int, DataFile]]:
    """Writes equality delete files of ``keys`` (Arrow data whose columns are the key columns,
    named as the table schema names the fields ``field_ids``) under partition spec
    ``spec_id`` (the table's, whose source columns must be key columns, or an unpartitioned
    one: global deletes); returns each file with ``spec_id``. A null key value deletes the rows
    whose column is null (spec: "Equality Delete Files")."""
    from frazil.table.write import write_files

    if metadata.format_version < 2:
        raise UnsupportedOperationError(
            "equality deletes need format version 2 or later; this table is v1"
        )
    config = delete_file_config(metadata, properties)
    schema = metadata.schema()
    fields = []
    for field_id in field_ids:
        found = schema.find_field(field_id)
        if found is None:
            raise ValidationError(f"equality field id {field_id} is not a column of the table")
        fields.append(found)
    key_schema = Schema(*fields, schema_id=schema.schema_id)
    props = {
        **_delete_properties({**metadata.properties, **(properties or {})}),
        "write.target-file-size-bytes": str(config.target_file_size),
    }
    files = write_files(
        metadata,
        io,
        keys,
        schema=key_schema,
        spec=_spec(metadata, spec_id),
        sorted_by=None,
        properties=props,
        modes=metrics_modes(schema, None, props),
        content=EQUALITY_DELETES,
        equality_ids=tuple(field_ids),
        operation_id=operation_id,
    )
    return [(spec_id, f) for f in files]


def _delete_quietly(io: FileIO, location: str | None) -> None:
    if location is None:
        return
    try:
        io.delete(location)
    except Exception:
        pass
