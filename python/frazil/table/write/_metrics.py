"""Column metrics of a Parquet data file as Java's ``ParquetMetrics`` computes them
(spec: "Manifests", data_file fields 108-128; bounds in Appendix D's binary form).

- column_sizes: the compressed size of every column chunk, by field id (list elements and
  map keys/values included), for columns whose metrics mode is not ``none``.
- value_counts and null_value_counts: from the footer (each column chunk's value count and
  null count), only for columns outside lists and maps; a chunk without statistics leaves
  the column without counts (a missing null count is unknown, not zero).
- nan_value_counts (float and double) and lower/upper bounds: for files this package writes,
  from the data as it is written (Java's writers collect them the same way, ``FloatFieldMetrics``:
  NaN excluded from bounds, -0.0 below 0.0); for existing files (``add_files``), from the footer
  as Java's ``metricsFromFooter``. Strings and binary are truncated per ``truncate(N)``, an
  upper bound incremented and dropped when it cannot be. No counts or bounds for fields inside
  lists and maps (Java's ``MetricsVisitor``)."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from frazil import _native
from frazil.table.write._config import MetricsMode
from frazil.types import (
    BinaryType,
    DoubleType,
    FloatType,
    IcebergType,
    PrimitiveType,
    StringType,
)

__all__ = [
    "BoundsCollector",
    "Leaf",
    "footer_metrics",
    "leaves",
    "truncate_binary_max",
    "truncate_string_max",
]

FIELD_ID = b"PARQUET:field_id"


# --- truncation (Java's UnicodeUtil / BinaryUtil) ---------------------------------------------


def truncate_string_max(value: str, length: int) -> str | None:
    """The smallest-looking string of at most ``length`` code points above every string with
    ``value``'s prefix: the last code point that can be is incremented (skipping the
    surrogates U+D800..U+DFFF); None when none can."""
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        code = ord(value[i])
        if code == 0x10FFFF:
            continue
        following = 0xE000 if code == 0xD7FF else code + 1
        return value[:i] + chr(following)
    return None


def truncate_binary_max(value: bytes, length: int) -> bytes | None:
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        if value[i] != 0xFF:
            return value[:i] + bytes([value[i] + 1])
    return None


def _truncate(t: IcebergType, lower: Any, upper: Any, mode: MetricsMode) -> tuple[Any, Any]:
    if mode.kind != "truncate" or mode.length is None:
        return lower, upper
    if isinstance(t, StringType):
        return lower[: mode.length], truncate_string_max(upper, mode.length)
    if isinstance(t, BinaryType):
        return lower[: mode.length], truncate_binary_max(upper, mode.length)
    return lower, upper


# --- the leaf columns of a schema ----------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """A Parquet leaf column: its position among the leaves, Iceberg id and type, the Arrow
    names leading to it, and whether it is inside a list or map."""

    index: int
    field_id: int | None
    path: tuple[str, ...]
    repeated: bool


def leaves(schema: pa.Schema) -> list[Leaf]:
    """The leaf columns of an Arrow schema in Parquet's column order (depth first), with the
    field ids of their ``PARQUET:field_id`` metadata."""
    found: list[Leaf] = []

    def visit(f: pa.Field, path: tuple[str, ...], repeated: bool) -> None:
        t = f.type
        if pa.types.is_struct(t):
            for child in t:
                visit(child, (*path, child.name), repeated)
        elif pa.types.is_map(t):
            visit(t.key_field, (*path, "key"), True)
            visit(t.item_field, (*path, "value"), True)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            visit(t.value_field, (*path, "element"), True)
        else:
            metadata = f.metadata or {}
            raw = metadata.get(FIELD_ID)
            field_id = int(raw) if raw is not None else None
            found.append(Leaf(len(found), field_id, path, repeated))

    for f in schema:
        visit(f, (f.name,), False)
    return found


# --- from the data ------------------------------------------------------------------------------


_TEMPORAL = {
    "date": pa.int32(),
    "time": pa.int64(),
    "timestamp": pa.int64(),
    "timestamptz": pa.int64(),
    "timestamp_ns": pa.int64(),
    "timestamptz_ns": pa.int64(),
}


@dataclass
class _Running:
    lower: Any = None
    upper: Any = None
    nan_count: int = 0


@dataclass
class BoundsCollector:
    """Bounds and NaN counts of the columns outside lists and maps, folded over the batches
    written to one file."""

    targets: Mapping[int, tuple[tuple[str, ...], PrimitiveType, MetricsMode]]
    running: dict[int, _Running] = field(default_factory=dict)
    # (values, nulls) of the float and double columns: Java's writer counts them itself, so
    # they are known when the Parquet statistics are not (write.parquet.stats-enabled).
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)
    failure: BaseException | None = None  # of an update run in another thread

    def update(self, batch: pa.RecordBatch | pa.Table) -> None:
        try:
            self._update(batch)
        except BaseException as error:
            self.failure = error
            raise

    def check(self) -> None:
        """Raises what an update in another thread raised."""
        if self.failure is not None:
            raise self.failure

    def _update(self, batch: pa.RecordBatch | pa.Table) -> None:
        for field_id, (path, t, mode) in self.targets.items():
            array = _column(batch, path)
            state = self.running.setdefault(field_id, _Running())
            if isinstance(t, FloatType | DoubleType):
                values, nulls = self.counts.get(field_id, (0, 0))
                self.counts[field_id] = (values + len(array), nulls + array.null_count)
                nans = pc.is_nan(array)
                state.nan_count += int(pc.sum(nans).as_py() or 0)
                if mode.bounds:
                    _fold_float(state, array, nans)
            elif mode.bounds and array.null_count < len(array):
                temporal = _TEMPORAL.get(str(t))
                low: Any
                high: Any
                if isinstance(t, StringType | BinaryType) and _is_plain_bytes(array.type):
                    # The Rust core compares unsigned bytes (Iceberg's order for both) at a
                    # few ns a value; pyarrow's min_max costs ~40.
                    found = _native.bytes_min_max(array)
                    assert found is not None  # some value is not null
                    low, high = found
                    if isinstance(t, StringType):
                        low, high = low.decode("utf-8"), high.decode("utf-8")
                elif temporal is not None:
                    # Integers in the core's canonical unit: no datetime range limits.
                    low, high = (_Raw(s.as_py()) for s in pc.min_max(array.cast(temporal)).values())
                else:
                    low, high = (s.as_py() for s in pc.min_max(array).values())
                _fold(state, low, high)

    def bounds(
        self, types: Mapping[int, PrimitiveType], modes: Mapping[int, MetricsMode]
    ) -> tuple[dict[int, bytes], dict[int, bytes], dict[int, int]]:
        lower: dict[int, bytes] = {}
        upper: dict[int, bytes] = {}
        nans: dict[int, int] = {}
        for field_id, state in self.running.items():
            t = types[field_id]
            if isinstance(t, FloatType | DoubleType) and modes[field_id].counts:
                nans[field_id] = state.nan_count
            if state.lower is None or not modes[field_id].bounds:
                continue
            low, high = _truncate(t, state.lower, state.upper, modes[field_id])
            lower[field_id] = _to_bytes(t, low)
            if high is not None:
                upper[field_id] = _to_bytes(t, high)
        return lower, upper, nans


def _is_plain_bytes(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    )


def _column(batch: pa.RecordBatch | pa.Table, path: tuple[str, ...]) -> Any:
    array: Any = batch.column(path[0])
    for name in path[1:]:
        # flatten() folds a struct's validity into its children: a value under a null
        # struct is not written and must not move a bound.
        array = array.flatten()[array.type.get_field_index(name)]
    return array


def _fold(state: _Running, low: Any, high: Any) -> None:
    if state.lower is None or low < state.lower:
        state.lower = low
    if state.upper is None or high > state.upper:
        state.upper = high


def _fold_float(state: _Running, array: Any, nans: Any) -> None:
    values = array.filter(pc.invert(nans.fill_null(True)))
    if len(values) == 0:
        return
    low, high = (s.as_py() for s in pc.min_max(values).values())
    # min_max does not tell -0.0 from 0.0; Java's Float.compare orders -0.0 first.
    if low == 0.0 and _has_zero(values, negative=True):
        low = -0.0
    elif low == 0.0:
        low = 0.0
    if high == 0.0 and _has_zero(values, negative=False):
        high = 0.0
    elif high == 0.0:
        high = -0.0
    _fold_signed(state, low, high)


def _has_zero(values: Any, negative: bool) -> bool:
    zeros = pc.equal(values, 0.0)
    signed = pc.and_(zeros, pc.less(pc.divide(pa.scalar(1.0, values.type), values), 0.0))
    found = signed if negative else pc.and_(zeros, pc.invert(signed))
    return bool(pc.any(found).as_py())


def _order(value: float) -> tuple[float, int]:
    return (value, 1 if math.copysign(1.0, value) > 0 else 0)


def _fold_signed(state: _Running, low: float, high: float) -> None:
    if state.lower is None or _order(low) < _order(state.lower):
        state.lower = low
    if state.upper is None or _order(high) > _order(state.upper):
        state.upper = high


def _to_bytes(t: PrimitiveType, value: Any) -> bytes:
    """Appendix D binary of a bound, through the Rust core (``value_to_bytes``)."""
    return bytes(_native.value_to_bytes(str(t), _canonical(t, value)))


_EPOCH_DAYS = 719163  # date(1970, 1, 1).toordinal()


def _canonical(t: PrimitiveType, value: Any) -> Any:
    """A bound as the canonical primitive the Rust core encodes (see frazil.values)."""
    import datetime as dt
    import decimal

    kind = str(t)
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        micros = (value - epoch) // dt.timedelta(microseconds=1)
        nanos = getattr(value, "nanosecond", 0)
        return micros * 1000 + nanos if kind.endswith("_ns") else micros
    if isinstance(value, dt.date):
        return value.toordinal() - _EPOCH_DAYS
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond
        )
    if isinstance(value, decimal.Decimal):
        return int(value.scaleb(t.scale, context=decimal.Context(prec=80)))  # type: ignore[attr-defined]
    return value


# --- from the footer ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FooterMetrics:
    record_count: int
    column_sizes: dict[int, int]
    value_counts: dict[int, int]
    null_value_counts: dict[int, int]
    split_offsets: list[int]
    lower_bounds: dict[int, bytes]
    upper_bounds: dict[int, bytes]


def _row_groups(metadata: pq.FileMetaData) -> Iterator[pq.RowGroupMetaData]:
    for i in range(metadata.num_row_groups):
        yield metadata.row_group(i)


def split_offsets(metadata: pq.FileMetaData) -> list[int]:
    """The start of each row group (its first column chunk: the dictionary page when there is
    one), sorted, as Java's ``ParquetUtil.getSplitOffsets``."""
    offsets = []
    for group in _row_groups(metadata):
        if group.num_columns == 0:
            continue
        column = group.column(0)
        start = column.data_page_offset
        if column.has_dictionary_page and column.dictionary_page_offset is not None:
            start = min(start, column.dictionary_page_offset)
        offsets.append(start)
    return sorted(offsets)


