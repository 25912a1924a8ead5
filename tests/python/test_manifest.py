"""Manifests: round trips, inheritance, projection, fastavro as an
independent reader of what frazil writes (spec: "Manifests", Appendix A)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import struct
import uuid
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from frazil import manifest as m
from frazil.errors import InvalidDataError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

# (Iceberg type, transform, strategy for the partition values)
PARTITION_TYPES: dict[str, tuple[str, str, st.SearchStrategy[Any]]] = {
    "boolean": ("boolean", "identity", st.booleans()),
    "int": ("int", "identity", st.integers(-(2**31), 2**31 - 1)),
    "long": ("long", "identity", st.integers(-(2**63), 2**63 - 1)),
    "float": ("float", "identity", st.floats(width=32)),
    "double": ("double", "identity", st.floats()),
    "decimal": (
        "decimal(9, 2)",
        "identity",
        st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False),
    ),
    "date": ("date", "identity", st.dates()),
    "time": ("time", "identity", st.times()),
    "timestamp": ("timestamp", "identity", st.datetimes()),
    "timestamptz": (
        "timestamptz",
        "identity",
        st.datetimes(timezones=st.just(dt.timezone.utc)),
    ),
    "string": ("string", "identity", st.text()),
    "uuid": ("uuid", "identity", st.uuids().map(lambda u: u.bytes)),
    "fixed": ("fixed[3]", "identity", st.binary(min_size=3, max_size=3)),
    "binary": ("binary", "identity", st.binary()),
    "bucket": ("long", "bucket[16]", st.integers(0, 15)),
    "day": ("timestamp", "day", st.dates()),
    "hour": ("timestamptz", "hour", st.integers(-(2**31), 2**31 - 1)),
    "truncate": ("string", "truncate[4]", st.text(max_size=4)),
}


def schema_and_spec(kinds: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    fields = [{"id": 1, "name": "id", "required": True, "type": "long"}]
    spec_fields = []
    for i, kind in enumerate(kinds):
        source_type, transform, _ = PARTITION_TYPES[kind]
        fields.append({"id": 10 + i, "name": f"c{i}", "required": False, "type": source_type})
        spec_fields.append(
            {
                "name": f"p{i}_{kind}",
                "transform": transform,
                "source-id": 10 + i,
                "field-id": 1000 + i,
            }
        )
    schema = {"type": "struct", "schema-id": 0, "fields": fields}
    return schema, {"spec-id": 0, "fields": spec_fields}


def data_file(
    path: str, partition: dict[str, Any], records: int = 10, **extra: Any
) -> dict[str, Any]:
    row = {
        "content": 0,
        "file_path": path,
        "file_format": "PARQUET",
        "partition": partition,
        "record_count": records,
        "file_size_in_bytes": 1000 + records,
        "column_sizes": [(1, 100), (10, 200)],
        "value_counts": [(1, records)],
        "null_value_counts": [(1, 0)],
        "nan_value_counts": [],
        "lower_bounds": [(1, struct.pack("<q", 0))],
        "upper_bounds": [(1, struct.pack("<q", records))],
        "split_offsets": [4],
        "sort_order_id": 0,
    }
    row.update(extra)
    return row


def same(a: Any, b: Any) -> bool:
    """Equality where NaN equals NaN and -0.0 differs from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def single_value(kind: str, value: Any) -> bytes:
    """Appendix D binary single-value serialization, written independently."""
    source_type, transform, _ = PARTITION_TYPES[kind]
    if transform.startswith("bucket") or transform == "hour":
        return struct.pack("<i", value)
    if transform == "day":
        return struct.pack("<i", (value - dt.date(1970, 1, 1)).days)
    if source_type == "boolean":
        return b"\x01" if value else b"\x00"
    if source_type == "int":
        return struct.pack("<i", value)
    if source_type == "long":
        return struct.pack("<q", value)
    if source_type == "float":
        return struct.pack("<f", value)
    if source_type == "double":
        return struct.pack("<d", value)
    if source_type == "date":
        return struct.pack("<i", (value - dt.date(1970, 1, 1)).days)
    if source_type == "time":
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
        return struct.pack("<q", micros)
    if source_type in ("timestamp", "timestamptz"):
        delta = value - (EPOCH_UTC if value.tzinfo else EPOCH)
        return struct.pack("<q", (delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds)
    if source_type == "string":
        return str(value).encode()
    if source_type.startswith("decimal"):
        unscaled = int(value.scaleb(2))
        # Two's complement needs the magnitude's bits plus a sign bit; for a
        # negative n those are the bits of ~n (-128 fits one byte, as Java's
        # BigInteger.toByteArray() writes it).
        magnitude = unscaled if unscaled >= 0 else ~unscaled
        size = max(1, (magnitude.bit_length() + 8) // 8)
        return unscaled.to_bytes(size, "big", signed=True)
    return bytes(value)


def order_key(kind: str, value: Any) -> Any:
    if isinstance(value, float):
        return (value, math.copysign(1.0, value))
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value
    return value


@st.composite
def manifests(draw: st.DrawFn) -> tuple[list[str], list[dict[str, Any]]]:
    kinds = draw(st.lists(st.sampled_from(sorted(PARTITION_TYPES)), min_size=0, max_size=3))
    n = draw(st.integers(1, 12))
    entries = []
    for i in range(n):
        partition = {
            f"p{j}_{kind}": draw(st.none() | PARTITION_TYPES[kind][2])
            for j, kind in enumerate(kinds)
        }
        status = draw(st.sampled_from([0, 1, 2]))
        explicit = status != 1 or draw(st.booleans())
        seq = draw(st.integers(0, 2**40)) if explicit else None
        entries.append(
            {
                "status": status,
                "snapshot_id": draw(st.none() | st.integers(0, 2**62)),
                "sequence_number": seq,
                "file_sequence_number": seq,
                "data_file": data_file(f"s3://bucket/data/{i}.parquet", partition, records=i + 1),
            }
        )
    return kinds, entries


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=manifests(), version=st.sampled_from([2, 3]))
def test_round_trip_all_partition_types(tmp_path: Path, case: Any, version: int) -> None:
    kinds, entries = case
    schema, spec = schema_and_spec(kinds)
    path = tmp_path / "m.avro"
    row = m.write_manifest(
        path, entries, schema=schema, spec=spec, format_version=version, snapshot_id=42
    )
    table = m.read_manifest(path)
    assert table.num_rows == len(entries)
    for got, want in zip(table.to_pylist(), entries, strict=True):
        assert got["status"] == want["status"]
        assert got["snapshot_id"] == (
            want["snapshot_id"] if want["snapshot_id"] is not None else 42
        )
        assert got["sequence_number"] == want["sequence_number"]
        for key, value in want["data_file"].items():
            if key == "partition":
                assert same(got["data_file"]["partition"], value), (
                    got["data_file"]["partition"],
                    value,
                )
            else:
                assert got["data_file"][key] == value, key

    # Statistics for the manifest list (Java: ManifestWriter.addEntry).
    assert row["manifest_length"] == path.stat().st_size
    for status, name in [(0, "existing"), (1, "added"), (2, "deleted")]:
        chosen = [e for e in entries if e["status"] == status]
        assert row[f"{name}_files_count"] == len(chosen)
        assert row[f"{name}_rows_count"] == sum(e["data_file"]["record_count"] for e in chosen)
    live = [
        e["sequence_number"]
        for e in entries
        if e["status"] != 2 and e["sequence_number"] is not None
    ]
    assert row["min_sequence_number"] == (min(live) if live else None)
    for j, kind in enumerate(kinds):
        values = [e["data_file"]["partition"][f"p{j}_{kind}"] for e in entries]
        summary = row["partitions"][j]
        assert summary["contains_null"] == any(v is None for v in values)
        present = [
            v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))
        ]
        assert summary["contains_nan"] == (len(present) < len([v for v in values if v is not None]))
        if present:
            lo = min(present, key=lambda v: order_key(kind, v))
            hi = max(present, key=lambda v: order_key(kind, v))
            assert summary["lower_bound"] == single_value(kind, lo)
            assert summary["upper_bound"] == single_value(kind, hi)
        else:
            assert summary["lower_bound"] is None and summary["upper_bound"] is None


