"""SqlCatalog on SQLite and PostgreSQL: namespaces, tables, views, rename, drop/purge,
register, create-table transactions, check-and-put commits, and hostile names."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import (
    CommitFailedError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    UnsafeNameError,
    ValidationError,
    ViewAlreadyExistsError,
)
from frazil.manifest import write_manifest, write_manifest_list
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])


def test_namespaces(sql_catalog: SqlCatalog) -> None:
    c = sql_catalog
    assert c.list_namespaces() == []
    c.create_namespace("a")
    c.create_namespace(("a", "b"), {"owner": "me"})
    c.create_namespace("a.b.c")
    with pytest.raises(NamespaceAlreadyExistsError, match=r"a\.b"):
        c.create_namespace("a.b")
    assert c.list_namespaces() == [("a",)]
    assert c.list_namespaces("a") == [("a", "b")]
    assert c.list_namespaces(("a", "b")) == [("a", "b", "c")]
    props = c.load_namespace_properties("a.b")
    assert props["owner"] == "me" and "exists" not in props
    assert props["location"].endswith("/warehouse/a/b")
    summary = c.update_namespace_properties("a.b", removals={"owner", "gone"}, updates={"k": "v"})
    assert summary.removed == ["owner"] and summary.missing == ["gone"]
    assert c.load_namespace_properties("a.b")["k"] == "v"
    c.update_namespace_properties("a.b", updates={"k": "w"})
    assert c.load_namespace_properties("a.b")["k"] == "w"
    with pytest.raises(ValidationError, match="reserved"):
        c.update_namespace_properties("a", updates={"exists": "false"})
    with pytest.raises(NoSuchNamespaceError, match="nope"):
        c.load_namespace_properties("nope")
    with pytest.raises(NamespaceNotEmptyError):
        c.drop_namespace("a.b")  # holds a.b.c
    c.drop_namespace("a.b.c")
    c.create_table("a.b.t", ARROW)
    with pytest.raises(NamespaceNotEmptyError, match="1 table"):
        c.drop_namespace("a.b")
    c.drop_table("a.b.t")
    c.drop_namespace("a.b")
    assert c.list_namespaces("a") == []
    with pytest.raises(NoSuchNamespaceError):
        c.drop_namespace("a.b")


def test_tables_and_commits(sql_catalog: SqlCatalog) -> None:
    c = sql_catalog
    c.create_namespace("db")
    with pytest.raises(NoSuchNamespaceError):
        c.create_table("other.t", ARROW)
    table = c.create_table("db.t", ARROW, properties={"a": "1"})
    assert os.path.basename(table.metadata_location or "").startswith("00000-")
    assert table.location().endswith("/warehouse/db/t")
    assert [f.name for f in table.schema().fields] == ["id", "name"]
    assert table.schema().find_field("id").required
    with pytest.raises(TableAlreadyExistsError):
        c.create_table("db.t", ARROW)
    assert c.table_exists("db.t") and not c.table_exists("db.u")
    assert c.list_tables("db") == [("db", "t")]
    with table.update_properties() as update:
        update.set("b", "2")
    with table.update_schema() as schema:
        schema.add_column("extra", LongType())
    loaded = c.load_table(("db", "t"))
    assert loaded.metadata_location == table.metadata_location
    assert os.path.basename(loaded.metadata_location or "").startswith("00002-")
    assert loaded.properties["b"] == "2" and loaded.schema().find_field("extra")
    assert len(loaded.metadata.metadata_log) == 2
    # A stale copy's commit loses the check-and-put, then retries on the refreshed table.
    stale = c.load_table("db.t")
    with table.update_properties() as update:
        update.set("c", "3")
    with stale.update_properties() as update:
        update.set("d", "4")
    final = c.load_table("db.t")
    assert {"b", "c", "d"} <= set(final.properties)
    # The pointer really is a check-and-put: a swap from the wrong base fails.
    with pytest.raises(CommitFailedError, match="changed concurrently"):
        c._swap(("db", "t"), table.metadata_location or "", final.metadata, "x")
    with pytest.raises(NoSuchTableError, match=r"db\.nope"):
        c.load_table("db.nope")


def test_commit_against_dropped_table(sql_catalog: SqlCatalog) -> None:
    c = sql_catalog
    c.create_namespace("db")
    table = c.create_table("db.t", ARROW)
    c.drop_table("db.t")
    before = set(os.listdir(Path(table.location()) / "metadata"))
    with pytest.raises(NoSuchTableError, match=r"db\.t"):
        with table.update_properties() as update:
            update.set("x", "1")
    assert set(os.listdir(Path(table.location()) / "metadata")) == before


def test_create_table_transaction(sql_catalog: SqlCatalog) -> None:
    c = sql_catalog
    c.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    tx = c.create_table_transaction("db.t", schema, format_version=3)
    tx.set_properties(owner="me")
    with tx.update_schema() as update:
        update.add_column("s", StringType())
    assert not c.table_exists("db.t")
    table = tx.commit_transaction()
    loaded = c.load_table("db.t")
    assert loaded.format_version == 3 and loaded.properties["owner"] == "me"
    assert [f.name for f in loaded.schema().fields] == ["id", "s"]
    assert table.metadata_location == loaded.metadata_location
    assert len(loaded.metadata.metadata_log) == 0  # created in one step
    # Two create transactions for one name: the second fails and leaves no file behind.
    tx1 = c.create_table_transaction("db.u", schema)
    tx2 = c.create_table_transaction("db.u", schema)
    tx1.commit_transaction()
    with pytest.raises(TableAlreadyExistsError):
        tx2.commit_transaction()
    assert len(os.listdir(Path(c.load_table("db.u").location()) / "metadata")) == 1


def test_rename_drop_purge_register(sql_catalog: SqlCatalog, tmp_path: Path) -> None:
    c = sql_catalog
    c.create_namespace("a")
    c.create_namespace("b")
    table = c.create_table("a.t", ARROW)
    renamed = c.rename_table("a.t", "b.t2")
    assert renamed.metadata_location == table.metadata_location
    assert c.list_tables("a") == [] and c.list_tables("b") == [("b", "t2")]
    c.create_table("a.t", ARROW)
    with pytest.raises(TableAlreadyExistsError):
        c.rename_table("a.t", "b.t2")
    with pytest.raises(NoSuchNamespaceError):
        c.rename_table("a.t", "nope.t")
    with pytest.raises(NoSuchTableError):
        c.rename_table("a.missing", "b.x")
    # register the same metadata file under another name, then drop without purge: files stay
    location = renamed.metadata_location or ""
    registered = c.register_table("a.copy", location)
    assert registered.metadata.table_uuid == renamed.metadata.table_uuid
    c.drop_table("a.copy")
    assert os.path.exists(location)
    # purge: a snapshot with a data file, manifest and manifest list, all deleted
    data = Path(renamed.location()) / "data" / "f.parquet"
    data.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}), data)
    manifest, manifest_list = _snapshot_files(renamed, str(data))
    assert all(os.path.exists(p) for p in (data, manifest, manifest_list))
    purged = c.load_table("b.t2")
    metadata_files = [e.metadata_file for e in purged.metadata.metadata_log]
    metadata_files.append(purged.metadata_location or "")
    c.drop_table("b.t2", purge=True)
    gone = (data, manifest, manifest_list, *metadata_files)
    assert not any(os.path.exists(p) for p in gone)
    # The new a.t shares the directory (a rename keeps the location, as in Java): untouched.
    assert c.load_table("a.t").schema().find_field("id")
    with pytest.raises(NoSuchTableError):
        c.drop_table("b.t2")


def _snapshot_files(table: object, data_path: str) -> tuple[str, str]:
    """Commit a snapshot referencing ``data_path`` through the catalog (a hand-made append:
    writing data is not this module's job) and return its manifest and manifest list."""
    from frazil.snapshots import Snapshot
    from frazil.table._table import Table
    from frazil.table.updates import AddSnapshot, SetSnapshotRef

    assert isinstance(table, Table)
    location = table.location()
    manifest = f"{location}/metadata/m0.avro"
    data_file = {
        "content": 0,
        "file_path": data_path,
        "file_format": "PARQUET",
        "partition": {},
        "record_count": 2,
        "file_size_in_bytes": os.path.getsize(data_path),
    }
    meta = table.metadata
    row = write_manifest(
        manifest,
        [{"status": 1, "snapshot_id": 1, "sequence_number": 1, "data_file": data_file}],
        spec=meta.spec().to_json(),
        schema=meta.schema().to_json(),
        format_version=meta.format_version,
        snapshot_id=1,
    )
    manifest_list = f"{location}/metadata/snap-1.avro"
    write_manifest_list(
        manifest_list, [row], snapshot_id=1, sequence_number=1, format_version=meta.format_version
    )
    snapshot = Snapshot(
        snapshot_id=1,
        timestamp_ms=meta.last_updated_ms + 1,
        sequence_number=1,
        manifest_list=manifest_list,
        summary={"operation": "append"},
        schema_id=0,
    )
    table._commit_builder((AddSnapshot(snapshot), SetSnapshotRef("main", 1, "branch")), ())
    return manifest, manifest_list


def test_views(sql_catalog: SqlCatalog) -> None:
    c = sql_catalog
    c.create_namespace("db")
    c.create_table("db.t", ARROW)
    view = c.create_view("db.v", ARROW, "SELECT * FROM db.t", properties={"p": "1"})
    assert view.sql() == "SELECT * FROM db.t"
    assert view.metadata.current_version().default_namespace == ("db",)
    with pytest.raises(ViewAlreadyExistsError):
        c.create_view("db.v", ARROW, "SELECT 1")
    with pytest.raises(ViewAlreadyExistsError, match="table"):
        c.create_view("db.t", ARROW, "SELECT 1")
    with pytest.raises(TableAlreadyExistsError, match="view"):
        c.create_table("db.v", ARROW)
    assert c.list_views("db") == [("db", "v")] and c.list_tables("db") == [("db", "t")]
    assert c.view_exists("db.v") and not c.table_exists("db.v")
    with pytest.raises(NoSuchTableError):
        c.load_table("db.v")
    replaced = c.replace_view("db.v", ARROW, "SELECT id FROM db.t")
    assert replaced.sql() == "SELECT id FROM db.t"
    assert os.path.basename(replaced.metadata_location).startswith("00001-")
    assert [v.version_id for v in replaced.metadata.versions] == [1, 2]
    c.rename_view("db.v", "db.w")
    assert c.load_view("db.w").metadata.view_uuid == view.metadata.view_uuid
    with pytest.raises(NoSuchViewError):
        c.load_view("db.v")
    with pytest.raises(NamespaceNotEmptyError, match="1 view"):
        c.drop_table("db.t")
        c.drop_namespace("db")
    c.drop_view("db.w")
    assert c.list_views("db") == []
    with pytest.raises(NoSuchViewError):
        c.drop_view("db.w")


def test_hostile_names(sql_catalog: SqlCatalog, tmp_path: Path) -> None:
    c = sql_catalog
    for bad in (("..", "t"), ("ok", ".."), ("a/b", "t"), ("ok", "t/../../x"), ("ok", "t\x00")):
        with pytest.raises(UnsafeNameError, match="invalid"):
            c.create_namespace(bad[:1]) if bad[0] != "ok" else c.create_table(bad, ARROW)
    with pytest.raises(UnsafeNameError, match="separator"):
        c.create_view(("ns", "../v"), ARROW, "SELECT 1")
    # Quotes and SQL are stored as they are: parameters, never SQL text.
    evil = "x'); DROP TABLE iceberg_tables; --"
    c.create_namespace(evil, {"k'": "v\"'"})
    table = c.create_table((evil, "o\"brien's"), ARROW)
    assert c.list_tables(evil) == [(evil, "o\"brien's")]
    assert c.load_namespace_properties(evil)["k'"] == "v\"'"
    assert c.load_table((evil, "o\"brien's")).metadata_location == table.metadata_location
    # LIKE wildcards in a namespace match only themselves.
    c.create_namespace("a_c")
    assert not c.namespace_exists("abc") and c.namespace_exists("a_c")
    assert set(c.list_namespaces()) == {(evil,), ("a_c",)}
    assert Path(table.location()).resolve().is_relative_to((tmp_path / "warehouse").resolve())


def test_sqlite_uri_and_java_tables(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    catalog = SqlCatalog("x", uri=f"sqlite:///{path}", warehouse=str(tmp_path))
    catalog.create_namespace("n")
    columns = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(iceberg_tables)")]
    assert columns == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    keys = sqlite3.connect(path).execute(
        "SELECT namespace, property_key, property_value FROM iceberg_namespace_properties"
    )
    assert list(keys) == [("n", "exists", "true")]
    # Java's URI is the same database; a second catalog name sees nothing of the first.
    assert SqlCatalog("x", uri=f"jdbc:sqlite:{path}").list_namespaces() == [("n",)]
    assert SqlCatalog("y", uri=f"jdbc:sqlite:{path}").list_namespaces() == []
    with pytest.raises(ValidationError, match="scheme frazil's SQL catalog does not support"):
        SqlCatalog("x", uri="mysql://host/db")
    memory = SqlCatalog("m", uri="sqlite:///:memory:", warehouse=str(tmp_path / "m"))
    memory.create_namespace("n")
    assert memory.list_namespaces() == [("n",)]


def test_postgres_unreachable() -> None:
    from frazil.errors import FrazilIOError

    with pytest.raises(FrazilIOError, match=r"cannot connect to postgresql://127\.0\.0\.1:9/"):
        SqlCatalog("x", uri="postgresql://u:secret@127.0.0.1:9/db", **{"connect-timeout-s": "2"})


ACCEPTED_PREFIXES = (
    "sqlite:///",
    "jdbc:sqlite:",
    "postgresql://",
    "postgres://",
    "postgresql+psycopg://",
    "postgresql+psycopg2://",
    "jdbc:postgresql://",
)


@pytest.mark.parametrize(
    "uri",
    [
        "not a uri",
        "sqlite:rel2.db",
        "sqlite:/abs.db",
        "sqlite://host/x.db",
        "catalog.db",
        "/x/c.db",
    ],
)
def test_a_uri_that_is_not_one_is_refused_and_creates_nothing(
    uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValidationError) as raised:
        SqlCatalog("c", uri=uri, warehouse=str(tmp_path))
    message = str(raised.value)
    assert repr(uri) in message
    assert "sqlite:////absolute/path.db" in message and "postgresql://" in message
    assert os.listdir(tmp_path) == []


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uri=st.text(min_size=1, max_size=40))
def test_any_text_but_a_catalog_uri_is_refused(
    uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assume(not uri.lower().startswith(ACCEPTED_PREFIXES))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValidationError, match="the accepted forms"):
        SqlCatalog("c", uri=uri, warehouse=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    from frazil.errors import FrazilError, InvalidDataError

    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database " * 100)
    with pytest.raises(InvalidDataError) as raised:
        SqlCatalog("c", uri=f"sqlite:///{path}", warehouse=str(tmp_path))
    assert str(path) in str(raised.value) and "not a readable SQLite" in str(raised.value)
    # A database that is damaged after the catalog opened it: every call says so too.
    good = tmp_path / "good.db"
    catalog = SqlCatalog("c", uri=f"sqlite:///{good}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    catalog._db._close_keeper()  # type: ignore[attr-defined]
    for leftover in tmp_path.glob("good.db-*"):  # the WAL and its index
        leftover.unlink()
    good.write_bytes(b"\0garbage" * 1000)
    for call in (catalog.list_namespaces, lambda: catalog.load_table("db.t")):
        with pytest.raises(FrazilError) as raised:
            call()
        assert isinstance(raised.value, InvalidDataError), raised.value
        assert str(good) in str(raised.value)
