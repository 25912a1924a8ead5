"""``frazil.spark.write`` on Spark 3.5 (issue 23): tables it writes (append, overwrite by filter,
dynamic overwrite; partitioned by every transform; every type Spark holds) read identically in
Iceberg Java's Spark read, and Java's ``files``, ``manifests`` and ``snapshots`` metadata tables
agree with frazil's metadata; bad input is refused on the driver before any executor writes;
a concurrent commit is retried, never lost; no file of the write is left uncommitted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import frazil.spark
import pyarrow as pa
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import NotFoundError, SchemaMismatchError, UnknownFieldError

pytestmark = pytest.mark.interop

DDL = (
    "b boolean, i int, l long, f float, d double, dec decimal(10, 2), dt date, "
    "ts timestamp, ntz timestamp_ntz, s string, bin binary, "
    "st struct<x: int, y: string>, arr array<long>, m map<string, int>"
)


def _catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog(
        "spark_write", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    catalog.create_namespace("db")
    return catalog


def _source(spark: Any, n: int, offset: int = 0) -> Any:
    """n rows of every type Spark holds, with nulls, negatives, pre-1970 times, multi-byte
    strings."""
    from pyspark.sql import functions as F

    base = spark.range(offset, offset + n, numPartitions=3)
    return base.select(
        (F.col("id") % 2 == 0).alias("b"),
        F.when(F.col("id") % 7 == 0, None)
        .otherwise((F.col("id") * 37 - 500).cast("int"))
        .alias("i"),
        (F.col("id") * 1000003 - 10**9).alias("l"),
        (F.col("id") / 3).cast("float").alias("f"),
        (F.col("id") / 7 - 10).alias("d"),
        (F.col("id") / 100).cast("decimal(10,2)").alias("dec"),
        F.expr("date_add(date'1969-12-25', cast(id * 3 as int))").alias("dt"),
        F.expr("timestamp_seconds(id * 3600 * 7 - 86400 * 20)").alias("ts"),
        F.expr("cast(timestamp_seconds(id * 3600 * 5 - 86400 * 3) as timestamp_ntz)").alias("ntz"),
        F.when(F.col("id") % 5 == 0, None)
        .otherwise(F.concat(F.lit("é名-"), F.col("id").cast("string")))
        .alias("s"),
        F.expr("cast(concat('b', cast(id as string)) as binary)").alias("bin"),
        F.expr("named_struct('x', cast(id as int), 'y', cast(id as string))").alias("st"),
        F.expr("array(id, id + 1)").alias("arr"),
        F.expr("map('k', cast(id as int))").alias("m"),
    )


def _plain(value: Any) -> Any:
    """A Spark value in a hashable, comparable form (binary as bytes, maps as sorted pairs)."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dict):
        return tuple(sorted((_plain(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _java_rows(spark: Any, location: str, columns: str = "*") -> list[tuple[Any, ...]]:
    return _rows(spark.read.format("iceberg").load(location), columns)


def _rows(frame: Any, columns: str = "*") -> list[tuple[Any, ...]]:
    return sorted((_plain(tuple(r)) for r in frame.selectExpr(columns).collect()), key=repr)


def _create(
    spark: Any, catalog: SqlCatalog, name: str, partitioning: list[tuple[str, str]], version: int
) -> Any:
    """A table of every type Spark holds, partitioned by ``(transform, column)`` pairs."""
    template = pa.schema(
        [
            pa.field("b", pa.bool_()),
            pa.field("i", pa.int32()),
            pa.field("l", pa.int64()),
            pa.field("f", pa.float32()),
            pa.field("d", pa.float64()),
            pa.field("dec", pa.decimal128(10, 2)),
            pa.field("dt", pa.date32()),
            pa.field("ts", pa.timestamp("us", "UTC")),
            pa.field("ntz", pa.timestamp("us")),
            pa.field("s", pa.string()),
            pa.field("bin", pa.binary()),
            pa.field("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
            pa.field("arr", pa.list_(pa.int64())),
            pa.field("m", pa.map_(pa.string(), pa.int32())),
        ]
    )
    table = catalog.create_table(
        f"db.{name}", template, properties={"format-version": str(version)}
    )
    if partitioning:
        with table.update_spec() as update:
            for transform, column in partitioning:
                update.add_field(column, transform)
        table = catalog.load_table(f"db.{name}")
    return table


PARTITIONINGS = {
    "identity": [("identity", "s")],
    "bucket_truncate": [("bucket[16]", "l"), ("truncate[4]", "s")],
    "time": [("day", "ts"), ("hour", "ntz")],
    "year_month": [("year", "dt"), ("month", "ts"), ("truncate[10]", "i")],
    "unpartitioned": [],
}


@pytest.mark.parametrize("layout", sorted(PARTITIONINGS))
def test_java_reads_what_frazil_spark_wrote(spark: Any, tmp_path: Path, layout: str) -> None:
    catalog = _catalog(tmp_path)
    version = 3 if layout == "time" else 2
    table = _create(spark, catalog, layout, PARTITIONINGS[layout], version)
    first = _source(spark, 300)
    table = frazil.spark.write(first, table)
    assert table.current_snapshot().summary["spark.app.id"] == spark.sparkContext.applicationId
    assert _java_rows(spark, table.metadata_location) == _rows(first)
    # frazil's own Spark read agrees too.
    assert _rows(frazil.spark.read(spark, table)) == _rows(first)

    second = _source(spark, 200, offset=250)
    table = frazil.spark.write(second, table, mode="overwrite", overwrite_filter="l >= 0")
    expected = _rows(first.where("l < 0").unionByName(second))
    assert _java_rows(spark, table.metadata_location) == expected

    third = _source(spark, 40, offset=1000)
    table = frazil.spark.write(third, table, mode="dynamic-overwrite")
    java = _java_rows(spark, table.metadata_location)
    assert _rows(frazil.spark.read(spark, table)) == java
    assert set(_rows(third)) <= set(java)

    reader = spark.read.format("iceberg")
    path = table.metadata_location
    files = reader.load(f"{path}#files").select("file_path", "record_count").collect()
    assert sorted((r[0], r[1]) for r in files) == sorted(
        (t.file.file_path, t.file.record_count) for t in table.scan().plan_files()
    )
    snapshots = {r["snapshot_id"]: r for r in reader.load(f"{path}#snapshots").collect()}
    assert set(snapshots) == {s.snapshot_id for s in table.snapshots()}
    for s in table.snapshots():
        assert snapshots[s.snapshot_id]["operation"] == s.operation
        assert dict(snapshots[s.snapshot_id]["summary"]) == {
            k: v for k, v in (s.summary or {}).items() if k != "operation"
        }
    manifests = reader.load(f"{path}#manifests").select("path").collect()
    from frazil.manifest import read_manifest_list

    mine = read_manifest_list(table.current_snapshot().manifest_list).to_pylist()
    assert sorted(r[0] for r in manifests) == sorted(m["manifest_path"] for m in mine)
    _assert_no_stray_files(table)


def _assert_no_stray_files(table: Any) -> None:
    """Every data file under the table's location is one of its snapshots' (nothing of the
    writes is left uncommitted), and no write journal is left."""
    root = table.location().removeprefix("file://")
    on_disk = {
        os.path.join(d, f) for d, _, names in os.walk(root) for f in names if f.endswith(".parquet")
    }
    reachable = set()
    for snapshot in table.snapshots():
        for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files():
            reachable.add(task.file.file_path.removeprefix("file://"))
    removed = on_disk - reachable
    # Files an overwrite replaced are still referenced by older snapshots: all reachable.
    assert not removed, f"uncommitted files left: {sorted(removed)[:3]}"
    # No journal is left (their directories may stay on a local disk, as Java's do).
    assert not list(Path(root, "metadata").glob("spark-write-*/*"))


def test_bad_input_is_refused_on_the_driver(spark: Any, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    table = _create(spark, catalog, "bad", [], 2)
    wrong = spark.range(3).selectExpr("id AS l", "cast(id AS int) AS s", "id AS extra")
    with pytest.raises(SchemaMismatchError) as error:
        frazil.spark.write(wrong, table)
    message = str(error.value)
    assert "extra: not a column" in message and "s: Arrow type int32" in message
    assert table.refresh().current_snapshot() is None
    with pytest.raises(UnknownFieldError, match="nope"):
        frazil.spark.read(spark, table, row_filter="nope = 1")
    with pytest.raises(NotFoundError):
        frazil.spark.read(spark, catalog.load_table("db.missing"))
    # A table with no snapshot reads as an empty DataFrame with the table's schema.
    empty = frazil.spark.read(spark, table)
    assert empty.count() == 0
    assert [f.name for f in empty.schema.fields] == [f.name for f in table.schema().fields]
    with pytest.raises(ValueError, match="mode"):
        frazil.spark.write(_source(spark, 1), table, mode="upsert")


def test_a_concurrent_commit_is_retried_not_lost(spark: Any, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    table = _create(spark, catalog, "race", [("identity", "b")], 2)
    stale = catalog.load_table("db.race")
    # Another writer commits after `stale` was loaded: frazil.spark.write(stale) must retry.
    table.append(_arrow(10, table))
    written = frazil.spark.write(_source(spark, 20), stale)
    assert len(written.snapshots()) == 2
    assert written.scan().count() == 30
    assert len(_java_rows(spark, written.metadata_location, "l")) == 30


def _arrow(n: int, table: Any) -> pa.Table:
    schema = table.scan().to_arrow().schema
    columns = {}
    for f in schema:
        columns[f.name] = pa.nulls(n, f.type)
    columns["b"] = pa.array([True] * n)
    columns["l"] = pa.array(range(-n, 0), pa.int64())
    return pa.table(columns, schema=schema)
