"""Tables Apache Iceberg Java 1.10.2 writes for the scan-planning parity tests.

Five tables in the Hadoop catalog's namespace ``scan_parity``, each with several snapshots:

- ``types_v2`` (Spark, v2): every primitive type Spark has, a nested struct, NaN, -0.0,
  infinities, nulls, strings and binaries over 16 characters / bytes (truncated bounds, and
  upper bounds that cannot be incremented); partitioned by identity(b); position deletes
  from merge-on-read DELETE, UPDATE and MERGE (file-scoped, Java's default granularity); a
  tag, and a branch with its own append and delete.
- ``transforms_v1`` (Spark, v1): bucket, truncate (int, string), year, hour, then partition
  evolution: hour replaced by day and year dropped (v1 keeps both as void fields), truncate
  on a string and month added. Values sit on both sides of partition edges, before 1970,
  and at the int minimum (where Java's truncate wraps around).
- ``transforms_v2`` (Spark + Java API, v2): unpartitioned first, then identity, bucket,
  truncate (long, decimal, binary), month, day, hour; then month replaced by year and day
  removed (v2 drops them). Partition-scoped position deletes; equality deletes written
  through the Java API, one global (unpartitioned spec) and partition-scoped ones.
- ``dv_v3`` (Spark, v3): deletion vectors from DELETE (twice on one file), UPDATE and MERGE;
  a tag and a branch with its own delete.
- ``java_types`` (Java API, v2): what Spark cannot write (time, uuid, fixed, a 38-digit
  decimal, uuid and time inside a struct) through Iceberg's generic Parquet writer;
  unpartitioned first, then identity(b) and bucket(t); equality deletes, global and
  partition-scoped; a tag. Uuids on both sides of 0x80 (Java 1.10.2 compares them signed).

Several files per partition come from writing the same partitions in several commits.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from java_referee import Warehouse
from scan_filters import Column, Filter, battery, to_json_value
from scan_rows import (
    DV_DDL,
    INT_MAX,
    INT_MIN,
    JAVA_SCHEMA,
    LONG_MAX,
    LONG_MIN,
    LONG_PREFIX,
    TRANSFORM_EDGES,
    TRANSFORMS_DDL,
    TYPES_DDL,
    day,
    dv_rows,
    java_rows,
    local,
    transform_rows,
    types_row,
    utc,
    uuid_of,
)

NAMESPACE = "scan_parity"
RS = "\u001e"
MERGE_ON_READ = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)


@dataclass(frozen=True)
class Selection:
    """A snapshot to plan: Java's form ("current", "snapshot:<id>", "ref:<name>",
    "asof:<ms>", see PlanReferee) and the keyword arguments of frazil's ``table.scan``."""

    label: str
    java: str
    kwargs: Mapping[str, Any]


@dataclass(frozen=True)
class ScanTable:
    name: str
    format_version: int
    metadata_location: str
    columns: tuple[Column, ...]
    selections: tuple[Selection, ...]
    filters: tuple[Filter, ...]
    seconds_to_build: float

    @property
    def types(self) -> dict[str, str]:
        return {c.name: c.type for c in self.columns}

    def filters_for(self, selection: Selection) -> tuple[Filter, ...]:
        """The whole battery for the current snapshot; the constants and every sixth filter
        for the others (time travel picks the snapshot, the battery is tested on current)."""
        if selection.java == "current":
            return self.filters
        return tuple(f for n, f in enumerate(self.filters) if n < 4 or n % 6 == 0)


# --- shared helpers -----------------------------------------------------------------------


def _leaf_columns(schema: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, str, int]]:
    for f in schema["fields"]:
        name = prefix + f["name"]
        if isinstance(f["type"], str):
            yield name, f["type"], f["id"]
        elif f["type"]["type"] == "struct":
            yield from _leaf_columns(f["type"], name + ".")


def flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A row with nested structs -> values by dotted name (a null struct nulls its fields)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, prefix + key + "."))
        else:
            out[prefix + key] = value
    return out


