"""``frazil serve`` with real clients other than Java: pyiceberg's RestCatalog, DuckDB's iceberg
extension and frazil's own REST client, each creating, writing, reading and evolving tables
through one server and each reading the others' writes (the Java peers:
tests/interop/test_rest_peers.py). The server runs as a subprocess (tests/rest_peers.py) over
a SQLite catalog, so every request crosses a real socket.

Also: auth (a bearer token, and OAuth2 client credentials at ``/v1/oauth/tokens``; a request
without a token is refused with 401), and 8 concurrent writers of mixed clients x 25 commits on
shared tables: every commit lands exactly once, lost races came back as 409 and were retried.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from rest_peers import (
    SERVED,
    Server,
    duckdb_attach,
    duckdb_connection,
    frazil_catalog,
    pyiceberg_catalog,
    serve,
)

UTC = dt.timezone.utc

# The columns every peer writes and reads (one of each common Iceberg type; the types a peer
# cannot write are tested where that peer writes).
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("amount", pa.decimal128(10, 2)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("flag", pa.bool_()),
        ("score", pa.float64()),
    ]
)
COLUMNS = tuple(SCHEMA.names)


def rows(start: int, count: int, tag: str = "r") -> pa.Table:
    """``count`` rows with ids ``start..``, every column a function of the id."""
    ids = list(range(start, start + count))
    base = dt.datetime(2024, 3, 1, tzinfo=UTC)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"{tag}{i}" for i in ids],
            "amount": pa.array([Decimal(i) / 4 for i in ids], pa.decimal128(10, 2)),
            "day": [(base + dt.timedelta(days=i % 5)).date() for i in ids],
            "ts": pa.array(
                [base + dt.timedelta(hours=7 * i) for i in ids], pa.timestamp("us", "UTC")
            ),
            "flag": [i % 3 == 0 for i in ids],
            "score": [i * 0.5 for i in ids],
        },
        schema=SCHEMA,
    )


def canon(table: Any, columns: tuple[str, ...] = COLUMNS) -> list[tuple[Any, ...]]:
    """A table's rows as sorted tuples of Python values (any engine's Arrow: large or small
    strings, any UTC zone name; datetimes compare as instants)."""
    if not isinstance(table, pa.Table):
        table = pa.table(table)
    listed = table.select(list(columns)).to_pylist()
    return sorted(
        (tuple(r[c] for c in columns) for r in listed),
        key=lambda t: tuple((v is None, v) for v in t),
    )


def duckdb_rows(con: Any, sql: str, columns: tuple[str, ...] = COLUMNS) -> list[tuple[Any, ...]]:
    return canon(con.sql(sql).to_arrow_table(), columns)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server without auth for the module; each test uses its own namespace."""
    with serve(tmp_path_factory.mktemp("rest-peers")) as running:
        yield running


@pytest.fixture
def namespace() -> str:
    return f"ns_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def duck(tmp_path: Path, server: Server) -> Iterator[Any]:
    con = duckdb_connection(tmp_path / "duckdb-extensions")
    con.sql("SET TimeZone = 'UTC'")
    duckdb_attach(con, server)
    try:
        yield con
    finally:
        con.close()


# --- cross-reads -----------------------------------------------------------------------------


def test_pyiceberg_writes_frazil_and_duckdb_read(server: Server, namespace: str, duck: Any) -> None:
    """pyiceberg creates a day-partitioned table and appends twice; frazil's client and DuckDB
    read the same rows at the same snapshot."""
    from pyiceberg.transforms import DayTransform

    py = pyiceberg_catalog(server)
    py.create_namespace(namespace)
    table = py.create_table(f"{namespace}.t", schema=SCHEMA)
    with table.update_spec() as spec:
        spec.add_field("ts", DayTransform(), "ts_day")
    table.append(rows(0, 20))
    table.append(rows(20, 15))
    expected = canon(rows(0, 35))
    assert canon(table.scan().to_arrow()) == expected
    snapshot = table.current_snapshot().snapshot_id

    fz = frazil_catalog(server).load_table(f"{namespace}.t")
    assert fz.current_snapshot().snapshot_id == snapshot
    assert [f.transform for f in fz.spec().fields] == ["day"]
    assert canon(fz.scan().to_arrow()) == expected
    assert duckdb_rows(duck, f"SELECT * FROM c.{namespace}.t") == expected
    assert duck.sql(f"SELECT count(*) FROM iceberg_snapshots(c.{namespace}.t)").fetchone() == (2,)


