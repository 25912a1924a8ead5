"""Reading manifests from S3 does not hold the GIL while it waits.

The reads go through a proxy in front of moto that runs in this process, as
Python threads, and holds every request for a while before forwarding it. If
a read held the GIL while waiting for its response, the proxy could never
answer (the read would time out and fail), and a Python thread counting in
the background would stand still. Both must keep running.
"""

from __future__ import annotations

import http.client
import http.server
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from frazil import manifest as m
from frazil.io import FileIO
from s3_loopback import Moto

DELAY_SECONDS = 0.4

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
SPEC = {"spec-id": 0, "fields": []}


class _SlowProxy(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.upstream = urllib.parse.urlsplit(upstream).netloc
        self.requests = 0


class _Forward(http.server.BaseHTTPRequestHandler):
    server: _SlowProxy

    def _forward(self) -> None:
        self.server.requests += 1
        time.sleep(DELAY_SECONDS)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        upstream = http.client.HTTPConnection(self.server.upstream, timeout=30)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
        finally:
            upstream.close()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_PUT = _forward

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture()
def slow_proxy(moto_server: Moto) -> Iterator[_SlowProxy]:
    proxy = _SlowProxy(moto_server.endpoint)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join()


def _ticks_during(call: Callable[[], Any]) -> tuple[Any, int, float]:
    """Runs ``call`` while another Python thread counts; returns its result,
    how far the count got meanwhile, and how long the call took."""
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)  # let the counter start
        before = ticks
        start = time.monotonic()
        result = call()
        elapsed = time.monotonic() - start
        during = ticks - before
    finally:
        stop.set()
        counter.join()
    return result, during, elapsed


def test_manifest_reads_from_s3_release_the_gil(
    moto_server: Moto, bucket: str, slow_proxy: _SlowProxy
) -> None:
    direct = FileIO(moto_server.properties)
    root = f"s3://{bucket}/t/metadata"
    rows = [
        m.write_manifest(
            f"{root}/m{i}.avro",
            [
                {
                    "status": 1,
                    "snapshot_id": 5,
                    "data_file": {
                        "content": 0,
                        "file_path": f"s3://{bucket}/t/data/{i}.parquet",
                        "file_format": "PARQUET",
                        "partition": {},
                        "record_count": i + 1,
                        "file_size_in_bytes": 10,
                    },
                }
            ],
            schema=SCHEMA,
            spec=SPEC,
            snapshot_id=5,
            io=direct,
        )
        for i in range(3)
    ]
    m.write_manifest_list(f"{root}/snap-5.avro", rows, snapshot_id=5, sequence_number=1, io=direct)

    port = slow_proxy.server_address[1]
    slow = FileIO(
        {
            **moto_server.properties,
            "s3.endpoint": f"http://127.0.0.1:{port}",
            # Held the GIL, the proxy could never answer: fail, do not hang.
            "s3.request-timeout": "20",
            "s3.retry.num-retries": "0",
        }
    )
    reads: list[Callable[[], Any]] = [
        lambda: m.read_manifest(f"{root}/m0.avro", io=slow),
        lambda: m.read_manifests(m.read_manifest_list(f"{root}/snap-5.avro", io=direct), io=slow),
        lambda: m.read_manifest_list(f"{root}/snap-5.avro", io=slow),
        lambda: slow.read(f"{root}/m1.avro"),
    ]
    # How fast the counter runs while this thread waits without the GIL. A
    # call that holds the GIL lets it run for a switch interval (5 ms) at most.
    _, ticks, elapsed = _ticks_during(lambda: time.sleep(DELAY_SECONDS))
    free_rate = ticks / elapsed
    for read in reads:
        served = slow_proxy.requests
        result, ticks, elapsed = _ticks_during(read)
        assert result is not None
        assert slow_proxy.requests > served, "the read did not go through the proxy"
        assert elapsed >= DELAY_SECONDS
        assert ticks / elapsed > free_rate / 4, (
            f"the counting thread nearly stood still: {ticks} ticks in {elapsed:.2f}s, "
            f"against {free_rate:.0f}/s while sleeping"
        )

    tables = m.read_manifests(m.read_manifest_list(f"{root}/snap-5.avro", io=slow), io=slow)
    records = [
        t.column("data_file").combine_chunks().field("record_count").to_pylist() for t in tables
    ]
    assert records == [[1], [2], [3]]
