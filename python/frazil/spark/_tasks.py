"""What every frazil function running inside a Spark task does first, and the form planned
scan tasks travel to executors in."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

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


# A planned scan task as executors get it: its Appendix C JSON, and its data file's data and
# file sequence numbers, which that JSON does not carry (a v3 row's
# _last_updated_sequence_number inherits the data one).
TaskPayload = tuple[str, int | None, int | None]
TASK_FIELDS = ("json", "data_sequence_number", "file_sequence_number")


def task_payload(task: Any) -> TaskPayload:
    """What executors get of the planned ``task``."""
    file = task.file
    return (str(task.to_json()), file.data_sequence_number, file.file_sequence_number)


def task_from_payload(payload: TaskPayload | Sequence[Any] | Mapping[str, Any]) -> Any:
    """The :class:`~frazil.table.scan.FileScanTask` of a :func:`task_payload` (a tuple, or the
    struct row a DataFrame column of :func:`task_payload_type` gives)."""
    from frazil.table.scan import file_scan_task_from_json

    if isinstance(payload, Mapping):
        payload = tuple(payload[name] for name in TASK_FIELDS)
    text, data_sequence_number, file_sequence_number = payload
    return file_scan_task_from_json(text, data_sequence_number, file_sequence_number)


def task_payload_type() -> Any:
    """The Spark type of a :func:`task_payload` in a DataFrame column."""
    t = require("pyspark.sql.types")
    return t.StructType(
        [
            t.StructField("json", t.StringType(), False),
            t.StructField("data_sequence_number", t.LongType(), True),
            t.StructField("file_sequence_number", t.LongType(), True),
        ]
    )
