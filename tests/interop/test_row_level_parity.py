"""Row-level changes and compaction shared with Iceberg Java 1.10.2 (issue 24).

1. frazil changes tables (v2 and v3; unpartitioned and partitioned by every transform):
   merge-on-read deletes, updates in both modes, row deltas with equality deletes, upserts,
   merges, position-delete and data-file compaction; after each table's history Java reads
   the same rows as frazil and as an in-memory model, and its ``files``, ``delete_files`` and
   ``snapshots`` metadata tables agree with frazil's metadata; the delete files are the kind the
   mode and format version require (v2 position delete files, v3 one deletion vector per data
   file, equality deletes as Parquet).
2. Java's ``rewrite_data_files`` and ``rewrite_position_delete_files`` procedures on frazil's
   merge-on-read tables leave the same rows (Java reads them, and so does frazil).
3. frazil compacts Java's merge-on-read tables (Spark DELETE, UPDATE and MERGE, equality deletes
   written through Java's API, v3 deletion vectors): Java reads the same rows afterwards, and no
   delete file still applies to a live data file (dangling ones removed).

All tables live in the warehouse of the session's Hadoop catalog, which frazil's
FileSystemCatalog shares."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.expressions import col
from frazil.table import Table
from java_referee import Warehouse
from scan_tables import RS, java_row

pytestmark = pytest.mark.interop

NAMESPACE = "row_level"
UTC = dt.timezone.utc
START = dt.datetime(2022, 12, 30, 20, tzinfo=UTC)
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), False),
        pa.field("cat", pa.string()),
        pa.field("s", pa.string()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("v", pa.float64()),
    ]
)
PARTITIONS: dict[str, tuple[str, str] | None] = {
    "unpartitioned": None,
    "identity": ("cat", "identity"),
    "bucket": ("id", "bucket[4]"),
    "truncate": ("s", "truncate[2]"),
    "year": ("ts", "year"),
    "month": ("ts", "month"),
    "day": ("ts", "day"),
    "hour": ("ts", "hour"),
}
Row = tuple[Any, ...]  # (cat, s, ts, v) by id


def _values(i: int, tag: str = "") -> Row:
    return (
        "a" if i % 2 else "b",
        f"s{i % 13:02d}{tag}",
        START + dt.timedelta(minutes=7 * i),
        i / 4,
    )


def _table_of(rows: dict[int, Row]) -> pa.Table:
    ids = sorted(rows)
    columns = list(zip(*(rows[i] for i in ids), strict=True)) if ids else [[], [], [], []]
    return pa.table(
        [pa.array(ids, pa.int64()), *(pa.array(list(c)) for c in columns)], schema=SCHEMA
    )


def _frazil_rows(table: Table) -> dict[int, Row]:
    out: dict[int, Row] = {}
    for r in table.scan().to_arrow().to_pylist():
        assert r["id"] not in out
        out[r["id"]] = (r["cat"], r["s"], r["ts"], r["v"])
    return out


def _java_rows(tables: Warehouse, name: str) -> dict[int, Row]:
    tables.sql(f"REFRESH TABLE {name}")
    out: dict[int, Row] = {}
    for r in tables.sql(f"SELECT id, cat, s, ts, v FROM {name}"):
        assert r[0] not in out
        ts = r[3] if r[3] is None else r[3].replace(tzinfo=UTC)
        out[r[0]] = (r[1], r[2], ts, r[4])
    return out


def _in(ids: list[int]) -> str:
    return "id IN (" + ", ".join(str(i) for i in ids) + ")"


def _history(table: Table, model: dict[int, Row], version: int) -> None:
    """Row-level changes on ``table`` mirrored in ``model``."""
    for start in (0, 200, 400):
        rows = {i: _values(i) for i in range(start, start + 200)}
        table.append(_table_of(rows))
        model.update(rows)
    # Merge-on-read deletes: scattered rows, a range.
    gone = [3, 17, 18, 250, 401, 599]
    table.delete(_in(gone))
    for i in gone:
        model.pop(i)
    table.delete("id BETWEEN 100 AND 160")
    for i in range(100, 161):
        model.pop(i, None)
    # Updates: a literal, a column.
    table.update({"v": -1.0}, "id < 50")
    for i in [i for i in model if i < 50]:
        model[i] = (*model[i][:3], -1.0)
    table.update({"s": col("cat")}, "id BETWEEN 300 AND 320")
    for i in [i for i in model if 300 <= i <= 320]:
        model[i] = (model[i][0], model[i][0], *model[i][2:])
    # A row delta: equality deletes of some keys, rows added (one key deleted and added again).
    with table.transaction() as txn:
        added = {405: _values(405, "x"), **{i: _values(i, "n") for i in range(1000, 1010)}}
        txn.row_delta(
            add=_table_of(added),
            delete_keys=pa.table({"id": pa.array(list(range(400, 411)), pa.int64())}),
            key_columns="id",
        )
    for i in range(400, 411):
        model.pop(i, None)
    model.update(added)
    # An upsert: changed, unchanged and new keys.
    source = {i: _values(i, "u") for i in (2, 4, 60, 230, 480, 1003)}
    source[500] = model[500]  # unchanged
    source.update({i: _values(i, "new") for i in range(2000, 2005)})
    result = table.upsert(_table_of(source), join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (6, 5)
    model.update(source)
    # A merge: deletes, updates, inserts by condition.
    merge_source = pa.table(
        {
            "id": pa.array([6, 8, 240, 3000, 3001], pa.int64()),
            "op": ["delete", "update", "delete", "insert", "skip"],
            "nv": pa.array([0.0, 8.5, 0.0, 30.0, 31.0]),
        }
    )
    (
        table.merge(merge_source, on="id")
        .when_matched_delete(condition="source.op = 'delete'")
        .when_matched_update(set={"v": col("source.nv")})
        .when_not_matched_insert(
            values={"id": col("source.id"), "cat": "z", "v": col("source.nv")},
            condition="source.op = 'insert'",
        )
        .execute()
    )
    model.pop(6)
    model.pop(240)
    model[8] = (*model[8][:3], 8.5)
    model[3000] = ("z", None, None, 30.0)


@pytest.fixture(scope="module")
def fs_catalog(tables: Warehouse) -> FileSystemCatalog:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    return FileSystemCatalog("fs", warehouse=str(tables.root))


def _create(
    catalog: FileSystemCatalog, name: str, version: int, partition: str, mode: str
) -> Table:
    table = catalog.create_table(
        f"{NAMESPACE}.{name}",
        SCHEMA,
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    field = PARTITIONS[partition]
    if field is not None:
        with table.update_spec() as spec:
            spec.add_field(field[0], field[1])
    return table


def _union(tables: Warehouse, paths: dict[str, str], suffix: str, columns: list[str]) -> Any:
    """One Spark job reading ``columns`` of every table (or its metadata table ``suffix``)
    by metadata location, each row tagged with its table's name."""
    from pyspark.sql import functions as F

    frames = [
        tables.spark.read.format("iceberg")
        .load(path + suffix)
        .select(F.lit(name).alias("_table"), *columns)
        for name, path in paths.items()
    ]
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out.collect()


