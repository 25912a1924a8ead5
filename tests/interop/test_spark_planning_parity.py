"""Distributed planning on Spark 3.5 equals local planning (issue 23, "Distributed planning"):
on every interop table of tests/interop/scan_tables.py (v1, v2, v3; every transform, partition
evolution, every type; position deletes, equality deletes, deletion vectors; branches, tags and
time travel) and every filter of its battery (tests/interop/scan_filters.py), the plan made with
the manifests decoded and pruned in Spark's Python workers (mapInArrow) is the local plan, task
for task and group for group (tests/planning_parity.py). The local plan is held to Java's by
tests/interop/test_scan_parity.py.
"""

from __future__ import annotations

import time
from typing import Any

import frazil
import pytest
from frazil.expressions import from_json
from frazil.spark import planning
from planning_parity import JOB_GROUP, assert_distributed_equals_local
from scan_tables import BUILDERS, ScanTable

TABLES = list(BUILDERS)


@pytest.mark.parametrize("name", TABLES)
def test_distributed_plans_equal_local_plans(
    name: str, spark: Any, scan_tables: dict[str, ScanTable]
) -> None:
    table = scan_tables[name]
    opened = frazil.StaticTable.from_metadata(table.metadata_location)
    started = time.monotonic()
    compared = 0
    for selection in table.selections:
        filters = [from_json(f.text, opened.schema()) for f in table.filters_for(selection)]
        jobs = assert_distributed_equals_local(spark, opened, filters, selection.kwargs)
        # Data manifests (and delete manifests, where the snapshot has them) were pruned on
        # executors: one job per kind for the tasks, one for the files.
        assert jobs >= 2, f"{name} [{selection.label}]: {jobs} Spark jobs"
        compared += len(filters)
    assert compared >= 40
    print(f"{name}: {compared} scans in {time.monotonic() - started:.1f}s")


@pytest.mark.parametrize("name", ["transforms_v2", "dv_v3"])
def test_distributed_plans_with_column_stats(
    name: str, spark: Any, scan_tables: dict[str, ScanTable]
) -> None:
    """With ``include-column-stats`` every metric is decoded on executors and kept."""
    table = scan_tables[name]
    opened = frazil.StaticTable.from_metadata(table.metadata_location)
    filters = [from_json(f.text, opened.schema()) for f in table.filters[:30]]
    options = {"include-column-stats": "true"}
    assert assert_distributed_equals_local(spark, opened, filters, options=options) >= 2


def test_auto_plans_small_tables_locally(spark: Any, scan_tables: dict[str, ScanTable]) -> None:
    """Java's AUTO: a few small manifests are planned on the driver, with no Spark job."""
    context = spark.sparkContext
    group = f"{JOB_GROUP}-auto"
    for table in scan_tables.values():
        opened = frazil.StaticTable.from_metadata(table.metadata_location)
        scan = opened.scan()
        context.setJobGroup(group, "auto planning")
        try:
            tasks = planning.plan_tasks(spark, scan)
        finally:
            context.setJobGroup(None, None)
        assert [[t.to_json() for t in g.tasks] for g in tasks] == [
            [t.to_json() for t in g.tasks] for g in scan.plan_tasks()
        ]
    assert context.statusTracker().getJobIdsForGroup(group) == []
