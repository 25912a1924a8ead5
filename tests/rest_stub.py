"""A scripted HTTP server on loopback for the REST client's tests: each request is recorded and
answered by a handler the test gives (so a test can answer 429, 503, 500, an expired token or
a config of its choosing), or passed on to a real REST server behind it.

    with StubServer(handler) as server:
        catalog = RestCatalog("t", uri=server.uri)
        server.requests  # every request: method, path, query, headers, body
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Seen:
    """A request the stub received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    raw_path: str = ""

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode()))


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Close the connection without answering (a lost connection after the request was sent).
    drop: bool = False

    def encoded(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body).encode()


Handler = Callable[[Seen], Answer]


def error(code: int, kind: str, message: str, **headers: str) -> Answer:
    """An answer with the REST spec's error model (``IcebergErrorResponse``)."""
    return Answer(code, {"error": {"message": message, "type": kind, "code": code}}, headers)


class StubServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 answering with ``handler`` (module docs)."""

    def __init__(self, handler: Handler, tls: Any = None) -> None:
        """``tls``: an ``ssl.SSLContext`` to serve HTTPS with."""
        self.handler = handler
        self._tls = tls
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        stub = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go in separate writes: without TCP_NODELAY the body waits out
            # the client's delayed ACK (40 ms a request).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    dict(parse_qsl(parts.query, keep_blank_values=True)),
                    {k: v for k, v in self.headers.items()},
                    body,
                    raw_path=self.path,
                )
                with stub._lock:
                    stub.requests.append(seen)
                answer = stub.handler(seen)
                if answer.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = answer.encoded()
                self.send_response(answer.status)
                if data:
                    self.send_header("Content-Type", "application/json")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data) if self.command != "HEAD" else 0))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def uri(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{'https' if self._tls is not None else 'http'}://{host}:{port}"

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class ServedApp:
    """An ASGI application (``frazil.rest.server.app(...)``) served by uvicorn on a free
    loopback port in a thread, for the tests' lifetime::

        with ServedApp(app(catalog)) as served:
            RestCatalog("t", uri=served.uri)
    """

    def __init__(self, application: Any) -> None:
        import socket

        import uvicorn

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        config = uvicorn.Config(
            application, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServedApp:
        import time

        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)


def forward(upstream: str, seen: Seen) -> Answer:
    """``seen`` sent on to ``upstream`` as it came (headers, raw path and body), and its
    answer: for a proxy that injects faults in front of a real server."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(upstream)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        headers = {k: v for k, v in seen.headers.items() if k.lower() not in ("host", "connection")}
        connection.request(seen.method, seen.raw_path, body=seen.body or None, headers=headers)
        response = connection.getresponse()
        body = response.read()
        kept = {
            k: v
            for k, v in response.getheaders()
            if k.lower()
            not in ("content-length", "connection", "transfer-encoding", "date", "server")
            and k.lower() != "content-type"
        }
        return Answer(response.status, body, kept)
    finally:
        connection.close()
