"""Concurrent appenders for the concurrency tests (tests/python/catalog/test_write_concurrency.py)
and their Java check (tests/interop/test_write_catalog_parity.py): forked processes, each
appending one-row tables (its writer id and sequence number) to ``db.t`` of one catalog."""

from __future__ import annotations

import multiprocessing

import pyarrow as pa
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import CommitFailedError

RETRY = {
    "commit.retry.num-retries": "1000",
    "commit.retry.min-wait-ms": "10",
    "commit.retry.max-wait-ms": "200",
    # keep every entry of the metadata log (Java's default keeps 100)
    "write.metadata.previous-versions-max": "1000",
}
SCHEMA = pa.schema([pa.field("writer", pa.int32(), False), pa.field("seq", pa.int32(), False)])


def open_catalog(kind: str, root: str, name: str) -> Catalog:
    """The same catalog in every process: ``kind`` is sqlite, filesystem or a PostgreSQL URI."""
    if kind == "sqlite":
        return SqlCatalog(name, uri=f"sqlite:///{root}/catalog.db", warehouse=f"{root}/wh")
    if kind == "filesystem":
        return FileSystemCatalog(name, warehouse=f"{root}/wh")
    return SqlCatalog(name, uri=kind, warehouse=f"{root}/wh")


def one_row(writer: int, seq: int) -> pa.Table:
    return pa.table(
        {"writer": pa.array([writer], pa.int32()), "seq": pa.array([seq], pa.int32())},
        schema=SCHEMA,
    )


def append_many(kind: str, root: str, name: str, writer: int, count: int) -> int:
    """Append ``count`` one-row tables; returns how many commit attempts lost a race."""
    catalog = open_catalog(kind, root, name)
    table = catalog.load_table("db.t")
    lost = 0
    commit = catalog.commit_table

    def counting(*args: object) -> object:
        nonlocal lost
        try:
            return commit(*args)  # type: ignore[arg-type]
        except CommitFailedError:
            lost += 1
            raise

    catalog.commit_table = counting  # type: ignore[method-assign,assignment]
    for seq in range(count):
        table.append(one_row(writer, seq))
    return lost


def run_concurrent_appends(kind: str, root: str, name: str, workers: int, commits: int) -> int:
    """Create db.t, run the writers in forked processes; returns the lost races in total."""
    catalog = open_catalog(kind, root, name)
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA, properties=RETRY)
    context = multiprocessing.get_context("fork")
    with context.Pool(workers) as pool:
        lost = pool.starmap(append_many, [(kind, root, name, w, commits) for w in range(workers)])
    return sum(lost)
