"""Ground truth for the scan-planning parity tests: which data files hold a matching row.

Rows are read straight from the data files (pyarrow, columns by Parquet field id), not
through Spark: a Spark query with a WHERE clause pushes the filter into Iceberg Java's own
planner, which prunes the files we want to check it against (a uuid filter loses the very
rows Java's signed uuid comparison drops), and Spark's SQL compares NaN and -0.0 differently
from Iceberg. Deletes are not applied: planning prunes data files by partition and metrics,
which cover every row a file holds, deleted or not, so a file with a matching row in it must
be planned whatever its deletes say.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from scan_filters import Filter, matches

FIELD_ID = b"PARQUET:field_id"


def local_path(location: str) -> str:
    """A local file location as written in a manifest ("/tmp/..." or "file:/tmp/...")."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            return location[len(prefix) :]
    return location


def _named(
    value: Any, field: pa.Field, names: Mapping[int, str], uuids: set[str], out: dict[str, Any]
) -> None:
    metadata = field.metadata or {}
    if FIELD_ID not in metadata:
        raise AssertionError(f"Parquet field {field.name} has no field id")
    if pa.types.is_struct(field.type):
        for child in field.type:
            _named(None if value is None else value.get(child.name), child, names, uuids, out)
        return
    name = names.get(int(metadata[FIELD_ID]))
    if name is not None:
        # a Parquet UUID may come back as its 16 bytes, depending on pyarrow's version
        out[name] = uuid.UUID(bytes=value) if name in uuids and isinstance(value, bytes) else value


def read_rows(
    location: str, names: Mapping[int, str], uuid_columns: Sequence[str]
) -> list[dict[str, Any]]:
    """The rows of one Parquet data file, as values by the table's dotted column names."""
    table = pq.read_table(local_path(location))
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    uuids = set(uuid_columns)
    rows = []
    for r in range(table.num_rows):
        row: dict[str, Any] = dict.fromkeys(names.values())
        for field, values in zip(table.schema, columns, strict=True):
            _named(values[r], field, names, uuids, row)
        rows.append(row)
    return rows


def files_with_matches(
    filters: Sequence[Filter],
    rows_by_file: Mapping[str, Sequence[Mapping[str, Any]]],
    types: Mapping[str, str],
    keep_nan: bool = False,
) -> list[set[str]]:
    """For each filter, the data files holding at least one matching row (``keep_nan``:
    :func:`scan_filters.matches`)."""
    return [
        {
            path
            for path, rows in rows_by_file.items()
            if any(matches(f.expr, r, types, keep_nan) for r in rows)
        }
        for f in filters
    ]
