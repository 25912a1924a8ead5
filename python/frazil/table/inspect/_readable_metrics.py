"""The ``readable_metrics`` column of the files and entries metadata tables (Java's
``MetricsUtil.readableMetricsSchema`` / ``readableMetricsStruct``): per primitive column of the
table's current schema, by full name in Java's string order, a struct of the file's
column_size, value_count, null_value_count and nan_value_count for it, and its lower and upper
bound decoded as the column's type.

Bounds are decoded with the Rust core's single-value decoder (``value_from_bytes``, which also
widens bounds written before an int->long, float->double or date->timestamp promotion; spec:
"Schema Evolution") into Iceberg's physical values (days, microseconds or nanoseconds,
unscaled decimals), which become one Arrow array per column at once.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from frazil import _native
from frazil.errors import InvalidDataError
from frazil.schema import Schema
from frazil.table._arrow_schema import scan_arrow_schema
from frazil.types import DecimalType, NestedField, UnknownType

__all__ = ["READABLE_METRICS", "ReadableMetrics"]

READABLE_METRICS = "readable_metrics"
# (metric, the data file map it comes from); the bounds follow the counts.
_COUNTS = (
    ("column_size", "column_sizes"),
    ("value_count", "value_counts"),
    ("null_value_count", "null_value_counts"),
    ("nan_value_count", "nan_value_counts"),
)
_BOUNDS = (("lower_bound", "lower_bounds"), ("upper_bound", "upper_bounds"))
METRIC_MAPS = tuple(column for _, column in (*_COUNTS, *_BOUNDS))
_DECIMAL_CONTEXT = decimal.Context(prec=100)


def _java_order(name: str) -> bytes:
    # Java's String.compareTo orders by UTF-16 code units.
    return name.encode("utf-16-be")


@dataclass(frozen=True)
class _Column:
    name: str
    field: NestedField
    arrow_type: pa.DataType


class ReadableMetrics:
    """The ``readable_metrics`` column of one table schema."""

    def __init__(self, schema: Schema, uuid_type: str = "uuid") -> None:
        primitives = sorted(
            ((name, f) for name, f in schema.all_fields() if f.field_type.is_primitive),
            key=lambda item: _java_order(item[0]),
        )
        # One Arrow conversion for all of them; the names are placeholders (full names may
        # repeat a top-level name), the ids are the columns' own.
        typed = scan_arrow_schema(
            Schema(
                fields=[
                    NestedField(f.field_id, f"c{i}", f.field_type)
                    for i, (_, f) in enumerate(primitives)
                ]
            ),
            uuid_type,
        )
        self._columns = tuple(
            _Column(name, f, typed.field(i).type) for i, (name, f) in enumerate(primitives)
        )

    @property
    def arrow_type(self) -> pa.StructType:
        return pa.struct([pa.field(c.name, self._struct_type(c)) for c in self._columns])

    @property
    def arrow_field(self) -> pa.Field:
        return pa.field(READABLE_METRICS, self.arrow_type)

    @staticmethod
    def _struct_type(column: _Column) -> pa.StructType:
        fields = [pa.field(name, pa.int64()) for name, _ in _COUNTS]
        fields += [pa.field(name, column.arrow_type) for name, _ in _BOUNDS]
        return pa.struct(fields)

    def of(self, data_files: pa.StructArray) -> pa.StructArray:
        """The column for ``data_files`` (structs with the data file's metric maps)."""
        rows = len(data_files)
        maps = {name: self._maps(data_files, name) for name in METRIC_MAPS}
        children = []
        for column in self._columns:
            field_id = column.field.field_id
            metrics = [
                pa.array([None if m is None else m.get(field_id) for m in maps[source]], pa.int64())
                for _, source in _COUNTS
            ]
            metrics += [
                self._bounds(column, [None if m is None else m.get(field_id) for m in maps[source]])
                for _, source in _BOUNDS
            ]
            children.append(
                pa.StructArray.from_arrays(metrics, fields=list(self._struct_type(column)))
            )
        if not children:
            return pa.array([{}] * rows, pa.struct([]))
        return pa.StructArray.from_arrays(children, fields=list(self.arrow_type))

    @staticmethod
    def _maps(data_files: pa.StructArray, name: str) -> list[dict[int, Any] | None]:
        names = {data_files.type.field(i).name for i in range(data_files.type.num_fields)}
        if name not in names:
            return [None] * len(data_files)
        return [None if m is None else dict(m) for m in data_files.field(name).to_pylist()]

    @staticmethod
    def _bounds(column: _Column, raw: Sequence[bytes | None]) -> pa.Array:
        field_type = column.field.field_type
        if isinstance(field_type, UnknownType):
            return pa.nulls(len(raw), column.arrow_type)  # unknown has no values (v3)
        kind = str(field_type)
        out: list[Any] = []
        for data in raw:
            if data is None:
                out.append(None)
                continue
            try:
                value = _native.value_from_bytes(kind, data)
            except Exception as error:
                raise InvalidDataError(
                    f"column {column.name} ({kind}): cannot decode bound {data.hex()}: {error}"
                ) from None
            if isinstance(field_type, DecimalType):
                # The decoder gives the unscaled integer.
                value = decimal.Decimal(value).scaleb(-field_type.scale, _DECIMAL_CONTEXT)
            out.append(value)
        return _arrow_values(out, column.arrow_type)


def _arrow_values(physical: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """Physical values as an array of ``arrow_type``: dates, times and timestamps are their
    integers (days; micro- or nanoseconds in the type's unit), viewed as the type."""
    if pa.types.is_date32(arrow_type):
        return pa.array(physical, pa.int32()).view(arrow_type)
    if pa.types.is_timestamp(arrow_type) or pa.types.is_time64(arrow_type):
        return pa.array(physical, pa.int64()).view(arrow_type)
    return pa.array(physical, arrow_type)
