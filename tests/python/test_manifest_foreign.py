"""Manifests written by another writer (fastavro, in the v1 and v2 shapes Java
writes, with extra fields and other codecs) decode by field id."""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from frazil import manifest as m
from frazil.errors import FrazilError, InvalidDataError

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


# --- foreign but valid schema shapes ----------------------------------------------------


def _meta(
    schema: dict[str, Any], spec: list[dict[str, Any]], content: str = "data"
) -> dict[str, str]:
    return {
        "schema": json.dumps(schema),
        "partition-spec": json.dumps(spec),
        "partition-spec-id": "0",
        "format-version": "2",
        "content": content,
    }


def _long_ints_schema() -> dict[str, Any]:
    """A v2 manifest whose ints are all declared as Avro longs, as pyiceberg 0.12 writes
    equality_ids: content, the partition int, map keys, list elements, sort_order_id."""

    def long_map(name: str, key_id: int, value_id: int, value: str, field_id: int) -> Any:
        field = int_map(name, key_id, value_id, value, field_id)
        field["type"][1]["items"]["fields"][0]["type"] = "long"
        return field

    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            {"name": "content", "type": "long", "field-id": 134},
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "file_format", "type": "string", "field-id": 101},
            {
                "name": "partition",
                "type": {
                    "type": "record",
                    "name": "r102",
                    "fields": [
                        {"name": "b", "type": opt("long"), "default": None, "field-id": 1000}
                    ],
                },
                "field-id": 102,
            },
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            long_map("column_sizes", 117, 118, "long", 108),
            long_map("lower_bounds", 126, 127, "bytes", 125),
            {
                "name": "equality_ids",
                "type": opt({"type": "array", "items": "long", "element-id": 136}),
                "default": None,
                "field-id": 135,
            },
            {"name": "sort_order_id", "type": opt("long"), "default": None, "field-id": 140},
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "long", "field-id": 0},
            {"name": "snapshot_id", "type": opt("long"), "default": None, "field-id": 1},
            {"name": "sequence_number", "type": opt("long"), "default": None, "field-id": 3},
            {"name": "file_sequence_number", "type": opt("long"), "default": None, "field-id": 4},
            {"name": "data_file", "type": data_file, "field-id": 2},
        ],
    }


BUCKET_SPEC = [{"name": "b", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}]


def _long_ints_record(i: int, equality_ids: list[int] | None) -> dict[str, Any]:
    return {
        "status": 1,
        "snapshot_id": 7,
        "sequence_number": 3,
        "file_sequence_number": 3,
        "data_file": {
            "content": 2 if equality_ids else 0,
            "file_path": f"f{i}",
            "file_format": "PARQUET",
            "partition": {"b": i % 8},
            "record_count": 1,
            "file_size_in_bytes": 2,
            "column_sizes": [{"key": 1, "value": 10}],
            "lower_bounds": [{"key": 1, "value": struct.pack("<q", i)}],
            "equality_ids": equality_ids,
            "sort_order_id": None if i % 2 else 0,
        },
    }


def test_avro_longs_read_as_iceberg_ints(tmp_path: Path) -> None:
    # pyiceberg 0.12 declares equality_ids as array<long>; Java would fail on it with
    # a ClassCastException. A long that fits is read as the int the spec says.
    path = tmp_path / "longs.avro"
    ids = [1, 2, 2**31 - 1, -(2**31)]
    records = [_long_ints_record(i, ids if i % 3 else None) for i in range(20)]
    write(path, _long_ints_schema(), records, _meta(TABLE_SCHEMA, BUCKET_SPEC, "deletes"))
    table = m.read_manifest(path)
    assert table.schema.field("data_file").type.field("equality_ids").type == pa.list_(pa.int32())
    rows = table.to_pylist()
    for i, row in enumerate(rows):
        df = row["data_file"]
        assert row["status"] == 1
        assert df["content"] == (2 if i % 3 else 0)
        assert df["equality_ids"] == (ids if i % 3 else None)
        assert df["partition"] == {"b": i % 8}
        assert df["column_sizes"] == [(1, 10)]
        assert df["lower_bounds"] == [(1, struct.pack("<q", i))]
        assert df["sort_order_id"] == (None if i % 2 else 0)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("equality_ids", 2**31),
        ("equality_ids", -(2**31) - 1),
        ("sort_order_id", 2**40),
        ("partition", -(2**63)),
        ("column_sizes", 2**32 + 1),
    ],
)
def test_avro_longs_that_do_not_fit_an_int_are_refused(
    tmp_path: Path, where: str, value: int
) -> None:
    record = _long_ints_record(0, [1])
    df = record["data_file"]
    field = {
        "equality_ids": "data_file.equality_ids.element",
        "sort_order_id": "data_file.sort_order_id",
        "partition": "data_file.partition.b",
        "column_sizes": "data_file.column_sizes.key",
    }[where]
    if where == "equality_ids":
        df["equality_ids"] = [1, value]
    elif where == "sort_order_id":
        df["sort_order_id"] = value
    elif where == "partition":
        df["partition"] = {"b": value}
    else:
        df["column_sizes"] = [{"key": value, "value": 1}]
    path = tmp_path / "overflow.avro"
    write(path, _long_ints_schema(), [record], _meta(TABLE_SCHEMA, BUCKET_SPEC))
    with pytest.raises(InvalidDataError) as error:
        m.read_manifest(path)
    message = str(error.value)
    assert "overflow.avro" in message and field in message and str(value) in message


