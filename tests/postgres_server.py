"""A PostgreSQL server for the test session (``postgres_uri``, used by the catalog tests and the
Java interop tests): Debian's ``postgresql`` (tests/run installs it), initialised with initdb
and started with pg_ctl in a temporary directory on a free loopback port, stopped at the end.
initdb refuses to run as root, so as root the server runs as a system user made for it."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_USER = "frazil-pg"


class PostgresError(RuntimeError):
    """PostgreSQL is missing, or initdb or pg_ctl failed (with their output and the log's tail)."""


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise PostgresError("PostgreSQL is not installed (tests/run installs Debian's postgresql)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_user() -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
        )
    return ["runuser", "-u", PG_USER, "--"]


@contextlib.contextmanager
def running_postgres() -> Iterator[str]:
    """A fresh PostgreSQL server (fsync off: a throwaway cluster) on a free loopback port, as
    a connection URI; stopped and removed on exit. Also used by benches/bench_rest.py."""
    bin_dir = _pg_bin()
    prefix = _as_user()
    root = Path(tempfile.mkdtemp(prefix="frazil-pg-"))
    if prefix:
        shutil.chown(root, PG_USER, PG_USER)
    data, log = root / "data", root / "server.log"
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise PostgresError(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}\n{tail}")

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    server = running_postgres()
    try:
        uri = server.__enter__()
    except PostgresError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield uri
    finally:
        server.__exit__(None, None, None)
