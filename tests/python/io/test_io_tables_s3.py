"""Manifests, manifest lists and table metadata written to and read from S3
(moto's server), through the same FileIO as local files."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from frazil import StaticTable, read_metadata, write_metadata
from frazil import manifest as m
from frazil.errors import NotFoundError
from frazil.io import FileIO
from frazil.metadata import TableMetadata
from s3_loopback import Moto

METADATA_DATA = Path(__file__).parents[1] / "metadata" / "data"

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "region", "required": False, "type": "string"},
    ],
}
SPEC = {
    "spec-id": 0,
    "fields": [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}],
}


def entry(path: str, region: str, records: int) -> dict[str, Any]:
    return {
        "status": 1,
        "snapshot_id": None,
        "data_file": {
            "content": 0,
            "file_path": path,
            "file_format": "PARQUET",
            "partition": {"region": region},
            "record_count": records,
            "file_size_in_bytes": 100 * records,
            "lower_bounds": [(1, struct.pack("<q", 0))],
            "upper_bounds": [(1, struct.pack("<q", records))],
        },
    }


def write_snapshot(root: str, io: Any, manifests: int = 3) -> str:
    """Writes `manifests` manifests of 4 entries each and their manifest list
    under `root`; returns the manifest list's location."""
    rows = []
    for i in range(manifests):
        entries = [entry(f"{root}/data/{i}-{j}.parquet", f"r{j}", j + 1) for j in range(4)]
        rows.append(
            m.write_manifest(
                f"{root}/metadata/m{i}.avro",
                entries,
                schema=SCHEMA,
                spec=SPEC,
                snapshot_id=7,
                io=io,
            )
        )
    listing = f"{root}/metadata/snap-7.avro"
    m.write_manifest_list(listing, rows, snapshot_id=7, sequence_number=3, io=io)
    return listing


def check_snapshot(listing_location: str, root: str, io: Any, manifests: int = 3) -> None:
    listing = m.read_manifest_list(listing_location, io=io)
    assert listing.column("manifest_path").to_pylist() == [
        f"{root}/metadata/m{i}.avro" for i in range(manifests)
    ]
    assert listing.column("sequence_number").to_pylist() == [3] * manifests
    tables = m.read_manifests(listing, threads=2, io=io)
    for i, table in enumerate(tables):
        files = table.column("data_file").combine_chunks().field("file_path").to_pylist()
        assert files == [f"{root}/data/{i}-{j}.parquet" for j in range(4)]
        assert table.column("sequence_number").to_pylist() == [3] * 4
        assert table.column("snapshot_id").to_pylist() == [7] * 4
    first = listing.to_pylist()[0]
    one = m.read_manifest(first["manifest_path"], ["data_file.record_count"], first, io=io)
    assert one.column("data_file").combine_chunks().field("record_count").to_pylist() == [
        1,
        2,
        3,
        4,
    ]


def test_manifests_on_s3(moto_server: Moto, bucket: str) -> None:
    fio = FileIO(moto_server.properties)
    root = f"s3://{bucket}/warehouse/db/t"
    listing = write_snapshot(root, fio)
    check_snapshot(listing, root, fio)
    # Properties work in place of a FileIO.
    check_snapshot(listing, root, moto_server.properties)
    # The bytes on S3 are an Avro container file.
    key = "warehouse/db/t/metadata/m0.avro"
    head = moto_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()[:4]
    assert head == b"Obj\x01"


def test_s3a_manifest_paths_read_through_the_same_store(moto_server: Moto, bucket: str) -> None:
    fio = FileIO(moto_server.properties)
    root = f"s3a://{bucket}/wh/t"
    listing = write_snapshot(root, fio, manifests=2)
    check_snapshot(listing.replace("s3a://", "s3://"), root, fio, manifests=2)


def test_missing_manifest_on_s3_names_it(moto_server: Moto, bucket: str) -> None:
    fio = FileIO(moto_server.properties)
    root = f"s3://{bucket}/t"
    listing = write_snapshot(root, fio, manifests=2)
    fio.delete(f"{root}/metadata/m1.avro")
    rows = m.read_manifest_list(listing, io=fio)
    with pytest.raises(NotFoundError, match=rf"s3://{bucket}/t/metadata/m1\.avro"):
        m.read_manifests(rows, io=fio)
    with pytest.raises(FileNotFoundError, match="snap-9"):
        m.read_manifest_list(f"{root}/metadata/snap-9.avro", io=fio)


def test_local_manifests_keep_working_without_io(tmp_path: Path) -> None:
    for root in (str(tmp_path / "plain"), (tmp_path / "uri").as_uri()):
        listing = write_snapshot(root, None)
        check_snapshot(listing, root, None)


