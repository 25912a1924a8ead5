"""RestCatalog when things fail: a proxy in front of frazil's REST server answers some requests
itself (429, 503, 500, 409, a dropped connection) or after passing them on, so the commit
protocol's outcomes can be checked end to end. A commit whose outcome is unknown (a 5xx, a
lost answer) raises CommitStateUnknownError and keeps every file it wrote, whether it landed
or not; a 409 is retried on refreshed metadata; retries of reads honour the server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.rest import RestCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import CommitStateUnknownError, ServiceUnavailableError
from frazil.rest.server import app
from rest_stub import Answer, Seen, ServedApp, StubServer, error, forward

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
COMMIT = "POST /v1/namespaces/db/tables/t"
FAST = {"rest.client.retry-base-ms": "1"}
FAST_RETRY = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}

Fault = Callable[[Seen, Callable[[], Answer]], Answer]


@dataclass
class Proxy:
    """Passes requests on to ``upstream`` unless a fault for ``"<METHOD> <path>"`` answers
    (a fault gets the request and a function that forwards it; a key ending in ``*`` matches
    every path it starts)."""

    upstream: str
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)

    def __call__(self, request: Seen) -> Answer:
        key = f"{request.method} {request.path}"
        self.seen.append(key)
        queue = self.faults.get(key) or next(
            (q for k, q in self.faults.items() if k.endswith("*") and key.startswith(k[:-1]) and q),
            None,
        )
        if queue:
            return queue.pop(0)(request, lambda: forward(self.upstream, request))
        return forward(self.upstream, request)

    def count(self, key: str) -> int:
        return self.seen.count(key)


@pytest.fixture
def backend(tmp_path: Path) -> SqlCatalog:
    return SqlCatalog("b", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))


@pytest.fixture
def proxy(backend: SqlCatalog) -> Iterator[tuple[Proxy, StubServer]]:
    with ServedApp(app(backend)) as served:
        handler = Proxy(served.uri)
        with StubServer(handler) as server:
            yield handler, server


@pytest.fixture
def rest(proxy: tuple[Proxy, StubServer]) -> RestCatalog:
    _, server = proxy
    catalog = RestCatalog("r", uri=server.uri, **FAST)
    catalog.create_namespace("db")
    catalog.create_table("db.t", ROWS.schema, properties=FAST_RETRY)
    return catalog


def answer(a: Answer) -> Fault:
    return lambda seen, send: a


def after_forwarding(a: Answer) -> Fault:
    """The request reaches the server (and takes effect), but the client gets ``a``."""

    def fault(seen: Seen, send: Callable[[], Answer]) -> Answer:
        send()
        return a

    return fault


def _written(metadata: Any) -> list[str]:
    from frazil.manifest import read_manifest_list
    from frazil.table import Table

    snapshot = metadata.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = read_manifest_list(snapshot.manifest_list).column("manifest_path").to_pylist()
    data = [t.file.file_path for t in Table(metadata).scan().plan_files()]
    return [*data, *manifests, snapshot.manifest_list]


def _staged_append(rest: RestCatalog) -> tuple[Any, list[str]]:
    table = rest.load_table("db.t")
    txn = table.transaction()
    txn.append(ROWS)
    return txn, _written(txn.staged_metadata)


@pytest.mark.parametrize(
    "fault",
    [
        answer(error(500, "CommitStateUnknownException", "boom")),
        answer(Answer(502, b"<html>bad gateway</html>")),
        answer(error(503, "ServiceUnavailableException", "later", **{"Retry-After": "0"})),
        answer(Answer(504)),
        answer(Answer(drop=True)),
    ],
    ids=["500", "502", "503", "504", "dropped"],
)
def test_unknown_commit_keeps_its_files(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer], fault: Fault
) -> None:
    handler, _ = proxy
    handler.faults[COMMIT] = [fault]
    txn, written = _staged_append(rest)
    with pytest.raises(CommitStateUnknownError, match=r"table 'db\.t'"):
        txn.commit_transaction()
    assert handler.count(COMMIT) == 1  # never sent twice
    assert all(Path(f).exists() for f in written)
    assert rest.load_table("db.t").current_snapshot() is None  # it did not land


@pytest.mark.parametrize(
    "fault",
    [
        after_forwarding(error(500, "CommitStateUnknownException", "lost")),
        after_forwarding(Answer(504)),
        after_forwarding(Answer(drop=True)),
        after_forwarding(Answer(200, b"{not json")),
    ],
    ids=["500", "504", "dropped", "garbled-200"],
)
def test_unknown_commit_that_landed(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer], fault: Fault
) -> None:
    handler, _ = proxy
    handler.faults[COMMIT] = [fault]
    txn, written = _staged_append(rest)
    with pytest.raises(CommitStateUnknownError):
        txn.commit_transaction()
    # It did land: deleting its files would have corrupted the table.
    assert all(Path(f).exists() for f in written)
    table = rest.load_table("db.t")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_conflict_is_retried_and_stale_files_go(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    handler.faults[COMMIT] = [answer(error(409, "CommitFailedException", "try again"))]
    txn, first_attempt = _staged_append(rest)
    table = txn.commit_transaction()
    assert handler.count(COMMIT) == 2
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    # The refreshed table had not moved, so the retry reused the staged updates.
    assert all(Path(f).exists() for f in first_attempt)


def test_rate_limited_commit_is_sent_again(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    handler.faults[COMMIT] = [answer(Answer(429, headers={"Retry-After": "0"}))]
    rest.load_table("db.t").append(ROWS)
    assert handler.count(COMMIT) == 2
    assert rest.load_table("db.t").current_snapshot() is not None


def test_reads_retried_until_the_server_answers(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    load = "GET /v1/namespaces/db/tables/t"
    handler.faults[load] = [
        answer(error(503, "ServiceUnavailableException", "warming up")),
        answer(Answer(429, headers={"Retry-After": "0"})),
        answer(Answer(drop=True)),
    ]
    assert rest.load_table("db.t").identifier == ("db", "t")
    assert handler.count(load) == 4
    handler.faults[load] = [answer(error(503, "ServiceUnavailableException", "down"))] * 10
    tight = RestCatalog("r", uri=rest.uri, **FAST, **{"rest.client.max-retries": "2"})
    with pytest.raises(ServiceUnavailableError, match=r"load table 'db\.t': down"):
        tight.load_table("db.t")


def test_failed_metrics_report_does_not_fail_the_commit(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    report = "POST /v1/namespaces/db/tables/t/metrics"
    handler.faults[report] = [answer(error(500, "RuntimeException", "no metrics today"))]
    table = rest.load_table("db.t")
    table.append(ROWS)
    table.append(ROWS)
    assert rest.flush_metrics_reports()  # reports go in the background
    assert handler.count(report) == 2  # both commits reported; the first report failed
    assert len(rest.load_table("db.t").snapshots()) == 2


def test_a_commit_does_not_wait_for_its_report(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    release, sent = threading.Event(), threading.Event()

    def hold(seen: Seen, send: Callable[[], Answer]) -> Answer:
        release.wait(60)  # a synchronous report would hold the commit until this times out
        reply = send()
        sent.set()
        return reply

    handler.faults["POST /v1/namespaces/db/tables/t/metrics"] = [hold]
    table = rest.load_table("db.t")
    table.append(ROWS)
    assert not sent.is_set()  # the commit returned while its report was still held
    assert len(rest.load_table("db.t").snapshots()) == 1
    release.set()
    assert rest.flush_metrics_reports()
    assert sent.is_set()


def test_commit_report_body(rest: RestCatalog, proxy: tuple[Proxy, StubServer]) -> None:
    handler, _ = proxy
    bodies: list[Any] = []

    def keep(seen: Seen, send: Callable[[], Answer]) -> Answer:
        bodies.append(seen.json())
        return send()

    handler.faults["POST /v1/namespaces/db/tables/t/metrics"] = [keep]
    table = rest.load_table("db.t")
    table.append(ROWS)
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert rest.flush_metrics_reports()
    (body,) = bodies
    assert body["report-type"] == "commit-report" and body["table-name"] == "db.t"
    assert body["snapshot-id"] == snapshot.snapshot_id and body["operation"] == "append"
    assert body["metrics"]["added-records"] == {"unit": "count", "value": 3}
    assert body["metrics"]["added-data-files"] == {"unit": "count", "value": 1}


def test_vended_credentials_reach_the_file_io(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    seen_headers: list[str | None] = []

    def vend(seen: Seen, send: Callable[[], Answer]) -> Answer:
        seen_headers.append(seen.headers.get("X-Iceberg-Access-Delegation"))
        reply = send()
        body = json.loads(reply.encoded())
        location = body["metadata"]["location"]
        body["config"] = {"s3.region": "from-config", "s3.endpoint": "http://config"}
        body["storage-credentials"] = [
            {"prefix": "s3://elsewhere", "config": {"s3.access-key-id": "wrong"}},
            {"prefix": location[:8], "config": {"s3.access-key-id": "short"}},
            {"prefix": location, "config": {"s3.access-key-id": "best", "s3.region": "vended"}},
        ]
        return Answer(reply.status, body, reply.headers)

    handler.faults["GET /v1/namespaces/db/tables/t"] = [vend]
    secret_catalog = RestCatalog("r", uri=rest.uri, token="catalog-secret")
    table = secret_catalog.load_table("db.t")
    props = table.io_properties
    assert seen_headers == ["vended-credentials"]
    # storage-credentials (the longest matching prefix) over config over the catalog's.
    assert props["s3.access-key-id"] == "best" and props["s3.region"] == "vended"
    assert props["s3.endpoint"] == "http://config"
    # The catalog's own credentials never go to the table's storage (or Spark executors).
    assert "token" not in props and "credential" not in props


def test_transaction_commit_unknown_keeps_files(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, _ = proxy
    rest.create_table("db.u", ROWS.schema)
    handler.faults["POST /v1/transactions/commit"] = [answer(Answer(502))]
    t1, t2 = rest.load_table("db.t").transaction(), rest.load_table("db.u").transaction()
    t1.append(ROWS)
    t2.append(ROWS)
    written = _written(t1.staged_metadata) + _written(t2.staged_metadata)
    with pytest.raises(CommitStateUnknownError, match=r"commit to tables 'db\.t', 'db\.u'"):
        rest.commit_transactions(t1, t2)
    assert all(Path(f).exists() for f in written)


# --- server-side scan planning: plan tasks, polling, failures, cancellation -----------------

PLAN = "POST /v1/namespaces/db/tables/t/plan"
TASKS = "POST /v1/namespaces/db/tables/t/tasks"


@pytest.fixture
def planned(backend: SqlCatalog) -> Iterator[tuple[Proxy, RestCatalog]]:
    """A server that hands out one file scan task per page (the rest as plan tasks), behind the
    proxy, and a client planning on the server; the table has three data files."""
    with ServedApp(app(backend, plan_tasks_per_page=1)) as served:
        handler = Proxy(served.uri)
        with StubServer(handler) as server:
            catalog = RestCatalog("r", uri=server.uri, **FAST, **{"scan-planning-mode": "server"})
            catalog.create_namespace("db")
            table = catalog.create_table("db.t", ROWS.schema)
            for row in range(3):
                table.append(ROWS.slice(row, 1))
            yield handler, catalog


def test_plan_tasks_are_fetched(planned: tuple[Proxy, RestCatalog]) -> None:
    handler, catalog = planned
    table = catalog.load_table("db.t")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert handler.count(PLAN) == 1 and handler.count(TASKS) == 2


def test_submitted_plan_is_polled(planned: tuple[Proxy, RestCatalog]) -> None:
    handler, catalog = planned
    completed: list[Any] = []

    def submit(seen: Seen, send: Callable[[], Answer]) -> Answer:
        # The server planned it at once; the client is told to come back for the result.
        completed.append(json.loads(send().encoded()))
        return Answer(200, {"status": "submitted", "plan-id": completed[0]["plan-id"]})

    def still_running(seen: Seen, send: Callable[[], Answer]) -> Answer:
        return Answer(200, {"status": "submitted", "plan-id": completed[0]["plan-id"]})

    def done(seen: Seen, send: Callable[[], Answer]) -> Answer:
        assert seen.path.endswith("/plan/" + completed[0]["plan-id"])
        return Answer(200, completed[0])

    handler.faults[PLAN] = [submit]
    handler.faults["GET /v1/namespaces/db/tables/t/plan/*"] = [still_running, done]
    rows = catalog.load_table("db.t").scan().to_arrow()
    assert sorted(rows.column("id").to_pylist()) == [1, 2, 3]
    polls = [k for k in handler.seen if k.startswith("GET /v1/namespaces/db/tables/t/plan/")]
    assert len(polls) == 2 and handler.count(TASKS) == 2


def test_failed_plan_raises_the_servers_error(planned: tuple[Proxy, RestCatalog]) -> None:
    from frazil.errors import BadRequestError

    handler, catalog = planned
    handler.faults[PLAN] = [
        answer(
            Answer(
                200,
                {
                    "status": "failed",
                    "error": {
                        "message": "cannot plan that",
                        "type": "BadRequestException",
                        "code": 400,
                    },
                },
            )
        )
    ]
    with pytest.raises(BadRequestError, match=r"plan a scan of table 'db\.t': cannot plan that"):
        catalog.load_table("db.t").scan().to_arrow()


def test_plan_abandoned_on_error_is_cancelled(planned: tuple[Proxy, RestCatalog]) -> None:
    from frazil.errors import ServiceFailureError

    handler, catalog = planned
    handler.faults[TASKS] = [answer(error(500, "RuntimeException", "tasks lost"))]
    with pytest.raises(ServiceFailureError, match="tasks lost"):
        catalog.load_table("db.t").scan().to_arrow()
    cancels = [k for k in handler.seen if k.startswith("DELETE /v1/namespaces/db/tables/t/plan/")]
    assert len(cancels) == 1


def test_table_token_from_the_load_config(
    rest: RestCatalog, proxy: tuple[Proxy, StubServer]
) -> None:
    handler, server = proxy
    seen: list[tuple[str, str | None]] = []

    def with_token(request: Seen, send: Callable[[], Answer]) -> Answer:
        reply = send()
        body = json.loads(reply.encoded())
        body["config"] = {"token": "table-token"}
        return Answer(reply.status, body, reply.headers)

    def record(request: Seen, send: Callable[[], Answer]) -> Answer:
        seen.append((request.method, request.headers.get("Authorization")))
        return send()

    handler.faults["GET /v1/namespaces/db/tables/t"] = [with_token]
    handler.faults[COMMIT] = [record]
    handler.faults["GET /v1/namespaces/db/tables"] = [record]
    catalog = RestCatalog("r", uri=server.uri, token="catalog-token")
    table = catalog.load_table("db.t")
    table.append(ROWS)
    catalog.list_tables("db")
    # The table's own requests carry its token; the namespace's the catalog's.
    assert seen == [("POST", "Bearer table-token"), ("GET", "Bearer catalog-token")]
    assert "token" not in table.io_properties
