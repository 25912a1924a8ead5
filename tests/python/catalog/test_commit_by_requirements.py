"""Commits by requirements (the REST protocol's commit, Java's CatalogHandlers.updateTable):
Catalog.commit_updates, the create from updates alone, multi-table transactions (atomic on the
SQL catalog, refused elsewhere) and view commits."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import Catalog, TableChange
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.memory import InMemoryCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import (
    CommitFailedError,
    InvalidUpdateError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
)
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertTableUUID,
    requirements_for,
)
from frazil.table.updates import (
    AddPartitionSpec,
    AddSchema,
    AddSortOrder,
    AssignUUID,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
)
from frazil.table.view_updates import AssertViewUUID, ReplaceView

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _metadata_files(table_location: str) -> set[str]:
    return {p.name for p in Path(table_location, "metadata").glob("*.metadata.json")}


@pytest.fixture(params=["sql", "filesystem", "memory"])
def any_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    warehouse = str(tmp_path / "wh")
    Path(warehouse).mkdir()
    cat: Catalog
    if request.param == "sql":
        cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=warehouse)
    elif request.param == "filesystem":
        cat = FileSystemCatalog("c", warehouse=warehouse)
    else:
        cat = InMemoryCatalog("c", warehouse=warehouse)
    cat.create_namespace("db")
    return cat


def test_commit_updates_validates_then_applies(any_catalog: Catalog) -> None:
    table = any_catalog.create_table("db.t", SCHEMA)
    uuid = table.metadata.table_uuid
    assert uuid is not None
    done = any_catalog.commit_updates(
        "db.t", [AssertTableUUID(uuid), AssertCurrentSchemaId(0)], [SetProperties({"k": "v"})]
    )
    assert done.metadata.properties["k"] == "v"
    loaded = any_catalog.load_table("db.t")
    assert loaded.metadata_location == done.metadata_location
    assert loaded.metadata.properties["k"] == "v"


def test_failed_requirement_is_commit_failed_and_writes_nothing(any_catalog: Catalog) -> None:
    table = any_catalog.create_table("db.t", SCHEMA)
    before = _metadata_files(table.metadata.location)
    with pytest.raises(CommitFailedError, match="current schema id changed: expected 7"):
        any_catalog.commit_updates("db.t", [AssertCurrentSchemaId(7)], [SetProperties({"a": "b"})])
    with pytest.raises(CommitFailedError, match="UUID does not match"):
        any_catalog.commit_updates(
            "db.t", [AssertTableUUID("00000000-0000-0000-0000-000000000000")], []
        )
    assert _metadata_files(table.metadata.location) == before
    assert "a" not in any_catalog.load_table("db.t").metadata.properties


def test_lost_race_is_retried_on_fresh_metadata(any_catalog: Catalog) -> None:
    """The first attempt's base is stale by the time it swaps (another writer committed in
    between): the commit re-reads, re-validates and lands on top of the other commit."""
    any_catalog.create_table("db.t", SCHEMA)
    reads: list[str] = []
    from frazil.metadata import read_metadata

    def read(location: str) -> TableMetadata:
        metadata = read_metadata(location, io=any_catalog._file_io())
        reads.append(location)
        if len(reads) == 1:  # a concurrent commit after our read, before our swap
            any_catalog.commit_updates("db.t", [], [SetProperties({"other": "1"})])
        return metadata

    done = any_catalog.commit_updates("db.t", [], [SetProperties({"mine": "1"})], read=read)
    assert len(reads) == 2 and reads[0] != reads[1]
    assert {"other", "mine"} <= set(done.metadata.properties)
    assert done.metadata_location == any_catalog.load_table("db.t").metadata_location


def test_requirement_failing_after_a_lost_race_is_not_retried_again(any_catalog: Catalog) -> None:
    any_catalog.create_table("db.t", SCHEMA)
    from frazil.metadata import read_metadata
    from frazil.table.requirements import AssertRefSnapshotId

    calls = 0

    def read(location: str) -> TableMetadata:
        nonlocal calls
        calls += 1
        if calls == 1:
            # Another writer appends: main now exists, so "main must not exist" fails on retry.
            any_catalog.load_table("db.t").append(pa.table({"id": [1], "name": ["a"]}))
        return read_metadata(location, io=any_catalog._file_io())

    with pytest.raises(CommitFailedError, match="branch 'main' was created concurrently"):
        any_catalog.commit_updates(
            "db.t", [AssertRefSnapshotId("main", None)], [SetProperties({"x": "1"})], read=read
        )
    assert calls == 2


def _create_updates(location: str | None, version: int = 2) -> list[TableUpdate]:
    schema = Schema.from_json(
        {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
        }
    )
    updates: list[TableUpdate] = [
        AssignUUID("11111111-2222-3333-4444-555555555555"),
        UpgradeFormatVersion(version),
        AddSchema(schema),
        SetCurrentSchema(-1),
        AddPartitionSpec(PartitionSpec()),
        SetDefaultSpec(-1),
        AddSortOrder(SortOrder.unsorted()),
        SetDefaultSortOrder(-1),
        SetProperties({"owner": "me"}),
    ]
    if location is not None:
        updates.insert(2, SetLocation(location))
    return updates


def test_create_from_updates_with_assert_create(any_catalog: Catalog) -> None:
    done = any_catalog.commit_updates("db.n", [AssertCreate()], _create_updates(None, 3))
    metadata = done.metadata
    assert metadata.format_version == 3
    assert metadata.table_uuid == "11111111-2222-3333-4444-555555555555"
    assert [s.schema_id for s in metadata.schemas] == [0]
    assert [s.spec_id for s in metadata.partition_specs] == [0]
    assert metadata.properties["owner"] == "me"
    assert metadata.location.endswith("/db/n")
    assert any_catalog.load_table("db.n").metadata_location == done.metadata_location
    # A second create of the name fails, as assert-create requires.
    with pytest.raises(TableAlreadyExistsError):
        any_catalog.commit_updates("db.n", [AssertCreate()], _create_updates(None))


def test_create_from_updates_refuses_bad_input(any_catalog: Catalog) -> None:
    with pytest.raises(ValidationError, match="assert-create only"):
        any_catalog.commit_updates(
            "db.n",
            [AssertCreate(), AssertCurrentSchemaId(0)],
            _create_updates(None),
        )
    with pytest.raises(NoSuchNamespaceError):
        any_catalog.commit_updates("nope.n", [AssertCreate()], _create_updates(None))
    with pytest.raises(InvalidUpdateError, match="its updates set no current schema"):
        any_catalog.commit_updates("db.n", [AssertCreate()], [SetProperties({"a": "b"})])
    assert not any_catalog.table_exists("db.n")


def test_transactions_atomic_on_sql(tmp_path: Path) -> None:
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    a, b = cat.create_table("db.a", SCHEMA), cat.create_table("db.b", SCHEMA)
    done = cat.commit_transaction(
        [
            TableChange("db.a", requirements_for(a.metadata, []), [SetProperties({"x": "1"})]),
            TableChange("db.b", requirements_for(b.metadata, []), [SetProperties({"y": "2"})]),
        ]
    )
    assert [d.metadata.properties.get("x") for d in done] == ["1", None]
    assert cat.load_table("db.a").metadata.properties["x"] == "1"
    assert cat.load_table("db.b").metadata.properties["y"] == "2"
    # A failing second table leaves the first unchanged, and writes no file.
    a_before = cat.load_table("db.a").metadata_location
    files = _metadata_files(a.metadata.location)
    with pytest.raises(CommitFailedError):
        cat.commit_transaction(
            [
                TableChange("db.a", [], [SetProperties({"x": "changed"})]),
                TableChange("db.b", [AssertCurrentSchemaId(5)], [SetProperties({"y": "3"})]),
            ]
        )
    assert cat.load_table("db.a").metadata_location == a_before
    assert _metadata_files(a.metadata.location) == files
    with pytest.raises(ValidationError, match="once"):
        cat.commit_transaction([TableChange("db.a", [], []), TableChange(("db", "a"), [], [])])
    with pytest.raises(NoSuchTableError):
        cat.commit_transaction([TableChange("db.a", [], []), TableChange("db.zz", [], [])])


def test_transaction_swap_race_rolls_back_every_table(tmp_path: Path) -> None:
    """The second table moves between the reads and the swap: the database transaction rolls
    back the first table's swap too, and the retry commits both on fresh metadata."""
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.a", SCHEMA)
    cat.create_table("db.b", SCHEMA)
    from frazil.metadata import read_metadata

    reads: list[str] = []

    def read(location: str) -> TableMetadata:
        reads.append(location)
        if len(reads) == 2:  # after b is read in the first attempt
            cat.commit_updates("db.b", [], [SetProperties({"other": "1"})])
        return read_metadata(location, io=cat._file_io())

    done = cat.commit_transaction(
        [
            TableChange("db.a", [], [SetProperties({"x": "1"})]),
            TableChange("db.b", [], [SetProperties({"y": "1"})]),
        ],
        read=read,
    )
    assert len(reads) == 4
    b = cat.load_table("db.b").metadata
    assert {"other", "y"} <= set(b.properties)
    assert done[1].metadata_location == cat.load_table("db.b").metadata_location
    # a was swapped once: its log holds the create's file only.
    assert len(cat.load_table("db.a").metadata.metadata_log) == 1


