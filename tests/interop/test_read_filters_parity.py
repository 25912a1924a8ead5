"""Filtered scans read the rows Spark (Iceberg Java 1.10.2) reads under the same filter (issue 11).

The tables are the scan-planning parity tables (tests/interop/scan_tables.py, built once per
run): v1 and v2 tables partitioned by every transform (identity, bucket, truncate, year,
month, day, hour, and void fields left by partition evolution in v1), a table of every type
Spark writes with position deletes, a v3 table with deletion vectors, and a table Java's API
wrote with time, uuid, fixed and a 38-digit decimal plus equality deletes. Each carries a
battery of filters (scan_filters.battery: every operation on every column at its lowest,
middle and highest values, beyond them, at the partition edges; IS NULL, IS NAN, IN over 200
values, NOT IN, starts-with, AND / OR / NOT combinations): hundreds per table, on the source
columns of the partition transforms too.

For each filter, ``frazil scan(row_filter=...).to_arrow()`` must equal the rows the referee
read for that snapshot with the filter applied as Spark SQL (read_parity.where_sql, which
spells out Iceberg's row semantics for nulls, NaN and -0.0). Spark reads the Spark-readable
tables; Java's generic reader (IcebergGenerics) reads the one with time columns, which Spark
3.5 cannot read, and its rows go into a Spark view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from java_referee import Warehouse
from read_parity import (
    JavaReader,
    check_filters,
    frazil_table,
    plain_column,
    spark_column,
    spread,
)
from scan_filters import Filter
from scan_tables import NAMESPACE, ScanTable

SPARK_TABLES = ("types_v2", "transforms_v1", "transforms_v2", "dv_v3")
# truncate[W] partition fields whose value Java wraps around near the type's minimum: column,
# width, type minimum. Java files the row -2147483648 under truncate[10] as 2147483646 (``v -
# v % W`` overflows); the spec's value lies below the minimum, so no partition value is right,
# and frazil may skip such a file for a filter on the column (as test_scan_parity allows).
WRAPPING_TRUNCATES = {"transforms_v1": ("i", 10, -(2**31)), "transforms_v2": ("l", 1000, -(2**63))}


def _wrapped_rows(name: str) -> Callable[[Filter, Mapping[str, Any]], bool] | None:
    if name not in WRAPPING_TRUNCATES:
        return None
    column, width, minimum = WRAPPING_TRUNCATES[name]

    def may_skip(f: Filter, row: Mapping[str, Any]) -> bool:
        value = row[column]
        return column in f.columns and value is not None and value - value % width < minimum

    return may_skip


def _spark_source(tables: Warehouse, name: str, scan: dict[str, Any]) -> str:
    full = tables.name(NAMESPACE, name)
    if "snapshot_id" in scan:
        return f"SELECT * FROM {full} VERSION AS OF {scan['snapshot_id']}"
    if "ref" in scan:
        return f"SELECT * FROM {full} VERSION AS OF '{scan['ref']}'"
    if "as_of" in scan:
        return f"SELECT * FROM {full} TIMESTAMP AS OF timestamp_millis({scan['as_of']})"
    return f"SELECT * FROM {full}"


@pytest.mark.parametrize("name", SPARK_TABLES)
def test_filters_read_what_spark_reads(
    tables: Warehouse, scan_tables: dict[str, ScanTable], name: str
) -> None:
    built = scan_tables[name]
    table = frazil_table(built.metadata_location)
    columns = {c.name: spark_column(c.name, c.type) for c in built.columns}
    informative = 0
    for selection in built.selections:
        filters = spread(built.filters_for(selection), 60 if selection.java == "current" else 15)
        source = _spark_source(tables, name, dict(selection.kwargs))
        label = f"{name} {selection.label}"
        informative += check_filters(
            tables.spark,
            source,
            table,
            filters,
            columns,
            label,
            may_skip=_wrapped_rows(name),
            **selection.kwargs,
        )
    assert len(built.filters) >= 40
    assert informative >= 40, "most filters must keep some rows and drop others"


def test_filters_read_what_java_reads(tables: Warehouse, scan_tables: dict[str, ScanTable]) -> None:
    built = scan_tables["java_types"]
    table = frazil_table(built.metadata_location)
    reader = JavaReader(tables.spark, tables.java_table(NAMESPACE, built.name))
    columns = {c.name: plain_column(c.name, c.type) for c in built.columns}
    informative = 0
    for selection in built.selections:
        schema = table.scan(**selection.kwargs).schema()
        reader.view("java_types_rows", selection.java, schema.to_json())
        informative += check_filters(
            tables.spark,
            "SELECT * FROM java_types_rows",
            table,
            spread(built.filters_for(selection), 60 if selection.java == "current" else 15),
            columns,
            f"java_types {selection.label}",
            **selection.kwargs,
        )
    assert informative >= 40
