"""Reading typed table properties (Java's ``PropertyUtil``): one place for the rule that a
value which does not parse is an error naming the property, never a silent default; and the
checks of the properties that change what is written, which frazil honours or refuses."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from frazil.errors import FrazilError, InvalidValueError, UnsupportedOperationError

if TYPE_CHECKING:
    from frazil.schema import Schema

__all__ = [
    "DOWNCAST_NS",
    "DOWNCAST_NS_ENV",
    "HONOURED",
    "REFUSED",
    "WITHOUT_EFFECT",
    "bool_property",
    "check_write_properties",
    "downcast_ns",
    "int_property",
    "row_level_mode",
]


def int_property(
    properties: Mapping[str, str], key: str, default: int, *, minimum: int | None = None
) -> int:
    """``properties[key]`` as an integer (``default`` when absent); at least ``minimum``."""
    text = properties.get(key)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidValueError(f"table property {key}={text!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise InvalidValueError(f"table property {key}={text!r} must be at least {minimum}")
    return value


def bool_property(properties: Mapping[str, str], key: str, default: bool) -> bool:
    """``properties[key]`` as a boolean (``true``/``false``, any case; ``default`` when
    absent)."""
    text = properties.get(key)
    if text is None:
        return default
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise InvalidValueError(f"table property {key}={text!r} must be true or false")
    return value == "true"


# pyiceberg's ``downcast-ns-timestamp-to-us-on-write`` (there a client setting, read from its
# configuration or PYICEBERG_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE). frazil reads it as a table
# property, so that every writer of the table agrees and the choice is visible in the table's
# metadata, and else from the environment, for data a program always gets in nanoseconds
# (pandas). Java has no such setting (its writers take Iceberg-typed values) and ignores the
# property.
DOWNCAST_NS = "downcast-ns-timestamp-to-us-on-write"
DOWNCAST_NS_ENV = "FRAZIL_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE"
DOWNCAST_NS_HINT = (
    f"set the table property {DOWNCAST_NS}=true (or the environment variable "
    f"{DOWNCAST_NS_ENV}=true) to write nanosecond timestamps as microseconds, their "
    "sub-microsecond digits dropped"
)


def downcast_ns(properties: Mapping[str, str]) -> bool:
    """Whether nanosecond Arrow timestamps are written to microsecond columns (and typed as
    microsecond columns when a table is created from an Arrow schema): the table property
    :data:`DOWNCAST_NS` when set, else the environment variable :data:`DOWNCAST_NS_ENV`, else
    false. A value other than true or false is refused, naming where it came from."""
    if properties.get(DOWNCAST_NS) is not None:
        return bool_property(properties, DOWNCAST_NS, False)
    text = os.environ.get(DOWNCAST_NS_ENV)
    if text is None:
        return False
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise InvalidValueError(
            f"environment variable {DOWNCAST_NS_ENV}={text!r} must be true or false"
        )
    return value == "true"


# --- what is written: honoured or refused, never ignored --------------------------------------
#
# Every property Apache Iceberg Java 1.10.2 names in TableProperties that changes what a writer
# writes is honoured here as Java honours it, or refused where a table is created, where its
# properties are set and before every write (check_write_properties); the lists below say which
# and why, and an interop test holds them to Java's TableProperties.

FORMAT_DEFAULT = "write.format.default"
DELETE_FORMAT_DEFAULT = "write.delete.format.default"
DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
DATA_PATH = "write.data.path"
OBJECT_STORAGE_ENABLED = "write.object-storage.enabled"
OBJECT_STORAGE_PARTITIONED_PATHS = "write.object-storage.partitioned-paths"
OBJECT_STORAGE_PATH = "write.object-storage.path"
FOLDER_STORAGE_PATH = "write.folder-storage.path"
LOCATION_PROVIDER_IMPL = "write.location-provider.impl"
METADATA_PATH = "write.metadata.path"
METADATA_COMPRESSION = "write.metadata.compression-codec"
METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
METADATA_DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
SUMMARY_PARTITION_LIMIT = "write.summary.partition-limit"
ENCRYPTION_KEY_ID = "encryption.key-id"
# Java's FileFormat names a table may choose (case-insensitive, as FileFormat.fromString).
_DATA_FORMATS = ("parquet", "avro", "orc")
_DELETE_FORMATS = ("parquet", "avro", "orc", "puffin")

# What frazil's writers and commits follow, as Java's do (keys; a trailing "." is a prefix).
HONOURED = {
    FORMAT_DEFAULT: "parquet (any other format is refused)",
    "write.target-file-size-bytes": "files roll at this size",
    "write.parquet.row-group-size-bytes": "row group size",
    "write.parquet.page-size-bytes": "page size",
    "write.parquet.page-row-limit": "rows per page",
    "write.parquet.dict-size-bytes": "dictionary page size",
    "parquet.enable.dictionary": "false writes no dictionaries (read by Java's Parquet writer)",
    "write.parquet.compression-codec": "codec (lz4 is written as LZ4_RAW)",
    "write.parquet.compression-level": "for zstd, gzip and brotli; Java ignores it for others",
    "write.parquet.bloom-filter-enabled.column.": "a bloom filter per row group",
    "write.parquet.bloom-filter-fpp.column.": "the filter's false-positive rate",
    "write.parquet.bloom-filter-max-bytes": "the filter's size limit",
    "write.parquet.stats-enabled.column.": "false writes no statistics for the column",
    "write.parquet.page-checksum.enabled": "frazil's own: page CRCs (on by default, as Java)",
    DATA_PATH: "where data files go",
    OBJECT_STORAGE_ENABLED: "hashed prefixes in data file locations",
    OBJECT_STORAGE_PARTITIONED_PATHS: "partition paths in object-storage locations",
    "write.metadata.metrics.": "column metrics in manifests",
    METADATA_PATH: "where metadata files go (refused by the file-system catalog, as Java)",
    METADATA_COMPRESSION: "none or gzip metadata files",
    METADATA_PREVIOUS_VERSIONS_MAX: "length of the metadata log",
    METADATA_DELETE_AFTER_COMMIT: "metadata files leaving the log are deleted",
    SUMMARY_PARTITION_LIMIT: "partition summaries in snapshot summaries",
    "commit.manifest.": "manifest merging",
    "commit.manifest-merge.enabled": "manifest merging",
    "commit.retry.": "commit retries",
    "write.delete.isolation-level": "conflict checks of deletes and overwrites",
    "write.update.isolation-level": "conflict checks of overwrites",
    DELETE_MODE: "copy-on-write rewrites files, merge-on-read writes delete files",
    UPDATE_MODE: "copy-on-write rewrites files, merge-on-read writes delete files",
    MERGE_MODE: "copy-on-write rewrites files, merge-on-read writes delete files",
    DELETE_FORMAT_DEFAULT: "parquet (any other format is refused; v3: deletion vectors)",
    "write.delete.granularity": "position delete files per partition (default) or data file",
    "write.delete.target-file-size-bytes": "delete files roll at this size",
    "write.delete.parquet.": "the Parquet settings of delete files (else write.parquet.*)",
    "schema.name-mapping.default": "read; kept up to date by schema changes",
    "gc.enabled": "maintenance",
    "history.expire.": "maintenance",
}
# What frazil cannot honour, refused with an error naming the property.
REFUSED = {
    LOCATION_PROVIDER_IMPL: "names a Java class",
    OBJECT_STORAGE_PATH: "deprecated: Java 1.10.2 refuses it too unless write.data.path is set",
    FOLDER_STORAGE_PATH: "deprecated: Java 1.10.2 refuses it too unless write.data.path is set",
    ENCRYPTION_KEY_ID: "frazil writes no encrypted files",
}
# Java's properties that change nothing frazil writes: they concern files frazil never writes
# (ORC and Avro data and delete files, refused above), another engine (Spark, Flink, Hive), or
# reading.
WITHOUT_EFFECT = {
    "write.delete.distribution-mode": "Spark's shuffle before writing deletes",
    "write.delete.avro.": "Avro delete files (refused by write.delete.format.default)",
    "write.delete.orc.": "ORC delete files (refused by write.delete.format.default)",
    "write.delete.parquet.row-group-check-": "how often parquet-java measures row groups",
    "write.avro.": "Avro data files (refused by write.format.default)",
    "write.orc.": "ORC data files (refused by write.format.default)",
    "write.parquet.row-group-check-": "how often parquet-java measures pages and row groups; "
    "frazil measures row groups at every batch and keeps every page within its limits",
    "write.distribution-mode": "Spark's shuffle before writing",
    "write.update.distribution-mode": "Spark",
    "write.merge.": "Spark's MERGE (isolation, distribution)",
    "write.spark.": "Spark",
    "write.wap.enabled": "Spark's write-audit-publish (spark.wap.id)",
    "write.upsert.enabled": "Flink",
    "write.manifest-lists.enabled": "deprecated: manifest lists are always written",
    "engine.hive.": "Hive",
    "compatibility.snapshot-id-inheritance.enabled": "appending existing v1 manifests",
    "commit.status-check.": "Java's check of an unknown commit outcome",
    "encryption.data-key-length": "encryption (encryption.key-id is refused)",
    "read.": "reading",
    "format-version": "reserved: the format version",
}


def _choice(properties: Mapping[str, str], key: str, allowed: tuple[str, ...]) -> str | None:
    text = properties.get(key)
    if text is None:
        return None
    value = text.strip().lower()
    if value not in allowed:
        raise InvalidValueError(
            f"table property {key}={text!r} must be one of {', '.join(allowed)}"
        )
    return value


def check_write_properties(
    properties: Mapping[str, str],
    schema: Schema | None = None,
    *,
    location: str = "",
    before: Mapping[str, str] | None = None,
) -> None:
    """Refuse the properties frazil could only ignore, and values it cannot read, where a
    table is created, where its properties are set and before every write: a data file format
    other than Parquet (frazil writes Parquet only; it reads ORC and Avro),
    ``write.location-provider.impl`` (a Java class), Java's deprecated storage paths (refused
    by Java 1.10.2 too), ``encryption.key-id``; a value that does not parse (a format,
    row-level mode, codec, size, boolean), and a column setting naming no column of
    ``schema`` (when given). A ``write.delete.format.default`` other than Parquet is refused
    by the delete file writers (frazil.table.write._deletes), when a change would write one.

    ``before``: the properties as they were, when ``properties`` are about to replace them;
    only a problem they did not have is raised (an old one is still raised before a write)."""
    problems = _problems(properties, schema, location)
    if before is not None and problems:
        old = {str(p) for p in _problems(before, schema, location)}
        problems = [p for p in problems if str(p) not in old]
    if problems:
        raise problems[0]


def _problems(
    properties: Mapping[str, str], schema: Schema | None, location: str
) -> list[FrazilError]:
    found: list[FrazilError] = []
    for check in (_check_formats, _check_refused, _check_metadata_properties):
        try:
            check(properties)
        except FrazilError as error:
            found.append(error)
    # The data file writer's own settings, parsed as a write parses them (a lazy import: the
    # writer's module reads its helpers from this one).
    from frazil.table.write._config import check_data_file_properties

    try:
        check_data_file_properties(location or "/", properties, schema)
    except FrazilError as error:
        found.append(error)
    return found


def _check_formats(properties: Mapping[str, str]) -> None:
    data_format = _choice(properties, FORMAT_DEFAULT, _DATA_FORMATS)
    if data_format not in (None, "parquet"):
        raise UnsupportedOperationError(
            f"table property {FORMAT_DEFAULT}={properties[FORMAT_DEFAULT]!r}: frazil writes "
            "data files as Parquet only (it reads ORC and Avro files); set "
            f"{FORMAT_DEFAULT}=parquet, or write this table with an engine that writes "
            f"{data_format.upper()}"
        )
    _choice(properties, DELETE_FORMAT_DEFAULT, _DELETE_FORMATS)
    for key in (DELETE_MODE, UPDATE_MODE, MERGE_MODE):
        _choice(properties, key, (COPY_ON_WRITE, MERGE_ON_READ))


def _check_refused(properties: Mapping[str, str]) -> None:
    impl = properties.get(LOCATION_PROVIDER_IMPL)
    if impl is not None:
        raise UnsupportedOperationError(
            f"table property {LOCATION_PROVIDER_IMPL}={impl!r} names a Java LocationProvider "
            "class, which frazil cannot run: remove it (frazil writes Java's default layout, "
            f"or its object-storage layout with {OBJECT_STORAGE_ENABLED}=true), or write this "
            "table with Java"
        )
    if properties.get(DATA_PATH) is None:
        # Java 1.10.2's LocationProviders: the deprecated keys are an error unless
        # write.data.path, read first, is set.
        for key in (OBJECT_STORAGE_PATH, FOLDER_STORAGE_PATH):
            if properties.get(key) is not None:
                raise UnsupportedOperationError(
                    f"table property {key}={properties[key]!r} is deprecated and refused (as "
                    f"by Iceberg Java 1.10.2): set {DATA_PATH} to that location instead"
                )
    key_id = properties.get(ENCRYPTION_KEY_ID)
    if key_id is not None:
        raise UnsupportedOperationError(
            f"table property {ENCRYPTION_KEY_ID}={key_id!r} asks for encrypted files (spec: "
            "Encryption), which frazil does not write: write this table with Java"
        )


def _check_metadata_properties(properties: Mapping[str, str]) -> None:
    _choice(properties, METADATA_COMPRESSION, ("none", "gzip"))
    int_property(properties, METADATA_PREVIOUS_VERSIONS_MAX, 100)
    bool_property(properties, METADATA_DELETE_AFTER_COMMIT, False)
    int_property(properties, SUMMARY_PARTITION_LIMIT, 0, minimum=0)
    bool_property(properties, "commit.manifest-merge.enabled", True)
    int_property(properties, "commit.manifest.target-size-bytes", 8 << 20, minimum=1)
    int_property(properties, "commit.manifest.min-count-to-merge", 100, minimum=0)
    metadata_path = properties.get(METADATA_PATH)
    if metadata_path is not None and not metadata_path.strip():
        raise InvalidValueError(f"table property {METADATA_PATH} is empty")


def row_level_mode(properties: Mapping[str, str], key: str) -> str:
    """``write.delete.mode`` (``update``, ``merge``): copy-on-write (Java's default) or
    merge-on-read."""
    return _choice(properties, key, (COPY_ON_WRITE, MERGE_ON_READ)) or COPY_ON_WRITE