@pytest.mark.parametrize("kind", ["filesystem", "memory"])
def test_transactions_of_several_tables_refused_elsewhere(tmp_path: Path, kind: str) -> None:
    cat: Catalog = (
        FileSystemCatalog("c", warehouse=str(tmp_path))
        if kind == "filesystem"
        else InMemoryCatalog("c", warehouse=str(tmp_path))
    )
    cat.create_namespace("db")
    cat.create_table("db.a", SCHEMA)
    cat.create_table("db.b", SCHEMA)
    with pytest.raises(UnsupportedOperationError, match="atomically"):
        cat.commit_transaction(
            [
                TableChange("db.a", [], [SetProperties({"x": "1"})]),
                TableChange("db.b", [], [SetProperties({"y": "1"})]),
            ]
        )
    assert "x" not in cat.load_table("db.a").metadata.properties
    # One table is an ordinary commit.
    done = cat.commit_transaction([TableChange("db.a", [], [SetProperties({"x": "1"})])])
    assert done[0].metadata.properties["x"] == "1"


def test_concurrent_commits_by_requirements_all_land(tmp_path: Path) -> None:
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.t", SCHEMA)
    errors: list[BaseException] = []

    def commit(i: int) -> None:
        try:
            cat.commit_updates("db.t", [], [SetProperties({f"k{i}": "v"})], retries=20)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    props = cat.load_table("db.t").metadata.properties
    assert {f"k{i}" for i in range(6)} <= set(props)


def test_view_commit_validates_uuid(tmp_path: Path) -> None:
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    view = cat.create_view("db.v", SCHEMA, "SELECT 1")
    change = ReplaceView(
        view.metadata, schema=view.metadata.schema() or Schema(), sql={"spark": "SELECT 2"}
    )
    done = cat.commit_view("db.v", change.requirements(), change.updates())
    assert done.sql() == "SELECT 2"
    assert done.metadata_location != view.metadata_location
    with pytest.raises(CommitFailedError, match="view UUID"):
        cat.commit_view(
            "db.v",
            [AssertViewUUID("00000000-0000-0000-0000-000000000000")],
            [SetProperties({"a": "b"})],
        )
    assert "a" not in cat.load_view("db.v").metadata.properties
