"""The Python Data Source ``frazil`` and ``frazil.spark.read``/``write`` on Spark 4.3 without any
Iceberg jar (issue 23): reads equal frazil's local reads (deletes merged, time travel,
projection, metadata columns) with filter pushdown off and on; writes through
``df.write.format("frazil")`` and ``frazil.spark.write`` commit once and read back; the
streaming sink writes every row exactly once across a restart from its checkpoint; a task
attempt that fails is retried without duplicates or stray files."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import frazil.spark
import pyarrow as pa
import pytest
from frazil.catalog import load_catalog
from frazil.errors import SchemaMismatchError

CATALOG = "spark4"


@pytest.fixture(scope="module")
def catalog(frazil_catalog_config: Path) -> Any:
    """The catalog named ``spark4`` in the configuration every Spark Python worker reads
    (conftest: ``FRAZIL_CONFIG``, set before the session started)."""
    cat = load_catalog(CATALOG)
    if not cat.namespace_exists("db"):
        cat.create_namespace("db")
    return cat


def _data(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([["a", "b", "é名"][i % 3] for i in ids]),
            "v": pa.array([i / 4 if i % 5 else None for i in ids], pa.float64()),
            "ts": pa.array([i * 3_600_000_000 - 10**12 for i in ids], pa.timestamp("us", "UTC")),
        }
    )


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """Rows as Spark gives them: a timestamptz as a naive datetime in the session's zone
    (UTC)."""

    def spark_form(value: Any) -> Any:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value

    return sorted(
        (tuple(spark_form(v) for v in r.values()) for r in table.to_pylist()),
        key=repr,
    )


def _table(catalog: Any, name: str, version: int = 2) -> Any:
    if catalog.table_exists(f"db.{name}"):
        catalog.drop_table(f"db.{name}", purge=True)
    table = catalog.create_table(
        f"db.{name}",
        _data(0, 1).schema,
        properties={
            "format-version": str(version),
            "write.delete.mode": "copy-on-write",
        },
    )
    with table.update_spec() as update:
        update.add_field("cat")
    return catalog.load_table(f"db.{name}")


@pytest.mark.parametrize("pushdown", [False, True])
def test_data_source_reads_equal_local_reads(spark: Any, catalog: Any, pushdown: bool) -> None:
    spark.conf.set("spark.sql.python.filterPushdown.enabled", str(pushdown).lower())
    table = _table(catalog, f"reads_{pushdown}", version=3)
    table.append(_data(0, 300))
    first = table.current_snapshot().snapshot_id
    table.append(_data(300, 200))
    table.delete("id < 20")
    table = catalog.load_table(table.name())
    reader = spark.read.format("frazil").option("catalog", CATALOG)
    everything = reader.load("db." + table.name()[-1])
    assert _rows(everything) == _arrow_rows(table.scan().to_arrow())
    # Spark's own filter: pushed to frazil (pushdown on) or applied by Spark (off).
    filtered = everything.where("id >= 100 AND cat = 'b' AND v IS NOT NULL")
    expected = table.scan(row_filter="id >= 100 AND cat = 'b' AND v IS NOT NULL").to_arrow()
    assert _rows(filtered) == _arrow_rows(expected)
    # frazil's filter option, projection and metadata columns.
    projected = (
        spark.read.format("frazil")
        .option("catalog", CATALOG)
        .option("columns", "id,cat,_spec_id,_pos")
        .option("filter", "id BETWEEN 150 AND 160")
        .load("db." + table.name()[-1])
    )
    local = table.scan(
        row_filter="id BETWEEN 150 AND 160", selected_fields=("id", "cat", "_spec_id", "_pos")
    ).to_arrow()
    assert _rows(projected) == _arrow_rows(local)
    # Time travel: the first snapshot.
    old = (
        spark.read.format("frazil")
        .option("catalog", CATALOG)
        .option("snapshot-id", str(first))
        .load("db." + table.name()[-1])
    )
    assert _rows(old) == _arrow_rows(table.scan(snapshot_id=first).to_arrow())
    # By metadata location, without a catalog.
    by_path = spark.read.format("frazil").load(table.metadata_location)
    assert by_path.count() == table.scan().count()
    # frazil.spark.read (mapInArrow) agrees.
    assert _rows(frazil.spark.read(spark, table)) == _rows(everything)


def test_data_source_writes_commit_once(spark: Any, catalog: Any) -> None:
    table = _table(catalog, "writes")
    source = spark.createDataFrame(_data(0, 100).to_pandas())
    source.write.format("frazil").option("catalog", CATALOG).mode("append").save("db.writes")
    table = catalog.load_table("db.writes")
    assert len(table.snapshots()) == 1
    assert _arrow_rows(table.scan().to_arrow()) == _arrow_rows(_data(0, 100))
    # Overwrite replaces every row, as Spark means it.
    spark.createDataFrame(_data(500, 10).to_pandas()).write.format("frazil").option(
        "catalog", CATALOG
    ).mode("overwrite").save("db.writes")
    table = catalog.load_table("db.writes")
    assert _arrow_rows(table.scan().to_arrow()) == _arrow_rows(_data(500, 10))
    assert table.current_snapshot().operation == "overwrite"
    # frazil.spark.write through mapInArrow on Spark 4 too.
    table = frazil.spark.write(spark.createDataFrame(_data(1000, 50).to_pandas()), table)
    assert table.scan().count() == 60
    # A mismatched schema is refused before anything is written.
    with pytest.raises(Exception, match="not a column of the table"):
        spark.range(3).selectExpr("id", "id AS nope").write.format("frazil").option(
            "catalog", CATALOG
        ).mode("append").save("db.writes")
    with pytest.raises(SchemaMismatchError):
        frazil.spark.write(spark.range(3).selectExpr("id", "id AS nope"), table)
    assert len(catalog.load_table("db.writes").snapshots()) == 3
    _assert_no_stray_files(catalog.load_table("db.writes"))


def _assert_no_stray_files(table: Any) -> None:
    root = table.location().removeprefix("file://")
    on_disk = {
        os.path.join(d, f) for d, _, names in os.walk(root) for f in names if f.endswith(".parquet")
    }
    reachable = {
        task.file.file_path.removeprefix("file://")
        for snapshot in table.snapshots()
        for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files()
    }
    assert on_disk == reachable
    # No journal is left (their directories may stay on a local disk, as Java's do).
    assert not list(Path(root, "metadata").glob("spark-write-*/*"))


def test_a_failed_first_attempt_is_retried_exactly_once(spark: Any, catalog: Any) -> None:
    """Task 0's first attempt fails after writing its files (frazil's test hook); Spark retries
    it; every row is committed once and the failed attempt's files are gone."""
    table = _table(catalog, "retried")
    source = spark.range(0, 1000, numPartitions=3).selectExpr(
        "id",
        "cast(id % 3 AS string) AS cat",
        "cast(id AS double) AS v",
        "timestamp_seconds(id) AS ts",
    )
    table = frazil.spark.write(source, table, _fail_first_attempt=True)
    ids = sorted(table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist())
    assert ids == list(range(1000))
    _assert_no_stray_files(table)


