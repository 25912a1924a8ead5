"""Reading typed table properties (Java's ``PropertyUtil``): one place for the rule that a
value which does not parse is an error naming the property, never a silent default."""

from __future__ import annotations

import os
from collections.abc import Mapping

from frazil.errors import InvalidValueError

__all__ = [
    "DOWNCAST_NS",
    "DOWNCAST_NS_ENV",
    "bool_property",
    "downcast_ns",
    "int_property",
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
