"""``frazil serve`` with Iceberg Java's RESTCatalog (1.10.2, in Spark 3.5) beside pyiceberg,
DuckDB and frazil's own REST client: each creates, writes, reads and evolves tables through one
server, and each reads the others' writes. The server runs as a subprocess
(tests/rest_peers.py); Spark's catalogs are added to the session at run time
(``spark.sql.catalog.<name>.type=rest``), one per server.

Also Java's OAuth2 client-credentials flow (``credential=client:secret``) and its refusal
without a token, and Spark as one of 8 concurrent writers.
"""

from __future__ import annotations

import datetime as dt
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
    RETRY_PROPERTIES,
    WRITER_SCHEMA_FIELDS,
    Server,
    WriterReport,
    configure_spark_catalog,
    duckdb_attach,
    duckdb_connection,
    frazil_catalog,
    frazil_write,
    pyiceberg_catalog,
    pyiceberg_write,
    serve,
    spark_rest_options,
    verify_concurrent_writes,
)

pytestmark = pytest.mark.interop

UTC = dt.timezone.utc
TOKEN = "java-peer-token"
CLIENT, CLIENT_SECRET = "java-client", "java-secret"


def _canon(records: list[dict[str, Any]], columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r[c] for c in columns) for r in records),
        key=lambda t: tuple((v is None, v) for v in t),
    )


