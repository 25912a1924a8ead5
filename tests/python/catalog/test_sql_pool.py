"""The PostgreSQL catalog's idle connections (frazil.catalog._sqldb.PostgresDatabase): reused
by the next operation, a connection the server ended replaced on reuse, none inherited by a
forked child, and ``pool-size`` 0 for a connection per operation."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import _sqldb
from frazil.catalog.sql import SqlCatalog


def _catalog(postgres_uri: str, tmp_path: Path, **properties: str) -> SqlCatalog:
    name = f"pool-{uuid.uuid4().hex[:8]}"
    return SqlCatalog(name, uri=postgres_uri, warehouse=str(tmp_path / "wh"), **properties)


def _backend(catalog: SqlCatalog) -> int:
    ((pid,),) = catalog._db.query("SELECT pg_backend_pid()")
    return int(pid)


def test_operations_reuse_an_idle_connection(postgres_uri: str, tmp_path: Path) -> None:
    catalog = _catalog(postgres_uri, tmp_path)
    first = _backend(catalog)
    catalog.create_namespace("db")
    table = catalog.create_table(("db", "t"), pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2]}))
    assert _backend(catalog) == first
    assert catalog.load_table(("db", "t")).scan().count() == 2


def test_pool_size_zero_opens_a_connection_per_operation(postgres_uri: str, tmp_path: Path) -> None:
    catalog = _catalog(postgres_uri, tmp_path, **{"pool-size": "0"})
    assert _backend(catalog) != _backend(catalog)


def test_a_connection_the_server_ended_is_replaced(
    postgres_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqldb, "_PING_AFTER_IDLE_S", 0.0)  # ping on every reuse
    catalog = _catalog(postgres_uri, tmp_path)
    catalog.create_namespace("db")
    victim = _backend(catalog)
    killer = _catalog(postgres_uri, tmp_path, **{"pool-size": "0"})
    killer._db.query("SELECT pg_terminate_backend(?)", (victim,))
    # The idle connection is dead; the next operation notices on reuse and opens another.
    assert catalog.list_namespaces() == [("db",)]
    assert _backend(catalog) != victim


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_inherits_no_connection(postgres_uri: str, tmp_path: Path) -> None:
    catalog = _catalog(postgres_uri, tmp_path)
    catalog.create_namespace("db")
    parent_backend = _backend(catalog)  # now idle in the pool
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own connection, and its exit must not end the parent's
        try:
            child_backend = _backend(catalog)
            ok = child_backend != parent_backend and catalog.list_namespaces() == [("db",)]
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    # The pool was emptied before the fork: the parent opens a fresh connection, which works.
    assert catalog.list_namespaces() == [("db",)]
