"""The view routes of frazil's REST server on the SQL catalog (and their 406 on a catalog
without views)."""

from __future__ import annotations

from typing import Any

from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from rest_helpers import SCHEMA, error_of

V = "/v1/namespaces/db/views"
WIDER = {
    **SCHEMA,
    "fields": [*SCHEMA["fields"], {"id": 3, "name": "extra", "type": "int", "required": False}],
}


def _version(sql: str, schema_id: int = 0) -> dict[str, Any]:
    return {
        "version-id": 1,
        "timestamp-ms": 1_700_000_000_000,
        "schema-id": schema_id,
        "summary": {"engine-name": "test"},
        "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}],
        "default-namespace": ["db"],
    }


def _create(client: Any, name: str = "v", sql: str = "SELECT 1") -> dict[str, Any]:
    body = {"name": name, "schema": SCHEMA, "view-version": _version(sql), "properties": {}}
    response = client.post(V, json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_views(sql_catalog: SqlCatalog, make_client: Any) -> None:
    client = make_client(sql_catalog)
    client.post("/v1/namespaces", json={"namespace": ["db"]})
    created = _create(client)
    metadata = created["metadata"]
    assert metadata["versions"][0]["representations"][0]["sql"] == "SELECT 1"
    loaded = client.get(f"{V}/v").json()
    assert loaded["metadata-location"] == created["metadata-location"]
    assert sql_catalog.load_view("db.v").metadata_location == created["metadata-location"]
    assert client.head(f"{V}/v").status_code == 204
    assert client.head(f"{V}/nope").status_code == 404
    error_of(client.get(f"{V}/nope"), 404, "NoSuchViewException")
    assert client.get(V).json()["identifiers"] == [{"namespace": ["db"], "name": "v"}]
    error_of(
        client.post(
            V, json={"name": "v", "schema": SCHEMA, "view-version": _version("x"), "properties": {}}
        ),
        409,
        "AlreadyExistsException",
    )
    # Replace: a new version made current, guarded by assert-view-uuid.
    version = {**_version("SELECT 2"), "version-id": 2, "schema-id": -1}
    commit = {
        "requirements": [{"type": "assert-view-uuid", "uuid": metadata["view-uuid"]}],
        "updates": [
            {"action": "add-schema", "schema": WIDER},
            {"action": "add-view-version", "view-version": version},
            {"action": "set-current-view-version", "view-version-id": -1},
        ],
    }
    response = client.post(f"{V}/v", json=commit)
    assert response.status_code == 200, response.text
    replaced = sql_catalog.load_view("db.v")
    assert replaced.sql() == "SELECT 2"
    assert [f.name for f in replaced.schema().fields] == ["id", "name", "extra"]  # type: ignore[union-attr]
    stale = {**commit, "requirements": [{"type": "assert-view-uuid", "uuid": "0" * 32}]}
    error_of(client.post(f"{V}/v", json=stale), 409, "CommitFailedException")
    table_update = {
        "requirements": [],
        "updates": [{"action": "remove-snapshots", "snapshot-ids": [1]}],
    }
    assert "not a view update" in error_of(client.post(f"{V}/v", json=table_update), 400)
    bad_requirement = {"requirements": [{"type": "assert-create"}], "updates": []}
    error_of(client.post(f"{V}/v", json=bad_requirement), 400)
    rename = {
        "source": {"namespace": ["db"], "name": "v"},
        "destination": {"namespace": ["db"], "name": "w"},
    }
    assert client.post("/v1/views/rename", json=rename).status_code == 204
    assert sql_catalog.view_exists("db.w") and not sql_catalog.view_exists("db.v")
    assert client.delete(f"{V}/w").status_code == 204
    error_of(client.delete(f"{V}/w"), 404, "NoSuchViewException")


def test_views_refused_without_view_support(tmp_path: Any, make_client: Any) -> None:
    catalog = FileSystemCatalog("fs", warehouse=str(tmp_path))
    client = make_client(catalog)
    client.post("/v1/namespaces", json={"namespace": ["db"]})
    error_of(client.get(V), 406, "UnsupportedOperationException")
    error_of(client.get(f"{V}/v"), 406)
