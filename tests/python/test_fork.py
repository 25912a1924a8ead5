"""Transforms keep working in a forked child (the PySpark worker scenario).

PySpark forks its Python workers from a daemon that may already have used
frazil. Worker threads do not survive a fork, so a thread pool inherited from
the parent would hang the child forever; frazil must build a fresh one.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pyarrow as pa
import pytest
from frazil.transforms import bucket, truncate

TIMEOUT_SECONDS = 120

pytestmark = [
    # Forking a process that runs threads is exactly the scenario under test.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


def _wait(pid: int) -> int:
    """Waits for the child, killing it after TIMEOUT_SECONDS; returns its wait status."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child hung for {TIMEOUT_SECONDS}s using threads=2")
        time.sleep(0.05)


def test_threads_in_a_forked_child() -> None:
    values = pa.array([None if i % 5 == 0 else i * 1_000_003 for i in range(400_000)], pa.int64())
    expected = bucket(values, 16, threads=1)
    # The parent builds its pool first, as a PySpark daemon would.
    assert bucket(values, 16, threads=2).equals(expected)
    expected_truncate = truncate(values, 1000, threads=1)
    assert truncate(values, 1000, threads=2).equals(expected_truncate)

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            same = bucket(values, 16, threads=2).equals(expected)
            same = same and truncate(values, 1000, threads=2).equals(expected_truncate)
            same = same and bucket(values, 16, threads=0).equals(expected)
            code = 0 if same else 2
        except BaseException:
            code = 3
        finally:
            # Leave without running pytest's (the parent's) cleanup.
            os._exit(code)
    status = _wait(pid)
    assert os.WIFEXITED(status), f"child ended abnormally (wait status {status})"
    assert os.WEXITSTATUS(status) == 0, "child got a wrong result (2) or an error (3)"
    # The parent's pool still works after the fork.
    assert bucket(values, 16, threads=2).equals(expected)
