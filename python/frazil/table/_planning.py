"""What every scan of one table metadata shares, made once per metadata object: the native
table (the current schema and the partition specs parsed in Rust, and the manifest lists of
the snapshots planned, decoded once) and the schemas' JSON text.

Table metadata is immutable (a commit makes a new object), so nothing here can go stale: a
refreshed table has a new metadata object and gets its own entry. Entries are keyed by the
object's identity and held through a weak reference, so a metadata object that is gone drops
its entry; at most ``MAX_TABLES`` entries are kept, the least recently used dropped first.
"""

from __future__ import annotations

import functools
import json
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from frazil import _native

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.metadata import TableMetadata
    from frazil.schema import Schema

__all__ = ["MAX_TABLES", "Planning", "cached_tables", "filter_from_text", "planning"]

# A process plans a few tables at a time; each entry holds at most a few decoded manifest
# lists (src/scan/planner.rs, KEPT_LISTS).
MAX_TABLES = 16


class Planning:
    """The planning state of one table metadata object."""

    def __init__(self, metadata: TableMetadata) -> None:
        schema = metadata.schema()
        self._schema_texts: dict[int, tuple[Schema, str]] = {}
        self.native = _native.RawTable(
            self.schema_json(schema),
            [json.dumps(spec.to_json()) for spec in metadata.partition_specs],
        )

    def schema_json(self, schema: Schema) -> str:
        """``schema`` (one of the metadata's) as JSON text, made once."""
        entry = self._schema_texts.get(id(schema))
        if entry is None or entry[0] is not schema:
            entry = (schema, json.dumps(schema.to_json()))
            self._schema_texts[id(schema)] = entry
        return entry[1]


_LOCK = threading.RLock()  # re-entrant: a weak reference's callback may run under it (GC)
_TABLES: OrderedDict[int, tuple[weakref.ref[Any], Planning]] = OrderedDict()


def _forget(key: int, ref: weakref.ref[Any]) -> None:
    with _LOCK:
        entry = _TABLES.get(key)
        if entry is not None and entry[0] is ref:
            del _TABLES[key]


def planning(metadata: TableMetadata) -> Planning:
    """The planning state of ``metadata``, made on first use."""
    key = id(metadata)
    with _LOCK:
        entry = _TABLES.get(key)
        if entry is not None and entry[0]() is metadata:
            _TABLES.move_to_end(key)
            return entry[1]
    made = Planning(metadata)  # parses in Rust: not under the lock
    with _LOCK:
        entry = _TABLES.get(key)
        if entry is not None and entry[0]() is metadata:
            return entry[1]  # another thread made it first
        _TABLES[key] = (weakref.ref(metadata, lambda ref: _forget(key, ref)), made)
        while len(_TABLES) > MAX_TABLES:
            _TABLES.popitem(last=False)
    return made


def cached_tables() -> int:
    """How many metadata objects have planning state (for tests)."""
    with _LOCK:
        return len(_TABLES)


# Filters longer than this (long IN lists) are parsed every time rather than kept.
MAX_KEPT_FILTER = 4096


def filter_from_text(text: str) -> tuple[Expression, str]:
    """A filter's text form parsed, and its expression JSON. Expressions are immutable, so
    scans with the same (short) text share them."""
    if len(text) > MAX_KEPT_FILTER:
        return _parse_filter(text)
    return _kept_filter(text)


def _parse_filter(text: str) -> tuple[Expression, str]:
    from frazil import expressions

    expression = expressions.parse(text)
    return expression, json.dumps(expression.to_json())


_kept_filter = functools.lru_cache(maxsize=256)(_parse_filter)
