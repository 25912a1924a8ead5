"""Data files without field ids read through the table's name mapping (spec: "Column
Projection": "Name Mapping"), equal to Spark (Iceberg Java 1.10.2).

Parquet files written by plain pyarrow (no ``PARQUET:field_id``) are registered into a Java
table with Spark's ``CALL <catalog>.system.add_files(...)``, which sets
``schema.name-mapping.default``. frazil reads them through that mapping: top-level and nested
fields (struct, list, map), after renames (the mapping keeps the old name as an alias), mixed
with files Spark wrote later (with ids), with filters, and from a Hive-style partitioned
directory whose files lack the partition column (filled from the partition tuple). A file
with neither field ids nor a mapping (the property removed) is a clear FrazilError naming the
file: Java would fall back to ids by position, which frazil refuses to guess.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import frazil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.errors import FrazilError
from java_referee import Warehouse

NAMESPACE = "name_mapping"
MAPPING = "schema.name-mapping.default"
ARROW = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("attrs", pa.map_(pa.string(), pa.int32())),
    ]
)
COLUMNS = (
    "id bigint, name string, point struct<x: double, y: double>, tags array<string>, "
    "attrs map<string, int>"
)


def _rows(first: int, count: int) -> pa.Table:
    ids = list(range(first, first + count))

    def pick(i: int, options: list[Any]) -> Any:
        return options[i % len(options)]

    return pa.table(
        {
            "id": ids,
            "name": [pick(i, ["alpha", None, "beta", ""]) for i in ids],
            "point": [
                pick(i, [{"x": i / 2, "y": -1.0}, None, {"x": None, "y": math.nan}]) for i in ids
            ],
            "tags": [pick(i, [["a", "b"], [], None, [None, "c"]]) for i in ids],
            "attrs": [pick(i, [[("k", i)], [], None, [("a", None)]]) for i in ids],
        },
        schema=ARROW,
    )


def _write(folder: Path, name: str, table: pa.Table) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    pq.write_table(table, path)
    # No field ids anywhere: what a plain writer (Hive, pyarrow) leaves.
    assert all(b"PARQUET:field_id" not in (f.metadata or {}) for f in pq.read_schema(path))
    assert set(re.findall(r"field_id=(-?\d+)", str(pq.ParquetFile(path).schema))) == {"-1"}
    return path


def _value(value: Any) -> Any:
    """A leaf or list value in one form (NaN comparable)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _spark_row(row: Any, kinds: Sequence[str]) -> tuple[Any, ...]:
    out = []
    for value, kind in zip(row, kinds, strict=True):
        if kind == "map" and value is not None:
            out.append(sorted((k, v) for k, v in value.items()))
        elif kind == "struct" and value is not None:
            out.append(tuple(_value(v) for v in value))
        else:
            out.append(_value(value))
    return tuple(out)


def _arrow_row(row: dict[str, Any], names: Sequence[str], kinds: Sequence[str]) -> tuple[Any, ...]:
    # In the order Spark's SELECT lists them (a scan keeps the schema's order).
    out = []
    for value, kind in zip((row[n] for n in names), kinds, strict=True):
        if kind == "map" and value is not None:
            out.append(sorted(value))
        elif kind == "struct" and value is not None:
            out.append(tuple(_value(v) for v in value.values()))
        else:
            out.append(_value(value))
    return tuple(out)


def _kinds(table: Any, names: Sequence[str] | None = None) -> list[str]:
    schema = table.schema()
    fields = schema.fields if names is None else [schema.find_field(n) for n in names]
    out = []
    for f in fields:
        text = str(f.field_type)
        out.append(
            "map" if text.startswith("map") else "struct" if text.startswith("struct") else ""
        )
    return out


def _frazil(tables: Warehouse, name: str) -> Any:
    return frazil.StaticTable.from_metadata(str(tables.current_metadata_file(NAMESPACE, name)))


def _compare(tables: Warehouse, name: str, where: str | None = None, select: str = "*") -> int:
    """frazil's rows equal Spark's for ``SELECT select ... WHERE where``; returns the count."""
    table = _frazil(tables, name)
    names = None if select == "*" else [s.strip() for s in select.split(",")]
    kinds = _kinds(table, names)
    query = f"SELECT {select} FROM {tables.name(NAMESPACE, name)}"
    if where:
        query += f" WHERE {where}"
    expected = sorted((_spark_row(r, kinds) for r in tables.sql(query)), key=repr)
    scan = table.scan(row_filter=where, selected_fields=tuple(names) if names else ("*",))
    rows = scan.to_arrow().to_pylist()
    order = names or [f.name for f in table.schema().fields]
    got = sorted((_arrow_row(r, order, kinds) for r in rows), key=repr)
    assert got == expected, query
    return len(got)


def _add_files(tables: Warehouse, name: str, source: Path) -> None:
    tables.sql(
        f"CALL {tables.catalog}.system.add_files(table => '{NAMESPACE}.{name}', "
        f"source_table => '`parquet`.`{source}`')"
    )


