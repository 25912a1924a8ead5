"""frazil's pools in Spark tasks are sized from the task's ``spark.task.cpus`` (or
``FRAZIL_THREADS``), not from the host's cores (issue 23, "First, the process model")."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

pytestmark = pytest.mark.interop


def test_task_threads_follow_spark_task_cpus(spark: Any) -> None:
    def probe(batches: Any) -> Any:
        import os

        from frazil import _threads
        from frazil.spark._tasks import task_threads

        for _ in batches:
            pass
        os.environ.pop(_threads.ENVIRONMENT_VARIABLE, None)
        count = task_threads()
        yield pa.RecordBatch.from_pydict(
            {"task": [count], "frazil": [_threads.threads()], "arrow": [pa.cpu_count()]}
        )

    rows = (
        spark.range(4, numPartitions=2)
        .mapInArrow(probe, "task long, frazil long, arrow long")
        .collect()
    )
    cpus = int(spark.conf.get("spark.task.cpus", "1"))
    assert [tuple(r) for r in rows] == [(cpus, cpus, cpus)] * 2
