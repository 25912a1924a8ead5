"""Streaming with bounded memory (issue 11): files read in parallel, batches handed on in plan
order, each file at most a few batches ahead of the consumer, workers stopped when the consumer
stops; and Parquet reads split into calls of bounded compressed size."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow.parquet as pq
import pytest
from frazil import Schema
from frazil import types as t
from frazil.errors import ValidationError
from frazil.table import read
from frazil.table._stream import ordered_parallel
from hypothesis import given, settings
from hypothesis import strategies as st
from read_helpers import DataTable


class _Counting:
    """Sources that record how far each has produced, to check how far ahead they run."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths
        self.produced = [0] * len(lengths)
        self.lock = threading.Lock()

    def source(self, index: int) -> Callable[[], Iterator[tuple[int, int]]]:
        def produce() -> Iterator[tuple[int, int]]:
            for item in range(self.lengths[index]):
                with self.lock:
                    self.produced[index] += 1
                yield (index, item)

        return produce

    def sources(self) -> Iterator[Callable[[], Iterator[tuple[int, int]]]]:
        return (self.source(i) for i in range(len(self.lengths)))


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 12), max_size=8),
    in_flight=st.integers(1, 4),
    depth=st.integers(1, 3),
)
def test_items_come_in_source_order(lengths: list[int], in_flight: int, depth: int) -> None:
    counting = _Counting(lengths)
    out = list(ordered_parallel(counting.sources(), in_flight, depth))
    assert out == [(i, item) for i, n in enumerate(lengths) for item in range(n)]


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(5, 40), min_size=1, max_size=5),
    depth=st.integers(1, 3),
    budget=st.integers(1, 6),
)
def test_sources_run_a_bounded_way_ahead(lengths: list[int], depth: int, budget: int) -> None:
    counting = _Counting(lengths)
    stream = ordered_parallel(counting.sources(), in_flight=3, depth=depth, budget=budget)
    consumed = [0] * len(lengths)
    for index, _ in stream:
        consumed[index] += 1
        time.sleep(0.001)  # let the workers run ahead as far as they may
        with counting.lock:
            ahead = [p - c for p, c in zip(counting.produced, consumed, strict=True)]
        # The consumed source's queue holds `depth`, the others' `budget` items in all; each
        # worker may hold one more item in hand.
        assert sum(ahead) <= depth + budget + 3, ahead


def test_a_sources_error_is_raised_where_it_happened() -> None:
    def failing() -> Iterator[int]:
        yield 10
        raise OSError("disk gone")

    sources = [lambda: iter([1, 2]), failing, lambda: iter([99])]
    seen = []
    with pytest.raises(OSError, match="disk gone"):
        for item in ordered_parallel(sources, in_flight=3, depth=1):
            seen.append(item)
    assert seen == [1, 2, 10]


def test_stopping_early_stops_the_workers() -> None:
    started = threading.Event()
    finished = []

    def endless() -> Iterator[int]:
        started.set()
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            finished.append(True)

    stream = ordered_parallel([endless, endless], in_flight=2, depth=2)
    assert next(stream) == 1
    stream.close()
    deadline = time.monotonic() + 5
    while len(finished) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert started.is_set()
    # Both workers left their loops: a worker blocked on a full queue polls the stop signal.
    assert len(finished) == 2


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValidationError, match="in_flight"):
        list(ordered_parallel([], in_flight=0, depth=1))


@given(
    sizes=st.lists(st.integers(1, 100), max_size=12),
    skipped=st.sets(st.integers(0, 11)),
    max_bytes=st.integers(1, 250),
)
def test_runs_are_consecutive_and_bounded(
    sizes: list[int], skipped: set[int], max_bytes: int
) -> None:
    first_rows = [sum(sizes[:i]) * 10 for i in range(len(sizes))]
    groups = [(i, first_rows[i], sizes[i]) for i in range(len(sizes)) if i not in skipped]
    runs = read._runs(groups, max_bytes)
    # Every group once, in order; a run's first row is its first group's.
    assert [i for run, _ in runs for i in run] == [g[0] for g in groups]
    for run, first_row in runs:
        assert first_row == first_rows[run[0]]
        assert run == list(range(run[0], run[-1] + 1))
        assert len(run) == 1 or sum(sizes[i] for i in run) <= max_bytes
    # Runs are as long as the bound allows: the next group would not have fitted.
    for (a, _), (b, _) in itertools.pairwise(runs):
        if b[0] == a[-1] + 1:
            assert sum(sizes[i] for i in a) + sizes[b[0]] > max_bytes


def test_scan_batches_stream_from_large_files(tmp_path: Any) -> None:
    """A scan over files larger than the read bound yields the same rows as reading whole,
    with several reader calls per file (positions stay absolute across calls)."""
    schema = Schema(
        t.NestedField(1, "id", t.LongType(), required=False),
        t.NestedField(2, "payload", t.StringType(), required=False),
    )
    table = DataTable(tmp_path, schema)
    files = []
    for f in range(3):
        ids = list(range(f * 50_000, (f + 1) * 50_000))
        payload = [f"row-{i:08d}" * 4 for i in range(50_000)]
        path = table.write_parquet({"id": ids, "payload": payload}, row_group_size=5_000)
        files.append(table.data(path))
    table.commit(files)
    loaded = table.table()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(read, "MAX_BYTES_PER_READ", 100_000)
        calls = []
        original = pq.ParquetFile.iter_batches

        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(kwargs.get("row_groups"))
            return original(self, *args, **kwargs)

        patch.setattr(pq.ParquetFile, "iter_batches", counting)
        scan = loaded.scan(selected_fields=("id", "_pos"), options={"read.files-in-flight": 2})
        rows = scan.to_batches().read_all()
    assert len(calls) > 3  # several calls per file
    assert rows.column("id").to_pylist() == list(range(150_000))
    assert rows.column("_pos").to_pylist() == [i % 50_000 for i in range(150_000)]
