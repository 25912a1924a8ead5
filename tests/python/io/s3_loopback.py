"""The moto server the io tests run against (started by conftest.py)."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"
REGION = "us-east-1"


@dataclass(frozen=True)
class Moto:
    endpoint: str

    @property
    def properties(self) -> dict[str, str]:
        """FileIO properties (pyiceberg's names) that reach this server."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
            # A failing test should fail, not back off for minutes.
            "s3.retry.num-retries": "1",
        }

    def client(self, service: str = "s3", **credentials: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=credentials.get("key", ACCESS_KEY),
            aws_secret_access_key=credentials.get("secret", SECRET_KEY),
        )

    def set_auth(self, enforce: bool) -> None:
        """Turns moto's IAM checks on (every later request needs valid
        credentials) or off (moto's default)."""
        count = b"0" if enforce else b"inf"
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=count,
            method="POST",
            # Not form-encoded: moto reads the raw body.
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def running_moto(log_dir: Path, tls: tuple[Path, Path, Path] | None = None) -> Iterator[str]:
    """moto's server on 127.0.0.1 and a free port, waited for and stopped at the end; yields
    its endpoint. ``tls``: (CA, certificate, key) files for an ``https://`` endpoint."""
    port = free_port()
    env = {
        **os.environ,
        # Credentials of the surrounding environment must not leak into tests.
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": REGION,
    }
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    context = None
    if tls is not None:
        ca, cert, key = tls
        command += ["-c", str(cert), "-k", str(key)]
        context = ssl.create_default_context(cafile=str(ca))
    # The server logs every request: to a file, never to a pipe nobody drains (a full pipe
    # blocks the server mid-request once 64 KiB are logged).
    log_path = log_dir / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                output = log_path.read_text(errors="replace")
                raise RuntimeError(f"moto server exited ({process.returncode}): {output}")
            try:
                with urllib.request.urlopen(
                    f"{endpoint}/moto-api/data.json", timeout=2, context=context
                ):
                    break
            except (urllib.error.URLError, OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start within 60 s") from None
                time.sleep(0.1)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