def test_streaming_sink_writes_each_row_once_across_a_restart(
    spark: Any, catalog: Any, tmp_path: Path
) -> None:
    table = _table(catalog, "stream")
    checkpoint = str(tmp_path / "checkpoint")

    def run(batches: int) -> None:
        stream = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", 50)
            .load()
            .selectExpr(
                "value AS id",
                "cast(value % 3 AS string) AS cat",
                "cast(value AS double) AS v",
                "timestamp AS ts",
            )
        )
        query = (
            stream.writeStream.format("frazil")
            .option("catalog", CATALOG)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="1 second")
            .start("db.stream")
        )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                progress = query.recentProgress
                if len([p for p in progress if p.get("numInputRows", 0) > 0]) >= batches:
                    break
                time.sleep(0.5)
        finally:
            query.stop()

    run(2)
    middle = catalog.load_table("db.stream")
    assert middle.current_snapshot() is not None
    run(2)  # restarted from the checkpoint
    table = catalog.load_table("db.stream")
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a row was written twice"
    assert sorted(ids) == list(range(len(ids))), "a row is missing"
    epochs = [int(s.summary["spark.sql.streaming.epochId"]) for s in table.snapshots()]
    assert epochs == sorted(set(epochs))
    queries = {s.summary["spark.sql.streaming.queryId"] for s in table.snapshots()}
    assert len(queries) == 1
