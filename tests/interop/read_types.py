"""Tables of every type for the read parity tests (test_read_types_parity.py), written by
Apache Iceberg Java 1.10.2: through Spark SQL (every type Spark 3.5 has, nested structs, lists
and maps) and through Java's generic Parquet writer over py4j (time, uuid, fixed and, in v3,
timestamp_ns / timestamptz_ns, which Spark 3.5 cannot write or read).

Spark rows are SQL literals, so no value passes through PySpark's datetime conversion: dates
and timestamps from 0001-01-01 to 9999-12-31 (before 1970 and after 2262), decimals up to 38
digits, NaN, infinities and -0.0, empty strings and binaries; NULL lists and maps next to empty
ones, nulls inside lists and as map values, maps with struct values, lists of maps.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from java_referee import Warehouse
from scan_filters import Column, family, to_json_value
from scan_tables import RS, columns_of

NAMESPACE = "read_types"
MERGE_ON_READ = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)
SPARK_DDL = (
    "id INT, b BOOLEAN, i INT, l BIGINT, f FLOAT, d DOUBLE, dec9 DECIMAL(9,2), "
    "dec18 DECIMAL(18,6), dec38 DECIMAL(38,10), dt DATE, ts TIMESTAMP_NTZ, tstz TIMESTAMP, "
    "s STRING, bin BINARY, "
    "st STRUCT<a: INT, s: STRING, inner: STRUCT<x: DOUBLE, dates: ARRAY<DATE>>>, "
    "arr ARRAY<INT>, strs ARRAY<STRING>, nested ARRAY<ARRAY<BIGINT>>, m MAP<STRING, INT>, "
    "ms MAP<INT, STRUCT<p: STRING, q: DOUBLE>>, lm ARRAY<MAP<STRING, TIMESTAMP>>, "
    "sm STRUCT<m: MAP<STRING, STRING>, l: ARRAY<DOUBLE>>"
)
# Partitioned differently per version, so each reads through another partition layout.
SPARK_PARTITIONING = {1: "(b)", 2: "(bucket(3, id), truncate(2, s))", 3: "(days(tstz))"}

_NULL = "NULL"


def _cycle(values: Sequence[str], r: int) -> str:
    return values[r % len(values)]


def _ts(text: str, kind: str) -> str:
    return f"TIMESTAMP_NTZ'{text}'" if kind == "ntz" else f"TIMESTAMP'{text}+00:00'"


STAMPS = (
    "0001-01-01 00:00:00",
    "1969-12-31 23:59:59.999999",
    "1970-01-01 00:00:00",
    "1900-03-01 12:34:56.000001",
    "2024-02-29 08:00:00.5",
    "2262-04-11 23:47:16.854776",
    "2262-04-12 00:00:00",
    "9999-12-31 23:59:59.999999",
)
DATES = ("0001-01-01", "1969-12-31", "1970-01-01", "1582-10-04", "2024-02-29", "9999-12-31")


def spark_row(r: int) -> str:
    """Row ``r`` of the Spark tables as an SQL tuple (SPARK_DDL's order)."""
    nulls_every = r % 7 == 6  # a row of nulls (but its id)
    floats = ("0.5", "-0.0", "0.0", "NaN", "Infinity", "-Infinity", "3.4028235E38", "1.4E-45")
    doubles = ("0.1", "-0.0", "0.0", "NaN", "Infinity", "-Infinity", "1.7976931348623157E308")
    values = [
        str(r),
        _cycle(("true", "false", _NULL), r),
        _cycle(("-2147483648", "2147483647", "0", "-1", str(r * 1000)), r),
        _cycle(("-9223372036854775808", "9223372036854775807", "0", str(-(r**9))), r),
        f"float('{_cycle(floats, r)}')",
        f"double('{_cycle(doubles, r)}')",
        f"CAST('{_cycle(('9999999.99', '-9999999.99', '0.00', '0.01', '-123.45'), r)}' "
        "AS DECIMAL(9,2))",
        f"CAST('{_cycle(('999999999999.999999', '-0.000001', '1.5', '0'), r)}' AS DECIMAL(18,6))",
        "CAST('"
        + _cycle(
            (
                "9999999999999999999999999999.9999999999",
                "-9999999999999999999999999999.9999999999",
                "0.0000000001",
                "12345678901234567890.0123456789",
                "-1",
            ),
            r,
        )
        + "' AS DECIMAL(38,10))",
        f"DATE'{_cycle(DATES, r)}'",
        _ts(_cycle(STAMPS, r), "ntz"),
        _ts(_cycle(STAMPS, r + 3), "tz"),
        "'"
        + _cycle(("", "a", "ab\\'c", "é日本", "😀", "\\\\back", "iceberg-long-string-0123"), r)
        + "'",
        _cycle(("X''", "X'00'", "X'FF00FF'", "X'DEADBEEF'"), r),
        # struct: NULL struct, NULL inner struct, NULL / empty list of dates
        _cycle(
            (
                "named_struct('a', 1, 's', 'x', 'inner', named_struct('x', double('NaN'), "
                "'dates', array(DATE'0001-01-01', NULL)))",
                "CAST(NULL AS STRUCT<a: INT, s: STRING, inner: STRUCT<x: DOUBLE, "
                "dates: ARRAY<DATE>>>)",
                "named_struct('a', NULL, 's', NULL, 'inner', CAST(NULL AS STRUCT<x: DOUBLE, "
                "dates: ARRAY<DATE>>))",
                "named_struct('a', 3, 's', '', 'inner', named_struct('x', -0.0D, "
                "'dates', CAST(array() AS ARRAY<DATE>)))",
                "named_struct('a', 4, 's', 'y', 'inner', named_struct('x', 2.5D, "
                "'dates', CAST(NULL AS ARRAY<DATE>)))",
            ),
            r,
        ),
        _cycle(
            (
                "array(1, NULL, 3)",
                "CAST(array() AS ARRAY<INT>)",
                "CAST(NULL AS ARRAY<INT>)",
                "array(NULL)",
                "array(-2147483648)",
            ),
            r,
        ),
        _cycle(
            (
                "array('a', '', NULL)",
                "CAST(NULL AS ARRAY<STRING>)",
                "CAST(array() AS ARRAY<STRING>)",
            ),
            r,
        ),
        _cycle(
            (
                "array(array(1L, 2L), CAST(array() AS ARRAY<BIGINT>), NULL)",
                "CAST(array() AS ARRAY<ARRAY<BIGINT>>)",
                "CAST(NULL AS ARRAY<ARRAY<BIGINT>>)",
                "array(array(NULL))",
            ),
            r,
        ),
        _cycle(
            (
                "map('k', 1, 'n', NULL)",
                "CAST(map() AS MAP<STRING, INT>)",
                "CAST(NULL AS MAP<STRING, INT>)",
                "map('', 0)",
            ),
            r,
        ),
        _cycle(
            (
                "map(1, named_struct('p', 'one', 'q', 1.0D), 2, NULL)",
                "CAST(NULL AS MAP<INT, STRUCT<p: STRING, q: DOUBLE>>)",
                "CAST(map() AS MAP<INT, STRUCT<p: STRING, q: DOUBLE>>)",
                "map(-1, named_struct('p', NULL, 'q', double('NaN')))",
            ),
            r,
        ),
        _cycle(
            (
                f"array(map('t', {_ts(STAMPS[0], 'tz')}), NULL, CAST(map() AS MAP<STRING, "
                "TIMESTAMP>))",
                "CAST(NULL AS ARRAY<MAP<STRING, TIMESTAMP>>)",
                f"array(map('u', {_ts(STAMPS[-1], 'tz')}, 'v', NULL))",
            ),
            r,
        ),
        _cycle(
            (
                "named_struct('m', map('a', 'b'), 'l', array(1.5D, NULL))",
                "named_struct('m', CAST(NULL AS MAP<STRING, STRING>), "
                "'l', CAST(array() AS ARRAY<DOUBLE>))",
                "named_struct('m', CAST(map() AS MAP<STRING, STRING>), "
                "'l', CAST(NULL AS ARRAY<DOUBLE>))",
                "CAST(NULL AS STRUCT<m: MAP<STRING, STRING>, l: ARRAY<DOUBLE>>)",
            ),
            r,
        ),
    ]
    if nulls_every:
        values = [values[0]] + [_NULL] * (len(values) - 1)
    return "(" + ", ".join(values) + ")"


@dataclass(frozen=True)
class TypesTable:
    """One table written by Java: its Spark name, metadata location, snapshots (oldest
    first), its current schema JSON and the battery columns (scan_filters.Column)."""

    name: str
    sql_name: str
    version: int
    metadata_location: str
    snapshots: tuple[int, ...]
    schema: Mapping[str, Any]
    columns: tuple[Column, ...]


def _finish(
    tables: Warehouse, name: str, version: int, rows: Sequence[Mapping[str, Any]]
) -> TypesTable:
    metadata = tables.current_metadata(NAMESPACE, name)
    schema = next(s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"])
    return TypesTable(
        name=name,
        sql_name=tables.name(NAMESPACE, name),
        version=version,
        metadata_location=str(tables.current_metadata_file(NAMESPACE, name)),
        snapshots=tuple(s["snapshot-id"] for s in metadata["snapshots"]),
        schema=schema,
        columns=columns_of(schema, rows, {}),
    )


def build_spark_table(tables: Warehouse, version: int) -> TypesTable:
    """Two appends, a DELETE and an UPDATE (merge-on-read in v2 and v3: position deletes and
    deletion vectors; copy-on-write in v1)."""
    name = f"spark_v{version}"
    full = tables.name(NAMESPACE, name)
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    properties = f"'format-version'='{version}'" + (f", {MERGE_ON_READ}" if version > 1 else "")
    tables.sql(
        f"CREATE TABLE {full} ({SPARK_DDL}) USING iceberg "
        f"PARTITIONED BY {SPARK_PARTITIONING[version]} TBLPROPERTIES ({properties})"
    )
    for first in (0, 14):
        values = ", ".join(spark_row(r) for r in range(first, first + 14))
        tables.sql(f"INSERT INTO {full} VALUES {values}")
    tables.sql(f"DELETE FROM {full} WHERE id IN (2, 17, 25)")
    tables.sql(f"UPDATE {full} SET s = 'updated', m = map('u', id) WHERE id IN (4, 20)")
    # The battery's probe values: Spark's rows through Arrow (pyarrow's datetimes reach 0001).
    rows = tables.spark.sql(f"SELECT * FROM {full}")._collect_as_arrow()
    return _finish(tables, name, version, [r for b in rows for r in b.to_pylist()])


# --- through Java's API: time, uuid, fixed, timestamp_ns -----------------------------------


def java_schema(version: int) -> dict[str, Any]:
    """The Java-written table's schema; v3 adds timestamp_ns and timestamptz_ns."""
    fields: list[dict[str, Any]] = [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "t", "required": False, "type": "time"},
        {"id": 3, "name": "u", "required": False, "type": "uuid"},
        {"id": 4, "name": "fx", "required": False, "type": "fixed[3]"},
        {"id": 5, "name": "big", "required": False, "type": "decimal(38,0)"},
        {"id": 6, "name": "ts", "required": False, "type": "timestamp"},
        {"id": 7, "name": "tstz", "required": False, "type": "timestamptz"},
        {"id": 8, "name": "f", "required": False, "type": "float"},
        {"id": 9, "name": "s", "required": False, "type": "string"},
        {
            "id": 10,
            "name": "st",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 11, "name": "t", "required": False, "type": "time"},
                    {"id": 12, "name": "u", "required": False, "type": "uuid"},
                ],
            },
        },
    ]
    if version >= 3:
        fields += [
            {"id": 13, "name": "tsn", "required": False, "type": "timestamp_ns"},
            {"id": 14, "name": "tsnz", "required": False, "type": "timestamptz_ns"},
        ]
    return {"type": "struct", "schema-id": 0, "fields": fields}


