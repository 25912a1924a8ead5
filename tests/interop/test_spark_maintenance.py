"""frazil.spark's maintenance (orphan removal, snapshot expiry with Spark tasks) gives exactly
what the local versions give: the same orphans, the same deleted files, the same metadata; a dry
run deletes nothing; an unknown commit outcome deletes nothing; and Java's Spark read of the
table after a clean expiry and orphan removal equals frazil's local read.

The table is built once by Java through Spark SQL (inserts, a merge-on-read DELETE that writes
position deletes or deletion vectors, a copy-on-write UPDATE, a tag, an append on a branch),
with stray files of every kind added: old and recent, hidden, frazil's temporary files, deep
directories and a directory with more subdirectories than the driver lists itself. Its directory
is copied aside; each side runs on a fresh restore of it, at the same location, so that both see
the same files with the same modification times.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import CommitStateUnknownError, ValidationError
from frazil.spark import expire_snapshots as spark_expire
from frazil.spark import remove_orphan_files as spark_orphans
from frazil.table import StaticTable
from frazil.table._table import Table
from java_referee import Warehouse

NAMESPACE = "sparkmaint"
DAY_S = 86_400
NOW_MS = time.time_ns() // 1_000_000

# Relative to the table's root: (path, age in days). The old ones are orphans (except the
# hidden ones); the recent ones are kept by the default three-day threshold.
STRAYS = [
    ("data/cat=a/stray-1.parquet", 4),
    ("data/cat=a b/stray 2.parquet", 4),
    ("metadata/stray-manifest.avro", 4),
    ("stray-at-root.txt", 4),
    ("data/deep/er/than/the/driver/lists.parquet", 4),
    *((f"data/wide/d{i:02d}/f.parquet", 4) for i in range(12)),
    ("data/cat=b/young.parquet", 1),
    # frazil's temporary files (src/io/local.rs): old ones are orphans, a young one is a
    # writer at work, one in a hidden directory stays hidden.
    ("data/cat=a/.00000-x.parquet.4242-7.tmp", 4),
    ("metadata/.v9.metadata.json.4242-8.tmp", 4),
    ("data/cat=b/.in-progress.parquet.4242-9.tmp", 1),
    ("data/_temporary/.part.parquet.4242-1.tmp", 4),
    # Hidden files: never touched.
    ("data/_temporary/0/part.parquet", 4),
    ("data/cat=a/.stray-1.parquet.crc", 4),
    (".hidden-at-root", 4),
]


def _all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _relative(location: str, root: Path) -> str:
    path = unquote(urlparse(location).path) if location.startswith("file:") else location
    return str(Path(path).relative_to(root))


def _age(root: Path, days: float) -> None:
    old = time.time() - days * DAY_S
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))


def _build(tables: Warehouse, name: str, version: int) -> None:
    tables.sql(
        f"CREATE TABLE {name} (id BIGINT, cat STRING, v STRING) USING iceberg "
        f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='copy-on-write')"
    )
    tables.sql(f"INSERT INTO {name} VALUES (1, 'a', 'x'), (2, 'a', 'y'), (3, 'b', 'z')")
    tables.sql(f"INSERT INTO {name} VALUES (4, 'b', 'w'), (5, 'c', 'q'), (7, 'a b', 's')")
    tables.sql(f"ALTER TABLE {name} CREATE TAG first_two")
    tables.sql(f"DELETE FROM {name} WHERE id = 2")  # position deletes (v3: a deletion vector)
    tables.sql(f"UPDATE {name} SET v = 'u' WHERE cat = 'b'")  # rewrites b's files
    tables.sql(f"DELETE FROM {name} WHERE id = 5")
    tables.sql(f"ALTER TABLE {name} CREATE BRANCH side")
    tables.sql(f"INSERT INTO {name}.branch_side VALUES (8, 'c', 'b')")
    tables.sql(f"INSERT INTO {name} VALUES (6, 'a', 'n')")


class Scenario:
    """A table built by Java, its pristine copy (strays included, aged), and restores."""

    def __init__(self, tables: Warehouse, tmp: Path, version: int) -> None:
        self.name = f"t{version}"
        _build(tables, tables.name(NAMESPACE, self.name), version)
        self.root = tables.location(NAMESPACE, self.name)
        self.metadata_file = str(tables.current_metadata_file(NAMESPACE, self.name))
        _age(self.root, 4)
        for relative, days in STRAYS:
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"stray")
            old = time.time() - days * DAY_S
            os.utime(path, (old, old))
        self.pristine = tmp / f"pristine-{version}"
        shutil.copytree(self.root, self.pristine)
        self.restores = 0

    def restore(self) -> None:
        """The table's directory as built (copy2 keeps the modification times)."""
        shutil.rmtree(self.root)
        shutil.copytree(self.pristine, self.root)

    def static(self) -> StaticTable:
        self.restore()
        return StaticTable.from_metadata(self.metadata_file)

    def registered(self, catalog_class: type[InMemoryCatalog] = InMemoryCatalog) -> Table:
        """The restored table in a fresh in-memory catalog (commits write new metadata files
        beside the table's)."""
        self.restore()
        self.restores += 1
        catalog = catalog_class(warehouse=str(self.pristine.parent / f"mem-{self.restores}"))
        catalog.create_namespace(NAMESPACE)
        return catalog.register_table(f"{NAMESPACE}.{self.name}", self.metadata_file)


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def scenario(
    request: pytest.FixtureRequest, tables: Warehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scenario]:
    yield Scenario(tables, tmp_path_factory.mktemp("spark-maintenance"), request.param)


