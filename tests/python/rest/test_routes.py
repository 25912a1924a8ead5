"""Every catalog route of frazil's REST server through Starlette's test client, over the SQLite
SQL catalog and the file-system catalog: config, namespaces, tables, commits, transactions,
metrics and credentials, paging, and the error bodies of bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from rest_helpers import SCHEMA, TestClient, error_of

T = "/v1/namespaces/db/tables"


def _ns(client: TestClient, *levels: str, **props: str) -> None:
    body: dict[str, Any] = {"namespace": list(levels)}
    if props:
        body["properties"] = props
    response = client.post("/v1/namespaces", json=body)
    assert response.status_code == 200, response.text


def _table(client: TestClient, name: str = "t", **extra: Any) -> dict[str, Any]:
    response = client.post(T, json={"name": name, "schema": SCHEMA, **extra})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# --- config -------------------------------------------------------------------------------


def test_config_lists_endpoints(catalog: Catalog, client: TestClient) -> None:
    body = client.get("/v1/config").json()
    assert body["defaults"] == {} and body["overrides"] == {}
    endpoints = set(body["endpoints"])
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in endpoints
    assert "POST /v1/{prefix}/transactions/commit" in endpoints
    views = any("/views" in e for e in endpoints)
    assert views == isinstance(catalog, SqlCatalog)  # the file-system catalog has no views
    assert client.get("/v1/config", params={"warehouse": catalog.name}).status_code == 200
    message = error_of(client.get("/v1/config", params={"warehouse": "other"}), 400)
    assert "unknown warehouse 'other'" in message


def test_prefix_routes(sql_catalog: SqlCatalog, make_client: Any) -> None:
    client = make_client(sql_catalog, prefix="cat")
    assert client.get("/v1/config").json()["overrides"] == {"prefix": "cat"}
    _ns_prefixed = client.post("/v1/cat/namespaces", json={"namespace": ["db"]})
    assert _ns_prefixed.status_code == 200
    assert client.get("/v1/cat/namespaces").json()["namespaces"] == [["db"]]
    error_of(client.get("/v1/namespaces"), 404)
    error_of(client.get("/v1/other/namespaces"), 404)


# --- namespaces ---------------------------------------------------------------------------


def test_namespaces(catalog: Catalog, client: TestClient) -> None:
    sql = isinstance(catalog, SqlCatalog)
    _ns(client, "db", **({"owner": "me"} if sql else {}))
    _ns(client, "db", "inner")
    _ns(client, "other")
    assert client.get("/v1/namespaces").json() == {
        "namespaces": [["db"], ["other"]],
        "next-page-token": None,
    }
    # A nested parent: its levels joined by the unit separator.
    listed = client.get("/v1/namespaces", params={"parent": "db"}).json()["namespaces"]
    assert listed == [["db", "inner"]]
    assert client.get("/v1/namespaces/db%1Finner").json()["namespace"] == ["db", "inner"]
    assert client.head("/v1/namespaces/db%1Finner").status_code == 204
    assert client.head("/v1/namespaces/nope").status_code == 404
    error_of(client.get("/v1/namespaces/nope"), 404, "NoSuchNamespaceException")
    error_of(
        client.get("/v1/namespaces", params={"parent": "nope"}), 404, "NoSuchNamespaceException"
    )
    error_of(
        client.post("/v1/namespaces", json={"namespace": ["db"]}), 409, "AlreadyExistsException"
    )
    # Not empty: a child namespace.
    error_of(client.delete("/v1/namespaces/db"), 409, "NamespaceNotEmptyException")
    assert client.delete("/v1/namespaces/db%1Finner").status_code == 204
    assert client.delete("/v1/namespaces/db").status_code == 204
    assert client.head("/v1/namespaces/db").status_code == 404


def test_namespace_properties(catalog: Catalog, client: TestClient) -> None:
    if isinstance(catalog, FileSystemCatalog):
        _ns(client, "db")
        body = {"updates": {"a": "1"}}
        error_of(
            client.post("/v1/namespaces/db/properties", json=body),
            406,
            "UnsupportedOperationException",
        )
        return
    _ns(client, "db", a="1", b="2")
    props = client.get("/v1/namespaces/db").json()["properties"]
    assert props["a"] == "1" and props["b"] == "2"
    body = {"removals": ["a", "missing"], "updates": {"c": "3"}}
    response = client.post("/v1/namespaces/db/properties", json=body)
    assert response.json() == {"updated": ["c"], "removed": ["a"], "missing": ["missing"]}
    props = client.get("/v1/namespaces/db").json()["properties"]
    assert "a" not in props and props["c"] == "3"
    both = {"removals": ["c"], "updates": {"c": "4"}}
    assert "both removed and set" in error_of(
        client.post("/v1/namespaces/db/properties", json=both), 400
    )


def test_paging(catalog: Catalog, client: TestClient) -> None:
    for name in ("a", "b", "c", "d", "e"):
        _ns(client, name)
    seen: list[list[str]] = []
    token = ""
    pages = 0
    while True:
        body = client.get("/v1/namespaces", params={"pageToken": token, "pageSize": 2}).json()
        seen.extend(body["namespaces"])
        pages += 1
        token = body["next-page-token"]
        if token is None:
            break
        # A namespace added between pages appears in a later page if it sorts after.
        if pages == 1:
            _ns(client, "f")
    assert seen == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    assert pages == 3
    error_of(client.get("/v1/namespaces", params={"pageToken": "!!", "pageSize": 2}), 400)
    error_of(client.get("/v1/namespaces", params={"pageToken": "", "pageSize": 0}), 400)
    # Without a pageToken, everything at once.
    assert len(client.get("/v1/namespaces", params={"pageSize": 1}).json()["namespaces"]) == 6
    # Tables page the same way.
    for name in ("t1", "t2", "t3"):
        client.post("/v1/namespaces/a/tables", json={"name": name, "schema": SCHEMA})
    first = client.get("/v1/namespaces/a/tables", params={"pageToken": "", "pageSize": 2}).json()
    assert [i["name"] for i in first["identifiers"]] == ["t1", "t2"]
    second = client.get(
        "/v1/namespaces/a/tables", params={"pageToken": first["next-page-token"], "pageSize": 2}
    ).json()
    assert second == {"identifiers": [{"namespace": ["a"], "name": "t3"}], "next-page-token": None}


# --- tables -------------------------------------------------------------------------------


def test_create_load_and_exists(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    created = _table(client, properties={"format-version": "3", "owner": "me"})
    assert created["metadata"]["format-version"] == 3
    assert created["metadata"]["properties"]["owner"] == "me"
    assert created["config"] == {}
    loaded = client.get(f"{T}/t")
    assert loaded.json()["metadata-location"] == created["metadata-location"]
    assert loaded.json()["metadata"] == created["metadata"]
    direct = catalog.load_table("db.t")
    assert loaded.json()["metadata-location"] == direct.metadata_location
    # ETag: unchanged metadata is 304 without a body.
    etag = loaded.headers["etag"]
    again = client.get(f"{T}/t", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert client.head(f"{T}/t").status_code == 204
    assert client.head(f"{T}/nope").status_code == 404
    error_of(client.get(f"{T}/nope"), 404, "NoSuchTableException")
    error_of(_post(client, T, {"name": "t", "schema": SCHEMA}), 409, "AlreadyExistsException")
    error_of(
        _post(client, "/v1/namespaces/nope/tables", {"name": "t", "schema": SCHEMA}),
        404,
        "NoSuchNamespaceException",
    )
    error_of(client.get(f"{T}/t", params={"snapshots": "some"}), 400)
    listed = client.get(T).json()
    assert listed == {"identifiers": [{"namespace": ["db"], "name": "t"}], "next-page-token": None}


def _post(client: TestClient, url: str, body: Any) -> Any:
    return client.post(url, json=body)


def test_snapshots_refs_drops_unreferenced_snapshots(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    _table(client)
    table = catalog.load_table("db.t")
    rows = pa.table({"id": pa.array([1], pa.int64()), "name": ["a"]})
    table.append(rows)
    table = catalog.load_table("db.t")
    first = table.current_snapshot()
    assert first is not None
    table.append(rows)
    full = client.get(f"{T}/t").json()["metadata"]
    refs = client.get(f"{T}/t", params={"snapshots": "refs"}).json()["metadata"]
    assert len(full["snapshots"]) == 2
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [full["current-snapshot-id"]]


def test_commit_and_conflicts(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    created = _table(client)
    uuid = created["metadata"]["table-uuid"]
    body = {
        "requirements": [
            {"type": "assert-table-uuid", "uuid": uuid},
            {"type": "assert-current-schema-id", "current-schema-id": 0},
        ],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
    }
    response = client.post(f"{T}/t", json=body)
    assert response.status_code == 200, response.text
    done = response.json()
    assert set(done) == {"metadata-location", "metadata"}
    assert done["metadata"]["properties"]["k"] == "v"
    assert catalog.load_table("db.t").metadata_location == done["metadata-location"]
    assert client.get(f"{T}/t").json()["metadata-location"] == done["metadata-location"]
    # A requirement that no longer holds: 409 CommitFailedException, nothing written.
    stale = {
        "requirements": [
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 123},
        ],
        "updates": [{"action": "set-properties", "updates": {"x": "y"}}],
    }
    message = error_of(client.post(f"{T}/t", json=stale), 409, "CommitFailedException")
    assert "main" in message
    wrong_uuid = {"requirements": [{"type": "assert-table-uuid", "uuid": "0" * 32}], "updates": []}
    error_of(client.post(f"{T}/t", json=wrong_uuid), 409, "CommitFailedException")
    assert "x" not in catalog.load_table("db.t").metadata.properties
    # An update the table's metadata refuses is a 400 (a downgrade).
    down = {
        "requirements": [],
        "updates": [{"action": "upgrade-format-version", "format-version": 1}],
    }
    error_of(client.post(f"{T}/t", json=down), 400)
    # A commit's identifier must be the route's.
    other = {"identifier": {"namespace": ["db"], "name": "u"}, "requirements": [], "updates": []}
    error_of(client.post(f"{T}/t", json=other), 400)
    error_of(client.post(f"{T}/nope", json={"requirements": [], "updates": []}), 404)


def test_stage_create_then_commit_with_assert_create(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    staged = client.post(T, json={"name": "s", "schema": SCHEMA, "stage-create": True})
    assert staged.status_code == 200, staged.text
    result = staged.json()
    assert result["metadata-location"] is None
    assert not catalog.table_exists("db.s")
    metadata = result["metadata"]
    updates = [
        {"action": "assign-uuid", "uuid": metadata["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": metadata["format-version"]},
        {"action": "add-schema", "schema": metadata["schemas"][0]},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": metadata["partition-specs"][0]},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": metadata["sort-orders"][0]},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": metadata["location"]},
        {"action": "set-properties", "updates": {"created-by": "test"}},
    ]
    body = {"requirements": [{"type": "assert-create"}], "updates": updates}
    done = client.post(f"{T}/s", json=body)
    assert done.status_code == 200, done.text
    table = catalog.load_table("db.s")
    assert table.metadata.table_uuid == metadata["table-uuid"]
    assert table.metadata.properties["created-by"] == "test"
    assert table.metadata_location == done.json()["metadata-location"]
    # A second create of the name: 409, the table as it was.
    error_of(client.post(f"{T}/s", json=body), 409)
    assert catalog.load_table("db.s").metadata_location == table.metadata_location


def test_drop_purge_rename_register(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    created = _table(client)
    _table(client, "gone")
    assert client.delete(f"{T}/gone", params={"purgeRequested": "true"}).status_code == 204
    assert not catalog.table_exists("db.gone")
    error_of(client.delete(f"{T}/gone"), 404, "NoSuchTableException")
    error_of(client.delete(f"{T}/t", params={"purgeRequested": "maybe"}), 400)
    rename = {
        "source": {"namespace": ["db"], "name": "t"},
        "destination": {"namespace": ["db"], "name": "t2"},
    }
    if isinstance(catalog, FileSystemCatalog):
        error_of(client.post("/v1/tables/rename", json=rename), 406)
        return
    assert client.post("/v1/tables/rename", json=rename).status_code == 204
    assert catalog.table_exists("db.t2") and not catalog.table_exists("db.t")
    error_of(client.post("/v1/tables/rename", json=rename), 404, "NoSuchTableException")
    # Register the renamed table's metadata under a new name.
    location = created["metadata-location"]
    registered = client.post(
        "/v1/namespaces/db/register", json={"name": "again", "metadata-location": location}
    )
    assert registered.status_code == 200, registered.text
    assert registered.json()["metadata-location"] == location
    error_of(
        client.post(
            "/v1/namespaces/db/register", json={"name": "again", "metadata-location": location}
        ),
        409,
    )


def test_transactions(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    a, b = _table(client, "a"), _table(client, "b")

    def change(name: str, uuid: str, key: str, requirements: Any = None) -> dict[str, Any]:
        return {
            "identifier": {"namespace": ["db"], "name": name},
            "requirements": requirements
            if requirements is not None
            else [{"type": "assert-table-uuid", "uuid": uuid}],
            "updates": [{"action": "set-properties", "updates": {key: "1"}}],
        }

    ua, ub = a["metadata"]["table-uuid"], b["metadata"]["table-uuid"]
    both = {"table-changes": [change("a", ua, "x"), change("b", ub, "y")]}
    if isinstance(catalog, FileSystemCatalog):
        assert "atomically" in error_of(client.post("/v1/transactions/commit", json=both), 406)
        one = {"table-changes": [change("a", ua, "x")]}
        assert client.post("/v1/transactions/commit", json=one).status_code == 204
        return
    assert client.post("/v1/transactions/commit", json=both).status_code == 204
    assert catalog.load_table("db.a").metadata.properties["x"] == "1"
    assert catalog.load_table("db.b").metadata.properties["y"] == "1"
    # The second table's requirement fails: the first is unchanged (atomic).
    before = catalog.load_table("db.a").metadata_location
    failing = {
        "table-changes": [
            change("a", ua, "z"),
            change("b", ub, "w", [{"type": "assert-current-schema-id", "current-schema-id": 9}]),
        ]
    }
    error_of(client.post("/v1/transactions/commit", json=failing), 409, "CommitFailedException")
    assert catalog.load_table("db.a").metadata_location == before
    assert "z" not in catalog.load_table("db.a").metadata.properties
    error_of(client.post("/v1/transactions/commit", json={"table-changes": []}), 400)
    twice = {"table-changes": [change("a", ua, "p"), change("a", ua, "q")]}
    error_of(client.post("/v1/transactions/commit", json=twice), 400)
    no_ident = {"table-changes": [{"requirements": [], "updates": []}]}
    error_of(client.post("/v1/transactions/commit", json=no_ident), 400)


def test_metrics_and_credentials(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    _table(client)
    report = {"report-type": "scan-report", "table-name": "db.t", "snapshot-id": 1}
    assert client.post(f"{T}/t/metrics", json=report).status_code == 204
    error_of(client.post(f"{T}/t/metrics", json={"report-type": "other"}), 400)
    assert client.get(f"{T}/t/credentials").json() == {"storage-credentials": []}
    error_of(client.get(f"{T}/nope/credentials"), 404)


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "non-object"),
        (b'{"requirements": [], "updates": [{"action": "explode"}]}', "unknown table update"),
        (b'{"requirements": [{"type": "assert-nothing"}], "updates": []}', "unknown table req"),
        (b'{"requirements": [], "updates": [{"action": "set-properties"}]}', "missing required"),
        (
            b'{"requirements": [], "updates": [{"action": "set-current-view-version", '
            b'"view-version-id": 1}]}',
            "is a view update",
        ),
        (b'{"updates": []}', "'requirements'"),
        (b'{"requirements": [], "updates": [{"action": "set-location", "location": 5}]}', "5"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_bad_commit_bodies_are_400(
    catalog: Catalog, client: TestClient, body: bytes, needle: str
) -> None:
    _ns(client, "db")
    created = _table(client)
    response = client.post(f"{T}/t", content=body, headers={"Content-Type": "application/json"})
    assert needle in error_of(response, 400, "BadRequestException")
    # Nothing was written, and the server still serves.
    assert client.get(f"{T}/t").json()["metadata-location"] == created["metadata-location"]


@pytest.mark.parametrize(
    "name",
    ["a%2Fb", "..%2F..%2Fetc", "a%00b", "a%5Cb", "%2E%2E", "a.b"],
)
def test_unsafe_names_in_paths_are_400(catalog: Catalog, client: TestClient, name: str) -> None:
    """(A literal ``..`` segment is resolved by the HTTP client before it is sent.)"""
    _ns(client, "db")
    error_of(client.get(f"{T}/{name}"), 400)
    error_of(client.get(f"/v1/namespaces/{name}"), 400)
    error_of(client.get(f"/v1/namespaces/db%1F{name}/tables"), 400)
    # The unit separator splits a namespace, but a table name holding one is refused.
    error_of(client.get(f"{T}/a%1Fb"), 400)


def test_unsafe_names_in_bodies_are_400(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    for name in ("../escape", "a/b", "..", "x\ny", ""):
        error_of(_post(client, T, {"name": name, "schema": SCHEMA}), 400)
        error_of(_post(client, "/v1/namespaces", {"namespace": ["db", name]}), 400)
    assert not any(
        Path(str(catalog.properties.get("warehouse", "/nonexistent"))).parent.glob("escape")
    )


def test_quotes_in_names_are_stored_as_they_are(catalog: Catalog, client: TestClient) -> None:
    _ns(client, "db")
    name = 'it\'s "quoted"; DROP TABLE iceberg_tables; --'
    _table(client, name)
    encoded = "it%27s%20%22quoted%22%3B%20DROP%20TABLE%20iceberg_tables%3B%20--"
    assert client.head(f"{T}/{encoded}").status_code == 204
    assert catalog.table_exists(("db", name))
    assert client.get(T).json()["identifiers"] == [{"namespace": ["db"], "name": name}]


def test_locations_outside_the_warehouse_are_refused(
    catalog: Catalog, client: TestClient, tmp_path: Path
) -> None:
    _ns(client, "db")
    outside = str(tmp_path / "elsewhere")
    sneaky = str(tmp_path / "warehouse" / ".." / "elsewhere")
    for location in (outside, sneaky, "/etc"):
        body = {"name": "t", "schema": SCHEMA, "location": location}
        assert "outside the catalog's warehouse" in error_of(_post(client, T, body), 400)
    props = {"name": "t", "schema": SCHEMA, "properties": {"write.metadata.path": outside}}
    error_of(_post(client, T, props), 400)
    _table(client)
    move = {"requirements": [], "updates": [{"action": "set-location", "location": outside}]}
    error_of(client.post(f"{T}/t", json=move), 400)
    assert not (tmp_path / "elsewhere").exists()


def test_oversized_body_is_413_and_the_server_still_serves(
    sql_catalog: SqlCatalog, make_client: Any
) -> None:
    client = make_client(sql_catalog, max_body_bytes=1000)
    big = {"namespace": ["db"], "properties": {"k": "v" * 2000}}
    message = error_of(client.post("/v1/namespaces", json=big), 413)
    assert "1000 bytes" in message
    # Chunked, without a Content-Length: the limit holds as the body is read.
    chunks = (b'{"namespace": ["db"], "properties": {"k": "' + b"v" * 600, b"v" * 600 + b'"}}')
    response = client.post(
        "/v1/namespaces", content=iter(chunks), headers={"Content-Type": "application/json"}
    )
    error_of(response, 413)
    assert not sql_catalog.namespace_exists("db")
    assert client.post("/v1/namespaces", json={"namespace": ["db"]}).status_code == 200


def test_unknown_routes_and_methods(client: TestClient) -> None:
    error_of(client.get("/v1/nothing"), 404)
    response = client.put("/v1/namespaces")
    error_of(response, 405)
    assert response.headers["allow"] == "GET, POST"
