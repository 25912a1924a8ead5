"""The plan stream (src/scan/planner.rs, ``PlanStream``): data manifests are decoded on the
scan's threads at most a window ahead of the consumer (16 manifests) and handed over in
manifest-list order, one manifest at a time. These tests use more manifests than the window,
so that jobs start while earlier results wait for the consumer.

- every thread count plans the same tasks in the same order;
- an error in a manifest past the window surfaces after the tasks of the manifests before it,
  ends the stream, and names the file;
- abandoning a plan part way, many times over, leaves nothing stuck: the next plans finish;
- planning another scan on the same threads while a plan is being consumed does not deadlock.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from frazil import StaticTable
from frazil.errors import NotFoundError
from scan_helpers import TableWriter, data_file, entry, long_bytes

MANIFESTS = 40  # more than twice the window
FILES = 7  # per manifest
T1 = 1_700_000_000_000


def _write(root: Path) -> tuple[StaticTable, TableWriter]:
    w = TableWriter(root)
    manifests = []
    for k in range(MANIFESTS):
        files = [
            data_file(
                w.path(f"m{k:02d}-{n}.parquet"),
                {"cat": "ab"[n % 2], "ts_day": dt.date(2024, 1, 1 + n % 3)},
                records=n + 1,
                lower_bounds={1: long_bytes(100 * k + n)},
                upper_bounds={1: long_bytes(100 * k + n + 3)},
            )
            for n in range(FILES)
        ]
        manifests.append(([entry(f) for f in files], 0, "data"))
    w.commit(1, T1, manifests)
    deletes = [
        data_file(
            w.path(f"pos-{n}.parquet"),
            {"cat": "ab"[n % 2], "ts_day": dt.date(2024, 1, 1 + n % 3)},
            content=1,
        )
        for n in range(6)  # one in each of the six partitions
    ]
    eq = data_file(
        w.path("eq.parquet"),
        {},
        content=2,
        equality_ids=[1],
        lower_bounds={1: long_bytes(1000)},
        upper_bounds={1: long_bytes(1999)},
    )
    w.commit(
        2, T1 + 1000, [([entry(d) for d in deletes], 0, "deletes"), ([entry(eq)], 1, "deletes")], 1
    )
    return w.table(), w


@pytest.fixture
def table(tmp_path: Path) -> StaticTable:
    return _write(tmp_path / "t")[0]


def _plan(table: StaticTable, threads: int, **kwargs: Any) -> list[tuple[str, tuple[str, ...]]]:
    scan = table.scan(options={"threads": threads}, **kwargs)
    return [
        (Path(t.file.file_path).stem, tuple(Path(d.file_path).stem for d in t.delete_files))
        for t in scan.plan_files()
    ]


def _finishes(work: Callable[[], None], seconds: float = 120) -> None:
    """Runs ``work`` on a thread; fails (instead of hanging the suite) if it does not end."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as error:  # reported below
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a stuck plan"
    if errors:
        raise errors[0]


def test_every_thread_count_plans_the_same_tasks_in_manifest_order(table: StaticTable) -> None:
    one = _plan(table, 1)
    assert [name for name, _ in one] == [
        f"m{k:02d}-{n}" for k in range(MANIFESTS) for n in range(FILES)
    ]
    # Equality deletes (keys 1000-1999) reach the files of manifests 10-19 only, by bounds;
    # position deletes reach every file of their partition.
    eq_files = {name for name, deletes in one if "eq" in deletes}
    assert eq_files == {f"m{k:02d}-{n}" for k in range(10, 20) for n in range(FILES)}
    assert all(any(d.startswith("pos-") for d in deletes) for _, deletes in one)
    for threads in (2, 3, 8):
        assert _plan(table, threads) == one
    assert _plan(table, 2, row_filter="id >= 2500") == [
        task for task in one if int(task[0][1:3]) >= 25
    ]


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_an_error_past_the_window_comes_after_the_tasks_before_it(
    tmp_path: Path, threads: int
) -> None:
    table, writer = _write(tmp_path / "t")
    # The data manifests are m1.avro .. m40.avro in list order: the 31st is past the window.
    broken = writer.meta / "m31.avro"
    broken.unlink()
    tasks = table.scan(options={"threads": threads}).plan_files()
    seen = []
    with pytest.raises(NotFoundError) as raised:
        for task in tasks:
            seen.append(Path(task.file.file_path).stem)
    assert str(broken) in str(raised.value)
    assert seen == [f"m{k:02d}-{n}" for k in range(30) for n in range(FILES)]
    assert list(tasks) == []  # the stream ended with the error


@pytest.mark.parametrize("threads", [1, 2])
def test_abandoned_plans_leave_nothing_stuck(table: StaticTable, threads: int) -> None:
    expected = _plan(table, threads)

    def abandon_many() -> None:
        for taken in range(0, 60, 3):
            tasks = table.scan(options={"threads": threads}).plan_files()
            for _, _task in zip(range(taken), tasks, strict=False):
                pass
            del tasks
        assert _plan(table, threads) == expected

    _finishes(abandon_many)


def test_planning_while_consuming_a_plan_on_the_same_threads(table: StaticTable) -> None:
    expected = _plan(table, 2)

    def nested() -> None:
        outer = []
        for i, task in enumerate(table.scan(options={"threads": 2}).plan_files()):
            outer.append(Path(task.file.file_path).stem)
            if i % 50 == 0:
                assert _plan(table, 2) == expected
        assert outer == [name for name, _ in expected]

    _finishes(nested)
