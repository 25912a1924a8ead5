"""``frazil serve``: the command starts a server on the configured catalog (its --json line
says where), answers the REST protocol, and refuses a non-loopback address without auth."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "frazil.yaml"
    config.write_text(
        "catalog:\n"
        "  lake:\n"
        f"    uri: sqlite:///{tmp_path / 'lake.db'}\n"
        f"    warehouse: {tmp_path / 'wh'}\n"
    )
    python_path = [str(Path(__file__).parents[3] / "python"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "FRAZIL_CONFIG": str(config), "PYTHONPATH": os.pathsep.join(python_path)}


def test_serve_answers_with_a_token(tmp_path: Path) -> None:
    port = _free_port()
    env = {**_env(tmp_path), "FRAZIL_SERVE_TOKEN": "tok"}
    command = [
        sys.executable,
        "-m",
        "frazil.cli",
        "--catalog",
        "lake",
        "serve",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(
        [*command, "--json", "--log-level", "warning"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = json.loads(server.stdout.readline())
        assert line == {"catalog": "lake", "url": f"http://127.0.0.1:{port}", "auth": True}
        base = line["url"]
        deadline = time.monotonic() + 30
        while True:
            try:
                config = httpx.get(f"{base}/v1/config")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        assert config.status_code == 200
        assert httpx.get(f"{base}/v1/namespaces").status_code == 401
        auth = {"Authorization": "Bearer tok"}
        created = httpx.post(f"{base}/v1/namespaces", json={"namespace": ["db"]}, headers=auth)
        assert created.status_code == 200, created.text
        listed = httpx.get(f"{base}/v1/namespaces", headers=auth).json()
        assert listed["namespaces"] == [["db"]]
    finally:
        server.terminate()
        server.wait(20)


def test_serve_refuses_a_public_address_without_auth(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "frazil.cli", "--catalog", "lake", "serve", "--host", "0.0.0.0"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "refusing to serve 0.0.0.0 without authentication" in done.stderr