def _check_with_java(tables: Warehouse, built: dict[str, tuple[Table, dict[int, Row]]]) -> None:
    """Java's rows and metadata tables of every table, in four Spark jobs."""
    paths = {name: str(table.metadata_location) for name, (table, _) in built.items()}
    rows: dict[str, dict[int, Row]] = {name: {} for name in built}
    for r in _union(tables, paths, "", ["id", "cat", "s", "ts", "v"]):
        ts = r["ts"] if r["ts"] is None else r["ts"].replace(tzinfo=UTC)
        assert r["id"] not in rows[r["_table"]]
        rows[r["_table"]][r["id"]] = (r["cat"], r["s"], ts, r["v"])
    files: dict[str, set[tuple[str, int, int]]] = {name: set() for name in built}
    for r in _union(tables, paths, "#files", ["file_path", "content", "record_count"]):
        files[r["_table"]].add((r["file_path"], r["content"], r["record_count"]))
    deletes: dict[str, list[Any]] = {name: [] for name in built}
    for r in _union(
        tables, paths, "#delete_files", ["content", "file_format", "referenced_data_file"]
    ):
        deletes[r["_table"]].append(r)
    snapshots: dict[str, dict[int, str]] = {name: {} for name in built}
    for r in _union(tables, paths, "#snapshots", ["snapshot_id", "operation"]):
        snapshots[r["_table"]][r["snapshot_id"]] = r["operation"]
    for name, (table, model) in built.items():
        assert rows[name] == model, name
        _check_metadata(name, table, files[name], deletes[name], snapshots[name])


