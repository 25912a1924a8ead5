"""Manifests written by another writer (fastavro, in the v1 and v2 shapes Java
writes, with extra fields and other codecs) decode by field id."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import pytest
from frazil import manifest as m
from frazil.errors import InvalidDataError

TABLE_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "region", "required": False, "type": "string"},
    ],
}
SPEC_FIELDS = [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}]


def opt(t: Any) -> list[Any]:
    return ["null", t]


def int_map(name: str, key_id: int, value_id: int, value: str, field_id: int) -> dict[str, Any]:
    return {
        "name": name,
        "type": opt(
            {
                "type": "array",
                "logicalType": "map",
                "items": {
                    "type": "record",
                    "name": f"k{key_id}_v{value_id}",
                    "fields": [
                        {"name": "key", "type": "int", "field-id": key_id},
                        {"name": "value", "type": value, "field-id": value_id},
                    ],
                },
            }
        ),
        "default": None,
        "field-id": field_id,
    }


def v1_schema() -> dict[str, Any]:
    """Java's V1 manifest_entry layout plus the deprecated fields old writers had."""
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "file_format", "type": "string", "field-id": 101},
            {
                "name": "partition",
                "type": {
                    "type": "record",
                    "name": "r102",
                    "fields": [
                        {"name": "region", "type": opt("string"), "default": None, "field-id": 1000}
                    ],
                },
                "field-id": 102,
            },
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            {"name": "block_size_in_bytes", "type": "long", "field-id": 105},
            {"name": "file_ordinal", "type": opt("int"), "default": None, "field-id": 106},
            {
                "name": "sort_columns",
                "type": opt({"type": "array", "items": "int", "element-id": 112}),
                "default": None,
                "field-id": 107,
            },
            int_map("column_sizes", 117, 118, "long", 108),
            int_map("value_counts", 119, 120, "long", 109),
            int_map("null_value_counts", 121, 122, "long", 110),
            int_map("distinct_counts", 123, 124, "long", 111),
            int_map("lower_bounds", 126, 127, "bytes", 125),
            int_map("upper_bounds", 129, 130, "bytes", 128),
            {"name": "key_metadata", "type": opt("bytes"), "default": None, "field-id": 131},
            {
                "name": "split_offsets",
                "type": opt({"type": "array", "items": "long", "element-id": 133}),
                "default": None,
                "field-id": 132,
            },
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            {"name": "snapshot_id", "type": "long", "field-id": 1},
            {"name": "data_file", "type": data_file, "field-id": 2},
        ],
    }


def v2_schema() -> dict[str, Any]:
    """A v2 layout in a different field order, with an unknown extra field."""
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            {
                "name": "future_field",
                "type": opt({"type": "map", "values": "long"}),
                "default": None,
                "field-id": 9999,
            },
            {"name": "file_format", "type": "string", "field-id": 101},
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "content", "type": "int", "field-id": 134},
            {
                "name": "partition",
                "type": {
                    "type": "record",
                    "name": "r102",
                    "fields": [
                        {"name": "region", "type": opt("string"), "default": None, "field-id": 1000}
                    ],
                },
                "field-id": 102,
            },
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            int_map("lower_bounds", 126, 127, "bytes", 125),
            {
                "name": "equality_ids",
                "type": opt({"type": "array", "items": "int", "element-id": 136}),
                "default": None,
                "field-id": 135,
            },
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            {"name": "snapshot_id", "type": opt("long"), "default": None, "field-id": 1},
            {"name": "data_file", "type": data_file, "field-id": 2},
            {"name": "sequence_number", "type": opt("long"), "default": None, "field-id": 3},
            {"name": "file_sequence_number", "type": opt("long"), "default": None, "field-id": 4},
        ],
    }


def write(
    path: Path,
    schema: dict[str, Any],
    records: list[Any],
    meta: dict[str, str],
    codec: str = "deflate",
) -> None:
    with open(path, "wb") as out:
        fastavro.writer(
            out,
            fastavro.parse_schema(schema),
            records,
            codec=codec,
            metadata=meta,
            sync_interval=200,
        )


def v1_record(i: int) -> dict[str, Any]:
    return {
        "status": 1 if i % 3 else 0,
        "snapshot_id": 100 + i,
        "data_file": {
            "file_path": f"s3://b/{i}.parquet",
            "file_format": "PARQUET",
            "partition": {"region": None if i == 2 else f"r{i % 2}"},
            "record_count": i + 1,
            "file_size_in_bytes": 10 * (i + 1),
            "block_size_in_bytes": 67108864,
            "file_ordinal": i,
            "sort_columns": [1, 2],
            "column_sizes": [{"key": 1, "value": 8 * i}],
            "value_counts": None,
            "null_value_counts": [{"key": 1, "value": 0}, {"key": 2, "value": i}],
            "distinct_counts": [{"key": 1, "value": 3}],
            "lower_bounds": [{"key": 1, "value": struct.pack("<q", i)}],
            "upper_bounds": [{"key": 1, "value": struct.pack("<q", 2 * i)}],
            "key_metadata": None,
            "split_offsets": [4, 100],
        },
    }


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_v1_manifest_from_another_writer(tmp_path: Path, codec: str) -> None:
    path = tmp_path / "v1.avro"
    records = [v1_record(i) for i in range(50)]
    meta = {"schema": json.dumps(TABLE_SCHEMA), "partition-spec": json.dumps(SPEC_FIELDS)}
    write(path, v1_schema(), records, meta, codec)
    table = m.read_manifest(path)
    assert table.num_rows == 50
    rows = table.to_pylist()
    for i, row in enumerate(rows):
        want = records[i]["data_file"]
        df = row["data_file"]
        assert row["status"] == records[i]["status"]
        assert row["snapshot_id"] == 100 + i
        # v1: sequence numbers and content default to 0 (Appendix E).
        assert (row["sequence_number"], row["file_sequence_number"], df["content"]) == (0, 0, 0)
        assert df["file_path"] == want["file_path"]
        assert df["partition"] == want["partition"]
        assert df["column_sizes"] == [(1, 8 * i)]
        assert df["value_counts"] is None
        assert df["null_value_counts"] == [(1, 0), (2, i)]
        assert df["lower_bounds"] == [(1, struct.pack("<q", i))]
        assert df["split_offsets"] == [4, 100]
        assert df["equality_ids"] is None and df["sort_order_id"] is None


