"""What every frazil function running inside a Spark task does first."""

from __future__ import annotations

import os

from frazil import _threads
from frazil.spark._pyspark import require


def task_threads() -> int:
    """Sizes frazil's pools (Python, pyarrow's and the Rust core's) for this Spark task:
    ``FRAZIL_THREADS`` when set, else the task's ``spark.task.cpus``, so that N tasks on one
    executor do not each start a pool as large as the host. Returns the count."""
    if os.environ.get(_threads.ENVIRONMENT_VARIABLE):
        return _threads.threads()
    context = require("pyspark").TaskContext.get()
    count = 1 if context is None else max(1, int(context.cpus()))
    if _threads.threads() != count:
        _threads.set_threads(count)
    return count
