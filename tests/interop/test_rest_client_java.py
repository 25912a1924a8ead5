"""frazil's RestCatalog against the reference REST server (Iceberg Java 1.10.2's own
CatalogHandlers over a JdbcCatalog: tests/interop/_java_rest.py): every client operation,
frazil's table API committing through Java (Java applies frazil's updates and checks its
requirements, and writes the metadata files frazil then reads), commit conflicts and lost
answers (the server's fault API), the error model, OAuth2 and a path prefix.

Each test works in its own namespace of the shared session server; the tests needing another
configuration start their own server."""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _java_rest import JavaRestServer
from frazil.catalog.rest import RestCatalog
from frazil.errors import (
    CommitFailedError,
    CommitStateUnknownError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    NotFoundError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)
from frazil.schema import Schema
from frazil.types import NestedField, parse_type
from frazil.warnings import FrazilWarning

pytestmark = pytest.mark.interop

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
FAST = {"rest.client.retry-base-ms": "1"}
FAST_RETRY = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


@pytest.fixture
def ns(java_rest_server: JavaRestServer) -> str:
    return f"ns_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def rest(java_rest_server: JavaRestServer, ns: str) -> RestCatalog:
    java_rest_server.clear_faults()
    catalog = RestCatalog("java", uri=java_rest_server.uri, **FAST)
    catalog.create_namespace(ns)
    return catalog


def _ids(table: Any) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _written(metadata: Any) -> list[str]:
    from frazil.manifest import read_manifest_list
    from frazil.table import Table

    snapshot = metadata.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = read_manifest_list(snapshot.manifest_list).column("manifest_path").to_pylist()
    data = [t.file.file_path for t in Table(metadata).scan().plan_files()]
    return [f.removeprefix("file:") for f in (*data, *manifests, snapshot.manifest_list)]


def _operations(server: JavaRestServer) -> list[str]:
    return [r["operation"] for r in server.requests()]


def test_config_and_endpoints(java_rest_server: JavaRestServer, rest: RestCatalog) -> None:
    # The server lists every route it serves (no scan planning): HEAD is used for exists.
    assert any(e.method == "HEAD" for e in rest.endpoints)
    assert not any(e.path.endswith("/plan") for e in rest.endpoints)
    java_rest_server.clear_requests()
    assert rest.namespace_exists(rest.list_namespaces()[0])
    assert _operations(java_rest_server) == ["listNamespaces", "namespaceExists"]


def test_namespaces(rest: RestCatalog, ns: str) -> None:
    rest.create_namespace((ns, "child"), {"owner": "me"})
    rest.create_namespace((ns, "other"))
    assert rest.list_namespaces(ns) == [(ns, "child"), (ns, "other")]
    assert (ns,) in rest.list_namespaces()
    assert rest.load_namespace_properties((ns, "child"))["owner"] == "me"
    summary = rest.update_namespace_properties(
        (ns, "child"), removals={"owner", "absent"}, updates={"k": "v"}
    )
    assert summary.removed == ["owner"] and summary.updated == ["k"]
    assert summary.missing == ["absent"]
    props = rest.load_namespace_properties((ns, "child"))
    assert props["k"] == "v" and "owner" not in props
    assert rest.namespace_exists((ns, "child")) and not rest.namespace_exists((ns, "nope"))
    with pytest.raises(NamespaceAlreadyExistsError, match="Namespace already exists"):
        rest.create_namespace((ns, "child"))
    rest.create_table((ns, "child", "t"), ROWS.schema)
    with pytest.raises(NamespaceNotEmptyError, match=ns):
        rest.drop_namespace((ns, "child"))
    rest.drop_table((ns, "child", "t"))
    rest.drop_namespace((ns, "child"))
    assert not rest.namespace_exists((ns, "child"))
    with pytest.raises(NoSuchNamespaceError, match=f"load namespace '{ns}.nope'"):
        rest.load_namespace_properties((ns, "nope"))


