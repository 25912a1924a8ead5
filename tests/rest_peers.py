"""The REST catalog's peers: ``frazil serve`` run as a subprocess, and the clients that talk to
it configured the way their users configure them (tests/python/rest/test_rest_peers_nojava.py,
tests/interop/test_rest_peers.py).

- :func:`serve`: ``python -m frazil.cli serve`` over a fresh SQLite catalog and warehouse (given
  by ``FRAZIL_CATALOG__<NAME>__<KEY>`` variables, with ``FRAZIL_CONFIG`` pointing at an empty
  file so that no ``~/.frazil.yaml`` leaks in), on a free loopback port, up once ``/v1/config``
  answers, stopped at the end; the server's output is kept in a log shown on failure.
- :func:`duckdb_connection`: DuckDB with its ``avro``, ``httpfs`` and ``iceberg`` extensions
  installed from the PyPI wheels (``duckdb-extension-*``, pyproject's ``bench`` extra), offline,
  into a throwaway extension directory. The iceberg extension needs httpfs for a REST catalog
  (without it, ATTACH tries to download it: "An error occurred while trying to automatically
  install the required extension 'httpfs'").
- :func:`duckdb_attach`, :func:`pyiceberg_catalog`, :func:`frazil_catalog`,
  :func:`spark_rest_options`: each client's connection to a server.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The catalog name the server serves (its FRAZIL_CATALOG__SERVED__* variables).
SERVED = "served"
STARTUP_SECONDS = 60.0


class ServerFailed(RuntimeError):
    """``frazil serve`` exited, or did not answer in time; the message holds its output."""


@dataclass
class Server:
    """A running ``frazil serve``: its base URI (``http://127.0.0.1:PORT``), warehouse, and
    the token or client credentials it was started with."""

    uri: str
    warehouse: Path
    catalog_db: Path
    log: Path
    token: str | None = None
    credential: str | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def port(self) -> int:
        return int(self.uri.rsplit(":", 1)[1])

    @property
    def oauth_uri(self) -> str:
        """The server's OAuth2 token endpoint (REST spec ``/v1/oauth/tokens``)."""
        return f"{self.uri}/v1/oauth/tokens"

    def commit_statuses(self, table_path: str) -> list[int]:
        """The statuses the server answered to commits of the table at ``table_path``
        (``/v1/namespaces/<ns>/tables/<name>``), read from its access log (uvicorn's)."""
        pattern = re.compile(rf'"POST {re.escape(table_path)} HTTP/1\.1" (\d{{3}})')
        return [int(m.group(1)) for m in pattern.finditer(self.log.read_text(errors="replace"))]

    def output(self) -> str:
        """What the server printed so far (its last 6,000 characters)."""
        try:
            return self.log.read_text(errors="replace")[-6000:]
        except FileNotFoundError:
            return ""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """One raw HTTP request to the server: (status, parsed JSON body or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.uri}{path}", data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return status, raw.decode(errors="replace")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _environment(root: Path, warehouse: Path, catalog_db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("FRAZIL_CATALOG__")}
    empty_config = root / "frazil.yaml"
    empty_config.write_text("")
    env["FRAZIL_CONFIG"] = str(empty_config)
    # No TYPE: a sqlite:// uri makes it a SQL catalog (as the README's example).
    env[f"FRAZIL_CATALOG__{SERVED.upper()}__URI"] = f"sqlite:///{catalog_db}"
    env[f"FRAZIL_CATALOG__{SERVED.upper()}__WAREHOUSE"] = str(warehouse)
    # The server's own Python must find this checkout's frazil as the tests do.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _wait_until_up(server: Server, deadline: float) -> None:
    while True:
        assert server.process is not None
        if server.process.poll() is not None:
            raise ServerFailed(
                f"frazil serve exited with status {server.process.returncode}:\n{server.output()}"
            )
        try:
            status, _ = server.request("GET", "/v1/config", token=server.token)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            status = 0
        # Any HTTP answer means it listens; /v1/config must answer 200 with the token.
        if status == 200:
            return
        if status:
            raise ServerFailed(f"GET /v1/config answered {status}:\n{server.output()}")
        if time.monotonic() > deadline:
            raise ServerFailed(
                f"no answer on {server.uri} in {STARTUP_SECONDS:g}s:\n{server.output()}"
            )
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def serve(
    root: Path,
    *,
    token: str | None = None,
    credential: str | None = None,
    extra_args: Sequence[str] = (),
) -> Iterator[Server]:
    """``frazil serve`` over a fresh SQLite catalog under ``root``, for the ``with`` block.

    ``token`` starts it with ``--token`` (every request must carry it); ``credential``
    (``client:secret``) adds an OAuth2 client whose client-credentials grant at
    ``/v1/oauth/tokens`` yields a token. A port taken between choosing and binding it (another
    process's) is retried on a new port."""
    root.mkdir(parents=True, exist_ok=True)
    warehouse, catalog_db = root / "warehouse", root / "catalog.db"
    warehouse.mkdir(exist_ok=True)
    env = _environment(root, warehouse, catalog_db)
    auth: list[str] = []
    if token is not None:
        auth += ["--token", token]
    if credential is not None:
        client_id, _, secret = credential.partition(":")
        auth += ["--client-id", client_id, "--client-secret", secret]
    last: ServerFailed | None = None
    for attempt in range(3):
        port = _free_port()
        log = root / f"serve-{attempt}.log"
        command = [
            sys.executable,
            "-m",
            "frazil.cli",
            "serve",
            "--catalog",
            SERVED,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            *auth,
            *extra_args,
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root
            )
        server = Server(
            uri=f"http://127.0.0.1:{port}",
            warehouse=warehouse,
            catalog_db=catalog_db,
            log=log,
            token=token,
            credential=credential,
            process=process,
        )
        try:
            _wait_until_up(server, time.monotonic() + STARTUP_SECONDS)
        except ServerFailed as error:
            _stop(process)
            last = error
            if "address already in use" in str(error).lower():
                continue
            raise
        try:
            yield server
        finally:
            _stop(process)
        return
    assert last is not None
    raise last


# --- the clients ---------------------------------------------------------------------------


def frazil_catalog(server: Server, name: str = "rest", **properties: str) -> Any:
    """frazil's REST client on ``server`` (``load_catalog(name, type="rest", uri=...)``)."""
    import frazil

    props = {"type": "rest", "uri": server.uri, **properties}
    if server.token is not None and "credential" not in props:
        props.setdefault("token", server.token)
    return frazil.load_catalog(name, **props)


def pyiceberg_catalog(server: Server, name: str = "rest", **properties: str) -> Any:
    """pyiceberg's RestCatalog on ``server``."""
    from pyiceberg.catalog.rest import RestCatalog

    props = {"uri": server.uri, **properties}
    if server.token is not None and "credential" not in props:
        props.setdefault("token", server.token)
    return RestCatalog(name, **props)


def spark_rest_options(server: Server, *, credential: str | None = None) -> dict[str, str]:
    """The options of an Iceberg Java ``RESTCatalog`` on ``server`` as a Spark catalog takes
    them (``spark.sql.catalog.<name>.<key>``), with the token, or with ``credential``
    (``client:secret``) for Java's OAuth2 client-credentials flow at the server's
    ``/v1/oauth/tokens``."""
    options = {
        "type": "rest",
        "uri": server.uri,
        # Every load must see the other clients' commits, not a cached table.
        "cache-enabled": "false",
    }
    if credential is not None:
        options["credential"] = credential
        options["oauth2-server-uri"] = server.oauth_uri
    elif server.token is not None:
        options["token"] = server.token
    return options


def configure_spark_catalog(spark: Any, name: str, options: dict[str, str]) -> None:
    """Adds catalog ``name`` to the running SparkSession (catalogs are looked up on first use,
    so ``spark.sql.catalog.*`` may be set at run time)."""
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    for key, value in options.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)


DUCKDB_EXTENSIONS = ("avro", "httpfs", "iceberg")


def duckdb_connection(extension_directory: Path) -> Any:
    """A DuckDB connection with the iceberg extension (and avro, httpfs) loaded from the PyPI
    wheels, offline: ``INSTALL '<file>'`` of each wheel's ``.duckdb_extension`` into
    ``extension_directory``, then ``LOAD``."""
    import duckdb
    from duckdb_extensions import import_extension  # type: ignore[import-untyped]

    extension_directory.mkdir(parents=True, exist_ok=True)
    # Never from the network: every extension comes from a wheel.
    config = {
        "extension_directory": str(extension_directory),
        "autoinstall_known_extensions": False,
    }
    con = duckdb.connect(config=config)
    for name in DUCKDB_EXTENSIONS:
        import_extension(name, con=con)
        con.sql(f"LOAD {name}")
    return con


def duckdb_attach(con: Any, server: Server, alias: str = "c", *, token: str | None = None) -> None:
    """``ATTACH`` the server's catalog in DuckDB as ``alias``: no authorization, or a bearer
    token (the server's when it has one, unless ``token`` is given)."""
    token = token if token is not None else server.token
    auth = "AUTHORIZATION_TYPE 'none'" if token is None else f"TOKEN '{token}'"
    con.sql(f"ATTACH '{SERVED}' AS {alias} (TYPE iceberg, ENDPOINT '{server.uri}', {auth})")


# --- concurrent writers ----------------------------------------------------------------------

# Table properties of the shared tables: each of 8 writers may lose many races in a row, more
# than the default 4 retries (commit.retry.*, honoured by Java and by frazil).
RETRY_PROPERTIES = {
    "commit.retry.num-retries": "200",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "200",
    "commit.retry.total-timeout-ms": "600000",
}


def writer_row(writer: int, commit: int) -> dict[str, Any]:
    """The one row writer ``writer`` appends in its commit ``commit`` (ids unique over all)."""
    return {"id": writer * 1000 + commit, "writer": writer, "commit": commit}


WRITER_SCHEMA_FIELDS = (("id", "int64"), ("writer", "int32"), ("commit", "int32"))


def writer_arrow(writer: int, commit: int) -> Any:
    import pyarrow as pa

    row = writer_row(writer, commit)
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in WRITER_SCHEMA_FIELDS])
    return pa.Table.from_pylist([row], schema=schema)