def _mapping(tables: Warehouse, name: str) -> list[dict[str, Any]]:
    properties = tables.current_metadata(NAMESPACE, name)["properties"]
    mapping: list[dict[str, Any]] = json.loads(properties[MAPPING])
    return mapping


def _names(mapping: list[dict[str, Any]], path: Sequence[str]) -> list[str]:
    fields = mapping
    for part in path[:-1]:
        fields = next(f for f in fields if part in f["names"])["fields"]
    names: list[str] = next(f for f in fields if path[-1] in f["names"])["names"]
    return names


FILTERS = (
    "id < 10",
    "name = 'alpha'",
    "name IS NULL",
    "point.y < 0",
    "point.x IS NULL",
    "id >= 30 AND name LIKE 'b%'",
)


def test_add_files_read_through_the_name_mapping(tables: Warehouse, tmp_path: Path) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = "imported"
    full = tables.name(NAMESPACE, name)
    tables.sql(
        f"CREATE TABLE {full} ({COLUMNS}) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    source = tmp_path / "plain"
    paths = [_write(source, "a.parquet", _rows(0, 25)), _write(source, "b.parquet", _rows(25, 20))]
    _add_files(tables, name, source)
    assert MAPPING in tables.current_metadata(NAMESPACE, name)["properties"]
    table = _frazil(tables, name)
    assert {t.file.file_path.removeprefix("file:") for t in table.scan().plan_files()} == {
        str(p) for p in paths
    }
    assert _compare(tables, name) == 45
    for where in FILTERS:
        assert _compare(tables, name, where) > 0, where
    assert _compare(tables, name, "id > 40", "attrs, id, point") == 4

    # Renames: the mapping keeps the old names as aliases, so the old files still resolve.
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN name TO label")
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN point.x TO px")
    mapping = _mapping(tables, name)
    assert set(_names(mapping, ["label"])) == {"name", "label"}
    assert set(_names(mapping, ["point", "px"])) == {"x", "px"}
    assert _compare(tables, name) == 45
    assert _compare(tables, name, "label = 'beta' OR point.px > 20") > 0
    # Files Spark writes now carry field ids; both kinds read together.
    tables.sql(
        f"INSERT INTO {full} SELECT id, CAST(id AS string), named_struct('px', id * 1.0, 'y', "
        "2.0), array('z'), map('q', CAST(id AS int)) FROM range(100, 110)"
    )
    assert _compare(tables, name) == 55
    assert _compare(tables, name, "label IS NULL OR id >= 105") > 5
    assert _compare(tables, name, "point.px > 10", "id, point") > 0
    for where in FILTERS[:1] + FILTERS[4:]:
        renamed = where.replace("name", "label").replace("point.x", "point.px")
        assert _compare(tables, name, renamed) > 0, renamed


def test_hive_partitioned_import(tables: Warehouse, tmp_path: Path) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = "hive"
    full = tables.name(NAMESPACE, name)
    tables.sql(
        f"CREATE TABLE {full} ({COLUMNS}, region string) USING iceberg PARTITIONED BY (region) "
        "TBLPROPERTIES ('format-version'='2')"
    )
    source = tmp_path / "hive"
    # Hive layout: the partition value lives in the directory name, not in the file.
    _write(source / "region=eu", "p0.parquet", _rows(0, 12))
    _write(source / "region=us", "p1.parquet", _rows(12, 9))
    _add_files(tables, name, source)
    table = _frazil(tables, name)
    partitions = {t.file.partition["region"] for t in table.scan().plan_files()}
    assert partitions == {"eu", "us"}
    assert _compare(tables, name) == 21
    assert _compare(tables, name, "region = 'us'") == 9
    assert _compare(tables, name, "region = 'eu' AND name IS NOT NULL") > 0
    assert _compare(tables, name, "id < 15", "region, id") == 15


def test_file_without_ids_or_mapping_is_a_clear_error(tables: Warehouse, tmp_path: Path) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = "unmapped"
    full = tables.name(NAMESPACE, name)
    tables.sql(
        f"CREATE TABLE {full} ({COLUMNS}) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    path = _write(tmp_path / "plain", "lost.parquet", _rows(0, 5))
    _add_files(tables, name, path.parent)
    tables.sql(f"ALTER TABLE {full} UNSET TBLPROPERTIES ('{MAPPING}')")
    assert MAPPING not in tables.current_metadata(NAMESPACE, name)["properties"]
    table = _frazil(tables, name)
    with pytest.raises(FrazilError, match=str(path)) as raised:
        table.scan().to_arrow()
    assert "no Parquet field ids" in str(raised.value) and "name mapping" in str(raised.value)
    with pytest.raises(FrazilError, match=str(path)):
        table.scan(selected_fields=("id",)).to_batches().read_all()