def canon(table: Any, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return _canon(table.select(list(columns)).to_pylist(), columns)


def spark_rows(spark: Any, sql: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Spark's rows as Python values; Spark hands timestamps back naive in the session zone
    (UTC in these tests), made aware here to compare with the others' instants."""
    out = []
    for row in spark.sql(sql).collect():
        record = row.asDict()
        for key, value in record.items():
            if isinstance(value, dt.datetime) and value.tzinfo is None:
                record[key] = value.replace(tzinfo=UTC)
        out.append(record)
    return _canon(out, columns)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server wanting ``TOKEN`` (or a token issued to the OAuth2 client ``CLIENT``)."""
    with serve(
        tmp_path_factory.mktemp("rest-peers-java"),
        token=TOKEN,
        credential=f"{CLIENT}:{CLIENT_SECRET}",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def rest(spark: Any, server: Server) -> str:
    """Spark's catalog on the server, authenticated by Java's OAuth2 client-credentials flow
    against the server's /v1/oauth/tokens."""
    name = f"rest{uuid.uuid4().hex[:6]}"
    configure_spark_catalog(
        spark, name, spark_rest_options(server, credential=f"{CLIENT}:{CLIENT_SECRET}")
    )
    return name


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


COLUMNS = ("id", "name", "amount", "day", "ts")


def _spark_expected(ids: range, tag: str) -> list[tuple[Any, ...]]:
    base = dt.datetime(2024, 3, 1, tzinfo=UTC)
    return sorted(
        (
            i,
            f"{tag}{i}",
            Decimal(i) / 4,
            (base + dt.timedelta(days=i % 5)).date(),
            base + dt.timedelta(hours=7 * i),
        )
        for i in ids
    )


def _spark_insert(spark: Any, table: str, ids: range, tag: str) -> None:
    values = ", ".join(
        f"({i}, '{tag}{i}', CAST({i} / 4 AS DECIMAL(10, 2)), "
        f"date_add(DATE '2024-03-01', {i % 5}), "
        f"TIMESTAMP '2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, {7 * i}, 0, 0))"
        for i in ids
    )
    spark.sql(f"INSERT INTO {table} VALUES {values}")


def test_spark_writes_pyiceberg_frazil_duckdb_read(
    spark: Any, rest: str, server: Server, namespace: str, duck: Any
) -> None:
    """Java creates a namespace and a day-partitioned table and inserts twice; pyiceberg,
    frazil's client and DuckDB read the same rows at the same snapshot."""
    spark.sql(f"CREATE NAMESPACE {rest}.{namespace}")
    table = f"{rest}.{namespace}.t"
    spark.sql(
        f"CREATE TABLE {table} (id BIGINT, name STRING, amount DECIMAL(10, 2), day DATE, "
        "ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2')"
    )
    _spark_insert(spark, table, range(0, 12), "s")
    _spark_insert(spark, table, range(12, 20), "s")
    expected = _spark_expected(range(20), "s")
    assert spark_rows(spark, f"SELECT * FROM {table}", COLUMNS) == expected
    ((java_snapshot,),) = spark.sql(
        f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()

    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert py_table.current_snapshot().snapshot_id == java_snapshot
    assert canon(py_table.scan().to_arrow(), COLUMNS) == expected
    fz = frazil_catalog(server).load_table(f"{namespace}.t")
    assert fz.current_snapshot().snapshot_id == java_snapshot
    assert [f.transform for f in fz.spec().fields] == ["day"]
    assert canon(fz.scan().to_arrow(), COLUMNS) == expected
    assert canon(fz.scan(row_filter="ts < '2024-03-02T00:00:00+00:00'").to_arrow(), COLUMNS) == [
        r for r in expected if r[4] < dt.datetime(2024, 3, 2, tzinfo=UTC)
    ]
    got = duck.sql(f"SELECT * FROM c.{namespace}.t").to_arrow_table()
    assert canon(got, COLUMNS) == expected


def test_frazil_evolves_spark_and_pyiceberg_read_spark_writes_after(
    spark: Any, rest: str, server: Server, namespace: str
) -> None:
    """frazil's client creates, appends, adds and renames columns and appends again; Java and
    pyiceberg read the evolved table; Java then inserts and frazil reads Java's commit."""
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    table = fz.create_table(f"{namespace}.t", schema, properties={"format-version": "2"})
    table.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}, schema=schema))
    with table.update_schema() as update:
        update.add_column("score", "double")
        update.rename_column("name", "label")
    table.append(
        pa.table({"id": [4, 5], "label": ["d", "e"], "score": [0.5, None]}),
    )
    expected = [(1, "a", None), (2, "b", None), (3, "c", None), (4, "d", 0.5), (5, "e", None)]
    columns = ("id", "label", "score")
    java_table = f"{rest}.{namespace}.t"
    assert spark_rows(spark, f"SELECT * FROM {java_table}", columns) == expected
    described = [r.col_name for r in spark.sql(f"DESCRIBE TABLE {java_table}").collect()]
    assert described[:3] == ["id", "label", "score"]
    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert canon(py_table.scan().to_arrow(), columns) == expected

    spark.sql(f"INSERT INTO {java_table} VALUES (6, 'f', 6.0)")
    spark.sql(f"ALTER TABLE {java_table} ADD COLUMN note STRING")
    spark.sql(f"INSERT INTO {java_table} VALUES (7, 'g', 7.0, 'from java')")
    reloaded = fz.load_table(f"{namespace}.t")
    got = canon(reloaded.scan().to_arrow(), (*columns, "note"))
    assert got == [*[(*r, None) for r in expected], (6, "f", 6.0, None), (7, "g", 7.0, "from java")]
    assert len(reloaded.snapshots()) == 4


def test_pyiceberg_and_duckdb_write_spark_reads(
    spark: Any, rest: str, server: Server, namespace: str, duck: Any
) -> None:
    """pyiceberg creates and appends; DuckDB inserts into the same table; Java reads both."""
    py = pyiceberg_catalog(server)
    py.create_namespace(namespace)
    schema = pa.schema(
        [("id", pa.int64()), ("name", pa.string()), ("ts", pa.timestamp("us", "UTC"))]
    )
    table = py.create_table(f"{namespace}.t", schema=schema)
    ts = dt.datetime(2024, 5, 1, 12, tzinfo=UTC)
    table.append(pa.table({"id": [1, 2], "name": ["p1", "p2"], "ts": [ts, ts]}, schema=schema))
    duck.sql(
        f"INSERT INTO c.{namespace}.t VALUES (3, 'd3', TIMESTAMPTZ '2024-05-01 12:00:00+00'), "
        "(4, 'd4', NULL)"
    )
    expected = [(1, "p1", ts), (2, "p2", ts), (3, "d3", ts), (4, "d4", None)]
    columns = ("id", "name", "ts")
    assert spark_rows(spark, f"SELECT * FROM {rest}.{namespace}.t", columns) == expected
    ((count,),) = spark.sql(f"SELECT count(*) FROM {rest}.{namespace}.t.snapshots").collect()
    assert count == 2