def walk_field_ids(schema: Any, seen: list[int]) -> None:
    """Asserts every record field carries a field-id, arrays an element-id."""
    if isinstance(schema, list):
        for branch in schema:
            walk_field_ids(branch, seen)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            for field in schema["fields"]:
                assert "field-id" in field, field["name"]
                seen.append(field["field-id"])
                walk_field_ids(field["type"], seen)
        elif schema.get("type") == "array":
            if schema.get("logicalType") != "map":
                assert "element-id" in schema
                seen.append(schema["element-id"])
            walk_field_ids(schema["items"], seen)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_fastavro_reads_what_frazil_writes(tmp_path: Path, version: int) -> None:
    schema, spec = schema_and_spec(["string", "day"])
    entries = [
        {
            "status": 1,
            "snapshot_id": 7,
            "data_file": data_file(
                "s3://b/a.parquet", {"p0_string": "x", "p1_day": dt.date(2024, 1, 2)}
            ),
        }
    ]
    path = tmp_path / "m.avro"
    m.write_manifest(path, entries, schema=schema, spec=spec, format_version=version)
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        records = list(reader)
        meta = reader.metadata
        writer_schema = json.loads(meta["avro.schema"])
    assert meta["avro.codec"] == "deflate"
    assert meta["format-version"] == str(version)
    assert json.loads(meta["partition-spec"]) == spec["fields"]
    assert meta["partition-spec-id"] == "0"
    assert json.loads(meta["schema"]) == schema
    if version > 1:
        assert meta["content"] == "data" and meta["schema-id"] == "0"
    ids: list[int] = []
    walk_field_ids(writer_schema, ids)
    assert {0, 1, 2, 100, 101, 102, 103, 104, 108, 117, 118, 126, 127, 132, 133}.issubset(ids)
    assert (105 in ids) == (version == 1), "block_size_in_bytes is written in v1 only"
    assert (134 in ids) == (3 in ids) == (version > 1), "content and sequence numbers from v2"
    assert (142 in ids) == (version == 3)
    (record,) = records
    df = record["data_file"]
    assert df["file_path"] == "s3://b/a.parquet"
    assert df["partition"] == {"p0_string": "x", "p1_day": dt.date(2024, 1, 2)}
    assert {e["key"]: e["value"] for e in df["column_sizes"]} == {1: 100, 10: 200}
    if version == 1:
        assert df["block_size_in_bytes"] == 64 * 1024 * 1024


