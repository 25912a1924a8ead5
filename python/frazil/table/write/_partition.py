"""Rows split by partition and ordered by the sort order, vectorized: the transforms run over
whole columns in the Rust core (:mod:`frazil.transforms`), the core groups the rows by their
partition tuples and moves them into one reordered copy (a counting sort), and each partition
is a zero-copy slice of it; Python only touches one value per partition.

Partition paths follow Java's ``PartitionSpec.partitionToPath``: ``name=value`` segments
joined by ``/``, both URL-encoded (``java.net.URLEncoder``), the value being the transform's
human string (``Transform.toHumanString``; null is ``null``)."""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native, transforms
from frazil._threads import threads as default_threads
from frazil.errors import InvalidValueError
from frazil.manifest import manifest_entry_schema
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import NullOrder, SortDirection, SortOrder
from frazil.table._human import human_string
from frazil.types import IcebergType, ListType, MapType

__all__ = ["Partitioner", "gather_rows", "java_url_encode", "partition_path", "sort_batch"]


def java_url_encode(text: str) -> str:
    """``URLEncoder.encode(text, UTF_8)``: letters, digits and ``.-*_`` kept, space as
    ``+``, everything else as ``%XX`` of its UTF-8 bytes (``~`` included, unlike Python)."""
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def source_column(batch: pa.RecordBatch | pa.Table, schema: Schema, source_id: int) -> Any:
    """The values of field ``source_id`` (top level or inside structs), null where an
    enclosing struct is null."""
    names = []
    for field_id in (*schema.parent_ids(source_id), source_id):
        field = schema.find_field(field_id)
        assert field is not None
        names.append(field.name)
    array: Any = batch.column(names[0])
    for name in names[1:]:
        # flatten() folds the struct's validity into its children.
        index = array.type.get_field_index(name)
        array = array.flatten()[index]
    return array


def _check_source(schema: Schema, source_id: int, what: str) -> None:
    field = schema.find_field(source_id)
    if field is None:
        raise InvalidValueError(f"{what}: source column {source_id} is not in the table schema")
    for parent in schema.parent_ids(source_id):
        parent_field = schema.find_field(parent)
        if parent_field is not None and isinstance(parent_field.field_type, ListType | MapType):
            raise InvalidValueError(f"{what}: source column {source_id} is inside a list or map")


def _hashable(value: Any) -> Hashable:
    # NaN != NaN would give every NaN row its own writer.
    if isinstance(value, float) and math.isnan(value):
        return ("NaN",)
    return (type(value).__name__, value)


def _key_codes(key: pa.Array) -> pa.Array:
    """What the Rust core groups one partition field by: integers and dates as they are (the
    core codes small ranges directly, as transforms give: days, hours, buckets), times and
    timestamps as their integers, other values as dictionary codes (null a value of its own;
    NaN too: dictionary encoding hashes every NaN as one value)."""
    if pa.types.is_integer(key.type) or pa.types.is_date32(key.type):
        return key
    if pa.types.is_time(key.type) or pa.types.is_timestamp(key.type):
        return key.cast(pa.int64())
    return pc.dictionary_encode(key, null_encoding="encode").indices


def gather_rows(rows: pa.Table, indices: pa.Array) -> pa.Table:
    """One copy of ``rows`` reordered by ``indices``, gathered by the Rust core (arrow-rs
    ``take``, columns in parallel, without the GIL; less CPU than pyarrow's ``take``, see
    src/write/gather.rs)."""
    return _native.gather_rows(rows, indices)


@dataclass(frozen=True)
class Partition:
    """One partition's values: ``values`` by partition field name (the Python values
    :func:`frazil.manifest.write_manifest` takes), ``path`` its Java-style path."""

    key: Hashable
    values: dict[str, Any]
    path: str


