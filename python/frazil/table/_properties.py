"""Reading typed table properties (Java's ``PropertyUtil``): one place for the rule that a
value which does not parse is an error naming the property, never a silent default; and the
checks of the properties that change what is written, which frazil honours or refuses."""

from __future__ import annotations

import os
from collections.abc import Mapping

from frazil.errors import InvalidValueError, UnsupportedOperationError

__all__ = [
    "DOWNCAST_NS",
    "DOWNCAST_NS_ENV",
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

FORMAT_DEFAULT = "write.format.default"
DELETE_FORMAT_DEFAULT = "write.delete.format.default"
DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
# Java's FileFormat names a table may choose (case-insensitive, as FileFormat.fromString).
_DATA_FORMATS = ("parquet", "avro", "orc")
_DELETE_FORMATS = ("parquet", "avro", "orc", "puffin")


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


def check_write_properties(properties: Mapping[str, str]) -> None:
    """Refuse the write properties frazil could only ignore, where a table is created, where
    its properties are set, and before every write: a data file format other than Parquet
    (frazil writes Parquet only; it reads ORC and Avro), and values that name no format or
    row-level mode (Java would fail on them). ``write.delete.format.default`` may name any
    format: frazil writes no delete files yet (deletes rewrite data files, copy-on-write),
    and ``merge-on-read`` modes are accepted, a delete then warning that it fell back to
    copy-on-write (:func:`row_level_mode`)."""
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


def row_level_mode(properties: Mapping[str, str], key: str) -> str:
    """``write.delete.mode`` (``update``, ``merge``): copy-on-write (Java's default) or
    merge-on-read."""
    return _choice(properties, key, (COPY_ON_WRITE, MERGE_ON_READ)) or COPY_ON_WRITE