def test_equality_ids_are_list_of_int_element_136(tmp_path: Path) -> None:
    schema, spec = schema_and_spec([])
    entry = {
        "status": 1,
        "data_file": data_file("s3://b/d.parquet", {}, content=2, equality_ids=[1, 10]),
    }
    path = tmp_path / "d.avro"
    m.write_manifest(path, [entry], schema=schema, spec=spec, content="deletes", snapshot_id=3)
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        records = list(reader)
        writer_schema = json.loads(reader.metadata["avro.schema"])
    data_file_schema = next(f for f in writer_schema["fields"] if f["name"] == "data_file")["type"]
    eq = next(f for f in data_file_schema["fields"] if f["name"] == "equality_ids")
    assert eq["field-id"] == 135
    assert eq["type"] == ["null", {"type": "array", "items": "int", "element-id": 136}]
    assert records[0]["data_file"]["equality_ids"] == [1, 10]
    table = m.read_manifest(path)
    assert table.schema.field("data_file").type.field("equality_ids").type.value_type == pa.int32()
    assert table.schema.metadata[b"content"] == b"deletes"


def test_inheritance_from_the_manifest_list(tmp_path: Path) -> None:
    schema, spec = schema_and_spec([])
    entries = [
        {"status": 1, "data_file": data_file("a", {})},
        {"status": 1, "sequence_number": 3, "data_file": data_file("b", {})},
        {
            "status": 0,
            "snapshot_id": 5,
            "sequence_number": 2,
            "file_sequence_number": 2,
            "data_file": data_file("c", {}),
        },
        {
            "status": 2,
            "snapshot_id": 6,
            "sequence_number": 1,
            "file_sequence_number": 1,
            "data_file": data_file("d", {}),
        },
    ]
    path = tmp_path / "m.avro"
    row = m.write_manifest(path, entries, schema=schema, spec=spec)
    assert row["sequence_number"] is None and row["added_snapshot_id"] is None
    listing = tmp_path / "list.avro"
    row["added_snapshot_id"] = 99
    m.write_manifest_list(listing, [row], snapshot_id=99, sequence_number=17)
    (mf,) = m.read_manifest_list(listing).to_pylist()
    assert mf["sequence_number"] == 17 and mf["min_sequence_number"] == 2
    table = m.read_manifest(path, manifest_file=mf)
    assert table.column("snapshot_id").to_pylist() == [99, 99, 5, 6]
    assert table.column("sequence_number").to_pylist() == [17, 3, 2, 1]
    assert table.column("file_sequence_number").to_pylist() == [17, 17, 2, 1]
    raw = m.read_manifest(path)
    assert raw.column("sequence_number").to_pylist() == [None, 3, 2, 1]
    views = m.manifest_entries(table)
    assert views[0].data_file.column_sizes == {1: 100, 10: 200}
    assert m.manifest_files(m.read_manifest_list(listing))[0].sequence_number == 17


