"""ORC and Avro tables written by Spark (Iceberg Java 1.10.2) read by frazil equal Spark's rows
(issue 11, "Reading a task").

Tables with ``write.format.default`` = orc and = avro (so their position delete files are ORC
and Avro too): v2, partitioned, nested structs, lists of structs and maps, merge-on-read DELETE
and UPDATE, schema evolution after data was written; a table whose format changed between
appends; split tasks; and fields selected inside lists and maps, whose projected schema equals
Java's ``TableScan.select`` and whose rows equal Spark's ``transform`` of the same fields.
Every snapshot and a handful of filters are compared with :func:`test_read_parity._check`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from frazil import read_task
from frazil.table.read import select_schema
from java_referee import Warehouse
from test_read_parity import (
    MERGE_ON_READ,
    NAMESPACE,
    _check,
    _frazil_rows,
    _frazil_table,
    _spark_rows,
)

FILTERS = (
    "id < 300",
    "id >= 1200 AND cat = 'b'",
    "val IS NULL OR val < -500",  # not >: Spark orders NaN above every value
    "day >= DATE'2024-02-01' AND cat IN ('a', 'c')",
    "point.x > 100 AND point.x < 400",
    "d > 500.5",
)


def _create(tables: Warehouse, name: str, file_format: str) -> str:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    full = tables.name(NAMESPACE, name)
    tables.sql(f"DROP TABLE IF EXISTS {full}")
    tables.sql(
        f"CREATE TABLE {full} (id bigint, cat string, val double, d decimal(9,2), "
        "ts timestamp_ntz, day date, b binary, point struct<x: int, y: string>, "
        "pts array<struct<x: int, y: double>>, attrs map<string, struct<u: string, v: int>>, "
        "ids map<int, string>, tags array<int>) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='2', 'write.format.default'='{file_format}', "
        f"{MERGE_ON_READ})"
    )
    return full


def _insert(tables: Warehouse, full: str, first: int, count: int) -> None:
    tables.sql(
        f"INSERT INTO {full} SELECT id, CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' "
        "END, CASE WHEN id % 11 = 0 THEN NULL WHEN id % 13 = 0 THEN double('NaN') ELSE id / 1.5 "
        "END, CAST(id / 2.0 AS decimal(9,2)), "
        "timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 1.5), "
        "date_add(DATE'2024-01-01', int(id % 90)), IF(id % 7 = 0, NULL, binary(concat('b', id))), "
        "IF(id % 10 = 0, NULL, named_struct('x', int(id), 'y', concat('y', id))), "
        "CASE WHEN id % 9 = 0 THEN NULL WHEN id % 9 = 1 THEN array() ELSE "
        "array(named_struct('x', int(id), 'y', id / 4.0), NULL, named_struct('x', NULL, 'y', "
        "-0.0)) END, "
        "CASE WHEN id % 8 = 0 THEN NULL WHEN id % 8 = 1 THEN map() ELSE map('k', "
        "named_struct('u', concat('u', id), 'v', int(id)), 'n', NULL) END, "
        "IF(id % 6 = 0, NULL, map(int(id), concat('i', id), -1, NULL)), "
        f"IF(id % 5 = 0, NULL, array(int(id), NULL)) FROM range({first}, {first + count})"
    )


def _delete_formats(table: Any) -> set[str]:
    return {
        str(d.file_format).upper() for task in table.scan().plan_files() for d in task.delete_files
    }


def _data_formats(table: Any) -> set[str]:
    return {str(task.file.file_format).upper() for task in table.scan().plan_files()}


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_format_tables_with_deletes_and_evolution(tables: Warehouse, file_format: str) -> None:
    name = f"format_{file_format}"
    full = _create(tables, name, file_format)
    for first in (0, 700):
        _insert(tables, full, first, 700)
    tables.sql(f"DELETE FROM {full} WHERE id % 5 = 2 AND id < 1000")
    tables.sql(f"UPDATE {full} SET val = -val, point.y = 'updated' WHERE id % 17 = 3")
    table = _frazil_table(tables, name)
    assert _data_formats(table) == {file_format.upper()}
    assert _delete_formats(table) == {file_format.upper()}, "Java writes deletes in the format"
    # Schema evolution after data was written.
    tables.sql(f"ALTER TABLE {full} ADD COLUMN extra string")
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN val TO value")
    tables.sql(f"ALTER TABLE {full} ALTER COLUMN point.x TYPE bigint")
    tables.sql(f"ALTER TABLE {full} ALTER COLUMN tags.element TYPE bigint")
    tables.sql(f"ALTER TABLE {full} ALTER COLUMN d TYPE decimal(18,2)")
    tables.sql(f"ALTER TABLE {full} DROP COLUMN b")
    tables.sql(f"ALTER TABLE {full} ADD COLUMN point.z float")
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN pts.element.y TO why")
    tables.sql(
        f"INSERT INTO {full} SELECT id, 'b', id * 2.0, CAST(id AS decimal(18,2)), "
        "timestamp_ntz'1969-12-31 23:59:59.999999', DATE'1900-01-01', "
        "named_struct('x', id * 1000000000, 'y', 'late', 'z', float(id)), "
        "array(named_struct('x', int(id), 'why', 1.0)), NULL, map(0, 'zero'), array(id), "
        "concat('e', id) FROM range(2000, 2100)"
    )
    tables.sql(f"DELETE FROM {full} WHERE id % 10 = 3 AND id >= 2000")
    filters = tuple(f.replace("val ", "value ") for f in FILTERS)
    assert _check(tables, name, (*filters, "extra IS NOT NULL", "point.z > 2050")) > 8


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_split_tasks_of_one_large_file(tables: Warehouse, file_format: str) -> None:
    # Small ORC stripes; Avro blocks of Java's default size (64 KB): a file of 40000 rows has
    # several of either, and small splits each read the stripes or blocks they own.
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = f"format_split_{file_format}"
    full = tables.name(NAMESPACE, name)
    tables.sql(f"DROP TABLE IF EXISTS {full}")
    tables.sql(
        f"CREATE TABLE {full} (id bigint, s string) USING iceberg TBLPROPERTIES "
        f"('format-version'='2', 'write.format.default'='{file_format}', "
        f"'write.orc.stripe-size-bytes'='16384', {MERGE_ON_READ})"
    )
    tables.sql(
        f"INSERT INTO {full} SELECT /*+ COALESCE(1) */ id, concat('s', id) FROM range(0, 40000)"
    )
    tables.sql(f"DELETE FROM {full} WHERE id % 7 = 3")
    table = _frazil_table(tables, name)
    assert len(list(table.scan().plan_files())) == 1
    small = {"read.split.target-size": 65536, "read.split.open-file-cost": 0}
    split_tasks = [t for g in table.scan(options=small).plan_tasks() for t in g.tasks]
    assert len(split_tasks) > 1
    options = {"specs": table.specs(), "io": table.io}
    owned = []
    for split in split_tasks:
        batches = list(read_task(split, table.schema(), metadata_columns=("_pos",), **options))
        owned.append(sum(b.num_rows for b in batches))
        for batch in batches:
            # One Spark task wrote the rows in order: a row's id is its position in the file.
            assert batch.column("id").to_pylist() == batch.column("_pos").to_pylist()
    assert sum(1 for n in owned if n) > 1, owned
    assert sum(owned) == 40000 - len(range(3, 40000, 7))
    assert _frazil_rows(table) == _spark_rows(tables, f"SELECT * FROM {full}")


def test_table_whose_format_changed_between_appends(tables: Warehouse) -> None:
    name = "format_mixed"
    full = _create(tables, name, "parquet")
    _insert(tables, full, 0, 300)
    tables.sql(f"ALTER TABLE {full} SET TBLPROPERTIES ('write.format.default'='orc')")
    _insert(tables, full, 300, 300)
    tables.sql(f"ALTER TABLE {full} SET TBLPROPERTIES ('write.format.default'='avro')")
    _insert(tables, full, 600, 300)
    tables.sql(f"DELETE FROM {full} WHERE id % 4 = 1")
    tables.sql(f"ALTER TABLE {full} SET TBLPROPERTIES ('write.format.default'='orc')")
    tables.sql(f"DELETE FROM {full} WHERE id % 9 = 2")
    table = _frazil_table(tables, name)
    assert _data_formats(table) == {"PARQUET", "ORC", "AVRO"}
    assert {"AVRO", "ORC"} <= _delete_formats(table)
    assert _check(tables, name, FILTERS) > 6


SELECTIONS = (
    # (frazil / Java names, Spark expression of the same pruned columns)
    (
        ("pts.element.x",),
        "transform(pts, p -> IF(p IS NULL, NULL, named_struct('x', p.x)))",
    ),
    (
        ("attrs.value.v", "point.y"),
        "IF(point IS NULL, NULL, named_struct('y', point.y)), "
        "transform_values(attrs, (k, v) -> IF(v IS NULL, NULL, named_struct('v', v.v)))",
    ),
    (("ids.value",), "ids"),
    (("tags.element", "id"), "id, tags"),
)


@pytest.mark.parametrize("file_format", ["parquet", "orc", "avro"])
def test_fields_selected_inside_lists_and_maps(tables: Warehouse, file_format: str) -> None:
    name = f"format_select_{file_format}"
    full = _create(tables, name, file_format)
    _insert(tables, full, 0, 400)
    table = _frazil_table(tables, name)
    java_table = tables.java_table(NAMESPACE, name)
    for names, spark_columns in SELECTIONS:
        columns = tables.java.java.util.ArrayList()
        for column in names:
            columns.add(column)
        java_schema = java_table.newScan().select(columns).schema()
        java_json = json.loads(tables.java.org.apache.iceberg.SchemaParser.toJson(java_schema))
        ours = select_schema(table.schema(), list(names)).to_json()
        assert ours["fields"] == java_json["fields"], names
        expected = _spark_rows(tables, f"SELECT {spark_columns} FROM {full}")
        assert _frazil_rows(table, selected_fields=names) == expected, names
