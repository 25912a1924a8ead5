"""Table updates: the REST JSON shape of each, and apply_updates' rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from frazil import Schema, TableMetadata
from frazil.errors import InvalidMetadataError, InvalidSchemaError, InvalidUpdateError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from frazil.sorting import SortField, SortOrder
from frazil.statistics import PartitionStatisticsFile, StatisticsFile
from frazil.table import (
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableUpdate,
    UpgradeFormatVersion,
    apply_updates,
    update_from_json,
)
from frazil.types import (
    LongType,
    NestedField,
    StringType,
    TimestampNanoType,
    optional,
    required,
)
from table_helpers import UUID, sample_schema


def snapshot(snapshot_id: int, seq: int, parent: int | None = None, **kw: object) -> Snapshot:
    return Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=10_000 + snapshot_id,
        parent_snapshot_id=parent,
        sequence_number=seq,
        manifest_list=f"s3://b/snap-{snapshot_id}.avro",
        summary={"operation": "append"},
        **kw,  # type: ignore[arg-type]
    )


def main(snapshot_id: int) -> SetSnapshotRef:
    return SetSnapshotRef("main", snapshot_id)


ALL_UPDATES: list[TableUpdate] = [
    AssignUUID(UUID),
    UpgradeFormatVersion(3),
    AddSchema(sample_schema(), 13),
    AddSchema(sample_schema()),
    SetCurrentSchema(-1),
    AddPartitionSpec(PartitionSpec(1, (PartitionField(1, 1000, "bucket[16]", "id_bucket_16"),))),
    SetDefaultSpec(1),
    AddSortOrder(SortOrder(1, (SortField(1, "identity", "desc", "nulls-last"),))),
    SetDefaultSortOrder(-1),
    AddSnapshot(snapshot(5, 1)),
    SetSnapshotRef("main", 5),
    SetSnapshotRef("t1", 5, SnapshotRefType.TAG, max_ref_age_ms=10),
    SetSnapshotRef("b1", 5, "branch", 2, 3, 4),  # type: ignore[arg-type]
    RemoveSnapshots((5, 6)),
    RemoveSnapshotRef("t1"),
    SetLocation("s3://bucket/other"),
    SetProperties({"a": "1", "b": "2"}),
    RemoveProperties(("a",)),
    SetStatistics(StatisticsFile(5, "s3://b/stats.puffin", 100, 10)),
    RemoveStatistics(5),
    SetPartitionStatistics(PartitionStatisticsFile(5, "s3://b/p.parquet", 42)),
    RemovePartitionStatistics(5),
    RemoveSchemas((0, 2)),
    RemovePartitionSpecs((1,)),
]


@pytest.mark.parametrize("update", ALL_UPDATES, ids=lambda u: u.action)
def test_update_json_round_trip(update: TableUpdate) -> None:
    node = json.loads(json.dumps(update.to_json()))
    assert node["action"] == update.action
    assert update_from_json(node) == update
    assert type(update).from_json(node) == update


def test_rest_json_shapes() -> None:
    # Shapes written by hand from the REST catalog OpenAPI (rest-catalog-open-api.yaml).
    assert SetCurrentSchema(-1).to_json() == {"action": "set-current-schema", "schema-id": -1}
    assert SetDefaultSpec(0).to_json() == {"action": "set-default-spec", "spec-id": 0}
    assert SetDefaultSortOrder(2).to_json() == {
        "action": "set-default-sort-order",
        "sort-order-id": 2,
    }
    assert RemoveSnapshots((1, 2)).to_json() == {
        "action": "remove-snapshots",
        "snapshot-ids": [1, 2],
    }
    assert SetSnapshotRef("main", 7).to_json() == {
        "action": "set-snapshot-ref",
        "ref-name": "main",
        "snapshot-id": 7,
        "type": "branch",
    }
    assert SetProperties({"k": "v"}).to_json() == {
        "action": "set-properties",
        "updates": {"k": "v"},
    }
    assert RemoveProperties(("k",)).to_json() == {"action": "remove-properties", "removals": ["k"]}
    assert UpgradeFormatVersion(2).to_json() == {
        "action": "upgrade-format-version",
        "format-version": 2,
    }
    schema_json = AddSchema(Schema(required(1, "id", LongType())), 1).to_json()
    assert schema_json["action"] == "add-schema" and schema_json["last-column-id"] == 1
    assert schema_json["schema"]["fields"][0]["name"] == "id"


def test_legacy_property_keys_are_read() -> None:
    assert update_from_json({"action": "set-properties", "updated": {"a": "b"}}) == SetProperties(
        {"a": "b"}
    )
    assert update_from_json({"action": "remove-properties", "removed": ["a"]}) == RemoveProperties(
        ("a",)
    )


def test_unbound_spec_without_spec_id_is_read() -> None:
    node = {
        "action": "add-spec",
        "spec": {"fields": [{"source-id": 1, "field-id": 1000, "transform": "day", "name": "d"}]},
    }
    update = update_from_json(node)
    assert isinstance(update, AddPartitionSpec)
    assert update.spec.fields[0].transform == "day"


@pytest.mark.parametrize(
    "node, message",
    [
        ({"action": "drop-table"}, "unknown table update action 'drop-table'"),
        ({"schema-id": 1}, "action"),
        ({"action": "set-current-schema"}, "schema-id"),
        ({"action": "add-schema"}, "schema"),
        ({"action": "remove-snapshots", "snapshot-ids": ["x"]}, "snapshot-ids"),
        ({"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 1, "type": "leaf"}, "type"),
        (
            {
                "action": "set-statistics",
                "snapshot-id": 2,
                "statistics": {
                    "snapshot-id": 1,
                    "statistics-path": "p",
                    "file-size-in-bytes": 1,
                    "file-footer-size-in-bytes": 1,
                    "blob-metadata": [],
                },
            },
            "does not match",
        ),
    ],
)
def test_bad_update_json_is_refused(node: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidMetadataError, match=message):
        update_from_json(node)


def test_from_json_of_the_wrong_class_is_refused() -> None:
    with pytest.raises(InvalidMetadataError, match="expected a 'add-schema' update"):
        AddSchema.from_json({"action": "set-location", "location": "x"})


def test_tag_retention_is_refused() -> None:
    with pytest.raises(InvalidMetadataError, match="branches only"):
        SetSnapshotRef("t", 1, SnapshotRefType.TAG, min_snapshots_to_keep=1)


# --- apply_updates -----------------------------------------------------------------------------


def test_no_op_updates_return_the_same_metadata(v2: TableMetadata) -> None:
    same = apply_updates(
        v2,
        [
            SetCurrentSchema(0),
            SetDefaultSpec(0),
            SetDefaultSortOrder(0),
            SetLocation(v2.location),
            SetProperties({}),
            RemoveProperties(()),
            RemoveStatistics(1),
            AssignUUID(UUID.upper()),
            UpgradeFormatVersion(2),
        ],
        "file:///m/v1.metadata.json",
    )
    assert same is v2


def test_last_updated_ms_and_metadata_log(v2: TableMetadata) -> None:
    new = apply_updates(v2, [SetProperties({"a": "b"})], "file:///m/00000.json", timestamp_ms=5_000)
    assert new.last_updated_ms == 5_000
    assert [(e.timestamp_ms, e.metadata_file) for e in new.metadata_log] == [
        (1_000, "file:///m/00000.json")
    ]
    assert new.properties == {"a": "b"}
    # Without a location (and none on the metadata) nothing is logged.
    assert apply_updates(v2, [SetProperties({"a": "b"})]).metadata_log == ()
    # A clock behind the table never moves last-updated-ms backwards.
    assert apply_updates(v2, [SetProperties({"a": "c"})], timestamp_ms=10).last_updated_ms == 1_000


def test_metadata_log_uses_the_metadata_location_by_default(v2: TableMetadata) -> None:
    read = TableMetadata.from_json(v2.to_json(), metadata_location="file:///m/1.metadata.json")
    new = apply_updates(read, [SetProperties({"a": "b"})], timestamp_ms=2_000)
    assert [e.metadata_file for e in new.metadata_log] == ["file:///m/1.metadata.json"]
    assert new.metadata_location is None


def test_metadata_log_is_trimmed_to_previous_versions_max(v2: TableMetadata) -> None:
    metadata = apply_updates(
        v2, [SetProperties({"write.metadata.previous-versions-max": "3"})], timestamp_ms=1_001
    )
    for i in range(6):
        metadata = apply_updates(
            metadata, [SetProperties({"i": str(i)})], f"file:///m/{i}.json", timestamp_ms=2_000 + i
        )
    assert [e.metadata_file for e in metadata.metadata_log] == [
        "file:///m/3.json",
        "file:///m/4.json",
        "file:///m/5.json",
    ]
    # Timestamps are those of the replaced metadata.
    assert [e.timestamp_ms for e in metadata.metadata_log] == [2_002, 2_003, 2_004]


def test_metadata_log_default_limit_is_100(v2: TableMetadata) -> None:
    metadata = v2
    for i in range(105):
        metadata = apply_updates(
            metadata, [SetProperties({"i": str(i)})], f"f{i}", timestamp_ms=2_000 + i
        )
    assert len(metadata.metadata_log) == 100
    assert metadata.metadata_log[0].metadata_file == "f5"


def test_bad_previous_versions_max_is_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="previous-versions-max"):
        apply_updates(v2, [SetProperties({"write.metadata.previous-versions-max": "x"})], "f")


def test_assign_uuid(make_metadata: object, v2: TableMetadata) -> None:
    v1_without_uuid = TableMetadata.from_json(
        {k: v for k, v in v2.replace(format_version=1).to_dict().items() if k != "table-uuid"}
    )
    assert v1_without_uuid.table_uuid is None
    assert apply_updates(v1_without_uuid, [AssignUUID(UUID)]).table_uuid == UUID
    with pytest.raises(InvalidUpdateError, match="cannot reassign the table UUID"):
        apply_updates(v2, [AssignUUID("00000000-0000-0000-0000-000000000000")])


def test_upgrade_format_version(v1: TableMetadata) -> None:
    v2 = apply_updates(v1, [UpgradeFormatVersion(2)])
    assert v2.format_version == 2 and v2.next_row_id is None
    v3 = apply_updates(v2, [UpgradeFormatVersion(3)])
    assert v3.format_version == 3 and v3.next_row_id == 0
    assert TableMetadata.from_json(v3.to_json()) == v3
    with pytest.raises(InvalidUpdateError, match="cannot downgrade a v3 table to v2"):
        apply_updates(v3, [UpgradeFormatVersion(2)])
    with pytest.raises(InvalidUpdateError, match="v4"):
        apply_updates(v3, [UpgradeFormatVersion(4)])


def test_add_schema_assigns_id_and_last_column_id(v2: TableMetadata) -> None:
    schema = Schema(*sample_schema().fields, optional(20, "extra", StringType()), schema_id=7)
    new = apply_updates(v2, [AddSchema(schema), SetCurrentSchema(-1)])
    assert [s.schema_id for s in new.schemas] == [0, 1]
    assert new.current_schema_id == 1
    assert new.last_column_id == 20
    # The deprecated last-column-id may raise it further, never lower it.
    assert apply_updates(v2, [AddSchema(schema, 30)]).last_column_id == 30
    assert apply_updates(v2, [AddSchema(schema, 2)]).last_column_id == 20


def test_add_schema_reuses_an_identical_schema(v2: TableMetadata) -> None:
    same = Schema(*sample_schema().fields, schema_id=42, identifier_field_ids=[1])
    assert apply_updates(v2, [AddSchema(same)]) is v2
    other = Schema(*sample_schema().fields, optional(14, "x", LongType()))
    once = apply_updates(v2, [AddSchema(other), SetCurrentSchema(-1)])
    twice = apply_updates(once, [AddSchema(other)])
    assert twice is once
    # Going back to the first schema reuses id 0.
    back = apply_updates(once, [AddSchema(sample_schema()), SetCurrentSchema(0)])
    assert [s.schema_id for s in back.schemas] == [0, 1] and back.current_schema_id == 0


def test_set_current_schema_errors(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="no schema was added"):
        apply_updates(v2, [SetCurrentSchema(-1)])
    with pytest.raises(InvalidUpdateError, match="unknown schema 5"):
        apply_updates(v2, [SetCurrentSchema(5)])
    # A reused schema is not "added": -1 does not name it (as Java).
    with pytest.raises(InvalidUpdateError, match="no schema was added"):
        apply_updates(v2, [AddSchema(sample_schema()), SetCurrentSchema(-1)])


def test_add_schema_refuses_reused_field_ids(v2: TableMetadata) -> None:
    # Drop column 2, then try to give id 2 to a new column.
    dropped = Schema(
        *[f for f in sample_schema().fields if f.field_id != 2], identifier_field_ids=[1]
    )
    metadata = apply_updates(v2, [AddSchema(dropped), SetCurrentSchema(-1)])
    reused = Schema(*dropped.fields, optional(2, "data", StringType()), identifier_field_ids=[1])
    # Id 2 is still known from schema 0 with the same meaning: allowed (undoing the drop).
    apply_updates(metadata, [AddSchema(reused)])
    bad = Schema(*sample_schema().fields, optional(9_999, "late", LongType()))
    ok = apply_updates(v2, [AddSchema(bad)])
    low = Schema(
        *[f for f in ok.schemas[1].fields if f.field_id != 9_999], optional(14, "y", LongType())
    )
    with pytest.raises(InvalidUpdateError, match=r"id 14.*last-column-id 9999"):
        apply_updates(ok, [AddSchema(low)])


def test_add_schema_checks_the_format_version(v2: TableMetadata) -> None:
    schema = Schema(*sample_schema().fields, optional(14, "ns", TimestampNanoType()))
    with pytest.raises(InvalidSchemaError, match="needs format version 3"):
        apply_updates(v2, [AddSchema(schema)])


def test_current_schema_must_keep_the_default_spec_valid(v2: TableMetadata) -> None:
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "data"),))
    metadata = apply_updates(v2, [AddPartitionSpec(spec), SetDefaultSpec(-1)])
    without_data = Schema(
        *[f for f in sample_schema().fields if f.field_id != 2], identifier_field_ids=[1]
    )
    with pytest.raises(InvalidMetadataError, match="cannot find source column 2"):
        apply_updates(metadata, [AddSchema(without_data), SetCurrentSchema(-1)])


def test_add_spec_and_reuse(v2: TableMetadata) -> None:
    spec = PartitionSpec(9, (PartitionField(1, 1000, "bucket[8]", "id_bucket_8"),))
    new = apply_updates(v2, [AddPartitionSpec(spec), SetDefaultSpec(-1)])
    assert new.default_spec_id == 1 and new.spec().fields == spec.fields
    assert new.last_partition_id == 1000
    # Java's compatibleWith: same source, transform and name; the field id is not compared.
    again = PartitionSpec(3, (PartitionField(1, 1000, "bucket[8]", "id_bucket_8"),))
    assert apply_updates(new, [AddPartitionSpec(again)]) is new
    back = apply_updates(new, [AddPartitionSpec(PartitionSpec()), SetDefaultSpec(0)])
    assert back.default_spec_id == 0 and len(back.partition_specs) == 2


def test_add_spec_errors(v2: TableMetadata, v1: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="no spec was added"):
        apply_updates(v2, [SetDefaultSpec(-1)])
    with pytest.raises(InvalidUpdateError, match="unknown spec 4"):
        apply_updates(v2, [SetDefaultSpec(4)])
    not_sequential = PartitionSpec(0, (PartitionField(1, 1005, "identity", "id"),))
    with pytest.raises(InvalidUpdateError, match="sequential field ids"):
        apply_updates(v1, [AddPartitionSpec(not_sequential)])
    first = apply_updates(
        v2, [AddPartitionSpec(PartitionSpec(0, (PartitionField(1, 1000, "identity", "id"),)))]
    )
    # Id 1000 meant identity(id); it cannot now mean identity(data).
    reuse = PartitionSpec(0, (PartitionField(2, 1000, "identity", "data"),))
    with pytest.raises(InvalidUpdateError, match="reuses id 1000"):
        apply_updates(first, [AddPartitionSpec(reuse)])
    below = PartitionSpec(0, (PartitionField(2, 999, "identity", "data"),))
    with pytest.raises(InvalidUpdateError, match="last-partition-id 1000"):
        apply_updates(first, [AddPartitionSpec(below)])


def test_add_sort_order_and_reuse(v2: TableMetadata) -> None:
    order = SortOrder(5, (SortField(1, "bucket[4]", "asc", "nulls-first"),))
    new = apply_updates(v2, [AddSortOrder(order), SetDefaultSortOrder(-1)])
    assert new.default_sort_order_id == 1
    assert apply_updates(new, [AddSortOrder(order)]) is new
    # The unsorted order exists already, so it is not "added" and -1 cannot name it (Java).
    with pytest.raises(InvalidUpdateError, match="no sort order was added"):
        apply_updates(new, [AddSortOrder(SortOrder()), SetDefaultSortOrder(-1)])
    assert (
        apply_updates(
            new, [AddSortOrder(SortOrder()), SetDefaultSortOrder(0)]
        ).default_sort_order_id
        == 0
    )
    with pytest.raises(InvalidUpdateError, match="no sort order was added"):
        apply_updates(v2, [SetDefaultSortOrder(-1)])
    with pytest.raises(InvalidUpdateError, match="unknown order 3"):
        apply_updates(v2, [SetDefaultSortOrder(3)])
    with pytest.raises(InvalidMetadataError, match="cannot find source column 99"):
        apply_updates(v2, [AddSortOrder(SortOrder(1, (SortField(99),)))])


def test_add_snapshot_and_main(v2: TableMetadata) -> None:
    new = apply_updates(v2, [AddSnapshot(snapshot(1, 1)), main(1)], timestamp_ms=20_000)
    assert new.current_snapshot_id == 1 and new.last_sequence_number == 1
    assert new.refs["main"] == SnapshotRef.branch(1)
    # A new snapshot is logged at its own timestamp.
    assert [(e.timestamp_ms, e.snapshot_id) for e in new.snapshot_log] == [(10_001, 1)]
    newer = apply_updates(new, [AddSnapshot(snapshot(2, 2, 1)), main(2)], timestamp_ms=30_000)
    # A rollback to an existing snapshot is logged at the time of the change.
    rolled = apply_updates(newer, [main(1)], timestamp_ms=40_000)
    assert [(e.timestamp_ms, e.snapshot_id) for e in rolled.snapshot_log] == [
        (10_001, 1),
        (10_002, 2),
        (40_000, 1),
    ]
    assert rolled.current_snapshot_id == 1 and rolled.last_sequence_number == 2
    assert TableMetadata.from_json(rolled.to_json()) == rolled


def test_add_snapshot_errors(v2: TableMetadata, v1: TableMetadata) -> None:
    one = apply_updates(v2, [AddSnapshot(snapshot(1, 1)), main(1)])
    with pytest.raises(InvalidUpdateError, match="already exists"):
        apply_updates(one, [AddSnapshot(snapshot(1, 2))])
    with pytest.raises(InvalidUpdateError, match="sequence number 1: it must be above"):
        apply_updates(one, [AddSnapshot(snapshot(2, 1, 1))])
    with pytest.raises(InvalidUpdateError, match="v1 snapshots"):
        apply_updates(v1, [AddSnapshot(snapshot(2, 1))])
    assert apply_updates(v1, [AddSnapshot(snapshot(2, 0)), main(2)]).current_snapshot_id == 2


def test_v3_snapshots_track_row_ids(v3: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="first-row-id and added-rows"):
        apply_updates(v3, [AddSnapshot(snapshot(1, 1))])
    new = apply_updates(v3, [AddSnapshot(snapshot(1, 1, first_row_id=0, added_rows=10)), main(1)])
    assert new.next_row_id == 10
    with pytest.raises(InvalidUpdateError, match="behind the table's next-row-id 10"):
        apply_updates(new, [AddSnapshot(snapshot(2, 2, 1, first_row_id=5, added_rows=1))])


def test_set_snapshot_ref_errors(v2: TableMetadata) -> None:
    one = apply_updates(v2, [AddSnapshot(snapshot(1, 1))])
    with pytest.raises(InvalidUpdateError, match="unknown snapshot 7"):
        apply_updates(one, [main(7)])
    with pytest.raises(InvalidUpdateError, match="'main' to a tag"):
        apply_updates(one, [SetSnapshotRef("main", 1, SnapshotRefType.TAG)])
    tagged = apply_updates(one, [SetSnapshotRef("v1.0", 1, SnapshotRefType.TAG)])
    assert tagged.current_snapshot_id is None and tagged.refs["v1.0"].type is SnapshotRefType.TAG


def test_intermediate_snapshots_leave_the_log(v2: TableMetadata) -> None:
    new = apply_updates(
        v2,
        [AddSnapshot(snapshot(1, 1)), main(1), AddSnapshot(snapshot(2, 2, 1)), main(2)],
    )
    assert [e.snapshot_id for e in new.snapshot_log] == [2]


def test_remove_snapshots_drops_refs_stats_and_log(v2: TableMetadata) -> None:
    metadata = v2
    for i in (1, 2, 3):
        metadata = apply_updates(metadata, [AddSnapshot(snapshot(i, i, i - 1 or None)), main(i)])
    metadata = apply_updates(
        metadata,
        [
            SetSnapshotRef("old", 1, SnapshotRefType.TAG),
            SetStatistics(StatisticsFile(2, "s", 1, 1)),
            SetPartitionStatistics(PartitionStatisticsFile(2, "p", 1)),
            SetStatistics(StatisticsFile(3, "s3", 1, 1)),
        ],
    )
    removed = apply_updates(metadata, [RemoveSnapshots((1, 2))])
    assert [s.snapshot_id for s in removed.snapshots] == [3]
    assert "old" not in removed.refs and removed.current_snapshot_id == 3
    assert [s.snapshot_id for s in removed.statistics] == [3]
    assert removed.partition_statistics == ()
    assert [e.snapshot_id for e in removed.snapshot_log] == [3]
    # Removing the current snapshot removes main too.
    gone = apply_updates(removed, [RemoveSnapshots((3,))])
    assert gone.current_snapshot_id is None and gone.refs == {} and gone.snapshot_log == ()
    assert apply_updates(gone, [RemoveSnapshots((3,))]) is gone


def test_remove_snapshot_ref(v2: TableMetadata) -> None:
    one = apply_updates(v2, [AddSnapshot(snapshot(1, 1)), main(1), SetSnapshotRef("b", 1)])
    no_main = apply_updates(one, [RemoveSnapshotRef("main")])
    assert no_main.current_snapshot_id is None and set(no_main.refs) == {"b"}
    assert apply_updates(no_main, [RemoveSnapshotRef("nope")]) is no_main


def test_location_and_properties(v2: TableMetadata) -> None:
    new = apply_updates(
        v2,
        [
            SetLocation("s3://x/y"),
            SetProperties({"a": "1", "b": "2"}),
            RemoveProperties(("a", "missing")),
        ],
    )
    assert new.location == "s3://x/y" and new.properties == {"b": "2"}


def test_statistics(v2: TableMetadata) -> None:
    one = apply_updates(v2, [AddSnapshot(snapshot(1, 1)), main(1)])
    first = StatisticsFile(1, "a.puffin", 1, 1)
    second = StatisticsFile(1, "b.puffin", 2, 2)
    new = apply_updates(one, [SetStatistics(first), SetStatistics(second)])
    assert new.statistics == (second,)
    assert apply_updates(new, [RemoveStatistics(1)]).statistics == ()


def test_not_an_update_is_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="not a table update"):
        apply_updates(v2, ["set-location"])  # type: ignore[list-item]
    with pytest.raises(InvalidUpdateError, match="needs a TableMetadata"):
        apply_updates({}, [])  # type: ignore[arg-type]


def test_add_schema_refuses_changes_evolution_never_makes(v2: TableMetadata) -> None:
    from frazil.types import DoubleType, IntegerType, StructType

    def with_field(field: NestedField) -> Schema:
        fields = [field if f.field_id == field.field_id else f for f in sample_schema().fields]
        return Schema(*fields, identifier_field_ids=[1])

    with pytest.raises(InvalidUpdateError, match="long -> int is not an allowed type promotion"):
        apply_updates(v2, [AddSchema(with_field(required(1, "id", IntegerType())))])
    with pytest.raises(InvalidUpdateError, match="cannot change from string to struct"):
        apply_updates(
            v2,
            [
                AddSchema(
                    with_field(optional(2, "data", StructType((optional(20, "s", StringType()),))))
                )
            ],
        )
    # Ungrouping: location.lat (id 5) moved to the top level.
    ungrouped = Schema(
        *[f for f in sample_schema().fields if f.field_id != 4],
        optional(4, "location", StructType((optional(6, "long", DoubleType()),))),
        optional(5, "lat", DoubleType()),
        identifier_field_ids=[1],
    )
    with pytest.raises(InvalidUpdateError, match="cannot move between structs"):
        apply_updates(v2, [AddSchema(ungrouped)])
    # A promotion and a rename are what evolution does: accepted.
    promoted = with_field(optional(2, "payload", StringType()))
    assert apply_updates(v2, [AddSchema(promoted)]).last_column_id == 13


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: SetLocation(3), "SetLocation: location must be a str"),  # type: ignore[arg-type]
        (lambda: SetCurrentSchema("1"), "SetCurrentSchema: schema_id must be an int"),  # type: ignore[arg-type]
        (lambda: SetDefaultSpec(True), "SetDefaultSpec: spec_id must be an int, got True"),
        (lambda: AddSchema({"type": "struct"}), "AddSchema: schema must be a Schema"),  # type: ignore[arg-type]
        (lambda: AddSchema(sample_schema(), "3"), "last_column_id must be an int or None"),  # type: ignore[arg-type]
        (lambda: AddSnapshot(None), "AddSnapshot: snapshot must be a Snapshot"),  # type: ignore[arg-type]
        (lambda: SetSnapshotRef(1, 2), "SetSnapshotRef: ref_name must be a str"),  # type: ignore[arg-type]
        (lambda: RemoveSnapshots("12"), "RemoveSnapshots: snapshot_ids must be a tuple of int"),  # type: ignore[arg-type]
        (lambda: RemoveSnapshots([1, "2"]), r"RemoveSnapshots: snapshot_ids\[1\] must be an int"),  # type: ignore[list-item]
        (lambda: RemoveProperties([1]), r"RemoveProperties: removals\[0\] must be a str"),  # type: ignore[list-item]
        (lambda: SetProperties({"a": 1}), r"SetProperties: updates\['a'\] must be a str"),  # type: ignore[dict-item]
        (lambda: UpgradeFormatVersion(2.0), "UpgradeFormatVersion: format_version"),  # type: ignore[arg-type]
    ],
)
def test_updates_built_with_wrong_types_are_refused(make: Any, message: str) -> None:
    with pytest.raises(InvalidUpdateError, match=message):
        make()


def test_requirements_built_with_wrong_types_are_refused() -> None:
    from frazil.table import AssertCurrentSchemaId, AssertRefSnapshotId, AssertTableUUID

    for make in (
        lambda: AssertCurrentSchemaId("0"),
        lambda: AssertRefSnapshotId("main", "1"),
        lambda: AssertTableUUID(None),
    ):
        with pytest.raises(InvalidUpdateError, match=r"Assert\w+: \w+ must be"):
            make()  # type: ignore[no-untyped-call]