class Partitioner:
    """Splits batches of the written schema by the partition tuples of ``spec``."""

    def __init__(self, schema: Schema, spec: PartitionSpec) -> None:
        self.schema = schema
        self.spec = spec
        for f in spec.fields:
            _check_source(schema, f.source_id, f"partition field {f.name!r}")
        entry = manifest_entry_schema(spec.to_json(), schema.to_json())
        self.arrow_type: pa.StructType = entry.field("data_file").type.field("partition").type
        self.result_types: list[IcebergType] = list(
            f.field_type for f in spec.partition_type(schema).fields
        )
        self._paths: dict[Hashable, Partition] = {}

    def _keys(self, rows: pa.Table) -> list[pa.Array]:
        keys = []
        # The core's transforms run on several threads when the chunk is large enough.
        threads = min(default_threads(), max(1, rows.num_rows >> 18))
        for f, target in zip(self.spec.fields, self.arrow_type, strict=True):
            values = source_column(rows, self.schema, f.source_id)
            key = transforms.apply(f.transform, values, threads=threads).cast(target.type)
            if isinstance(key, pa.ChunkedArray):
                key = key.combine_chunks()
            keys.append(key)
        return keys

    def split(self, rows: pa.Table) -> tuple[list[tuple[Partition, tuple[int, int]]], pa.Table]:
        """The partitions of ``rows`` and the rows reordered by partition: each partition
        with the (start, length) of its rows in them. Rows keep their order within a
        partition. The Rust core groups and moves the rows (a counting sort: one sequential
        pass per column, see src/write/scatter.rs); ``rows`` come back as they are when every
        row is in one partition."""
        if not self.spec.fields:
            return [(self._partition(()), (0, rows.num_rows))], rows
        keys = self._keys(rows)
        grouped, lengths, first_rows = _native.partition_rows(
            rows, [_key_codes(key) for key in keys]
        )
        firsts = pa.array(first_rows, pa.int64())
        values = [key.take(firsts).to_pylist() for key in keys]
        parts = []
        start = 0
        for i, length in enumerate(lengths):
            parts.append((self._partition(tuple(v[i] for v in values)), (start, length)))
            start += length
        return parts, rows if grouped is None else grouped

    def _partition(self, values: tuple[Any, ...]) -> Partition:
        key = tuple(_hashable(v) for v in values)
        known = self._paths.get(key)
        if known is not None:
            return known
        named = {f.name: v for f, v in zip(self.spec.fields, values, strict=True)}
        part = Partition(key, named, self._path(values))
        self._paths[key] = part
        return part

    def _path(self, values: tuple[Any, ...]) -> str:
        segments = []
        for f, result_type, value, arrow in zip(
            self.spec.fields, self.result_types, values, self.arrow_type, strict=True
        ):
            segments.append(
                f"{java_url_encode(f.name)}={java_url_encode(_human(f, result_type, value, arrow))}"
            )
        return "/".join(segments)


def _human(f: PartitionField, result_type: IcebergType, value: Any, arrow: pa.Field) -> str:
    if value is None:
        return "null"
    data = _native.value_to_bytes(str(result_type), _canonical(value, arrow.type))
    text = human_string(f.transform, result_type, data)
    assert text is not None
    return text


def _canonical(value: Any, arrow: pa.DataType) -> Any:
    """A partition value as the Rust core's canonical primitive (ints for dates and times,
    the unscaled integer of a decimal)."""
    if pa.types.is_date(arrow) or pa.types.is_time(arrow) or pa.types.is_timestamp(arrow):
        width = pa.int32() if pa.types.is_date32(arrow) else pa.int64()
        return pa.scalar(value, arrow).cast(width).as_py()
    if pa.types.is_decimal(arrow):
        return int(value.scaleb(arrow.scale))
    return value


def sort_batch(batch: pa.Table, schema: Schema, order: SortOrder) -> pa.Table:
    """``batch`` ordered by ``order``: each sort field's transform applied to its column in
    the Rust core, nulls placed per field by sorting on a validity key before the value."""
    if not order.fields:
        return batch
    columns: list[Any] = []
    sort_keys: list[tuple[str, str]] = []
    for i, f in enumerate(order.fields):
        _check_source(schema, f.source_id, f"sort field {f}")
        values = transforms.apply(f.transform, source_column(batch, schema, f.source_id))
        # Nulls first: valid (true) after null (false) ascending; nulls last: is_null.
        nulls_key = (
            pc.is_valid(values) if f.null_order == NullOrder.NULLS_FIRST else pc.is_null(values)
        )
        columns += [nulls_key, values]
        direction = "ascending" if f.direction == SortDirection.ASC else "descending"
        sort_keys += [(f"n{i}", "ascending"), (f"v{i}", direction)]
    names = [name for i in range(len(order.fields)) for name in (f"n{i}", f"v{i}")]
    indices = pc.sort_indices(pa.table(columns, names), sort_keys=sort_keys)
    return gather_rows(batch, indices)


def _schema_with_sources(metadata: Any, spec: PartitionSpec) -> Schema:
    """The newest schema of the table holding every source column of ``spec`` (an old spec may
    name a column dropped since)."""
    wanted = [f.source_id for f in spec.fields]
    schemas: list[Schema] = [metadata.schema(), *reversed(list(metadata.schemas))]
    for schema in schemas:
        if all(schema.find_field(source) is not None for source in wanted):
            return schema
    raise InvalidValueError(
        f"partition spec {spec.spec_id}: no schema of the table has all its source columns"
    )


def partition_path(metadata: Any, spec: PartitionSpec, values: Any) -> str:
    """The ``name=value/...`` path of the partition tuple ``values`` (by partition field name,
    as a manifest's ``partition`` struct reads) of ``spec``: where a file of that partition
    goes (Java's ``PartitionSpec.partitionToPath``)."""
    partitioner = Partitioner(_schema_with_sources(metadata, spec), spec)
    return partitioner._path(tuple(values.get(f.name) for f in spec.fields))
