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
  Spark and Java do the same), and time travel by id with the snapshot's schema;
- a filter at an old snapshot binds to that snapshot's schema (its old column names), as
  Java's scans do since apache/iceberg#13301 (Java 1.11; the 1.10.2 referee still refuses
  them), and on a branch to the current schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from frazil.errors import UnknownFieldError
from java_referee import JavaPlanError, PlanReferee, Warehouse
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


def test_time_travel_filters_bind_to_the_snapshot_schema(
    tables: Warehouse, plan_referee: PlanReferee
) -> None:
    """issue 22: after ``name`` is renamed to ``full_name``, dropped and added again, a
    filter on ``name`` at the old snapshot (by id, tag or time) reads the rows of Java's
    snapshot read whose ``name`` matches, and ``full_name`` there is unknown; a branch made
    at that snapshot reads with the current schema, as Java and Spark do."""
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.read_refs")
    full = tables.name("read_refs", "renamed")
    tables.sql(
        f"CREATE TABLE {full} (id bigint, name string) USING iceberg "
        "PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='2')"
    )
    tables.sql(f"INSERT INTO {full} VALUES (1, 'alice'), (2, 'bob'), (3, NULL), (4, 'alice')")
    tables.sql(f"ALTER TABLE {full} CREATE TAG before")
    tables.sql(f"ALTER TABLE {full} CREATE BRANCH side")
    tables.sql(f"ALTER TABLE {full} RENAME COLUMN name TO full_name")
    tables.sql(f"ALTER TABLE {full} DROP COLUMN full_name")
    tables.sql(f"ALTER TABLE {full} ADD COLUMN full_name string")
    tables.sql(f"INSERT INTO {full} VALUES (10, 'alice'), (11, 'zed')")
    location = str(tables.current_metadata_file("read_refs", "renamed"))
    table = frazil_table(location)
    old = tables.current_metadata("read_refs", "renamed")["snapshots"][0]
    java_rows = plain_rows(
        spark_arrow(tables.spark, f"SELECT * FROM {full} VERSION AS OF 'before'")
    )
    alice = [r for r in java_rows if r[1] == "alice"]
    assert len(alice) == 2
    for scan in (
        {"snapshot_id": old["snapshot-id"]},
        {"ref": "before"},
        {"as_of": old["timestamp-ms"]},
    ):
        assert_same_rows(frazil_rows(table, **scan), java_rows, f"{scan}")
        assert_same_rows(frazil_rows(table, row_filter="name = 'alice'", **scan), alice, f"{scan}")
        assert table.scan(row_filter="name = 'alice'", **scan).count() == len(alice)
        with pytest.raises(UnknownFieldError, match="full_name"):
            table.scan(row_filter="full_name = 'alice'", **scan).count()
    # Java 1.10.2 (the referee) binds the filter of such a scan to the current schema and
    # refuses the snapshot's name (apache/iceberg#11162, fixed by #13301 in Java 1.11);
    # frazil follows the fix, as the Java docs' "schema selection in time travel" says.
    java_table = plan_referee.load(location)
    name_eq = json.dumps({"type": "eq", "term": "name", "value": "alice"})
    refused = plan_referee.plan_all(java_table, "ref:before", [name_eq])[0]
    assert isinstance(refused, JavaPlanError) and "'name'" in refused.message
    # A branch reads with the current schema: full_name is field 3, which its rows lack.
    full_eq = json.dumps({"type": "eq", "term": "full_name", "value": "alice"})
    java_plan = plan_referee.plan_all(java_table, "ref:side", [full_eq])[0]
    assert not isinstance(java_plan, JavaPlanError)
    ours = {
        t.file.file_path
        for t in table.scan(ref="side", row_filter="full_name = 'alice'").plan_files()
    }
    assert ours == set(java_plan)
    for where in ("", " WHERE full_name = 'alice'", " WHERE full_name IS NULL"):
        query = f"SELECT * FROM {full}.branch_side{where}"
        expected = plain_rows(spark_arrow(tables.spark, query))
        actual = plain_rows(table.scan(ref="side", row_filter=where[7:] or None).to_arrow())
        assert_same_rows(actual, expected, query)
    with pytest.raises(UnknownFieldError):
        table.scan(ref="side", row_filter="name = 'alice'").count()
