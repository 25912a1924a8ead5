"""The data-file writer: field ids, Arrow types as Java writes them, partition layout,
rolling, properties, sort order, the manifest round trip (spec: "Manifests", Appendix D)."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import manifest, values
from frazil.errors import FrazilError, FrazilTypeError, InvalidValueError
from frazil.io import FileIO
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table.write import write_data_files
from frazil.table.write._partition import java_url_encode
from write_helpers import col, field_ids, read_back, schema_of, table_metadata

UTC = dt.timezone.utc

ALL_TYPES = schema_of(
    col(1, "b", "boolean"),
    col(2, "i", "int"),
    col(3, "l", "long", required=True),
    col(4, "f", "float"),
    col(5, "d", "double"),
    col(6, "dec", "decimal(20, 3)"),
    col(7, "date", "date"),
    col(8, "time", "time"),
    col(9, "ts", "timestamp"),
    col(10, "tstz", "timestamptz"),
    col(11, "s", "string"),
    col(12, "u", "uuid"),
    col(13, "fx", "fixed[3]"),
    col(14, "bin", "binary"),
    col(15, "lst", {"type": "list", "element-id": 16, "element": "int", "element-required": True}),
    col(
        17,
        "m",
        {
            "type": "map",
            "key-id": 18,
            "key": "string",
            "value-id": 19,
            "value": "double",
            "value-required": False,
        },
    ),
    col(20, "st", {"type": "struct", "fields": [col(21, "x", "long"), col(22, "y", "string")]}),
)


def all_types_table() -> pa.Table:
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    return pa.table(
        {
            "b": [True, None],
            "i": pa.array([1, None], pa.int32()),
            "l": pa.array([7, 8], pa.int64()),
            "f": pa.array([1.5, None], pa.float32()),
            "d": [2.5, None],
            "dec": pa.array([decimal.Decimal("1.234"), None], pa.decimal128(20, 3)),
            "date": [dt.date(2024, 1, 2), None],
            "time": pa.array([dt.time(1, 2, 3, 4), None], pa.time64("us")),
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), None], pa.timestamp("us")),
            "tstz": pa.array(
                [dt.datetime(2024, 1, 2, tzinfo=UTC), None], pa.timestamp("us", "UTC")
            ),
            "s": ["é", None],
            "u": pa.array([u.bytes, None], pa.binary(16)),
            "fx": pa.array([b"abc", None], pa.binary(3)),
            "bin": [b"\x00\xff", None],
            "lst": pa.array([[1, 2], None], pa.list_(pa.field("element", pa.int32(), False))),
            "m": pa.array([[("k", 1.0)], None], pa.map_(pa.string(), pa.float64())),
            "st": [{"x": 1, "y": "a"}, None],
        }
    )


def test_every_type_round_trips_with_field_ids_and_java_types(tmp_path: Path) -> None:
    md = table_metadata(tmp_path, ALL_TYPES)
    (data_file,) = write_data_files(md, FileIO(), all_types_table())
    assert data_file.content == 0 and data_file.file_format == "PARQUET"
    assert data_file.record_count == 2 and data_file.partition == {}
    assert data_file.file_path is not None
    assert data_file.file_path.startswith(str(tmp_path / "table" / "data") + "/")
    schema = pq.read_schema(data_file.file_path)
    ids = dict(field_ids(schema))
    assert ids == {
        "b": 1, "i": 2, "l": 3, "f": 4, "d": 5, "dec": 6, "date": 7, "time": 8, "ts": 9,
        "tstz": 10, "s": 11, "u": 12, "fx": 13, "bin": 14, "lst": 15, "lst.element": 16,
        "m": 17, "m.key": 18, "m.value": 19, "st": 20, "st.x": 21, "st.y": 22,
    }  # fmt: skip
    assert schema.field("tstz").type == pa.timestamp("us", "UTC")
    assert schema.field("time").type == pa.time64("us")
    assert schema.field("u").type == pa.binary(16)
    assert not schema.field("l").nullable and schema.field("i").nullable
    # Java's physical types: a decimal of precision <= 18 as INT64, names list/element.
    parquet_schema = pq.ParquetFile(data_file.file_path).schema
    assert parquet_schema.column(5).physical_type == "FIXED_LEN_BYTE_ARRAY"  # precision 20
    assert "lst.list.element" in [parquet_schema.column(i).path for i in range(len(parquet_schema))]
    got = read_back(data_file.file_path).to_pylist()
    expected = all_types_table().to_pylist()
    expected[0]["tstz"] = expected[0]["tstz"]  # same instant; zone object may differ
    assert [{k: v for k, v in r.items() if k != "tstz"} for r in got] == [
        {k: v for k, v in r.items() if k != "tstz"} for r in expected
    ]
    assert got[0]["tstz"] == expected[0]["tstz"]
    # The iceberg.schema key Java writes.
    footer = pq.ParquetFile(data_file.file_path).metadata.metadata
    assert b"iceberg.schema" in footer and b"ARROW:schema" not in footer


def test_data_file_converts_into_a_manifest_and_back(tmp_path: Path) -> None:
    md = table_metadata(
        tmp_path, ALL_TYPES, partition=[(10, "day", "tstz_day"), (11, "identity", "s")]
    )
    files = list(write_data_files(md, FileIO(), all_types_table()))
    assert len(files) == 2
    path = str(tmp_path / "m.avro")
    manifest.write_manifest(
        path,
        [{"status": 1, "snapshot_id": 1, "data_file": f.to_row()} for f in files],
        schema=md.schema().to_json(),
        spec=md.spec().to_json(),
    )
    back = [e.data_file for e in manifest.manifest_entries(manifest.read_manifest(path))]
    assert back == files


def test_partition_paths_are_javas(tmp_path: Path) -> None:
    schema = schema_of(
        col(1, "ts", "timestamp"),
        col(2, "s", "string"),
        col(3, "n", "long"),
    )
    md = table_metadata(
        tmp_path,
        schema,
        partition=[
            (1, "year", "y"),
            (1, "month", "m"),
            (1, "day", "d"),
            (1, "hour", "h"),
            (2, "identity", "s x"),
            (3, "bucket[8]", "n_bucket"),
            (2, "truncate[2]", "s_trunc"),
        ],
    )
    data = pa.table(
        {
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4), None], pa.timestamp("us")),
            "s": ["a b/~*é", None],
            "n": pa.array([5, None], pa.int64()),
        }
    )
    files = sorted(
        (f for f in write_data_files(md, FileIO(), data)), key=lambda f: f.file_path or ""
    )
    base = str(tmp_path / "table" / "data") + "/"
    folders = sorted((f.file_path or "")[len(base) :].rsplit("/", 1)[0] for f in files)
    bucket = (values.hash("long", 5) & 0x7FFFFFFF) % 8  # Appendix B
    assert folders == [
        "y=2024/m=2024-01/d=2024-01-02/h=2024-01-02-03/s+x=a+b%2F%7E*%C3%A9/"
        f"n_bucket={bucket}/s_trunc=a+",
        "y=null/m=null/d=null/h=null/s+x=null/n_bucket=null/s_trunc=null",
    ]
    first = next(f for f in files if f.partition and f.partition["y"] is not None)
    assert first.partition is not None
    assert first.partition["d"] == dt.date(2024, 1, 2)
    assert first.partition["h"] == (dt.datetime(2024, 1, 2, 3) - dt.datetime(1970, 1, 1)) // (
        dt.timedelta(hours=1)
    )
    name = (first.file_path or "").rsplit("/", 1)[1]
    parts = name.removesuffix(".parquet").split("-")
    assert parts[0] == "00000" and parts[1] == "0" and len(parts) == 8
    assert uuid.UUID("-".join(parts[2:7])) and parts[7] in ("00001", "00002")


def test_java_url_encoder() -> None:
    assert java_url_encode("a b") == "a+b"
    assert java_url_encode("~*._-") == "%7E*._-"
    assert java_url_encode("é/=") == "%C3%A9%2F%3D"


def test_bucket_partition_value_matches_the_transform(tmp_path: Path) -> None:
    schema = schema_of(col(1, "n", "long"))
    md = table_metadata(tmp_path, schema, partition=[(1, "bucket[8]", "b")])
    files = list(write_data_files(md, FileIO(), pa.table({"n": pa.array([34], pa.int64())})))
    # Appendix B: bucket(34L) for 8 buckets = hash 2017239379 & MAX_INT % 8 = 3.
    assert [f.partition for f in files] == [{"b": 3}]
    assert files[0].file_path is not None and "/b=3/" in files[0].file_path


def test_streams_write_as_they_arrive_and_roll_at_the_target_size(tmp_path: Path) -> None:
    schema = schema_of(col(1, "k", "int"), col(2, "payload", "string"))
    md = table_metadata(
        tmp_path,
        schema,
        partition=[(1, "identity", "k")],
        properties={
            "write.target-file-size-bytes": "40000",
            "write.parquet.row-group-size-bytes": "20000",
            "write.parquet.compression-codec": "uncompressed",
        },
    )
    produced = 0

    def batches():  # type: ignore[no-untyped-def]
        nonlocal produced
        for i in range(40):
            produced += 1
            yield pa.record_batch(
                {
                    "k": pa.array([i % 2] * 100, pa.int32()),
                    "payload": [f"{i:04d}-{j:03d}-" + "x" * 40 for j in range(100)],
                }
            )

    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("k", pa.int32()), ("payload", pa.string())]), batches()
    )
    iterator = write_data_files(md, FileIO(), reader)
    first = next(iterator)
    assert produced < 40, "the first file is yielded before the stream ends"
    files = [first, *iterator]
    assert sum(f.record_count or 0 for f in files) == 4000
    assert len(files) > 4
    for f in files:
        assert f.file_size_in_bytes is not None and f.file_size_in_bytes < 40000 + 30000
        meta = pq.ParquetFile(f.file_path or "").metadata
        assert meta.row_group(0).column(0).compression == "UNCOMPRESSED"
        assert f.split_offsets == sorted(f.split_offsets or []) and len(f.split_offsets or []) == (
            meta.num_row_groups
        )
        rows = read_back(f.file_path).column("k").to_pylist()
        assert set(rows) == {(f.partition or {})["k"]}
    paths = [f.file_path for f in files]
    assert len(set(paths)) == len(paths)


def test_zstd_by_default_and_compression_level(tmp_path: Path) -> None:
    schema = schema_of(col(1, "n", "long"))
    data = pa.table({"n": pa.array(range(1000), pa.int64())})
    md = table_metadata(tmp_path, schema)
    (f,) = write_data_files(md, FileIO(), data)
    assert pq.ParquetFile(f.file_path or "").metadata.row_group(0).column(0).compression == "ZSTD"
    (g,) = write_data_files(
        md,
        FileIO(),
        data,
        properties={
            "write.parquet.compression-codec": "gzip",
            "write.parquet.compression-level": "9",
        },
    )
    assert pq.ParquetFile(g.file_path or "").metadata.row_group(0).column(0).compression == "GZIP"


def test_write_data_path(tmp_path: Path) -> None:
    schema = schema_of(col(1, "n", "long"))
    target = tmp_path / "elsewhere"
    md = table_metadata(tmp_path, schema, properties={"write.data.path": str(target)})
    (f,) = write_data_files(md, FileIO(), pa.table({"n": pa.array([1], pa.int64())}))
    assert (f.file_path or "").startswith(str(target) + "/")


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ("write.target-file-size-bytes", "big"),
        ("write.target-file-size-bytes", "0"),
        ("write.parquet.compression-codec", "lzo2"),
        ("write.parquet.row-group-size-bytes", "-5"),
        ("write.metadata.metrics.default", "truncate(0)"),
        ("write.metadata.metrics.default", "sometimes"),
        ("write.metadata.metrics.column.n", "fulll"),
        ("write.metadata.metrics.column.missing", "full"),
        ("write.metadata.metrics.max-inferred-column-defaults", "x"),
    ],
)
def test_bad_property_values_name_the_property(tmp_path: Path, prop: str, value: str) -> None:
    md = table_metadata(tmp_path, schema_of(col(1, "n", "long")), properties={prop: value})
    with pytest.raises(InvalidValueError, match=prop.replace(".", r"\.")):
        list(write_data_files(md, FileIO(), pa.table({"n": pa.array([1], pa.int64())})))
    assert not (tmp_path / "table" / "data").exists()


def test_sorted_by_the_table_sort_order(tmp_path: Path) -> None:
    schema = schema_of(col(1, "a", "int"), col(2, "b", "string"))
    order = SortOrder(
        order_id=1,
        fields=(
            SortField(1, "identity", SortDirection.DESC, NullOrder.NULLS_LAST),
            SortField(2, "identity", SortDirection.ASC, NullOrder.NULLS_FIRST),
        ),
    )
    md = table_metadata(tmp_path, schema, order=order)
    data = pa.table(
        {
            "a": pa.array([1, None, 3, 1, 3, None], pa.int32()),
            "b": ["x", "y", None, "a", "b", None],
        }
    )
    (f,) = write_data_files(md, FileIO(), data)
    rows = read_back(f.file_path).to_pylist()
    assert [(r["a"], r["b"]) for r in rows] == [
        (3, None), (3, "b"), (1, "a"), (1, "x"), (None, None), (None, "y"),
    ]  # fmt: skip
    assert f.sort_order_id == 1


def test_unsorted_table_files_carry_order_zero(tmp_path: Path) -> None:
    md = table_metadata(tmp_path, schema_of(col(1, "n", "long")))
    (f,) = write_data_files(md, FileIO(), pa.table({"n": pa.array([1], pa.int64())}))
    assert f.sort_order_id == 0


def test_data_that_is_not_arrow_is_refused(tmp_path: Path) -> None:
    md = table_metadata(tmp_path, schema_of(col(1, "n", "long")))
    with pytest.raises(FrazilTypeError, match="pyarrow Table"):
        list(write_data_files(md, FileIO(), [{"n": 1}]))


def test_a_failed_write_deletes_its_files(tmp_path: Path) -> None:
    schema = schema_of(col(1, "n", "long", required=True))
    md = table_metadata(tmp_path, schema)

    def batches():  # type: ignore[no-untyped-def]
        yield pa.record_batch({"n": pa.array([1, 2], pa.int64())})
        yield pa.record_batch({"n": pa.array([None], pa.int64())})

    reader = pa.RecordBatchReader.from_batches(pa.schema([("n", pa.int64())]), batches())
    with pytest.raises(FrazilError, match="n: 1 null value"):
        list(
            write_data_files(
                md, FileIO(), reader, properties={"write.parquet.row-group-size-bytes": "1"}
            )
        )
    data = tmp_path / "table" / "data"
    assert not data.exists() or not any(p.is_file() for p in data.rglob("*"))


def test_capsule_stream_input(tmp_path: Path) -> None:
    md = table_metadata(tmp_path, schema_of(col(1, "n", "long")))

    class Stream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object:
            return pa.table({"n": pa.array([1, 2], pa.int64())}).__arrow_c_stream__()

    (f,) = write_data_files(md, FileIO(), Stream())
    assert read_back(f.file_path).column("n").to_pylist() == [1, 2]
