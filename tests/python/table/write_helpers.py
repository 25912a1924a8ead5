"""Helpers of the data-file writer tests: tables over a schema JSON, and a reader of what a
written file holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder


def schema_of(*fields: dict[str, Any]) -> Schema:
    return Schema.from_json({"type": "struct", "schema-id": 0, "fields": list(fields)})


def col(field_id: int, name: str, kind: Any, required: bool = False) -> dict[str, Any]:
    return {"id": field_id, "name": name, "required": required, "type": kind}


def table_metadata(
    tmp_path: Path,
    schema: Schema,
    partition: list[tuple[int, str, str]] | None = None,
    properties: dict[str, str] | None = None,
    order: SortOrder | None = None,
) -> TableMetadata:
    """Metadata whose schema keeps the given field ids (unlike new_table_metadata, which
    reassigns them)."""
    spec = PartitionSpec(
        spec_id=0,
        fields=tuple(
            PartitionField(source, 1000 + i, transform, name)
            for i, (source, transform, name) in enumerate(partition or [])
        ),
    )
    return TableMetadata.new(
        schema,
        str(tmp_path / "table"),
        spec=spec,
        sort_order=order or SortOrder(),
        properties=properties or {},
        format_version=2,
    )


def field_ids(schema: pa.Schema) -> list[tuple[str, int | None]]:
    """(dotted path, PARQUET:field_id) of every field, list element and map key/value."""
    found: list[tuple[str, int | None]] = []

    def visit(f: pa.Field, path: str) -> None:
        raw = (f.metadata or {}).get(b"PARQUET:field_id")
        found.append((path, int(raw) if raw is not None else None))
        t = f.type
        if pa.types.is_struct(t):
            for child in t:
                visit(child, f"{path}.{child.name}")
        elif pa.types.is_map(t):
            visit(t.key_field, f"{path}.key")
            visit(t.item_field, f"{path}.value")
        elif pa.types.is_list(t):
            visit(t.value_field, f"{path}.element")

    for f in schema:
        visit(f, f.name)
    return found


def read_back(path: str | None) -> pa.Table:
    assert path is not None
    return pq.read_table(path)