def columns_of(
    schema: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    edges: Mapping[str, Sequence[Any]],
) -> tuple[Column, ...]:
    flat = [flatten(r) for r in rows]
    return tuple(
        Column(name, type_, field_id, tuple(r.get(name) for r in flat), tuple(edges.get(name, ())))
        for name, type_, field_id in _leaf_columns(schema)
    )


class _Table:
    """One table being built: its Spark name, snapshots and the rows written to it."""

    def __init__(self, tables: Warehouse, name: str, version: int) -> None:
        self.tables = tables
        self.name = name
        self.version = version
        self.sql_name = tables.name(NAMESPACE, name)
        self.rows: list[Mapping[str, Any]] = []
        self.started = time.monotonic()

    def sql(self, statement: str) -> None:
        self.tables.sql(statement.replace("{t}", self.sql_name))

    def metadata(self) -> dict[str, Any]:
        return self.tables.current_metadata(NAMESPACE, self.name)

    def snapshot_id(self) -> int:
        value: int = self.metadata()["current-snapshot-id"]
        return value

    def timestamp_ms(self, snapshot_id: int) -> int:
        snapshots = self.metadata()["snapshots"]
        value: int = next(s["timestamp-ms"] for s in snapshots if s["snapshot-id"] == snapshot_id)
        return value

    def append(self, ddl: str, rows: Sequence[Mapping[str, Any]], branch: str = "") -> int:
        """Spark's DataFrame append of ``rows`` (dicts in DDL column order); returns the
        new snapshot id of main (or of the branch)."""
        self.rows.extend(rows)
        data = [_spark_tuple(r) for r in rows]
        target = self.sql_name + (f".branch_{branch}" if branch else "")
        self.tables.spark.createDataFrame(data, schema=ddl).writeTo(target).append()
        if branch:
            value: int = self.metadata()["refs"][branch]["snapshot-id"]
            return value
        return self.snapshot_id()

    def java_table(self) -> Any:
        return self.tables.java_table(NAMESPACE, self.name)

    def schema(self) -> dict[str, Any]:
        """The current schema JSON."""
        metadata = self.metadata()
        schema: dict[str, Any] = next(
            s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]
        )
        return schema

    def finish(
        self, selections: Sequence[Selection], edges: Mapping[str, Sequence[Any]], seed: int
    ) -> ScanTable:
        columns = columns_of(self.schema(), self.rows, edges)
        location = self.tables.current_metadata_file(NAMESPACE, self.name)
        return ScanTable(
            name=self.name,
            format_version=self.version,
            metadata_location=str(location),
            columns=columns,
            selections=(Selection("current", "current", {}), *selections),
            filters=tuple(battery(columns, seed)),
            seconds_to_build=time.monotonic() - self.started,
        )

    def by_id(self, label: str, snapshot_id: int) -> Selection:
        return Selection(label, f"snapshot:{snapshot_id}", {"snapshot_id": snapshot_id})

    def by_time(self, label: str, snapshot_id: int) -> Selection:
        ms = self.timestamp_ms(snapshot_id)
        return Selection(label, f"asof:{ms}", {"as_of": ms})

    def by_ref(self, label: str, ref: str) -> Selection:
        return Selection(label, f"ref:{ref}", {"ref": ref})