def test_v2_manifest_with_reordered_and_unknown_fields(tmp_path: Path) -> None:
    path = tmp_path / "v2.avro"
    records = [
        {
            "status": [1, 0, 2][i % 3],
            "snapshot_id": None if i % 3 == 0 else 7,
            "sequence_number": None if i % 3 == 0 else 3,
            "file_sequence_number": None if i % 3 == 0 else 4,
            "data_file": {
                "future_field": {"a": 1},
                "file_format": "PARQUET",
                "file_path": f"p{i}",
                "content": 2,
                "partition": {"region": "eu"},
                "record_count": 5,
                "file_size_in_bytes": 6,
                "lower_bounds": None,
                "equality_ids": [1, 2],
            },
        }
        for i in range(9)
    ]
    meta = {
        "schema": json.dumps(TABLE_SCHEMA),
        "partition-spec": json.dumps(SPEC_FIELDS),
        "partition-spec-id": "0",
        "format-version": "2",
        "content": "deletes",
    }
    write(path, v2_schema(), records, meta)
    mf = {"added_snapshot_id": 55, "sequence_number": 9}
    table = m.read_manifest(path, manifest_file=mf)
    rows = table.to_pylist()
    assert [r["snapshot_id"] for r in rows[:3]] == [55, 7, 7]
    assert [r["sequence_number"] for r in rows[:3]] == [9, 3, 3]
    assert [r["file_sequence_number"] for r in rows[:3]] == [9, 4, 4]
    assert all(r["data_file"]["equality_ids"] == [1, 2] for r in rows)
    assert all(r["data_file"]["content"] == 2 for r in rows)
    assert all(r["data_file"]["column_sizes"] is None for r in rows)
    assert [r["data_file"]["file_path"] for r in rows] == [f"p{i}" for i in range(9)]
    projected = m.read_manifest(path, columns=["data_file.file_path"])
    assert projected.column("data_file").to_pylist()[0] == {"file_path": "p0"}


def test_manifest_list_from_another_writer_v1(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "int", "field-id": 502},
            {"name": "added_snapshot_id", "type": opt("long"), "default": None, "field-id": 503},
            {
                "name": "added_data_files_count",
                "type": opt("int"),
                "default": None,
                "field-id": 504,
            },
            {
                "name": "partitions",
                "type": opt(
                    {
                        "type": "array",
                        "element-id": 508,
                        "items": {
                            "type": "record",
                            "name": "r508",
                            "fields": [
                                {"name": "contains_null", "type": "boolean", "field-id": 509},
                                {
                                    "name": "lower_bound",
                                    "type": opt("bytes"),
                                    "default": None,
                                    "field-id": 510,
                                },
                                {
                                    "name": "upper_bound",
                                    "type": opt("bytes"),
                                    "default": None,
                                    "field-id": 511,
                                },
                            ],
                        },
                    }
                ),
                "default": None,
                "field-id": 507,
            },
        ],
    }
    records = [
        {
            "manifest_path": "m.avro",
            "manifest_length": 10,
            "partition_spec_id": 0,
            "added_snapshot_id": 3,
            "added_data_files_count": 2,
            "partitions": [{"contains_null": True, "lower_bound": b"a", "upper_bound": None}],
        }
    ]
    path = tmp_path / "list.avro"
    write(path, schema, records, {})
    (row,) = m.read_manifest_list(path).to_pylist()
    assert (row["content"], row["sequence_number"], row["min_sequence_number"]) == (0, 0, 0)
    assert row["added_files_count"] == 2 and row["existing_files_count"] is None
    assert row["partitions"] == [
        {"contains_null": True, "contains_nan": None, "lower_bound": b"a", "upper_bound": None}
    ]


def test_schema_without_field_ids_is_refused(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "manifest_entry",
        "fields": [{"name": "status", "type": "int"}],
    }
    path = tmp_path / "noid.avro"
    write(path, schema, [{"status": 1}], {})
    with pytest.raises(InvalidDataError, match=r"noid\.avro.*field-id"):
        m.read_manifest(path)


def test_unknown_codec_and_wrong_magic(tmp_path: Path) -> None:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(v1_schema()), [v1_record(1)], codec="null")
    data = buf.getvalue().replace(b"\x08null", b"\x08lz4x", 1)
    path = tmp_path / "codec.avro"
    path.write_bytes(data)
    with pytest.raises(InvalidDataError, match="codec"):
        m.read_manifest(path)
    path.write_bytes(b"PAR1" + data[4:])
    with pytest.raises(InvalidDataError, match="magic"):
        m.read_manifest(path)