def test_projection_and_parallel_reads(tmp_path: Path) -> None:
    schema, spec = schema_and_spec(["int"])
    rows = []
    for k in range(5):
        path = tmp_path / f"m{k}.avro"
        entries = [
            {"status": 1, "data_file": data_file(f"f{k}-{i}", {"p0_int": i}, records=i + 1)}
            for i in range(20)
        ]
        row = m.write_manifest(path, entries, schema=schema, spec=spec, snapshot_id=k)
        rows.append(row)
    m.write_manifest_list(tmp_path / "l.avro", rows, snapshot_id=4, sequence_number=9)
    listing = m.read_manifest_list(f"file://{tmp_path}/l.avro")
    cols = ["data_file.file_path", "data_file.partition", "sequence_number"]
    tables = m.read_manifests(listing, columns=cols, threads=2)
    assert len(tables) == 5
    for k, table in enumerate(tables):
        assert table.column_names == ["sequence_number", "data_file"]
        assert [f.name for f in table.schema.field("data_file").type] == ["file_path", "partition"]
        assert table.column("sequence_number").to_pylist() == [9] * 20
        one = m.read_manifest(
            rows[k]["manifest_path"], columns=cols, manifest_file=listing.to_pylist()[k]
        )
        assert one.equals(table)
    with pytest.raises(ValueError, match="unknown column"):
        m.read_manifest(rows[0]["manifest_path"], columns=["data_file.nope"])


def test_parallel_reads_of_mixed_specs_and_empty_manifests(tmp_path: Path) -> None:
    # Runs of manifests sharing a spec cross to pyarrow together and are
    # sliced apart: each table must still be exactly its own manifest.
    specs = [schema_and_spec(["int"]), schema_and_spec(["string", "long"])]
    plan = [0, 0, 1, 1, 1, 0, 1, 1]
    sizes = [3, 0, 4, 1, 0, 2, 5, 0]
    rows = []
    for k, (which, size) in enumerate(zip(plan, sizes, strict=True)):
        schema, spec = specs[which]
        partition = {"p0_int": k} if which == 0 else {"p0_string": f"s{k}", "p1_long": k}
        entries = [
            {"status": 1, "data_file": data_file(f"f{k}-{i}", partition, records=i + k)}
            for i in range(size)
        ]
        path = tmp_path / f"m{k}.avro"
        row = m.write_manifest(path, entries, schema=schema, spec=spec, snapshot_id=k)
        row["added_snapshot_id"] = k
        rows.append(row)
    m.write_manifest_list(tmp_path / "l.avro", rows, snapshot_id=9, sequence_number=9)
    listing = m.read_manifest_list(tmp_path / "l.avro")
    for threads in (1, 2):
        tables = m.read_manifests(listing, threads=threads)
        assert [t.num_rows for t in tables] == sizes
        for k, table in enumerate(tables):
            one = m.read_manifest(rows[k]["manifest_path"], manifest_file=listing.to_pylist()[k])
            assert table.schema.equals(one.schema, check_metadata=True)
            assert table.equals(one)
            paths = table.column("data_file").combine_chunks().field("file_path").to_pylist()
            assert paths == [f"f{k}-{i}" for i in range(sizes[k])]
    # A list of dicts works as well as the listing table.
    assert [t.num_rows for t in m.read_manifests(listing.to_pylist(), threads=1)] == sizes


