"""RestCatalog against frazil's own REST server (``frazil.rest.server.app`` over a SQL catalog,
served by uvicorn on loopback): every client operation, and frazil's table API committing
through REST (create, append, read back, schema evolution, row-level delete, snapshot expiry,
create transactions, multi-table transactions, conflicts retried, views, server-side scan
planning, OAuth2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.rest import RestCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import (
    CommitFailedError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    TableAlreadyExistsError,
)
from frazil.rest.server import app
from frazil.schema import Schema
from frazil.types import NestedField, parse_type
from rest_stub import ServedApp

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
FAST_RETRY = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


@pytest.fixture
def backend(tmp_path: Path) -> SqlCatalog:
    return SqlCatalog(
        "backend", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=str(tmp_path / "wh")
    )


@pytest.fixture
def served(backend: SqlCatalog) -> Iterator[ServedApp]:
    with ServedApp(app(backend, page_size=2)) as server:
        yield server


@pytest.fixture
def rest(served: ServedApp) -> Iterator[RestCatalog]:
    with RestCatalog("rest", uri=served.uri) as catalog:
        yield catalog


def _ids(table: object) -> list[int]:
    from frazil.table import Table

    assert isinstance(table, Table)
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _files(metadata: Any) -> list[str]:
    """The data files, manifests and manifest list of ``metadata``'s current snapshot."""
    from frazil.manifest import read_manifest_list
    from frazil.table import Table

    snapshot = metadata.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = read_manifest_list(snapshot.manifest_list).column("manifest_path").to_pylist()
    data = [t.file.file_path for t in Table(metadata).scan().plan_files()]
    return [*data, *manifests, snapshot.manifest_list]


def test_namespaces(rest: RestCatalog, backend: SqlCatalog) -> None:
    rest.create_namespace("a", {"owner": "me"})
    rest.create_namespace(("a", "b"))
    for name in ("c", "d", "e"):
        rest.create_namespace(name)
    # Five top-level namespaces over pages of two.
    assert rest.list_namespaces() == [("a",), ("c",), ("d",), ("e",)]
    assert rest.list_namespaces("a") == [("a", "b")]
    assert rest.load_namespace_properties("a")["owner"] == "me"
    assert rest.namespace_exists(("a", "b")) and not rest.namespace_exists("zz")
    summary = rest.update_namespace_properties("a", removals={"owner", "gone"}, updates={"k": "v"})
    assert summary.removed == ["owner"] and summary.updated == ["k"] and summary.missing == ["gone"]
    assert backend.load_namespace_properties("a")["k"] == "v"
    with pytest.raises(NamespaceAlreadyExistsError, match="'a'"):
        rest.create_namespace("a")
    with pytest.raises(NamespaceNotEmptyError):
        rest.drop_namespace("a")
    rest.drop_namespace(("a", "b"))
    rest.drop_namespace("c")
    assert ("c",) not in rest.list_namespaces()
    with pytest.raises(NoSuchNamespaceError, match="'zz'"):
        rest.load_namespace_properties("zz")


def test_table_round_trip(rest: RestCatalog, backend: SqlCatalog) -> None:
    rest.create_namespace("db")
    table = rest.create_table("db.t", ROWS.schema, properties={"owner": "x"})
    assert table.metadata_location is not None and table.properties["owner"] == "x"
    assert rest.table_exists("db.t") and not rest.table_exists("db.nope")
    assert rest.list_tables("db") == [("db", "t")]
    table.append(ROWS)
    assert _ids(rest.load_table("db.t")) == [1, 2, 3]
    # The backend sees the same commit: the server stored it through its catalog.
    assert _ids(backend.load_table("db.t")) == [1, 2, 3]
    with table.update_schema() as update:
        update.add_column("score", "double")
    table.append(
        pa.table(
            {
                "id": pa.array([4], pa.int64()),
                "name": pa.array(["d"]),
                "score": pa.array([0.5]),
            }
        )
    )
    table.delete("id = 2")
    loaded = rest.load_table("db.t")
    rows = loaded.scan().to_arrow().sort_by("id")
    assert rows.column("id").to_pylist() == [1, 3, 4]
    assert rows.column("score").to_pylist() == [None, None, 0.5]
    first = loaded.snapshots()[0].snapshot_id
    loaded.expire_snapshots(older_than=loaded.current_snapshot().timestamp_ms + 1, retain_last=1)
    after = rest.load_table("db.t")
    assert len(after.snapshots()) == 1 and after.snapshot_by_id(first) is None
    assert _ids(after) == [1, 3, 4]