@pytest.mark.parametrize("name", ["v1.metadata.json", "v2.gz.metadata.json", "v3.metadata.json.gz"])
def test_metadata_on_s3(moto_server: Moto, bucket: str, name: str) -> None:
    fio = FileIO(moto_server.properties)
    java = json.loads((METADATA_DATA / "v2-java.metadata.json").read_text())
    metadata = TableMetadata.from_json(java)
    location = f"s3://{bucket}/wh/t/metadata/{name}"
    write_metadata(metadata, location, io=fio)
    raw = fio.read(location)
    if "gz" in name:
        assert raw[:2] == b"\x1f\x8b"
        raw = gzip.decompress(raw)
    assert json.loads(raw) == java
    read = read_metadata(location, io=moto_server.properties)
    assert read == metadata and read.metadata_location == location
    # Metadata files are immutable: a second write of the same name fails and
    # leaves the first in place.
    changed = metadata.replace(properties={"owner": "someone else"})
    with pytest.raises(FileExistsError, match=name.replace(".", r"\.")):
        write_metadata(changed, location, io=fio)
    assert read_metadata(location, io=fio) == metadata


def test_missing_metadata_on_s3(moto_server: Moto, bucket: str) -> None:
    with pytest.raises(NotFoundError, match=f"s3://{bucket}/none.metadata.json"):
        read_metadata(f"s3://{bucket}/none.metadata.json", io=moto_server.properties)


UUID = "6d1e4c8a-9a55-4d44-8a4c-1f0e6e0d7c11"


def write_table_metadata(root: str, io: Any, listing: str, version: int) -> str:
    """A v2 metadata file ``v<version>.metadata.json`` under ``root``/metadata whose one
    snapshot (id 7) reads ``listing``; returns its location."""
    metadata = {
        "format-version": 2,
        "table-uuid": UUID,
        "location": root,
        "last-sequence-number": 3,
        "last-updated-ms": 1_700_000_000_000 + version,
        "last-column-id": 2,
        "schemas": [SCHEMA],
        "current-schema-id": 0,
        "partition-specs": [SPEC],
        "default-spec-id": 0,
        "last-partition-id": 1000,
        "properties": {"version": str(version)},
        "current-snapshot-id": 7,
        "snapshots": [
            {
                "snapshot-id": 7,
                "sequence-number": 3,
                "timestamp-ms": 1_700_000_000_000,
                "manifest-list": listing,
                "summary": {"operation": "append"},
                "schema-id": 0,
            }
        ],
        "snapshot-log": [{"snapshot-id": 7, "timestamp-ms": 1_700_000_000_000}],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "refs": {"main": {"snapshot-id": 7, "type": "branch"}},
    }
    location = f"{root}/metadata/v{version}.metadata.json"
    (io if io is not None else FileIO()).write(location, json.dumps(metadata).encode())
    return location


def planned(table: Any, **scan: Any) -> list[str]:
    return sorted(task.file.file_path for task in table.scan(**scan).plan_files())


def test_static_table_on_s3_plans_through_its_file_io(moto_server: Moto, bucket: str) -> None:
    fio = FileIO(moto_server.properties)
    root = f"s3://{bucket}/wh/db/t"
    listing = write_snapshot(root, fio, manifests=2)
    location = write_table_metadata(root, fio, listing, 1)
    expected = sorted(f"{root}/data/{i}-{j}.parquet" for i in range(2) for j in range(4))

    table = StaticTable.from_metadata(location, moto_server.properties)
    assert table.metadata_location == location
    assert table.io.properties == moto_server.properties
    assert planned(table) == expected
    assert planned(table, row_filter="region = 'r2'") == [
        f"{root}/data/{i}-2.parquet" for i in range(2)
    ]

    # A table directory: version-hint.text names the version, newer ones are probed, and
    # without a hint the directory is listed.
    assert StaticTable.from_metadata(root, moto_server.properties).metadata_location == location
    fio.write(f"{root}/metadata/version-hint.text", b"1\n")
    v2 = write_table_metadata(root, fio, listing, 2)
    for opened in (root, f"{root}/"):
        assert StaticTable.from_metadata(opened, moto_server.properties).metadata_location == v2
    fio.delete(f"{root}/metadata/version-hint.text")
    assert StaticTable.from_metadata(root, moto_server.properties).properties["version"] == "2"

    # A manifest that went missing is named by the error planning raises.
    fio.delete(f"{root}/metadata/m1.avro")
    with pytest.raises(NotFoundError, match=rf"{root}/metadata/m1\.avro"):
        planned(StaticTable.from_metadata(location, moto_server.properties))
    # No metadata file and no table directory.
    with pytest.raises(NotFoundError, match=f"s3://{bucket}/elsewhere"):
        StaticTable.from_metadata(f"s3://{bucket}/elsewhere", moto_server.properties)


@pytest.mark.parametrize("form", ["path", "uri"])
def test_static_table_directory_on_local_disk(tmp_path: Path, form: str) -> None:
    base = tmp_path / "a table"
    root = str(base) if form == "path" else f"file://{base}"  # verbatim: a space, not %20
    listing = write_snapshot(root, None, manifests=1)
    write_table_metadata(root, None, listing, 1)
    v2 = write_table_metadata(root, None, listing, 2)
    (base / "metadata" / "version-hint.text").write_text("1")
    table = StaticTable.from_metadata(root)
    assert table.metadata_location == v2
    assert planned(table) == sorted(f"{root}/data/0-{j}.parquet" for j in range(4))
    (base / "metadata" / "version-hint.text").write_text("not a number")
    assert StaticTable.from_metadata(root).metadata_location == v2
    with pytest.raises(NotFoundError, match="no table metadata"):
        StaticTable.from_metadata(str(tmp_path / "none"))
