"""A bounded schemathesis run from the REST OpenAPI document (Iceberg 1.10.2, tests data):
requests generated from every operation's parameters and body schema, sent to frazil's server
over a SQLite catalog holding a namespace, a table with data, and a view. Whatever the input,
the answer is never a 5xx, and every error has an ErrorModel body (the token endpoint's are
OAuth's). 40 examples per operation keep the run well under a minute (about 25 s on 2 cores)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from frazil.catalog.sql import SqlCatalog
from frazil.rest.server import app
from hypothesis import HealthCheck, Phase, given, settings
from rest_helpers import OPENAPI

schemathesis = pytest.importorskip("schemathesis")

PREFIX = "fz"
EXAMPLES = 40


def _document() -> dict[str, Any]:
    """The OpenAPI document with the catalog routes under the server's prefix (the document's
    ``{prefix}`` is a path parameter: generated freely, it would only ever hit 404s)."""
    raw = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    paths = {}
    for path, item in raw["paths"].items():
        item = dict(item)
        item["parameters"] = [
            parameter
            for parameter in item.get("parameters", [])
            if parameter.get("$ref") != "#/components/parameters/prefix"
        ]
        paths[path.replace("{prefix}", PREFIX)] = item
    raw["paths"] = paths
    raw["servers"] = [{"url": "http://localhost"}]
    return dict(raw)


def _catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("fuzz", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("accounting")
    table = catalog.create_table("accounting.sales", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2, 3]}))
    catalog.create_view("accounting.v", pa.schema([("id", pa.int64())]), "SELECT 1")
    return catalog


DOCUMENT = _document()
OPERATIONS = [
    (method.upper(), path)
    for path, item in DOCUMENT["paths"].items()
    for method in item
    if method in ("get", "post", "put", "delete", "head")
]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Any:
    application = app(
        _catalog(tmp_path_factory.mktemp("fuzz")), prefix=PREFIX, max_body_bytes=1 << 20
    )
    schema = schemathesis.openapi.from_dict(DOCUMENT)
    schema.app = application
    return schema


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_5xx(method: str, path: str, api: Any) -> None:
    operation = api[path][method]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy())
    def check(case: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            response = case.call()
        status = response.status_code
        assert status < 500, (case.method, case.formatted_path, status, response.text)
        if status >= 400 and case.method != "HEAD" and "oauth" not in case.formatted_path:
            body = response.json()
            assert set(body) == {"error"}, response.text
            assert body["error"]["code"] == status

    check()
