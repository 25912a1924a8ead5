"""The commit spine: new table metadata, the catalog's commit, transactions and retries, on
the in-memory catalog (the persistent catalogs share the same base)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from frazil.catalog import next_metadata_location, parse_version
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitFailedError, CommitValidationError, FrazilError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import StaticTable
from frazil.table.create import new_table_metadata
from frazil.table.transaction import RetryPolicy
from frazil.types import NestedField, parse_type


def _schema() -> Schema:
    return Schema(
        NestedField(7, "id", parse_type("long"), True),
        NestedField(3, "ts", parse_type("timestamptz"), False),
        identifier_field_ids=[7],
    )


def test_new_table_metadata_reassigns_ids_like_java() -> None:
    spec = PartitionSpec(0, (PartitionField(3, 1007, "day", "ts_day"),))
    metadata = new_table_metadata(_schema(), "/w/t/", spec, format_version=3)
    schema = metadata.schema()
    assert [(f.field_id, f.name) for f in schema.fields] == [(1, "id"), (2, "ts")]
    assert schema.identifier_field_ids == (1,)
    assert [(f.source_id, f.field_id) for f in metadata.spec().fields] == [(2, 1000)]
    assert metadata.last_partition_id == 1000
    assert metadata.location == "/w/t"
    assert metadata.next_row_id == 0
    assert metadata.properties["write.parquet.compression-codec"] == "zstd"


def test_format_version_property_is_not_stored() -> None:
    metadata = new_table_metadata(_schema(), "/w/t", properties={"format-version": "1"})
    assert metadata.format_version == 1
    assert "format-version" not in metadata.properties
    with pytest.raises(FrazilError, match="format version"):
        new_table_metadata(_schema(), "/w/t", format_version=4)


def test_metadata_file_names_follow_java() -> None:
    metadata = new_table_metadata(_schema(), "/w/t")
    first = next_metadata_location(metadata, None)
    assert first.startswith("/w/t/metadata/00000-") and first.endswith(".metadata.json")
    assert parse_version(first) == 0
    second = next_metadata_location(metadata, first)
    assert parse_version(second) == 1
    gz = metadata.replace(properties={"write.metadata.compression-codec": "gzip"})
    assert next_metadata_location(gz, second).endswith(".gz.metadata.json")


def test_commits_chain_metadata_and_log(catalog: InMemoryCatalog) -> None:
    table = catalog.create_table("db.t", _schema())
    first = table.metadata_location
    with table.update_schema() as update:
        update.add_column("name", "string")
    with table.update_properties() as props:
        props.set("k", "v")
    assert parse_version(table.metadata_location) == 2
    assert table.metadata.metadata_log[0].metadata_file == first
    reloaded = catalog.load_table("db.t")
    assert reloaded.metadata == table.metadata
    assert reloaded.schema().find_field("name") is not None


def test_stale_schema_change_is_refused_not_retried(catalog: InMemoryCatalog) -> None:
    stale = catalog.create_table("db.t", _schema())
    fresh = catalog.load_table("db.t")
    with fresh.update_schema() as update:
        update.add_column("a", "int")
    before = set(Path(stale.location(), "metadata").iterdir())
    with pytest.raises(CommitValidationError, match="changed since"):
        with stale.update_schema() as update:
            update.add_column("b", "int")
    assert set(Path(stale.location(), "metadata").iterdir()) == before
    assert catalog.load_table("db.t").schema().find_field("b") is None


def test_stale_property_change_retries_and_lands(catalog: InMemoryCatalog) -> None:
    stale = catalog.create_table("db.t", _schema())
    with catalog.load_table("db.t").update_properties() as props:
        props.set("a", "1")
    with stale.update_properties() as props:
        props.set("b", "2")
    final = catalog.load_table("db.t").properties
    assert final["a"] == "1" and final["b"] == "2"


def test_transaction_commits_once(catalog: InMemoryCatalog) -> None:
    table = catalog.create_table("db.t", _schema())
    with table.transaction() as txn:
        with txn.update_schema() as update:
            update.add_column("x", "int")
        txn.set_properties(owner="me")
        with txn.update_spec() as spec:
            spec.add_field("x", "bucket[4]")
    assert parse_version(table.metadata_location) == 1
    assert table.spec().fields[0].transform == "bucket[4]"
    assert table.properties["owner"] == "me"


def test_retries_give_up_after_the_configured_count(catalog: InMemoryCatalog) -> None:
    table = catalog.create_table(
        "db.t",
        _schema(),
        properties={"commit.retry.num-retries": "2", "commit.retry.min-wait-ms": "1"},
    )
    calls = []
    swap = catalog._swap

    def always_lose(*args: object) -> None:
        calls.append(1)
        raise CommitFailedError("lost")

    catalog._swap = always_lose  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitFailedError):
            with table.update_properties() as props:
                props.set("a", "1")
    finally:
        catalog._swap = swap  # type: ignore[method-assign]
    assert len(calls) == 3
    # Every metadata file written by a lost attempt was removed again.
    assert len(list(Path(table.location(), "metadata").iterdir())) == 1


def test_concurrent_property_commits_all_land(catalog: InMemoryCatalog) -> None:
    catalog.create_table(
        "db.t",
        _schema(),
        properties={
            "commit.retry.num-retries": "100",
            "commit.retry.min-wait-ms": "1",
            "commit.retry.max-wait-ms": "5",
        },
    )

    def work(n: int) -> None:
        table = catalog.load_table("db.t")
        for i in range(5):
            with table.update_properties() as props:
                props.set(f"writer-{n}-{i}", "x")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    table = catalog.load_table("db.t")
    assert sum(k.startswith("writer-") for k in table.properties) == 20
    assert parse_version(table.metadata_location) == 20


def test_retry_policy_reads_properties() -> None:
    policy = RetryPolicy.from_properties({"commit.retry.num-retries": "7"})
    assert policy.num_retries == 7 and policy.min_wait_ms == 100
    assert 100 <= policy.wait_ms(1) <= 110
    assert policy.wait_ms(30) <= policy.max_wait_ms * 1.1
    with pytest.raises(FrazilError, match=r"commit\.retry\.min-wait-ms"):
        RetryPolicy.from_properties({"commit.retry.min-wait-ms": "soon"})


def test_static_tables_are_read_only(catalog: InMemoryCatalog) -> None:
    table = catalog.create_table("db.t", _schema())
    static = StaticTable.from_metadata(table.metadata_location or "")
    with pytest.raises(FrazilError, match="read-only"):
        static.transaction()


def test_unknown_commit_state_deletes_nothing(catalog: InMemoryCatalog) -> None:
    """When the catalog cannot say whether the pointer moved, every file the commit wrote stays
    (it may be live now), and the error reaches the caller unretried."""
    import pyarrow as pa
    from frazil.errors import CommitStateUnknownError

    table = catalog.create_table("db.t", _schema())
    before = {p for p in Path(table.location()).rglob("*") if p.is_file()}
    swap = catalog._swap
    calls = []

    def unknown(*args: object) -> None:
        calls.append(1)
        raise CommitStateUnknownError("connection lost after the update was sent")

    catalog._swap = unknown  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitStateUnknownError):
            table.append(
                pa.table(
                    {
                        "id": pa.array([1, 2], pa.int64()),
                        "ts": pa.nulls(2, pa.timestamp("us", "UTC")),
                    }
                )
            )
    finally:
        catalog._swap = swap  # type: ignore[method-assign]
    assert len(calls) == 1
    written = {p for p in Path(table.location()).rglob("*") if p.is_file()} - before
    kinds = {p.suffix for p in written}
    # The data file, the manifest and manifest list, and the new metadata file all remain.
    assert {".parquet", ".avro", ".json"} <= kinds
    assert catalog.load_table("db.t").current_snapshot() is None