def test_manifest_list_v1_defaults(tmp_path: Path) -> None:
    schema, spec = schema_and_spec([])
    row = m.write_manifest(
        tmp_path / "m.avro",
        [{"status": 1, "snapshot_id": 1, "data_file": data_file("a", {})}],
        schema=schema,
        spec=spec,
        format_version=1,
    )
    row["added_snapshot_id"] = 1
    m.write_manifest_list(tmp_path / "l.avro", [row], snapshot_id=1, format_version=1)
    with open(tmp_path / "l.avro", "rb") as f:
        reader = fastavro.reader(f)
        written = json.loads(reader.metadata["avro.schema"])
        assert reader.metadata["parent-snapshot-id"] == "null"
        assert "sequence-number" not in reader.metadata
    names = [f["name"] for f in written["fields"]]
    assert "sequence_number" not in names and "content" not in names
    (mf,) = m.read_manifest_list(tmp_path / "l.avro").to_pylist()
    assert (mf["content"], mf["sequence_number"], mf["min_sequence_number"]) == (0, 0, 0)
    table = m.read_manifest(mf["manifest_path"], manifest_file=mf)
    assert table.column("sequence_number").to_pylist() == [0]


def test_missing_files_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        m.read_manifest(tmp_path / "nope.avro")
    schema, spec = schema_and_spec([])
    with pytest.raises(ValueError):
        m.write_manifest(tmp_path / "x.avro", [], schema=schema, spec=spec, content="both")
    bad = tmp_path / "bad.avro"
    bad.write_bytes(b"Obj\x01garbage")
    with pytest.raises(InvalidDataError, match=r"bad\.avro"):
        m.read_manifest(bad)


def test_uuid_partition_values_keep_their_bytes(tmp_path: Path) -> None:
    schema, spec = schema_and_spec(["uuid"])
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    path = tmp_path / "u.avro"
    m.write_manifest(
        path,
        [{"status": 1, "snapshot_id": 1, "data_file": data_file("a", {"p0_uuid": u.bytes})}],
        schema=schema,
        spec=spec,
    )
    assert m.read_manifest(path).column("data_file").to_pylist()[0]["partition"] == {
        "p0_uuid": u.bytes
    }
    with open(path, "rb") as f:
        (record,) = list(fastavro.reader(f))
    assert record["data_file"]["partition"]["p0_uuid"] in (u, str(u), u.bytes)


def test_decimal_partition_summary_uses_minimal_bytes(tmp_path: Path) -> None:
    schema, spec = schema_and_spec(["decimal"])
    entries = [
        {
            "status": 1,
            "snapshot_id": 1,
            "data_file": data_file("a", {"p0_decimal": decimal.Decimal(v)}),
        }
        for v in ("-1.28", "0.01", "1.27")
    ]
    row = m.write_manifest(tmp_path / "d.avro", entries, schema=schema, spec=spec)
    assert row["partitions"][0]["lower_bound"] == b"\x80"
    assert row["partitions"][0]["upper_bound"] == b"\x7f"


def test_null_sequence_number_in_a_v2_list_row_is_refused(tmp_path: Path) -> None:
    # A v1 manifest-list row has no sequence_number (its manifests are sequence 0); a v2+
    # row with a null one is invalid. Inheriting 0 for it would make every ADDED entry
    # look older than the deletes that apply to it.
    schema, spec = schema_and_spec([])
    path = tmp_path / "m.avro"
    m.write_manifest(
        path, [{"status": 1, "data_file": data_file("a", {})}], schema=schema, spec=spec
    )
    v1_row = {"manifest_path": str(path), "added_snapshot_id": 4}
    table = m.read_manifest(path, manifest_file=v1_row)
    assert table.column("sequence_number").to_pylist() == [0]
    bad_row = {"manifest_path": str(path), "added_snapshot_id": 4, "sequence_number": None}
    with pytest.raises(InvalidDataError, match=r"m\.avro.*null sequence_number"):
        m.read_manifest(path, manifest_file=bad_row)
    with pytest.raises(InvalidDataError, match="null sequence_number"):
        m.read_manifests([v1_row, bad_row])
    listing = pa.Table.from_pylist(
        [bad_row],
        schema=pa.schema(
            [
                ("manifest_path", pa.string()),
                ("added_snapshot_id", pa.int64()),
                ("sequence_number", pa.int64()),
            ]
        ),
    )
    with pytest.raises(InvalidDataError, match="null sequence_number"):
        m.read_manifests(listing)


