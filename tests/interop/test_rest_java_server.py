"""The reference REST catalog server (tests/interop/_java_rest.py, rest_java/
ReferenceRestServer.java) proven with raw HTTP, route by route against the OpenAPI of Iceberg
1.10.2 (open-api/rest-catalog-open-api.yaml), then used by another REST client (pyiceberg's
RestCatalog) for a table it creates, appends to and reads back.

Every test works in its own namespace of the shared session server; the tests needing another
configuration (bearer token, prefix) start their own server."""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.parse
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _java_rest import JavaRestServer, Response, http_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.interop

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
    ],
}


def _q(name: str) -> str:
    """One path segment, percent-encoded as the OpenAPI expects (``+`` too)."""
    return urllib.parse.quote(name, safe="")


def _ns_path(*levels: str) -> str:
    # Multi-level namespaces join their levels with the unit separator (OpenAPI: %1F).
    return "%1F".join(_q(level) for level in levels)


def _fresh_namespace(server: JavaRestServer, **properties: str) -> str:
    name = f"ns_{uuid.uuid4().hex[:10]}"
    answer = server.request(
        "POST", "/v1/namespaces", {"namespace": [name], "properties": properties}
    )
    assert answer.status == 200, answer.body
    return name


def _create_table(server: JavaRestServer, ns: str, name: str, **extra: Any) -> dict[str, Any]:
    body = {"name": name, "schema": SCHEMA, "properties": {"format-version": "2"}, **extra}
    answer = server.request("POST", f"/v1/namespaces/{_q(ns)}/tables", body)
    assert answer.status == 200, answer.body
    created: dict[str, Any] = answer.json()
    return created


def _table_path(ns: str, name: str) -> str:
    return f"/v1/namespaces/{_q(ns)}/tables/{_q(name)}"


def _error(answer: Response, status: int, type_: str) -> str:
    """Assert an IcebergErrorResponse (OpenAPI ErrorModel) and return its message."""
    assert answer.status == status, (answer.status, answer.body)
    assert answer.headers.get("content-type") == "application/json"
    body = answer.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert error["type"] == type_, error
    assert error["code"] == status
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error.get("stack", []), list)
    message: str = error["message"]
    return message


def _set_properties(
    server: JavaRestServer, ns: str, name: str, table_uuid: str, **props: str
) -> Response:
    body = {
        "requirements": [{"type": "assert-table-uuid", "uuid": table_uuid}],
        "updates": [{"action": "set-properties", "updates": props}],
    }
    return server.request("POST", _table_path(ns, name), body)


def _add_column(name: str, field_id: int) -> dict[str, Any]:
    """A commit adding one column, valid only on schema 0 (assert-current-schema-id)."""
    column = {"id": field_id, "name": name, "required": False, "type": "int"}
    schema = {**SCHEMA, "schema-id": 1, "fields": [*SCHEMA["fields"], column]}
    return {
        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
        "updates": [
            {"action": "add-schema", "schema": schema, "last-column-id": field_id},
            {"action": "set-current-schema", "schema-id": -1},
        ],
    }


def test_config_advertises_every_route(java_rest_server: JavaRestServer) -> None:
    answer = java_rest_server.request("GET", "/v1/config")
    assert answer.status == 200
    config = answer.json()
    assert config["defaults"] == {} and config["overrides"] == {}
    endpoints = set(config["endpoints"])
    for expected in (
        "GET /v1/{prefix}/namespaces",
        "HEAD /v1/{prefix}/namespaces/{namespace}",
        "POST /v1/{prefix}/namespaces/{namespace}/properties",
        "POST /v1/{prefix}/namespaces/{namespace}/tables",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
        "POST /v1/{prefix}/tables/rename",
        "POST /v1/{prefix}/transactions/commit",
        "POST /v1/{prefix}/namespaces/{namespace}/views",
        "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/views/rename",
    ):
        assert expected in endpoints
    assert len(endpoints) == 24  # every /v1/{prefix} route of ReferenceRestServer


