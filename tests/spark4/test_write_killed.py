"""A Spark job killed with SIGKILL in the middle of ``frazil.spark.write`` leaves the table at
its previous version, and orphan removal then deletes what the job had written (issue 23,
"Faults"). The job runs in its own driver process (its own SparkContext), killed with its
process group once its tasks have started writing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
from frazil.catalog import load_catalog

DRIVER = textwrap.dedent(
    """
    import os, sys, time
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    import frazil.spark
    from frazil.catalog import load_catalog

    spark = (SparkSession.builder.master("local[2]")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    table = load_catalog("killed", type="sql", uri=sys.argv[1], warehouse=sys.argv[2]) \\
        .load_table("db.t")
    marker = sys.argv[3]

    def slow(batches):
        # Each task writes its first rows, then lingers: the kill lands mid-write.
        for n, batch in enumerate(batches):
            yield batch
            if n == 5:
                open(marker, "a").close()
                time.sleep(600)

    rows = spark.range(0, 400_000, numPartitions=2).selectExpr("id", "cast(id AS string) AS s")
    rows = rows.mapInArrow(slow, rows.schema)
    # Tiny row groups and files: each batch is written (and its file completed) as it comes.
    frazil.spark.write(rows, table, options={
        "write.target-file-size-bytes": "1",
        "write.parquet.row-group-size-bytes": "65536",
    })
    """
)


def test_a_killed_write_leaves_the_table_and_orphan_removal_cleans(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = f"file://{tmp_path}/warehouse"
    catalog = load_catalog("killed", type="sql", uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
    )
    table.append(pa.table({"id": pa.array([-1], pa.int64()), "s": ["before"]}))
    before = catalog.load_table("db.t")
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    marker = tmp_path / "writing"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    driver = subprocess.Popen(
        [sys.executable, str(script), uri, warehouse, str(marker)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    first = {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")}
    try:
        deadline = time.monotonic() + 240
        # Killed once its tasks are in the middle of writing: some of its files are on disk.
        while not marker.exists() or not (
            {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} - first
        ):
            assert driver.poll() is None, driver.stderr.read().decode()[-3000:]  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the job never started writing"
            time.sleep(0.2)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    # PySpark's Python workers sit in their own process groups: one that was writing sees its
    # input end when the JVM dies and may still finish a file. Wait until the disk is quiet.
    seen: set[str] = set()
    while True:
        now = {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")}
        if now == seen:
            break
        seen = now
        time.sleep(3)
    written = [str(p) for p in (tmp_path / "warehouse").rglob("*.parquet") if str(p) not in first]
    after = catalog.load_table("db.t")
    assert after.metadata_location == before.metadata_location
    assert after.scan().to_arrow().column("s").to_pylist() == ["before"]
    data_files = {t.file.file_path.removeprefix("file://") for t in after.scan().plan_files()}
    strays = [p for p in written if p not in data_files]
    assert strays, "the killed job had written no file: the test did not kill it mid-write"

    result = after.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000)
    removed = {x.removeprefix("file://") for x in result}
    assert set(strays) <= removed
    left = {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")}
    assert left == data_files
    assert catalog.load_table("db.t").scan().to_arrow().column("s").to_pylist() == ["before"]
    # The job's journal (metadata/spark-write-*) was an orphan too.
    assert not list((tmp_path / "warehouse").rglob("spark-write-*/*"))
