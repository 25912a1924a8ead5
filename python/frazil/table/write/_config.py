"""The ``write.*`` table properties a data-file writer reads (names and defaults as Java's
``TableProperties``), and the per-column metrics modes of Java's ``MetricsConfig``.

Java logs and ignores a metrics mode it cannot parse; here a bad value of any property is an
:class:`InvalidValueError` naming the property, so a typo never silently changes what is
written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from frazil.errors import InvalidValueError
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table._properties import bool_property, int_property
from frazil.types import IcebergType, ListType, MapType, PrimitiveType, StructType

__all__ = ["MetricsMode", "WriteConfig", "default_metrics_mode", "metrics_modes"]

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
# A CRC-32 in every page header (Parquet format: PageHeader.crc), as parquet-mr (Iceberg Java's
# writer) writes by default: readers that verify them turn a damaged page into an error
# instead of wrong values. frazil's name; parquet-mr's is parquet.page.write-checksum.enabled.
PAGE_CHECKSUM = "write.parquet.page-checksum.enabled"
DATA_PATH = "write.data.path"
OBJECT_STORAGE_PATH = "write.object-storage.path"
FOLDER_STORAGE_PATH = "write.folder-storage.path"
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
}
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
    data_path: str
    page_checksum: bool = True

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
        # Java: write.data.path, else the deprecated object-storage / folder-storage paths,
        # else <location>/data (LocationProviders).
        data_path = (
            properties.get(DATA_PATH)
            or properties.get(OBJECT_STORAGE_PATH)
            or properties.get(FOLDER_STORAGE_PATH)
            or f"{location.rstrip('/')}/data"
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
            data_path=data_path.rstrip("/"),
            page_checksum=bool_property(properties, PAGE_CHECKSUM, True),
        )


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