def footer_metrics(
    metadata: pq.FileMetaData,
    columns: list[Leaf],
    types: Mapping[int, PrimitiveType],
    modes: Mapping[int, MetricsMode],
    with_bounds: bool,
) -> FooterMetrics:
    """Metrics from a Parquet footer; bounds only when ``with_bounds`` (existing files: Java's
    ``metricsFromFooter``), else the caller supplies them from the data."""
    sizes: dict[int, int] = {}
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    no_counts: set[int] = set()
    low: dict[int, Any] = {}
    high: dict[int, Any] = {}
    no_bounds: set[int] = set()
    for group in _row_groups(metadata):
        for leaf in columns:
            if leaf.field_id is None or leaf.field_id not in modes:
                continue
            field_id = leaf.field_id
            mode = modes[field_id]
            if not mode.counts:
                continue
            chunk = group.column(leaf.index)
            sizes[field_id] = sizes.get(field_id, 0) + chunk.total_compressed_size
            if leaf.repeated:
                continue
            stats = chunk.statistics if chunk.is_stats_set else None
            if stats is None or not stats.has_null_count:
                no_counts.add(field_id)
                no_bounds.add(field_id)
                continue
            values[field_id] = values.get(field_id, 0) + chunk.num_values
            nulls[field_id] = nulls.get(field_id, 0) + stats.null_count
            if with_bounds and mode.bounds and field_id in types:
                _footer_bounds(stats, types[field_id], field_id, low, high, no_bounds)
    for field_id in no_counts:
        values.pop(field_id, None)
        nulls.pop(field_id, None)
    lower: dict[int, bytes] = {}
    upper: dict[int, bytes] = {}
    for field_id, value in low.items():
        if field_id in no_bounds:
            continue
        t = types[field_id]
        lo, hi = _truncate(t, value, high[field_id], modes[field_id])
        lower[field_id] = _to_bytes(t, lo)
        if hi is not None:
            upper[field_id] = _to_bytes(t, hi)
    return FooterMetrics(
        metadata.num_rows, sizes, values, nulls, split_offsets(metadata), lower, upper
    )