def test_spark_token_and_refusal(spark: Any, server: Server, namespace: str) -> None:
    """Java with the static ``token=`` reads and writes; Java with a wrong client secret is
    refused a token, and without a token refused by the server (401, Java's
    NotAuthorizedException)."""
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    schema = pa.schema([("id", pa.int64())])
    fz.create_table(f"{namespace}.t", schema).append(pa.table({"id": [7, 8]}, schema=schema))

    by_token = f"tok{uuid.uuid4().hex[:6]}"
    configure_spark_catalog(spark, by_token, spark_rest_options(server))
    assert [
        r.id for r in spark.sql(f"SELECT id FROM {by_token}.{namespace}.t ORDER BY id").collect()
    ] == [7, 8]
    spark.sql(f"INSERT INTO {by_token}.{namespace}.t VALUES (9)")
    reread = fz.load_table(f"{namespace}.t").scan().to_arrow()
    assert sorted(reread.column("id").to_pylist()) == [7, 8, 9]

    wrong = f"bad{uuid.uuid4().hex[:6]}"
    configure_spark_catalog(
        spark, wrong, spark_rest_options(server, credential=f"{CLIENT}:not-the-secret")
    )
    with pytest.raises(Exception) as refused_grant:
        spark.sql(f"SELECT id FROM {wrong}.{namespace}.t").collect()
    assert (
        "org.apache.iceberg.exceptions.NotAuthorizedException: Not authorized: invalid_client: "
        "unknown client or wrong secret"
    ) in str(refused_grant.value)

    anonymous = f"anon{uuid.uuid4().hex[:6]}"
    options = spark_rest_options(server)
    del options["token"]
    configure_spark_catalog(spark, anonymous, options)
    with pytest.raises(Exception) as refused:
        spark.sql(f"SELECT id FROM {anonymous}.{namespace}.t").collect()
    assert (
        "org.apache.iceberg.exceptions.NotAuthorizedException: Not authorized: not authorized: "
        "this server needs a bearer token"
    ) in str(refused.value)


COMMITS = 25


