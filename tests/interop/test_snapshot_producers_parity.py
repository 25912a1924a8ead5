"""Snapshot producers against Apache Iceberg Java on one HadoopCatalog warehouse: frazil merges
the delete manifests of Java's merge-on-read deletes and Java reads the result; dynamic
partition overwrites staged on a branch are cherry-picked across (Java's by frazil's
``manage_snapshots().cherry_pick``, frazil's by Java's ``cherrypick_snapshot`` procedure,
which needs frazil's ``replace-partitions`` summary flag)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_catalog_parity import _pair, _rows

pytestmark = [pytest.mark.interop]


def _data(ids: list[int], cat: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


def test_delete_manifest_merge_and_cherry_picks(
    spark: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    catalog = _pair("hadoop", spark, tmp_path, request)
    t = f"{catalog.name}.db.t"
    spark.sql(f"CREATE NAMESPACE {catalog.name}.db")
    spark.sql(
        f"CREATE TABLE {t} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'a'), (3, 'a'), (4, 'b'), (5, 'b')")
    for i in (1, 4):  # a position delete file per partition, in two delete manifests
        spark.sql(f"DELETE FROM {t} WHERE id = {i}")

    table = catalog.load_table("db.t")
    with table.update_properties() as update:
        update.set("commit.manifest.min-count-to-merge", "2")
    table.append(_data([6], "a"))
    manifests = _rows(spark, f"SELECT content, existing_delete_files_count FROM {t}.manifests")
    assert [m for m in manifests if m[0] == 1] == [(1, 2)]  # merged by frazil, read by Java
    # (Java reads the rows through the merged manifest below.)

    # Java's dynamic overwrite on a branch, cherry-picked by frazil after main moved on.
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH wap")
    frame = spark.createDataFrame([(10, "a")], "id bigint, cat string")
    frame.writeTo(f"{t}.branch_wap").overwritePartitions()
    spark.sql(f"INSERT INTO {t} VALUES (7, 'b')")
    table = catalog.load_table("db.t")
    wap = table.metadata.ref("wap")
    assert wap is not None
    with table.manage_snapshots() as ms:
        ms.cherry_pick(wap.snapshot_id)
    head = table.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["source-snapshot-id"] == str(wap.snapshot_id)
    assert _rows(spark, f"SELECT id FROM {t} ORDER BY id") == [
        (5,),
        (7,),
        (10,),
    ]  # a's deletes went with a

    # frazil's dynamic overwrite on a branch, cherry-picked by Java.
    table.dynamic_partition_overwrite(_data([20], "b"), branch="staged")
    staged = catalog.load_table("db.t").metadata.ref("staged")
    assert staged is not None
    table.append(_data([11], "a"))
    spark.sql(f"CALL {catalog.name}.system.cherrypick_snapshot('db.t', {staged.snapshot_id})")
    after = catalog.load_table("db.t")
    ids = sorted(after.scan().to_arrow().column("id").to_pylist())
    assert ids == [10, 11, 20]
    head = after.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["operation"] == "overwrite"
    assert head.summary["source-snapshot-id"] == str(staged.snapshot_id)
