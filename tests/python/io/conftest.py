"""A real S3 API on loopback: moto's server, started once per test session.

The server runs as a subprocess on 127.0.0.1 with a free port, is waited for,
and is stopped when the session ends. Tests get a fresh bucket each.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from s3_loopback import Moto, running_moto


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Moto]:
    with running_moto(tmp_path_factory.mktemp("moto")) as endpoint:
        yield Moto(endpoint)


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
