"""Fetching manifests: frazil's FileIO (Rust ``object_store`` for S3, ``std::fs``
locally) against ``pyarrow.fs``, from moto's S3 server on loopback and from local disk.

Decides which library serves object stores. ``--manifests`` real manifests
(``--entries`` random entries each, bench_manifest.py's generator) are written
to a local directory and to moto's S3 server, then every reader fetches all of
them, in ``--rounds`` interleaved rounds (each round runs every reader once),
and must return exactly the bytes written:

S3 (``s3://`` through moto, optionally behind a proxy that delays each request
by ``--latency-ms``: moto answers in about a millisecond on loopback, real S3
in tens):

- frazil ``FileIO.read_many``: one call, ``object_store`` on a tokio runtime,
  up to 64 requests in flight, GIL released;
- frazil ``FileIO.read`` on a pool of N Python threads;
- ``pyarrow.fs.S3FileSystem.open_input_file(...).readall()`` on N Python
  threads (how pyiceberg's PyArrowFileIO reads a manifest: a HEAD for the size,
  then a GET);
- ``pyarrow.fs.S3FileSystem.open_input_stream(...).readall()`` on N threads
  (a GET only);
- frazil ``manifest.read_manifests(rows, io=..., threads=2)``: fetch and
  decode, for scale.

Local files: frazil ``read_many(threads=2)``, ``pyarrow.fs.LocalFileSystem``
on N threads, Python's ``open().read()`` in a loop, and ``read_manifests``.

Figures are wall time (median of the rounds) and the CPU time of this process
(all its threads: tokio's, rayon's, Arrow's I/O pool) per round. Run with the
test extra installed (moto[server]) and a release build:

    python benches/bench_io.py [--manifests 200] [--entries 100] [--rounds 5]
        [--threads 8,32] [--latency-ms 0,20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ACCESS_KEY = "bench-key"
SECRET_KEY = "bench-secret"
REGION = "us-east-1"
BUCKET = "bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError(f"{url} did not answer") from None
            time.sleep(0.1)


@contextlib.contextmanager
def started(args: list[str], probe: str) -> Iterator[None]:
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(probe, process)
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)


# The latency proxy: a separate process (so it takes no GIL from the readers)
# that holds every chunk a client sends for the delay before passing it on; an
# HTTP request's head arrives as one chunk, so each request waits that long.


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while data := await reader.read(1 << 16):
            if delay:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _proxy(listen: int, upstream: int, delay: float) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", upstream)
        await asyncio.gather(_pipe(client_r, up_w, delay), _pipe(up_r, client_w, 0))

    server = await asyncio.start_server(handle, "127.0.0.1", listen, backlog=1024)
    async with server:
        await server.serve_forever()


def run_proxy(spec: str) -> None:
    listen, upstream, delay_ms = spec.split(":")
    asyncio.run(_proxy(int(listen), int(upstream), float(delay_ms) / 1000))


class Contender:
    def __init__(self, name: str, fn: Callable[[], list[bytes]]) -> None:
        self.name = name
        self.fn = fn
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, expected: list[bytes]) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        got = self.fn()
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)
        if got != expected:
            raise AssertionError(f"{self.name} read other bytes")


_POOLS: dict[int, ThreadPoolExecutor] = {}


def pooled(n: int, read: Callable[[str], bytes], keys: list[str]) -> Callable[[], list[bytes]]:
    """Reads ``keys`` on a pool of ``n`` Python threads, started once and kept
    (starting threads is not what is measured)."""
    if n not in _POOLS:
        _POOLS[n] = ThreadPoolExecutor(n)
    pool = _POOLS[n]

    def run() -> list[bytes]:
        return list(pool.map(read, keys))

    return run


def measure(title: str, contenders: list[Contender], expected: list[bytes], rounds: int) -> None:
    for c in contenders:  # warm up: connections, credentials, page cache
        c.run(expected)
        c.wall.clear()
        c.cpu.clear()
    for _ in range(rounds):
        for c in contenders:
            c.run(expected)
    total_mb = sum(map(len, expected)) / 1e6
    best = min(statistics.median(c.wall) for c in contenders)
    print(f"\n{title}: {len(expected)} files, {total_mb:.1f} MB, {rounds} rounds")
    print(f"| {'reader':52} | wall ms (median) | files/s | CPU ms | vs fastest |")
    print(f"| {'-' * 52} | ---: | ---: | ---: | ---: |")
    for c in contenders:
        wall = statistics.median(c.wall)
        cpu = statistics.median(c.cpu)
        rate = len(expected) / wall
        print(
            f"| {c.name:52} | {wall * 1e3:.0f} | {rate:,.0f} | {cpu * 1e3:.0f} | "
            f"{wall / best:.2f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--manifests", type=int, default=200)
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default="8,32", help="Python thread-pool sizes")
    parser.add_argument("--latency-ms", default="0,20", help="added to each S3 request")
    parser.add_argument("--proxy", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.proxy:
        run_proxy(args.proxy)
        return

    import pyarrow.fs as pafs
    from bench_manifest import build
    from frazil import manifest as m
    from frazil.io import FileIO

    pools = [int(t) for t in args.threads.split(",")]
    latencies = [float(x) for x in args.latency_ms.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        rows = build(Path(tmp), args.manifests, args.entries, "deflate")
        local_paths = [str(r["manifest_path"]) for r in rows]
        payloads = [Path(p).read_bytes() for p in local_paths]
        sizes = sorted(map(len, payloads))
        print(
            f"{len(rows)} manifests of {args.entries} entries: {sizes[0] / 1e3:.0f}-"
            f"{sizes[-1] / 1e3:.0f} KB (median {statistics.median(sizes) / 1e3:.0f} KB)"
        )

        local = pafs.LocalFileSystem()

        def python_read(path: str) -> bytes:
            with open(path, "rb") as f:
                return f.read()

        def arrow_local(path: str) -> bytes:
            with local.open_input_file(path) as f:
                data: bytes = f.readall()
                return data

        local_io = FileIO()
        tables = m.read_manifests(rows, threads=2)
        entries = sum(t.num_rows for t in tables)

        def decode_local() -> list[bytes]:
            got = m.read_manifests(rows, threads=2)
            assert sum(t.num_rows for t in got) == entries
            return payloads

        contenders = [
            Contender(
                "frazil FileIO.read_many(threads=2) (std::fs)",
                lambda: local_io.read_many(local_paths, threads=2),
            ),
            Contender(
                "Python open().read(), one thread", lambda: [python_read(p) for p in local_paths]
            ),
            Contender(
                "pyarrow.fs.LocalFileSystem, one thread",
                lambda: [arrow_local(p) for p in local_paths],
            ),
        ]
        for n in pools:
            contenders.append(
                Contender(
                    f"pyarrow.fs.LocalFileSystem, {n} Python threads",
                    pooled(n, arrow_local, local_paths),
                )
            )
        contenders.append(
            Contender("frazil read_manifests(threads=2): fetch + decode", decode_local)
        )
        measure("Local files", contenders, payloads, args.rounds)

        moto_port = free_port()
        moto = f"http://127.0.0.1:{moto_port}"
        moto_cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(moto_port)]
        with started(moto_cmd, f"{moto}/moto-api/data.json"):
            properties = {
                "s3.endpoint": moto,
                "s3.access-key-id": ACCESS_KEY,
                "s3.secret-access-key": SECRET_KEY,
                "s3.region": REGION,
                "s3.path-style-access": "true",
            }
            import boto3

            boto3.client(
                "s3",
                endpoint_url=moto,
                region_name=REGION,
                aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY,
            ).create_bucket(Bucket=BUCKET)
            keys = [f"{BUCKET}/warehouse/db/t/metadata/{Path(p).name}" for p in local_paths]
            locations = [f"s3://{k}" for k in keys]
            writer = FileIO(properties)
            for loc, data in zip(locations, payloads, strict=True):
                writer.write(loc, data)
            s3_rows: list[dict[str, Any]] = [
                {**r, "manifest_path": loc} for r, loc in zip(rows, locations, strict=True)
            ]

            for latency in latencies:
                if latency:
                    port = free_port()
                    proxy_cmd = [
                        sys.executable,
                        __file__,
                        "--proxy",
                        f"{port}:{moto_port}:{latency}",
                    ]
                    endpoint = f"http://127.0.0.1:{port}"
                    context: contextlib.AbstractContextManager[None] = started(
                        proxy_cmd, f"{endpoint}/moto-api/data.json"
                    )
                else:
                    endpoint = moto
                    context = contextlib.nullcontext()
                with context:
                    fio = FileIO({**properties, "s3.endpoint": endpoint})
                    s3 = pafs.S3FileSystem(
                        access_key=ACCESS_KEY,
                        secret_key=SECRET_KEY,
                        region=REGION,
                        endpoint_override=endpoint,
                        scheme="http",
                        force_virtual_addressing=False,
                    )

                    def arrow_file(key: str, s3: Any = s3) -> bytes:
                        with s3.open_input_file(key) as f:
                            data: bytes = f.readall()
                            return data

                    def arrow_stream(key: str, s3: Any = s3) -> bytes:
                        with s3.open_input_stream(key) as f:
                            data: bytes = f.readall()
                            return data

                    def decode_s3(fio: FileIO = fio) -> list[bytes]:
                        got = m.read_manifests(s3_rows, threads=2, io=fio)
                        assert sum(t.num_rows for t in got) == entries
                        return payloads

                    contenders = [
                        Contender(
                            "frazil FileIO.read_many (object_store, 64 in flight)",
                            lambda fio=fio: fio.read_many(locations),
                        ),
                    ]
                    for n in pools:
                        contenders.append(
                            Contender(
                                f"frazil FileIO.read, {n} Python threads",
                                pooled(n, fio.read, locations),
                            )
                        )
                    for n in pools:
                        contenders.append(
                            Contender(
                                f"pyarrow.fs open_input_file, {n} Python threads",
                                pooled(n, arrow_file, keys),
                            )
                        )
                    for n in pools:
                        contenders.append(
                            Contender(
                                f"pyarrow.fs open_input_stream, {n} Python threads",
                                pooled(n, arrow_stream, keys),
                            )
                        )
                    contenders.append(
                        Contender(
                            "frazil read_manifests(threads=2, io=): fetch + decode", decode_s3
                        )
                    )
                    measure(
                        f"S3 (moto), +{latency:g} ms a request", contenders, payloads, args.rounds
                    )


if __name__ == "__main__":
    try:
        main()
    finally:
        for pool in _POOLS.values():
            pool.shutdown()