def _spark_tuple(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(_spark_tuple(v) if isinstance(v, Mapping) else v for v in row.values())


def java_row(field_ids: Mapping[str, int], row: Mapping[str, Any], types: Mapping[str, str]) -> str:
    """A row as SingleValueParser's struct JSON (keys are field ids) for PlanReferee.
    ``field_ids`` maps dotted leaf names, and each struct's name followed by a dot, to ids."""

    def encode(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, v in value.items():
            name = prefix + key
            if v is None:
                continue
            if isinstance(v, Mapping):
                out[str(field_ids[name + "."])] = encode(v, name + ".")
            else:
                out[str(field_ids[name])] = to_json_value(types[name], v)
        return out

    return json.dumps(encode(row, ""), separators=(",", ":"))


# --- types_v2 -----------------------------------------------------------------------------


def build_types_v2(tables: Warehouse) -> ScanTable:
    t = _Table(tables, "types_v2", 2)
    t.sql(
        f"CREATE TABLE {{t}} ({TYPES_DDL}) USING iceberg PARTITIONED BY (b) "
        f"TBLPROPERTIES ('format-version'='2', {MERGE_ON_READ})"
    )
    batch = [[types_row(k, r) for r in range(12)] for k in range(5)]
    first = t.append(TYPES_DDL, batch[0])
    second = t.append(TYPES_DDL, batch[1])
    t.sql("ALTER TABLE {t} CREATE TAG two")
    t.sql("ALTER TABLE {t} CREATE BRANCH audit")
    t.append(TYPES_DDL, [{**r, "id": 400 + r["id"] % 100} for r in batch[4]], branch="audit")
    t.sql("DELETE FROM {t}.branch_audit WHERE id IN (101, 402)")
    third = t.append(TYPES_DDL, batch[2])
    t.append(TYPES_DDL, batch[3])
    t.sql("DELETE FROM {t} WHERE id IN (3, 4, 205)")  # position deletes in three files
    t.sql("UPDATE {t} SET s = 'updated', i = 7 WHERE id IN (106, 300)")
    t.sql(
        "MERGE INTO {t} AS target USING (SELECT id, d FROM {t} WHERE id IN (1, 2, 110)) AS src "
        "ON target.id = src.id WHEN MATCHED THEN UPDATE SET target.d = 99.5"
    )
    t.rows.extend(
        {**r, "s": "updated", "i": 7} for r in batch[1] + batch[3] if r["id"] in (106, 300)
    )
    selections = [
        t.by_id("first snapshot", first),
        t.by_time("as of the third append", third),
        t.by_ref("tag two", "two"),
        t.by_ref("branch audit", "audit"),
        t.by_id("second snapshot", second),
    ]
    edges: dict[str, list[Any]] = {
        "dt": [day("1970-01-01"), day("1969-12-31")],
        "ts": [local("1970-01-01T00:00:00")],
        "tstz": [utc("1970-01-01T00:00:00"), utc("1969-12-31T23:00:00")],
        "s": [LONG_PREFIX, LONG_PREFIX + "fix-0005", LONG_PREFIX + "zzzz"],
        "bin": [b"\x00" * 17 + b"\x05", b"\xff" * 16, b"\xff" * 21],
        "i": [INT_MIN, INT_MAX],
        "l": [LONG_MIN, LONG_MAX],
    }
    return t.finish(selections, edges, seed=2)


# --- transforms_v1 / transforms_v2 ---------------------------------------------------------


def build_transforms_v1(tables: Warehouse) -> ScanTable:
    t = _Table(tables, "transforms_v1", 1)
    t.sql(
        f"CREATE TABLE {{t}} ({TRANSFORMS_DDL}) USING iceberg "
        "PARTITIONED BY (bucket(4, id), truncate(10, i), years(dt), hours(ts)) "
        "TBLPROPERTIES ('format-version'='1')"
    )
    first = t.append(TRANSFORMS_DDL, transform_rows(0))
    t.append(TRANSFORMS_DDL, transform_rows(1))
    t.sql("ALTER TABLE {t} REPLACE PARTITION FIELD hours(ts) WITH days(ts)")
    t.sql("ALTER TABLE {t} DROP PARTITION FIELD years(dt)")
    middle = t.append(TRANSFORMS_DDL, transform_rows(2))
    t.sql("ALTER TABLE {t} ADD PARTITION FIELD truncate(3, s)")
    t.sql("ALTER TABLE {t} ADD PARTITION FIELD months(tsn)")
    t.append(TRANSFORMS_DDL, transform_rows(3))
    t.append(TRANSFORMS_DDL, transform_rows(4))
    selections = [
        t.by_id("first snapshot", first),
        t.by_time("as of the append after the void fields", middle),
    ]
    return t.finish(selections, TRANSFORM_EDGES, seed=1)


def build_transforms_v2(tables: Warehouse) -> ScanTable:
    t = _Table(tables, "transforms_v2", 2)
    t.sql(
        f"CREATE TABLE {{t}} ({TRANSFORMS_DDL}) USING iceberg TBLPROPERTIES "
        f"('format-version'='2', {MERGE_ON_READ}, 'write.delete.granularity'='partition')"
    )
    first = t.append(TRANSFORMS_DDL, transform_rows(0))
    expressions = tables.java.org.apache.iceberg.expressions.Expressions
    (
        t.java_table()
        .updateSpec()
        .addField("cat")
        .addField(expressions.bucket("s", 3))
        .addField(expressions.truncate("l", 1000))
        .addField(expressions.truncate("dec", 100))
        .addField(expressions.truncate("bin", 4))
        .addField(expressions.month("dt"))
        .addField(expressions.day("tsn"))
        .addField(expressions.hour("ts"))
        .commit()
    )
    t.sql("REFRESH TABLE {t}")
    t.append(TRANSFORMS_DDL, transform_rows(1))
    partitioned = t.append(TRANSFORMS_DDL, transform_rows(2))
    (
        t.java_table()
        .updateSpec()
        .removeField("dt_month")
        .addField(expressions.year("dt"))
        .removeField("tsn_day")
        .commit()
    )
    t.sql("REFRESH TABLE {t}")
    t.append(TRANSFORMS_DDL, transform_rows(3))
    t.sql("DELETE FROM {t} WHERE id IN (2, 5) AND x > 100")  # partition-scoped deletes
    ids = {name: field_id for name, _, field_id in _leaf_columns(t.schema())}
    types = {name: type_ for name, type_, _ in _leaf_columns(t.schema())}
    rows = transform_rows(0)
    helper = tables.java.org.frazil.interop.PlanReferee
    # global: the unpartitioned spec 0; then scoped to one partition of spec 1 and of spec 2
    helper.addEqualityDeletes(
        t.java_table(),
        0,
        str(ids["id"]),
        "",
        java_row(ids, {"id": 7}, types) + RS + java_row(ids, {"id": 8}, types),
    )
    helper.addEqualityDeletes(
        t.java_table(),
        1,
        str(ids["s"]),
        java_row(ids, rows[4], types),
        java_row(ids, {"s": rows[4]["s"]}, types),
    )
    deletes = helper.addEqualityDeletes(
        t.java_table(),
        2,
        f"{ids['i']},{ids['cat']}",
        java_row(ids, rows[9], types),
        java_row(ids, {"i": rows[9]["i"], "cat": rows[9]["cat"]}, types),
    )
    t.sql("REFRESH TABLE {t}")
    t.append(TRANSFORMS_DDL, transform_rows(4))  # newer than the equality deletes
    selections = [
        t.by_id("unpartitioned snapshot", first),
        t.by_id("under the first partitioned spec", partitioned),
        t.by_time("as of the equality deletes", deletes),
    ]
    return t.finish(selections, TRANSFORM_EDGES, seed=3)


# --- dv_v3 --------------------------------------------------------------------------------


def build_dv_v3(tables: Warehouse) -> ScanTable:
    t = _Table(tables, "dv_v3", 3)
    t.sql(
        f"CREATE TABLE {{t}} ({DV_DDL}) USING iceberg PARTITIONED BY (cat, days(ts)) "
        f"TBLPROPERTIES ('format-version'='3', {MERGE_ON_READ})"
    )
    t.append(DV_DDL, dv_rows(0))
    second = t.append(DV_DDL, dv_rows(100))
    t.sql("DELETE FROM {t} WHERE id IN (0, 1, 101)")
    deleted = t.snapshot_id()
    t.sql("DELETE FROM {t} WHERE id = 6")  # the file of id 0 again: its DV is replaced
    t.sql("ALTER TABLE {t} CREATE TAG before_update")
    t.sql("UPDATE {t} SET v = v + 1 WHERE id IN (105, 9)")
    t.rows.extend({**r, "v": r["v"] + 1} for r in t.rows[:48] if r["id"] in (105, 9))
    t.sql("ALTER TABLE {t} CREATE BRANCH dev")
    t.sql("DELETE FROM {t}.branch_dev WHERE cat = 'b' AND id > 110")
    t.append(DV_DDL, dv_rows(200)[:6], branch="dev")
    t.sql(
        "MERGE INTO {t} AS target USING (SELECT id FROM {t} WHERE id IN (2, 3, 120)) AS src "
        "ON target.id = src.id WHEN MATCHED AND target.id = 2 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET target.s = 'merged'"
    )
    t.rows.extend({**r, "s": "merged"} for r in t.rows[:48] if r["id"] in (3, 120))
    selections = [
        t.by_id("second snapshot", second),
        t.by_time("as of the first delete", deleted),
        t.by_ref("tag before_update", "before_update"),
        t.by_ref("branch dev", "dev"),
    ]
    edges = {"ts": [utc("1970-01-01T00:00:00"), utc("1969-12-31T23:59:59.999999")]}
    return t.finish(selections, edges, seed=4)


# --- java_types ---------------------------------------------------------------------------


def build_java_types(tables: Warehouse) -> ScanTable:
    java = tables.java
    t = _Table(tables, "java_types", 2)
    schema = java.org.apache.iceberg.SchemaParser.fromJson(json.dumps(JAVA_SCHEMA))
    props = java.java.util.HashMap()
    props.put("format-version", "2")
    identifier = java.org.apache.iceberg.catalog.TableIdentifier.parse(f"{NAMESPACE}.java_types")
    table = tables.java_catalog().createTable(
        identifier, schema, java.org.apache.iceberg.PartitionSpec.unpartitioned(), props
    )
    helper = java.org.frazil.interop.PlanReferee
    ids = {name: field_id for name, _, field_id in _leaf_columns(JAVA_SCHEMA)}
    ids["st."] = 9  # java_row finds a struct's id under its name and a dot
    types = {name: type_ for name, type_, _ in _leaf_columns(JAVA_SCHEMA)}

    def append(k: int, branch: str = "") -> int:
        rows = java_rows(k)
        t.rows.extend(rows)
        # two commits' worth of files per call: each half goes to its own files
        text = "\n".join(
            RS.join(java_row(ids, r, types) for r in half) for half in (rows[:4], rows[4:])
        )
        snapshot: int = helper.appendFiles(table, branch, text)
        return snapshot

    first = append(0)
    expressions = java.org.apache.iceberg.expressions.Expressions
    table.updateSpec().addField("b").addField(expressions.bucket("t", 2)).commit()
    second = append(1)
    append(2)
    table.manageSnapshots().createTag("three", table.currentSnapshot().snapshotId()).commit()
    global_delete = java_row(ids, {"id": 3}, types) + RS + java_row(ids, {"id": 12}, types)
    helper.addEqualityDeletes(table, 0, "1", "", global_delete)
    row = java_rows(2)[5]
    helper.addEqualityDeletes(
        table, 1, "8", java_row(ids, row, types), java_row(ids, {"s": row["s"]}, types)
    )
    append(3)
    selections = [
        t.by_id("first snapshot", first),
        t.by_time("as of the second append", second),
        t.by_ref("tag three", "three"),
    ]
    edges: dict[str, list[Any]] = {
        "u": [uuid_of(0x80, 0), uuid_of(0x7F, 0xFF), uuid_of(0x00, 0), uuid_of(0xFF, 0xFF)],
        "t": [dt.time(0, 0), dt.time(23, 59, 59, 999999), dt.time(12, 0)],
        "fx": [bytes([1, 0, 0, 0]), bytes([0xFF] * 4)],
    }
    return t.finish(selections, edges, seed=5)


BUILDERS: dict[str, Callable[[Warehouse], ScanTable]] = {
    "types_v2": build_types_v2,
    "transforms_v1": build_transforms_v1,
    "transforms_v2": build_transforms_v2,
    "dv_v3": build_dv_v3,
    "java_types": build_java_types,
}


def build_all(tables: Warehouse) -> dict[str, ScanTable]:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    return {name: build(tables) for name, build in BUILDERS.items()}