def _footer_bounds(
    stats: pq.Statistics,
    t: PrimitiveType,
    field_id: int,
    low: dict[int, Any],
    high: dict[int, Any],
    no_bounds: set[int],
) -> None:
    if stats.physical_type == "INT96":
        # Java never trusts INT96 statistics.
        no_bounds.add(field_id)
        return
    if not stats.has_min_max:
        if stats.null_count != stats.num_values:
            no_bounds.add(field_id)  # values present but no statistics for them
        return
    lo = _footer_value(stats, t, stats.min_raw, upper=False)
    hi = _footer_value(stats, t, stats.max_raw, upper=True)
    if (isinstance(lo, float) and math.isnan(lo)) or (isinstance(hi, float) and math.isnan(hi)):
        no_bounds.add(field_id)
        return
    if field_id not in low:
        low[field_id], high[field_id] = lo, hi
        return
    _fold_pair(low, high, field_id, lo, hi)


def _fold_pair(low: dict[int, Any], high: dict[int, Any], field_id: int, lo: Any, hi: Any) -> None:
    if isinstance(lo, float):
        if _order(lo) < _order(low[field_id]):
            low[field_id] = lo
        if _order(hi) > _order(high[field_id]):
            high[field_id] = hi
        return
    if lo < low[field_id]:
        low[field_id] = lo
    if hi > high[field_id]:
        high[field_id] = hi


