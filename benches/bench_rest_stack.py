"""The web stack of ``frazil serve``, measured: requests per second of ``GET /v1/config`` and
of a load-table route (``GET /v1/namespaces/db/tables/t``, a table of 20 snapshots) on
uvicorn, for

* ``frazil``: frazil.rest.server.app (Starlette's request and response, its raw-path
  router, handlers in worker threads), on uvicorn with httptools and uvloop;
* ``frazil-h11``: the same on uvicorn's pure-Python defaults (h11, asyncio);
* ``starlette``: the same handlers behind Starlette's own Router and run_in_threadpool;
* ``fastapi``: the same handlers as FastAPI routes (sync routes: FastAPI's threadpool).

Each server runs in its own process (one uvicorn worker), the load from ``wrk`` (2 threads,
16 connections, keep-alive) on the same machine. Run: ``python benches/bench_rest_stack.py
[seconds]`` (needs wrk: ``apt-get install wrk``).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUTES = {"config": "/v1/config", "load-table": "/v1/namespaces/db/tables/t"}
KINDS = ("frazil", "frazil-h11", "starlette", "fastapi")


def _catalog(directory: str) -> Any:
    from frazil.catalog.sql import SqlCatalog

    return SqlCatalog("bench", uri=f"sqlite:///{directory}/c.db", warehouse=f"{directory}/wh")


def _prepare(directory: str) -> None:
    import pyarrow as pa

    catalog = _catalog(directory)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("s", pa.string())]))
    for i in range(20):
        table.append(pa.table({"id": [i], "s": [str(i)]}))


def _app(kind: str, directory: str) -> Any:
    from frazil.rest.server import app
    from frazil.rest.server._http import Call, Reply
    from frazil.rest.server.routes import Service

    catalog = _catalog(directory)
    if kind.startswith("frazil"):
        return app(catalog)
    service = Service(catalog)

    def respond(reply: Reply) -> Any:
        from starlette.responses import Response

        return Response(reply.body or b"", reply.status, dict(reply.headers), "application/json")

    def call(request: Any, **params: str) -> Call:
        return Call(params, dict(request.query_params), dict(request.headers), b"")

    if kind == "starlette":
        from starlette.applications import Starlette
        from starlette.concurrency import run_in_threadpool
        from starlette.routing import Route

        async def config(request: Any) -> Any:
            return respond(service.config(call(request)))

        async def load(request: Any) -> Any:
            c = call(request, **request.path_params)
            return respond(await run_in_threadpool(service.load_table, c))

        return Starlette(
            routes=[
                Route("/v1/config", config),
                Route("/v1/namespaces/{namespace}/tables/{table}", load),
            ]
        )
    import fastapi
    from fastapi import FastAPI

    # FastAPI resolves the (string) annotations in this module's globals.
    globals()["Request"] = fastapi.Request
    api = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @api.get("/v1/config")
    async def fa_config(request: Request) -> Any:  # noqa: F821
        return respond(service.config(call(request)))

    @api.get("/v1/namespaces/{namespace}/tables/{table}")
    def fa_load(namespace: str, table: str, request: Request) -> Any:  # noqa: F821
        return respond(service.load_table(call(request, namespace=namespace, table=table)))

    return api


def _serve(kind: str, directory: str, port: int) -> None:
    import uvicorn

    options: dict[str, Any] = {"loop": "asyncio", "http": "h11"}
    if kind != "frazil-h11":
        options = {"loop": "uvloop", "http": "httptools"}
    uvicorn.run(_app(kind, directory), host="127.0.0.1", port=port, log_level="error", **options)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"the server on port {port} did not start")


def _wrk(url: str, seconds: int) -> float:
    done = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds}s", url], capture_output=True, text=True, check=True
    )
    if "Non-2xx" in done.stdout:
        raise SystemExit(f"{url}: errors\n{done.stdout}")
    match = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    assert match, done.stdout
    return float(match.group(1))


def main(seconds: int) -> None:
    directory = tempfile.mkdtemp(prefix="frazil-bench-rest-")
    _prepare(directory)
    results: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        port = _free_port()
        server = subprocess.Popen(
            [sys.executable, __file__, "serve", kind, directory, str(port)],
            cwd=Path(__file__).parent,
        )
        try:
            _wait(port)
            for name, path in ROUTES.items():
                _wrk(f"http://127.0.0.1:{port}{path}", 2)  # warm up
                results.setdefault(kind, {})[name] = _wrk(
                    f"http://127.0.0.1:{port}{path}", seconds
                )
        finally:
            server.terminate()
            server.wait(10)
        print(kind, results[kind], flush=True)
    print("\n| stack | GET /v1/config (req/s) | load table (req/s) |")
    print("| --- | --- | --- |")
    for kind, figures in results.items():
        print(f"| {kind} | {figures['config']:.0f} | {figures['load-table']:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        _serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
