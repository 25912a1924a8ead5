"""Conflict checks against Apache Iceberg Java: a rewrite of a data file, validated from the
snapshot it was built on, after a concurrent commit of global equality deletes.

Java's ``RewriteFiles`` (``validateFromSnapshot``) refuses the rewrite when
``DeleteFileIndex.forDataFile`` gives the replaced file a new delete file; for equality deletes
that test reads the data file's metrics (``canContainEqDeletesForFile``). frazil's
``RewriteFiles`` must decide the same for the same table: the same keys land or are refused
on both sides. Each side rewrites its own copy of the table (a rewrite that lands changes it).
The equality delete files are frazil's test helpers' (tests/python/table), with the metrics a
Java writer records; Java plans its DataFile with ``includeColumnStats`` so that it carries
the file's metrics, as frazil's removed files do.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.errors import CommitValidationError
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.snapshot import RewriteFiles
from frazil.table.write import write_data_files
from frazil.types import NestedField, parse_type

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "table"))
from snapshot_delete_helpers import commit_deletes, equality_deletes

pytestmark = pytest.mark.interop

# Keys of the concurrent equality delete file; the rewritten file holds ids 1..3.
CASES = [[9], [0, -4], [2], [0, 7], [3, 40]]


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array(["a"] * len(ids))})


def _table(catalog: FileSystemCatalog, name: str) -> Table:
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )
    table = catalog.create_table(
        f"db.{name}", schema, partition_spec=PartitionSpec(0, ()), format_version=2
    )
    table.append(_rows([1, 2, 3]))
    table.append(_rows([10, 11]))
    return catalog.load_table(f"db.{name}")


def _low_file(table: Table) -> str:
    (path,) = [str(t.file.file_path) for t in table.scan().plan_files() if t.file.record_count == 3]
    return path


def _frazil_lands(catalog: FileSystemCatalog, name: str, keys: list[int]) -> bool:
    table = _table(catalog, name)
    stale = RewriteFiles(table.metadata, table.io)
    stale.delete_file(_low_file(table))
    for file in write_data_files(table.metadata, table.io, _rows([1, 2, 3])):
        stale.add_file(file, owned=True)
    other = catalog.load_table(f"db.{name}")
    commit_deletes(other, [equality_deletes(other, f"eq-{name}.parquet", keys, metrics=True)])
    try:
        with table.transaction() as txn:
            txn.add_change(stale)
    except CommitValidationError:
        return False
    return True


def _java_lands(
    spark: Any, catalog: FileSystemCatalog, warehouse: str, name: str, keys: list[int]
) -> bool:
    jvm = spark._jvm
    table = _table(catalog, name)
    low = _low_file(table)
    java_catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
        spark._jsc.hadoopConfiguration(), warehouse
    )
    java_table = java_catalog.loadTable(
        jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}")
    )
    start = java_table.currentSnapshot().snapshotId()
    replaced = None
    tasks = java_table.newScan().includeColumnStats().planFiles().iterator()
    while tasks.hasNext():
        file = tasks.next().file()
        if file.location() == low:
            replaced = file
    assert replaced is not None and replaced.lowerBounds() is not None
    added = (
        jvm.org.apache.iceberg.DataFiles.builder(java_table.spec())
        .withPath(f"{warehouse}/db/{name}/data/java-rewritten.parquet")
        .withFileSizeInBytes(replaced.fileSizeInBytes())
        .withRecordCount(3)
        .withFormat("PARQUET")
        .build()
    )
    # The concurrent equality deletes, committed by frazil after Java built its change.
    other = catalog.load_table(f"db.{name}")
    commit_deletes(other, [equality_deletes(other, f"eq-{name}.parquet", keys, metrics=True)])
    java_table.refresh()
    rewrite = java_table.newRewrite().validateFromSnapshot(start)
    try:
        rewrite.deleteFile(replaced).addFile(added).commit()
    except Exception as error:  # py4j's Py4JJavaError around Java's ValidationException
        if "found new delete for replaced data file" not in str(error):
            raise
        return False
    return True


def test_rewrite_against_concurrent_equality_deletes_decides_as_java(
    spark: Any, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "warehouse")
    catalog = FileSystemCatalog("conflicts", warehouse=warehouse)
    catalog.create_namespace("db")
    decisions = []
    for n, keys in enumerate(CASES):
        java = _java_lands(spark, catalog, warehouse, f"j{n}", keys)
        frazil = _frazil_lands(catalog, f"f{n}", keys)
        decisions.append((keys, java, frazil))
    assert [(k, j) for k, j, _ in decisions] == [(k, f) for k, _, f in decisions]
    # Both narrow by bounds: keys outside [1, 3] land, overlapping ones are refused.
    assert [j for _, j, _ in decisions] == [True, True, False, False, False]
