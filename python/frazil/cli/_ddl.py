"""The text forms the command line accepts for a schema and a partition spec.

A schema is either Iceberg schema JSON or a DDL-like list of columns::

    id long not null, name string, ts timestamptz, price decimal(10, 2),
    tags list<string>, attrs map<string, int>, location struct<city: string, zip: int>

A partition spec is a list of transforms of columns, in Iceberg's spelling (``day(ts),
bucket[16](id), truncate[4](name), identity(region)``) or Spark's (``days(ts), bucket(16, id),
truncate(4, name), region``); a bare column is identity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from frazil.errors import UnknownTypeError, ValidationError
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.types import IcebergType, ListType, MapType, NestedField, StructType, parse_type

__all__ = ["parse_partition_spec", "parse_schema"]


class _Ids:
    def __init__(self) -> None:
        self.last = 0

    def __call__(self) -> int:
        self.last += 1
        return self.last


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` outside <...>, (...) and double-quoted names."""
    parts: list[str] = []
    depth = 0
    quoted = False
    current: list[str] = []
    for char in text:
        if char == '"':
            quoted = not quoted
        elif quoted:
            pass
        elif char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
            if depth < 0:
                raise ValidationError(f"unbalanced brackets in {text!r}")
        if char == sep and depth == 0 and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise ValidationError(f"unbalanced brackets in {text!r}")
    parts.append("".join(current).strip())
    return parts


_NOT_NULL = re.compile(r"\s+not\s+null\s*$", re.IGNORECASE)


def _parse_type(text: str, ids: _Ids) -> tuple[IcebergType, bool]:
    """A type and whether its element / value is required (``not null`` inside list<...>)."""
    text = text.strip()
    required = bool(_NOT_NULL.search(text))
    text = _NOT_NULL.sub("", text).strip()
    lower = text.lower()
    if lower.startswith("struct<") and text.endswith(">"):
        return StructType(tuple(_columns(text[7:-1], ids))), required
    if lower.startswith("list<") and text.endswith(">"):
        element_id = ids()
        element, element_required = _parse_type(text[5:-1], ids)
        return ListType(element_id, element, element_required), required
    if lower.startswith("map<") and text.endswith(">"):
        parts = _split_top_level(text[4:-1])
        if len(parts) != 2:
            raise ValidationError(f"a map type needs a key and a value type: {text!r}")
        key_id, value_id = ids(), ids()
        key, _ = _parse_type(parts[0], ids)
        value, value_required = _parse_type(parts[1], ids)
        return MapType(key_id, key, value_id, value, value_required), required
    return parse_type(text), required


_TYPES_HINT = (
    "boolean, int, long, float, double, decimal(P, S), date, time, timestamp, timestamptz, "
    "string, uuid, fixed[N], binary, struct<...>, list<...>, map<K, V>"
)
# A name, then a colon or white space, then the type: `id long`, `id: long`, `"a b" string`.
_COLUMN = re.compile(r'^\s*("(?:[^"]|"")+"|[^\s:"]+)(?:\s*:\s*|\s+)(\S.*)$', re.DOTALL)


def _columns(text: str, ids: _Ids) -> Iterator[NestedField]:
    for part in _split_top_level(text):
        if not part:
            raise ValidationError(f"empty column definition in {text!r}")
        match = _COLUMN.match(part)
        if match is None:
            raise ValidationError(
                f"column {part!r} has no type: write a name and a type, e.g. 'id long' "
                f"(types: {_TYPES_HINT})"
            )
        name = match.group(1)
        if name.startswith('"'):
            name = name[1:-1].replace('""', '"')
        field_id = ids()
        try:
            field_type, required = _parse_type(match.group(2), ids)
        except UnknownTypeError as error:
            raise UnknownTypeError(f"column {name!r}: {error} (types: {_TYPES_HINT})") from None
        yield NestedField(field_id, name, field_type, required)


