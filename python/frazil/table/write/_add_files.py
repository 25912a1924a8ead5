"""An existing Parquet file described as a data file of a table (for ``add_files``), with
metrics from its footer as Java's ``ParquetUtil.fileMetrics`` computes them and partition
values derived from the footer bounds of the partition source columns (as pyiceberg's
``add_files``: a transform must give one value for the file's lower and upper bound)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from frazil import transforms, values
from frazil.errors import InvalidDataError
from frazil.io import FileIO, raw
from frazil.io._arrow import open_arrow_file
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.table._arrow_schema import arrow_schema
from frazil.table.write._config import MetricsMode, metrics_modes
from frazil.table.write._metrics import Leaf, footer_metrics, leaves
from frazil.table.write._partition import Partitioner
from frazil.table.write._schema import _primitive_fits
from frazil.types import PrimitiveType

__all__ = ["data_file_from_parquet"]

_FULL = MetricsMode("full")


def _file_leaves(file_schema: pa.Schema, metadata: TableMetadata, location: str) -> list[Leaf]:
    """The file's leaf columns with their field ids: from the file, else from the table's
    name mapping; a file with neither is refused."""
    columns = leaves(file_schema)
    if any(leaf.field_id is not None for leaf in columns):
        return columns
    mapping = metadata.name_mapping()
    if mapping is None:
        raise InvalidDataError(
            f"{location}: the Parquet file has no field ids and the table has no name "
            "mapping (schema.name-mapping.default) to assign them"
        )
    return [
        Leaf(leaf.index, mapping.field_id(leaf.path), leaf.path, leaf.repeated) for leaf in columns
    ]


def _conflicts(file_schema: pa.Schema, columns: list[Leaf], schema: Schema, location: str) -> None:
    problems = []
    seen: dict[int, tuple[str, ...]] = {}
    for leaf in columns:
        if leaf.field_id is None:
            continue
        name = ".".join(leaf.path)
        if leaf.field_id in seen:
            problems.append(
                f"{name}: field id {leaf.field_id} also used by {'.'.join(seen[leaf.field_id])}"
            )
        seen[leaf.field_id] = leaf.path
        f = schema.find_field(leaf.field_id)
        if f is None:
            problems.append(f"{name}: field id {leaf.field_id} is not in the table schema")
            continue
        arrow_type = _leaf_type(file_schema, leaf.path)
        # An added file is not rewritten: nanoseconds stay nanoseconds, never downcast.
        if not isinstance(f.field_type, PrimitiveType) or not _primitive_fits(
            f.field_type, arrow_type, downcast_ns=False
        ):
            problems.append(
                f"{name}: field id {leaf.field_id} is {schema.find_column_name(leaf.field_id)} "
                f"of type {f.field_type} in the table, but {arrow_type} in the file"
            )
    if problems:
        raise InvalidDataError(
            f"{location}: the Parquet file's field ids conflict with the table schema:\n  "
            + "\n  ".join(problems)
        )


def _leaf_type(file_schema: pa.Schema, path: tuple[str, ...]) -> pa.DataType:
    t = file_schema.field(path[0]).type
    for name in path[1:]:
        if pa.types.is_struct(t):
            t = t.field(name).type
        elif pa.types.is_map(t):
            t = t.key_type if name == "key" else t.item_type
        else:
            t = t.value_type
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    return t


def _partition(
    metadata: TableMetadata,
    lower: dict[int, bytes],
    upper: dict[int, bytes],
    nulls: dict[int, int],
    values_count: dict[int, int],
    location: str,
) -> dict[str, Any]:
    schema = metadata.schema()
    spec = metadata.spec()
    partitioner = Partitioner(schema, spec)
    read = arrow_schema(schema)
    out: dict[str, Any] = {}
    for f, target in zip(spec.fields, partitioner.arrow_type, strict=True):
        source = schema.find_field(f.source_id)
        assert source is not None
        t = source.field_type
        if f.source_id in nulls and nulls[f.source_id] == values_count.get(f.source_id):
            out[f.name] = None
            continue
        if f.source_id not in lower or f.source_id not in upper:
            raise InvalidDataError(
                f"{location}: cannot infer partition field {f.name!r}: the footer has no "
                f"bounds for column {source.name!r}"
            )
        if nulls.get(f.source_id, 0) and f.transform != "void":
            raise InvalidDataError(
                f"{location}: cannot infer partition field {f.name!r}: column "
                f"{source.name!r} holds both nulls and values"
            )
        arrow_source = _source_arrow_type(read, schema, f.source_id)
        pair = pa.array(
            [
                values.from_bytes(str(t), lower[f.source_id]),
                values.from_bytes(str(t), upper[f.source_id]),
            ],
            arrow_source,
        )
        low, high = transforms.apply(f.transform, pair).cast(target.type).to_pylist()
        if low != high:
            raise InvalidDataError(
                f"{location}: cannot infer partition field {f.name!r}: the file's {source.name} "
                f"values span more than one partition ({low!r} to {high!r})"
            )
        out[f.name] = low
    return out


def _source_arrow_type(read: pa.Schema, schema: Schema, field_id: int) -> pa.DataType:
    path = [*schema.parent_ids(field_id), field_id]
    first = schema.find_field(path[0])
    assert first is not None
    t = read.field(first.name).type
    for fid in path[1:]:
        f = schema.find_field(fid)
        assert f is not None
        t = t.field(f.name).type
    return t


def data_file_from_parquet(location: str, metadata: TableMetadata, io: FileIO) -> DataFile:
    """The :class:`DataFile` of an existing Parquet file, with metrics from its footer (per
    the table's ``write.metadata.metrics.*``) and partition values from its bounds. A file
    whose field ids conflict with the table schema, or without ids when the table has no
    name mapping, is refused with an :class:`InvalidDataError` naming the file."""
    schema = metadata.schema()
    try:
        with open_arrow_file(raw(io), location) as handle:
            parquet = pq.ParquetFile(handle)
            file_meta = parquet.metadata
            file_schema = parquet.schema_arrow
            size = int(handle.size())
    except (pa.ArrowInvalid, OSError) as error:
        if isinstance(error, InvalidDataError):
            raise
        raise InvalidDataError(f"{location}: not a readable Parquet file: {error}") from None
    columns = _file_leaves(file_schema, metadata, location)
    _conflicts(file_schema, columns, schema, location)
    modes = metrics_modes(schema, metadata.sort_order(), metadata.properties)
    types = {
        f.field_id: f.field_type
        for _, f in schema.all_fields()
        if isinstance(f.field_type, PrimitiveType)
    }
    footer = footer_metrics(file_meta, columns, types, modes, with_bounds=True)
    partition: dict[str, Any] = {}
    if metadata.spec().fields:
        # Partition values need untruncated bounds of the source columns.
        sources = {f.source_id for f in metadata.spec().fields}
        full = {fid: (_FULL if fid in sources else MetricsMode("none")) for fid in modes}
        exact = footer_metrics(file_meta, columns, types, full, with_bounds=True)
        partition = _partition(
            metadata,
            exact.lower_bounds,
            exact.upper_bounds,
            exact.null_value_counts,
            exact.value_counts,
            location,
        )
    return DataFile(
        content=0,
        file_path=location,
        file_format="PARQUET",
        partition=partition,
        record_count=footer.record_count,
        file_size_in_bytes=size,
        column_sizes=footer.column_sizes,
        value_counts=footer.value_counts,
        null_value_counts=footer.null_value_counts,
        nan_value_counts={},
        lower_bounds=footer.lower_bounds,
        upper_bounds=footer.upper_bounds,
        key_metadata=None,
        split_offsets=footer.split_offsets,
        equality_ids=None,
        sort_order_id=None,
        first_row_id=None,
        referenced_data_file=None,
        content_offset=None,
        content_size_in_bytes=None,
    )