def test_eight_writers_with_spark(spark: Any, rest: str, server: Server) -> None:
    """8 concurrent writers x 25 one-row commits on two shared tables: Java through Spark SQL,
    frazil client threads and pyiceberg threads. Every commit lands exactly once."""
    namespace = f"conc_{uuid.uuid4().hex[:8]}"
    fz = frazil_catalog(server)
    fz.create_namespace(namespace)
    schema = pa.schema([(n, getattr(pa, k)()) for n, k in WRITER_SCHEMA_FIELDS])
    tables = [f"{namespace}.a", f"{namespace}.b"]
    for name in tables:
        fz.create_table(name, schema, properties={"format-version": "2", **RETRY_PROPERTIES})

    reports: dict[int, WriterReport] = {}
    errors: list[BaseException] = []

    def spark_writer(writer: int) -> None:
        for commit in range(COMMITS):
            name = tables[(commit + writer) % 2]
            spark.sql(
                f"INSERT INTO {rest}.{name} VALUES ({writer * 1000 + commit}, {writer}, {commit})"
            )

    def run(writer: int, kind: str) -> None:
        try:
            if kind == "spark":
                spark_writer(writer)
            elif kind == "frazil":
                reports[writer] = frazil_write(server.uri, server.token, tables, writer, COMMITS)
            else:
                reports[writer] = pyiceberg_write(server.uri, server.token, tables, writer, COMMITS)
        except BaseException as error:
            errors.append(error)

    plan = {0: "spark", 1: "frazil", 2: "frazil", 3: "frazil", 4: "pyiceberg"}
    plan.update({5: "pyiceberg", 6: "frazil", 7: "pyiceberg"})
    started = time.monotonic()
    threads = [threading.Thread(target=run, args=item) for item in plan.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    assert not errors, errors
    sys.stderr.write(f"\n[rest-peers] 8 writers with Spark in {time.monotonic() - started:.1f}s\n")

    summary = verify_concurrent_writes(server, fz, tables, list(plan), reports, COMMITS)
    sys.stderr.write(f"[rest-peers] with Spark: {summary}\n")
    for name in tables:
        # Java reads every writer's rows.
        rows = spark.sql(f"SELECT writer, count(*) AS n FROM {rest}.{name} GROUP BY writer")
        counts = {r.writer: r.n for r in rows.collect()}
        assert counts == {w: (COMMITS + (tables.index(name) + w + 1) % 2) // 2 for w in plan}


def test_spark_evolves_partitions_and_deletes_others_read(
    spark: Any, rest: str, server: Server, namespace: str, duck: Any
) -> None:
    """Java evolves the partition spec and deletes and updates rows merge-on-read (position
    delete files); frazil, pyiceberg and DuckDB read what Java left. DuckDB deletes from a
    table Java partitioned once, and Java reads DuckDB's delete; on the evolved table DuckDB's
    DELETE fails (its own error: it builds one partition struct of every spec's fields by name,
    and a field kept across specs is there twice)."""
    spark.sql(f"CREATE NAMESPACE {rest}.{namespace}")
    table = f"{rest}.{namespace}.t"
    properties = (
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read')"
    )
    create = (
        "(id BIGINT, name STRING, amount DECIMAL(10, 2), day DATE, ts TIMESTAMP) USING iceberg "
        f"PARTITIONED BY (bucket(4, id)) {properties}"
    )
    spark.sql(f"CREATE TABLE {table} {create}")
    _spark_insert(spark, table, range(0, 10), "s")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION FIELD days(ts)")
    _spark_insert(spark, table, range(10, 20), "s")
    spark.sql(f"DELETE FROM {table} WHERE id % 3 = 0")
    spark.sql(f"UPDATE {table} SET name = 'updated' WHERE id = 4")
    expected = [
        (r[0], "updated" if r[0] == 4 else r[1], *r[2:])
        for r in _spark_expected(range(20), "s")
        if r[0] % 3 != 0
    ]
    assert spark_rows(spark, f"SELECT * FROM {table}", COLUMNS) == expected

    fz = frazil_catalog(server).load_table(f"{namespace}.t")
    assert [[f.transform for f in s.fields] for s in fz.specs().values()] == [
        ["bucket[4]"],
        ["bucket[4]", "day"],
    ]
    assert any(t.delete_files for t in fz.scan().plan_files())
    assert canon(fz.scan().to_arrow(), COLUMNS) == expected
    py_table = pyiceberg_catalog(server).load_table(f"{namespace}.t")
    assert canon(py_table.scan().to_arrow(), COLUMNS) == expected
    got = duck.sql(f"SELECT * FROM c.{namespace}.t").to_arrow_table()
    assert canon(got, COLUMNS) == expected
    with pytest.raises(Exception, match='duplicate name "id_bucket" in struct'):
        duck.sql(f"DELETE FROM c.{namespace}.t WHERE id = 5")
    assert spark_rows(spark, f"SELECT * FROM {table}", COLUMNS) == expected

    once = f"{rest}.{namespace}.once"
    spark.sql(f"CREATE TABLE {once} {create}")
    _spark_insert(spark, once, range(0, 10), "s")
    spark.sql(f"DELETE FROM {once} WHERE id = 0")
    duck.sql(f"DELETE FROM c.{namespace}.once WHERE id IN (5, 6)")
    duck.sql(f"UPDATE c.{namespace}.once SET name = 'duck' WHERE id = 7")
    expected = [
        (r[0], "duck" if r[0] == 7 else r[1], *r[2:])
        for r in _spark_expected(range(10), "s")
        if r[0] not in (0, 5, 6)
    ]
    assert spark_rows(spark, f"SELECT * FROM {once}", COLUMNS) == expected
    reread = frazil_catalog(server).load_table(f"{namespace}.once")
    assert canon(reread.scan().to_arrow(), COLUMNS) == expected
