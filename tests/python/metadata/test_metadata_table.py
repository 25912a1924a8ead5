"""Table metadata: reading v1/v2/v3 JSON, writing it back, and refusing invalid metadata."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import frazil
import pytest
from frazil import (
    PartitionField,
    PartitionSpec,
    Schema,
    Snapshot,
    SnapshotRef,
    TableMetadata,
    read_metadata,
    write_metadata,
)
from frazil.errors import (
    InvalidMetadataError,
    InvalidSchemaError,
    InvalidTransformError,
    TableUUIDMismatchError,
    UnsupportedFormatVersionError,
    UnsupportedTransformError,
    ValidationError,
)
from frazil.snapshots import SnapshotRefType
from frazil.types import GeometryType, TimestampNanoType, VariantType


def round_trip(metadata: TableMetadata) -> TableMetadata:
    again = TableMetadata.from_json(metadata.to_json())
    assert again == metadata
    assert again.to_dict() == metadata.to_dict()
    return again


# --- v1 -----------------------------------------------------------------------------------------


def test_v1_old_writer_reads_with_appendix_e_defaults(v1_old: dict[str, Any]) -> None:
    m = TableMetadata.from_json(json.dumps(v1_old))
    assert m.format_version == 1
    assert m.last_sequence_number == 0
    assert [s.schema_id for s in m.schemas] == [0] and m.current_schema_id == 0
    assert m.schema().find_field("y").doc == "comment"  # type: ignore[union-attr]
    # partition-spec without field ids: ids from 1000, spec id 0.
    assert m.default_spec_id == 0
    assert [(f.field_id, f.transform) for f in m.spec().fields] == [
        (1000, "identity"),
        (1001, "bucket[16]"),
    ]
    assert m.last_partition_id == 1001
    assert m.sort_orders == (frazil.SortOrder(),) and m.default_sort_order_id == 0
    # No refs: main is the current snapshot.
    assert m.refs == {"main": SnapshotRef(3055729675574597004, SnapshotRefType.BRANCH)}
    first, second = m.snapshots
    assert first.manifests == (
        "s3://bucket/test/location/metadata/m1.avro",
        "s3://bucket/test/location/metadata/m2.avro",
    )
    assert first.manifest_list is None and first.sequence_number == 0
    assert second.operation == "append" and second.parent_snapshot_id == first.snapshot_id
    assert m.current_snapshot() == second
    assert m.properties == v1_old["properties"]


def test_v1_writes_deprecated_fields_as_java(v1_old: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v1_old)
    out = m.to_dict()
    assert "last-sequence-number" not in out
    assert out["schema"] == out["schemas"][0] == m.schema().to_json()
    assert out["partition-spec"] == out["partition-specs"][0]["fields"]
    assert out["partition-spec"][1] == {
        "name": "y_bucket",
        "transform": "bucket[16]",
        "source-id": 2,
        "field-id": 1001,
    }
    assert all("sequence-number" not in s for s in out["snapshots"])
    assert out["snapshots"][0]["manifests"] == v1_old["snapshots"][0]["manifests"]
    assert out["current-snapshot-id"] == 3055729675574597004
    round_trip(m)


def test_v1_without_current_snapshot_writes_minus_one(v1_old: dict[str, Any]) -> None:
    del v1_old["current-snapshot-id"]
    v1_old["current-snapshot-id"] = -1
    m = TableMetadata.from_json(v1_old)
    assert m.current_snapshot_id is None and m.current_snapshot() is None and m.refs == {}
    assert m.to_dict()["current-snapshot-id"] == -1


def test_v1_prefers_the_lists_when_both_forms_are_present(v1_old: dict[str, Any]) -> None:
    v1_old["schemas"] = [{**v1_old["schema"], "schema-id": 4}]
    v1_old["current-schema-id"] = 4
    m = TableMetadata.from_json(v1_old)
    assert m.current_schema_id == 4 and len(m.schemas) == 1


def test_v1_sequence_numbers_are_zero() -> None:
    m = TableMetadata.new(
        Schema(frazil.types.optional(1, "a", frazil.types.LongType())), "/tmp/t", format_version=1
    )
    with pytest.raises(InvalidMetadataError, match="must be 0 in format v1"):
        m.replace(last_sequence_number=3)


# --- v2 -----------------------------------------------------------------------------------------


def test_v2_java_file_is_written_back_unchanged(v2_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(json.dumps(v2_java))
    assert m.to_dict() == v2_java
    round_trip(m)


def test_v2_model(v2_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v2_java)
    assert m.table_uuid == "9c12d441-03fe-4693-9a96-a0705ddf69c1"
    assert m.last_sequence_number == 34
    assert m.schema().schema_id == 1 and m.schema().identifier_field_ids == (1, 2)
    assert m.schema_by_id(0).fields == (frazil.types.required(1, "x", frazil.types.LongType()),)  # type: ignore[union-attr]
    assert m.spec().spec_id == 1 and m.spec_by_id(0) is not None
    assert m.sort_order().order_id == 3
    assert m.current_snapshot().sequence_number == 34  # type: ignore[union-attr]
    assert m.snapshot_by_id(3051729675574597004).schema_id == 0  # type: ignore[union-attr]
    assert m.snapshot_by_name("v1.0") == m.snapshot_by_id(3051729675574597004)
    audit = m.ref("audit")
    assert audit == SnapshotRef(3051729675574597004, SnapshotRefType.BRANCH, 2, 86400000, 604800000)
    assert m.ref("v1.0").type is SnapshotRefType.TAG  # type: ignore[union-attr]
    assert m.statistics[0].blob_metadata[0].properties == {"ndv": "7"}
    assert m.partition_statistics[0].file_size_in_bytes == 43
    assert m.metadata_log[0].metadata_file == "s3://bucket/.../v1.json"
    mapping = m.name_mapping()
    assert mapping is not None and mapping.find("x_old").field_id == 1  # type: ignore[union-attr]
    assert mapping.find("tags", "value").field_id == 7  # type: ignore[union-attr]


def test_unknown_fields_and_properties_are_kept(v2_java: dict[str, Any]) -> None:
    v2_java["future-field"] = {"nested": [1, 2, 3]}
    v2_java["properties"]["commit.manifest.min-count-to-merge"] = "5"
    m = TableMetadata.from_json(v2_java)
    assert m.extras == {"future-field": {"nested": [1, 2, 3]}}
    out = json.loads(m.to_json())
    assert out["future-field"] == {"nested": [1, 2, 3]}
    assert out["properties"] == v2_java["properties"]


REQUIRED_V2 = [
    "table-uuid",
    "last-sequence-number",
    "schemas",
    "current-schema-id",
    "partition-specs",
    "default-spec-id",
    "last-partition-id",
    "sort-orders",
    "default-sort-order-id",
]


@pytest.mark.parametrize("key", REQUIRED_V2)
def test_missing_required_v2_fields_are_refused(v2_java: dict[str, Any], key: str) -> None:
    del v2_java[key]
    with pytest.raises(InvalidMetadataError, match=f"format v2 is missing required '{key}'"):
        TableMetadata.from_json(v2_java)


@pytest.mark.parametrize("key", ["location", "last-updated-ms", "last-column-id", "format-version"])
def test_missing_fields_required_in_every_version(v1_old: dict[str, Any], key: str) -> None:
    del v1_old[key]
    with pytest.raises(InvalidMetadataError, match=f"missing required field '{key}'"):
        TableMetadata.from_json(v1_old)


def test_format_version_higher_than_supported(v2_java: dict[str, Any]) -> None:
    v2_java["format-version"] = 4
    with pytest.raises(UnsupportedFormatVersionError, match=r"version 4.*up to 3"):
        TableMetadata.from_json(v2_java)
    v2_java["format-version"] = 0
    with pytest.raises(UnsupportedFormatVersionError):
        TableMetadata.from_json(v2_java)


def test_current_snapshot_must_match_main(v2_java: dict[str, Any]) -> None:
    v2_java["current-snapshot-id"] = 3051729675574597004
    with pytest.raises(InvalidMetadataError, match="does not match the 'main' branch"):
        TableMetadata.from_json(v2_java)
    v2_java["current-snapshot-id"] = -1
    with pytest.raises(InvalidMetadataError, match="does not match the 'main' branch"):
        TableMetadata.from_json(v2_java)


def test_refs_must_point_at_known_snapshots(v2_java: dict[str, Any]) -> None:
    v2_java["refs"]["v1.0"]["snapshot-id"] = 42
    with pytest.raises(InvalidMetadataError, match=r"ref 'v1\.0' points at snapshot 42"):
        TableMetadata.from_json(v2_java)


def test_current_snapshot_must_exist(v2_java: dict[str, Any]) -> None:
    del v2_java["refs"]
    v2_java["current-snapshot-id"] = 7
    with pytest.raises(InvalidMetadataError, match="current-snapshot-id 7 is not among"):
        TableMetadata.from_json(v2_java)


def test_ref_rules(v2_java: dict[str, Any]) -> None:
    bad_tag = copy.deepcopy(v2_java)
    bad_tag["refs"]["v1.0"]["min-snapshots-to-keep"] = 3
    with pytest.raises(InvalidMetadataError, match="applies to branches only"):
        TableMetadata.from_json(bad_tag)
    v2_java["refs"]["audit"]["type"] = "leaf"
    with pytest.raises(InvalidMetadataError, match="'branch' or 'tag'"):
        TableMetadata.from_json(v2_java)
    with pytest.raises(InvalidMetadataError, match="must be positive"):
        SnapshotRef(1, SnapshotRefType.BRANCH, min_snapshots_to_keep=0)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (
            lambda d: d["schemas"][1]["fields"].append(
                {"id": 2, "name": "dup", "required": False, "type": "int"}
            ),
            InvalidSchemaError,
            "duplicate field id 2",
        ),
        (
            lambda d: d["schemas"][1]["fields"].append(
                {"id": 2147483645, "name": "_pos", "required": False, "type": "long"}
            ),
            InvalidSchemaError,
            "reserved",
        ),
        (
            lambda d: d["schemas"][1].update({"identifier-field-ids": [4]}),
            InvalidSchemaError,
            "must be required",
        ),
        (
            lambda d: d["partition-specs"][1]["fields"].append(
                {"name": "tags", "transform": "identity", "source-id": 6, "field-id": 1003}
            ),
            UnsupportedTransformError,
            "inside a map",
        ),
        (
            lambda d: d["partition-specs"][1]["fields"].append(
                {"name": "x_hour", "transform": "hour", "source-id": 1, "field-id": 1003}
            ),
            UnsupportedTransformError,
            "hour cannot be applied to long",
        ),
        (
            lambda d: d["partition-specs"][1]["fields"].append(
                {"name": "x_b", "transform": "bucket[-3]", "source-id": 1, "field-id": 1003}
            ),
            InvalidTransformError,
            None,
        ),
        (
            lambda d: d["partition-specs"][1]["fields"].append(
                {"name": "x_b", "transform": "bucket[0]", "source-id": 1, "field-id": 1003}
            ),
            InvalidTransformError,
            None,
        ),
        (
            lambda d: d.update({"current-schema-id": 9}),
            InvalidMetadataError,
            "current-schema-id 9 is not among the schemas",
        ),
        (lambda d: d.update({"default-spec-id": 9}), InvalidMetadataError, "default-spec-id 9"),
        (
            lambda d: d.update({"default-sort-order-id": 9}),
            InvalidMetadataError,
            "default-sort-order-id 9",
        ),
        (
            lambda d: d["schemas"].append(d["schemas"][0]),
            InvalidMetadataError,
            "duplicate schema id 0",
        ),
        (
            lambda d: d["snapshots"].append(d["snapshots"][0]),
            InvalidMetadataError,
            "duplicate snapshot id",
        ),
        (
            lambda d: d.update({"last-sequence-number": 33}),
            InvalidMetadataError,
            "above last-sequence-number 33",
        ),
        (
            lambda d: d["schemas"][1]["fields"].append(
                {"id": 8, "name": "t", "required": False, "type": "timestamp_ns"}
            ),
            InvalidSchemaError,
            "needs format version 3",
        ),
        (
            lambda d: d["schemas"][1]["fields"].append(
                {"id": 8, "name": "t", "required": False, "type": "int", "write-default": 1}
            ),
            InvalidSchemaError,
            "non-null write-default",
        ),
        (
            lambda d: d["schemas"][1]["fields"].append(
                {"id": 8, "name": "t", "required": False, "type": "int4"}
            ),
            ValidationError,
            "int4",
        ),
        (
            lambda d: d.update({"last-updated-ms": "yesterday"}),
            InvalidMetadataError,
            "'last-updated-ms' must be a JSON long",
        ),
        (
            lambda d: d.update({"properties": {"a": 1}}),
            InvalidMetadataError,
            "must be a JSON string",
        ),
        (lambda d: d.update({"snapshots": {}}), InvalidMetadataError, "non-array"),
    ],
)
def test_invalid_v2_metadata_is_refused(
    v2_java: dict[str, Any], change: Any, error: type[Exception], message: str | None
) -> None:
    change(v2_java)
    with pytest.raises(error, match=message):
        TableMetadata.from_json(v2_java)


def test_older_specs_may_reference_dropped_columns(v2_java: dict[str, Any]) -> None:
    # Like Java, only the default spec must bind to the current schema.
    v2_java["partition-specs"][0]["fields"][0]["source-id"] = 77
    TableMetadata.from_json(v2_java)


def test_unknown_transforms_survive_a_round_trip(v2_java: dict[str, Any]) -> None:
    v2_java["partition-specs"][1]["fields"].append(
        {"name": "x_z", "transform": "zorder(1,2)", "source-id": 1, "field-id": 1003}
    )
    v2_java["last-partition-id"] = 1003
    m = TableMetadata.from_json(v2_java)
    assert m.to_dict() == v2_java


def test_not_json_or_not_an_object() -> None:
    with pytest.raises(InvalidMetadataError, match="invalid JSON"):
        TableMetadata.from_json("{not json")
    with pytest.raises(InvalidMetadataError, match="non-object"):
        TableMetadata.from_json("[1, 2]")


# --- v3 -----------------------------------------------------------------------------------------


def test_v3_java_file_is_written_back_unchanged(v3_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v3_java)
    assert m.to_dict() == v3_java
    round_trip(m)


def test_v3_model(v3_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v3_java)
    assert m.next_row_id == 30
    schema = m.schema()
    assert schema.find_type("at") == TimestampNanoType()
    assert schema.find_type("payload") == VariantType()
    assert schema.find_type("shape") == GeometryType("OGC:CRS84")
    assert schema.find_field("id").initial_default == "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb"  # type: ignore[union-attr]
    assert schema.find_field("point").initial_default is None  # type: ignore[union-attr]
    assert schema.find_field("point.x").write_default == 1.5  # type: ignore[union-attr]
    assert schema.field("id").initial_default_value() == uuid.UUID(
        "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb"
    )
    assert schema.field("point.label").write_default_value() == "none"
    snapshot = m.current_snapshot()
    assert snapshot is not None
    assert (snapshot.first_row_id, snapshot.added_rows, snapshot.key_id) == (0, 30, "k1")
    assert m.extras["encryption-keys"][0]["key-id"] == "k1"
    assert m.spec().fields[2].transform == "zorder"


def test_v3_writes_null_for_no_current_snapshot(v3_java: dict[str, Any]) -> None:
    v3_java["current-snapshot-id"] = None
    del v3_java["refs"]["main"]
    m = TableMetadata.from_json(v3_java)
    assert m.current_snapshot_id is None
    out = m.to_dict()
    assert "current-snapshot-id" in out and out["current-snapshot-id"] is None
    round_trip(m)


def test_v3_requires_next_row_id(v3_java: dict[str, Any]) -> None:
    del v3_java["next-row-id"]
    with pytest.raises(InvalidMetadataError, match="missing required 'next-row-id'"):
        TableMetadata.from_json(v3_java)


def test_next_row_id_is_kept_as_unknown_before_v3(v2_java: dict[str, Any]) -> None:
    v2_java["next-row-id"] = 5
    m = TableMetadata.from_json(v2_java)
    assert m.next_row_id is None and m.extras == {"next-row-id": 5}
    with pytest.raises(InvalidMetadataError, match="next-row-id is a v3 field"):
        m.replace(next_row_id=5)


# --- functional updates, files, refresh ---------------------------------------------------------


def test_functional_updates(v2_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v2_java)
    snapshot = Snapshot(
        snapshot_id=99,
        parent_snapshot_id=m.current_snapshot_id,
        timestamp_ms=1602638573999,
        sequence_number=35,
        manifest_list="s3://a/b/3.avro",
        summary={"operation": "append"},
        schema_id=1,
    )
    updated = dataclasses.replace(
        m,
        snapshots=(*m.snapshots, snapshot),
        last_sequence_number=35,
        current_snapshot_id=99,
        refs={**m.refs, "main": SnapshotRef.branch(99)},
    )
    assert updated.current_snapshot() == snapshot
    assert m.current_snapshot_id == 3055729675574597004  # the original is unchanged
    round_trip(updated)
    with pytest.raises(InvalidMetadataError, match="does not match"):
        m.replace(current_snapshot_id=3051729675574597004)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.location = "elsewhere"  # type: ignore[misc]
    with pytest.raises(InvalidMetadataError, match=r"snapshots\[0\] must be a Snapshot"):
        m.replace(snapshots=({"snapshot-id": 1},))
    with pytest.raises(InvalidMetadataError, match=r"refs\['main'\] must be a SnapshotRef"):
        m.replace(refs={"main": 3055729675574597004})


def test_new_table_metadata() -> None:
    schema = Schema(
        frazil.types.required(1, "id", frazil.types.LongType()),
        frazil.types.optional(2, "ts", frazil.types.TimestampType()),
    )
    spec = PartitionSpec(0, (PartitionField(2, 1000, "day", "ts_day"),))
    m = TableMetadata.new(
        schema, "file:///tmp/t", spec=spec, format_version=3, properties={"a": "b"}
    )
    assert (m.last_column_id, m.last_partition_id, m.next_row_id) == (2, 1000, 0)
    assert m.table_uuid is not None and m.current_snapshot() is None
    round_trip(m)


def test_read_and_write_files(tmp_path: Path, v2_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v2_java)
    plain = tmp_path / "00001-abc.metadata.json"
    gz = tmp_path / "00002-abc.gz.metadata.json"
    old_gz = tmp_path / "00003-abc.metadata.json.gz"
    for path in (plain, gz, old_gz):
        write_metadata(m, path)
        assert read_metadata(path) == m
    assert gz.read_bytes()[:2] == b"\x1f\x8b" and old_gz.read_bytes()[:2] == b"\x1f\x8b"
    assert json.loads(plain.read_text()) == v2_java
    assert json.loads(gzip.decompress(gz.read_bytes())) == v2_java
    uri = plain.as_uri()
    assert uri.startswith("file:///")
    read = read_metadata(uri)
    assert read == m and read.metadata_location == uri
    assert read.replace(properties={}).metadata_location is None
    assert read_metadata("file:" + str(plain)) == m  # Hadoop's file:/path form
    with pytest.raises(FileExistsError):
        write_metadata(m, plain)  # metadata files are never overwritten


def test_read_errors_name_the_file(tmp_path: Path, v2_java: dict[str, Any]) -> None:
    bad = tmp_path / "v9.metadata.json"
    bad.write_text("{")
    with pytest.raises(InvalidMetadataError, match=r"v9\.metadata\.json"):
        read_metadata(bad)
    v2_java["format-version"] = 7
    bad.write_text(json.dumps(v2_java))
    with pytest.raises(UnsupportedFormatVersionError, match=r"v9\.metadata\.json.*version 7"):
        read_metadata(bad)
    broken_gz = tmp_path / "x.gz.metadata.json"
    broken_gz.write_bytes(gzip.compress(b"{}")[:12])
    with pytest.raises(InvalidMetadataError, match="corrupt gzip"):
        read_metadata(broken_gz)
    with pytest.raises(ValidationError, match="unsupported scheme"):
        read_metadata("hdfs://namenode/metadata/v1.metadata.json")


def test_refresh_must_keep_the_table_uuid(v2_java: dict[str, Any]) -> None:
    m = TableMetadata.from_json(v2_java)
    same = m.replace(properties={"changed": "yes"})
    assert m.check_refreshed(same) is same
    assert frazil.check_same_table(m, same.replace(table_uuid=m.table_uuid.upper())) is not None  # type: ignore[union-attr]
    other = m.replace(table_uuid="00000000-0000-0000-0000-000000000001")
    with pytest.raises(TableUUIDMismatchError, match=r"expected 9c12d441.*got 00000000"):
        m.check_refreshed(other)
