"""Reading rows of a table whose data and delete files are on S3 (moto's server on loopback):
pyarrow's S3 filesystem configured from the table's FileIO properties reads them like local
files; ``file:`` URIs read locally; a missing object names itself."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import StaticTable, _native
from frazil import manifest as m
from frazil.io import FileIO
from frazil.io._arrow import s3_filesystem_options
from s3_loopback import Moto

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
    ],
}
UNPARTITIONED = {"spec-id": 0, "fields": []}
ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), False, {b"PARQUET:field_id": b"1"}),
        pa.field("name", pa.string(), True, {b"PARQUET:field_id": b"2"}),
    ]
)
POSITIONS = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": b"2147483545"}),
    ]
)


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=4)
    return out.getvalue()


def _file(path: str, data: bytes, records: int, content: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "content": content,
        "file_path": path,
        "file_format": "PARQUET",
        "partition": {},
        "record_count": records,
        "file_size_in_bytes": len(data),
        **extra,
    }


def _table(root: Path, data: list[dict[str, Any]], deletes: list[dict[str, Any]]) -> Path:
    rows = [
        m.write_manifest(
            root / "m-data.avro",
            [{"status": 1, "data_file": f} for f in data],
            schema=SCHEMA,
            spec=UNPARTITIONED,
            snapshot_id=1,
            format_version=3,
        )
    ]
    if deletes:
        rows.append(
            m.write_manifest(
                root / "m-deletes.avro",
                [{"status": 1, "data_file": f} for f in deletes],
                schema=SCHEMA,
                spec=UNPARTITIONED,
                snapshot_id=1,
                content="deletes",
                format_version=3,
            )
        )
    listing = root / "snap-1.avro"
    added = m.write_manifest_list(
        listing, rows, snapshot_id=1, sequence_number=1, format_version=3, first_row_id=0
    )
    metadata = {
        "format-version": 3,
        "table-uuid": "8c3c2e7e-4d0a-4b7e-9d63-0e3c7c1d2a11",
        "location": str(root),
        "last-sequence-number": 1,
        "last-updated-ms": 1,
        "last-column-id": 2,
        "schemas": [SCHEMA],
        "current-schema-id": 0,
        "partition-specs": [UNPARTITIONED],
        "default-spec-id": 0,
        "last-partition-id": 999,
        "properties": {},
        "current-snapshot-id": 1,
        "snapshots": [
            {
                "snapshot-id": 1,
                "sequence-number": 1,
                "timestamp-ms": 1,
                "manifest-list": str(listing),
                "summary": {"operation": "append"},
                "schema-id": 0,
                "first-row-id": 0,
                "added-rows": added,
            }
        ],
        "snapshot-log": [],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
        "next-row-id": added,
    }
    location = root / "v1.metadata.json"
    location.write_text(json.dumps(metadata))
    return location


def test_rows_and_deletes_on_s3(moto_server: Moto, bucket: str, tmp_path: Path) -> None:
    fio = FileIO(moto_server.properties)
    first = f"s3://{bucket}/t/data/a.parquet"
    second = f"s3a://{bucket}/t/data/b.parquet"  # s3a: the same store
    a = _parquet(pa.table({"id": range(10), "name": [f"a{i}" for i in range(10)]}, schema=ARROW))
    b = _parquet(pa.table({"id": range(10, 15), "name": [None] * 5}, schema=ARROW))
    fio.write(first, a)
    fio.write(second.replace("s3a://", "s3://"), b)
    position_path = f"s3://{bucket}/t/data/pos.parquet"
    positions = _parquet(pa.table({"file_path": [first, first], "pos": [0, 9]}, schema=POSITIONS))
    fio.write(position_path, positions)
    dv_path = f"s3://{bucket}/t/data/dv.puffin"
    (dv,) = _native.write_deletion_vector_puffin(dv_path, [(second, [1, 3])], io=fio._raw)
    data = [_file(first, a, 10), _file(second, b, 5)]
    deletes = [
        _file(position_path, positions, 2, content=1),
        _file(
            dv_path,
            b"",
            2,
            content=1,
            file_format="PUFFIN",
            file_size_in_bytes=dv["file_size_in_bytes"],
            referenced_data_file=second,
            content_offset=dv["content_offset"],
            content_size_in_bytes=dv["content_size_in_bytes"],
        ),
    ]
    location = _table(tmp_path, data, deletes)
    table = StaticTable.from_metadata(str(location), properties=moto_server.properties)
    result = table.scan().to_arrow()
    assert sorted(result.column("id").to_pylist()) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14]
    assert table.scan(row_filter="name IS NULL").count() == 3
    fio.delete(first)
    with pytest.raises(FileNotFoundError, match=r"a\.parquet"):
        table.scan().to_arrow()


def test_file_uris_read_locally(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    data = _parquet(pa.table({"id": [1, 2], "name": ["x", "y"]}, schema=ARROW))
    path.write_bytes(data)
    location = _table(tmp_path, [_file(path.as_uri(), data, 2)], [])
    rows = StaticTable.from_metadata(str(location)).scan().to_arrow().to_pylist()
    assert rows == [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}]


def test_s3_options_follow_the_fileio_properties() -> None:
    options = s3_filesystem_options(
        {
            "s3.endpoint": "http://127.0.0.1:9000/",
            "client.access-key-id": "k",
            "s3.secret-access-key": "s",
            "s3.region": "eu-west-1",
            "s3.path-style-access": "true",
            "s3.connect-timeout": "2.5",
            "s3.retry.num-retries": "3",
        }
    )
    assert options["scheme"] == "http"
    assert options["endpoint_override"] == "127.0.0.1:9000"
    assert options["access_key"] == "k" and options["secret_key"] == "s"
    assert options["region"] == "eu-west-1"
    assert options["force_virtual_addressing"] is False
    assert options["connect_timeout"] == 2.5
    with pytest.raises(ValueError, match="contradict"):
        s3_filesystem_options(
            {"s3.path-style-access": "true", "s3.force-virtual-addressing": "true"}
        )
    with pytest.raises(ValueError, match="num-retries"):
        s3_filesystem_options({"s3.retry.num-retries": "many"})