def test_paging(java_rest_server: JavaRestServer, ns: str) -> None:
    paged = RestCatalog("java", uri=java_rest_server.uri, **{"rest-page-size": "2"})
    paged.create_namespace(ns)
    for i in range(5):
        paged.create_table((ns, f"t{i}"), ROWS.schema)
        paged.create_namespace((ns, f"n{i}"))
    java_rest_server.clear_requests()
    assert paged.list_tables(ns) == [(ns, f"t{i}") for i in range(5)]
    assert paged.list_namespaces(ns) == [(ns, f"n{i}") for i in range(5)]
    pages = [r for r in java_rest_server.requests() if r["operation"] == "listTables"]
    assert len(pages) == 3 and all("pageSize=2" in r["query"] for r in pages)


def test_table_api_round_trip(rest: RestCatalog, ns: str, java_rest_server: JavaRestServer) -> None:
    table = rest.create_table(
        (ns, "t"), ROWS.schema, properties={"format-version": "2", "owner": "x"}
    )
    assert table.location().startswith(str(java_rest_server.warehouse))
    assert table.format_version == 2 and table.properties["owner"] == "x"
    table.append(ROWS)
    with table.update_schema() as update:
        update.add_column("score", "double")
    with table.update_spec() as spec:
        spec.add_field("id", "bucket[4]", "id_bucket")
    table.append(
        pa.table({"id": pa.array([4, 5], pa.int64()), "name": ["d", "e"], "score": [0.5, 1.5]})
    )
    table.delete("id = 2")
    table.delete("id = 5")
    loaded = rest.load_table((ns, "t"))
    assert loaded.metadata_location is not None and "/metadata/" in loaded.metadata_location
    rows = loaded.scan().to_arrow().sort_by("id")
    assert rows.column("id").to_pylist() == [1, 3, 4]
    assert rows.column("score").to_pylist() == [None, None, 0.5]
    assert loaded.spec().fields[0].name == "id_bucket"
    with loaded.transaction() as txn:
        txn.set_properties(k="v")
        txn.manage_snapshots().create_tag("v1", loaded.current_snapshot().snapshot_id).commit()
    assert (
        rest.load_table((ns, "t")).refs()["v1"].snapshot_id == loaded.current_snapshot().snapshot_id
    )
    before = len(loaded.snapshots())
    loaded.expire_snapshots(older_than=loaded.current_snapshot().timestamp_ms + 1, retain_last=1)
    after = rest.load_table((ns, "t"))
    assert before > 2 and len(after.snapshots()) <= 2  # the head and the tagged one
    assert _ids(after) == [1, 3, 4] and after.properties["k"] == "v"


def test_create_table_transaction(rest: RestCatalog, ns: str) -> None:
    txn = rest.create_table_transaction(
        (ns, "staged"), ROWS.schema, properties={"format-version": "2", "a": "1"}
    )
    assert not rest.table_exists((ns, "staged"))
    txn.append(ROWS)
    with txn.update_schema() as update:
        update.add_column("extra", "string")
    txn.commit_transaction()
    loaded = rest.load_table((ns, "staged"))
    assert loaded.properties["a"] == "1" and loaded.schema().find_field("extra") is not None
    assert loaded.metadata.table_uuid == txn.staged_metadata.table_uuid
    assert _ids(loaded) == [1, 2, 3]
    with pytest.raises(TableAlreadyExistsError, match="Table already exists"):
        rest.create_table_transaction((ns, "staged"), ROWS.schema)  # Java checks when staging
    txn = rest.create_table_transaction((ns, "late"), ROWS.schema)
    txn.append(ROWS)
    written = _written(txn.staged_metadata)
    rest.create_table((ns, "late"), ROWS.schema)  # another writer creates it meanwhile
    with pytest.raises(TableAlreadyExistsError, match=rf"cannot create table '{ns}\.late'"):
        txn.commit_transaction()
    assert not any(Path(f).exists() for f in written)  # certainly failed: cleaned up