@dataclass
class WriterReport:
    """What one writer did: its commits' snapshot ids (one per commit, in order), the lost
    races it saw (each a 409 answer to its commit) and the statuses of its commit requests."""

    writer: int
    client: str
    snapshot_ids: list[int]
    conflicts: int
    statuses: list[int]

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


def pyiceberg_write(
    uri: str, token: str | None, tables: Sequence[str], writer: int, commits: int
) -> WriterReport:
    """``commits`` appends of one row each through pyiceberg, commit ``i`` to
    ``tables[(i + writer) % len(tables)]``. pyiceberg 0.12 retries a lost race (the server's
    409) itself, per the table's commit.retry.* properties; should it give up
    (CommitFailedException), the table is reloaded and the append made again, counted in
    ``conflicts``."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import CommitFailedException

    props = {"uri": uri} if token is None else {"uri": uri, "token": token}
    catalog = RestCatalog(f"writer{writer}", **props)
    statuses: list[int] = []

    def record(response: Any, *args: Any, **kwargs: Any) -> None:
        # Only commits: POST .../namespaces/{ns}/tables/{table}.
        request = response.request
        if request.method == "POST" and "/tables/" in request.url:
            statuses.append(response.status_code)

    catalog._session.hooks["response"].append(record)
    loaded = {name: catalog.load_table(name) for name in tables}
    snapshot_ids: list[int] = []
    conflicts = 0
    for commit in range(commits):
        name = tables[(commit + writer) % len(tables)]
        data = writer_arrow(writer, commit)
        deadline = time.monotonic() + 300
        while True:
            try:
                loaded[name].append(data)
                break
            except CommitFailedException:
                conflicts += 1
                if time.monotonic() > deadline:
                    raise
                loaded[name] = catalog.load_table(name)
        snapshot = loaded[name].current_snapshot()
        assert snapshot is not None
        snapshot_ids.append(snapshot.snapshot_id)
    return WriterReport(writer, "pyiceberg", snapshot_ids, conflicts, statuses)


def frazil_write(
    uri: str, token: str | None, tables: Sequence[str], writer: int, commits: int
) -> WriterReport:
    """``commits`` appends through frazil's REST client, which retries lost races itself
    (per the tables' commit.retry.* properties)."""
    import frazil

    props = {"type": "rest", "uri": uri}
    if token is not None:
        props["token"] = token
    catalog = frazil.load_catalog(f"writer{writer}", **props)
    loaded = {name: catalog.load_table(name) for name in tables}
    snapshot_ids: list[int] = []
    for commit in range(commits):
        name = tables[(commit + writer) % len(tables)]
        loaded[name].append(writer_arrow(writer, commit))
        snapshot = loaded[name].current_snapshot()
        assert snapshot is not None
        snapshot_ids.append(snapshot.snapshot_id)
    return WriterReport(writer, "frazil", snapshot_ids, 0, [])


def verify_concurrent_writes(
    server: Server,
    catalog: Any,
    tables: Sequence[str],
    writers: Sequence[int],
    reports: dict[int, WriterReport],
    commits: int,
) -> str:
    """Checks that every commit of ``writers`` (``commits`` each, commit ``i`` of writer ``w``
    to ``tables[(i + w) % len(tables)]``) landed exactly once: per table one snapshot per
    commit, each the child of the one before, sequence numbers 1..n, exactly the written rows;
    the snapshots ``reports`` name are those; the server answered each table's commits 200
    exactly once per commit and 409 for every lost race (nothing else, and some races were
    lost), the pyiceberg writers saw those 409s and went on. Returns a one-line summary."""
    per_table = len(writers) * commits // len(tables)
    committed = [s for r in reports.values() for s in r.snapshot_ids]
    assert len(set(committed)) == len(committed), "two commits reported one snapshot"
    landed: list[int] = []
    for name in tables:
        table = catalog.load_table(name)
        snapshots = table.snapshots()
        assert len(snapshots) == per_table
        by_id = {s.snapshot_id: s for s in snapshots}
        head = table.current_snapshot()
        chain = []
        while head is not None:
            chain.append(head.snapshot_id)
            head = by_id.get(head.parent_snapshot_id) if head.parent_snapshot_id else None
        assert len(chain) == per_table, "a snapshot is not on the current lineage"
        assert sorted(s.sequence_number for s in snapshots) == list(range(1, per_table + 1))
        landed += chain
        got = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
        expected = [
            writer_row(w, c)
            for w in sorted(writers)
            for c in range(commits)
            if tables[(c + w) % len(tables)] == name
        ]
        assert got == expected
    assert set(committed) <= set(landed)
    if len(reports) == len(writers):
        assert sorted(landed) == sorted(committed)

    lost = 0
    for name in tables:
        namespace, table_name = name.split(".")
        statuses = server.commit_statuses(f"/v1/namespaces/{namespace}/tables/{table_name}")
        assert statuses.count(200) == per_table
        assert set(statuses) == {200, 409}
        lost += statuses.count(409)
    by_client: dict[str, int] = {}
    for report in reports.values():
        if report.client == "pyiceberg":
            assert report.statuses.count(200) == commits
            assert set(report.statuses) <= {200, 409}
            by_client["pyiceberg"] = by_client.get("pyiceberg", 0) + report.statuses.count(409)
    others = lost - sum(by_client.values())
    return (
        f"{len(writers)} writers x {commits} commits: {lost} lost races answered 409 and "
        f"retried ({by_client.get('pyiceberg', 0)} by pyiceberg, {others} by the others)"
    )


WRITERS = {"pyiceberg": pyiceberg_write, "frazil": frazil_write}


def main(argv: Sequence[str]) -> int:
    """``python tests/rest_peers.py CLIENT URI TOKEN|- WRITER COMMITS TABLE...``: one writer
    process; prints its WriterReport as one JSON line."""
    client, uri, token, writer, commits, *tables = argv
    write = WRITERS[client]
    report = write(uri, None if token == "-" else token, tables, int(writer), int(commits))
    print(report.to_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
