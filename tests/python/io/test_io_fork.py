"""S3 reads keep working in a forked child (the PySpark worker scenario).

The parent has used the FileIO, so its I/O runtime and store clients (with
pooled connections) exist when it forks; the child must build its own rather
than wait forever on threads that did not survive the fork.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest
from frazil.io import FileIO
from s3_loopback import Moto

TIMEOUT_SECONDS = 60

pytestmark = [
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


def test_s3_in_a_forked_child(moto_server: Moto, bucket: str) -> None:
    fio = FileIO(moto_server.properties)
    locations = [f"s3://{bucket}/f/{i}" for i in range(20)]
    for i, loc in enumerate(locations):
        fio.write(loc, str(i).encode())
    expected = [str(i).encode() for i in range(20)]
    assert fio.read_many(locations) == expected

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            same = fio.read_many(locations) == expected
            fio.write(f"s3://{bucket}/from-child", b"child")
            code = 0 if same else 2
        except BaseException:
            code = 3
        os._exit(code)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child hung for {TIMEOUT_SECONDS}s reading S3")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
    assert fio.read(f"s3://{bucket}/from-child") == b"child"
    # The parent's own clients still work.
    assert fio.read_many(locations) == expected
