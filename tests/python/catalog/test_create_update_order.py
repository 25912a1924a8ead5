"""A create from updates alone (the REST protocol's assert-create commit) in the order DuckDB's
iceberg extension sends them: add-spec and add-sort-order before set-current-schema, which comes
last. Java's TableMetadata builder takes that: built from empty, its current schema id starts at
0 (an unset int), so the spec binds to schema 0. Before any schema 0 there is nothing to bind to,
and a spec naming a column schema 0 lacks is refused, as in Java."""

from __future__ import annotations

import json

import pytest
from frazil.errors import InvalidMetadataError, InvalidUpdateError
from frazil.table._apply import apply_updates_from_empty
from frazil.table.updates import update_from_json

# The updates of DuckDB 1.5.5's `CREATE TABLE c.d.t (id BIGINT, name VARCHAR)` through a REST
# catalog, as it posted them (its debug log), location shortened.
DUCKDB_CREATE = json.loads(
    """[{"action":"assign-uuid","uuid":"a602cb75-9083-4f55-b1ae-2e1d6a35af50"},
    {"action":"upgrade-format-version","format-version":2},
    {"action":"add-schema","last-column-id":2,"schema":{"type":"struct","schema-id":0,
     "fields":[{"id":1,"name":"id","required":false,"type":"long"},
               {"id":2,"name":"name","required":false,"type":"string"}],
     "identifier-field-ids":[]}},
    {"action":"add-spec","spec":{"spec-id":0,"fields":[]}},
    {"action":"set-default-spec","spec-id":0},
    {"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},
    {"action":"set-default-sort-order","sort-order-id":0},
    {"action":"set-location","location":"/warehouse/d/t"},
    {"action":"set-properties","updates":{"write.parquet.compression-codec":"zstd"}},
    {"action":"set-current-schema","schema-id":0}]"""
)


def test_duckdb_create_order() -> None:
    metadata = apply_updates_from_empty([update_from_json(u) for u in DUCKDB_CREATE])
    assert metadata.table_uuid == "a602cb75-9083-4f55-b1ae-2e1d6a35af50"
    assert metadata.current_schema_id == 0
    assert [f.name for f in metadata.schema().fields] == ["id", "name"]
    assert [(s.spec_id, s.fields) for s in metadata.partition_specs] == [(0, ())]
    assert metadata.default_spec_id == 0
    assert metadata.default_sort_order_id == 0
    assert metadata.location == "/warehouse/d/t"


def _with_spec(fields: list[dict[str, object]]) -> list[dict[str, object]]:
    updates = list(DUCKDB_CREATE)
    updates[3] = {"action": "add-spec", "spec": {"spec-id": 0, "fields": fields}}
    return updates


def test_duckdb_partitioned_create_order() -> None:
    """`CREATE TABLE ... PARTITIONED BY (day(ts), bucket(4, id))`: the spec comes before the
    current schema is set, and binds to schema 0."""
    updates = _with_spec(
        [
            {"name": "id_bucket", "transform": "bucket[4]", "source-id": 1, "field-id": 1000},
            {"name": "name_trunc", "transform": "truncate[3]", "source-id": 2, "field-id": 1001},
        ]
    )
    metadata = apply_updates_from_empty([update_from_json(u) for u in updates])
    (spec,) = metadata.partition_specs
    assert [(f.source_id, f.transform) for f in spec.fields] == [
        (1, "bucket[4]"),
        (2, "truncate[3]"),
    ]
    assert metadata.last_partition_id == 1001


def test_spec_before_schema_zero_refused() -> None:
    missing = _with_spec([{"name": "x", "transform": "identity", "source-id": 9, "field-id": 1000}])
    with pytest.raises(InvalidMetadataError, match="cannot find source column 9 in schema 0"):
        apply_updates_from_empty([update_from_json(u) for u in missing])
    # No schema at all yet: nothing to bind to.
    before_schema = [DUCKDB_CREATE[0], DUCKDB_CREATE[1], DUCKDB_CREATE[3], DUCKDB_CREATE[2]]
    with pytest.raises(InvalidUpdateError, match="before any current schema"):
        apply_updates_from_empty([update_from_json(u) for u in before_schema])
