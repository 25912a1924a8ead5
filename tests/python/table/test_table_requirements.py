"""Commit requirements: validation, REST JSON, and how builders derive them."""

from __future__ import annotations

import json

import pytest
from frazil import TableMetadata
from frazil.errors import CommitFailedError, InvalidMetadataError
from frazil.snapshots import Snapshot, SnapshotRefType
from frazil.table import (
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetProperties,
    SetSnapshotRef,
    TableRequirement,
    UpdateSchema,
    UpdateSortOrder,
    UpdateSpec,
    apply_updates,
    requirement_from_json,
    requirements_for,
    validate_requirements,
)
from frazil.types import LongType
from table_helpers import UUID

ALL: list[TableRequirement] = [
    AssertCreate(),
    AssertTableUUID(UUID),
    AssertRefSnapshotId("main", 3),
    AssertRefSnapshotId("new-branch", None),
    AssertLastAssignedFieldId(13),
    AssertCurrentSchemaId(0),
    AssertLastAssignedPartitionId(999),
    AssertDefaultSpecId(0),
    AssertDefaultSortOrderId(0),
]


@pytest.mark.parametrize("requirement", ALL, ids=lambda r: r.type)
def test_requirement_json_round_trip(requirement: TableRequirement) -> None:
    node = json.loads(json.dumps(requirement.to_json()))
    assert node["type"] == requirement.type
    assert requirement_from_json(node) == requirement
    assert type(requirement).from_json(node) == requirement


def test_rest_json_shapes() -> None:
    assert AssertCreate().to_json() == {"type": "assert-create"}
    assert AssertTableUUID("u").to_json() == {"type": "assert-table-uuid", "uuid": "u"}
    assert AssertRefSnapshotId("b", None).to_json() == {
        "type": "assert-ref-snapshot-id",
        "ref": "b",
        "snapshot-id": None,
    }
    assert AssertLastAssignedFieldId(4).to_json() == {
        "type": "assert-last-assigned-field-id",
        "last-assigned-field-id": 4,
    }
    assert AssertCurrentSchemaId(1).to_json() == {
        "type": "assert-current-schema-id",
        "current-schema-id": 1,
    }
    assert AssertLastAssignedPartitionId(1000).to_json() == {
        "type": "assert-last-assigned-partition-id",
        "last-assigned-partition-id": 1000,
    }
    assert AssertDefaultSpecId(2).to_json() == {
        "type": "assert-default-spec-id",
        "default-spec-id": 2,
    }
    assert AssertDefaultSortOrderId(3).to_json() == {
        "type": "assert-default-sort-order-id",
        "default-sort-order-id": 3,
    }


def test_bad_requirement_json() -> None:
    with pytest.raises(InvalidMetadataError, match="unknown table requirement type 'assert-x'"):
        requirement_from_json({"type": "assert-x"})
    with pytest.raises(InvalidMetadataError, match="current-schema-id"):
        requirement_from_json({"type": "assert-current-schema-id"})
    with pytest.raises(InvalidMetadataError, match="expected a 'assert-create'"):
        AssertCreate.from_json({"type": "assert-table-uuid", "uuid": "u"})


def test_each_requirement_passes_on_the_table_it_was_built_from(v2: TableMetadata) -> None:
    validate_requirements(
        [
            AssertTableUUID(UUID.upper()),
            AssertRefSnapshotId("main", None),
            AssertLastAssignedFieldId(v2.last_column_id),
            AssertCurrentSchemaId(0),
            AssertLastAssignedPartitionId(999),
            AssertDefaultSpecId(0),
            AssertDefaultSortOrderId(0),
        ],
        v2,
    )
    AssertCreate().validate(None)
    # Java skips the last-assigned-id checks for a table that does not exist yet.
    AssertLastAssignedFieldId(5).validate(None)
    AssertLastAssignedPartitionId(5).validate(None)


@pytest.mark.parametrize(
    "requirement, message",
    [
        (AssertCreate(), "the table already exists"),
        (AssertTableUUID("00000000-0000-0000-0000-000000000000"), "table UUID does not match"),
        (AssertLastAssignedFieldId(12), "last assigned field id changed: expected 12, found 13"),
        (AssertCurrentSchemaId(1), "current schema id changed: expected 1, found 0"),
        (AssertLastAssignedPartitionId(1000), "partition id changed: expected 1000, found 999"),
        (AssertDefaultSpecId(1), "default partition spec id changed: expected 1, found 0"),
        (AssertDefaultSortOrderId(1), "default sort order id changed: expected 1, found 0"),
        (AssertRefSnapshotId("main", 1), "branch or tag 'main' is missing"),
    ],
)
def test_each_requirement_fails_when_the_table_changed(
    v2: TableMetadata, requirement: TableRequirement, message: str
) -> None:
    with pytest.raises(CommitFailedError, match=message):
        requirement.validate(v2)


