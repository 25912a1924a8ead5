"""Catalog interop with Apache Iceberg Java: frazil's SqlCatalog and Java's JdbcCatalog on one
SQLite file and on one PostgreSQL database, frazil's FileSystemCatalog and Java's HadoopCatalog
on one warehouse.

For each pair: a table frazil creates and evolves (schema and properties) is loaded by Java;
Java inserts rows into it (a commit after frazil's) and frazil reads them; frazil commits
after Java and Java sees it; a namespace and table Java creates are listed and read by frazil;
namespaces created by either are listed by the other.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.types import IntegerType

pytestmark = pytest.mark.interop


def _configure(spark: Any, name: str, options: dict[str, str]) -> None:
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    # Java must see every commit of frazil's at once, not a cached table.
    spark.conf.set(f"spark.sql.catalog.{name}.cache-enabled", "false")
    for key, value in options.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)


def _pair(kind: str, spark: Any, tmp: Path, request: pytest.FixtureRequest) -> Catalog:
    """frazil's catalog, and the same catalog configured in Spark under the same name."""
    name = f"c{kind[:2]}{uuid.uuid4().hex[:6]}"
    warehouse = str(tmp / "warehouse")
    if kind == "hadoop":
        _configure(spark, name, {"type": "hadoop", "warehouse": warehouse})
        return FileSystemCatalog(name, warehouse=warehouse)
    common = {"type": "jdbc", "warehouse": warehouse, "jdbc.schema-version": "V1"}
    if kind == "sqlite":
        path = tmp / "catalog.db"
        _configure(spark, name, {**common, "uri": f"jdbc:sqlite:{path}"})
        return SqlCatalog(name, uri=f"sqlite:///{path}", warehouse=warehouse)
    uri: str = request.getfixturevalue("postgres_uri")
    address = uri.split("@", 1)[1]
    _configure(
        spark, name, {**common, "uri": f"jdbc:postgresql://{address}", "jdbc.user": "postgres"}
    )
    return SqlCatalog(name, uri=uri, warehouse=warehouse)


def _fresh_java_catalog(spark: Any, name: str) -> Any:
    """A new Java catalog instance (CatalogUtil.buildIcebergCatalog) with the Spark catalog's
    options. On SQLite, Spark's own instance may answer from a stale read snapshot: Java's
    JdbcCatalog leaves a cursor open on a pooled connection (the unclosed ResultSet of its
    schema check at initialisation), which pins that connection to the database as it was
    then; a fresh instance reads the database as it is."""
    jvm = spark._jvm
    options = jvm.java.util.HashMap()
    for key in ("type", "warehouse", "jdbc.schema-version", "uri", "jdbc.user"):
        value = spark.conf.get(f"spark.sql.catalog.{name}.{key}", None)
        if value is not None:
            options.put(key, value)
    conf = spark._jsc.hadoopConfiguration()
    return jvm.org.apache.iceberg.CatalogUtil.buildIcebergCatalog(name, options, conf)


def _renew_spark_catalogs(kind: str, spark: Any) -> None:
    """On SQLite, make Spark build its catalog instances anew (see _fresh_java_catalog: an
    instance created before another writer's commit can neither see it nor write after it)."""
    if kind == "sqlite":
        spark._jsparkSession.sessionState().catalogManager().reset()


def _rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "hadoop"])
def test_catalog_parity(
    kind: str, spark: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    catalog = _pair(kind, spark, tmp_path, request)
    name = catalog.name

    # frazil creates and evolves; Java loads what frazil committed.
    catalog.create_namespace("fz")
    table = catalog.create_table(
        "fz.t",
        pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())]),
        properties={"created-by": "frazil"},
    )
    with table.update_schema() as update:
        update.add_column("extra", IntegerType())
    with table.update_properties() as update:
        update.set("stage", "evolved")
    assert ("fz",) in _rows(spark, f"SHOW NAMESPACES IN {name}")
    assert spark.table(f"{name}.fz.t").schema.names == ["id", "name", "extra"]
    props = dict(_rows(spark, f"SHOW TBLPROPERTIES {name}.fz.t"))
    assert props["created-by"] == "frazil" and props["stage"] == "evolved"

    # Java commits after frazil (an append); frazil reads the rows.
    spark.sql(f"INSERT INTO {name}.fz.t VALUES (1, 'a', 10), (2, 'b', NULL)")
    loaded = catalog.load_table("fz.t")
    assert len(loaded.metadata.metadata_log) == 3  # frazil's two commits, then Java's
    rows = loaded.scan().to_arrow().sort_by("id").to_pylist()
    assert rows == [
        {"id": 1, "name": "a", "extra": 10},
        {"id": 2, "name": "b", "extra": None},
    ]

    # frazil commits after Java; Java sees it, and Java's next commit builds on it.
    with loaded.update_properties() as update:
        update.set("after-java", "yes")
    with loaded.update_schema() as update:
        update.rename_column("extra", "bonus")
    java_catalog = _fresh_java_catalog(spark, name)
    identifier = spark._jvm.org.apache.iceberg.catalog.TableIdentifier.parse("fz.t")
    java_table = java_catalog.loadTable(identifier)
    assert java_table.properties().get("after-java") == "yes"
    assert [f.name() for f in java_table.schema().columns()] == ["id", "name", "bonus"]
    java_table.updateProperties().set("java-again", "1").commit()
    _renew_spark_catalogs(kind, spark)
    spark.sql(f"INSERT INTO {name}.fz.t VALUES (3, 'c', 30)")
    assert _rows(spark, f"SELECT id, bonus FROM {name}.fz.t ORDER BY id") == [
        (1, 10),
        (2, None),
        (3, 30),
    ]
    final = catalog.load_table("fz.t")
    assert final.properties["after-java"] == "yes" and final.properties["java-again"] == "1"
    assert sorted(final.scan().to_arrow().column("bonus").to_pylist(), key=str) == [10, 30, None]

    # Java creates a namespace and a table with rows; frazil lists and reads them.
    spark.sql(f"CREATE NAMESPACE {name}.jv")
    spark.sql(f"CREATE TABLE {name}.jv.t2 (k bigint, v string) USING iceberg")
    spark.sql(f"INSERT INTO {name}.jv.t2 VALUES (7, 'seven'), (8, 'eight')")
    assert set(catalog.list_namespaces()) == {("fz",), ("jv",)}
    assert catalog.list_tables("jv") == [("jv", "t2")]
    java_table = catalog.load_table("jv.t2")
    assert java_table.scan().to_arrow().sort_by("k").to_pydict() == {
        "k": [7, 8],
        "v": ["seven", "eight"],
    }
    with java_table.update_properties() as update:
        update.set("touched-by", "frazil")
    _renew_spark_catalogs(kind, spark)
    assert dict(_rows(spark, f"SHOW TBLPROPERTIES {name}.jv.t2"))["touched-by"] == "frazil"
    assert sorted(_rows(spark, f"SHOW NAMESPACES IN {name}")) == [("fz",), ("jv",)]
