"""The REST catalog: ``frazil serve`` against the same catalog used directly (issue 25, "Speed").

Each catalog (an SQLite file, and a PostgreSQL server started for the run: fsync off, a
throwaway cluster) is served by ``frazil serve`` in its own process (one uvicorn worker,
httptools and uvloop: the ``server`` extra), on a free loopback port. The client is frazil's
``RestCatalog`` in this process; the floor is frazil's ``SqlCatalog`` on the same database in
this process: the same table API, the same commit, without HTTP in between.

1. **Commit latency**: a metadata-only commit (``set_properties``: the client sends
   ``assert-table-uuid`` plus ``set-properties``; the server reads, validates, writes the
   metadata file and swaps the pointer) and a one-file fast append (``table.append`` of 10 rows:
   the client writes the data file, its manifest and the manifest list; the server writes the
   metadata), each on its own table (one for the direct path, one for REST) so neither sees the
   other's commits. Direct and REST commits interleaved in blocks of ``--block``; every commit's
   wall time from the call to its return (the table refreshed). Median and 90th percentile;
   the target is the REST median within 2 ms of the direct one.
2. **load_table latency** of a table with ``--snapshots`` snapshots (10k): its metadata made
   once by committing one real append, then adding snapshots that reuse its manifest list
   (ids, parents, sequence numbers, timestamps and the snapshot log as a long linear history
   has them; loading a table reads its metadata file only) and registering that file. Direct
   ``load_table`` (reads and parses the metadata file) against ``RestCatalog.load_table`` by a
   client new to the table (the server keeps the parsed metadata and its JSON; the client
   parses the response) and by one reloading it (a conditional load: 304, nothing parsed).
3. **load_table throughput**: ``--clients`` processes each calling ``load_table`` on a table of
   a few snapshots for ``--seconds`` through the server, all on the same 2 cores as the
   server: calls per second in total; the target is at least 500. Also the raw route (an httpx
   GET of the load-table route, no metadata parsed by the client), the server's own ceiling.

Every commit and load is checked (property value, row counts, snapshot count) after the clock
stops.

    .venv/bin/python benches/bench_rest.py                 # writes RESULTS.md
    .venv/bin/python benches/bench_rest.py --commits 50 --seconds 3 --no-write
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _report import environment_lines, header, how_to_run, version, write_section

MARKERS = ("<!-- bench_rest:begin -->", "<!-- bench_rest:end -->")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
ROWS = pa.table(
    {"id": pa.array(range(10), pa.int64()), "s": pa.array([f"r{i}" for i in range(10)])}
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def served(uri: str, warehouse: str) -> Iterator[str]:
    """``frazil serve`` over the SQL catalog at ``uri`` in a subprocess; yields its URL."""
    port = _free_port()
    env = dict(os.environ)
    env["FRAZIL_CATALOG__BENCH__URI"] = uri
    env["FRAZIL_CATALOG__BENCH__WAREHOUSE"] = warehouse
    command = [sys.executable, "-m", "frazil.cli", "serve", "--catalog", "bench"]
    command += ["--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"frazil serve exited: {process.stderr.read()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{url}/v1/config", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("frazil serve did not answer within 60 s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def _catalogs(uri: str, warehouse: str, url: str) -> tuple[Any, Any]:
    from frazil.catalog.rest import RestCatalog
    from frazil.catalog.sql import SqlCatalog

    return SqlCatalog("bench", uri=uri, warehouse=warehouse), RestCatalog("bench", uri=url)


def _fresh_table(catalog: Any, name: str) -> Any:
    if catalog.table_exists(("db", name)):
        catalog.drop_table(("db", name))
    return catalog.create_table(("db", name), ROWS.schema)


def commit_latency(direct: Any, rest: Any, commits: int, block: int) -> dict[str, list[float]]:
    """Wall seconds per commit, by kind and path, in commit order, interleaved in blocks. Each
    kind and path has a table of its own: the ``set_properties`` tables keep no snapshot, the
    ``append`` tables gain one a commit (a REST commit's answer carries the whole metadata,
    which the server writes out and the client parses, so its cost grows with the snapshots)."""
    times: dict[str, list[float]] = {}
    kinds = ("set_properties", "append")
    catalogs = {"direct": direct, "rest": rest}
    tables = {
        (path, kind): _fresh_table(catalog, f"commit_{path}_{kind}")
        for path, catalog in catalogs.items()
        for kind in kinds
    }
    counts = dict.fromkeys(tables, 0)

    def run(path: str, kind: str) -> None:
        table = tables[path, kind]
        counts[path, kind] += 1
        started = time.perf_counter()
        if kind == "set_properties":
            with table.transaction() as txn:
                txn.set_properties({"bench.counter": str(counts[path, kind])})
        else:
            table.append(ROWS)
        times.setdefault(f"{kind} {path}", []).append(time.perf_counter() - started)

    # One untimed commit of each kind and path (imports, connections, caches).
    for path, kind in tables:
        run(path, kind)
    times.clear()
    done = 0
    while done < commits:
        for kind in kinds:
            for path in ("direct", "rest") if done % (2 * block) < block else ("rest", "direct"):
                for _ in range(block):
                    run(path, kind)
        done += block
    for (path, kind), count in counts.items():
        table = catalogs[path].load_table(("db", f"commit_{path}_{kind}"))
        if kind == "set_properties" and table.properties.get("bench.counter") != str(count):
            raise AssertionError(f"{path}: counter {table.properties.get('bench.counter')}")
        if kind == "append" and table.scan().count() != count * ROWS.num_rows:
            raise AssertionError(f"{path}: {table.scan().count()} rows")
    return times


def long_history_table(direct: Any, warehouse: str, snapshots: int) -> tuple[str, ...]:
    """A registered table whose metadata holds ``snapshots`` snapshots (see the docstring)."""
    from frazil.metadata import TableMetadata, read_metadata, write_metadata

    identifier = ("db", f"history_{snapshots}")
    if direct.table_exists(identifier):
        return identifier
    base = _fresh_table(direct, "history_base")
    base.append(ROWS)
    base = direct.load_table(("db", "history_base"))
    node = json.loads(read_metadata(base.metadata_location).to_json())
    first = node["snapshots"][0]
    history = []
    for index in range(snapshots):
        snapshot = copy.deepcopy(first)
        snapshot["snapshot-id"] = first["snapshot-id"] + index
        snapshot["sequence-number"] = index + 1
        snapshot["timestamp-ms"] = first["timestamp-ms"] + index
        if index:
            snapshot["parent-snapshot-id"] = first["snapshot-id"] + index - 1
        history.append(snapshot)
    last = history[-1]
    node["snapshots"] = history
    node["snapshot-log"] = [
        {"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in history
    ]
    node["current-snapshot-id"] = last["snapshot-id"]
    node["last-sequence-number"] = last["sequence-number"]
    node["last-updated-ms"] = last["timestamp-ms"]
    node["refs"] = {"main": {"snapshot-id": last["snapshot-id"], "type": "branch"}}
    location = f"{warehouse}/history-{snapshots}.metadata.json"
    write_metadata(TableMetadata.from_json(json.dumps(node)), location)
    direct.register_table(identifier, location)
    return identifier


def load_latency(
    direct: Any, rest: Any, identifier: tuple[str, ...], loads: int
) -> dict[str, list[float]]:
    """Wall seconds per load: ``direct``; ``rest cold``, a client that has not seen the table
    (the whole metadata sent and parsed); ``rest``, a client reloading a table it holds (its
    conditional load: the server answers 304 when the metadata file is unchanged)."""
    times: dict[str, list[float]] = {"direct": [], "rest cold": [], "rest": []}
    expected = len(direct.load_table(identifier).metadata.snapshots)
    for catalog in (direct, rest):  # untimed: caches warm on both paths
        catalog.load_table(identifier)
    for index in range(loads):
        for path in list(times) if index % 2 == 0 else list(times)[::-1]:
            catalog = direct if path == "direct" else rest
            if path == "rest cold":
                rest._etags.clear()  # forget what the client holds (the bench's reach-in)
            started = time.perf_counter()
            table = catalog.load_table(identifier)
            times[path].append(time.perf_counter() - started)
            if len(table.metadata.snapshots) != expected:
                raise AssertionError(f"{path}: {len(table.metadata.snapshots)} snapshots")
    return times


def _load_worker(url: str, seconds: float, raw: bool, start: Any, out: Any) -> None:
    route = f"{url}/v1/namespaces/db/tables/load_target"
    count = 0
    if raw:
        import httpx

        client = httpx.Client()
        call: Callable[[], object] = lambda: client.get(route).raise_for_status()  # noqa: E731
    else:
        from frazil.catalog.rest import RestCatalog

        catalog = RestCatalog("bench", uri=url)
        call = lambda: catalog.load_table(("db", "load_target"))  # noqa: E731
    call()
    start.wait()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        call()
        count += 1
    out.put(count)


def load_throughput(url: str, clients: int, seconds: float, raw: bool) -> float:
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(clients + 1), context.Queue()
    workers = [
        context.Process(target=_load_worker, args=(url, seconds, raw, start, out))
        for _ in range(clients)
    ]
    for worker in workers:
        worker.start()
    start.wait()
    total = sum(out.get(timeout=seconds + 120) for _ in workers)
    for worker in workers:
        worker.join()
    return total / seconds


def _ms(xs: list[float], q: float | None = None) -> float:
    if q is None:
        return statistics.median(xs) * 1000
    return statistics.quantiles(xs, n=100)[int(q) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalogs", default="sqlite,postgresql")
    parser.add_argument("--commits", type=int, default=300, help="timed commits a kind and path")
    parser.add_argument("--block", type=int, default=10)
    parser.add_argument("--snapshots", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=100, help="timed loads of the long table")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows: list[str] = []
    targets: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="frazil-bench-rest-") as directory:
        with contextlib.ExitStack() as stack:
            uris = {}
            for kind in args.catalogs.split(","):
                if kind == "sqlite":
                    uris[kind] = f"sqlite:///{directory}/catalog.db"
                elif kind == "postgresql":
                    from postgres_server import running_postgres

                    uris[kind] = stack.enter_context(running_postgres())
                else:
                    raise SystemExit(f"unknown catalog {kind!r} (sqlite, postgresql)")
            for kind, uri in uris.items():
                warehouse = f"{directory}/warehouse-{kind}"
                from frazil.catalog.sql import SqlCatalog

                SqlCatalog("bench", uri=uri, warehouse=warehouse).create_namespace("db")
                with served(uri, warehouse) as url:
                    direct, rest = _catalogs(uri, warehouse, url)
                    print(f"[{kind}] commits", flush=True)
                    times = commit_latency(direct, rest, args.commits, args.block)
                    tail = min(50, args.commits)
                    for what, first, last in (
                        ("set_properties", 0, args.commits),
                        ("append", 0, tail),
                        ("append", args.commits - tail, args.commits),
                    ):
                        d = times[f"{what} direct"][first:last]
                        r = times[f"{what} rest"][first:last]
                        label = (
                            f"commit: {what}"
                            if what == "set_properties"
                            else f"commit: append, snapshots {first + 1}..{last}"
                        )
                        rows.append(
                            f"| {kind} | {label} | {_ms(d):.2f} ms (p90 {_ms(d, 90):.2f}) "
                            f"| {_ms(r):.2f} ms (p90 {_ms(r, 90):.2f}) "
                            f"| {_ms(r) - _ms(d):+.2f} ms |"
                        )
                        targets.append(
                            f"- {kind}, {label}: REST median {_ms(r) - _ms(d):+.2f} ms "
                            "from the direct commit (target within 2 ms)"
                        )
                    print(f"[{kind}] load_table of {args.snapshots} snapshots", flush=True)
                    identifier = long_history_table(direct, warehouse, args.snapshots)
                    loads = load_latency(direct, rest, identifier, args.loads)
                    d = loads["direct"]
                    for path, what in (
                        ("rest cold", "a client new to the table"),
                        ("rest", "a client reloading it (304)"),
                    ):
                        r = loads[path]
                        rows.append(
                            f"| {kind} | load_table, {args.snapshots:,} snapshots, {what} "
                            f"| {_ms(d):.1f} ms (p90 {_ms(d, 90):.1f}) "
                            f"| {_ms(r):.1f} ms (p90 {_ms(r, 90):.1f}) | {_ms(r) / _ms(d):.2f}x |"
                        )
                    target = _fresh_table(direct, "load_target")
                    for _ in range(3):
                        target.append(ROWS)
                    for raw in (False, True):
                        print(f"[{kind}] load_table throughput (raw={raw})", flush=True)
                        rate = load_throughput(url, args.clients, args.seconds, raw)
                        what = "raw GET of the route (httpx)" if raw else "RestCatalog.load_table"
                        rows.append(
                            f"| {kind} | load_table calls/s, {args.clients} client processes: "
                            f"{what} | | {rate:,.0f} /s | |"
                        )
                        if not raw:
                            targets.append(
                                f"- {kind}, load_table through the server: {rate:,.0f} calls/s "
                                f"with {args.clients} client processes on the same cores "
                                "(target >= 500)"
                            )
    elapsed = time.monotonic() - started
    lines = header("The REST catalog (`frazil serve`)", "benches/bench_rest.py")
    lines += environment_lines(
        (load_before, os.getloadavg()),
        [
            f"starlette {version('starlette')}, uvicorn {version('uvicorn')}, "
            f"httpx {version('httpx')}, psycopg {version('psycopg')}",
        ],
    )
    lines += [
        f"- {args.commits} timed commits a kind and path, in interleaved blocks of {args.block}; "
        f"{args.loads} timed loads a path; throughput over {args.seconds:g} s; "
        f"run took {elapsed / 60:.0f} min",
        "",
        "| catalog | operation | direct (SqlCatalog) | through frazil serve (RestCatalog) "
        "| difference |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "### Against the targets (medians)",
        "",
        *targets,
        "",
        "### Method",
        "",
        "- `frazil serve` in its own process (one uvicorn worker, httptools, uvloop) over the "
        "SQL catalog; RestCatalog in the bench process; the floor is SqlCatalog on the same "
        "database in the same process (same table API and commit, no HTTP).",
        "- Commits: a metadata-only `set_properties` (on a table without snapshots) and a "
        "10-row `table.append` (on a table gaining a snapshot a commit: the first and the last "
        "50 shown), a table for each kind and path, direct and REST interleaved in blocks; each "
        "from the call to its return (table refreshed, commit reports on); the property's value "
        "and the rows checked afterwards. A REST commit's answer carries the table's whole "
        "metadata, which the server serializes and the client parses: a cost that grows with "
        "the snapshots and that the direct commit does not pay.",
        f"- The long table: one real append, then {args.snapshots:,} snapshots reusing its "
        "manifest list (a linear history with its snapshot log), registered; a load reads the "
        "metadata file only. The server keeps parsed metadata and its JSON; the client parses "
        "the response.",
        f"- Throughput: {args.clients} client processes on the same 2 cores as the server, "
        "each calling `load_table` (or a raw httpx GET of the route) on a 3-snapshot table "
        "without pause.",
        "",
        *how_to_run(
            ".venv/bin/python benches/bench_rest.py",
            ".venv/bin/python benches/bench_rest.py --commits 50 --seconds 3 --no-write",
        ),
        "",
        "Options: `--catalogs sqlite,postgresql`, `--commits N`, `--block N`, `--snapshots N`, "
        "`--loads N`, `--clients N`, `--seconds S`, `--no-write`.",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(RESULTS, MARKERS, text)


if __name__ == "__main__":
    main()
