"""pyiceberg's ``.commit()`` on the evolution builders of a table: the same commit as leaving
the ``with`` block, through the table's catalog (and inside a transaction, through it)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitValidationError


def _table(catalog: InMemoryCatalog) -> object:
    schema = pa.schema([pa.field("id", pa.int64(), False), ("ts", pa.timestamp("us", "UTC"))])
    return catalog.create_table("db.t", schema, properties={"format-version": "2"})


def test_commit_on_each_builder_reaches_the_catalog(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.update_schema().add_column("name", "string").commit()  # type: ignore[attr-defined]
    table.update_spec().add_field("ts", "day").commit()  # type: ignore[attr-defined]
    table.update_sort_order().asc("id").commit()  # type: ignore[attr-defined]
    table.append(pa.table({"id": [1], "ts": [None], "name": ["a"]}))  # type: ignore[attr-defined]
    snapshot_id = table.current_snapshot().snapshot_id  # type: ignore[attr-defined]
    table.manage_snapshots().create_tag("v1", snapshot_id).commit()  # type: ignore[attr-defined]

    loaded = catalog.load_table("db.t")
    assert loaded.schema().find_field("name") is not None
    assert [f.transform for f in loaded.spec().fields] == ["day"]
    assert [f.source_id for f in loaded.sort_order().fields] == [1]
    assert loaded.metadata.ref("v1").snapshot_id == snapshot_id  # type: ignore[union-attr]


def test_commit_inside_a_transaction_lands_with_the_transaction(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog)
    with table.transaction() as txn:  # type: ignore[attr-defined]
        txn.update_schema().add_column("name", "string").commit()
        assert catalog.load_table("db.t").schema().find_field("name") is None
    assert catalog.load_table("db.t").schema().find_field("name") is not None


def test_commit_of_a_stale_builder_is_refused(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    stale = table.update_schema().add_column("a", "string")  # type: ignore[attr-defined]
    catalog.load_table("db.t").update_schema().rename_column("ts", "event_ts").commit()
    # The schema it was built on changed meanwhile: refused for good, never applied over the
    # other change.
    with pytest.raises(CommitValidationError, match="schema"):
        stale.commit()
    schema = catalog.load_table("db.t").schema()
    assert schema.find_field("event_ts") is not None and schema.find_field("a") is None


@pytest.mark.parametrize("method", ["commit", "commit_to"])
def test_commit_returns_the_new_metadata(catalog: InMemoryCatalog, method: str) -> None:
    table = _table(catalog)
    metadata = getattr(table.update_schema().add_column("x", "int"), method)()  # type: ignore[attr-defined]
    assert metadata.schema().find_field("x") is not None