def _shapes_schema() -> dict[str, Any]:
    """Valid Avro that no Iceberg writer uses but Java's reader accepts: unions with the
    null branch last, a required field written as a union, optional fields written bare,
    a one-branch union, a three-branch union, fields without a field-id (skipped) and
    with an id the reader does not know, and optional fields left out entirely."""
    partition = {
        "type": "record",
        "name": "r102",
        "fields": [{"name": "region", "type": "string", "field-id": 1000}],
    }
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            {"name": "comment", "type": ["string", "null"]},
            {"name": "file_path", "type": ["string", "null"], "field-id": 100},
            {"name": "file_format", "type": ["string"], "field-id": 101},
            {"name": "partition", "type": partition, "field-id": 102},
            {"name": "record_count", "type": ["null", "int", "long"], "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            {"name": "extra", "type": {"type": "map", "values": "int"}, "field-id": 9000},
            {
                "name": "split_offsets",
                "type": [{"type": "array", "items": ["long", "null"], "element-id": 133}, "null"],
                "field-id": 132,
            },
            {"name": "key_metadata", "type": "bytes", "field-id": 131},
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": ["int", "null"], "field-id": 0},
            {"name": "snapshot_id", "type": "long", "field-id": 1},
            {"name": "data_file", "type": ["null", data_file], "field-id": 2},
        ],
    }


def test_foreign_union_and_field_shapes(tmp_path: Path) -> None:
    records = [
        {
            "status": 1,
            "snapshot_id": 5,
            "data_file": {
                "comment": "ignored" if i % 2 else None,
                "file_path": f"p{i}",
                "file_format": "PARQUET",
                "partition": {"region": "eu"},
                "record_count": i if i % 2 else None,
                "file_size_in_bytes": 9,
                "extra": {"x": i},
                "split_offsets": [4, None] if i % 2 else None,
                "key_metadata": b"k",
            },
        }
        for i in range(6)
    ]
    path = tmp_path / "shapes.avro"
    spec = [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}]
    write(path, _shapes_schema(), records, _meta(TABLE_SCHEMA, spec))
    rows = m.read_manifest(path, manifest_file={"sequence_number": 4}).to_pylist()
    for i, row in enumerate(rows):
        df = row["data_file"]
        assert (row["status"], row["snapshot_id"], row["sequence_number"]) == (1, 5, 4)
        assert df["file_path"] == f"p{i}" and df["file_format"] == "PARQUET"
        assert df["partition"] == {"region": "eu"}
        assert df["record_count"] == (i if i % 2 else None)
        assert df["split_offsets"] == ([4, None] if i % 2 else None)
        assert df["key_metadata"] == b"k"
        # Left out by the writer: null, as optional fields are.
        assert df["lower_bounds"] is None and df["equality_ids"] is None


