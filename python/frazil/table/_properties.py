"""Reading typed table properties (Java's ``PropertyUtil``): one place for the rule that a
value which does not parse is an error naming the property, never a silent default."""

from __future__ import annotations

from collections.abc import Mapping

from frazil.errors import InvalidValueError

__all__ = ["bool_property", "int_property"]


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