def test_native_read_manifests_refuses_lists_of_different_lengths(tmp_path: Path) -> None:
    from frazil import _native
    from frazil.errors import InvalidValueError

    schema, spec = schema_and_spec([])
    path = tmp_path / "m.avro"
    m.write_manifest(
        path, [{"status": 1, "data_file": data_file("a", {})}], schema=schema, spec=spec
    )
    with pytest.raises(InvalidValueError, match="2 locations but 1 inheritance"):
        _native.read_manifests([str(path), str(path)], [None], None, 1)
    with pytest.raises(InvalidValueError, match="1 locations but 2 inheritance"):
        _native.read_manifests([str(path)], [None, (1, 2, None)], None, 1)
    assert len(_native.read_manifests([str(path)], [(1, 2, None)], None, 1)) == 1


BOUNDS_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "l", "required": False, "type": "long"},
        {"id": 2, "name": "dbl", "required": False, "type": "double"},
        {"id": 3, "name": "ts", "required": False, "type": "timestamp"},
        {"id": 4, "name": "ns", "required": False, "type": "timestamp_ns"},
        {"id": 5, "name": "nstz", "required": False, "type": "timestamptz_ns"},
        {"id": 6, "name": "dec", "required": False, "type": "decimal(9, 2)"},
        {"id": 7, "name": "fx", "required": False, "type": "fixed[3]"},
        {"id": 8, "name": "u", "required": False, "type": "unknown"},
        {"id": 9, "name": "i", "required": False, "type": "int"},
        {
            "id": 10,
            "name": "s",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [{"id": 11, "name": "x", "required": False, "type": "long"}],
            },
        },
        {
            "id": 12,
            "name": "xs",
            "required": False,
            "type": {"type": "list", "element-id": 13, "element-required": False, "element": "int"},
        },
        {"id": 14, "name": "str", "required": False, "type": "string"},
    ],
}
GOOD_BOUNDS = [
    (1, b"\x01" * 4),  # long from an int column (promoted)
    (1, b"\x01" * 8),
    (2, b"\x01" * 4),  # double from a float column
    (3, b"\x01" * 4),  # v3: timestamp from a date column
    (4, b"\x01" * 8),
    (4, b"\x01" * 4),  # v3: timestamp_ns from a date column
    (5, b"\x01" * 8),
    (6, b"\x01"),
    (6, b"\x01" * 4),  # decimal(9, 2): 1 to 4 bytes
    (7, b"abc"),
    (9, b"\x01" * 4),
    (11, b"\x01" * 8),
    (13, b"\x01" * 4),
    (14, b"any length at all"),
]


@pytest.mark.parametrize(
    ("bound", "message"),
    [
        ((4, b"\x01" * 7), r"field 4 \(timestamp_ns\) has 7 bytes, expected 4 or 8"),
        ((5, b"\x01" * 16), r"field 5 \(timestamptz_ns\) has 16 bytes, expected 4 or 8"),
        ((6, b"\x01" * 5), r"field 6 \(decimal\(9, 2\)\) has 5 bytes, expected 1 to 4"),
        ((6, b""), r"field 6 .* has 0 bytes"),
        ((7, b"abcd"), r"field 7 \(fixed\[3\]\) has 4 bytes, expected 3"),
        ((8, b"\x01"), r"field 8 \(unknown\) has 1 bytes, expected none"),
        ((9, b"\x01" * 8), r"field 9 \(int\) has 8 bytes, expected 4"),
        ((11, b"\x01" * 3), r"field 11 \(long\) has 3 bytes"),
        ((13, b"\x01" * 2), r"field 13 \(int\) has 2 bytes"),
        ((3, b"\x01" * 2), r"field 3 \(timestamp\) has 2 bytes, expected 4 or 8"),
    ],
)
def test_bounds_of_every_width_are_checked(
    tmp_path: Path, bound: tuple[int, bytes], message: str
) -> None:
    spec: dict[str, Any] = {"spec-id": 0, "fields": []}
    path = tmp_path / "m.avro"

    def write(bounds: list[tuple[int, bytes]], name: str = "lower_bounds") -> None:
        entry = {"status": 1, "data_file": {**data_file("a", {}), name: bounds}}
        m.write_manifest(
            path, [entry], schema=BOUNDS_SCHEMA, spec=spec, format_version=3, snapshot_id=1
        )

    write(GOOD_BOUNDS)
    (row,) = m.read_manifest(path).to_pylist()
    assert row["data_file"]["lower_bounds"] == GOOD_BOUNDS
    for name in ("lower_bounds", "upper_bounds"):
        write([*GOOD_BOUNDS, bound], name)
        with pytest.raises(InvalidDataError, match=f"{name} of {message}"):
            m.read_manifest(path)
