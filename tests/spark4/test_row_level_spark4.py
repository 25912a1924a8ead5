"""``frazil.spark.merge`` and ``frazil.spark.rewrite_data_files`` on Spark 4.3 without any
Iceberg jar: on twin tables the Spark run equals the local one (rows, counts, kinds of files,
row lineage on v3) in both modes and versions; a compaction whose first task attempts fail is
retried (``local[2,2]``) to the local result with no file of the failed attempts left.

The cases are shared with the Spark 3.5 tests (tests/python/table/spark_row_level_cases.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import frazil.spark
import pytest
from frazil.table.maintenance.rewrite_data_files import rewrite_data_files as local_rewrite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "table"))
import spark_row_level_cases as cases


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


@pytest.mark.parametrize("version", [2, 3])
def test_rewrite_data_files_equals_the_local_compaction_through_retries(
    spark: Any, tmp_path: Path, version: int
) -> None:
    local, on_spark = cases.compaction_twins(cases.catalog(tmp_path), version)
    root = cases.table_root(on_spark)
    options = {"min-input-files": "2"}
    expected = local_rewrite(local, options=options)
    before = cases.all_files(root)
    result = frazil.spark.rewrite_data_files(
        spark, on_spark, options=options, _fail_first_attempt=True
    )
    assert cases.result_counts(result) == cases.result_counts(expected)
    assert cases.files_per_partition(on_spark) == cases.files_per_partition(local)
    cases.assert_twins(local, on_spark, version)
    # Only the commit's files were added: the failed attempts' are gone, and the journal.
    live = {
        str(Path(t.file.file_path.removeprefix("file://")).relative_to(root))
        for t in on_spark.scan().plan_files()
    }
    added = {f for f in cases.all_files(root) - before if not f.startswith("metadata/")}
    assert added == live - before
    assert not any("spark-write-" in f for f in cases.all_files(root))