def _run_both(
    scenario: Scenario,
    open_table: Callable[[], Any],
    local: Callable[[Any], Any],
    spark: Callable[[Any], Any],
) -> tuple[Any, set[str], Any, set[str]]:
    """Runs ``local`` then ``spark`` each on a fresh restore; their results and the files
    under the table's root afterwards."""
    local_result = local(open_table())
    local_files = _all_files(scenario.root)
    spark_result = spark(open_table())
    spark_files = _all_files(scenario.root)
    return local_result, local_files, spark_result, spark_files


ORPHAN_CASES: dict[str, dict[str, Any]] = {
    "default-threshold": {},
    "future-threshold-data-only": {"older_than": NOW_MS + DAY_S * 1000, "location": "data"},
    "two-days-uri-location": {"older_than": NOW_MS - 2 * DAY_S * 1000, "location": ""},
}


@pytest.mark.parametrize("case", sorted(ORPHAN_CASES))
def test_remove_orphan_files_equals_local(spark: Any, scenario: Scenario, case: str) -> None:
    kwargs = dict(ORPHAN_CASES[case])
    if case == "two-days-uri-location":
        kwargs["location"] = scenario.root.as_uri()
    elif "location" in kwargs:
        kwargs["location"] = str(scenario.root / kwargs["location"])
    pristine = _all_files(scenario.pristine)

    local_dry, local_files, spark_dry, spark_files = _run_both(
        scenario,
        scenario.static,
        lambda t: t.remove_orphan_files(dry_run=True, **kwargs),
        lambda t: spark_orphans(spark, t, dry_run=True, **kwargs),
    )
    assert spark_dry == local_dry
    assert local_files == spark_files == pristine  # a dry run deletes nothing

    local, local_files, removed, spark_files = _run_both(
        scenario,
        scenario.static,
        lambda t: t.remove_orphan_files(**kwargs),
        lambda t: spark_orphans(spark, t, **kwargs),
    )
    assert removed == local == local_dry
    assert spark_files == local_files
    assert sorted(pristine - spark_files) == sorted(_relative(p, scenario.root) for p in removed)

    # What the rules say, whatever both sides agree on.
    orphans = {_relative(p, scenario.root) for p in removed}
    strays = dict(STRAYS)
    assert "data/_temporary/0/part.parquet" not in orphans
    assert "data/_temporary/.part.parquet.4242-1.tmp" not in orphans
    assert "data/cat=a/.stray-1.parquet.crc" not in orphans
    old = {p for p, days in strays.items() if days == 4 and p in orphans}
    if case in ("default-threshold", "two-days-uri-location"):
        assert "data/cat=b/young.parquet" not in orphans
        assert "data/cat=b/.in-progress.parquet.4242-9.tmp" not in orphans
        assert {"data/cat=a/.00000-x.parquet.4242-7.tmp", "stray-at-root.txt"} <= old
        assert {f"data/wide/d{i:02d}/f.parquet" for i in range(12)} <= old
        assert "data/deep/er/than/the/driver/lists.parquet" in old
    if case == "future-threshold-data-only":
        assert "data/cat=b/young.parquet" in orphans
        assert all(p.startswith("data/") for p in orphans)