def test_concurrent_writers_retry(
    java_rest_server: JavaRestServer, rest: RestCatalog, ns: str
) -> None:
    rest.create_table((ns, "t"), ROWS.schema, properties=FAST_RETRY)
    other = RestCatalog("other", uri=java_rest_server.uri)
    mine, theirs = rest.load_table((ns, "t")), other.load_table((ns, "t"))
    theirs.append(ROWS)
    java_rest_server.clear_requests()
    mine.append(pa.table({"id": pa.array([9], pa.int64()), "name": ["z"]}))
    commits = [r for r in java_rest_server.requests() if r["operation"] == "updateTable"]
    assert [r["status"] for r in commits] == [409, 200]  # Java refused the stale base
    assert _ids(rest.load_table((ns, "t"))) == [1, 2, 3, 9]


def test_stale_requirement(rest: RestCatalog, ns: str) -> None:
    from frazil.table.requirements import AssertRefSnapshotId
    from frazil.table.updates import SetProperties

    table = rest.create_table((ns, "t"), ROWS.schema)
    with pytest.raises(CommitFailedError, match="Requirement failed"):
        rest.commit_table(table, [AssertRefSnapshotId("main", 123)], [SetProperties({"a": "b"})])


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("status", [500, 502, 503, 504, 0])
def test_unknown_commit_outcome_keeps_files(
    java_rest_server: JavaRestServer, rest: RestCatalog, ns: str, status: int, when: str
) -> None:
    rest.create_table((ns, "t"), ROWS.schema)
    txn = rest.load_table((ns, "t")).transaction()
    txn.append(ROWS)
    written = _written(txn.staged_metadata)
    java_rest_server.add_fault(operation="updateTable", status=status, when=when)
    with pytest.raises(CommitStateUnknownError, match=rf"table '{ns}\.t'"):
        txn.commit_transaction()
    assert all(Path(f).exists() for f in written)
    landed = rest.load_table((ns, "t")).current_snapshot() is not None
    assert landed == (when == "after")
    if landed:
        assert _ids(rest.load_table((ns, "t"))) == [1, 2, 3]


def test_reads_retried(java_rest_server: JavaRestServer, rest: RestCatalog, ns: str) -> None:
    rest.create_table((ns, "t"), ROWS.schema)
    java_rest_server.add_fault(operation="loadTable", status=503, times=2)
    java_rest_server.add_fault(operation="loadTable", status=0)
    java_rest_server.clear_requests()
    assert rest.load_table((ns, "t")).identifier == (ns, "t")
    assert _operations(java_rest_server).count("loadTable") == 4


def test_rename_register_drop_purge(rest: RestCatalog, ns: str) -> None:
    table = rest.create_table((ns, "t"), ROWS.schema)
    table.append(ROWS)
    moved = rest.rename_table((ns, "t"), (ns, "u"))
    assert moved.identifier == (ns, "u") and not rest.table_exists((ns, "t"))
    with pytest.raises(NoSuchTableError):
        rest.rename_table((ns, "t"), (ns, "v"))
    rest.create_table((ns, "x"), ROWS.schema)
    with pytest.raises(TableAlreadyExistsError):
        rest.rename_table((ns, "u"), (ns, "x"))
    location = moved.metadata_location
    assert location is not None
    rest.drop_table((ns, "u"))
    registered = rest.register_table((ns, "back"), location)
    assert _ids(registered) == [1, 2, 3]
    with pytest.raises(TableAlreadyExistsError):
        rest.register_table((ns, "back"), location)
    files = _written(registered.metadata)
    rest.purge_table((ns, "back"))
    assert not rest.table_exists((ns, "back"))
    assert not any(Path(f).exists() for f in files)
    with pytest.raises(NoSuchTableError, match=rf"drop table '{ns}\.back'"):
        rest.drop_table((ns, "back"))