def test_frazil_appends_and_evolves_pyiceberg_and_duckdb_read(
    server: Server, namespace: str, duck: Any
) -> None:
    """frazil's client creates a table, appends, adds and renames columns, appends again;
    pyiceberg and DuckDB read the evolved schema, old rows null in the new column."""
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    table = fz.create_table(f"{namespace}.t", SCHEMA, properties={"format-version": "2"})
    table.append(rows(0, 10))
    with table.update_schema() as update:
        update.add_column("country", "string")
        update.rename_column("name", "label")
    evolved = rows(10, 5).rename_columns(["id", "label", *COLUMNS[2:]])
    evolved = evolved.append_column("country", pa.array(["fr", "de", None, "it", "es"]))
    table.append(evolved)

    columns = ("id", "label", "amount", "country")
    expected = sorted(
        [(i, f"r{i}", Decimal(i) / 4, None) for i in range(10)]
        + [
            (10 + k, f"r{10 + k}", Decimal(10 + k) / 4, c)
            for k, c in enumerate(["fr", "de", None, "it", "es"])
        ]
    )

    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert [f.name for f in py_table.schema().fields] == ["id", "label", *COLUMNS[2:], "country"]
    assert canon(py_table.scan().to_arrow(), columns) == expected
    assert py_table.current_snapshot().snapshot_id == table.current_snapshot().snapshot_id
    assert duckdb_rows(duck, f"SELECT * FROM c.{namespace}.t", columns) == expected
    # A filter on the renamed column is pushed down by each reader.
    assert canon(py_table.scan(row_filter="label = 'r12'").to_arrow(), columns) == [expected[12]]
    assert duckdb_rows(duck, f"SELECT * FROM c.{namespace}.t WHERE label = 'r12'", columns) == [
        expected[12]
    ]


def test_duckdb_creates_and_inserts_others_read(server: Server, namespace: str, duck: Any) -> None:
    """DuckDB creates a namespace and a table, inserts (two commits) and adds a column; frazil
    and pyiceberg read its rows; frazil appends after it and DuckDB reads that."""
    duck.sql(f"CREATE SCHEMA c.{namespace}")
    duck.sql(
        f"CREATE TABLE c.{namespace}.t (id BIGINT, name VARCHAR, amount DECIMAL(10, 2), "
        "day DATE, ts TIMESTAMPTZ, flag BOOLEAN, score DOUBLE)"
    )
    first = rows(0, 6)
    duck.register("first_rows", first)
    duck.sql(f"INSERT INTO c.{namespace}.t SELECT * FROM first_rows")
    duck.sql(f"INSERT INTO c.{namespace}.t SELECT * FROM first_rows WHERE id < 2")
    expected = canon(pa.concat_tables([first, first.slice(0, 2)]))

    fz = frazil_catalog(server).load_table(f"{namespace}.t")
    assert canon(fz.scan().to_arrow()) == expected
    assert len(fz.snapshots()) == 2
    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert canon(py_table.scan().to_arrow()) == expected

    fz.append(rows(100, 3))
    expected = sorted([*expected, *canon(rows(100, 3))])
    assert duckdb_rows(duck, f"SELECT * FROM c.{namespace}.t") == expected

    duck.sql(f"ALTER TABLE c.{namespace}.t ADD COLUMN note VARCHAR")
    duck.sql(f"INSERT INTO c.{namespace}.t (id, note) VALUES (500, 'from duckdb')")
    fz = frazil_catalog(server).load_table(f"{namespace}.t")
    assert fz.schema().find_field("note") is not None
    got = canon(fz.scan(row_filter="id >= 100").to_arrow(), ("id", "note"))
    assert got == [(100, None), (101, None), (102, None), (500, "from duckdb")]


