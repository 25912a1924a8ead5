"""RestCatalog against a scripted server: the /v1/config merge (defaults < client < overrides),
the prefix, the endpoints a server lists (an operation outside them refused locally, naming the
endpoint), the spec's default endpoints, paging, the error model mapped onto frazil's errors,
and load_catalog's type inference."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import frazil
import pytest
from frazil.catalog.rest import RestCatalog
from frazil.errors import (
    BadRequestError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    ServiceFailureError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_stub import Answer, Seen, StubServer, error

FAST = {"rest.client.retry-base-ms": "1"}


class Script:
    """A handler answering /v1/config with ``config`` and other routes from ``routes``
    (``"GET /v1/namespaces"`` -> an Answer or a function of the request)."""

    def __init__(self, config: dict[str, object] | None = None) -> None:
        self.config: dict[str, object] = config or {"defaults": {}, "overrides": {}}
        self.routes: dict[str, object] = {}

    def __call__(self, seen: Seen) -> Answer:
        if seen.path == "/v1/config":
            return Answer(200, self.config)
        answer = self.routes.get(f"{seen.method} {seen.path}")
        if answer is None:
            return error(404, "NotFoundException", f"no route {seen.method} {seen.path}")
        if callable(answer):
            result = answer(seen)
            assert isinstance(result, Answer)
            return result
        assert isinstance(answer, Answer)
        return answer


@pytest.fixture
def script() -> Iterator[tuple[Script, StubServer]]:
    handler = Script()
    with StubServer(handler) as server:
        yield handler, server


def test_config_merge_and_prefix(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.config = {
        "defaults": {"a": "default", "b": "default", "c": "default"},
        "overrides": {"c": "override", "prefix": "wh1"},
    }
    handler.routes["GET /v1/wh1/namespaces"] = Answer(200, {"namespaces": [["x"]]})
    catalog = RestCatalog("r", uri=server.uri, warehouse="my-warehouse", b="client", c="client")
    assert catalog.properties["a"] == "default"
    assert catalog.properties["b"] == "client"
    assert catalog.properties["c"] == "override"
    # A REST warehouse is the server's name for it, sent as given (not made a local path).
    assert catalog.properties["warehouse"] == "my-warehouse"
    assert server.requests[0].query == {"warehouse": "my-warehouse"}
    assert catalog.list_namespaces() == [("x",)]
    assert server.requests[-1].path == "/v1/wh1/namespaces"


KEYS = st.sampled_from(["k1", "k2", "k3", "k4"])
VALUES = st.text(alphabet="abc", min_size=1, max_size=3)


@settings(max_examples=30)
@given(
    st.dictionaries(KEYS, VALUES),
    st.dictionaries(KEYS, VALUES),
    st.dictionaries(KEYS, VALUES),
)
def test_config_precedence(
    defaults: dict[str, str], client: dict[str, str], overrides: dict[str, str]
) -> None:
    handler = Script({"defaults": defaults, "overrides": overrides})
    with StubServer(handler) as server:
        catalog = RestCatalog("r", uri=server.uri, **client)
    for key in ("k1", "k2", "k3", "k4"):
        expected = overrides.get(key, client.get(key, defaults.get(key)))
        assert catalog.properties.get(key) == expected


def test_override_of_uri_is_used(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    with StubServer(lambda seen: Answer(200, {"namespaces": [["moved"]]})) as other:
        handler.config = {"defaults": {}, "overrides": {"uri": other.uri}}
        catalog = RestCatalog("r", uri=server.uri)
        assert catalog.list_namespaces() == [("moved",)]
    assert other.requests[0].path == "/v1/namespaces"


def test_endpoint_not_listed_is_refused_locally(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.config = {
        "defaults": {},
        "overrides": {},
        "endpoints": ["GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}"],
    }
    catalog = RestCatalog("r", uri=server.uri)
    before = len(server.requests)
    with pytest.raises(
        UnsupportedOperationError, match=re.escape("POST /v1/{prefix}/namespaces")
    ) as e:
        catalog.create_namespace("db")
    assert "create namespace 'db'" in str(e.value)
    with pytest.raises(
        UnsupportedOperationError,
        match=re.escape("GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"),
    ):
        catalog.load_table("db.t")
    assert len(server.requests) == before  # nothing was sent


def test_default_endpoints_without_a_list(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.routes["GET /v1/namespaces/db/tables/t"] = error(
        404, "NoSuchTableException", "Table does not exist: db.t"
    )
    catalog = RestCatalog("r", uri=server.uri)
    # HEAD is not among the spec's defaults: existence is checked by a load.
    assert not catalog.table_exists("db.t")
    assert server.requests[-1].method == "GET"
    # Nor are views, unless view-endpoints-supported says so (Java's rule).
    with pytest.raises(
        UnsupportedOperationError, match=re.escape("GET /v1/{prefix}/namespaces/{namespace}/views")
    ):
        catalog.list_views("db")
    handler.routes["GET /v1/namespaces/db/views"] = Answer(200, {"identifiers": []})
    with_views = RestCatalog("r", uri=server.uri, **{"view-endpoints-supported": "true"})
    assert with_views.list_views("db") == []


def test_head_used_when_listed(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.config = {"endpoints": ["HEAD /v1/{prefix}/namespaces/{namespace}"]}
    handler.routes["HEAD /v1/namespaces/a%1Fb"] = Answer(204)
    catalog = RestCatalog("r", uri=server.uri)
    assert catalog.namespace_exists(("a", "b"))
    assert not catalog.namespace_exists("zz")
    assert [r.method for r in server.requests[1:]] == ["HEAD", "HEAD"]


def test_paging_follows_next_page_token(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    pages = {
        "": Answer(
            200, {"identifiers": [{"namespace": ["db"], "name": "a"}], "next-page-token": "p2"}
        ),
        "p2": Answer(
            200, {"identifiers": [{"namespace": ["db"], "name": "b"}], "next-page-token": "p3"}
        ),
        "p3": Answer(
            200, {"identifiers": [{"namespace": ["db"], "name": "c"}], "next-page-token": None}
        ),
    }
    handler.routes["GET /v1/namespaces/db/tables"] = lambda seen: pages[seen.query["pageToken"]]
    catalog = RestCatalog("r", uri=server.uri, **{"rest-page-size": "1"})
    assert catalog.list_tables("db") == [("db", "a"), ("db", "b"), ("db", "c")]
    queries = [r.query for r in server.requests[1:]]
    assert queries == [
        {"pageToken": "", "pageSize": "1"},
        {"pageToken": "p2", "pageSize": "1"},
        {"pageToken": "p3", "pageSize": "1"},
    ]


def test_nested_namespaces_parent_param(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.routes["GET /v1/namespaces"] = lambda seen: Answer(
        200, {"namespaces": [[*seen.query["parent"].split("\x1f"), "c"]]}
    )
    catalog = RestCatalog("r", uri=server.uri)
    assert catalog.list_namespaces(("a", "b")) == [("a", "b", "c")]
    assert "parent=a%1Fb" in server.requests[-1].raw_path


def test_error_model_mapped_with_names(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    handler.routes["GET /v1/namespaces/db/tables/t"] = error(
        404, "NoSuchTableException", "Table does not exist: db.t"
    )
    handler.routes["POST /v1/namespaces"] = error(
        409, "AlreadyExistsException", "Namespace already exists: db"
    )
    handler.routes["DELETE /v1/namespaces/db"] = error(
        409, "NamespaceNotEmptyException", "Namespace db is not empty"
    )
    handler.routes["GET /v1/namespaces/nope"] = error(
        404, "NoSuchNamespaceException", "Namespace does not exist: nope"
    )
    handler.routes["POST /v1/namespaces/db/tables"] = error(
        409, "AlreadyExistsException", "Table already exists: db.t"
    )
    handler.routes["POST /v1/namespaces/db/properties"] = error(
        400, "BadRequestException", "Malformed request"
    )
    handler.routes["GET /v1/namespaces/boom"] = Answer(502, b"<html>bad gateway</html>")
    catalog = RestCatalog("r", uri=server.uri, **FAST, **{"rest.client.max-retries": "1"})
    with pytest.raises(NoSuchTableError, match=r"load table 'db\.t': Table does not exist: db\.t"):
        catalog.load_table("db.t")
    with pytest.raises(NamespaceAlreadyExistsError, match="create namespace 'db'"):
        catalog.create_namespace("db")
    with pytest.raises(NamespaceNotEmptyError, match="drop namespace 'db'"):
        catalog.drop_namespace("db")
    with pytest.raises(NoSuchNamespaceError, match="load namespace 'nope'"):
        catalog.load_namespace_properties("nope")
    import pyarrow as pa

    with pytest.raises(TableAlreadyExistsError, match=r"create table 'db\.t'"):
        catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    with pytest.raises(BadRequestError, match="Malformed request"):
        catalog.update_namespace_properties("db", updates={"a": "1"})
    with pytest.raises(ServiceFailureError, match="bad gateway"):
        catalog.load_namespace_properties("boom")


def test_retry_through_the_catalog(script: tuple[Script, StubServer]) -> None:
    handler, server = script
    answers = [Answer(503), Answer(429, headers={"Retry-After": "0"})]
    handler.routes["GET /v1/namespaces"] = lambda seen: (
        answers.pop(0) if answers else Answer(200, {"namespaces": [["db"]]})
    )
    catalog = RestCatalog("r", uri=server.uri, **FAST)
    assert catalog.list_namespaces() == [("db",)]
    assert len(server.paths("GET")) == 4  # config + 3 tries


def test_refused_configurations(script: tuple[Script, StubServer]) -> None:
    _, server = script
    with pytest.raises(ValidationError, match="needs a 'uri'"):
        RestCatalog("r")
    with pytest.raises(ValidationError, match="not an http"):
        RestCatalog("r", uri="thrift://x")
    with pytest.raises(ValidationError, match="snapshot-loading-mode"):
        RestCatalog("r", uri=server.uri, **{"snapshot-loading-mode": "refs"})
    with pytest.raises(ValidationError, match="rest-page-size"):
        RestCatalog("r", uri=server.uri, **{"rest-page-size": "0"})


def test_load_catalog_infers_rest(
    script: tuple[Script, StubServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, server = script
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("FRAZIL_CONFIG", raising=False)
    catalog = frazil.load_catalog("prod", uri=server.uri, warehouse="wh")
    assert isinstance(catalog, RestCatalog) and catalog.properties["warehouse"] == "wh"
    assert isinstance(frazil.load_catalog("prod", type="rest", uri=server.uri), RestCatalog)
    # pyiceberg's nested YAML (ssl: {client: ...}) flattens to dotted properties.
    config = tmp_path / "frazil.yaml"
    config.write_text(
        "catalog:\n  prod:\n"
        f"    uri: {server.uri}\n"
        "    header:\n      X-Tenant: t1\n"
        "    rest:\n      sigv4-enabled: false\n"
    )
    monkeypatch.setenv("FRAZIL_CONFIG", str(config))
    catalog = frazil.load_catalog("prod")
    assert isinstance(catalog, RestCatalog)
    assert catalog.properties["header.X-Tenant"] == "t1"
    assert catalog.properties["rest.sigv4-enabled"] == "false"
    catalog.namespace_exists("db")
    assert server.requests[-1].headers["X-Tenant"] == "t1"
