"""Cases shared by the Spark 3.5 (tests/interop/test_spark_row_level.py) and Spark 4.3
(tests/spark4/test_row_level_spark4.py) tests of ``frazil.spark.merge`` and
``frazil.spark.rewrite_data_files``: twin tables, one changed locally and one on Spark with the
same inputs, and what must agree between them (not a package: the tests put this directory on
``sys.path``). Nothing here imports pyspark at import time."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from frazil.catalog.sql import SqlCatalog
from frazil.expressions import col
from frazil.table import Table

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), False),
        pa.field("cat", pa.string()),
        pa.field("v", pa.float64()),
        pa.field("n", pa.int32()),
        pa.field("ts", pa.timestamp("us", "UTC")),
        pa.field("tags", pa.list_(pa.string())),
    ]
)
# The same columns as Spark's DDL (the source DataFrame's schema).
SPARK_DDL = "id long, cat string, v double, n int, ts timestamp, tags array<string>"
MODES = ["copy-on-write", "merge-on-read"]
LINEAGE = ("_row_id", "_last_updated_sequence_number")
_EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)


def catalog(tmp_path: Path, name: str = "c") -> SqlCatalog:
    cat = SqlCatalog(name, uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    return cat


def rows(ids: range | list[int], v: Callable[[int], float] = lambda i: i / 4) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": ["a" if i % 2 else "b" for i in ids],
            "v": pa.array([v(i) for i in ids], pa.float64()),
            "n": pa.array([i % 7 for i in ids], pa.int32()),
            "ts": pa.array(
                [_EPOCH + dt.timedelta(hours=i) if i % 5 else None for i in ids],
                pa.timestamp("us", "UTC"),
            ),
            "tags": pa.array([[f"t{i}", "x"] if i % 3 else None for i in ids]),
        },
        schema=SCHEMA,
    )


def twin_tables(
    cat: SqlCatalog, version: int, mode: str, files: int = 3, per_file: int = 100
) -> tuple[Table, Table]:
    """Two tables with the same rows and files (``files`` appends of ``per_file`` rows,
    partitioned by ``cat``): the first for the local change, the second for Spark's."""
    out = []
    for side in ("local", "spark"):
        name = f"db.{side}_v{version}_{mode.replace('-', '_')}"
        props = {
            "format-version": str(version),
            "write.merge.mode": mode,
            "write.delete.mode": mode,
        }
        table = cat.create_table(name, SCHEMA, properties=props)
        with table.update_spec() as spec:
            spec.add_field("cat", "identity")
        for start in range(0, files * per_file, per_file):
            table.append(rows(range(start, start + per_file)))
        out.append(table)
    return out[0], out[1]


def first_source() -> pa.Table:
    """Keys matching rows of every file (and of both partitions), new keys, a null key."""
    ids = [3, 5, 6, 7, 12, 150, 151, 400, 401, 402]
    source = rows(ids, v=lambda i: -1.0 if i in (6, 151) else i / 2)
    # 400's row (n = 1, which the insert clause leaves out) with a null key: it matches
    # nothing and is not inserted (the key column is required).
    ids_with_null = pa.array([None if i == 400 else i for i in ids], pa.int64())
    return source.set_column(0, pa.field("id", pa.int64()), ids_with_null)


# The keys the first merge inserts.
INSERTED = {401, 402}


def second_source() -> pa.Table:
    """A second merge on the first's result: more matched rows of the same files (deletion
    vectors merge with the existing ones), pruned to a key range."""
    return rows([4, 8, 9, 152, 153], v=lambda i: -1.0 if i % 2 else i * 10.0)


def first_clauses(builder: Any) -> Any:
    return (
        builder.when_matched_delete(condition="source.v < 0")
        .when_matched_update(
            set={"v": col("source.v"), "n": 99, "tags": col("source.tags")},
            condition="target.n <> 0",
        )
        .when_matched_update()
        .when_not_matched_insert(condition="source.n <> 1")
        .when_not_matched_by_source_delete(condition="target.id >= 290")
    )


def second_clauses(builder: Any) -> Any:
    return builder.when_matched_delete(condition="source.v < 0").when_matched_update(
        set={"v": col("source.v")}
    )


def state(table: Table) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r.values()) for r in table.scan().to_arrow().to_pylist()), key=lambda r: r[0]
    )


def lineage(table: Table) -> list[tuple[Any, ...]]:
    """Each row's id and lineage (v3)."""
    scan = table.scan(selected_fields=("id", *LINEAGE))
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


def file_kinds(table: Table) -> list[tuple[int, str, str]]:
    """(content, format, partition) of every live data and delete file, each once."""
    kinds = set()
    for task in table.scan().plan_files():
        for f in (task.file, *task.delete_files):
            kinds.add((f.content, str(f.file_format).upper(), str(sorted(f.partition.items()))))
    return sorted(kinds)


def files_per_partition(table: Table) -> list[tuple[str, int, int]]:
    """(partition, record count, has deletes) of every live data file."""
    return sorted(
        (str(sorted(t.file.partition.items())), t.file.record_count, bool(t.delete_files))
        for t in table.scan().plan_files()
    )


def assert_twins(
    local: Table, spark: Table, version: int, inserted: set[int] = frozenset()
) -> None:
    """The two tables hold the same rows, files of the same kinds, the same lineage (v3), and
    snapshots of the same operation. Rows a merge inserted (keys ``inserted``) get fresh row
    ids from their file's ``first_row_id`` and their place in it, and the files differ (the
    local merge writes one per partition, Spark one per task and partition): theirs need only
    be distinct."""
    assert state(spark) == state(local)
    assert file_kinds(spark) == file_kinds(local)
    if version >= 3:
        ours, theirs = lineage(spark), lineage(local)
        assert [(i, seq) for i, _, seq in ours] == [(i, seq) for i, _, seq in theirs]
        for rows_ in (ours, theirs):  # every row id is distinct
            assert len({r for _, r, _ in rows_}) == len(rows_)
            assert all(r is not None for _, r, _ in rows_)
        kept = [(i, r) for i, r, _ in ours if i not in inserted]
        assert kept == [(i, r) for i, r, _ in theirs if i not in inserted]
    ours, theirs = spark.current_snapshot(), local.current_snapshot()
    assert ours is not None and theirs is not None
    assert ours.operation == theirs.operation


def all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def table_root(table: Table) -> Path:
    location = table.location()
    return Path(location.removeprefix("file://"))


def compaction_twins(cat: SqlCatalog, version: int) -> tuple[Table, Table]:
    """Two merge-on-read tables of small files, with deletes (v2 position deletes, v3
    deletion vectors) on some."""
    local, spark = twin_tables(cat, version, "merge-on-read", files=4, per_file=30)
    for table in (local, spark):
        table.delete("id < 5 OR id = 61")
        table.append(rows(range(200, 210)))
    return local, spark


def result_counts(result: Any) -> tuple[int, ...]:
    return (
        result.rewritten_data_files_count,
        result.added_data_files_count,
        result.rewritten_bytes_count,
        result.failed_data_files_count,
        len(result.rewrite_results),
        result.removed_delete_files_count,
    )


def spark_frame(spark: Any, table: pa.Table, partitions: int = 2) -> Any:
    """``table`` (of :data:`SCHEMA`'s columns) as a Spark DataFrame."""
    data = [tuple(r.values()) for r in table.to_pylist()]
    return spark.createDataFrame(spark.sparkContext.parallelize(data, partitions), SPARK_DDL)
