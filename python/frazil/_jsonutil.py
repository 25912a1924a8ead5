"""Strict readers for the JSON objects of table and view metadata (spec: Appendix C).

Each getter names the field and the object it was read from, so that a bad
metadata file fails with a message saying what is wrong, not a KeyError.
Python's ``json`` reads ``true`` as ``True``, which is also an ``int``; the
integer getters refuse booleans for that reason.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from frazil.errors import InvalidMetadataError

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

JsonObject = Mapping[str, Any]


def parse_json(text: str | bytes, what: str) -> Any:
    """Parse JSON text, turning a syntax error into InvalidMetadataError."""
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidMetadataError(f"cannot parse {what}: invalid JSON ({error})") from None
    except RecursionError:
        # json's decoder recurses once per level; thousands of levels exhaust the stack.
        raise too_deep(what) from None


def too_deep(what: str) -> InvalidMetadataError:
    """The error for JSON nested deeper than the decoder, or the model's parsers (which recurse
    once per nested type or field), can follow: a limit of Python's stack, below which any
    metadata Java writes stays (Jackson refuses more than 1,000 levels)."""
    return InvalidMetadataError(
        f"cannot parse {what}: its JSON is nested too deeply (Python's recursion limit is "
        f"{sys.getrecursionlimit()})"
    )


def as_object(node: Any, what: str) -> JsonObject:
    # `type(...) is dict` first: parsed JSON is plain dicts, and the Mapping ABC check costs
    # several times more (table metadata makes hundreds of these checks).
    if type(node) is not dict and not isinstance(node, Mapping):
        raise InvalidMetadataError(f"cannot parse {what} from a non-object: {_show(node)}")
    return node


def as_list(node: Any, what: str) -> list[Any]:
    if not isinstance(node, list):
        raise InvalidMetadataError(f"cannot parse {what} from a non-array: {_show(node)}")
    return node


def _show(node: Any) -> str:
    text = json.dumps(node) if _jsonable(node) else repr(node)
    return text if len(text) <= 200 else text[:197] + "..."


def _jsonable(node: Any) -> bool:
    try:
        json.dumps(node)
    except (TypeError, ValueError):
        return False
    return True


def _missing(key: str, what: str) -> InvalidMetadataError:
    return InvalidMetadataError(f"{what} is missing required field {key!r}")


def _integer(value: Any, key: str, what: str, low: int, high: int, kind: str) -> int:
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidMetadataError(
            f"{what} field {key!r} must be a JSON {kind}, got {_show(value)}"
        )
    if not low <= value <= high:
        raise InvalidMetadataError(f"{what} field {key!r} is out of range for a {kind}: {value}")
    return value


def get_int(node: JsonObject, key: str, what: str) -> int:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    return _integer(node[key], key, what, INT_MIN, INT_MAX, "int")


def get_long(node: JsonObject, key: str, what: str) -> int:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    return _integer(node[key], key, what, LONG_MIN, LONG_MAX, "long")


def opt_int(node: JsonObject, key: str, what: str) -> int | None:
    if node.get(key) is None:
        return None
    return _integer(node[key], key, what, INT_MIN, INT_MAX, "int")


def opt_long(node: JsonObject, key: str, what: str) -> int | None:
    if node.get(key) is None:
        return None
    return _integer(node[key], key, what, LONG_MIN, LONG_MAX, "long")


def get_str(node: JsonObject, key: str, what: str) -> str:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    return check_str(node[key], key, what)


def check_str(value: Any, key: str, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidMetadataError(
            f"{what} field {key!r} must be a JSON string, got {_show(value)}"
        )
    return value


def opt_str(node: JsonObject, key: str, what: str) -> str | None:
    if node.get(key) is None:
        return None
    return check_str(node[key], key, what)


def get_bool(node: JsonObject, key: str, what: str) -> bool:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    value = node[key]
    if not isinstance(value, bool):
        raise InvalidMetadataError(
            f"{what} field {key!r} must be a JSON boolean, got {_show(value)}"
        )
    return value


def get_list(node: JsonObject, key: str, what: str) -> list[Any]:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    return as_list(node[key], f"{what} field {key!r}")


def get_int_list(node: JsonObject, key: str, what: str) -> tuple[int, ...]:
    items = get_list(node, key, what)
    return tuple(_integer(v, key, what, INT_MIN, INT_MAX, "int") for v in items)


def get_str_list(node: JsonObject, key: str, what: str) -> tuple[str, ...]:
    items = get_list(node, key, what)
    return tuple(check_str(v, key, what) for v in items)


def get_str_map(node: JsonObject, key: str, what: str) -> dict[str, str]:
    if key not in node or node[key] is None:
        raise _missing(key, what)
    mapping = as_object(node[key], f"{what} field {key!r}")
    return {k: check_str(v, f"{key}.{k}", what) for k, v in mapping.items()}


def opt_str_map(node: JsonObject, key: str, what: str) -> dict[str, str] | None:
    if node.get(key) is None:
        return None
    return get_str_map(node, key, what)
