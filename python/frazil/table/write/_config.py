"""The ``write.*`` table properties a data-file writer reads (names and defaults as Java's
``TableProperties``; its Parquet writer's as ``Parquet.WriteBuilder`` reads them), and the
per-column metrics modes of Java's ``MetricsConfig``.

Java logs and ignores a metrics mode it cannot parse, and a bloom filter or statistics setting
naming no column; here a bad value of any property is an :class:`InvalidValueError` naming the
property, so a typo never silently changes what is written. The table-level list of what is
honoured and what is refused is :mod:`frazil.table._properties`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from frazil.errors import InvalidValueError
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table._properties import bool_property, int_property
from frazil.table.write._location_provider import LocationProvider
from frazil.types import BooleanType, IcebergType, ListType, MapType, PrimitiveType, StructType

__all__ = [
    "MetricsMode",
    "WriteConfig",
    "check_data_file_properties",
    "default_metrics_mode",
    "metrics_modes",
]

TARGET_FILE_SIZE = "write.target-file-size-bytes"
TARGET_FILE_SIZE_DEFAULT = 512 * 1024 * 1024
COMPRESSION_CODEC = "write.parquet.compression-codec"
COMPRESSION_LEVEL = "write.parquet.compression-level"
ROW_GROUP_SIZE = "write.parquet.row-group-size-bytes"
ROW_GROUP_SIZE_DEFAULT = 128 * 1024 * 1024
PAGE_SIZE = "write.parquet.page-size-bytes"
PAGE_SIZE_DEFAULT = 1024 * 1024
DICT_SIZE = "write.parquet.dict-size-bytes"
DICT_SIZE_DEFAULT = 2 * 1024 * 1024
PAGE_ROW_LIMIT = "write.parquet.page-row-limit"
PAGE_ROW_LIMIT_DEFAULT = 20_000
# parquet-java's own key, which Java's Parquet writer reads from the table properties too.
ENABLE_DICTIONARY = "parquet.enable.dictionary"
BLOOM_ENABLED_PREFIX = "write.parquet.bloom-filter-enabled.column."
BLOOM_FPP_PREFIX = "write.parquet.bloom-filter-fpp.column."
BLOOM_FPP_DEFAULT = 0.01
BLOOM_MAX_BYTES = "write.parquet.bloom-filter-max-bytes"
BLOOM_MAX_BYTES_DEFAULT = 1024 * 1024
STATS_ENABLED_PREFIX = "write.parquet.stats-enabled.column."
ROW_GROUP_CHECK_MIN = "write.parquet.row-group-check-min-record-count"
ROW_GROUP_CHECK_MAX = "write.parquet.row-group-check-max-record-count"
# A CRC-32 in every page header (Parquet format: PageHeader.crc), as parquet-mr (Iceberg Java's
# writer) writes by default: readers that verify them turn a damaged page into an error
# instead of wrong values. frazil's name; parquet-mr's is parquet.page.write-checksum.enabled.
PAGE_CHECKSUM = "write.parquet.page-checksum.enabled"
METRICS_DEFAULT = "write.metadata.metrics.default"
METRICS_COLUMN_PREFIX = "write.metadata.metrics.column."
METRICS_MAX_INFERRED = "write.metadata.metrics.max-inferred-column-defaults"
METRICS_MAX_INFERRED_DEFAULT = 100

# Java's codec names (Parquet's CompressionCodecName) -> pyarrow's.
_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
    # pyarrow writes LZ4_RAW for both (Java writes LZ4 for lz4, parquet-java's Hadoop framing).
    "lz4_raw": "lz4",
}
# The codecs Java passes a compression level to (Parquet.WriteBuilder.build: "compression
# level is not supported; ignore it" for the others).
_LEVELLED = ("zstd", "gzip", "brotli")
# Bloom filters hold hashes of values; parquet-java adds none for booleans and pyarrow refuses
# them.
_NO_BLOOM = (BooleanType,)
_TRUNCATE = re.compile(r"truncate\((\d+)\)")


@dataclass(frozen=True)
class MetricsMode:
    """``none``, ``counts``, ``truncate(N)`` or ``full`` (Java's ``MetricsModes``);
    ``length`` is N for truncate, None otherwise."""

    kind: str
    length: int | None = None

    @property
    def counts(self) -> bool:
        return self.kind != "none"

    @property
    def bounds(self) -> bool:
        return self.kind in ("truncate", "full")

    @classmethod
    def parse(cls, text: str, prop: str) -> MetricsMode:
        mode = text.strip().lower()
        if mode in ("none", "counts", "full"):
            return cls(mode)
        match = _TRUNCATE.fullmatch(mode)
        if match is None or int(match.group(1)) <= 0:
            raise InvalidValueError(
                f"table property {prop}={text!r} is not a metrics mode: expected none, "
                "counts, truncate(N) with N > 0, or full"
            )
        return cls("truncate", int(match.group(1)))

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind


DEFAULT_MODE = MetricsMode("truncate", 16)
NONE = MetricsMode("none")


@dataclass(frozen=True)
class WriteConfig:
    target_file_size: int
    codec: str
    compression_level: int | None
    row_group_size: int
    page_size: int
    dict_size: int
    locations: LocationProvider
    page_checksum: bool = True
    page_row_limit: int = PAGE_ROW_LIMIT_DEFAULT
    dictionary: bool = True
    bloom_max_bytes: int = BLOOM_MAX_BYTES_DEFAULT
    # Column names (Java's full names: "s.a", "l.element") with a bloom filter, and its fpp.
    bloom_filters: Mapping[str, float] = field(default_factory=dict)
    # Column names written without Parquet statistics.
    no_stats: frozenset[str] = frozenset()

    @property
    def data_path(self) -> str:
        return self.locations.data_path

    @classmethod
    def from_properties(cls, location: str, properties: Mapping[str, str]) -> WriteConfig:
        codec_text = properties.get(COMPRESSION_CODEC, "zstd")
        codec = _CODECS.get(codec_text.strip().lower())
        if codec is None:
            raise InvalidValueError(
                f"table property {COMPRESSION_CODEC}={codec_text!r} is not a supported codec "
                f"(one of {', '.join(sorted(_CODECS))})"
            )
        level = None
        if properties.get(COMPRESSION_LEVEL) is not None:
            level = int_property(properties, COMPRESSION_LEVEL, 0, minimum=-(2**31))
            if codec not in _LEVELLED:
                level = None  # as Java: snappy, lz4 and none have no levels
        check_min = int_property(properties, ROW_GROUP_CHECK_MIN, 100, minimum=1)
        if int_property(properties, ROW_GROUP_CHECK_MAX, 10_000, minimum=1) < check_min:
            raise InvalidValueError(
                f"table property {ROW_GROUP_CHECK_MAX}={properties.get(ROW_GROUP_CHECK_MAX)!r} "
                f"must be at least {ROW_GROUP_CHECK_MIN} ({check_min})"
            )
        return cls(
            target_file_size=int_property(
                properties, TARGET_FILE_SIZE, TARGET_FILE_SIZE_DEFAULT, minimum=1
            ),
            codec=codec,
            compression_level=level,
            row_group_size=int_property(
                properties, ROW_GROUP_SIZE, ROW_GROUP_SIZE_DEFAULT, minimum=1
            ),
            page_size=int_property(properties, PAGE_SIZE, PAGE_SIZE_DEFAULT, minimum=1),
            dict_size=int_property(properties, DICT_SIZE, DICT_SIZE_DEFAULT, minimum=1),
            locations=LocationProvider.for_table(location, properties),
            page_checksum=bool_property(properties, PAGE_CHECKSUM, True),
            page_row_limit=int_property(
                properties, PAGE_ROW_LIMIT, PAGE_ROW_LIMIT_DEFAULT, minimum=1
            ),
            dictionary=bool_property(properties, ENABLE_DICTIONARY, True),
            # A bitset holds whole 32-byte blocks (Parquet: "Bloom Filter").
            bloom_max_bytes=int_property(
                properties, BLOOM_MAX_BYTES, BLOOM_MAX_BYTES_DEFAULT, minimum=32
            ),
            bloom_filters=_bloom_filters(properties),
            no_stats=frozenset(
                name
                for name, enabled in _column_booleans(properties, STATS_ENABLED_PREFIX).items()
                if not enabled
            ),
        )

    def check_columns(self, schema: Schema) -> None:
        """Each column a bloom filter or statistics setting names is a primitive column of
        ``schema`` (a bloom filter: not a boolean one)."""
        for prefix, names in (
            (BLOOM_ENABLED_PREFIX, self.bloom_filters),
            (STATS_ENABLED_PREFIX, self.no_stats),
        ):
            for name in names:
                field_id = schema.find_field_id(name)
                found = None if field_id is None else schema.find_field(field_id)
                if found is None:
                    raise InvalidValueError(
                        f"table property {prefix}{name}: no column {name!r} in the table schema"
                    )
                if not isinstance(found.field_type, PrimitiveType):
                    raise InvalidValueError(
                        f"table property {prefix}{name}: column {name!r} is a "
                        f"{found.field_type}, not a primitive column: name a field inside it"
                    )
                if prefix == BLOOM_ENABLED_PREFIX and isinstance(found.field_type, _NO_BLOOM):
                    raise InvalidValueError(
                        f"table property {prefix}{name}: column {name!r} is a boolean, which "
                        "Parquet bloom filters do not cover (parquet-java writes an empty one)"
                    )


def _column_booleans(properties: Mapping[str, str], prefix: str) -> dict[str, bool]:
    return {
        key[len(prefix) :]: bool_property(properties, key, True)
        for key in properties
        if key.startswith(prefix)
    }


def _bloom_filters(properties: Mapping[str, str]) -> dict[str, float]:
    """The columns whose ``bloom-filter-enabled`` is true, with their fpp (every fpp must be
    a number in (0, 1), as parquet-java requires of the ones it uses)."""
    fpps: dict[str, float] = {}
    for key, text in properties.items():
        if key.startswith(BLOOM_FPP_PREFIX):
            try:
                fpp = float(text.strip())
            except ValueError:
                fpp = float("nan")
            if not 0.0 < fpp < 1.0:
                raise InvalidValueError(
                    f"table property {key}={text!r} must be a number between 0 and 1 (exclusive)"
                )
            fpps[key[len(BLOOM_FPP_PREFIX) :]] = fpp
    return {
        name: fpps.get(name, BLOOM_FPP_DEFAULT)
        for name, enabled in _column_booleans(properties, BLOOM_ENABLED_PREFIX).items()
        if enabled
    }


def check_data_file_properties(
    location: str, properties: Mapping[str, str], schema: Schema | None
) -> None:
    """Parse what a data file writer reads from ``properties`` as a write would, so that a
    value it cannot use is refused where the table is created and where it is set, not
    first by a write (:func:`frazil.table._properties.check_write_properties`)."""
    config = WriteConfig.from_properties(location, properties)
    if schema is not None:
        config.check_columns(schema)
        metrics_modes(schema, None, properties)
    else:
        default_metrics_mode(Schema(), properties)


def _eligible_ids(schema: Schema, limit: int) -> list[int]:
    """Java's ``MetricsConfig.limitFieldIds``: primitive fields breadth-first by struct (a
    struct's own primitive fields before its children's), list elements and map keys and
    values in order, until ``limit`` ids."""
    ids: list[int] = []

    def visit(t: IcebergType) -> None:
        if len(ids) >= limit:
            return
        if isinstance(t, StructType):
            for f in t.fields:
                if len(ids) < limit and _eligible(f.field_type):
                    ids.append(f.field_id)
            for f in t.fields:
                if len(ids) >= limit:
                    return
                visit(f.field_type)
        elif isinstance(t, ListType):
            if len(ids) < limit and _eligible(t.element_type):
                ids.append(t.element_id)
            visit(t.element_type)
        elif isinstance(t, MapType):
            if len(ids) < limit and _eligible(t.key_type):
                ids.append(t.key_id)
            if len(ids) < limit and _eligible(t.value_type):
                ids.append(t.value_id)
            visit(t.key_type)
            visit(t.value_type)

    visit(schema.as_struct())
    return ids


def _primitive_count(schema: Schema) -> int:
    """Java's ``TypeUtil.getProjectedIds(schema).size()``: the primitive fields."""
    return sum(1 for _, f in schema.all_fields() if isinstance(f.field_type, PrimitiveType))