def parse_schema(text: str) -> Schema:
    """A schema from Iceberg schema JSON or the DDL-like column list (see the module doc)."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return Schema.from_json(json.loads(stripped))
        except json.JSONDecodeError as error:
            raise ValidationError(f"schema JSON is invalid: {error}") from None
    if not stripped:
        raise ValidationError("the schema is empty")
    return Schema(fields=tuple(_columns(stripped, _Ids())))


# `day(ts)`, `bucket[16](id)` (Iceberg), `bucket(16, id)` (Spark): name, [param], (args).
_TRANSFORM = re.compile(r"^\s*(\w+)\s*(?:\[\s*(\d+)\s*\])?\s*\(\s*([^)]*)\)\s*$")
# Spark's plural names of the time transforms (Spark DDL: `PARTITIONED BY (days(ts))`).
_SPARK_TIME = {"years": "year", "months": "month", "days": "day", "hours": "hour"}
_ONE_ARGUMENT = {"identity", "year", "month", "day", "hour", "void"}
_SUFFIX = {"bucket": "bucket", "truncate": "trunc", "void": "null"}
_TRANSFORMS_HINT = (
    "identity(col), year, month, day, hour (or Spark's years, months, days, hours), "
    "bucket[N](col) or bucket(N, col), truncate[W](col) or truncate(W, col), void(col)"
)


def _partition_field(part: str) -> tuple[str, str, str | None]:
    """(column, transform, field name) of one item of a partition list."""
    match = _TRANSFORM.match(part)
    if match is None:
        if "(" in part or "[" in part:
            raise ValidationError(f"cannot read partition field {part!r}: use {_TRANSFORMS_HINT}")
        return part.strip(), "identity", None
    name = match.group(1).lower()
    name = _SPARK_TIME.get(name, name)
    param = match.group(2)
    args = [a.strip() for a in match.group(3).split(",")]
    if name in ("bucket", "truncate"):
        if param is not None:
            # Iceberg's own spelling: bucket[16](id).
            if len(args) != 1 or not args[0]:
                raise ValidationError(f"{name}[{param}] takes one column: {part!r}")
            width, column = param, args[0]
        else:
            if len(args) != 2:
                raise ValidationError(
                    f"{name} needs a width and a column: {part!r} "
                    f"(write {name}[N](col) or {name}(N, col))"
                )
            width, column = args if args[0].isdigit() else args[::-1]
            if not width.isdigit():
                raise ValidationError(f"the width of {name} must be a number: {part!r}")
        return column, f"{name}[{width}]", f"{column}_{_SUFFIX[name]}"
    if param is not None or name not in _ONE_ARGUMENT:
        raise ValidationError(f"unknown partition transform {part!r}: use {_TRANSFORMS_HINT}")
    if len(args) != 1 or not args[0]:
        raise ValidationError(f"{name} takes one column: {part!r}")
    column = args[0]
    return column, name, None if name == "identity" else f"{column}_{_SUFFIX.get(name, name)}"


def parse_partition_spec(text: str, schema: Schema) -> PartitionSpec:
    """A partition spec for ``schema`` from ``day(ts), bucket[16](id), region`` (or Spark's
    ``days(ts), bucket(16, id)``), with the names Java's ``PartitionSpec.Builder`` gives at
    table creation (``ts_day``, ``id_bucket``, ``name_trunc``; identity keeps the column
    name), built by :class:`frazil.table.UpdateSpec`."""
    from frazil.table.create import new_table_metadata
    from frazil.table.update_spec import UpdateSpec

    update = UpdateSpec(new_table_metadata(schema, "/unused"))
    if not text.strip():
        return PartitionSpec()
    for part in _split_top_level(text):
        column, transform, name = _partition_field(part)
        if schema.find_field(column) is None:
            columns = ", ".join(f.name for f in schema.fields)
            raise ValidationError(
                f"cannot partition by {part.strip()!r}: the schema has no column {column!r} "
                f"(columns: {columns})"
            )
        update.add_field(column, transform, name)
    return update.apply()
