"""Maintenance parity with Apache Iceberg Java: expiring snapshots and removing orphan files
delete exactly the files Java deletes (file by file, relative to the table's root), and Java
still reads every row afterwards.

One small table is built by Spark (inserts, a merge-on-read DELETE, a copy-on-write UPDATE, a
tag) in the Hadoop catalog's warehouse. Its directory is copied aside; Java's
``expire_snapshots`` procedure runs on the table, and frazil's expiry with the same arguments
runs on a restored copy (registered in an in-memory catalog). frazil's resulting metadata is
then published as the next Hadoop version so that Java reads the table frazil expired.
Orphans: stray files are added; Java's DeleteOrphanFiles action (older_than in the future; the
procedure refuses a cutoff within a day) runs on the table and frazil on a restored copy, and
they must delete the same files.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from frazil.catalog.memory import InMemoryCatalog
from frazil.table import StaticTable
from java_referee import Warehouse

NAMESPACE = "maint"
TABLE = "expiry"


def _visible(root: Path) -> set[str]:
    """Files under ``root`` relative to it, without Hadoop's hidden ``.crc`` checksums (Java's
    local FileSystem deletes those with their file; frazil has none to delete)."""
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def _relative(location: str, root: Path) -> str:
    path = unquote(urlparse(location).path) if location.startswith("file:") else location
    return str(Path(path).relative_to(root))


def _rows(spark: Any, name: str) -> list[tuple[Any, ...]]:
    spark.sql(f"REFRESH TABLE {name}")
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, cat, v FROM {name}").collect())


def _frazil_rows(table: StaticTable, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    data = table.scan(snapshot_id=snapshot_id).to_arrow().select(["id", "cat", "v"])
    return sorted(tuple(r.values()) for r in data.to_pylist())


def _build(tables: Warehouse, name: str) -> None:
    tables.sql(
        f"CREATE TABLE {name} (id BIGINT, cat STRING, v STRING) USING iceberg "
        "PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='2', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='copy-on-write')"
    )
    tables.sql(f"INSERT INTO {name} VALUES (1, 'a', 'x'), (2, 'a', 'y'), (3, 'b', 'z')")
    tables.sql(f"INSERT INTO {name} VALUES (4, 'b', 'w'), (5, 'c', 'q')")
    tables.sql(f"ALTER TABLE {name} CREATE TAG first_two")
    tables.sql(f"DELETE FROM {name} WHERE id = 2")  # position deletes
    tables.sql(f"UPDATE {name} SET v = 'u' WHERE cat = 'b'")  # rewrites b's files
    tables.sql(f"INSERT INTO {name} VALUES (6, 'a', 'n')")


def _publish_as_hadoop_version(root: Path, metadata_location: str) -> None:
    """Make frazil's committed metadata the next ``v<N>.metadata.json`` Java's HadoopCatalog
    reads (the in-memory catalog names its files the metastore way)."""
    metadata_dir = root / "metadata"
    version = int((metadata_dir / "version-hint.text").read_text().strip()) + 1
    shutil.copyfile(metadata_location, metadata_dir / f"v{version}.metadata.json")
    (metadata_dir / "version-hint.text").write_text(str(version))
    Path(metadata_location).unlink()


def test_expire_and_orphans_match_java(
    spark: Any, tables: Warehouse, tmp_path: Path, catalog: str
) -> None:
    name = tables.name(NAMESPACE, TABLE)
    _build(tables, name)
    root = tables.location(NAMESPACE, TABLE)
    # The rows before, as frazil reads them (its read parity with Java is tested elsewhere);
    # Java reads the table once, at the end, after frazil's expiry and orphan removal.
    source = StaticTable.from_metadata(str(root))
    rows = _frazil_rows(source)
    tag = source.snapshot_by_name("first_two")
    assert tag is not None
    tag_rows = _frazil_rows(source, tag.snapshot_id)
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    before = _visible(root)

    # Java: expire everything older than now, keeping the two newest snapshots of main.
    time.sleep(0.01)
    cutoff_ms = time.time_ns() // 1_000_000
    cutoff_sql = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(cutoff_ms / 1000))
    cutoff_ms = (cutoff_ms // 1000) * 1000  # the SQL literal has second precision
    [java_counts] = tables.sql(
        f"CALL {catalog}.system.expire_snapshots(table => '{NAMESPACE}.{TABLE}', "
        f"older_than => TIMESTAMP '{cutoff_sql}', retain_last => 2)"
    )
    java_deleted = before - _visible(root)
    assert java_deleted, "Java expired nothing: the scenario does not test anything"

    # frazil on the restored copy, with the same arguments.
    shutil.rmtree(root)
    shutil.copytree(pristine, root)
    metadata_file = tables.current_metadata_file(NAMESPACE, TABLE)
    memory = InMemoryCatalog(warehouse=str(tmp_path / "memory"))
    memory.create_namespace(NAMESPACE)
    table = memory.register_table(f"{NAMESPACE}.{TABLE}", str(metadata_file))
    dry = table.maintenance.expire_snapshots().older_than(cutoff_ms).retain_last(2).dry_run()
    result = table.maintenance.expire_snapshots().older_than(cutoff_ms).retain_last(2).commit()
    assert result.files == dry.files
    frazil_deleted = before - _visible(root) - {_relative(table.metadata_location or "", root)}
    assert sorted(frazil_deleted) == sorted(java_deleted)
    assert sorted(_relative(p, root) for p in result.deleted_files) == sorted(java_deleted)
    counts = java_counts.asDict()
    assert counts["deleted_data_files_count"] == result.deleted_data_files_count
    assert counts["deleted_position_delete_files_count"] == (
        result.deleted_position_delete_files_count
    )
    assert counts["deleted_manifest_files_count"] == result.deleted_manifests_count
    assert counts["deleted_manifest_lists_count"] == result.deleted_manifest_lists_count

    # Java sees the table frazil expired (its snapshots, through the Java API).
    _publish_as_hadoop_version(root, table.metadata_location or "")
    java_snapshots = sorted(s.snapshotId() for s in tables.java_table(NAMESPACE, TABLE).snapshots())
    assert java_snapshots == sorted(s.snapshot_id for s in table.snapshots())

    # Orphans: strays of several kinds, compared with Java's dry run.
    strays = [
        root / "data" / "cat=a" / "stray-1.parquet",
        root / "data" / "cat=a b" / "stray 2.parquet",
        root / "metadata" / "stray-manifest.avro",
        root / "stray-at-root.txt",
    ]
    for stray in strays:
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_bytes(b"orphan")
    (root / "data" / "_temporary").mkdir()
    (root / "data" / "_temporary" / "hidden.parquet").write_bytes(b"hidden")
    # Java's procedure refuses a cutoff within the last day; its action (the procedure's
    # engine) takes any, and deletes: run it on the table, frazil on a restored copy.
    far_future = 4_102_444_800_000  # 2100-01-01
    with_strays = tmp_path / "with-strays"
    shutil.copytree(root, with_strays)
    before = _visible(root)
    actions = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    java_result = (
        actions.deleteOrphanFiles(tables.java_table(NAMESPACE, TABLE))
        .olderThan(far_future)
        .execute()
    )
    java_set = sorted(_relative(str(p), root) for p in java_result.orphanFileLocations())
    assert sorted(before - _visible(root)) == java_set
    assert {str(s.relative_to(root)) for s in strays} <= set(java_set)
    shutil.rmtree(root)
    shutil.copytree(with_strays, root)
    static = StaticTable.from_metadata(str(root))
    dry = static.remove_orphan_files(older_than=far_future, dry_run=True)
    assert _visible(root) == before
    removed = static.remove_orphan_files(older_than=far_future)
    assert removed == dry
    assert sorted(_relative(p, root) for p in removed) == java_set
    assert sorted(before - _visible(root)) == java_set
    assert (root / "data" / "_temporary" / "hidden.parquet").exists()

    # Java reads every row, and the tag's, of the table frazil expired and cleaned.
    assert _rows(spark, name) == rows
    tag_sql = f"SELECT id, cat, v FROM {name} VERSION AS OF 'first_two'"
    assert sorted(tuple(r) for r in spark.sql(tag_sql).collect()) == tag_rows
