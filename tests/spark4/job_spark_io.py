"""Cluster job (tests/spark4/test_cluster.py): frazil.spark end to end on the standalone
cluster, executors running the venv-pack archive.

A partitioned table (bucket and identity) written by ``frazil.spark.write`` (executors write,
the driver commits once; hash distribution computes the transforms in executors), one write
whose first task attempt fails and is retried by the cluster, a delete, then
``frazil.spark.read`` with a filter, compared with frazil's local read; distributed planning
(manifests pruned in executors) equals local planning. Emits one JSON object."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: planning_parity

import pyarrow as pa
from spark4_cluster import cluster_session, emit

ROWS = 200_000


def main() -> None:
    import frazil.spark
    from frazil.catalog.filesystem import FileSystemCatalog
    from planning_parity import assert_distributed_equals_local

    spark = cluster_session("frazil-cluster-spark-io")
    catalog = FileSystemCatalog("io", warehouse=str(Path.cwd() / f"warehouse-io-{os.getpid()}"))
    catalog.create_namespace("db")
    schema = pa.schema(
        [("id", pa.int64()), ("cat", pa.string()), ("ts", pa.timestamp("us", "UTC"))]
    )
    table = catalog.create_table("db.events", schema)
    with table.update_spec() as update:
        update.add_field("id", "bucket[4]")
        update.add_field("cat")
    table = catalog.load_table("db.events")
    rows = spark.range(0, ROWS, numPartitions=4).selectExpr(
        "id", "concat('c', cast(id % 3 AS string)) AS cat", "timestamp_seconds(id) AS ts"
    )
    table = frazil.spark.write(rows, table)
    after_first = len(table.snapshots())
    more = spark.range(ROWS, ROWS + 1000, numPartitions=2).selectExpr(
        "id", "concat('c', cast(id % 3 AS string)) AS cat", "timestamp_seconds(id) AS ts"
    )
    table = frazil.spark.write(more, table, _fail_first_attempt=True)
    table.delete("id < 1000")
    table = catalog.load_table("db.events")
    frame = frazil.spark.read(spark, table, row_filter="id < 150000")
    spark_ids = sorted(r[0] for r in frame.select("id").collect())
    local_ids = sorted(
        table.scan(row_filter="id < 150000", selected_fields=("id",))
        .to_arrow()
        .column("id")
        .to_pylist()
    )
    all_ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    planning_jobs = assert_distributed_equals_local(
        spark, table, filters=[None, "id < 5000", "cat = 'c1'"]
    )
    files = [t.file.file_path for t in table.scan().plan_files()]
    spark.stop()
    emit(
        {
            "snapshots_after_first_write": after_first,
            "snapshots": len(table.snapshots()),
            "ids": len(all_ids),
            "distinct_ids": len(set(all_ids)),
            "expected_ids": ROWS,
            "spark_read_equals_local": spark_ids == local_ids,
            "spark_read_rows": len(spark_ids),
            "planning_jobs": planning_jobs,
            "files": len(files),
        }
    )


if __name__ == "__main__":
    main()