def _with_foreign_reference(scenario: Scenario, tmp: Path, stray: str) -> StaticTable:
    """The table with its metadata log naming ``stray`` under an S3 bucket: the same path as
    the local stray, under another store (a prefix mismatch)."""
    metadata = json.loads(Path(scenario.metadata_file).read_text())
    foreign = f"s3://bucket{scenario.root / stray}"
    metadata["metadata-log"].append({"timestamp-ms": NOW_MS, "metadata-file": foreign})
    edited = tmp / "foreign.metadata.json"
    edited.write_text(json.dumps(metadata))
    scenario.restore()
    return StaticTable.from_metadata(str(edited))


@pytest.mark.parametrize("mode", ["error", "delete"])
def test_prefix_mismatch_decided_alike(
    spark: Any, scenario: Scenario, tmp_path: Path, mode: Any
) -> None:
    stray = "metadata/stray-manifest.avro"
    table = _with_foreign_reference(scenario, tmp_path, stray)
    if mode == "error":
        with pytest.raises(ValidationError) as local_error:
            table.maintenance.remove_orphan_files(prefix_mismatch_mode=mode)
        with pytest.raises(ValidationError) as spark_error:
            spark_orphans(spark, table, prefix_mismatch_mode=mode)
        assert str(spark_error.value) == str(local_error.value)
        assert stray in str(spark_error.value)
        assert _all_files(scenario.root) == _all_files(scenario.pristine)
        return
    local = table.maintenance.remove_orphan_files(dry_run=True, prefix_mismatch_mode=mode)
    assert spark_orphans(spark, table, dry_run=True, prefix_mismatch_mode=mode) == local
    assert (str(scenario.root / stray) in local) == (mode == "delete")
    with pytest.raises(ValidationError, match="prefix_mismatch_mode"):
        spark_orphans(spark, table, prefix_mismatch_mode="maybe")


def _soon() -> int:
    """A cutoff after every snapshot of the table (built after the module was imported)."""
    return time.time_ns() // 1_000_000 + 60_000


EXPIRE_CASES: dict[str, dict[str, Any]] = {
    "older-than-now-retain-2": {"older_than": "soon", "retain_last": 2},
    "older-than-now-retain-1": {"older_than": "soon", "retain_last": 1},
    "defaults": {},
    "by-id": {"snapshot_ids": "oldest-unreferenced"},
}


def _expire_kwargs(table: Table, case: str) -> dict[str, Any]:
    kwargs = dict(EXPIRE_CASES[case])
    if kwargs.get("older_than") == "soon":
        kwargs["older_than"] = _soon()
    if kwargs.get("snapshot_ids") == "oldest-unreferenced":
        referenced = {ref.snapshot_id for ref in table.refs().values()}
        oldest = min(
            (s for s in table.snapshots() if s.snapshot_id not in referenced),
            key=lambda s: s.timestamp_ms,
        )
        kwargs["snapshot_ids"] = [oldest.snapshot_id]
    return kwargs


def _local_expire(table: Table, dry_run: bool = False, **kwargs: Any) -> Any:
    expire = table.maintenance.expire_snapshots()
    if kwargs.get("older_than") is not None:
        expire.older_than(kwargs["older_than"])
    if kwargs.get("retain_last") is not None:
        expire.retain_last(kwargs["retain_last"])
    if kwargs.get("snapshot_ids") is not None:
        expire.by_ids(kwargs["snapshot_ids"])
    return expire.commit(dry_run=dry_run)


