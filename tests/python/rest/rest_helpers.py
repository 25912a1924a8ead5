"""Helpers of the REST server tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog

with warnings.catch_warnings():
    # Starlette 1.10 prefers httpx2 for its test client; httpx still works.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

__all__ = ["OPENAPI", "SCHEMA", "TestClient", "error_of", "make_catalog"]

OPENAPI = Path(__file__).parent / "data" / "rest-catalog-open-api.yaml"

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False},
        {"id": 2, "name": "name", "type": "string", "required": False},
    ],
}


def make_catalog(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest | None = None
) -> Catalog:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir(exist_ok=True)
    if kind == "sqlite":
        return SqlCatalog(
            "test", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=str(warehouse)
        )
    if kind == "filesystem":
        return FileSystemCatalog("test", warehouse=str(warehouse))
    assert kind == "postgresql" and request is not None
    uri = request.getfixturevalue("postgres_uri")
    return SqlCatalog(f"test-{uuid.uuid4().hex[:8]}", uri=uri, warehouse=str(warehouse))


def error_of(response: Any, code: int, type_name: str | None = None) -> str:
    """The message of an ErrorModel response, checked: status ``code``, the body's own code,
    and (when given) its type."""
    assert response.status_code == code, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    if type_name is not None:
        assert error["type"] == type_name, error
    assert "stack" not in error
    return str(error["message"])