def test_multi_table_transactions(rest: RestCatalog, ns: str) -> None:
    a = rest.create_table((ns, "a"), ROWS.schema)
    b = rest.create_table((ns, "b"), ROWS.schema)
    ta, tb = a.transaction(), b.transaction()
    ta.append(ROWS)
    tb.append(ROWS.slice(0, 2))
    rest.commit_transactions(ta, tb)
    assert _ids(rest.load_table((ns, "a"))) == [1, 2, 3]
    assert _ids(rest.load_table((ns, "b"))) == [1, 2]
    ta, tb = a.transaction(), b.transaction()
    ta.append(ROWS)
    tb.append(ROWS)
    written = sorted(
        (set(_written(ta.staged_metadata)) - set(_written(a.metadata)))
        | (set(_written(tb.staged_metadata)) - set(_written(b.metadata)))
    )
    assert len(written) == 6  # a data file, a manifest and a manifest list each
    rest.load_table((ns, "b")).append(ROWS.slice(0, 1))  # b moves on: the transaction is stale
    with pytest.raises(CommitFailedError):
        rest.commit_transactions(ta, tb)
    assert _ids(rest.load_table((ns, "a"))) == [1, 2, 3]  # all or none
    assert not any(Path(f).exists() for f in written)


def test_views(rest: RestCatalog, ns: str) -> None:
    schema = Schema(NestedField(1, "id", parse_type("long"), False))
    view = rest.create_view(
        (ns, "v"), schema, "SELECT id FROM t", properties={"p": "1"}, column_docs=["the id"]
    )
    assert view.sql() == "SELECT id FROM t" and view.metadata.properties["p"] == "1"
    assert view.metadata.current_version().default_namespace == (ns,)
    assert view.schema() is not None and view.schema().fields[0].doc == "the id"
    assert rest.view_exists((ns, "v")) and not rest.view_exists((ns, "w"))
    assert rest.list_views(ns) == [(ns, "v")]
    with pytest.raises(ViewAlreadyExistsError):
        rest.create_view((ns, "v"), schema, "SELECT 1")
    replaced = rest.replace_view(
        (ns, "v"), schema, {"spark": "SELECT id FROM u", "trino": "SELECT id FROM u"}
    )
    assert replaced.sql("trino") == "SELECT id FROM u" and len(replaced.metadata.versions) == 2
    moved = rest.rename_view((ns, "v"), (ns, "w"))
    assert moved.identifier == (ns, "w") and moved.sql() == "SELECT id FROM u"
    rest.drop_view((ns, "w"))
    with pytest.raises(NoSuchViewError, match=rf"load view '{ns}\.w'"):
        rest.load_view((ns, "w"))


def test_metrics_reports_accepted(
    java_rest_server: JavaRestServer, rest: RestCatalog, ns: str
) -> None:
    table = rest.create_table((ns, "t"), ROWS.schema)
    java_rest_server.clear_requests()
    table.append(ROWS)
    table.delete("id = 1")
    assert rest.flush_metrics_reports()  # reports go in the background
    reports = [r for r in java_rest_server.requests() if r["operation"] == "reportMetrics"]
    # Java's ReportMetricsRequestParser read both commit reports.
    assert [r["status"] for r in reports] == [204, 204]
    first = json.loads(reports[0]["body"])
    assert (
        first["report-type"] == "commit-report" and first["metrics"]["added-records"]["value"] == 3
    )


def test_access_delegation_header(
    java_rest_server: JavaRestServer, rest: RestCatalog, ns: str
) -> None:
    rest.create_table((ns, "t"), ROWS.schema)
    java_rest_server.clear_requests()
    rest.load_table((ns, "t"))
    (load,) = [r for r in java_rest_server.requests() if r["operation"] == "loadTable"]
    assert load["headers"]["x-iceberg-access-delegation"] == "vended-credentials"
    assert "snapshots=all" in load["query"]


def test_conditional_load(java_rest_server: JavaRestServer, rest: RestCatalog, ns: str) -> None:
    rest.create_table((ns, "t"), ROWS.schema)
    rest.load_table((ns, "t"))
    java_rest_server.clear_requests()
    assert rest.load_table((ns, "t")).identifier == (ns, "t")
    (load,) = java_rest_server.requests()
    assert load["status"] == 304 and load["headers"]["if-none-match"]