def test_namespaces(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server, owner="frazil", stage="one")
    path = f"/v1/namespaces/{_q(ns)}"

    again = server.request("POST", "/v1/namespaces", {"namespace": [ns]})
    assert "already exists" in _error(again, 409, "AlreadyExistsException")
    assert server.request("HEAD", path).status == 204
    assert server.request("HEAD", "/v1/namespaces/nope_" + ns).status == 404

    loaded = server.request("GET", path).json()
    assert loaded["namespace"] == [ns]
    assert loaded["properties"]["owner"] == "frazil"
    assert loaded["properties"]["location"] == f"{server.warehouse}/{ns}"

    update = {"updates": {"stage": "two", "new": "x"}, "removals": ["owner", "absent"]}
    answer = server.request("POST", f"{path}/properties", update).json()
    assert sorted(answer["updated"]) == ["new", "stage"]
    assert answer["removed"] == ["owner"] and answer["missing"] == ["absent"]
    properties = server.request("GET", path).json()["properties"]
    assert properties["stage"] == "two" and "owner" not in properties

    # Children and paging (CatalogHandlers' offset page tokens).
    for child in ("a", "b", "c"):
        created = server.request("POST", "/v1/namespaces", {"namespace": [ns, child]})
        assert created.status == 200, created.body
    parent = _ns_path(ns)
    listed = server.request("GET", f"/v1/namespaces?parent={parent}").json()
    assert sorted(listed["namespaces"]) == [[ns, "a"], [ns, "b"], [ns, "c"]]
    pages: list[list[str]] = []
    token = ""
    while True:
        page = server.request(
            "GET", f"/v1/namespaces?parent={parent}&pageSize=2&pageToken={token}"
        ).json()
        pages.append(page["namespaces"])
        token = page.get("next-page-token")
        if token is None:
            break
    assert [len(p) for p in pages] == [2, 1]
    assert sorted(n for p in pages for n in p) == sorted(listed["namespaces"])
    nested = server.request("GET", f"/v1/namespaces/{_ns_path(ns, 'b')}").json()
    assert nested["namespace"] == [ns, "b"]

    _create_table(server, ns, "t")
    not_empty = server.request("DELETE", path)
    assert "not empty" in _error(not_empty, 409, "NamespaceNotEmptyException")
    assert server.request("DELETE", _table_path(ns, "t")).status == 204
    for child in ("a", "b", "c"):
        assert server.request("DELETE", f"/v1/namespaces/{_ns_path(ns, child)}").status == 204
    assert server.request("DELETE", path).status == 204
    _error(server.request("GET", path), 404, "NoSuchNamespaceException")
    _error(server.request("DELETE", path), 404, "NoSuchNamespaceException")


