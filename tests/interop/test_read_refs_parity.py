"""Branches, tags and time travel read as Spark (Iceberg Java 1.10.2) reads them (issue 11).

``table.scan(snapshot_id=...)``, ``scan(ref=...)`` (a tag or a branch), ``scan(as_of=ms)`` and
``scan().use_ref(name)`` each equal Spark's ``VERSION AS OF <id>``, ``VERSION AS OF '<ref>'``,
``<table>.branch_<name>`` and ``TIMESTAMP AS OF`` reads, row for row:

- over every snapshot and selection of the scan-planning tables (tests/interop/scan_tables.py:
  a branch with its own appends and deletes, tags, time travel across position deletes,
  deletion vectors, equality deletes and partition evolution); the table Java's API wrote
  (time columns, which Spark cannot read) against Java's generic reader;
- a table whose schema changes after a tag and a branch were made: a tag reads with its
  snapshot's schema, a branch with the table's current schema (spec "Snapshot References";
  Spark and Java do the same), and time travel by id with the snapshot's schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from java_referee import Warehouse
from read_parity import (
    JavaReader,
    assert_same_rows,
    frazil_rows,
    frazil_table,
    plain_rows,
    spark_arrow,
)
from scan_tables import NAMESPACE, ScanTable

SPARK_TABLES = ("types_v2", "transforms_v1", "transforms_v2", "dv_v3")


def _spark_query(full: str, scan: dict[str, Any]) -> str:
    if "snapshot_id" in scan:
        return f"SELECT * FROM {full} VERSION AS OF {scan['snapshot_id']}"
    if "ref" in scan:
        return f"SELECT * FROM {full} VERSION AS OF '{scan['ref']}'"
    if "as_of" in scan:
        return f"SELECT * FROM {full} TIMESTAMP AS OF timestamp_millis({scan['as_of']})"
    return f"SELECT * FROM {full}"


def _check(tables: Warehouse, table: Any, query: str, label: str, **scan: Any) -> int:
    expected = plain_rows(spark_arrow(tables.spark, query))
    assert_same_rows(frazil_rows(table, **scan), expected, f"{label}: {query}")
    return len(expected)


@pytest.mark.parametrize("name", SPARK_TABLES)
def test_selections_read_as_spark_reads(
    tables: Warehouse, scan_tables: dict[str, ScanTable], name: str
) -> None:
    built = scan_tables[name]
    table = frazil_table(built.metadata_location)
    full = tables.name(NAMESPACE, name)
    for selection in built.selections:
        query = _spark_query(full, dict(selection.kwargs))
        assert _check(tables, table, query, selection.label, **selection.kwargs) > 0
    for snapshot in tables.current_metadata(NAMESPACE, name)["snapshots"]:
        snapshot_id = snapshot["snapshot-id"]
        query = _spark_query(full, {"snapshot_id": snapshot_id})
        _check(tables, table, query, "snapshot", snapshot_id=snapshot_id)
    for ref, info in tables.current_metadata(NAMESPACE, name)["refs"].items():
        if info["type"] == "branch" and ref != "main":
            query = f"SELECT * FROM {full}.branch_{ref}"
            expected = plain_rows(spark_arrow(tables.spark, query))
            actual = plain_rows(table.scan().use_ref(ref).to_arrow())
            assert_same_rows(actual, expected, query)


def test_java_table_selections_read_as_java_reads(
    tables: Warehouse, scan_tables: dict[str, ScanTable]
) -> None:
    built = scan_tables["java_types"]
    table = frazil_table(built.metadata_location)
    reader = JavaReader(tables.spark, tables.java_table(NAMESPACE, built.name))
    for selection in built.selections:
        schema = table.scan(**selection.kwargs).schema().to_json()
        expected = reader.rows(selection.java, schema)
        actual = frazil_rows(table, **selection.kwargs)
        assert_same_rows(actual, expected, f"java_types {selection.label}")
        assert expected


def test_refs_across_schema_changes(tables: Warehouse) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.read_refs")
    full = tables.name("read_refs", "evolving")
    tables.sql(
        f"CREATE TABLE {full} (id bigint, name string, score double) USING iceberg "
        "PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read')"
    )
    tables.sql(f"INSERT INTO {full} VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, NULL, -0.0)")
    tables.sql(f"ALTER TABLE {full} CREATE TAG before_change")
    tables.sql(f"ALTER TABLE {full} CREATE BRANCH side")
    tables.sql(f"INSERT INTO {full}.branch_side VALUES (10, 'side', 10.0)")
    tables.sql(f"ALTER TABLE {full} ADD COLUMN extra int")
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN name TO label")
    tables.sql(f"ALTER TABLE {full} DROP COLUMN score")
    tables.sql(f"INSERT INTO {full} VALUES (4, 'd', 40), (5, 'e', NULL)")
    tables.sql(f"DELETE FROM {full}.branch_side WHERE id = 2")
    tables.sql(f"INSERT INTO {full}.branch_side VALUES (11, 'side2', 11)")
    tables.sql(f"ALTER TABLE {full} CREATE TAG after_change")
    table = frazil_table(str(tables.current_metadata_file("read_refs", "evolving")))
    metadata = tables.current_metadata("read_refs", "evolving")
    checks = [
        (f"SELECT * FROM {full} VERSION AS OF 'before_change'", {"ref": "before_change"}),
        (f"SELECT * FROM {full} VERSION AS OF 'after_change'", {"ref": "after_change"}),
        (f"SELECT * FROM {full}.branch_side", {"ref": "side"}),
        (f"SELECT * FROM {full} VERSION AS OF 'side'", {"ref": "side"}),
        (f"SELECT * FROM {full}", {}),
    ]
    checks += [
        (
            f"SELECT * FROM {full} VERSION AS OF {s['snapshot-id']}",
            {"snapshot_id": s["snapshot-id"]},
        )
        for s in metadata["snapshots"]
    ]
    for query, scan in checks:
        assert _check(tables, table, query, "evolving", **scan) > 0
    # The tag keeps its snapshot's columns; the branch reads with the table's schema.
    assert table.scan(ref="before_change").to_arrow().column_names == ["id", "name", "score"]
    assert table.scan(ref="side").to_arrow().column_names == ["id", "label", "extra"]
