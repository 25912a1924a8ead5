"""remove-schemas and remove-partition-specs against Apache Iceberg Java 1.10.2.

- Java's builder (``MetadataUpdate.RemoveSchemas`` / ``RemovePartitionSpecs`` applied to
  ``TableMetadata.buildFrom``) and frazil's ``apply_updates`` make the same metadata from the
  same Java-written file, refuse the current schema and the default spec, and both count a
  removal of unknown ids as a change.
- Two tables built alike by Spark SQL, with a schema and a partition spec that no snapshot
  uses after an overwrite: Java expires one with ``clean_expired_metadata => true``; frazil
  expires the other and commits the removals Java made through its file-system catalog (the
  Hadoop layout). Java then loads frazil's table with the same schemas and specs as its own,
  and Spark reads the same rows.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from frazil import TableMetadata
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.errors import InvalidUpdateError
from frazil.table import (
    RemovePartitionSpecs,
    RemoveSchemas,
    TableUpdate,
    apply_updates,
    requirements_for,
)
from java_referee import Warehouse

pytestmark = pytest.mark.interop

NAMESPACE = "remove_metadata"
STRUCTURE = (
    "schemas",
    "current-schema-id",
    "last-column-id",
    "partition-specs",
    "default-spec-id",
    "last-partition-id",
)


def _build(tables: Warehouse, table: str) -> None:
    """Schema 0 and spec 0 (bucket of id) are used only by the first snapshot; an overwrite
    under schema 1 and spec 1 (truncate of data) replaces every row."""
    name = tables.name(NAMESPACE, table)
    for statement in (
        f"CREATE TABLE {name} (id bigint, data string) USING iceberg "
        "PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version'='2')",
        f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')",
        f"ALTER TABLE {name} ADD COLUMN n int",
        f"ALTER TABLE {name} REPLACE PARTITION FIELD bucket(4, id) WITH truncate(2, data)",
        f"INSERT OVERWRITE {name} VALUES (3, 'cc', 30), (4, 'dd', 40)",
        f"INSERT INTO {name} VALUES (5, 'ee', 50)",
    ):
        tables.sql(statement)


@pytest.fixture(scope="module")
def built(tables: Warehouse) -> dict[str, Path]:
    """Both tables, and the Java-written metadata file of each before any expiry."""
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    before = {}
    for table in ("t_java", "t_frazil"):
        _build(tables, table)
        before[table] = tables.current_metadata_file(NAMESPACE, table)
    return before


def _ids(node: dict[str, Any]) -> tuple[list[int], list[int]]:
    return (
        [s["schema-id"] for s in node["schemas"]],
        [s["spec-id"] for s in node["partition-specs"]],
    )


# --- the builders, side by side -------------------------------------------------------------


def _int_set(java: Any, ids: tuple[int, ...]) -> Any:
    out = java.java.util.HashSet()
    for i in ids:
        out.add(i)
    return out


def _java_apply(java: Any, text: str, schemas: tuple[int, ...], specs: tuple[int, ...]) -> Any:
    iceberg = java.org.apache.iceberg
    builder = iceberg.TableMetadata.buildFrom(iceberg.TableMetadataParser.fromJson(text))
    if schemas:
        getattr(iceberg, "MetadataUpdate$RemoveSchemas")(_int_set(java, schemas)).applyTo(builder)
    if specs:
        remove_specs = getattr(iceberg, "MetadataUpdate$RemovePartitionSpecs")
        remove_specs(_int_set(java, specs)).applyTo(builder)
    return builder.build()


@pytest.mark.parametrize(
    "schemas, specs",
    [((0,), (0,)), ((0,), ()), ((), (0,)), ((9,), ()), ((), (7, 8))],
    ids=["both", "schema", "spec", "unknown-schema", "unknown-specs"],
)
def test_same_metadata_as_javas_builder(
    java: Any, built: dict[str, Path], schemas: tuple[int, ...], specs: tuple[int, ...]
) -> None:
    text = built["t_java"].read_text()
    theirs = _java_apply(java, text, schemas, specs)
    # Java records a change for any non-empty removal, unknown ids included.
    assert theirs.changes().size() == (1 if schemas else 0) + (1 if specs else 0)
    updates: list[TableUpdate] = []
    if schemas:
        updates.append(RemoveSchemas(schemas))
    if specs:
        updates.append(RemovePartitionSpecs(specs))
    base = TableMetadata.from_json(text)
    ours = apply_updates(base, updates, timestamp_ms=theirs.lastUpdatedMillis())
    assert ours is not base
    java_json = json.loads(java.org.apache.iceberg.TableMetadataParser.toJson(theirs))
    assert ours.to_dict() == java_json


def test_the_same_refusals_as_javas_builder(java: Any, built: dict[str, Path]) -> None:
    # PySpark turns Java's IllegalArgumentException (Preconditions.checkArgument) into its own.
    from pyspark.errors import IllegalArgumentException

    text = built["t_java"].read_text()
    base = TableMetadata.from_json(text)
    assert (base.current_schema_id, base.default_spec_id) == (1, 1)
    cases = [
        ((0, 1), (), "Cannot remove the current schema", "cannot remove schema 1"),
        ((), (1,), "Cannot remove the default partition spec", "cannot remove partition spec 1"),
    ]
    for schemas, specs, java_message, message in cases:
        with pytest.raises(IllegalArgumentException, match=java_message):
            _java_apply(java, text, schemas, specs)
        updates = [RemoveSchemas(schemas)] if schemas else [RemovePartitionSpecs(specs)]
        with pytest.raises(InvalidUpdateError, match=message):
            apply_updates(base, updates)


# --- whole tables: Java's cleanExpiredMetadata and frazil's commit -----------------------------


def test_java_reads_the_table_frazil_trimmed(tables: Warehouse, built: dict[str, Path]) -> None:
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).replace(microsecond=0)
    stamp = future.strftime("%Y-%m-%d %H:%M:%S")
    tables.sql(
        f"CALL {tables.catalog}.system.expire_snapshots(table => '{NAMESPACE}.t_java', "
        f"older_than => TIMESTAMP '{stamp}', retain_last => 1, clean_expired_metadata => true)"
    )
    java_before = json.loads(built["t_java"].read_text())
    java_after = tables.current_metadata(NAMESPACE, "t_java")
    assert len(java_after["snapshots"]) == 1
    # The setup is what it claims: Java removed schema 0 and spec 0, kept the others.
    assert _ids(java_before) == ([0, 1], [0, 1])
    assert _ids(java_after) == ([1], [1])

    catalog = FileSystemCatalog("fs", warehouse=str(tables.root))
    table = catalog.load_table(f"{NAMESPACE}.t_frazil")
    table.expire_snapshots(older_than=future, retain_last=1)
    base = catalog.load_table(f"{NAMESPACE}.t_frazil").metadata
    assert _ids(json.loads(base.to_json())) == ([0, 1], [0, 1])
    updates: list[TableUpdate] = [RemovePartitionSpecs((0,)), RemoveSchemas((0,))]
    catalog.commit_updates(f"{NAMESPACE}.t_frazil", requirements_for(base, updates), updates)

    ours = tables.current_metadata(NAMESPACE, "t_frazil")
    assert {key: ours[key] for key in STRUCTURE} == {key: java_after[key] for key in STRUCTURE}
    assert ours["metadata-log"][-1]["metadata-file"].endswith(
        Path(str(base.metadata_location)).name
    )
    tables.sql(f"REFRESH TABLE {tables.name(NAMESPACE, 't_frazil')}")
    loaded = tables.java_table(NAMESPACE, "t_frazil")
    assert sorted(loaded.schemas().keySet()) == [1]
    assert sorted(loaded.specs().keySet()) == [1]
    assert loaded.schema().schemaId() == 1 and loaded.spec().specId() == 1
    rows = {
        table: [
            tuple(row)
            for row in tables.sql(
                f"SELECT id, data, n FROM {tables.name(NAMESPACE, table)} ORDER BY id"
            )
        ]
        for table in ("t_java", "t_frazil")
    }
    assert rows["t_frazil"] == rows["t_java"] == [(3, "cc", 30), (4, "dd", 40), (5, "ee", 50)]