def test_server_planning_falls_back_with_a_warning(
    java_rest_server: JavaRestServer, ns: str
) -> None:
    rest = RestCatalog("java", uri=java_rest_server.uri, **{"scan-planning-mode": "server"})
    rest.create_namespace(ns)
    table = rest.create_table((ns, "t"), ROWS.schema)
    table.append(ROWS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _ids(rest.load_table((ns, "t"))) == [1, 2, 3]
    assert any(issubclass(w.category, FrazilWarning) and "/plan" in str(w.message) for w in caught)


def test_error_model(rest: RestCatalog, ns: str) -> None:
    with pytest.raises(NoSuchTableError, match=rf"load table '{ns}\.missing'"):
        rest.load_table((ns, "missing"))
    with pytest.raises(NoSuchNamespaceError):
        rest.create_table(("no_such_ns", "t"), ROWS.schema)
    with pytest.raises(NoSuchNamespaceError):
        rest.list_tables("no_such_ns")
    rest.create_table((ns, "t"), ROWS.schema)
    with pytest.raises(TableAlreadyExistsError, match=rf"create table '{ns}\.t'"):
        rest.create_table((ns, "t"), ROWS.schema)
    dropped = rest.load_table((ns, "t"))
    rest.drop_table((ns, "t"))
    with pytest.raises(NoSuchTableError):
        dropped.append(ROWS)
    with pytest.raises(NotFoundError):
        rest.register_table((ns, "r"), f"/nonexistent/{ns}/v1.metadata.json")


def test_oauth2_and_prefix(java_rest_server_factory: Callable[..., JavaRestServer]) -> None:
    server = java_rest_server_factory(token="the-token", oauth_client="me:secret", prefix="wh")
    with pytest.raises(NotAuthorizedError, match="invalid_client"):
        RestCatalog("java", uri=server.uri, credential="me:wrong")
    rest = RestCatalog("java", uri=server.uri, credential="me:secret")
    assert rest.prefix == "wh"
    rest.create_namespace("db")
    assert rest.list_namespaces() == [("db",)]
    paths = [r["path"] for r in server.requests()]
    assert all(p.startswith("/v1/wh/") or p in ("/v1/config", "/v1/oauth/tokens") for p in paths)
    assert all(
        r["headers"].get("authorization") == "Bearer the-token"
        for r in server.requests()
        if r["path"].startswith("/v1/wh/")
    )
    # An expiring token is renewed (client credentials again) before the request.
    auth: Any = rest._http.auth
    real = auth._clock
    auth._clock = lambda: real() + 3590
    server.clear_requests()
    assert rest.namespace_exists("db")
    assert _operations(server) == ["getToken", "namespaceExists"]
    bearer = RestCatalog("java", uri=server.uri, token="the-token")
    assert bearer.list_namespaces() == [("db",)]
    with pytest.raises(NotAuthorizedError):
        RestCatalog("java", uri=server.uri, token="wrong").list_namespaces()


def test_config_precedence_and_table_config(
    java_rest_server_factory: Callable[..., JavaRestServer],
) -> None:
    server = java_rest_server_factory(
        config_defaults={"x.a": "default", "x.b": "default", "x.c": "default"},
        config_overrides={"x.c": "override"},
        table_config={"s3.region": "table-region", "token": "table-token"},
    )
    rest = RestCatalog("java", uri=server.uri, **{"x.b": "client", "x.c": "client"})
    assert rest.properties["x.a"] == "default"
    assert rest.properties["x.b"] == "client"
    assert rest.properties["x.c"] == "override"
    rest.create_namespace("db")
    table = rest.create_table("db.t", ROWS.schema)
    table.append(ROWS)
    loaded = rest.load_table("db.t")
    assert loaded.io_properties["s3.region"] == "table-region"
    # The table's token authenticates its requests (it is the server's) and never reaches storage.
    assert "token" not in loaded.io_properties
    assert _ids(loaded) == [1, 2, 3]
