"""Fixtures of the REST server tests: catalogs (the SQLite SQL catalog, the file-system
catalog), and Starlette test clients of :func:`frazil.rest.server.app` over them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from frazil.catalog import Catalog
from frazil.catalog.sql import SqlCatalog
from frazil.rest.server import app
from rest_helpers import TestClient, make_catalog


@pytest.fixture(params=["sqlite", "filesystem"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    return make_catalog(request.param, tmp_path, request)


@pytest.fixture
def sql_catalog(tmp_path: Path) -> SqlCatalog:
    cat = make_catalog("sqlite", tmp_path)
    assert isinstance(cat, SqlCatalog)
    return cat


ClientFactory = Callable[..., TestClient]


@pytest.fixture
def make_client() -> Iterator[ClientFactory]:
    clients: list[TestClient] = []

    def make(catalog: Catalog, **options: Any) -> TestClient:
        client = TestClient(app(catalog, **options), raise_server_exceptions=False)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(catalog: Catalog, make_client: ClientFactory) -> TestClient:
    return make_client(catalog)