def test_create_load_commit_and_conflict(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    created = _create_table(server, ns, "events")
    metadata = created["metadata"]
    location = created["metadata-location"]
    assert metadata["format-version"] == 2
    assert metadata["schemas"][0]["fields"] == SCHEMA["fields"]
    assert metadata["location"] == f"{server.warehouse}/{ns}/events"
    assert Path(location).is_file() and location.startswith(metadata["location"] + "/metadata/")
    # The raw local file system: no .crc files beside the metadata.
    assert not list(Path(metadata["location"]).rglob("*.crc"))

    loaded = server.request("GET", _table_path(ns, "events"))
    assert loaded.status == 200
    assert loaded.json()["metadata-location"] == location
    assert loaded.json()["metadata"]["table-uuid"] == metadata["table-uuid"]
    assert server.request("HEAD", _table_path(ns, "events")).status == 204
    again = server.request(
        "POST", f"/v1/namespaces/{_q(ns)}/tables", {"name": "events", "schema": SCHEMA}
    )
    _error(again, 409, "AlreadyExistsException")

    committed = _set_properties(server, ns, "events", metadata["table-uuid"], owner="frazil")
    assert committed.status == 200, committed.body
    after = committed.json()
    assert after["metadata"]["properties"]["owner"] == "frazil"
    assert after["metadata-location"] != location
    assert after["metadata"]["metadata-log"][-1]["metadata-file"] == location
    reloaded = server.request("GET", _table_path(ns, "events")).json()
    assert reloaded["metadata-location"] == after["metadata-location"]

    wrong_uuid = _set_properties(server, ns, "events", str(uuid.uuid4()), owner="other")
    assert "UUID does not match" in _error(wrong_uuid, 409, "CommitFailedException")

    # Two writers from the same base: the first wins, the second's requirement fails.
    first = server.request("POST", _table_path(ns, "events"), _add_column("extra", 3))
    assert first.status == 200, first.body
    assert first.json()["metadata"]["current-schema-id"] == 1
    second = server.request("POST", _table_path(ns, "events"), _add_column("other", 3))
    assert "current schema changed" in _error(second, 409, "CommitFailedException")
    final = server.request("GET", _table_path(ns, "events")).json()["metadata"]
    assert [f["name"] for f in final["schemas"][-1]["fields"]] == ["id", "data", "extra"]
    assert final["properties"]["owner"] == "frazil"


def test_etag_and_not_modified(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    created = server.request(
        "POST", f"/v1/namespaces/{_q(ns)}/tables", {"name": "t", "schema": SCHEMA}
    )
    etag = created.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 2
    loaded = server.request("GET", _table_path(ns, "t"))
    assert loaded.headers["etag"] == etag
    same = server.request("GET", _table_path(ns, "t"), headers={"If-None-Match": etag})
    assert same.status == 304 and same.body == b"" and same.headers["etag"] == etag
    other = server.request("GET", _table_path(ns, "t"), headers={"If-None-Match": '"x"'})
    assert other.status == 200

    table_uuid = created.json()["metadata"]["table-uuid"]
    committed = _set_properties(server, ns, "t", table_uuid, k="v")
    assert committed.headers["etag"] not in ("", etag)
    after = server.request("GET", _table_path(ns, "t"), headers={"If-None-Match": etag})
    assert after.status == 200 and after.headers["etag"] == committed.headers["etag"]
    assert after.json()["metadata"]["properties"]["k"] == "v"


def test_concurrent_commits_one_wins(java_rest_server: JavaRestServer) -> None:
    """Writers racing from one base: exactly one commit lands, the others get 409 (no SQLite
    busy errors, no lost update)."""
    server = java_rest_server
    ns = _fresh_namespace(server)
    _create_table(server, ns, "race")
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(
            pool.map(
                lambda i: server.request("POST", _table_path(ns, "race"), _add_column(f"c{i}", 3)),
                range(6),
            )
        )
    statuses = sorted(a.status for a in answers)
    assert statuses == [200, 409, 409, 409, 409, 409], [a.body[:300] for a in answers]
    [winner] = [a for a in answers if a.status == 200]
    column = winner.json()["metadata"]["schemas"][-1]["fields"][-1]["name"]
    final = server.request("GET", _table_path(ns, "race")).json()["metadata"]
    assert final["schemas"][-1]["fields"][-1]["name"] == column
    assert len(final["schemas"]) == 2


def test_missing_things_are_404(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    missing = server.request("GET", _table_path(ns, "nope"))
    message = _error(missing, 404, "NoSuchTableException")
    assert "nope" in message
    assert server.request("HEAD", _table_path(ns, "nope")).status == 404
    assert server.request("HEAD", _table_path(ns, "nope")).body == b""
    commit = _set_properties(server, ns, "nope", str(uuid.uuid4()), a="b")
    _error(commit, 404, "NoSuchTableException")
    _error(server.request("DELETE", _table_path(ns, "nope")), 404, "NoSuchTableException")
    _error(
        server.request("GET", "/v1/namespaces/absent_ns/tables"), 404, "NoSuchNamespaceException"
    )
    _error(
        server.request("POST", "/v1/namespaces/absent_ns/tables", {"name": "t", "schema": SCHEMA}),
        404,
        "NoSuchNamespaceException",
    )
    register = {"name": "t", "metadata-location": "/nowhere/00000-x.metadata.json"}
    _error(
        server.request("POST", "/v1/namespaces/absent_ns/register", register),
        404,
        "NoSuchNamespaceException",
    )
    assert server.request("HEAD", "/v1/namespaces/absent_ns").status == 404
    _error(server.request("GET", f"/v1/namespaces/{_q(ns)}/views/nope"), 404, "NoSuchViewException")


def test_bad_requests_are_400(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    no_route = server.request("GET", "/v1/namespaces/a/b/c/d")
    assert "No route" in _error(no_route, 400, "BadRequestException")
    malformed = server.request("POST", f"/v1/namespaces/{_q(ns)}/tables", b"{not json")
    assert "createTable" in _error(malformed, 400, "BadRequestException")
    no_body = server.request("POST", "/v1/namespaces", b"")
    _error(no_body, 400, "BadRequestException")
    no_schema = server.request("POST", f"/v1/namespaces/{_q(ns)}/tables", {"name": "t"})
    _error(no_schema, 400, "IllegalArgumentException")
    unknown_update = server.request(
        "POST",
        _table_path(ns, "t"),
        {"requirements": [], "updates": [{"action": "no-such-action"}]},
    )
    # MetadataUpdateParser throws UnsupportedOperationException: 406, as in Iceberg's adapter.
    assert "no-such-action" in _error(unknown_update, 406, "UnsupportedOperationException")
    bad_page = server.request("GET", "/v1/namespaces?pageSize=many")
    _error(bad_page, 400, "NumberFormatException")


def test_stage_create_then_commit(java_rest_server: JavaRestServer) -> None:
    """The staged create of Java's RESTSessionCatalog.createTransaction: the server answers the
    metadata it would create without creating anything; the client commits it with an
    assert-create requirement."""
    server = java_rest_server
    ns = _fresh_namespace(server)
    staged = _create_table(server, ns, "staged", **{"stage-create": True})
    assert staged.get("metadata-location") is None
    md = staged["metadata"]
    assert server.request("HEAD", _table_path(ns, "staged")).status == 404

    updates = [
        {"action": "assign-uuid", "uuid": md["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": md["format-version"]},
        {"action": "add-schema", "schema": md["schemas"][0], "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": md["partition-specs"][0]},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": md["sort-orders"][0]},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": md["location"]},
        {"action": "set-properties", "updates": md["properties"]},
    ]
    body = {"requirements": [{"type": "assert-create"}], "updates": updates}
    answer = server.request("POST", _table_path(ns, "staged"), body)
    assert answer.status == 200, answer.body
    assert answer.json()["metadata"]["table-uuid"] == md["table-uuid"]
    assert Path(answer.json()["metadata-location"]).is_file()
    assert server.request("HEAD", _table_path(ns, "staged")).status == 204
    # A second create of the same table: the assert-create requirement fails.
    again = server.request("POST", _table_path(ns, "staged"), body)
    assert "already exists" in _error(again, 409, "CommitFailedException")
    # Staging in a namespace that does not exist: 404 (OpenAPI createTable).
    absent = server.request(
        "POST",
        "/v1/namespaces/absent_ns/tables",
        {"name": "t", "schema": SCHEMA, "stage-create": True},
    )
    _error(absent, 404, "NoSuchNamespaceException")


def test_list_rename_drop_purge_register(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    for name in ("t1", "t2", "t3"):
        _create_table(server, ns, name)
    listed = server.request("GET", f"/v1/namespaces/{_q(ns)}/tables").json()
    assert sorted(i["name"] for i in listed["identifiers"]) == ["t1", "t2", "t3"]
    assert all(i["namespace"] == [ns] for i in listed["identifiers"])
    page = server.request("GET", f"/v1/namespaces/{_q(ns)}/tables?pageSize=2").json()
    assert len(page["identifiers"]) == 2 and page["next-page-token"] == "2"

    rename = {
        "source": {"namespace": [ns], "name": "t1"},
        "destination": {"namespace": [ns], "name": "renamed"},
    }
    assert server.request("POST", "/v1/tables/rename", rename).status == 204
    _error(server.request("GET", _table_path(ns, "t1")), 404, "NoSuchTableException")
    assert server.request("GET", _table_path(ns, "renamed")).status == 200
    _error(server.request("POST", "/v1/tables/rename", rename), 404, "NoSuchTableException")
    clash = {"source": rename["destination"], "destination": {"namespace": [ns], "name": "t2"}}
    _error(server.request("POST", "/v1/tables/rename", clash), 409, "AlreadyExistsException")

    # Drop without purge keeps the files, so the table can be registered again.
    location = server.request("GET", _table_path(ns, "t2")).json()["metadata-location"]
    assert server.request("DELETE", _table_path(ns, "t2")).status == 204
    assert Path(location).is_file()
    register = {"name": "back", "metadata-location": location}
    registered = server.request("POST", f"/v1/namespaces/{_q(ns)}/register", register)
    assert registered.status == 200, registered.body
    assert registered.json()["metadata-location"] == location
    assert server.request("GET", _table_path(ns, "back")).json()["metadata-location"] == location
    taken = server.request("POST", f"/v1/namespaces/{_q(ns)}/register", register)
    _error(taken, 409, "AlreadyExistsException")

    # Purge deletes the table's files (CatalogUtil.dropTableData).
    purged = server.request("GET", _table_path(ns, "t3")).json()["metadata-location"]
    answer = server.request("DELETE", _table_path(ns, "t3") + "?purgeRequested=true")
    assert answer.status == 204
    assert not Path(purged).exists()


def test_transaction_commits_both_tables_or_neither(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    uuids = {name: _create_table(server, ns, name)["metadata"]["table-uuid"] for name in "ab"}

    def change(name: str, table_uuid: str, **props: str) -> dict[str, Any]:
        return {
            "identifier": {"namespace": [ns], "name": name},
            "requirements": [{"type": "assert-table-uuid", "uuid": table_uuid}],
            "updates": [{"action": "set-properties", "updates": props}],
        }

    both = {"table-changes": [change("a", uuids["a"], k="1"), change("b", uuids["b"], k="1")]}
    answer = server.request("POST", "/v1/transactions/commit", both)
    assert answer.status == 204, answer.body
    for name in "ab":
        props = server.request("GET", _table_path(ns, name)).json()["metadata"]["properties"]
        assert props["k"] == "1"

    # The second change's requirement fails: neither table moves.
    before = server.request("GET", _table_path(ns, "a")).json()["metadata-location"]
    failing = {
        "table-changes": [change("a", uuids["a"], k="2"), change("b", str(uuid.uuid4()), k="2")]
    }
    _error(server.request("POST", "/v1/transactions/commit", failing), 409, "CommitFailedException")
    after = server.request("GET", _table_path(ns, "a")).json()
    assert after["metadata-location"] == before and after["metadata"]["properties"]["k"] == "1"

    # One table named twice: its changes apply in order.
    twice = {"table-changes": [change("a", uuids["a"], x="1"), change("a", uuids["a"], y="2")]}
    assert server.request("POST", "/v1/transactions/commit", twice).status == 204
    props = server.request("GET", _table_path(ns, "a")).json()["metadata"]["properties"]
    assert props["x"] == "1" and props["y"] == "2"

    missing = {"table-changes": [change("nope", uuids["a"], k="3")]}
    _error(server.request("POST", "/v1/transactions/commit", missing), 404, "NoSuchTableException")
    empty = server.request("POST", "/v1/transactions/commit", {"table-changes": []})
    _error(empty, 400, "IllegalArgumentException")


def test_views(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    version = {
        "version-id": 1,
        "timestamp-ms": int(time.time() * 1000),
        "schema-id": 0,
        "summary": {"engine-name": "frazil-test"},
        "representations": [{"type": "sql", "sql": "SELECT 1 AS id", "dialect": "spark"}],
        "default-namespace": [ns],
    }
    body = {"name": "v", "schema": SCHEMA, "view-version": version, "properties": {"p": "1"}}
    created = server.request("POST", f"/v1/namespaces/{_q(ns)}/views", body)
    assert created.status == 200, created.body
    view = created.json()
    assert Path(view["metadata-location"]).is_file()
    assert view["metadata"]["format-version"] == 1
    versions = {v["version-id"]: v for v in view["metadata"]["versions"]}
    [representation] = versions[view["metadata"]["current-version-id"]]["representations"]
    assert representation["sql"] == "SELECT 1 AS id"

    loaded = server.request("GET", f"/v1/namespaces/{_q(ns)}/views/v")
    assert loaded.status == 200
    assert loaded.json()["metadata-location"] == view["metadata-location"]
    assert server.request("HEAD", f"/v1/namespaces/{_q(ns)}/views/v").status == 204
    listed = server.request("GET", f"/v1/namespaces/{_q(ns)}/views").json()
    assert listed["identifiers"] == [{"namespace": [ns], "name": "v"}]
    _error(
        server.request("POST", f"/v1/namespaces/{_q(ns)}/views", body),
        409,
        "AlreadyExistsException",
    )

    replace = {
        "requirements": [{"type": "assert-view-uuid", "uuid": view["metadata"]["view-uuid"]}],
        "updates": [{"action": "set-properties", "updates": {"p": "2"}}],
    }
    replaced = server.request("POST", f"/v1/namespaces/{_q(ns)}/views/v", replace)
    assert replaced.status == 200, replaced.body
    assert replaced.json()["metadata"]["properties"]["p"] == "2"

    rename = {
        "source": {"namespace": [ns], "name": "v"},
        "destination": {"namespace": [ns], "name": "w"},
    }
    assert server.request("POST", "/v1/views/rename", rename).status == 204
    assert server.request("DELETE", f"/v1/namespaces/{_q(ns)}/views/w").status == 204
    _error(server.request("GET", f"/v1/namespaces/{_q(ns)}/views/w"), 404, "NoSuchViewException")


def test_metrics_and_credentials(java_rest_server: JavaRestServer) -> None:
    server = java_rest_server
    ns = _fresh_namespace(server)
    _create_table(server, ns, "t")
    report = {
        "report-type": "scan-report",
        "table-name": f"{ns}.t",
        "snapshot-id": 1,
        "filter": True,
        "schema-id": 0,
        "projected-field-ids": [1],
        "projected-field-names": ["id"],
        "metrics": {},
    }
    metrics = server.request("POST", _table_path(ns, "t") + "/metrics", report)
    assert metrics.status == 204 and metrics.body == b""
    # Java accepts a report type it does not know (ReportMetricsRequest.unknown()), not a
    # request without one.
    unknown = server.request("POST", _table_path(ns, "t") + "/metrics", {"report-type": "x"})
    assert unknown.status == 204
    untyped = server.request("POST", _table_path(ns, "t") + "/metrics", {"table-name": "t"})
    assert "report-type" in _error(untyped, 400, "IllegalArgumentException")
    credentials = server.request("GET", _table_path(ns, "t") + "/credentials")
    assert credentials.status == 200 and credentials.json() == {"storage-credentials": []}
    _error(
        server.request("GET", _table_path(ns, "nope") + "/credentials"),
        404,
        "NoSuchTableException",
    )


def test_faults_and_request_log(java_rest: JavaRestServer) -> None:
    server = java_rest
    ns = _fresh_namespace(server)
    created = _create_table(server, ns, "t")
    path = _table_path(ns, "t")
    assert [r["operation"] for r in server.requests()] == ["createNamespace", "createTable"]
    try:
        server.add_fault(operation="loadTable", path=f"/{ns}/tables/t$", status=503)
        _error(server.request("GET", path), 503, "ServiceUnavailableException")
        assert server.request("GET", path).status == 200  # times=1: spent

        # "after": the commit happens, its answer is an error (a lost response).
        server.add_fault(operation="updateTable", status=502, when="after")
        lost = _set_properties(server, ns, "t", created["metadata"]["table-uuid"], lost="yes")
        _error(lost, 502, "BadGatewayException")
        props = server.request("GET", path).json()["metadata"]["properties"]
        assert props["lost"] == "yes"

        server.add_fault(method="GET", path=f"/{ns}/tables/t$", status=0)
        with pytest.raises((http.client.HTTPException, ConnectionError, urllib.error.URLError)):
            server.request("GET", path)

        server.add_fault(operation="loadTable", delay_ms=300, times=-1)
        started = time.monotonic()
        assert server.request("GET", path).status == 200
        assert time.monotonic() - started >= 0.3
        assert [f["remaining"] for f in server.faults()] == [-1]

        bad = http_request("POST", server.url("/_test/faults"), {"when": "later", "status": 500})
        assert bad.status == 400
    finally:
        server.clear_faults()
    assert server.faults() == []
    answered = [(r["operation"], r["status"]) for r in server.requests()]
    assert ("loadTable", 503) in answered and ("updateTable", 502) in answered
    assert ("loadTable", 0) in answered  # the dropped connection

    server.clear_requests()
    server.request("GET", path, headers={"X-Probe": "1"})
    [logged] = server.requests()
    assert logged["operation"] == "loadTable" and logged["method"] == "GET"
    assert logged["path"] == path and logged["status"] == 200
    assert logged["headers"]["x-probe"] == "1"


def test_bearer_token_and_oauth(
    java_rest_server_factory: Callable[..., JavaRestServer],
) -> None:
    server = java_rest_server_factory(token="s3cr3t", oauth_client="frazil:pa55")
    assert server.request("GET", "/v1/config").status == 200
    none = server.request("GET", "/v1/config", headers={"Authorization": ""})
    assert "no Authorization" in _error(none, 401, "NotAuthorizedException")
    wrong = server.request("GET", "/v1/namespaces", headers={"Authorization": "Bearer nope"})
    _error(wrong, 401, "NotAuthorizedException")
    assert wrong.headers.get("www-authenticate") == "Bearer"

    form = "grant_type=client_credentials&client_id=frazil&client_secret=pa55&scope=catalog"
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""}
    issued = server.request("POST", "/v1/oauth/tokens", form, headers)
    assert issued.status == 200, issued.body
    assert issued.json()["access_token"] == "s3cr3t"
    assert issued.json()["token_type"] == "bearer"
    refused = server.request("POST", "/v1/oauth/tokens", form.replace("pa55", "x"), headers)
    assert refused.status == 401 and refused.json()["error"] == "invalid_client"


def test_prefix_and_configuration(
    java_rest_server_factory: Callable[..., JavaRestServer],
) -> None:
    server = java_rest_server_factory(
        prefix="wh 1",
        config_defaults={"clients": "3"},
        config_overrides={"cache-enabled": "false"},
        table_config={"io.hint": "local"},
    )
    config = server.request("GET", "/v1/config").json()
    assert config["defaults"] == {"clients": "3"}
    assert config["overrides"] == {"cache-enabled": "false", "prefix": "wh 1"}
    answer = server.request("POST", "/v1/wh%201/namespaces", {"namespace": ["p"]})
    assert answer.status == 200, answer.body
    assert server.request("GET", "/v1/wh+1/namespaces").json()["namespaces"] == [["p"]]
    created = server.request(
        "POST", "/v1/wh+1/namespaces/p/tables", {"name": "t", "schema": SCHEMA}
    )
    assert created.json()["config"] == {"io.hint": "local"}
    loaded = server.request("GET", "/v1/wh+1/namespaces/p/tables/t")
    assert loaded.json()["config"] == {"io.hint": "local"}
    _error(server.request("GET", "/v1/namespaces"), 400, "BadRequestException")


NAME_CHARACTERS = "abcXYZ019 -_+%&=~!é"
NAMES = st.text(st.sampled_from(NAME_CHARACTERS), min_size=1, max_size=12).filter(
    lambda s: s.strip() == s
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(namespace=NAMES, table=NAMES)
def test_names_round_trip_through_paths(
    java_rest_server: JavaRestServer, namespace: str, table: str
) -> None:
    """Any namespace and table name, percent-encoded in the path, reaches Java decoded."""
    server = java_rest_server
    ns = f"n{uuid.uuid4().hex[:6]}{namespace}"
    assert server.request("POST", "/v1/namespaces", {"namespace": [ns]}).status == 200
    created = _create_table(server, ns, table)
    assert created["metadata"]["location"].endswith(f"/{ns}/{table}")
    assert server.request("HEAD", _table_path(ns, table)).status == 204
    listed = server.request("GET", f"/v1/namespaces/{_q(ns)}/tables").json()
    assert listed["identifiers"] == [{"namespace": [ns], "name": table}]
    assert server.request("GET", _table_path(ns, table)).status == 200


def test_pyiceberg_writes_and_reads_through_it(java_rest_server: JavaRestServer) -> None:
    from pyiceberg.catalog.rest import RestCatalog

    server = java_rest_server
    catalog = RestCatalog("reference", uri=server.uri)
    ns = f"py_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns, {"owner": "pyiceberg"})
    assert (ns,) in catalog.list_namespaces()
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    table = catalog.create_table(f"{ns}.people", schema=schema)
    rows = pa.table({"id": [3, 1, 2], "name": ["c", "a", None]}, schema=schema)
    table.append(rows)
    table.append(pa.table({"id": [4], "name": ["d"]}, schema=schema))

    reloaded = catalog.load_table(f"{ns}.people")
    got = reloaded.scan().to_arrow().sort_by("id").to_pylist()
    assert got == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
        {"id": 3, "name": "c"},
        {"id": 4, "name": "d"},
    ]
    # Java's side: the commits are the server's metadata, two snapshots, files in the warehouse.
    java_view = server.request("GET", _table_path(ns, "people")).json()
    snapshot = reloaded.current_snapshot()
    assert snapshot is not None
    assert java_view["metadata"]["current-snapshot-id"] == snapshot.snapshot_id
    assert len(java_view["metadata"]["snapshots"]) == 2
    data_files = list((server.warehouse / ns / "people" / "data").glob("*.parquet"))
    assert len(data_files) == 2


def test_pyiceberg_with_oauth_credentials(
    java_rest_server_factory: Callable[..., JavaRestServer],
) -> None:
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import NoSuchTableError

    server = java_rest_server_factory(token="tok-42", oauth_client="client:secret")
    catalog = RestCatalog(
        "reference",
        uri=server.uri,
        credential="client:secret",
        **{"oauth2-server-uri": server.url("/v1/oauth/tokens")},
    )
    catalog.create_namespace("secured")
    with pytest.raises(NoSuchTableError):
        catalog.load_table("secured.nope")
    operations = [r["operation"] for r in server.requests()]
    assert operations[0] == "getToken"
    authorized = [r for r in server.requests() if r["operation"] != "getToken"]
    assert authorized and all(r["headers"]["authorization"] == "Bearer tok-42" for r in authorized)


def test_spark_with_javas_rest_client(spark: Any, java_rest_server: JavaRestServer) -> None:
    """Iceberg Java's own REST client (RESTCatalog in Spark) against the server, and pyiceberg
    reading what Spark wrote through it: two clients agree on what the server serves."""
    from pyiceberg.catalog.rest import RestCatalog

    server = java_rest_server
    name = f"rest{uuid.uuid4().hex[:6]}"
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"spark.sql.catalog.{name}.type", "rest")
    spark.conf.set(f"spark.sql.catalog.{name}.uri", server.uri)
    spark.conf.set(f"spark.sql.catalog.{name}.cache-enabled", "false")
    ns = f"sp_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE NAMESPACE {name}.{ns}")
    spark.sql(f"CREATE TABLE {name}.{ns}.t (id BIGINT, s STRING) USING iceberg")
    spark.sql(f"INSERT INTO {name}.{ns}.t VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"ALTER TABLE {name}.{ns}.t SET TBLPROPERTIES ('by'='spark')")
    spark.sql(f"INSERT INTO {name}.{ns}.t VALUES (3, 'c')")
    rows = [tuple(r) for r in spark.sql(f"SELECT * FROM {name}.{ns}.t ORDER BY id").collect()]
    assert rows == [(1, "a"), (2, "b"), (3, "c")]
    operations = {r["operation"] for r in server.requests()}
    assert {"getConfig", "createNamespace", "createTable", "updateTable", "loadTable"} <= operations

    table = RestCatalog("reference", uri=server.uri).load_table(f"{ns}.t")
    assert table.properties["by"] == "spark"
    got = table.scan().to_arrow().sort_by("id").to_pylist()
    assert got == [{"id": 1, "s": "a"}, {"id": 2, "s": "b"}, {"id": 3, "s": "c"}]
    spark.sql(f"DROP TABLE {name}.{ns}.t PURGE")
    assert server.request("HEAD", _table_path(ns, "t")).status == 404
