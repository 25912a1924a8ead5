"""Writes to S3 (moto's server on loopback) work like local ones: a SqlCatalog whose warehouse
is an s3:// location creates, appends, deletes (copy-on-write), overwrites and expires; the
FileSystemCatalog on S3 commits through ``If-None-Match: *`` puts, which moto honours."""

from __future__ import annotations

import datetime
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import AlreadyExistsError
from frazil.io import FileIO
from frazil.table import Table
from s3_loopback import Moto

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _objects(moto: Moto, bucket: str) -> set[str]:
    pages = moto.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return {f"s3://{bucket}/{o['Key']}" for page in pages for o in page.get("Contents", [])}


def _exercise(table: Table) -> None:
    """Append, copy-on-write delete, overwrite and expire; each step read back."""
    table.append(_rows(1, 2, 3))
    table.append(_rows(4, 5))
    assert _ids(table) == [1, 2, 3, 4, 5]
    table.delete("id = 2")  # rewrites the first file without row 2
    assert _ids(table) == [1, 3, 4, 5]
    table.overwrite(_rows(9), "id >= 4")
    assert _ids(table) == [1, 3, 9]
    head = table.current_snapshot()
    assert head is not None and head.summary is not None
    assert head.summary["total-records"] == "3" and head.sequence_number == 4
    rows = table.scan(row_filter="id > 1").to_arrow().sort_by("id")
    assert rows.to_pylist() == [{"id": 3, "name": "n3"}, {"id": 9, "name": "n9"}]


def test_sql_catalog_with_an_s3_warehouse(moto_server: Moto, bucket: str, tmp_path: Path) -> None:
    warehouse = f"s3://{bucket}/wh"
    catalog = SqlCatalog(
        "s3", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=warehouse, **moto_server.properties
    )
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    assert table.location() == f"{warehouse}/db/t"
    _exercise(table)
    again = catalog.load_table("db.t")
    assert again.metadata_location is not None and again.metadata_location.startswith(warehouse)
    assert _ids(again) == [1, 3, 9]

    before = _objects(moto_server, bucket)
    assert any(o.endswith(".parquet") for o in before)
    now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
    result = again.expire_snapshots(older_than=now, retain_last=1)
    assert len(result.expired_snapshot_ids) == 3 and not result.failed
    # Files only the older snapshots reached: two replaced data files, manifests, lists.
    assert result.deleted_data_files_count == 2
    after = _objects(moto_server, bucket)
    assert before - after == set(result.deleted_files)
    assert all(o.endswith(".metadata.json") for o in after - before)  # the expiry's commit
    assert len(again.refresh().snapshots()) == 1
    assert _ids(catalog.load_table("db.t")) == [1, 3, 9]
    # Nothing the remaining snapshot reaches was deleted: every file of the scan is there.
    io = FileIO(moto_server.properties)
    for task in catalog.load_table("db.t").scan().plan_files():
        assert io.exists(task.file.file_path)


def test_filesystem_catalog_on_s3_commits_with_if_none_match(
    moto_server: Moto, bucket: str
) -> None:
    catalog = FileSystemCatalog("fs", warehouse=f"s3://{bucket}/wh", **moto_server.properties)
    # (an object store has no directories: the namespace exists through its table)
    table = catalog.create_table("db.t", SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    # moto honours If-None-Match: *: a second create-if-absent of one object is refused, so
    # the catalog's probe passes and commits go through.
    io = FileIO(moto_server.properties)
    probe = f"s3://{bucket}/probe"
    io.write(probe, b"1", overwrite=False)
    with pytest.raises(AlreadyExistsError):
        io.write(probe, b"2", overwrite=False)
    assert catalog.list_tables("db") == [("db", "t")] and catalog.namespace_exists("db")
    _exercise(table)
    metadata = {o for o in _objects(moto_server, bucket) if o.endswith(".metadata.json")}
    assert {o.rsplit("/", 1)[-1] for o in metadata} == {f"v{i}.metadata.json" for i in range(1, 6)}
    # A stale writer loses the version race and retries on top of the winner.
    stale = catalog.load_table("db.t")
    table.append(_rows(20))
    stale.append(_rows(21))
    assert _ids(catalog.load_table("db.t")) == [1, 3, 9, 20, 21]
