"""Fetching manifests from S3: frazil's Rust FileIO against pyarrow.fs.

Decides how the planner should fetch manifests. ~200 objects of manifest size
(20-60 KB) are written to moto's S3 server on loopback, then all of them are
read, in interleaved rounds, by:

- frazil ``FileIO.read_many`` (Rust ``object_store`` on a tokio runtime, many
  requests in flight, GIL released), called with ``threads=2``;
- frazil ``FileIO.read`` from a pool of Python threads (one request each);
- ``pyarrow.fs.S3FileSystem`` from a pool of Python threads
  (``open_input_file(...).readall()``, as pyiceberg reads a manifest).

moto answers from Python, so absolute times are dominated by the server; the
comparison shows how well each client overlaps its waits. Run with the test
extra installed (moto[server]) and a built extension:

    python benches/bench_io.py [--objects 200] [--rounds 5] [--threads 2,8,32]
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pyarrow.fs as pafs
from frazil.io import FileIO

ACCESS_KEY = "bench-key"
SECRET_KEY = "bench-secret"
REGION = "us-east-1"
BUCKET = "bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=2):
                return process, endpoint
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("moto server did not start") from None
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default="2,8,32", help="Python thread-pool sizes")
    args = parser.parse_args()
    pools = [int(t) for t in args.threads.split(",")]

    process, endpoint = start_moto()
    try:
        import boto3

        boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        ).create_bucket(Bucket=BUCKET)
        properties = {
            "s3.endpoint": endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
        }
        fio = FileIO(properties)
        rng = random.Random(42)
        sizes = [rng.randrange(20_000, 60_000) for _ in range(args.objects)]
        keys = [f"{BUCKET}/warehouse/db/t/metadata/{i:05}-m0.avro" for i in range(args.objects)]
        payloads = [os.urandom(n) for n in sizes]
        for key, data in zip(keys, payloads, strict=True):
            fio.write(f"s3://{key}", data)
        total_mb = sum(sizes) / 1e6
        locations = [f"s3://{k}" for k in keys]

        s3fs = pafs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
            endpoint_override=endpoint,
            scheme="http",
            force_virtual_addressing=False,
        )

        def frazil_many() -> list[bytes]:
            return fio.read_many(locations, threads=2)

        def frazil_pool(n: int) -> Callable[[], list[bytes]]:
            def run() -> list[bytes]:
                with ThreadPoolExecutor(n) as pool:
                    return list(pool.map(fio.read, locations))

            return run

        def pyarrow_pool(n: int) -> Callable[[], list[bytes]]:
            def read(key: str) -> bytes:
                with s3fs.open_input_file(key) as f:
                    data: bytes = f.readall()
                    return data

            def run() -> list[bytes]:
                with ThreadPoolExecutor(n) as pool:
                    return list(pool.map(read, keys))

            return run

        contenders: dict[str, Callable[[], list[bytes]]] = {
            "frazil read_many (threads=2)": frazil_many,
        }
        for n in pools:
            contenders[f"frazil read, {n} Python threads"] = frazil_pool(n)
        for n in pools:
            contenders[f"pyarrow.fs, {n} Python threads"] = pyarrow_pool(n)

        # Warm up every client (connections, credentials), and check that each
        # contender reads exactly the bytes written.
        for name, fn in contenders.items():
            assert fn() == payloads, name
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)

        print(f"{args.objects} objects, {total_mb:.1f} MB, moto on loopback, {args.rounds} rounds")
        print(f"{'contender':40} {'median s':>9} {'min s':>7} {'MB/s':>7}")
        for name, ts in times.items():
            median = statistics.median(ts)
            print(f"{name:40} {median:9.3f} {min(ts):7.3f} {total_mb / median:7.1f}")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
