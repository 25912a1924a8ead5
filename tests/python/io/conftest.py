"""A real S3 API on loopback: moto's server, started once per test session.

The server runs as a subprocess on 127.0.0.1 with a free port, is waited for,
and is stopped when the session ends. Tests get a fresh bucket each.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from s3_loopback import ACCESS_KEY, REGION, SECRET_KEY, Moto


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Moto]:
    port = _free_port()
    env = {
        **os.environ,
        # Credentials of the surrounding environment must not leak into tests.
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": REGION,
    }
    # The server logs every request: to a file, never to a pipe nobody drains
    # (a full pipe blocks the server mid-request once 64 KiB are logged).
    log_path = tmp_path_factory.mktemp("moto") / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                output = log_path.read_text(errors="replace")
                raise RuntimeError(f"moto server exited ({process.returncode}): {output}")
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start within 60 s") from None
                time.sleep(0.1)
        yield Moto(endpoint)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture()
def bucket(moto_server: Moto) -> str:
    """A new, empty bucket."""
    name = f"b-{uuid.uuid4().hex[:16]}"
    moto_server.client().create_bucket(Bucket=name)
    return name


@pytest.fixture(autouse=True)
def _no_ambient_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    # FileIO falls back to AWS_* variables for what properties leave out; the
    # tests configure everything through properties.
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