def test_duckdb_deletes_and_updates_others_read(server: Server, namespace: str, duck: Any) -> None:
    """DuckDB's row-level DELETE and UPDATE on a table frazil wrote (merge-on-read, position
    deletes): frazil and pyiceberg read the rows DuckDB left."""
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    table = fz.create_table(
        f"{namespace}.t",
        SCHEMA,
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    table.append(rows(0, 10))
    duck.sql(f"DELETE FROM c.{namespace}.t WHERE id % 4 = 1")
    duck.sql(f"UPDATE c.{namespace}.t SET name = 'updated' WHERE id = 2")
    kept = [r for r in canon(rows(0, 10)) if r[0] % 4 != 1]
    expected = sorted((r[0], "updated" if r[0] == 2 else r[1]) for r in kept)
    columns = ("id", "name")
    assert duckdb_rows(duck, f"SELECT * FROM c.{namespace}.t", columns) == expected
    assert canon(fz.load_table(f"{namespace}.t").scan().to_arrow(), columns) == expected
    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert canon(py_table.scan().to_arrow(), columns) == expected


# --- auth ------------------------------------------------------------------------------------

TOKEN = "s3cr3t-token"
CLIENT, CLIENT_SECRET = "peer-client", "peer-secret"


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that wants a bearer token: ``TOKEN``, or one issued at /v1/oauth/tokens to the
    OAuth2 client ``CLIENT``."""
    with serve(
        tmp_path_factory.mktemp("rest-peers-auth"),
        token=TOKEN,
        credential=f"{CLIENT}:{CLIENT_SECRET}",
    ) as running:
        yield running


def test_requests_without_a_token_are_refused(auth_server: Server) -> None:
    """Without a token, or with a wrong one, every catalog route answers 401 with an
    ErrorModel body (the server leaves only /v1/config and /v1/oauth/tokens open)."""
    namespace = f"guard_{uuid.uuid4().hex[:8]}"
    status, _ = auth_server.request(
        "POST", "/v1/namespaces", {"namespace": [namespace]}, token=TOKEN
    )
    assert status == 200
    routes = [
        ("GET", "/v1/namespaces", None),
        ("GET", f"/v1/namespaces/{namespace}", None),
        ("POST", "/v1/namespaces", {"namespace": [f"{namespace}_x"]}),
        ("GET", f"/v1/namespaces/{namespace}/tables", None),
        ("POST", f"/v1/namespaces/{namespace}/tables/t", {"requirements": [], "updates": []}),
        ("DELETE", f"/v1/namespaces/{namespace}", None),
    ]
    for token in (None, "wrong"):
        for method, path, body in routes:
            status, answer = auth_server.request(method, path, body, token=token)
            assert status == 401, (method, path, answer)
            assert answer["error"]["code"] == 401
            assert answer["error"]["type"] == "NotAuthorizedException"
    # Nothing happened: the namespace is there, the other was not created.
    status, listed = auth_server.request("GET", "/v1/namespaces", token=TOKEN)
    assert status == 200
    assert [namespace] in listed["namespaces"]
    assert [f"{namespace}_x"] not in listed["namespaces"]
    status, _ = auth_server.request("GET", "/v1/config")
    assert status == 200


def test_oauth_client_credentials(auth_server: Server) -> None:
    """The client-credentials grant (RFC 6749 4.4, the REST spec's /v1/oauth/tokens) gives a
    token the other endpoints take; a wrong secret is refused."""
    import requests

    granted = requests.post(
        auth_server.oauth_uri,
        data={
            "grant_type": "client_credentials",
            "client_id": CLIENT,
            "client_secret": CLIENT_SECRET,
            "scope": "catalog",
        },
        timeout=30,
    )
    assert granted.status_code == 200, granted.text
    body = granted.json()
    assert body["token_type"].lower() == "bearer"
    status, _ = auth_server.request("GET", "/v1/namespaces", token=body["access_token"])
    assert status == 200
    refused = requests.post(
        auth_server.oauth_uri,
        data={"grant_type": "client_credentials", "client_id": CLIENT, "client_secret": "no"},
        timeout=30,
    )
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "invalid_client"


def test_clients_with_auth(auth_server: Server, tmp_path: Path) -> None:
    """Each client authenticated both ways writes and reads: pyiceberg with ``token=`` creates
    and appends, frazil with ``credential=`` (the OAuth2 client-credentials grant) appends,
    DuckDB with client credentials inserts; pyiceberg by credential, frazil by token and DuckDB
    by token read everything. Without a valid token each is refused (401)."""
    from frazil.errors import NotAuthorizedError
    from pyiceberg.exceptions import OAuthError, UnauthorizedError

    namespace = f"auth_{uuid.uuid4().hex[:8]}"
    credential = f"{CLIENT}:{CLIENT_SECRET}"
    writer = pyiceberg_catalog(auth_server)
    writer.create_namespace(namespace)
    writer.create_table(f"{namespace}.t", schema=SCHEMA).append(rows(0, 4))
    frazil_catalog(auth_server, credential=credential).load_table(f"{namespace}.t").append(
        rows(4, 2)
    )
    con = duckdb_connection(tmp_path / "duckdb-extensions")
    try:
        con.sql("SET TimeZone = 'UTC'")
        con.sql(
            f"ATTACH '{SERVED}' AS by_client (TYPE iceberg, ENDPOINT '{auth_server.uri}', "
            f"CLIENT_ID '{CLIENT}', CLIENT_SECRET '{CLIENT_SECRET}', "
            f"OAUTH2_SERVER_URI '{auth_server.oauth_uri}')"
        )
        con.register("more", rows(6, 2))
        con.sql(f"INSERT INTO by_client.{namespace}.t SELECT * FROM more")
        expected = canon(rows(0, 8))

        duckdb_attach(con, auth_server, "by_token")
        assert duckdb_rows(con, f"SELECT * FROM by_token.{namespace}.t") == expected
        by_credential = pyiceberg_catalog(
            auth_server, credential=credential, **{"oauth2-server-uri": auth_server.oauth_uri}
        )
        assert canon(by_credential.load_table(f"{namespace}.t").scan().to_arrow()) == expected
        fz = frazil_catalog(auth_server).load_table(f"{namespace}.t")
        assert canon(fz.scan().to_arrow()) == expected
        assert len(fz.snapshots()) == 3

        # /v1/config is open, so DuckDB attaches; its first table request is refused.
        con.sql(
            f"ATTACH '{SERVED}' AS anonymous (TYPE iceberg, ENDPOINT '{auth_server.uri}', "
            "AUTHORIZATION_TYPE 'none')"
        )
        with pytest.raises(Exception, match=r"Unauthorized_401 .*needs a bearer token"):
            con.sql(f"SELECT * FROM anonymous.{namespace}.t").fetchall()
    finally:
        con.close()

    with pytest.raises(UnauthorizedError, match="the token is unknown or expired"):
        pyiceberg_catalog(auth_server, token="wrong").load_table(f"{namespace}.t")
    with pytest.raises(OAuthError, match="invalid_client"):
        pyiceberg_catalog(
            auth_server,
            credential=f"{CLIENT}:wrong",
            **{"oauth2-server-uri": auth_server.oauth_uri},
        ).load_table(f"{namespace}.t")
    with pytest.raises(NotAuthorizedError, match="the token is unknown or expired"):
        frazil_catalog(auth_server, token="wrong").load_table(f"{namespace}.t")
    with pytest.raises(NotAuthorizedError, match="invalid_client"):
        frazil_catalog(auth_server, credential=f"{CLIENT}:wrong").load_table(f"{namespace}.t")


# --- concurrency -----------------------------------------------------------------------------

COMMITS = 25


def _writer_process(client: str, server: Server, writer: int, tables: list[str]) -> Any:
    token = server.token or "-"
    script = Path(__file__).resolve().parents[2] / "rest_peers.py"
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            client,
            server.uri,
            token,
            str(writer),
            str(COMMITS),
            *tables,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_eight_concurrent_writers(server: Server) -> None:
    """8 writers at once, 25 one-row appends each, alternating between two shared tables:
    frazil client threads in this process, frazil client processes and pyiceberg processes.
    Every commit lands exactly once (one snapshot and one row each, parents chained), and the
    lost races were 409 answers that the writers retried."""
    from rest_peers import (
        RETRY_PROPERTIES,
        WRITER_SCHEMA_FIELDS,
        WriterReport,
        frazil_write,
        verify_concurrent_writes,
    )

    namespace = f"conc_{uuid.uuid4().hex[:8]}"
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    schema = pa.schema([(n, getattr(pa, k)()) for n, k in WRITER_SCHEMA_FIELDS])
    tables = [f"{namespace}.a", f"{namespace}.b"]
    for name in tables:
        fz.create_table(name, schema, properties={"format-version": "2", **RETRY_PROPERTIES})

    plan = {0: "thread", 1: "thread", 2: "frazil", 3: "frazil", 4: "frazil"}
    plan.update({5: "pyiceberg", 6: "pyiceberg", 7: "pyiceberg"})
    started = time.monotonic()
    processes = {
        w: _writer_process(kind, server, w, tables) for w, kind in plan.items() if kind != "thread"
    }
    reports: dict[int, WriterReport] = {}
    errors: list[BaseException] = []

    def run_thread(writer: int) -> None:
        try:
            reports[writer] = frazil_write(server.uri, server.token, tables, writer, COMMITS)
        except BaseException as error:  # reported below, with the processes' outcome
            errors.append(error)

    threads = [
        threading.Thread(target=run_thread, args=(w,)) for w, k in plan.items() if k == "thread"
    ]
    for thread in threads:
        thread.start()
    for writer, process in processes.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, f"writer {writer} ({plan[writer]}) failed:\n{err}"
        data = json.loads(out.strip().splitlines()[-1])
        reports[writer] = WriterReport(**data)
    for thread in threads:
        thread.join(timeout=600)
    assert not errors, errors
    elapsed = time.monotonic() - started
    sys.stderr.write(f"\n[rest-peers] 8 writers x {COMMITS} commits in {elapsed:.1f}s\n")

    summary = verify_concurrent_writes(server, fz, tables, list(plan), reports, COMMITS)
    sys.stderr.write(f"[rest-peers] {summary}\n")


def test_duckdb_partitioned_and_typed_tables(server: Server, namespace: str, duck: Any) -> None:
    """DuckDB creates a table partitioned by day and bucket, and one of the other types it
    writes (uuid, time, binary, timestamp without zone, struct, list, map), and on a v3 table
    timestamp_ns; frazil and pyiceberg read its values; frazil appends and DuckDB reads."""
    import uuid as uuid_module

    duck.sql(f"CREATE SCHEMA c.{namespace}")
    duck.sql(
        f"CREATE TABLE c.{namespace}.p (id BIGINT, ts TIMESTAMPTZ, cat VARCHAR) "
        "PARTITIONED BY (day(ts), bucket(4, id))"
    )
    duck.sql(
        f"INSERT INTO c.{namespace}.p VALUES (1, TIMESTAMPTZ '2024-01-01 10:00:00+00', 'a'), "
        "(2, TIMESTAMPTZ '2024-01-02 10:00:00+00', 'b'), "
        "(3, TIMESTAMPTZ '2024-01-02 11:00:00+00', 'c')"
    )
    fz = frazil_catalog(server)
    partitioned = fz.load_table(f"{namespace}.p")
    assert [(f.transform, f.source_id) for f in partitioned.spec().fields] == [
        ("day", 2),
        ("bucket[4]", 1),
    ]
    # DuckDB's partition values are Java's: frazil prunes the other day's file.
    scan = partitioned.scan(row_filter="ts >= '2024-01-02T00:00:00+00:00'")
    assert sorted(r["id"] for r in scan.to_arrow().to_pylist()) == [2, 3]
    assert len(list(scan.plan_files())) < len(list(partitioned.scan().plan_files()))

    duck.sql(
        f"CREATE TABLE c.{namespace}.typed (id BIGINT, u UUID, t TIME, b BLOB, ts TIMESTAMP, "
        "s STRUCT(a INTEGER, b VARCHAR), l INTEGER[], m MAP(VARCHAR, INTEGER))"
    )
    duck.sql(
        f"INSERT INTO c.{namespace}.typed VALUES (1, '6f0b7cbe-9a45-4a16-9b1a-2a8a8d5a0c11', "
        "TIME '12:34:56.789', '\\xAA\\xBB'::BLOB, TIMESTAMP '2024-01-01 01:02:03.456789', "
        "{'a': 1, 'b': 'x'}, [1, 2], MAP {'k': 1})"
    )
    expected = {
        "id": 1,
        "u": uuid_module.UUID("6f0b7cbe-9a45-4a16-9b1a-2a8a8d5a0c11"),
        "t": dt.time(12, 34, 56, 789000),
        "b": b"\xaa\xbb",
        "ts": dt.datetime(2024, 1, 1, 1, 2, 3, 456789),
        "s": {"a": 1, "b": "x"},
        "l": [1, 2],
        "m": [("k", 1)],
    }
    typed = fz.load_table(f"{namespace}.typed")
    kinds = [type(f.field_type).__name__ for f in typed.schema().fields]
    assert kinds == [
        "LongType",
        "UUIDType",
        "TimeType",
        "BinaryType",
        "TimestampType",
        "StructType",
        "ListType",
        "MapType",
    ]
    assert typed.scan().to_arrow().to_pylist() == [expected]
    py_rows = pyiceberg_catalog(server).load_table(f"{namespace}.typed").scan().to_arrow()
    assert py_rows.to_pylist() == [expected]

    # frazil appends the same types; DuckDB reads them.
    second = {**expected, "id": 2, "u": uuid_module.UUID(int=7), "l": [], "m": []}
    typed.append(pa.Table.from_pylist([second], schema=typed.scan().to_arrow().schema))
    got = duck.sql(f"SELECT id, u, l, s.b AS sb FROM c.{namespace}.typed ORDER BY id").fetchall()
    assert got == [(1, expected["u"], [1, 2], "x"), (2, uuid_module.UUID(int=7), [], "x")]

    duck.sql(
        f"CREATE TABLE c.{namespace}.ns (id BIGINT, t TIMESTAMP_NS) WITH ('format-version' = '3')"
    )
    duck.sql(
        f"INSERT INTO c.{namespace}.ns VALUES (1, TIMESTAMP_NS '2024-01-01 00:00:00.123456789')"
    )
    nanos = fz.load_table(f"{namespace}.ns")
    assert nanos.metadata.format_version == 3
    (value,) = nanos.scan().to_arrow().column("t").cast(pa.int64()).to_pylist()
    assert value == 1704067200_123456789


def test_what_duckdb_cannot_write(server: Server, namespace: str, duck: Any) -> None:
    """What DuckDB 1.5.5's iceberg extension refuses or fails at, with its errors: types with
    no Iceberg equivalent (its own check), timestamp_ns on a v2 table (the server's 400, as the
    spec says: v3 only), and on a local warehouse a table created and written in one
    transaction (CREATE TABLE AS, or CREATE and INSERT before COMMIT): DuckDB writes its
    manifest into the staged table's metadata/ directory, which no one has created yet."""
    duck.sql(f"CREATE SCHEMA c.{namespace}")
    for kind in ("TINYINT", "SMALLINT", "UBIGINT", "INTERVAL"):
        with pytest.raises(Exception, match=f"Column type {kind} is not a valid Iceberg Type"):
            duck.sql(f"CREATE TABLE c.{namespace}.small (i {kind})")
    with pytest.raises(Exception, match="timestamp_ns, which needs format version 3"):
        duck.sql(f"CREATE TABLE c.{namespace}.ns (t TIMESTAMP_NS)")
    with pytest.raises(Exception, match=r"Cannot open file .*/metadata/.*-m0\.avro"):
        duck.sql(f"CREATE TABLE c.{namespace}.ctas AS SELECT range AS id FROM range(3)")
    assert not frazil_catalog(server).table_exists(f"{namespace}.ctas")
    # Created first, then written: fine.
    duck.sql(f"CREATE TABLE c.{namespace}.ctas (id BIGINT)")
    duck.sql(f"INSERT INTO c.{namespace}.ctas SELECT range FROM range(3)")
    got = frazil_catalog(server).load_table(f"{namespace}.ctas").scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == [0, 1, 2]