def _check_metadata(
    name: str,
    table: Table,
    files: set[tuple[str, int, int]],
    deletes: list[Any],
    snapshots: dict[int, str],
) -> None:
    planned = set()
    for task in table.scan().plan_files():
        planned.add((task.file.file_path, 0, task.file.record_count))
        for d in task.delete_files:
            if d.file_format.upper() != "PUFFIN":
                planned.add((d.file_path, d.content, d.record_count))
    java_non_dv = {f for f in files if not f[0].endswith(".puffin")}
    # Every live file frazil plans is in Java's files table (delete files that apply to no
    # planned data file may be listed by Java too), and the data files are the same.
    assert planned <= java_non_dv, name
    assert {f for f in java_non_dv if f[1] == 0} == {p for p in planned if p[1] == 0}, name
    kinds = {(r["content"], r["file_format"]) for r in deletes}
    if table.format_version >= 3:
        assert kinds <= {(1, "PUFFIN"), (2, "PARQUET")}, name
        targets = [r["referenced_data_file"] for r in deletes if r["content"] == 1]
        assert len(targets) == len(set(targets)), f"{name}: one deletion vector per data file"
    else:
        assert kinds <= {(1, "PARQUET"), (2, "PARQUET")}, name
    assert snapshots == {s.snapshot_id: s.operation for s in table.snapshots()}, name


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_frazil_row_level_changes(
    tables: Warehouse, fs_catalog: FileSystemCatalog, version: int
) -> None:
    built: dict[str, tuple[Table, dict[int, Row]]] = {}
    for partition in PARTITIONS:
        modes = (
            ("merge-on-read", "copy-on-write") if partition == "identity" else ("merge-on-read",)
        )
        for mode in modes:
            name = f"v{version}_{partition}_{mode.split('-')[0]}"
            table = _create(fs_catalog, name, version, partition, mode)
            model: dict[int, Row] = {}
            _history(table, model, version)
            if version == 2:
                table.maintenance.rewrite_position_delete_files(options={"rewrite-all": True})
            assert _frazil_rows(table) == model, name
            built[name] = (table, model)
    _check_with_java(tables, built)
    compacted = {}
    for name, (table, model) in built.items():
        if "unpartitioned" in name or "bucket" in name:
            # Compaction, then Java reads the compacted table.
            result = table.maintenance.rewrite_data_files(
                options={"rewrite-all": True, "remove-dangling-deletes": True}
            )
            assert result.rewritten_data_files_count > 0
            assert not [d for t in table.scan().plan_files() for d in t.delete_files]
            compacted[name] = (table, model)
    _check_with_java(tables, compacted)


def test_java_procedures_on_frazil_merge_on_read_tables(
    tables: Warehouse, fs_catalog: FileSystemCatalog
) -> None:
    for version, partition in ((2, "identity"), (3, "bucket")):
        name = f"proc_v{version}_{partition}"
        table = _create(fs_catalog, name, version, partition, "merge-on-read")
        model: dict[int, Row] = {}
        _history(table, model, version)
        qualified = tables.name(NAMESPACE, name)
        tables.sql(f"REFRESH TABLE {qualified}")
        tables.sql(
            f"CALL {tables.catalog}.system.rewrite_position_delete_files("
            f"table => '{NAMESPACE}.{name}', options => map('rewrite-all', 'true'))"
        )
        assert _java_rows(tables, qualified) == model
        tables.sql(
            f"CALL {tables.catalog}.system.rewrite_data_files(table => '{NAMESPACE}.{name}', "
            "options => map('rewrite-all', 'true'))"
        )
        assert _java_rows(tables, qualified) == model
        assert _frazil_rows(fs_catalog.load_table(f"{NAMESPACE}.{name}")) == model