def _eligible(t: IcebergType) -> bool:
    return isinstance(t, PrimitiveType)


def default_metrics_mode(schema: Schema, properties: Mapping[str, str]) -> MetricsMode:
    """The mode of a column no rule names (Java's ``MetricsConfig`` default mode): the
    configured ``write.metadata.metrics.default``, else truncate(16) when the table has at
    most ``max-inferred-column-defaults`` primitive fields, else none. Columns written beside
    the table's (the row lineage columns) get it, as Java looks their names up in vain."""
    configured = properties.get(METRICS_DEFAULT)
    if configured is not None:
        return MetricsMode.parse(configured, METRICS_DEFAULT)
    limit = int_property(properties, METRICS_MAX_INFERRED, METRICS_MAX_INFERRED_DEFAULT, minimum=0)
    return DEFAULT_MODE if _primitive_count(schema) <= limit else NONE


def metrics_modes(
    schema: Schema, order: SortOrder | None, properties: Mapping[str, str]
) -> dict[int, MetricsMode]:
    """The metrics mode of every field id of ``schema`` (Java's ``MetricsConfig.forTable``
    with ``MetricsUtil.metricsMode``): the configured default, or truncate(16) for tables of
    at most ``max-inferred-column-defaults`` fields and otherwise for that many first columns
    only; columns of the sort order raised to truncate(16) from none or counts; then the
    per-column overrides."""
    limit = int_property(properties, METRICS_MAX_INFERRED, METRICS_MAX_INFERRED_DEFAULT, minimum=0)
    columns: dict[int, MetricsMode] = {}
    default = default_metrics_mode(schema, properties)
    if properties.get(METRICS_DEFAULT) is None and _primitive_count(schema) > limit:
        columns.update(dict.fromkeys(_eligible_ids(schema, limit), DEFAULT_MODE))
    sorted_mode = DEFAULT_MODE if default.kind in ("none", "counts") else default
    for sort_field in order.fields if order is not None else ():
        # SortOrderUtil.orderPreservingSortedColumns: order-preserving transforms only.
        if sort_field.transform in ("identity", "year", "month", "day", "hour") or (
            sort_field.transform.startswith("truncate")
        ):
            columns[sort_field.source_id] = sorted_mode
    for key, value in properties.items():
        if key.startswith(METRICS_COLUMN_PREFIX):
            name = key[len(METRICS_COLUMN_PREFIX) :]
            field_id = schema.find_field_id(name)
            if field_id is None:
                raise InvalidValueError(
                    f"table property {key}: no column {name!r} in the table schema"
                )
            columns[field_id] = MetricsMode.parse(value, key)
    return {field_id: columns.get(field_id, default) for field_id in schema.field_ids()}
