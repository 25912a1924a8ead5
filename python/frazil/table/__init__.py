"""Table changes: metadata updates and commit requirements (the REST catalog protocol's
vocabulary), and the evolution builders for schemas, partition specs, sort orders and views.

Each builder collects changes against a TableMetadata and yields ``(updates, requirements)``;
``commit_to`` checks the requirements and applies the updates (until catalogs exist)::

    from frazil.table import UpdateSchema, UpdateSpec, UpdateSortOrder

    with UpdateSchema(metadata) as update:
        update.add_column("ts", "timestamptz")
        update.rename_column("data", "payload")
    metadata = update.metadata

    metadata = UpdateSpec(metadata).add_field("ts", "day").commit_to()
    metadata = UpdateSortOrder(metadata).asc("id", transform="bucket[4]").commit_to()

    updates, requirements = UpdateSchema(metadata).delete_column("x").updates_and_requirements()
    body = {"updates": [u.to_json() for u in updates],
            "requirements": [r.to_json() for r in requirements]}  # a REST commit body

Branches and tags: :class:`ManageSnapshots`. Views: :func:`create_view`, :class:`ReplaceView`,
:func:`apply_view_updates`.
"""

from __future__ import annotations

from frazil.table._builder import Committer, EvolutionBuilder
from frazil.table._table import StaticTable, Table
from frazil.table.manage_snapshots import ManageSnapshots
from frazil.table.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    TableRequirement,
    requirement_from_json,
    requirements_for,
    validate_requirements,
)
from frazil.table.update_schema import UpdateSchema
from frazil.table.update_sort_order import UpdateSortOrder
from frazil.table.update_spec import UpdateSpec
from frazil.table.updates import (
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    RemovePartitionStatistics,
    RemoveProperties,
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
from frazil.table.view_updates import (
    AddViewVersion,
    AssertViewUUID,
    ReplaceView,
    SetCurrentViewVersion,
    apply_view_updates,
    create_view,
)

__all__ = [
    "AddPartitionSpec",
    "AddSchema",
    "AddSnapshot",
    "AddSortOrder",
    "AddViewVersion",
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "AssertViewUUID",
    "AssignUUID",
    "Committer",
    "EvolutionBuilder",
    "ManageSnapshots",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "ReplaceView",
    "SetCurrentSchema",
    "SetCurrentViewVersion",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetPartitionStatistics",
    "SetProperties",
    "SetSnapshotRef",
    "SetStatistics",
    "StaticTable",
    "Table",
    "TableRequirement",
    "TableUpdate",
    "UpdateSchema",
    "UpdateSortOrder",
    "UpdateSpec",
    "UpgradeFormatVersion",
    "apply_updates",
    "apply_view_updates",
    "create_view",
    "requirement_from_json",
    "requirements_for",
    "update_from_json",
    "validate_requirements",
]
