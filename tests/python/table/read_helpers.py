"""Tables with real Parquet data for the reader tests: data files written with pyarrow (field
ids in ``PARQUET:field_id``), manifests with frazil's writers (:class:`TableWriter`), and any
number of schemas, so a file written with an old schema is read with a newer one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from frazil import Schema, StaticTable
from frazil import types as t
from frazil.table.read import arrow_schema
from scan_helpers import TableWriter, data_file, entry

FIELD_ID = b"PARQUET:field_id"


def _typed(arrow_type: pa.DataType, iceberg: t.IcebergType) -> pa.DataType:
    if isinstance(iceberg, t.StructType):
        return pa.struct([_field(arrow_type.field(i), f) for i, f in enumerate(iceberg.fields)])
    if isinstance(iceberg, t.ListType):
        return pa.list_(_field(arrow_type.value_field, iceberg.element_field))
    if isinstance(iceberg, t.MapType):
        return pa.map_(
            _field(arrow_type.key_field, iceberg.key_field),
            _field(arrow_type.item_field, iceberg.value_field),
        )
    return arrow_type


def _field(field: pa.Field, iceberg: t.NestedField) -> pa.Field:
    return pa.field(
        field.name,
        _typed(field.type, iceberg.field_type),
        nullable=not iceberg.required,
        metadata={FIELD_ID: str(iceberg.field_id).encode()},
    )


def file_schema(schema: Schema, ids: bool = True) -> pa.Schema:
    """The Arrow schema a writer of ``schema`` gives its Parquet files (ids in the metadata
    unless ``ids`` is false)."""
    base = arrow_schema(schema)
    fields = [_field(base.field(i), f) for i, f in enumerate(schema.fields)]
    out = pa.schema(fields)
    if not ids:
        out = pa.schema([_strip(f) for f in out])
    return out


def _strip(field: pa.Field) -> pa.Field:
    arrow_type = field.type
    if pa.types.is_struct(arrow_type):
        arrow_type = pa.struct([_strip(arrow_type.field(i)) for i in range(arrow_type.num_fields)])
    elif pa.types.is_list(arrow_type):
        arrow_type = pa.list_(_strip(arrow_type.value_field))
    elif pa.types.is_map(arrow_type):
        arrow_type = pa.map_(_strip(arrow_type.key_field), _strip(arrow_type.item_field))
    return pa.field(field.name, arrow_type, field.nullable)


class DataTable:
    """A table under ``root`` whose snapshots add real Parquet files and delete files."""

    def __init__(
        self,
        root: Path,
        schema: Schema,
        specs: Sequence[Mapping[str, Any]] = ({"spec-id": 0, "fields": []},),
        format_version: int = 2,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        self.writer = TableWriter(
            root, schema.to_json(), specs, format_version=format_version, default_spec_id=0
        )
        (root / "data").mkdir(parents=True, exist_ok=True)
        self.schemas: list[Schema] = [schema]
        self.properties = dict(properties or {})
        self.snapshot_schema: dict[int, int] = {}
        self._files = 0

    @property
    def schema(self) -> Schema:
        return self.schemas[-1]

    def evolve(self, schema: Schema) -> None:
        """Makes ``schema`` (with a new schema id) the current schema."""
        self.schemas.append(schema)
        self.writer.schema = schema.to_json()

    def write_parquet(
        self,
        rows: pa.Table | Mapping[str, Sequence[Any]],
        schema: Schema | None = None,
        ids: bool = True,
        name: str | None = None,
        **options: Any,
    ) -> str:
        """A Parquet file of ``rows`` written with ``schema`` (default the current one)."""
        schema = schema or self.schema
        arrow = file_schema(schema, ids)
        if isinstance(rows, pa.Table):
            table = rows.cast(arrow)
        else:
            length = len(next(iter(rows.values())))
            columns = {f.name: rows.get(f.name, [None] * length) for f in arrow}
            table = pa.table(columns, schema=arrow)
        self._files += 1
        path = self.writer.path(name or f"f{self._files}.parquet")
        pq.write_table(table, path, **options)
        return path

    def data(
        self, path: str, partition: Mapping[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """The manifest ``data_file`` of a Parquet file written by :meth:`write_parquet`."""
        metadata = pq.read_metadata(path)
        return data_file(
            path,
            partition,
            records=metadata.num_rows,
            size=Path(path).stat().st_size,
            split_offsets=[
                metadata.row_group(i).column(0).data_page_offset
                for i in range(metadata.num_row_groups)
            ],
            **extra,
        )

    def position_deletes(
        self, deletes: Sequence[tuple[str, int]], partition: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A Parquet position delete file of ``(data file, position)`` pairs."""
        self._files += 1
        path = self.writer.path(f"pd{self._files}.parquet")
        schema = pa.schema(
            [
                pa.field("file_path", pa.string(), False, {FIELD_ID: b"2147483546"}),
                pa.field("pos", pa.int64(), False, {FIELD_ID: b"2147483545"}),
            ]
        )
        ordered = sorted(deletes)
        pq.write_table(
            pa.table(
                {"file_path": [p for p, _ in ordered], "pos": [n for _, n in ordered]},
                schema=schema,
            ),
            path,
        )
        return data_file(
            path, partition, records=len(ordered), size=Path(path).stat().st_size, content=1
        )

    def commit(
        self,
        data: Sequence[Mapping[str, Any]] = (),
        deletes: Sequence[Mapping[str, Any]] = (),
        spec_id: int = 0,
    ) -> int:
        """A snapshot adding ``data`` and ``deletes`` files on top of the current one."""
        parent = self.writer.snapshots[-1]["snapshot-id"] if self.writer.snapshots else None
        snapshot_id = 1000 + len(self.writer.snapshots)
        manifests: list[tuple[Sequence[Mapping[str, Any]], int, str]] = []
        if data:
            manifests.append(([entry(f) for f in data], spec_id, "data"))
        if deletes:
            manifests.append(([entry(f) for f in deletes], spec_id, "deletes"))
        self.writer.commit(snapshot_id, 1_700_000_000_000 + snapshot_id, manifests, parent=parent)
        self.writer.snapshots[-1]["schema-id"] = self.schema.schema_id
        return snapshot_id

    def table(self) -> Any:
        location = self.writer.write(properties=self.properties)
        metadata = json.loads(location.read_text())
        metadata["schemas"] = [s.to_json() for s in self.schemas]
        metadata["current-schema-id"] = self.schema.schema_id
        metadata["last-column-id"] = max(
            max((fid for _, f in s.all_fields() for fid in [f.field_id]), default=0)
            for s in self.schemas
        )
        location.write_text(json.dumps(metadata))
        return StaticTable.from_metadata(str(location))


def rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """A table's rows as sorted tuples (None sorts first)."""
    out = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(out, key=lambda r: tuple((v is not None, repr(v)) for v in r))
