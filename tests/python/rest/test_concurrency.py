"""frazil's REST server on a real uvicorn (a free loopback port): concurrent requests proceed
in parallel (a commit held inside the catalog does not hold up another table's commit: no
global lock), and concurrent commits to one table all land through the catalog's
compare-and-swap and the server-side retry, on SQLite and PostgreSQL."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.metadata import TableMetadata
from frazil.rest.server import app
from rest_helpers import make_catalog

uvicorn = pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class _Server:
    def __init__(self, application: Any) -> None:
        self.port = _free_port()
        config = uvicorn.Config(
            application, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(params=["sqlite", "postgresql"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class _Held(SqlCatalog):
    """A SQL catalog whose commits to ``db.slow`` wait, after writing their metadata file,
    until released: a commit in progress inside the catalog."""

    entered = threading.Event()
    release = threading.Event()

    def _write_new_metadata(
        self, identifier: tuple[str, ...], metadata: TableMetadata, location: str
    ) -> None:
        super()._write_new_metadata(identifier, metadata, location)
        if identifier == ("db", "slow"):
            type(self).entered.set()
            assert type(self).release.wait(30)


def _commit(base: str, table: str, key: str) -> httpx.Response:
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {key: "1"}}]}
    return httpx.post(f"{base}/v1/namespaces/db/tables/{table}", json=body, timeout=60)


def test_a_held_commit_does_not_block_other_requests(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    plain = make_catalog(kind, tmp_path, request)
    assert isinstance(plain, SqlCatalog)
    catalog = _Held(plain.name, **plain.properties)
    catalog.create_namespace("db")
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.slow", schema)
    catalog.create_table("db.fast", schema)
    _Held.entered.clear()
    _Held.release.clear()
    with _Server(app(catalog)) as base, ThreadPoolExecutor(2) as pool:
        slow = pool.submit(_commit, base, "slow", "s")
        assert _Held.entered.wait(30), "the slow commit reached the catalog"
        # While it is held: another table's commit, a load and a listing are served.
        started = time.monotonic()
        fast = _commit(base, "fast", "f")
        assert fast.status_code == 200, fast.text
        assert httpx.get(f"{base}/v1/namespaces/db/tables/slow").status_code == 200
        assert httpx.get(f"{base}/v1/namespaces/db/tables").status_code == 200
        assert time.monotonic() - started < 20
        assert not slow.done()
        _Held.release.set()
        assert slow.result(30).status_code == 200
    assert catalog.load_table("db.slow").metadata.properties["s"] == "1"
    assert catalog.load_table("db.fast").metadata.properties["f"] == "1"


def test_concurrent_commits_to_one_table_all_land(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    catalog = make_catalog(kind, tmp_path, request)
    catalog.create_namespace("db")
    catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    writers = 8
    with _Server(app(catalog)) as base, ThreadPoolExecutor(writers) as pool:
        results = list(pool.map(lambda i: _commit(base, "t", f"k{i}"), range(writers)))
        loads = [httpx.get(f"{base}/v1/namespaces/db/tables/t") for _ in range(3)]
    # Each lost race was retried on fresh metadata; any commit still refused said so (409).
    landed = {f"k{i}" for i, r in enumerate(results) if r.status_code == 200}
    assert all(r.status_code in (200, 409) for r in results), [r.text for r in results]
    assert len(landed) >= writers - 1
    properties = catalog.load_table("db.t").metadata.properties
    assert landed <= set(properties)
    assert not ({f"k{i}" for i in range(writers)} - landed) & set(properties)
    assert all(r.status_code == 200 for r in loads)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[str]:
    catalog = make_catalog("sqlite", tmp_path)
    with _Server(app(catalog, max_body_bytes=10_000)) as base:
        yield base


def test_bad_requests_leave_the_server_serving(running: str) -> None:
    for _ in range(3):
        big = httpx.post(f"{running}/v1/namespaces", content=b"x" * 50_000)
        assert big.status_code == 413 and big.json()["error"]["code"] == 413
        bad = httpx.post(f"{running}/v1/namespaces", content=b"{")
        assert bad.status_code == 400
    assert httpx.post(f"{running}/v1/namespaces", json={"namespace": ["ok"]}).status_code == 200
    assert httpx.get(f"{running}/v1/namespaces").json()["namespaces"] == [["ok"]]
