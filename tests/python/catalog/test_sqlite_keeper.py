"""The SQLite catalog keeps one idle connection open, so that its write-ahead log survives
between operations (every connection closing made SQLite checkpoint and delete the log, and
the next create it again: several fsyncs per commit), and closes it before a fork."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pyarrow as pa
from frazil.catalog.sql import SqlCatalog


def _append_in_child(uri: str, warehouse: str, queue: multiprocessing.Queue[str]) -> None:
    try:
        catalog = SqlCatalog("test", uri=uri, warehouse=warehouse)
        catalog.load_table("db.t").append(pa.table({"id": pa.array([2], pa.int64())}))
        queue.put("ok")
    except BaseException as error:  # reported to the parent
        queue.put(repr(error))


def test_log_survives_commits_and_forks(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    uri, warehouse = f"sqlite:///{db}", str(tmp_path / "wh")
    catalog = SqlCatalog("test", uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1], pa.int64())}))
    wal = Path(f"{db}-wal")
    assert wal.exists(), "the write-ahead log was checkpointed away after the commit"
    inode = os.stat(wal).st_ino
    table.append(pa.table({"id": pa.array([3], pa.int64())}))
    assert os.stat(wal).st_ino == inode  # the same log, not deleted and created again
    # A forked writer commits too (the keeper was closed before the fork, reopened after).
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[str] = context.Queue()
    child = context.Process(target=_append_in_child, args=(uri, warehouse, queue))
    child.start()
    child.join(60)
    assert queue.get(timeout=5) == "ok"
    table.refresh().append(pa.table({"id": pa.array([4], pa.int64())}))
    ids = catalog.load_table("db.t").scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == [1, 2, 3, 4]
