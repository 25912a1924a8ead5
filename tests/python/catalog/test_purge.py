"""Dropping with purge on every catalog (SQLite, PostgreSQL, file system, memory): what Java's
CatalogUtil.dropTableData deletes, what is reported when some files cannot be read or
deleted, and pyiceberg's ``purge_table`` and ``create_table_if_not_exists``."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.memory import InMemoryCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import (
    InvalidMetadataError,
    NoSuchTableError,
    PurgeIncompleteError,
    TableAlreadyExistsError,
)
from frazil.io import FileIO
from frazil.manifest import read_manifest_list
from frazil.table._table import Table

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])


@pytest.fixture(params=["sqlite", "postgresql", "filesystem", "memory"])
def any_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    warehouse = str(tmp_path / "warehouse")
    catalog: Catalog
    if request.param == "sqlite":
        catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=warehouse)
    elif request.param == "postgresql":
        uri = request.getfixturevalue("postgres_uri")
        catalog = SqlCatalog(f"c-{uuid.uuid4().hex[:8]}", uri=uri, warehouse=warehouse)
    elif request.param == "filesystem":
        catalog = FileSystemCatalog("c", warehouse=warehouse)
    else:
        catalog = InMemoryCatalog("c", warehouse=warehouse)
    catalog.create_namespace("db")
    return catalog


def _rows(start: int) -> pa.Table:
    return pa.table({"id": [start, start + 1], "name": ["a", "b"]}, schema=ARROW)


def _three_appends(catalog: Catalog, name: str = "db.t") -> Table:
    table = catalog.create_table(name, ARROW, properties={"commit.manifest-merge.enabled": "false"})
    for start in (0, 10, 20):
        table.append(_rows(start))
    return catalog.load_table(name)


def _files(root: str) -> set[str]:
    return {str(p) for p in Path(root).rglob("*") if p.is_file()}


def _reachable(table: Table) -> dict[str, set[str]]:
    """What each snapshot's manifest list reaches: its manifests and their data files."""
    from frazil.table.maintenance._reachable import live_content_files

    found = {}
    for snapshot in table.snapshots():
        assert snapshot.manifest_list is not None
        rows = read_manifest_list(snapshot.manifest_list, io=table.io).to_pylist()
        found[snapshot.manifest_list] = {str(r["manifest_path"]) for r in rows} | set(
            live_content_files(rows, table.io)
        )
    return found


def test_a_clean_purge_deletes_what_java_deletes(any_catalog: Catalog) -> None:
    table = _three_appends(any_catalog)
    stray = Path(table.location(), "data", "not-referenced.parquet")
    stray.write_bytes(b"an orphan: no metadata reaches it")
    reached = set().union(*_reachable(table).values(), _reachable(table).keys())
    metadata_files = {e.metadata_file for e in table.metadata.metadata_log}
    metadata_files.add(str(table.metadata_location))
    assert reached and all(os.path.exists(p) for p in reached | metadata_files)
    any_catalog.purge_table("db.t")
    assert not any(os.path.exists(p) for p in reached | metadata_files)
    assert not any_catalog.table_exists("db.t")
    # Orphans stay (nothing reaches them), except in the file-system catalog, which deletes
    # the table's directory whatever it holds (as Java's HadoopCatalog).
    assert stray.exists() != isinstance(any_catalog, FileSystemCatalog)
    with pytest.raises(NoSuchTableError):
        any_catalog.purge_table("db.t")


def test_a_damaged_manifest_list_does_not_stop_the_purge(any_catalog: Catalog) -> None:
    table = _three_appends(any_catalog)
    lists = _reachable(table)
    damaged = str(table.current_snapshot().manifest_list)  # type: ignore[union-attr]
    older = set().union(*(files for path, files in lists.items() if path != damaged))
    only_damaged = lists[damaged] - older  # the last append's manifest and data file
    assert len(only_damaged) == 2
    Path(damaged).write_bytes(b"Obj\x01 this manifest list was damaged")
    metadata_files = {e.metadata_file for e in table.metadata.metadata_log}
    metadata_files.add(str(table.metadata_location))

    with pytest.raises(PurgeIncompleteError) as raised:
        any_catalog.drop_table("db.t", purge=True)
    error = raised.value
    assert error.identifier == ("db", "t")
    assert list(error.unreadable) == [damaged] and error.undeleted == {}
    message = str(error)
    assert "table 'db.t' was dropped" in message and damaged in message
    assert "reachable only through them were not found and not deleted" in message
    # The entry is gone; everything the readable lists reach is deleted, and the metadata.
    assert not any_catalog.table_exists("db.t")
    with pytest.raises(NoSuchTableError):
        any_catalog.load_table("db.t")
    others = set(lists) - {damaged}
    assert not any(os.path.exists(p) for p in older | others | metadata_files)
    if isinstance(any_catalog, FileSystemCatalog):
        assert "its directory" in message and not os.path.exists(table.location())
    else:
        assert "catalog" in message
        # What only the damaged list reaches stays, and the list itself, for inspection.
        assert all(os.path.exists(p) for p in only_damaged | {damaged})