def test_pages_of_tables(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    for name in ("t1", "t2", "t3", "t4", "t5"):
        rest.create_table(("db", name), ROWS.schema)
    assert rest.list_tables("db") == [("db", f"t{i}") for i in range(1, 6)]


def test_create_errors(rest: RestCatalog) -> None:
    with pytest.raises(NoSuchNamespaceError):
        rest.create_table("nope.t", ROWS.schema)
    rest.create_namespace("db")
    rest.create_table("db.t", ROWS.schema)
    with pytest.raises(TableAlreadyExistsError, match=r"db\.t"):
        rest.create_table("db.t", ROWS.schema)
    with pytest.raises(NoSuchTableError, match=r"'db\.missing'"):
        rest.load_table("db.missing")


def test_create_table_transaction(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    txn = rest.create_table_transaction("db.staged", ROWS.schema, properties={"a": "1"})
    assert not rest.table_exists("db.staged")  # staged, not created
    txn.append(ROWS)
    txn.set_properties(b="2")
    table = txn.commit_transaction()
    loaded = rest.load_table("db.staged")
    assert loaded.metadata_location == table.metadata_location
    assert loaded.properties["a"] == "1" and loaded.properties["b"] == "2"
    assert loaded.metadata.table_uuid == txn.staged_metadata.table_uuid
    assert _ids(loaded) == [1, 2, 3]


def test_create_transaction_loses_to_a_concurrent_create(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    txn = rest.create_table_transaction("db.t", ROWS.schema)
    txn.append(ROWS)
    written = _files(txn.staged_metadata)
    assert written and all(Path(f).exists() for f in written)
    rest.create_table("db.t", ROWS.schema)
    with pytest.raises(TableAlreadyExistsError, match=r"db\.t"):
        txn.commit_transaction()
    # Certainly not committed: the transaction deleted what it wrote.
    assert not any(Path(f).exists() for f in written)
    assert _ids(rest.load_table("db.t")) == []


def test_concurrent_appends_retry_on_conflict(served: ServedApp) -> None:
    with (
        RestCatalog("one", uri=served.uri) as one,
        RestCatalog("two", uri=served.uri) as two,
    ):
        one.create_namespace("db")
        one.create_table("db.t", ROWS.schema, properties=FAST_RETRY)
        first, second = one.load_table("db.t"), two.load_table("db.t")
        first.append(ROWS)
        # second's base is stale: its commit gets a 409, refreshes and tries again.
        second.append(pa.table({"id": pa.array([9], pa.int64()), "name": pa.array(["z"])}))
        assert _ids(one.load_table("db.t")) == [1, 2, 3, 9]
        snapshot = second.current_snapshot()
        assert snapshot is not None and snapshot.parent_snapshot_id == (
            first.current_snapshot().snapshot_id  # type: ignore[union-attr]
        )


def test_stale_requirement_is_commit_failed(rest: RestCatalog) -> None:
    from frazil.table.requirements import AssertCurrentSchemaId
    from frazil.table.updates import SetProperties

    rest.create_namespace("db")
    table = rest.create_table("db.t", ROWS.schema)
    with pytest.raises(CommitFailedError, match=r"commit to table 'db\.t'"):
        rest.commit_table(table, [AssertCurrentSchemaId(7)], [SetProperties({"a": "b"})])


def test_rename_register_drop(rest: RestCatalog, backend: SqlCatalog) -> None:
    rest.create_namespace("db")
    table = rest.create_table("db.t", ROWS.schema)
    table.append(ROWS)
    renamed = rest.rename_table("db.t", "db.u")
    assert renamed.identifier == ("db", "u") and not rest.table_exists("db.t")
    location = renamed.metadata_location
    assert location is not None
    rest.drop_table("db.u")
    assert not rest.table_exists("db.u")
    registered = rest.register_table("db.back", location)
    assert _ids(registered) == [1, 2, 3]
    data_files = [t.file.file_path for t in registered.scan().plan_files()]
    rest.drop_table("db.back", purge=True)
    assert not rest.table_exists("db.back")
    assert data_files and not any(Path(f.removeprefix("file:")).exists() for f in data_files)
    with pytest.raises(NoSuchTableError):
        rest.drop_table("db.back")


def test_multi_table_transaction(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    a = rest.create_table("db.a", ROWS.schema)
    b = rest.create_table("db.b", ROWS.schema)
    ta, tb = a.transaction(), b.transaction()
    ta.append(ROWS)
    tb.append(ROWS.slice(0, 1))
    tb.set_properties(k="v")
    rest.commit_transactions(ta, tb)
    assert _ids(rest.load_table("db.a")) == [1, 2, 3]
    assert _ids(rest.load_table("db.b")) == [1] and rest.load_table("db.b").properties["k"] == "v"
    assert a.current_snapshot() is not None and _ids(a) == [1, 2, 3]


def test_multi_table_transaction_conflict_changes_nothing(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    a = rest.create_table("db.a", ROWS.schema)
    b = rest.create_table("db.b", ROWS.schema)
    ta, tb = a.transaction(), b.transaction()
    ta.append(ROWS)
    tb.append(ROWS)
    rest.load_table("db.b").append(ROWS.slice(0, 1))  # b moves on meanwhile
    with pytest.raises(CommitFailedError):
        rest.commit_transactions(ta, tb)
    assert _ids(rest.load_table("db.a")) == []  # all or none
    assert _ids(rest.load_table("db.b")) == [1]


def test_views(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    schema = Schema(NestedField(1, "id", parse_type("long"), False))
    view = rest.create_view("db.v", schema, "SELECT id FROM db.t", properties={"p": "1"})
    assert view.sql() == "SELECT id FROM db.t" and view.metadata.properties["p"] == "1"
    assert rest.view_exists("db.v") and not rest.view_exists("db.w")
    assert rest.list_views("db") == [("db", "v")]
    replaced = rest.replace_view("db.v", schema, "SELECT id + 1 AS id FROM db.t")
    assert replaced.sql() == "SELECT id + 1 AS id FROM db.t"
    assert len(replaced.metadata.versions) == 2
    assert (
        rest.load_view("db.v").metadata.current_version_id == replaced.metadata.current_version_id
    )
    moved = rest.rename_view("db.v", "db.w")
    assert moved.identifier == ("db", "w") and not rest.view_exists("db.v")
    rest.drop_view("db.w")
    with pytest.raises(NoSuchViewError, match=r"'db\.w'"):
        rest.load_view("db.w")


def test_server_side_scan_planning(served: ServedApp) -> None:
    with RestCatalog("r", uri=served.uri, **{"scan-planning-mode": "server"}) as rest:
        assert any("/plan" in e.path for e in rest.endpoints)
        rest.create_namespace("db")
        table = rest.create_table("db.t", ROWS.schema, properties={"format-version": "2"})
        table.append(ROWS)
        table.append(pa.table({"id": pa.array([4, 5], pa.int64()), "name": ["d", "e"]}))
        table.delete("id = 4")
        scan = table.scan(row_filter="id > 1")
        assert rest.flush_metrics_reports()  # the commits' reports, sent in the background
        used: list[str] = []
        call = rest._call

        def spy(endpoint: Any, *args: Any, **kwargs: Any) -> Any:
            used.append(str(endpoint))
            return call(endpoint, *args, **kwargs)

        rest._call = spy  # type: ignore[method-assign]
        local = sorted(scan.plan_files(), key=lambda t: t.file.file_path)
        assert not used  # plan_files() plans locally
        remote = sorted(scan._read_tasks(), key=lambda t: t.file.file_path)
        assert [t.file.file_path for t in remote] == [t.file.file_path for t in local]
        assert [[d.file_path for d in t.delete_files] for t in remote] == [
            [d.file_path for d in t.delete_files] for t in local
        ]
        assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan" in used
        assert sorted(scan.to_arrow().column("id").to_pylist()) == [2, 3, 5]
        assert scan.count() == 3


def test_oauth_client_credentials(backend: SqlCatalog) -> None:
    with ServedApp(app(backend, clients={"me": "secret"}, token_ttl_s=1)) as served:
        with pytest.raises(NotAuthorizedError):
            RestCatalog("r", uri=served.uri, credential="me:wrong")
        anonymous = RestCatalog("r", uri=served.uri)  # config needs no token
        with pytest.raises(NotAuthorizedError):
            anonymous.list_namespaces()
        rest = RestCatalog(
            "r",
            uri=served.uri,
            credential="me:secret",
            **{"oauth2-server-uri": served.uri + "/v1/oauth/tokens"},
        )
        rest.create_namespace("db")
        import time

        time.sleep(1.2)  # the token expired: renewed before the next request
        assert rest.list_namespaces() == [("db",)]


def test_refresh_of_an_unchanged_table_is_not_modified(rest: RestCatalog) -> None:
    rest.create_namespace("db")
    table = rest.create_table("db.t", ROWS.schema)
    statuses: list[tuple[str, int]] = []
    request = rest._http.request

    def spy(method: str, url: str, **kwargs: Any) -> Any:
        response = request(method, url, **kwargs)
        statuses.append((method, response.status))
        return response

    rest._http.request = spy  # type: ignore[method-assign]
    rest.load_table("db.t")
    again = rest.load_table("db.t")
    assert statuses == [("GET", 200), ("GET", 304)]
    assert again.metadata_location == table.metadata_location
    table.append(ROWS)  # moves the table: the next load is a full one
    statuses.clear()
    assert _ids(rest.load_table("db.t")) == [1, 2, 3]
    assert ("GET", 200) in statuses and ("GET", 304) not in statuses
