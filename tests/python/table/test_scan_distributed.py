"""Distributed planning's planner side (frazil.spark.planning over RawPlanning and
RawScan.prune_manifest; issue 23, "Distributed planning"), without a JVM: a stand-in for the
few Spark calls the planner makes (parallelize, createDataFrame, mapInArrow, collect as Arrow)
runs the executors' function in this process, on Arrow batches, as Spark would.

The plan must be the local plan exactly: the same FileScanTasks (data file, delete files,
start, length, residual, Appendix C JSON) in the same CombinedScanTask groups, for tables with
every kind of delete file (partition- and file-scoped position deletes, equality deletes in a
partition and global ones, deletion vectors) and every type as a partition value, under every
filter of the task JSON tests, with data and deletes each planned locally or distributed.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.errors import ValidationError
from frazil.spark import planning
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scan_helpers import TableWriter, data_file, entry
from task_tables import FILTERS, files, task_view, write_table

MODES = [("distributed", "distributed"), ("distributed", "local"), ("local", "distributed")]


class _Result:
    def __init__(self, batches: list[pa.RecordBatch]) -> None:
        self.batches = batches

    def _collect_as_arrow(self) -> list[pa.RecordBatch]:
        return self.batches


class _Frame:
    def __init__(self, spark: FakeSpark, slices: list[list[tuple[Any, ...]]], schema: str):
        self.spark = spark
        self.slices = slices
        self.names = [part.split()[0] for part in schema.split(",")]

    def mapInArrow(
        self, function: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], schema: str
    ) -> _Result:
        self.spark.jobs += 1
        out: list[pa.RecordBatch] = []
        for rows in self.slices:  # one Spark partition each, in order
            batch = pa.RecordBatch.from_pylist(
                [dict(zip(self.names, r, strict=True)) for r in rows]
            )
            out.extend(function(iter([batch])))
        assert all(b.schema.names == ["request", "position", "entries"] for b in out), schema
        return _Result(out)


class _Context:
    def __init__(self, parallelism: int) -> None:
        self.defaultParallelism = parallelism

    def parallelize(self, rows: list[tuple[Any, ...]], slices: int) -> list[list[tuple[Any, ...]]]:
        # Contiguous slices, as Spark's ParallelCollectionRDD cuts a list.
        bounds = [len(rows) * i // slices for i in range(slices + 1)]
        return [rows[bounds[i] : bounds[i + 1]] for i in range(slices)]


class FakeSpark:
    """The SparkSession calls frazil.spark.planning makes, run in this process."""

    def __init__(self, parallelism: int = 2) -> None:
        self.sparkContext = _Context(parallelism)
        self.jobs = 0

    def createDataFrame(self, slices: list[list[tuple[Any, ...]]], schema: str) -> _Frame:
        return _Frame(self, slices, schema)


def _groups_view(groups: Any) -> list[list[Any]]:
    return [
        [(task_view(t), json.loads(t.to_json()), str(t.residual)) for t in g.tasks] for g in groups
    ]


def _files_view(tasks: Any) -> list[Any]:
    return [(task_view(t), json.loads(t.to_json())) for t in tasks]


def _assert_same_plans(scan: Any, spark: FakeSpark) -> None:
    assert _groups_view(planning.plan_tasks(spark, scan)) == _groups_view(scan.plan_tasks())
    assert _files_view(planning.plan_files(spark, scan)) == _files_view(scan.plan_files())


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    specs=st.lists(files(), min_size=1, max_size=6),
    row_filter=st.sampled_from(FILTERS),
    modes=st.sampled_from(MODES),
    stats=st.booleans(),
    parallelism=st.integers(1, 4),
)
def test_distributed_plan_is_the_local_plan(
    specs: list[dict[str, Any]],
    row_filter: str | None,
    modes: tuple[str, str],
    stats: bool,
    parallelism: int,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = write_table(Path(tmp), specs)
        options = {
            planning.DATA_PLANNING_MODE: modes[0],
            planning.DELETE_PLANNING_MODE: modes[1],
            "include-column-stats": str(stats).lower(),
            "read.split.target-size": "2000",  # splits and packs the generated files
            "read.split.open-file-cost": "100",
        }
        scan = table.scan(row_filter=row_filter, options=options)
        spark = FakeSpark(parallelism)
        _assert_same_plans(scan, spark)
        # Each plan (tasks, then files) ran one job for each kind of manifest distributed,
        # unless there was none of that kind to read.
        snapshot = scan.snapshot()
        assert snapshot is not None and snapshot.manifest_list is not None
        layout = scan._raw().planning(snapshot.manifest_list)
        per_plan = int(modes[0] == "distributed" and bool(layout.data_manifests())) + int(
            modes[1] == "distributed" and bool(layout.delete_manifests())
        )
        assert spark.jobs == 2 * per_plan


def _many_manifests(root: Path, count: int, properties: dict[str, str] | None = None) -> Any:
    writer = TableWriter(root)
    parent = None
    for n in range(count):
        cat = f"c{n % 3}"
        entries = [
            entry(data_file(writer.path(f"{n}-{k}.parquet"), {"cat": cat, "ts_day": 19000 + k}))
            for k in range(5)
        ]
        writer.commit(n + 1, 1_700_000_000_000 + n, [(entries, 0, "data")], parent=parent)
        parent = n + 1
    positions = [entry(data_file(writer.path("pos-0"), {"cat": "c0", "ts_day": 19000}, content=1))]
    writer.commit(count + 1, 1_700_000_001_000, [(positions, 0, "deletes")], parent=parent)
    return writer.table(properties=properties or {})


def test_auto_distributes_many_manifests_on_a_wide_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # These manifests are a few KB: AUTO would plan them locally by size alone.
    monkeypatch.setattr(planning, "LOCAL_PLANNING_MAX_SLOT_SIZE", 1)
    table = _many_manifests(tmp_path, 6)
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    scan = table.scan(row_filter="cat = 'c0' OR id > 3", options={"threads": "1"})
    # The summary has no total-equality-deletes: equality deletes may exist, so AUTO plans
    # locally even on a wide cluster (Java's rule).
    wide = FakeSpark(parallelism=64)
    _assert_same_plans(scan, wide)
    assert wide.jobs == 0
    # Told the snapshot has none, AUTO distributes 6 manifests > 2 x 1 thread.
    summary = dict(snapshot.summary, **{"total-equality-deletes": "0"})
    object.__setattr__(snapshot, "summary", summary)
    wide = FakeSpark(parallelism=64)
    _assert_same_plans(scan, wide)
    # Data on executors (for plan_tasks and for plan_files); the one delete manifest locally
    # (1 <= 2 x 1 thread).
    assert wide.jobs == 2
    # A cluster no wider than the driver plans locally.
    narrow = FakeSpark(parallelism=1)
    _assert_same_plans(scan, narrow)
    assert narrow.jobs == 0
    # As do few manifests for the local threads, or few bytes.
    monkeypatch.setattr(planning, "LOCAL_PLANNING_MAX_SLOT_SIZE", 128 * 1024 * 1024)
    wide = FakeSpark(parallelism=64)
    _assert_same_plans(scan, wide)
    assert wide.jobs == 0
    monkeypatch.setattr(planning, "LOCAL_PLANNING_MAX_SLOT_SIZE", 1)
    roomy = table.scan(row_filter="cat = 'c0' OR id > 3", options={"threads": "4"})
    object.__setattr__(roomy.snapshot(), "summary", summary)
    wide = FakeSpark(parallelism=64)
    _assert_same_plans(roomy, wide)
    assert wide.jobs == 0


def test_modes_from_table_properties(tmp_path: Path) -> None:
    properties = {planning.DATA_PLANNING_MODE: "distributed"}
    table = _many_manifests(tmp_path, 2, properties)
    spark = FakeSpark()
    _assert_same_plans(table.scan(), spark)
    # Data distributed by the property; deletes AUTO, and equality deletes may exist (the
    # summary does not say): local. One job per plan.
    assert spark.jobs == 2
    spark = FakeSpark()
    scan = table.scan(options={planning.DATA_PLANNING_MODE: "local"})
    _assert_same_plans(scan, spark)
    assert spark.jobs == 0  # the scan's option wins


def test_bad_mode_is_refused_before_planning(tmp_path: Path) -> None:
    table = _many_manifests(tmp_path, 2)
    spark = FakeSpark()
    for name in (planning.DATA_PLANNING_MODE, planning.DELETE_PLANNING_MODE):
        scan = table.scan(options={name: "everywhere"})
        for plan in (planning.plan_tasks, planning.plan_files):
            with pytest.raises(ValidationError, match=f"{name}.*'everywhere'"):
                plan(spark, scan)
    assert spark.jobs == 0


def test_table_without_snapshot_plans_nothing(tmp_path: Path) -> None:
    table = TableWriter(tmp_path).table()
    scan = table.scan(options={planning.DATA_PLANNING_MODE: "distributed"})
    assert planning.plan_tasks(FakeSpark(), scan) == []
    assert list(planning.plan_files(FakeSpark(), scan)) == []
