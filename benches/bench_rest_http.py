"""The REST catalog client's HTTP library: per-call overhead of a GET on loopback with
keep-alive, ``requests`` against ``httpx`` (and ``urllib3``, which requests sits on, as the
floor), to choose the library frazil.catalog.rest._http uses.

The server runs in its own process (the stdlib's threaded HTTP/1.1 server answering a small
JSON body, keep-alive) so that the figures are the client's: wall time per call and the
client process's CPU time per call. Each contender makes ``--calls`` GETs on one keep-alive
connection per round, in interleaved rounds (the order rotated each round); the figures are
min and median over rounds. ``frazil`` is frazil's own HttpClient (httpx inside, plus its
retry and header handling).

    python benches/bench_rest_http.py [--calls 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _report import header, how_to_run, interleaved, load_text, machine_line, version, write_section

_SERVER = r"""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
BODY = json.dumps({"namespaces": [["db"], ["other"]], "next-page-token": None}).encode()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else headers and body wait out a delayed ACK (40 ms)
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


@dataclass
class Timed:
    name: str
    call: Callable[[str], object]
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def contenders() -> list[Timed]:
    import httpx
    import requests
    import urllib3

    # Neither library reads proxies or .netrc from the environment (frazil's client does not:
    # the catalog's properties say where to go), which requests otherwise does on every call.
    session = requests.Session()
    session.trust_env = False
    client = httpx.Client(trust_env=False)
    pool = urllib3.PoolManager()

    from frazil.catalog.rest._http import HttpClient

    frazil_client = HttpClient({"uri": "http://127.0.0.1"})

    def with_requests(url: str) -> object:
        response = session.get(url)
        return response.json()

    def with_httpx(url: str) -> object:
        return client.get(url).json()

    def with_urllib3(url: str) -> object:
        return pool.request("GET", url).json()

    def with_frazil(url: str) -> object:
        return frazil_client.request("GET", url).json()

    return [
        Timed("requests", with_requests),
        Timed("httpx", with_httpx),
        Timed("urllib3", with_urllib3),
        Timed("frazil HttpClient (httpx)", with_frazil),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print, do not edit RESULTS.md")
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/v1/namespaces"
        every = contenders()
        for contender in every:  # warm up: connections open, code paths hot
            for _ in range(200):
                contender.call(url)
        load_before = os.getloadavg()
        started = time.monotonic()
        for contender, _ in interleaved(every, ["get"], args.rounds, started):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(args.calls):
                contender.call(url)
            contender.times.append((time.perf_counter() - wall) / args.calls)
            contender.cpu.append((time.process_time() - cpu) / args.calls)
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait()

    def us(seconds: float) -> str:
        return f"{seconds * 1e6:.0f} us"

    lines = [
        *header(
            "REST client HTTP library (GET on loopback, keep-alive)", "benches/bench_rest_http.py"
        ),
        machine_line(load_text(load_before), load_text(load_after)),
        f"- Python {sys.version.split()[0]}; requests {version('requests')}, httpx "
        f"{version('httpx')}, urllib3 {version('urllib3')}",
        "",
        f"{args.calls} GETs of a 60-byte JSON body per round on one keep-alive connection, "
        f"{args.rounds} interleaved rounds; the server is the stdlib's threaded HTTP/1.1 server "
        "in another process. Per call: min (median) over rounds.",
        "",
        "| client | wall per call | client CPU per call |",
        "|---|---|---|",
    ]
    for c in every:
        lines.append(
            f"| {c.name} | {us(min(c.times))} ({us(statistics.median(c.times))}) "
            f"| {us(min(c.cpu))} ({us(statistics.median(c.cpu))}) |"
        )
    lines += ["", *how_to_run(".venv/bin/python benches/bench_rest_http.py")]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(
            Path(__file__).with_name("RESULTS.md"),
            ("<!-- bench_rest_http:begin -->", "<!-- bench_rest_http:end -->"),
            text,
        )


if __name__ == "__main__":
    main()
