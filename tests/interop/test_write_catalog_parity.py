"""Writes shared with Apache Iceberg Java through one catalog: JdbcCatalog on the same SQLite
file and on the same PostgreSQL database as frazil's SqlCatalog, HadoopCatalog on the same
warehouse as frazil's FileSystemCatalog.

Java creates a table and inserts; frazil appends, overwrites and deletes in it; Java reads the
same rows and the same snapshots; Java commits after frazil (an insert and a delete) and frazil
reads the result. And the final table of a concurrent-append run (forked frazil writers) is read
by Java with every row."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from concurrent_appends import open_catalog, run_concurrent_appends
from test_catalog_parity import _configure, _pair, _renew_spark_catalogs, _rows

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def _data(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "hadoop"])
def test_frazil_writes_in_a_java_table(
    kind: str, spark: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    catalog = _pair(kind, spark, tmp_path, request)
    name = catalog.name
    spark.sql(f"CREATE NAMESPACE {name}.db")
    spark.sql(f"CREATE TABLE {name}.db.t (id bigint, name string) USING iceberg")
    spark.sql(f"INSERT INTO {name}.db.t VALUES (1, 'n1'), (2, 'n2'), (3, 'n3')")

    table = catalog.load_table("db.t")
    table.append(_data(4, 5))
    table.overwrite(_data(20), "id = 2")  # copy-on-write of Java's file
    table.delete("id = 5")  # copy-on-write too: an overwrite
    expected = [(1, "n1"), (3, "n3"), (4, "n4"), (20, "n20")]
    ours = sorted(
        tuple(r.values()) for r in catalog.load_table("db.t").scan().to_arrow().to_pylist()
    )
    assert ours == expected

    _renew_spark_catalogs(kind, spark)
    assert _rows(spark, f"SELECT id, name FROM {name}.db.t ORDER BY id") == expected
    java_snapshots = _rows(
        spark, f"SELECT snapshot_id, operation FROM {name}.db.t.snapshots ORDER BY committed_at"
    )
    frazil_table = catalog.load_table("db.t")
    assert java_snapshots == [
        (s.snapshot_id, s.summary["operation"] if s.summary else None)
        for s in sorted(frazil_table.snapshots(), key=lambda s: s.sequence_number)
    ]
    assert [op for _, op in java_snapshots] == ["append", "append", "overwrite", "overwrite"]
    java_files = _rows(spark, f"SELECT file_path, record_count FROM {name}.db.t.files")
    frazil_files = [
        (t.file.file_path, t.file.record_count) for t in frazil_table.scan().plan_files()
    ]
    assert sorted(java_files) == sorted(frazil_files)

    # Java commits after frazil; frazil reads the result.
    spark.sql(f"INSERT INTO {name}.db.t VALUES (6, 'n6')")
    spark.sql(f"DELETE FROM {name}.db.t WHERE id = 1")
    after = catalog.load_table("db.t")
    rows = sorted(tuple(r.values()) for r in after.scan().to_arrow().to_pylist())
    assert rows == [(3, "n3"), (4, "n4"), (6, "n6"), (20, "n20")]
    assert len(after.snapshots()) == 6
    # ...and frazil again after Java.
    after.append(_data(7))
    _renew_spark_catalogs(kind, spark)
    assert _rows(spark, f"SELECT count(*) FROM {name}.db.t") == [(5,)]


def test_java_reads_every_row_of_concurrent_appends(spark: Any, tmp_path: Path) -> None:
    workers, commits = 4, 5
    root = str(tmp_path)
    name = f"cc{uuid.uuid4().hex[:6]}"
    _configure(
        spark,
        name,
        {
            "type": "jdbc",
            "warehouse": f"{root}/wh",
            "jdbc.schema-version": "V1",
            "uri": f"jdbc:sqlite:{root}/catalog.db",
        },
    )
    run_concurrent_appends("sqlite", root, name, workers, commits)
    expected = [(w, s) for w in range(workers) for s in range(commits)]
    assert _rows(spark, f"SELECT writer, seq FROM {name}.db.t ORDER BY writer, seq") == expected
    history = _rows(
        spark, f"SELECT snapshot_id, parent_id FROM {name}.db.t.history ORDER BY made_current_at"
    )
    frazil = open_catalog("sqlite", root, name).load_table("db.t")
    snapshots = sorted(frazil.snapshots(), key=lambda s: s.sequence_number)
    assert history == [(s.snapshot_id, s.parent_snapshot_id) for s in snapshots]