@pytest.mark.parametrize(
    "requirement",
    [
        AssertTableUUID(UUID),
        AssertCurrentSchemaId(0),
        AssertDefaultSpecId(0),
        AssertDefaultSortOrderId(0),
        AssertRefSnapshotId("main", None),
    ],
)
def test_requirements_on_a_missing_table_fail(requirement: TableRequirement) -> None:
    with pytest.raises(CommitFailedError, match="does not exist"):
        requirement.validate(None)


def test_ref_requirements(v2: TableMetadata) -> None:
    snap = Snapshot(5, 1, None, 1, "m.avro")
    metadata = apply_updates(
        v2,
        [
            AddSnapshot(snap),
            SetSnapshotRef("main", 5),
            SetSnapshotRef("tag", 5, SnapshotRefType.TAG),
        ],
    )
    AssertRefSnapshotId("main", 5).validate(metadata)
    with pytest.raises(CommitFailedError, match="branch 'main' has changed: expected snapshot 4"):
        AssertRefSnapshotId("main", 4).validate(metadata)
    with pytest.raises(CommitFailedError, match="tag 'tag' was created concurrently"):
        AssertRefSnapshotId("tag", None).validate(metadata)


def test_requirements_for_updates(v2: TableMetadata) -> None:
    updates = [
        AddSchema(v2.schema()),
        AddSchema(v2.schema()),
        SetCurrentSchema(-1),
        AddPartitionSpec(v2.spec()),
        SetDefaultSpec(-1),
        SetDefaultSortOrder(0),
        SetSnapshotRef("main", 1),
        SetSnapshotRef("main", 2),
        SetProperties({"a": "b"}),
    ]
    assert requirements_for(v2, updates) == (
        AssertTableUUID(UUID),
        AssertLastAssignedFieldId(13),
        AssertCurrentSchemaId(0),
        AssertLastAssignedPartitionId(999),
        AssertDefaultSpecId(0),
        AssertDefaultSortOrderId(0),
        AssertRefSnapshotId("main", None),
    )
    assert requirements_for(None, updates) == (AssertCreate(),)


def test_builders_produce_requirements(v2: TableMetadata) -> None:
    schema_update = UpdateSchema(v2).add_column("n", LongType())
    _, requirements = schema_update.updates_and_requirements()
    assert requirements == (
        AssertTableUUID(UUID),
        AssertLastAssignedFieldId(13),
        AssertCurrentSchemaId(0),
    )
    _, requirements = UpdateSpec(v2).add_field("id", "bucket[4]").updates_and_requirements()
    assert requirements == (
        AssertTableUUID(UUID),
        AssertLastAssignedPartitionId(999),
        AssertDefaultSpecId(0),
    )
    _, requirements = UpdateSortOrder(v2).asc("id").updates_and_requirements()
    assert requirements == (AssertTableUUID(UUID), AssertDefaultSortOrderId(0))
    # Nothing to change: nothing to require.
    assert UpdateSchema(v2).updates_and_requirements() == ((), ())


def test_commit_to_a_concurrently_changed_table_fails(v2: TableMetadata) -> None:
    first = UpdateSchema(v2).add_column("a", LongType())
    second = UpdateSchema(v2).add_column("b", LongType())
    committed = first.commit_to(v2)
    with pytest.raises(CommitFailedError, match="last assigned field id changed"):
        second.commit_to(committed)
    # An unrelated change does not conflict: the update applies on top of it.
    changed = apply_updates(v2, [SetProperties({"x": "y"})])
    result = UpdateSchema(v2).add_column("c", LongType()).commit_to(changed)
    assert result.properties == {"x": "y"} and result.schema().find_field("c") is not None


def test_a_committer_receives_the_updates_and_requirements(v2: TableMetadata) -> None:
    received: list[object] = []

    def commit(updates: tuple[object, ...], requirements: tuple[object, ...]) -> TableMetadata:
        received.append((updates, requirements))
        return apply_updates(v2, updates)  # type: ignore[arg-type]

    with UpdateSortOrder(v2, committer=commit) as update:  # type: ignore[arg-type]
        update.desc("id")
    assert len(received) == 1
    updates, requirements = received[0]  # type: ignore[misc]
    assert [u.action for u in updates] == ["add-sort-order", "set-default-sort-order"]
    assert requirements == (AssertTableUUID(UUID), AssertDefaultSortOrderId(0))
    assert update.metadata.default_sort_order_id == 1
