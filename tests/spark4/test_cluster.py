"""frazil on a real Spark 4.3 standalone cluster (loopback): executors in their own JVMs, whose
Python workers run the venv-pack archive shipped with ``spark.archives`` (README "PySpark").

Each job is a driver script run in its own process (tests/spark4/job_*.py, see
spark4_cluster.py): one SparkContext per process, and the local ``spark`` fixture has one."""

from __future__ import annotations

from pathlib import Path

from spark4_cluster import Cluster


def test_frazil_runs_in_executors_from_the_archive(spark_cluster: Cluster) -> None:
    result = spark_cluster.run("job_executors.py")
    driver, executors = result["driver"], result["executors"]
    assert len(executors) == 4
    work_dir = spark_cluster.scratch / "work"
    for executor in executors:
        # The archive's interpreter, unpacked in the executor's directory under the worker's
        # work dir, with the wheel's frazil inside it.
        prefix = Path(executor["prefix"])
        assert prefix.name == "environment"
        assert Path(executor["cwd"]) / "environment" == prefix
        assert work_dir in prefix.parents
        assert Path(executor["executable"]) == prefix / "bin" / "python"
        assert prefix in Path(executor["frazil"]).parents
        assert Path(executor["native"]).name == "_native.abi3.so"
        # Another process than the driver, under another JVM: the executor's.
        assert executor["pid"] != driver["pid"]
        assert executor["jvm_pid"] not in (None, driver["jvm_pid"])
        assert "org.apache.spark.executor.CoarseGrainedExecutorBackend" in executor["jvm_cmdline"]
        # spark.executorEnv.FRAZIL_THREADS reached frazil's thread count.
        assert executor["threads"] == 3
    assert driver["frazil_threads_env"] is None
    assert result["rows"] == 500_000
    assert result["mismatches"] == 0
    assert result["table_rows"] == 500_000
    assert result["table_equal"]


def test_frazil_spark_reads_writes_and_plans_on_the_cluster(spark_cluster: Cluster) -> None:
    """frazil.spark.write and read with executors from the archive, a task attempt failing
    once and retried by the cluster, and distributed planning equal to local planning."""
    result = spark_cluster.run("job_spark_io.py")
    assert result["snapshots_after_first_write"] == 1
    # Two writes and a delete: three snapshots, however many task attempts ran.
    assert result["snapshots"] == 3
    assert result["ids"] == result["distinct_ids"] == result["expected_ids"]
    assert result["spark_read_equals_local"] and result["spark_read_rows"] > 0
    assert result["planning_jobs"] >= 1
    assert result["files"] > 1
