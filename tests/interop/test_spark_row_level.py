"""``frazil.spark.merge`` and ``frazil.spark.rewrite_data_files`` on Spark 3.5: on twin tables,
the Spark run equals the local one (rows, counts, the kinds of files written, row lineage on
v3) in both modes and format versions, and Iceberg Java's Spark read of the tables they leave
equals frazil's; a duplicate key is refused naming it, with nothing committed and no file left;
a failed job and a failed commit leave no file, an unknown commit outcome keeps them.

The cases (tables, sources, clauses, comparisons) are shared with the Spark 4.3 tests
(tests/python/table/spark_row_level_cases.py)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import frazil.spark
import pyarrow as pa
import pytest
from frazil.errors import (
    CommitStateUnknownError,
    CommitValidationError,
    SparkJobError,
    ValidationError,
)
from frazil.table import Table
from frazil.table.maintenance.rewrite_data_files import rewrite_data_files as local_rewrite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "table"))
import spark_row_level_cases as cases

pytestmark = pytest.mark.interop


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, list):
        return tuple(value)
    return value


def _java_reads_as_frazil(spark: Any, table: Table) -> None:
    java = spark.read.format("iceberg").load(table.metadata_location)
    theirs = sorted((tuple(_plain(v) for v in r) for r in java.collect()), key=lambda r: r[0])
    ours = [tuple(_plain(v) for v in r) for r in cases.state(table)]
    assert theirs == ours


@pytest.mark.parametrize("mode", cases.MODES)
@pytest.mark.parametrize("version", [2, 3])
def test_merge_equals_the_local_merge(spark: Any, tmp_path: Path, version: int, mode: str) -> None:
    local, on_spark = cases.twin_tables(cases.catalog(tmp_path), version, mode)
    for source, clauses in (
        (cases.first_source(), cases.first_clauses),
        (cases.second_source(), cases.second_clauses),
    ):
        expected = clauses(local.merge(source, on="id")).execute()
        frame = cases.spark_frame(spark, source)
        result = clauses(frazil.spark.merge(spark, on_spark, frame, on="id")).execute()
        assert result == expected
        cases.assert_twins(local, on_spark, version, cases.INSERTED)
    assert expected.rows_deleted and expected.rows_updated
    if mode == "merge-on-read":
        deletes = {(c, f) for c, f, _ in cases.file_kinds(on_spark) if c == 1}
        assert deletes == {(1, "PUFFIN" if version >= 3 else "PARQUET")}
    _java_reads_as_frazil(spark, on_spark)


def test_a_duplicate_key_is_refused_with_nothing_left(spark: Any, tmp_path: Path) -> None:
    local, table = cases.twin_tables(cases.catalog(tmp_path), 2, "copy-on-write", files=1)
    root = cases.table_root(table)
    before = cases.all_files(root)
    snapshot = table.current_snapshot()
    matched_twice = cases.rows([5, 7, 5])
    with pytest.raises(ValidationError, match=r"duplicate key.*id=5"):
        frazil.spark.merge(
            spark, table, cases.spark_frame(spark, matched_twice), on="id"
        ).when_matched_update().execute()
    inserted_twice = cases.rows([500, 7, 500])
    with pytest.raises(ValidationError, match=r"duplicate key.*id=500"):
        frazil.spark.merge(
            spark, table, cases.spark_frame(spark, inserted_twice), on="id"
        ).when_not_matched_insert().execute()
    with pytest.raises(ValidationError, match="duplicate key"):
        local.merge(inserted_twice, on="id").when_not_matched_insert().execute()
    table.refresh()
    assert table.current_snapshot() == snapshot
    assert cases.all_files(root) == before


def test_bad_clauses_and_nanosecond_tables_are_refused_on_the_driver(
    spark: Any, tmp_path: Path
) -> None:
    cat = cases.catalog(tmp_path)
    _, table = cases.twin_tables(cat, 2, "copy-on-write", files=1)
    frame = cases.spark_frame(spark, cases.rows([1]))
    with pytest.raises(ValidationError, match="qualify columns"):
        frazil.spark.merge(spark, table, frame, on="id").when_matched_delete("v > 0").execute()
    with pytest.raises(ValidationError, match="no join column 'id'"):
        frazil.spark.merge(
            spark, table, frame.withColumnRenamed("id", "nope"), on="id"
        ).when_matched_delete().execute()
    nanos = cat.create_table(
        "db.nanos",
        pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("ns"))]),
        properties={"format-version": "3"},
    )
    with pytest.raises(ValidationError, match="ts"):
        frazil.spark.merge(
            spark, nanos, frame.select("id"), on="id"
        ).when_matched_delete().execute()


class _Unknown:
    """A catalog commit that lands but reports an unknown outcome (a lost connection)."""

    def __init__(self, commit: Any) -> None:
        self.commit = commit

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.commit(*args, **kwargs)
        raise CommitStateUnknownError("connection lost after the commit was sent")


def test_commit_outcomes_decide_which_files_stay(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, table = cases.twin_tables(cases.catalog(tmp_path), 2, "merge-on-read", files=2)
    root = cases.table_root(table)
    source = cases.spark_frame(spark, cases.rows([1, 2, 150, 700]))

    def merge() -> Any:
        builder = frazil.spark.merge(spark, table, source, on="id")
        return builder.when_matched_delete().when_not_matched_insert().execute()

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise CommitValidationError("refused by the catalog")

    catalog = table.catalog
    assert catalog is not None
    # A commit that certainly fails: every file of the merge is deleted.
    before = cases.all_files(root)
    failing = _Unknown(catalog.commit_table)
    monkeypatch.setattr(catalog, "commit_table", refused)
    with pytest.raises(CommitValidationError, match="refused"):
        merge()
    assert cases.all_files(root) == before
    # An unknown outcome keeps the files the commit may hold (and only those).
    monkeypatch.setattr(catalog, "commit_table", failing)
    with pytest.raises(CommitStateUnknownError):
        merge()
    monkeypatch.undo()
    table = catalog.load_table(table.name())
    added = cases.all_files(root) - before
    live = {
        str(Path(f.file_path.removeprefix("file://")).relative_to(root))
        for t in table.scan().plan_files()
        for f in (t.file, *t.delete_files)
    }
    data = {f for f in added if f.startswith("data/")}
    assert data and data <= live  # the commit landed: its files are all live, none stray
    assert not any("spark-write-" in f for f in added)


@pytest.mark.parametrize("version", [2, 3])
def test_rewrite_data_files_equals_the_local_compaction(
    spark: Any, tmp_path: Path, version: int
) -> None:
    local, on_spark = cases.compaction_twins(cases.catalog(tmp_path), version)
    options = {"min-input-files": "2", "target-file-size-bytes": "1000000"}
    expected = local_rewrite(local, options=options)
    result = frazil.spark.rewrite_data_files(spark, on_spark, options=options)
    assert cases.result_counts(result) == cases.result_counts(expected)
    assert result.rewritten_data_files_count > 0
    assert cases.files_per_partition(on_spark) == cases.files_per_partition(local)
    cases.assert_twins(local, on_spark, version)
    _java_reads_as_frazil(spark, on_spark)


def test_rewrite_sorts_as_the_local_compaction(spark: Any, tmp_path: Path) -> None:
    local, on_spark = cases.compaction_twins(cases.catalog(tmp_path), 2)
    options = {"rewrite-all": "true"}
    expected = local_rewrite(local, "sort", options, sort_order="v DESC NULLS LAST")
    result = frazil.spark.rewrite_data_files(
        spark, on_spark, "sort", options, sort_order="v DESC NULLS LAST"
    )
    assert cases.result_counts(result) == cases.result_counts(expected)
    # The files hold the same rows in the same order.
    assert _ids_per_file(on_spark) == _ids_per_file(local)
    cases.assert_twins(local, on_spark, 2)


def _ids_per_file(table: Table) -> list[list[int]]:
    import pyarrow.parquet as pq

    paths = [t.file.file_path.removeprefix("file://") for t in table.scan().plan_files()]
    return sorted(pq.read_table(p, columns=["id"]).column("id").to_pylist() for p in paths)


def test_a_failed_rewrite_job_leaves_no_file(spark: Any, tmp_path: Path) -> None:
    _, table = cases.compaction_twins(cases.catalog(tmp_path), 3)
    root = cases.table_root(table)
    before = cases.all_files(root)
    snapshot = table.current_snapshot()
    # local[2] retries no task: the job fails, each attempt having deleted its files.
    with pytest.raises(SparkJobError, match="test hook"):
        frazil.spark.rewrite_data_files(
            spark, table, options={"min-input-files": "2"}, _fail_first_attempt=True
        )
    assert cases.all_files(root) == before
    table.refresh()
    assert table.current_snapshot() == snapshot