def test_timestamp_millis_partition_values_are_scaled(tmp_path: Path) -> None:
    # Java's reader multiplies Avro timestamp-millis by 1000; so does frazil, for
    # microsecond and nanosecond partition values alike.
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "ts", "required": False, "type": "timestamp"},
            {"id": 2, "name": "ns", "required": False, "type": "timestamp_ns"},
        ],
    }
    spec = [
        {"name": "ts", "transform": "identity", "source-id": 1, "field-id": 1000},
        {"name": "ns", "transform": "identity", "source-id": 2, "field-id": 1001},
    ]
    millis = {"type": "long", "logicalType": "timestamp-millis"}
    avro = _shapes_schema()
    data_file = avro["fields"][2]["type"][1]
    data_file["fields"][3]["type"] = {
        "type": "record",
        "name": "r102",
        "fields": [
            {"name": "ts", "type": opt(millis), "field-id": 1000},
            {"name": "ns", "type": opt(millis), "field-id": 1001},
        ],
    }
    base = {
        "file_path": "p",
        "file_format": "PARQUET",
        "record_count": 1,
        "file_size_in_bytes": 9,
        "extra": {},
        "split_offsets": None,
        "key_metadata": b"",
    }
    values = [
        dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.timezone.utc),
    ]
    records = [
        {
            "status": 1,
            "snapshot_id": 1,
            "data_file": {**base, "partition": {"ts": v, "ns": v}},
        }
        for v in values
    ]
    path = tmp_path / "millis.avro"
    write(path, avro, records, _meta(schema, spec))
    table = m.read_manifest(path, columns=["data_file.partition"])
    partition = table.column("data_file").combine_chunks().field("partition")
    assert partition.type == pa.struct(
        [pa.field("ts", pa.timestamp("us")), pa.field("ns", pa.timestamp("ns"))]
    )
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = [(v - epoch) // dt.timedelta(microseconds=1) for v in values]
    assert partition.field("ts").cast(pa.int64()).to_pylist() == micros
    assert partition.field("ns").cast(pa.int64()).to_pylist() == [u * 1000 for u in micros]


def test_unknown_partition_field_is_avro_null(tmp_path: Path) -> None:
    # v3: a partition field whose source column was dropped is typed `unknown`, which
    # Avro writes as a bare "null" (Java's toOption leaves null alone; a union may not
    # repeat it). frazil writes it that way and reads it back.
    schema = {
        "type": "struct",
        "schema-id": 1,
        "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
    }
    spec = {
        "spec-id": 0,
        "fields": [
            {"name": "gone", "transform": "identity", "source-id": 2, "field-id": 1000},
            {"name": "id_b", "transform": "bucket[4]", "source-id": 1, "field-id": 1001},
        ],
    }
    path = tmp_path / "unknown.avro"
    entry = {
        "status": 1,
        "snapshot_id": 3,
        "data_file": {
            "content": 0,
            "file_path": "a.parquet",
            "file_format": "PARQUET",
            "partition": {"gone": None, "id_b": 2},
            "record_count": 1,
            "file_size_in_bytes": 1,
        },
    }
    m.write_manifest(path, [entry], schema=schema, spec=spec, format_version=3, snapshot_id=3)
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        avro = json.loads(reader.metadata["avro.schema"])
        (record,) = list(reader)
    data_file = next(f for f in avro["fields"] if f["name"] == "data_file")["type"]
    partition = next(f for f in data_file["fields"] if f["name"] == "partition")["type"]
    assert partition["fields"][0]["type"] == "null"
    assert record["data_file"]["partition"] == {"gone": None, "id_b": 2}
    (row,) = m.read_manifest(path).to_pylist()
    assert row["data_file"]["partition"] == {"gone": None, "id_b": 2}
    # A value in an `unknown` field is refused: the type has no values.
    entry["data_file"]["partition"] = {"gone": 5, "id_b": 2}
    with pytest.raises(FrazilError):
        m.write_manifest(path, [entry], schema=schema, spec=spec, format_version=3)


def test_manifest_list_with_longs_for_ints(tmp_path: Path) -> None:
    long_fields = ("partition_spec_id", "content", "added_files_count")
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "long", "field-id": 502},
            {"name": "content", "type": "long", "field-id": 517},
            {"name": "sequence_number", "type": "long", "field-id": 515},
            {"name": "min_sequence_number", "type": "long", "field-id": 516},
            {"name": "added_snapshot_id", "type": "long", "field-id": 503},
            {"name": "added_files_count", "type": ["long", "null"], "field-id": 504},
        ],
    }
    records = [
        {
            "manifest_path": "m.avro",
            "manifest_length": 10,
            "partition_spec_id": 3,
            "content": 1,
            "sequence_number": 8,
            "min_sequence_number": 2,
            "added_snapshot_id": 4,
            "added_files_count": 2**31 - 1,
        }
    ]
    path = tmp_path / "list.avro"
    write(path, schema, records, {"format-version": "2"})
    (row,) = m.read_manifest_list(path).to_pylist()
    assert {k: row[k] for k in long_fields} == {
        "partition_spec_id": 3,
        "content": 1,
        "added_files_count": 2**31 - 1,
    }
    records[0]["partition_spec_id"] = 2**31
    write(path, schema, records, {"format-version": "2"})
    with pytest.raises(InvalidDataError, match=r"partition_spec_id.*2147483648"):
        m.read_manifest_list(path)


def test_schema_metadata_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    # Without a table schema the bounds cannot be checked (and would later be decoded
    # with guessed widths): a manifest whose schema metadata does not parse is refused,
    # also when its partition type comes from the Avro schema (no partition-spec).
    path = tmp_path / "bad-schema.avro"
    bad = {
        "type": "struct",
        "fields": [{"id": 1, "name": "id", "required": True, "type": "int128"}],
    }
    write(path, v1_schema(), [v1_record(1)], {"schema": json.dumps(bad)})
    with pytest.raises(InvalidDataError, match=r"bad-schema\.avro.*schema.*int128"):
        m.read_manifest(path)
    write(path, v1_schema(), [v1_record(1)], {"schema": "{not json"})
    with pytest.raises(InvalidDataError, match=r"bad-schema\.avro.*schema"):
        m.read_manifest(path)
    # Without schema metadata at all (very old writers) nothing is guessed either way.
    write(path, v1_schema(), [v1_record(1)], {})
    assert m.read_manifest(path).num_rows == 1
