"""Every type, read by frazil as Iceberg Java 1.10.2 reads it (issue 11), in v1, v2 and v3.

Tables (tests/interop/read_types.py, built once for this module):

- ``spark_v1`` / ``spark_v2`` / ``spark_v3``: written by Spark SQL; every primitive Spark has
  (NaN, infinities, -0.0, nulls, decimals of 9, 18 and 38 digits, dates and timestamps from
  0001-01-01 to 9999-12-31 with and without zone), nested structs, lists and maps (NULL vs
  empty lists and maps, nulls inside lists and as map values, maps with struct values, lists
  of maps); partitioned by identity, bucket + truncate and day; a DELETE and an UPDATE after
  two appends (position deletes in v2, deletion vectors in v3, rewritten files in v1).
- ``java_v1`` / ``java_v2`` / ``java_v3``: written through Java's generic Parquet writer over
  py4j: time, uuid, fixed, a 38-digit decimal, timestamps before 1970 and in year 1 and 9999,
  and in v3 timestamp_ns / timestamptz_ns (1677 to 2262); an equality delete from v2 on.
  Spark 3.5 cannot read time or timestamp_ns, so Java's generic reader (IcebergGenerics,
  deletes applied) is the referee for these.

Every snapshot must read row for row as the referee reads it, and the current snapshot under
each filter of a battery (scan_filters.battery over the table's values) as the referee's rows
filtered by the same filter in Spark SQL (read_parity.where_sql). Values are compared in
read_parity's plain form: temporal values as integers, never through Python datetimes.
"""

from __future__ import annotations

from typing import Any

import pytest
from java_referee import Warehouse
from read_parity import (
    JavaReader,
    assert_same_rows,
    check_filters,
    frazil_rows,
    frazil_table,
    plain_column,
    plain_rows,
    spark_arrow,
    spark_column,
    spread,
)
from read_types import (
    NAMESPACE,
    NANOS,
    TypesTable,
    build_java_table,
    build_spark_table,
)
from scan_filters import Filter, battery, make_filter

VERSIONS = (1, 2, 3)


@pytest.fixture(scope="module")
def spark_tables(tables: Warehouse) -> dict[int, TypesTable]:
    return {v: build_spark_table(tables, v) for v in VERSIONS}


@pytest.fixture(scope="module")
def java_tables(tables: Warehouse) -> dict[int, TypesTable]:
    return {v: build_java_table(tables, v) for v in VERSIONS}


def _column(plain: list[tuple[Any, ...]], names: list[str], name: str) -> list[Any]:
    at = names.index(name)
    return [row[at] for row in plain]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_snapshot_reads_as_spark_reads(
    tables: Warehouse, spark_tables: dict[int, TypesTable], version: int
) -> None:
    built = spark_tables[version]
    table = frazil_table(built.metadata_location)
    assert len(built.snapshots) == 4
    for snapshot_id in built.snapshots:
        query = f"SELECT * FROM {built.sql_name} VERSION AS OF {snapshot_id}"
        expected = plain_rows(spark_arrow(tables.spark, query))
        assert_same_rows(frazil_rows(table, snapshot_id=snapshot_id), expected, query)
    # The data holds what it is meant to: NULL next to empty maps and lists, nested too.
    result = table.scan().to_arrow()
    names = result.column_names
    rows = plain_rows(result)
    for name in ("m", "ms", "arr", "strs", "nested"):
        values = _column(rows, names, name)
        empty = ("map", []) if name.startswith("m") else []
        assert None in values and empty in values, name
    sm = _column(rows, names, "sm")
    assert (("map", []), None) in sm and (None, []) in sm and None in sm


@pytest.mark.parametrize("version", VERSIONS)
def test_nested_projections_read_as_spark_reads(
    tables: Warehouse, spark_tables: dict[int, TypesTable], version: int
) -> None:
    built = spark_tables[version]
    table = frazil_table(built.metadata_location)
    selections = {
        ("id", "st.inner"): "id, IF(st IS NULL, NULL, named_struct('inner', st.inner)) AS st",
        ("ms", "lm", "tstz"): "tstz, ms, lm",
        ("sm.l", "dec38", "st.s"): "dec38, IF(st IS NULL, NULL, named_struct('s', st.s)) AS st, "
        "IF(sm IS NULL, NULL, named_struct('l', sm.l)) AS sm",
    }
    for fields, columns in selections.items():
        expected = plain_rows(spark_arrow(tables.spark, f"SELECT {columns} FROM {built.sql_name}"))
        actual = frazil_rows(table, selected_fields=fields)
        assert_same_rows(actual, expected, f"{built.name} select {fields}")


@pytest.mark.parametrize("version", VERSIONS)
def test_filters_read_as_spark_filters(
    tables: Warehouse, spark_tables: dict[int, TypesTable], version: int
) -> None:
    built = spark_tables[version]
    table = frazil_table(built.metadata_location)
    filters = spread(battery(built.columns, seed=10 + version), 150)
    assert len(filters) >= 40
    columns = {c.name: spark_column(c.name, c.type) for c in built.columns}
    informative = check_filters(
        tables.spark, f"SELECT * FROM {built.sql_name}", table, filters, columns, built.name
    )
    assert informative >= 40


@pytest.mark.parametrize("version", VERSIONS)
def test_every_snapshot_reads_as_java_reads(
    tables: Warehouse, java_tables: dict[int, TypesTable], version: int
) -> None:
    built = java_tables[version]
    table = frazil_table(built.metadata_location)
    reader = JavaReader(tables.spark, tables.java_table(NAMESPACE, built.name))
    assert len(built.snapshots) == (2 if version == 1 else 3)
    for snapshot_id in built.snapshots:
        expected = reader.rows(f"snapshot:{snapshot_id}", built.schema)
        actual = frazil_rows(table, snapshot_id=snapshot_id)
        assert_same_rows(actual, expected, f"{built.name} snapshot {snapshot_id}")
    assert len(expected) == 24 - (2 if version > 1 else 0)


def _nano_filters(name: str, zone: str) -> list[Filter]:
    """A few filters on a timestamp_ns column (the battery has no nanosecond values)."""
    out = [make_filter(f"{name} is null", {"type": "is-null", "term": name})]
    for text in (NANOS[1], NANOS[2], "1970-01-01T00:00:00.000000000", NANOS[-1]):
        for op in ("lt", "lt-eq", "eq", "gt", "not-eq"):
            expr = {"type": op, "term": name, "value": text + zone}
            out.append(make_filter(f"{name} {op} {text}", expr))
    values = [NANOS[0] + zone, NANOS[3] + zone]
    out.append(make_filter(f"{name} in", {"type": "in", "term": name, "values": values}))
    out.append(make_filter(f"{name} not in", {"type": "not-in", "term": name, "values": values}))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_filters_read_as_java_filters(
    tables: Warehouse, java_tables: dict[int, TypesTable], version: int
) -> None:
    built = java_tables[version]
    table = frazil_table(built.metadata_location)
    reader = JavaReader(tables.spark, tables.java_table(NAMESPACE, built.name))
    reader.view(f"{built.name}_rows", "current", built.schema)
    plain = [c for c in built.columns if "_ns" not in c.type]
    filters = battery(plain, seed=20 + version)
    if version >= 3:
        filters += _nano_filters("tsn", "") + _nano_filters("tsnz", "+00:00")
    assert len(filters) >= 40
    columns = {c.name: plain_column(c.name, c.type) for c in built.columns}
    informative = check_filters(
        tables.spark, f"SELECT * FROM {built.name}_rows", table, filters, columns, built.name
    )
    assert informative >= 40
