"""gs:// and abfs[s]:// reach the endpoint their properties name, and the
store's answers become frazil's errors naming the location.

There is no GCS or Azure emulator among the test dependencies, so a small HTTP
server on loopback stands in: it records each request and answers 404 or 403
(errors no client retries). That checks the property names, the addressing
and the error mapping; reading real objects from these stores is not tested.
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from frazil.errors import NotFoundError, PermissionDeniedError
from frazil.io import FileIO


class _Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Answer)
        self.seen: list[tuple[str, str, str]] = []  # (method, path, authorization)

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


class _Answer(http.server.BaseHTTPRequestHandler):
    server: _Recorder

    def _answer(self) -> None:
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization") or ""))
        status = 403 if "secret" in self.path else 404
        body = b"" if self.command == "HEAD" else b"no"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture()
def recorder() -> Iterator[_Recorder]:
    server = _Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_gcs(recorder: _Recorder) -> None:
    fio = FileIO(
        {
            "gcs.service.host": f"http://{recorder.authority}",
            "gcs.oauth2.token": "token-123",
        }
    )
    missing = "gs://bkt/warehouse/missing/m0.avro"
    with pytest.raises(NotFoundError, match=missing):
        fio.read(missing)
    assert not fio.exists(missing)
    denied = "gs://bkt/warehouse/secret/m1.avro"
    with pytest.raises(PermissionDeniedError, match=denied):
        fio.read(denied)
    methods = {method for method, _, _ in recorder.seen}
    assert methods <= {"GET", "HEAD"}
    assert all("bkt" in path for _, path, _ in recorder.seen)
    # The key travels percent-encoded, each "/" as %2F.
    paths = [urllib.parse.unquote(path) for _, path, _ in recorder.seen]
    assert "/bkt/warehouse/missing/m0.avro" in paths, recorder.seen
    assert all(auth == "Bearer token-123" for _, _, auth in recorder.seen)


@pytest.mark.parametrize("scheme", ["abfs", "abfss"])
def test_azure(recorder: _Recorder, scheme: str) -> None:
    fio = FileIO(
        {
            "adls.blob-storage-authority": recorder.authority,
            "adls.blob-storage-scheme": "http",
            "adls.sas-token": "sv=2024-01-01&sig=abc",
        }
    )
    missing = f"{scheme}://cont@acct.dfs.core.windows.net/wh/missing/m0.avro"
    with pytest.raises(NotFoundError, match=missing):
        fio.read(missing)
    denied = f"{scheme}://cont@acct.dfs.core.windows.net/wh/secret/m1.avro"
    with pytest.raises(PermissionDeniedError, match=denied):
        fio.read(denied)
    paths = [urllib.parse.unquote(path) for _, path, _ in recorder.seen]
    # An authority without a leading dot is an emulator's host: the account is
    # the first path segment (as pyarrow, which pyiceberg hands it to, reads it).
    assert any(p.startswith("/acct/cont/wh/missing/m0.avro?") for p in paths), paths
    # The SAS token's pairs travel as query parameters.
    assert all("sig=abc" in p for p in paths), paths
