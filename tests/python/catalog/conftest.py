"""Catalog fixtures: SQL catalogs on SQLite and on the session's PostgreSQL server
(``postgres_uri``, tests/postgres_server.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.catalog.sql import SqlCatalog


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    """An in-memory catalog with a namespace ``db``, its files under ``tmp_path``."""
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> SqlCatalog:
    """A fresh SqlCatalog on SQLite or PostgreSQL (one server; a unique catalog name per test
    keeps the tests apart, as Java's catalog_name column does)."""
    warehouse = str(tmp_path / "warehouse")
    if request.param == "sqlite":
        return SqlCatalog("test", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=warehouse)
    uri = request.getfixturevalue("postgres_uri")
    return SqlCatalog(f"test-{uuid.uuid4().hex[:8]}", uri=uri, warehouse=warehouse)
