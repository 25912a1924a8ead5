"""A create from updates alone (the REST protocol's assert-create commit) in the order DuckDB's
iceberg extension sends them: add-spec and add-sort-order of an unpartitioned, unsorted table
before set-current-schema, which comes last. Java's TableMetadata builder takes that (an empty
spec and the unsorted order bind to no column); a spec with fields still needs a current schema,
as in Java."""

from __future__ import annotations

import json

import pytest
from frazil.errors import InvalidUpdateError
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


def test_partition_field_before_current_schema_refused() -> None:
    updates = list(DUCKDB_CREATE)
    updates[3] = {
        "action": "add-spec",
        "spec": {
            "spec-id": 0,
            "fields": [{"source-id": 1, "field-id": 1000, "name": "id", "transform": "identity"}],
        },
    }
    with pytest.raises(InvalidUpdateError, match="before any current schema"):
        apply_updates_from_empty([update_from_json(u) for u in updates])