def _state(table: Table) -> dict[str, Any]:
    """The table's metadata, without what differs between two commits of the same change
    (the commit time and the metadata log, whose files the catalog names)."""
    state = table.metadata.to_dict()
    for key in ("last-updated-ms", "metadata-log"):
        state.pop(key, None)
    return state


@pytest.mark.parametrize("case", sorted(EXPIRE_CASES))
def test_expire_snapshots_equals_local(spark: Any, scenario: Scenario, case: str) -> None:
    pristine = _all_files(scenario.pristine)
    kwargs = _expire_kwargs(scenario.static(), case)
    tables: list[Table] = []

    def opened() -> Table:
        tables.append(scenario.registered())
        return tables[-1]

    local_dry, local_files, spark_dry, spark_files = _run_both(
        scenario,
        opened,
        lambda t: _local_expire(t, dry_run=True, **kwargs),
        lambda t: spark_expire(spark, t, dry_run=True, **kwargs),
    )
    assert spark_dry == local_dry and spark_dry.dry_run
    assert local_files == spark_files == pristine  # a dry run deletes and commits nothing
    assert _state(tables[0]) == _state(tables[1]) == _state(scenario.static())

    local, local_files, result, spark_files = _run_both(
        scenario,
        opened,
        lambda t: _local_expire(t, **kwargs),
        lambda t: spark_expire(spark, t, **kwargs),
    )
    local_table, spark_table = tables[2], tables[3]
    assert result == local
    assert result.files == local_dry.files and not result.failed
    assert _state(spark_table) == _state(local_table)
    # Both committed one new metadata file; otherwise the same files are left.
    new_local = _relative(local_table.metadata_location or "", scenario.root)
    new_spark = _relative(spark_table.metadata_location or "", scenario.root)
    assert local_files - {new_local} == spark_files - {new_spark}
    deleted = pristine - spark_files
    assert sorted(deleted) == sorted(_relative(p, scenario.root) for p in result.deleted_files)
    if case != "defaults":
        assert result.expired_snapshot_ids and deleted


class _UnknownOutcomeCatalog(InMemoryCatalog):
    """A catalog whose commits land but report an unknown outcome (a lost connection)."""

    def _swap(self, *args: Any, **kwargs: Any) -> None:
        super()._swap(*args, **kwargs)
        raise CommitStateUnknownError("connection lost after the commit was sent")


def test_unknown_commit_outcome_deletes_nothing(spark: Any, scenario: Scenario) -> None:
    table = scenario.registered(_UnknownOutcomeCatalog)
    before = _all_files(scenario.root)
    with pytest.raises(CommitStateUnknownError):
        spark_expire(spark, table, older_than=_soon(), retain_last=1)
    after = _all_files(scenario.root)
    assert before <= after  # only the new metadata file was written


def test_java_reads_the_cleaned_table_as_frazil_does(spark: Any, scenario: Scenario) -> None:
    table = scenario.registered()
    rows_before = sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())
    result = spark_expire(spark, table, older_than=_soon(), retain_last=1)
    assert result.expired_snapshot_ids
    removed = spark_orphans(spark, table, older_than=NOW_MS + DAY_S * 1000)
    assert removed  # the strays, and nothing the table references (Java reads it below)
    assert table.metadata_location and Path(table.metadata_location).exists()
    mine = sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())
    assert mine == rows_before
    java = spark.read.format("iceberg").load(table.metadata_location)
    assert sorted(tuple(r) for r in java.select("id", "cat", "v").collect()) == mine
    side = table.scan(snapshot_id=table.snapshot_by_name("side").snapshot_id).to_arrow()
    java_side = spark.read.format("iceberg").option("branch", "side").load(table.metadata_location)
    assert sorted(tuple(r) for r in java_side.select("id", "cat", "v").collect()) == sorted(
        tuple(r.values()) for r in side.to_pylist()
    )
    # A second pass finds nothing: the table is clean.
    assert spark_orphans(spark, table, older_than=NOW_MS + DAY_S * 1000, dry_run=True) == []
