"""Distributed planning equals local planning (issue 23, "Distributed planning"): a check any
Spark session can run, in local mode (tests/interop/test_spark_planning_parity.py) or on a
standalone cluster (tests/spark4).

:func:`assert_distributed_equals_local` plans scans of a frazil table on the session's
executors (``read.data-planning-mode`` and ``read.delete-planning-mode`` set to
``distributed``) and locally, and compares them file for file: each task's Appendix C JSON
(data file, delete files, residual, start, length, schema, spec), the sequence numbers of its
data and delete files (which the JSON leaves out), and the grouping into combined tasks.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

DISTRIBUTED = {"read.data-planning-mode": "distributed", "read.delete-planning-mode": "distributed"}
JOB_GROUP = "frazil-distributed-planning-check"


def task_view(task: Any) -> tuple[Any, ...]:
    """Everything a FileScanTask says, comparable."""
    return (
        json.loads(task.to_json()),
        task.file.data_sequence_number,
        task.file.file_sequence_number,
        task.spec_id,
        tuple((d.data_sequence_number, d.file_sequence_number) for d in task.delete_files),
    )


def groups_view(groups: Iterable[Any]) -> list[list[tuple[Any, ...]]]:
    return [[task_view(t) for t in g.tasks] for g in groups]


def assert_distributed_equals_local(
    spark: Any,
    table: Any,
    filters: Sequence[Any] = (None,),
    scan_kwargs: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
) -> int:
    """Plans ``table.scan(row_filter=f, **scan_kwargs)`` for each filter on ``spark``'s
    executors and locally, asserts the plans are equal (tasks and combined tasks), and returns
    how many Spark jobs the distributed plans ran (2 per kind of manifest at most: data and
    deletes, for the tasks and for the files)."""
    from frazil.spark import planning

    all_options = {**DISTRIBUTED, **(options or {})}
    scans = [table.scan(row_filter=f, options=all_options, **(scan_kwargs or {})) for f in filters]
    context = spark.sparkContext
    group = f"{JOB_GROUP}-{uuid.uuid4()}"  # the tracker keeps a group's jobs: one per call
    context.setJobGroup(group, "distributed planning check")
    try:
        distributed_tasks = planning.plan_many_tasks(spark, scans)
        distributed_files = planning.plan_many_files(spark, scans)
        jobs = len(context.statusTracker().getJobIdsForGroup(group))
    finally:
        context.setJobGroup(None, None)
    failures = []
    for f, scan, groups, files in zip(
        filters, scans, distributed_tasks, distributed_files, strict=True
    ):
        local_groups = groups_view(scan.plan_tasks())
        if groups_view(groups) != local_groups:
            failures.append(f"plan_tasks differs for filter {f}")
        if [task_view(t) for t in files] != [task_view(t) for t in scan.plan_files()]:
            failures.append(f"plan_files differs for filter {f}")
    assert not failures, f"{len(failures)} of {2 * len(scans)} plans differ:\n" + "\n".join(
        failures[:10]
    )
    return jobs