NANOS = (
    "1677-09-21T00:12:43.145224192",
    "1969-12-31T23:59:59.999999999",
    "1970-01-01T00:00:00.000000001",
    "2024-02-29T12:00:00.123456789",
    "2262-04-11T23:47:16.854775807",
)


def java_row(r: int, version: int) -> dict[str, Any]:
    """Row ``r`` as Python values (timestamp_ns values as their ISO text)."""
    if r % 6 == 5:
        return {"id": r}
    micros = dt.timedelta(microseconds=1)
    row: dict[str, Any] = {
        "id": r,
        "t": (dt.time(0), dt.time(23, 59, 59, 999999), dt.time(12, 0, 0, 1))[r % 3],
        "u": uuid.UUID(bytes=bytes([(0x00, 0x7F, 0x80, 0xFF)[r % 4]]) + bytes([r] * 15)),
        "fx": bytes([r, 0xFF - r, 0x80]),
        "big": Decimal(
            ("99999999999999999999999999999999999999", "-1", "0", str(-(10**37)))[r % 4]
        ),
        "ts": dt.datetime(1, 1, 1) + r * 10**6 * micros if r % 2 else dt.datetime(9999, 12, 31),
        "tstz": (dt.datetime(1969, 12, 31, 23, 59, 59, 999999) + r * micros).replace(
            tzinfo=dt.timezone.utc
        ),
        "f": (-0.0, 0.0, 1.5, 3.4028234663852886e38, -3.25)[r % 5],
        "s": ("", "java", "é")[r % 3],
        "st": None if r % 4 == 3 else {"t": dt.time(r % 24), "u": None},
    }
    if version >= 3:
        row["tsn"] = NANOS[r % len(NANOS)]
        row["tsnz"] = NANOS[(r + 2) % len(NANOS)] + "+00:00"
    return row


