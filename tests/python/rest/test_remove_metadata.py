"""remove-schemas and remove-partition-specs through frazil's REST server: the commit Java
1.10.2 sends after expiring snapshots with ``cleanExpiredMetadata(true)`` (its requirements
from ``UpdateRequirements``), the refusal of the current schema and default spec (400, nothing
written), and a stale requirement (409)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import yaml
from frazil.catalog import Catalog
from frazil.errors import InvalidMetadataError
from frazil.table.updates import update_from_json
from frazil.table.view_updates import AddViewVersion
from rest_helpers import OPENAPI, SCHEMA, TestClient, error_of

T = "/v1/namespaces/db/tables"

WIDER = {
    "type": "struct",
    "schema-id": 1,
    "fields": [*SCHEMA["fields"], {"id": 3, "name": "n", "type": "int", "required": False}],  # type: ignore[misc]
}
BUCKETED = {
    "spec-id": 1,
    "fields": [{"source-id": 1, "field-id": 1000, "transform": "bucket[4]", "name": "id_b"}],
}


def _commit(client: TestClient, requirements: list[Any], updates: list[Any]) -> Any:
    return client.post(f"{T}/t", json={"requirements": requirements, "updates": updates})


def _evolved(client: TestClient) -> dict[str, Any]:
    """Table db.t with schemas 0 and 1 and specs 0 and 1, the second of each current."""
    assert client.post("/v1/namespaces", json={"namespace": ["db"]}).status_code == 200
    created = client.post(T, json={"name": "t", "schema": SCHEMA})
    assert created.status_code == 200, created.text
    uuid = created.json()["metadata"]["table-uuid"]
    evolve = [
        {"action": "add-schema", "schema": WIDER},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": BUCKETED},
        {"action": "set-default-spec", "spec-id": -1},
    ]
    response = _commit(client, [{"type": "assert-table-uuid", "uuid": uuid}], evolve)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert [s["schema-id"] for s in body["metadata"]["schemas"]] == [0, 1]
    assert [s["spec-id"] for s in body["metadata"]["partition-specs"]] == [0, 1]
    return body


def test_commit_remove_schemas_and_specs(catalog: Catalog, client: TestClient) -> None:
    before = _evolved(client)
    rows = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": ["a", "b", "c"],
            "n": pa.array([10, 20, 30], pa.int32()),
        }
    )
    catalog.load_table("db.t").append(rows)
    loaded = client.get(f"{T}/t").json()
    uuid = loaded["metadata"]["table-uuid"]
    # What Java's RemoveSnapshots commits through a REST catalog with cleanExpiredMetadata(true)
    # when no retained snapshot uses schema 0 or spec 0.
    requirements = [
        {"type": "assert-table-uuid", "uuid": uuid},
        {"type": "assert-default-spec-id", "default-spec-id": 1},
        {"type": "assert-current-schema-id", "current-schema-id": 1},
    ]
    updates = [
        {"action": "remove-partition-specs", "spec-ids": [0]},
        {"action": "remove-schemas", "schema-ids": [0]},
    ]
    response = _commit(client, requirements, updates)
    assert response.status_code == 200, response.text
    done = response.json()
    metadata = done["metadata"]
    assert [s["schema-id"] for s in metadata["schemas"]] == [1]
    assert [s["spec-id"] for s in metadata["partition-specs"]] == [1]
    assert metadata["current-schema-id"] == 1 and metadata["default-spec-id"] == 1
    assert metadata["last-column-id"] == 3 and metadata["last-partition-id"] == 1000
    # The replaced metadata file is logged, as for any other commit.
    assert metadata["metadata-log"][-1]["metadata-file"] == loaded["metadata-location"]
    assert done["metadata-location"] != loaded["metadata-location"]
    assert done["metadata-location"] != before["metadata-location"]
    # The stored table is the committed one and still reads its rows.
    table = catalog.load_table("db.t")
    assert table.metadata_location == done["metadata-location"]
    assert [s.schema_id for s in table.metadata.schemas] == [1]
    assert [s.spec_id for s in table.metadata.partition_specs] == [1]
    assert table.scan().to_arrow().sort_by("id").equals(rows)
    assert client.get(f"{T}/t").json()["metadata"]["schemas"] == metadata["schemas"]


def test_removing_the_current_schema_or_default_spec_is_a_400(
    catalog: Catalog, client: TestClient
) -> None:
    before = _evolved(client)
    message = error_of(
        _commit(client, [], [{"action": "remove-schemas", "schema-ids": [0, 1]}]),
        400,
        "BadRequestException",
    )
    assert "cannot remove schema 1: it is the table's current schema" in message
    message = error_of(
        _commit(client, [], [{"action": "remove-partition-specs", "spec-ids": [1]}]),
        400,
        "BadRequestException",
    )
    assert "cannot remove partition spec 1: it is the table's default spec" in message
    error_of(_commit(client, [], [{"action": "remove-schemas", "schema-ids": ["0"]}]), 400)
    error_of(_commit(client, [], [{"action": "remove-partition-specs"}]), 400)
    # Nothing was written.
    table = catalog.load_table("db.t")
    assert table.metadata_location == before["metadata-location"]
    assert [s.schema_id for s in table.metadata.schemas] == [0, 1]


def test_a_stale_current_schema_requirement_is_a_409(catalog: Catalog, client: TestClient) -> None:
    before = _evolved(client)
    stale = [{"type": "assert-current-schema-id", "current-schema-id": 0}]
    response = _commit(client, stale, [{"action": "remove-schemas", "schema-ids": [1]}])
    error_of(response, 409, "CommitFailedException")
    assert catalog.load_table("db.t").metadata_location == before["metadata-location"]


def test_every_update_of_the_openapi_document_is_known_but_encryption_keys() -> None:
    # The BaseUpdate discriminator of rest-catalog-open-api.yaml (1.10.2). frazil writes no
    # encrypted tables, so add-encryption-key and remove-encryption-key stay unknown (400).
    document = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    actions = set(document["components"]["schemas"]["BaseUpdate"]["discriminator"]["mapping"])
    assert {"remove-schemas", "remove-partition-specs"} <= actions
    assert AddViewVersion.action in actions  # the registry includes the view updates
    unknown = set()
    for action in sorted(actions):
        try:
            update_from_json({"action": action})
        except InvalidMetadataError as error:  # a missing field, or an unknown action
            if "unknown table update action" in str(error):
                unknown.add(action)
    assert unknown == {"add-encryption-key", "remove-encryption-key"}
