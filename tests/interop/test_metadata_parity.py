"""Table and view metadata against Apache Iceberg Java 1.10.2.

Java (through Spark SQL) writes tables of format v1, v2 and v3 with schema, partition and
sort-order evolution, branches and tags; frazil reads every metadata file Java wrote and
writes it back. The checks, for each file:

- frazil writes back exactly the JSON Java wrote (frazil follows Java's writer);
- Java's TableMetadataParser accepts frazil's output, and writes the same JSON for it as
  for its own file (so both describe the same table);
- Java loads a table whose current metadata file was written by frazil, and Spark reads it.

Views (the Hadoop catalog has none) and random schemas go through Java's parsers directly.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from frazil import Schema, TableMetadata, ViewMetadata, read_metadata
from frazil.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
    default_json,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from java_referee import Warehouse

pytestmark = pytest.mark.interop

NAMESPACE = "metadata_parity"


def java_round_trip(java: Any, text: str) -> dict[str, Any]:
    """Java parses table metadata JSON and writes it again."""
    parser = java.org.apache.iceberg.TableMetadataParser
    result: dict[str, Any] = json.loads(parser.toJson(parser.fromJson(text)))
    return result


def build_tables(tables: Warehouse) -> dict[str, list[Path]]:
    """Tables of each format version, evolved in the ways Spark SQL allows."""
    files: dict[str, list[Path]] = {}
    for version in (1, 2, 3):
        table = f"t_v{version}"
        name = tables.name(NAMESPACE, table)
        tables.sql(f"DROP TABLE IF EXISTS {name}")
        tables.sql(
            f"CREATE TABLE {name} (id BIGINT NOT NULL, data STRING, ts TIMESTAMP, "
            "point STRUCT<x: DOUBLE, y: DOUBLE>, tags MAP<STRING, INT>, vals ARRAY<DECIMAL(9,2)>) "
            f"USING iceberg PARTITIONED BY (bucket(16, id), days(ts)) "
            f"TBLPROPERTIES ('format-version'='{version}', 'custom.prop'='x')"
        )
        tables.sql(
            f"INSERT INTO {name} VALUES (1, 'a', TIMESTAMP '2017-11-16 22:31:08', "
            "named_struct('x', 1.0D, 'y', 2.0D), map('k', 1), array(1.25BD)), "
            "(2, 'b', NULL, NULL, NULL, NULL)"
        )
        tables.sql(f"ALTER TABLE {name} ADD COLUMN extra INT COMMENT 'added later'")
        tables.sql(f"ALTER TABLE {name} ADD PARTITION FIELD truncate(4, data)")
        tables.sql(f"ALTER TABLE {name} DROP PARTITION FIELD days(ts)")
        tables.sql(f"ALTER TABLE {name} WRITE ORDERED BY id DESC NULLS LAST, data")
        tables.sql(f"ALTER TABLE {name} SET IDENTIFIER FIELDS id")
        tables.sql(f"INSERT INTO {name} VALUES (3, 'c', NULL, NULL, NULL, NULL, 7)")
        tables.sql(
            f"ALTER TABLE {name} CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION "
            "2 SNAPSHOTS"
        )
        tables.sql(f"ALTER TABLE {name} CREATE TAG release RETAIN 30 DAYS")
        tables.sql(f"DELETE FROM {name} WHERE id = 2")
        tables.sql(f"ALTER TABLE {name} RENAME COLUMN data TO payload")
        files[table] = tables.metadata_files(NAMESPACE, table)
    return files


@pytest.fixture(scope="module")
def java_tables(tables: Warehouse) -> dict[str, list[Path]]:
    return build_tables(tables)


def all_files(java_tables: dict[str, list[Path]]) -> list[Path]:
    return [f for files in java_tables.values() for f in files]


def test_java_wrote_what_we_expect(java_tables: dict[str, list[Path]]) -> None:
    for version in (1, 2, 3):
        files = java_tables[f"t_v{version}"]
        assert len(files) >= 10
        last = json.loads(files[-1].read_text())
        assert last["format-version"] == version
        assert len(last["partition-specs"]) >= 2 and len(last["schemas"]) >= 3
        assert {"main", "audit", "release"} <= set(last["refs"])


def test_frazil_writes_back_what_java_wrote(java_tables: dict[str, list[Path]]) -> None:
    for path in all_files(java_tables):
        original = json.loads(path.read_text())
        metadata = read_metadata(path)
        assert metadata.to_dict() == original, path
        assert TableMetadata.from_json(metadata.to_json()) == metadata


def test_java_reads_frazil_output_as_the_same_table(
    java: Any, java_tables: dict[str, list[Path]]
) -> None:
    for path in all_files(java_tables):
        ours = read_metadata(path).to_json()
        assert java_round_trip(java, ours) == java_round_trip(java, path.read_text()), path


def test_frazil_model_matches_java(
    java: Any, tables: Warehouse, java_tables: dict[str, list[Path]]
) -> None:
    for version in (1, 2, 3):
        table = f"t_v{version}"
        ours = read_metadata(tables.current_metadata_file(NAMESPACE, table))
        theirs = tables.java_table(NAMESPACE, table)
        assert ours.current_snapshot_id == theirs.currentSnapshot().snapshotId()
        assert ours.schema().schema_id == theirs.schema().schemaId()
        assert (
            ours.schema().find_field("payload").field_id
            == theirs.schema()
            .findField(  # type: ignore[union-attr]
                "payload"
            )
            .fieldId()
        )
        assert ours.schema().identifier_field_names == ("id",)
        assert ours.spec().spec_id == theirs.spec().specId()
        assert [f.transform for f in ours.spec().fields] == [
            str(f.transform().toString()) for f in theirs.spec().fields()
        ]
        assert str(ours.sort_order()) != "[]"
        assert ours.sort_order().order_id == theirs.sortOrder().orderId()
        assert {s.snapshot_id for s in ours.snapshots} == {
            s.snapshotId() for s in theirs.snapshots()
        }
        audit = ours.ref("audit")
        assert audit is not None and audit.min_snapshots_to_keep == 2
        assert audit.max_ref_age_ms == 7 * 24 * 3600 * 1000
        if version >= 3:
            assert ours.next_row_id == theirs.operations().current().nextRowId()


def test_java_loads_a_table_whose_metadata_frazil_wrote(
    tables: Warehouse, java_tables: dict[str, list[Path]]
) -> None:
    for version in (1, 2, 3):
        table = f"t_v{version}"
        current = tables.current_metadata_file(NAMESPACE, table)
        metadata = read_metadata(current)
        number = int(current.name[1:].split(".")[0]) + 1
        folder = current.parent
        changed = metadata.replace(properties={**metadata.properties, "written.by": "frazil"})
        (folder / f"v{number}.metadata.json").write_text(changed.to_json())
        (folder / "version-hint.text").write_text(str(number))
        tables.sql(f"REFRESH TABLE {tables.name(NAMESPACE, table)}")
        loaded = tables.java_table(NAMESPACE, table)
        assert loaded.properties().get("written.by") == "frazil"
        rows = tables.sql(f"SELECT id FROM {tables.name(NAMESPACE, table)} ORDER BY id")
        assert [row.id for row in rows] == [1, 3]


# --- views and schemas through Java's parsers ------------------------------------------------


VIEW = {
    "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
    "format-version": 1,
    "location": "s3://bucket/test/location",
    "properties": {"comment": "a view"},
    "schemas": [
        {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "x", "required": True, "type": "long"}],
        },
        {
            "type": "struct",
            "schema-id": 1,
            "fields": [
                {"id": 1, "name": "x", "required": True, "type": "long", "doc": "the x"},
                {"id": 2, "name": "y", "required": False, "type": "string"},
            ],
        },
    ],
    "current-version-id": 2,
    "versions": [
        {
            "version-id": 1,
            "timestamp-ms": 4353,
            "schema-id": 0,
            "summary": {"operation": "create", "engine-name": "spark"},
            "default-namespace": ["ns"],
            "representations": [{"type": "sql", "sql": "select 1 x", "dialect": "spark"}],
        },
        {
            "version-id": 2,
            "timestamp-ms": 5555,
            "schema-id": 1,
            "summary": {"operation": "replace"},
            "default-catalog": "cat",
            "default-namespace": ["a", "b"],
            "representations": [
                {"type": "sql", "sql": "select x, y from t", "dialect": "spark"},
                {"type": "sql", "sql": "select x, y from t", "dialect": "trino"},
            ],
        },
    ],
    "version-log": [
        {"timestamp-ms": 4353, "version-id": 1},
        {"timestamp-ms": 5555, "version-id": 2},
    ],
}


def test_view_metadata_matches_java(java: Any) -> None:
    parser = java.org.apache.iceberg.view.ViewMetadataParser
    theirs = json.loads(parser.toJson(parser.fromJson(json.dumps(VIEW))))
    ours = ViewMetadata.from_json(json.dumps(VIEW))
    assert ours.to_dict() == theirs == VIEW
    assert json.loads(parser.toJson(parser.fromJson(ours.to_json()))) == ours.to_dict()


PRIMITIVES = st.sampled_from(
    [
        BooleanType(),
        IntegerType(),
        LongType(),
        FloatType(),
        DoubleType(),
        DateType(),
        TimeType(),
        TimestampType(),
        TimestamptzType(),
        TimestampNanoType(),
        TimestamptzNanoType(),
        StringType(),
        UUIDType(),
        BinaryType(),
        UnknownType(),
        VariantType(),
        FixedType(7),
        DecimalType(38, 10),
        DecimalType(9, 2),
    ]
)


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    ids = iter(range(1, 100_000))

    def may_require(t: IcebergType) -> bool:
        # Java requires `unknown` to be optional.
        return draw(st.booleans()) and not isinstance(t, UnknownType)

    def build(depth: int) -> IcebergType:
        nested = ["struct", "list", "map"] if depth else []
        kind = draw(st.sampled_from(["primitive"] * 3 + nested))
        if kind == "struct":
            count = draw(st.integers(0, 3))
            children = []
            for i in range(count):
                child = build(depth - 1)
                doc = draw(st.none() | st.text(max_size=5))
                children.append(NestedField(next(ids), f"f{i}", child, may_require(child), doc))
            return StructType(tuple(children))
        if kind == "list":
            element = build(depth - 1)
            return ListType(next(ids), element, may_require(element))
        if kind == "map":
            key_id, value_id = next(ids), next(ids)
            key = draw(PRIMITIVES.filter(lambda t: not isinstance(t, (UnknownType, VariantType))))
            value = build(depth - 1)
            return MapType(key_id, key, value_id, value, may_require(value))
        primitive: IcebergType = draw(PRIMITIVES)
        return primitive

    count = draw(st.integers(1, 5))
    fields = []
    for i in range(count):
        field_type = build(3)
        fields.append(NestedField(next(ids), f"c{i}", field_type, may_require(field_type)))
    return Schema(fields=tuple(fields), schema_id=draw(st.integers(0, 9)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_random_schemas_match_java(java: Any, schema: Schema) -> None:
    parser = java.org.apache.iceberg.SchemaParser
    ours = json.dumps(schema.to_json())
    theirs = json.loads(parser.toJson(parser.fromJson(ours)))
    assert theirs == schema.to_json()
    assert Schema.from_json(theirs) == schema


HAND_WRITTEN = Path(__file__).resolve().parents[1] / "python" / "metadata" / "data"


@pytest.mark.parametrize(
    "name", ["v1-old-writer.metadata.json", "v2-java.metadata.json", "v3-java.metadata.json"]
)
def test_hand_written_metadata_reads_as_java_reads_it(java: Any, name: str) -> None:
    # The unit tests' files, including an old v1 writer's (no lists, no partition field ids),
    # v3 types, default values and an unknown transform.
    text = (HAND_WRITTEN / name).read_text()
    ours = TableMetadata.from_json(text).to_json()
    assert java_round_trip(java, ours) == java_round_trip(java, text)


def test_default_values_match_java(java: Any) -> None:
    # Defaults written through frazil.values read back the same in Java (which re-encodes
    # them with its SingleValueParser).
    cases = [
        (IntegerType(), -(2**31)),
        (LongType(), 2**63 - 1),
        (DoubleType(), 0.1),
        (FloatType(), 1.5),
        (BooleanType(), True),
        (StringType(), "iceberg \U0001d11e"),
        (DecimalType(9, 2), Decimal("-14.20")),
        (DecimalType(38, 10), Decimal("1234567890123456789012345678.0123456789")),
        (DateType(), dt.date(1969, 12, 31)),
        (TimeType(), dt.time(22, 31, 8, 123456)),
        (TimestampType(), dt.datetime(2017, 11, 16, 22, 31, 8, 1)),
        (TimestamptzType(), dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc)),
        (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
        (FixedType(3), b"\x00\x01\xff"),
        (BinaryType(), b""),
    ]
    fields = tuple(
        NestedField(
            i + 1,
            f"c{i}",
            t,
            required=i % 2 == 0,
            initial_default=default_json(t, v),
            write_default=default_json(t, v),
        )
        for i, (t, v) in enumerate(cases)
    )
    schema = Schema(fields=fields, schema_id=1)
    parser = java.org.apache.iceberg.SchemaParser
    theirs = json.loads(parser.toJson(parser.fromJson(json.dumps(schema.to_json()))))
    ours = schema.to_json()
    for mine, java_field in zip(ours["fields"], theirs["fields"], strict=True):
        if mine["type"].startswith(("fixed", "binary")):
            # Java writes fixed hex in upper case, frazil.values in lower case as the spec's
            # example does; both read either.
            for key in ("initial-default", "write-default"):
                assert java_field[key].lower() == mine[key]
                java_field[key] = mine[key]
    assert theirs == ours
    for f, (_, value) in zip(Schema.from_json(theirs).fields, cases, strict=True):
        assert f.initial_default_value() == value
        assert f.write_default_value() == value