def _java_merge_on_read_table(tables: Warehouse, name: str, version: int) -> str:
    qualified = tables.name(NAMESPACE, name)
    tables.sql(
        f"CREATE TABLE {qualified} (id bigint, cat string, s string, n int) USING iceberg "
        f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
        "'write.merge.mode'='merge-on-read')"
    )
    for first in (0, 500, 1000):
        tables.sql(
            f"INSERT INTO {qualified} SELECT id, IF(id % 2 = 0, 'a', 'b'), "
            f"concat('s', CAST(id % 7 AS STRING)), CAST(id % 5 AS INT) "
            f"FROM range({first}, {first + 500})"
        )
    tables.sql(f"DELETE FROM {qualified} WHERE id % 9 = 0")
    tables.sql(f"UPDATE {qualified} SET n = -1 WHERE id % 10 = 1")
    tables.sql(
        "CREATE OR REPLACE TEMP VIEW merge_source AS SELECT id, id * 2 AS n2 FROM range(1200, 1600)"
    )
    tables.sql(
        f"MERGE INTO {qualified} t USING merge_source s ON t.id = s.id "
        "WHEN MATCHED AND s.id % 3 = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET t.n = CAST(s.n2 AS INT) "
        "WHEN NOT MATCHED THEN INSERT (id, cat, s, n) VALUES (s.id, 'c', 'new', CAST(s.n2 AS INT))"
    )
    return qualified


def _add_java_equality_deletes(tables: Warehouse, name: str) -> None:
    java_table = tables.java_table(NAMESPACE, name)
    field_ids = {f.name(): f.fieldId() for f in java_table.schema().columns()}
    types = {"id": "long", "cat": "string", "s": "string", "n": "int"}
    spec_id = java_table.spec().specId()
    tables.java.org.frazil.interop.PlanReferee.addEqualityDeletes(
        java_table,
        spec_id,
        str(field_ids["id"]),
        java_row(field_ids, {"cat": "a"}, types),
        RS.join(java_row(field_ids, {"id": i}, types) for i in (2, 4, 6, 800)),
    )


def _java_table_rows(tables: Warehouse, qualified: str) -> list[tuple[Any, ...]]:
    tables.sql(f"REFRESH TABLE {qualified}")
    return sorted(tuple(r) for r in tables.sql(f"SELECT id, cat, s, n FROM {qualified}"))


@pytest.mark.parametrize("version", [2, 3])
def test_frazil_compacts_java_merge_on_read_tables(
    tables: Warehouse, fs_catalog: FileSystemCatalog, version: int
) -> None:
    name = f"java_mor_v{version}"
    qualified = _java_merge_on_read_table(tables, name, version)
    if version == 2:
        _add_java_equality_deletes(tables, name)
    expected = _java_table_rows(tables, qualified)
    table = fs_catalog.load_table(f"{NAMESPACE}.{name}")
    assert [d for t in table.scan().plan_files() for d in t.delete_files], "Java wrote deletes"
    if version == 2:
        deletes = table.maintenance.rewrite_position_delete_files(options={"rewrite-all": True})
        assert deletes.rewritten_delete_files_count > 0
        assert _java_table_rows(tables, qualified) == expected
    result = table.maintenance.rewrite_data_files(
        options={"rewrite-all": True, "remove-dangling-deletes": True}
    )
    assert result.rewritten_data_files_count > 0
    if version >= 3:
        # Java's count: the rewritten files' deletion vectors (v2 deletes older than every
        # new file were dropped by the rewrite's own commit, as Java drops them).
        assert result.removed_delete_files_count > 0
    assert _java_table_rows(tables, qualified) == expected
    table = fs_catalog.load_table(f"{NAMESPACE}.{name}")
    # No delete file applies to a live data file, in frazil's plan or in Java's.
    assert not [d for t in table.scan().plan_files() for d in t.delete_files]
    live_deletes = tables.sql(f"SELECT count(*) FROM {qualified}.delete_files")[0][0]
    assert live_deletes == 0, "dangling deletes removed"