_UNIT_TO_MICROS = {"MILLIS": 1000, "MICROS": 1, "NANOS": None}


def _footer_value(stats: pq.Statistics, t: PrimitiveType, raw: Any, upper: bool) -> Any:
    """A footer min or max as the value of Iceberg type ``t`` (before encoding)."""
    kind = str(t)
    logical = stats.logical_type
    logical_text = str(logical) if logical is not None else "None"
    if kind == "string":
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if kind.startswith("decimal"):
        if isinstance(raw, bytes):
            raw = int.from_bytes(raw, "big", signed=True)
        import decimal

        return decimal.Decimal(raw).scaleb(-t.scale)  # type: ignore[attr-defined]
    if kind in ("timestamp", "timestamptz", "time", "timestamp_ns", "timestamptz_ns"):
        scale = _unit(logical_text)
        if kind.endswith("_ns"):
            per_nano = {"MILLIS": 1_000_000, "MICROS": 1000, "NANOS": 1}[scale]
            return _Raw(raw * per_nano)
        if scale == "NANOS":
            # Round outward: floor the lower bound, ceil the upper.
            return _Raw(-((-raw) // 1000) if upper else raw // 1000)
        return _Raw(raw * (1000 if scale == "MILLIS" else 1))
    if kind == "date":
        return _Raw(raw)
    if kind == "float":
        return struct.unpack("<f", struct.pack("<f", raw))[0]
    return raw


def _unit(logical_text: str) -> str:
    for unit in ("MILLIS", "MICROS", "NANOS"):
        if unit in logical_text.upper():
            return unit
    return "MICROS"


class _Raw(int):
    """An integer already in the Rust core's canonical form (days, micros, nanos)."""
