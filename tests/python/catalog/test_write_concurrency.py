"""Concurrent appends from separate processes to one table, on SQLite, PostgreSQL and the
file-system catalog (spec: "Optimistic Concurrency", "Sequence Numbers"): every commit lands
exactly once, the snapshot history and the metadata log are linear, and lost races are retried.

Workers are forked (frazil's I/O runtime and pools are rebuilt in a forked child, see
tests/python/io/test_io_fork.py): a spawned child re-imports pyarrow and costs seconds."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import signal
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from concurrent_appends import RETRY, SCHEMA, one_row, open_catalog, run_concurrent_appends
from frazil.metadata import read_metadata
from frazil.table.maintenance.orphans import valid_files

WORKERS = 8
COMMITS = 25
pytestmark = [
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


@pytest.fixture(params=["sqlite", "postgresql", "filesystem"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "postgresql":
        uri: str = request.getfixturevalue("postgres_uri")
        return uri
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[str]:
    """A directory in memory where there is one: every local write is fsynced, and hundreds of
    small fsynced files dominate the run on a busy disk while proving nothing here (a killed
    process loses no page cache)."""
    if not os.access("/dev/shm", os.W_OK):
        yield str(tmp_path)
        return
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="frazil-test-") as directory:
        yield directory


def test_concurrent_appends_land_exactly_once(kind: str, root: str) -> None:
    name = f"c-{uuid.uuid4().hex[:8]}"
    lost = run_concurrent_appends(kind, root, name, WORKERS, COMMITS)
    assert lost > 0, "the writers never raced: the test proves nothing"
    table = open_catalog(kind, root, name).load_table("db.t")
    total = WORKERS * COMMITS

    rows = table.scan().to_arrow()
    pairs = sorted(zip(*(rows.column(c).to_pylist() for c in ("writer", "seq")), strict=True))
    assert pairs == [(w, s) for w in range(WORKERS) for s in range(COMMITS)]

    # Linear history: each snapshot's parent is the one before, sequence numbers 1..N.
    snapshots = sorted(table.snapshots(), key=lambda s: s.sequence_number)
    assert [s.sequence_number for s in snapshots] == list(range(1, total + 1))
    assert snapshots[0].parent_snapshot_id is None
    for parent, child in itertools.pairwise(snapshots):
        assert child.parent_snapshot_id == parent.snapshot_id
    assert table.metadata.current_snapshot_id == snapshots[-1].snapshot_id
    assert [e.snapshot_id for e in table.history()] == [s.snapshot_id for s in snapshots]
    summary = snapshots[-1].summary
    assert summary is not None and summary["total-records"] == str(total)
    assert summary["total-data-files"] == str(total)

    # Linear metadata log: one file per commit, each version's log the prefix of the next.
    log = [entry.metadata_file for entry in table.metadata.metadata_log]
    assert len(log) == total == len(set(log))
    chain = [*log, table.metadata_location]
    for index in (1, len(chain) // 2, len(chain) - 1):
        earlier = read_metadata(chain[index])
        assert [e.metadata_file for e in earlier.metadata_log] == log[:index]
        assert len(earlier.snapshots) == index


def append_until_killed(
    kind: str, root: str, name: str, writer: int, hang: str | None, committed: Any
) -> None:
    """Append one row after another (seq 0, 1, ...), setting ``committed`` after each commit.
    With ``hang`` (``commit_table`` or ``_swap``) the third commit stops there forever, after
    writing its data file, manifest and manifest list (and, at ``_swap``, its metadata file)."""
    catalog = open_catalog(kind, root, name)
    table = catalog.load_table("db.t")
    if hang is not None:
        original = getattr(catalog, hang)
        calls = 0

        def stop_on_third(*args: object) -> object:
            nonlocal calls
            calls += 1
            if calls == 3:
                committed.set()
                time.sleep(3600)
            return original(*args)

        setattr(catalog, hang, stop_on_third)
    seq = 0
    while True:
        table.append(one_row(writer, seq))
        seq += 1
        if hang is None:
            committed.set()


def _local(location: str) -> str:
    return location.removeprefix("file://").removeprefix("file:")


def test_sigkill_mid_append_leaves_a_committed_version_and_orphans_go(kind: str, root: str) -> None:
    # A catalog name of its own: the PostgreSQL database is shared by the session's tests.
    name = f"k-{uuid.uuid4().hex[:8]}"
    catalog = open_catalog(kind, root, name)
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA, properties=RETRY)
    context = multiprocessing.get_context("fork")
    rng = random.Random(12)
    rounds: list[str | None] = ["commit_table", "_swap", None, None, None]
    for writer, hang in enumerate(rounds):
        committed = context.Event()
        process: Any = context.Process(
            target=append_until_killed, args=(kind, root, name, writer, hang, committed)
        )
        process.start()
        assert committed.wait(60), "the appending child never committed"
        if hang is None:
            time.sleep(rng.uniform(0.0, 0.15))  # somewhere inside a later commit
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        table = open_catalog(kind, root, name).load_table("db.t")
        rows = table.scan().to_arrow()
        # The table is at a committed version: each writer's rows are a prefix 0..k-1 of its
        # appends, and there is one snapshot (and one row) per committed append.
        for w in range(writer + 1):
            seqs = sorted(s for x, s in zip(*rows.to_pydict().values(), strict=True) if x == w)
            assert seqs == list(range(len(seqs))) and seqs
        assert rows.num_rows == len(table.snapshots())

    table = open_catalog(kind, root, name).load_table("db.t")
    before = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: (r["writer"], r["seq"]))
    future = int(time.time() * 1000) + 86_400_000
    removed = [Path(_local(p)).name for p in table.remove_orphan_files(older_than=future)]
    # The hung commits left at least a data file, a manifest and a manifest list (and, on the
    # SQL catalogs, SQLite and PostgreSQL, a metadata file never swapped in).
    assert any(n.endswith(".parquet") for n in removed)
    assert any(n.endswith("-m0.avro") for n in removed)
    assert any(n.startswith("snap-") for n in removed)
    if kind != "filesystem":
        assert any(n.endswith(".metadata.json") for n in removed)
    table = open_catalog(kind, root, name).load_table("db.t")
    valid = {_local(p) for p in valid_files(table)}
    left = {str(p) for p in Path(_local(table.location())).rglob("*") if p.is_file()}
    # The killed writers' temporary files (.<name>.<pid>-<n>.tmp) went too.
    assert left <= valid, sorted(left - valid)
    after = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: (r["writer"], r["seq"]))
    assert after == before
    table.append(one_row(99, 0))
    assert (
        open_catalog(kind, root, name).load_table("db.t").scan().to_arrow().num_rows
        == len(before) + 1
    )