def test_a_damaged_manifest_is_reported_and_the_rest_deleted(any_catalog: Catalog) -> None:
    table = _three_appends(any_catalog)
    lists = _reachable(table)
    first = table.snapshots()[0]
    manifest = str(read_manifest_list(str(first.manifest_list), io=table.io)["manifest_path"][0])
    Path(manifest).write_bytes(b"")
    with pytest.raises(PurgeIncompleteError) as raised:
        any_catalog.purge_table("db.t")
    assert list(raised.value.unreadable) == [manifest]
    assert manifest in str(raised.value)
    assert not any_catalog.table_exists("db.t")
    deleted = set().union(*lists.values(), lists.keys()) - {manifest}
    first_data = {p for p in lists[str(first.manifest_list)] if p.endswith(".parquet")}
    assert not any(os.path.exists(p) for p in deleted - first_data)
    if not isinstance(any_catalog, FileSystemCatalog):
        assert all(os.path.exists(p) for p in first_data | {manifest})


def test_files_that_cannot_be_deleted_are_reported(
    any_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _three_appends(any_catalog)
    data = sorted(p for files in _reachable(table).values() for p in files if p.endswith("parquet"))
    real_delete = FileIO.delete

    def refuse_first(io: FileIO, location: object) -> None:
        if str(location) == data[0]:
            from frazil.errors import PermissionDeniedError

            raise PermissionDeniedError(f"access denied: {location}")
        real_delete(io, location)  # type: ignore[arg-type]

    monkeypatch.setattr(FileIO, "delete", refuse_first)
    with pytest.raises(PurgeIncompleteError) as raised:
        any_catalog.purge_table("db.t")
    assert raised.value.unreadable == {}
    assert list(raised.value.undeleted) == [data[0]]
    assert "access denied" in raised.value.undeleted[data[0]]
    assert "1 file(s) could not be deleted" in str(raised.value)
    assert not any_catalog.table_exists("db.t")


def test_unreadable_current_metadata_drops_nothing(any_catalog: Catalog) -> None:
    table = _three_appends(any_catalog)
    before = _files(table.location())
    current = str(table.metadata_location)
    Path(current).write_text("{not json")
    with pytest.raises(InvalidMetadataError) as raised:
        any_catalog.drop_table("db.t", purge=True)
    assert "nothing was dropped" in str(raised.value) and current in str(raised.value)
    assert _files(table.location()) == before
    # Still there: the entry can be removed without purging.
    if isinstance(any_catalog, FileSystemCatalog):
        assert any_catalog.table_exists("db.t")
    else:
        any_catalog.drop_table("db.t")
        assert not any_catalog.table_exists("db.t")


def test_create_table_if_not_exists(any_catalog: Catalog) -> None:
    created = any_catalog.create_table_if_not_exists("db.t", ARROW, properties={"k": "1"})
    created.append(_rows(0))
    # The second call loads the existing table, whatever the arguments (as pyiceberg).
    other = pa.schema([("x", pa.string())])
    again = any_catalog.create_table_if_not_exists("db.t", other, properties={"k": "2"})
    assert again.metadata.table_uuid == created.metadata.table_uuid
    assert again.properties["k"] == "1" and again.scan().to_arrow().num_rows == 2
    assert again.schema().find_field("id") is not None
    # pyiceberg's keywords.
    by_keyword = any_catalog.create_table_if_not_exists(
        identifier=("db", "u"), schema=ARROW, properties={"format-version": "1"}
    )
    assert by_keyword.metadata.format_version == 1


def test_create_table_if_not_exists_does_not_hide_a_view(tmp_path: Path) -> None:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    catalog.create_view("db.v", ARROW, "SELECT 1")
    with pytest.raises(TableAlreadyExistsError, match=r"a view 'db\.v' already exists"):
        catalog.create_table_if_not_exists("db.v", ARROW)
