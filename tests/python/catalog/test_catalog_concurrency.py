"""Concurrent committers in separate processes (spawned), on SQLite and on the file-system
catalog: every commit lands exactly once and the metadata log is linear; a process killed with
SIGKILL in the middle of commits leaves the table loadable at a committed version."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog

WORKERS = 8
COMMITS = 25
RETRY = {
    "commit.retry.num-retries": "1000",
    "commit.retry.min-wait-ms": "2",
    "commit.retry.max-wait-ms": "50",
    # keep every entry of the metadata log (Java's default keeps 100)
    "write.metadata.previous-versions-max": "1000",
}


def _open(kind: str, root: str) -> Catalog:
    if kind == "sqlite":
        return SqlCatalog("c", uri=f"sqlite:///{root}/catalog.db", warehouse=f"{root}/wh")
    return FileSystemCatalog("c", warehouse=f"{root}/wh")


def _commit_forever(kind: str, root: str, prefix: str, started: Any) -> None:
    table = _open(kind, root).load_table("db.t")
    i = 0
    while True:
        with table.update_properties() as update:
            update.set(f"{prefix}{i}", "1")
        i += 1
        started.set()


@pytest.fixture(params=["sqlite", "filesystem"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    kind, root = request.param, str(tmp_path)
    catalog = _open(kind, root)
    catalog.create_namespace("db")
    catalog.create_table("db.t", pa.schema([("id", pa.int64())]), properties=RETRY)
    return kind, root


def test_sigkill_mid_commit_leaves_table_loadable(setup: tuple[str, str]) -> None:
    kind, root = setup
    context = multiprocessing.get_context("spawn")
    rng = random.Random(7)
    for attempt in range(2):
        started = context.Event()
        process: Any = context.Process(
            target=_commit_forever, args=(kind, root, f"a{attempt}-", started)
        )
        process.start()
        assert started.wait(60), "the committing child never committed"
        time.sleep(rng.uniform(0.0, 0.2))  # somewhere inside a later commit
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        table = _open(kind, root).load_table("db.t")
        assert table.metadata_location is not None
        # every committed version is complete: one log entry per property committed
        committed = [k for k in table.properties if k.startswith(("a0-", "a1-", "after-kill"))]
        assert len(table.metadata.metadata_log) == len(committed) >= 1
        with table.update_properties() as update:
            update.set(f"after-kill-{attempt}", "1")
        assert f"after-kill-{attempt}" in _open(kind, root).load_table("db.t").properties