def _json_value(type_: str, value: Any) -> Any:
    if family(type_) in ("timestamp_ns", "timestamptz_ns"):
        return value
    return to_json_value(type_, value)


def java_row_json(schema: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """SingleValueParser's struct JSON (keys are field ids) of a row, for PlanReferee."""

    def encode(struct: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in struct["fields"]:
            v = value.get(f["name"])
            if v is None:
                continue
            if isinstance(f["type"], dict):
                out[str(f["id"])] = encode(f["type"], v)
            else:
                out[str(f["id"])] = _json_value(f["type"], v)
        return out

    return json.dumps(encode(schema, row), separators=(",", ":"))


def build_java_table(tables: Warehouse, version: int) -> TypesTable:
    """Appends through Java's generic Parquet writer; from v2 on an equality delete too."""
    java = tables.java
    name = f"java_v{version}"
    schema_json = java_schema(version)
    schema = java.org.apache.iceberg.SchemaParser.fromJson(json.dumps(schema_json))
    props = java.java.util.HashMap()
    props.put("format-version", str(version))
    identifier = java.org.apache.iceberg.catalog.TableIdentifier.parse(f"{NAMESPACE}.{name}")
    spec = java.org.apache.iceberg.PartitionSpec.builderFor(schema)
    if version == 1:
        spec = spec.bucket("u", 2).build()
    elif version == 2:
        spec = spec.identity("s").build()
    else:
        spec = spec.day("tsn").build()
    table = tables.java_catalog().createTable(identifier, schema, spec, props)
    helper = java.org.frazil.interop.PlanReferee
    rows = []
    for first in (0, 12):
        batch = [java_row(r, version) for r in range(first, first + 12)]
        rows.extend(batch)
        halves = (batch[:6], batch[6:])
        text = "\n".join(RS.join(java_row_json(schema_json, r) for r in h) for h in halves)
        helper.appendFiles(table, "", text)
    if version >= 2:
        # scoped to the partition of row 3, which rows 15 (v2) and 13 (v3) share
        deleted = RS.join(json.dumps({"1": i}) for i in (3, 15 if version == 2 else 13))
        partition_row = java_row_json(schema_json, java_row(3, version))
        helper.addEqualityDeletes(table, 0, "1", partition_row, deleted)
    return _finish(tables, name, version, rows)
