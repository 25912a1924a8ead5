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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from frazil.table.view_updates import (
        AddViewVersion,
        AssertViewUUID,
        ReplaceView,
        SetCurrentViewVersion,
        apply_view_updates,
        create_view,
    )

# Name -> the module that defines it (loaded on first use, PEP 562: opening a table does
# not load the evolution builders).
_LAZY: dict[str, str] = {
    "Committer": "frazil.table._builder",
    "EvolutionBuilder": "frazil.table._builder",
    "StaticTable": "frazil.table._table",
    "Table": "frazil.table._table",
    "ManageSnapshots": "frazil.table.manage_snapshots",
    "AssertCreate": "frazil.table.requirements",
    "AssertCurrentSchemaId": "frazil.table.requirements",
    "AssertDefaultSortOrderId": "frazil.table.requirements",
    "AssertDefaultSpecId": "frazil.table.requirements",
    "AssertLastAssignedFieldId": "frazil.table.requirements",
    "AssertLastAssignedPartitionId": "frazil.table.requirements",
    "AssertRefSnapshotId": "frazil.table.requirements",
    "AssertTableUUID": "frazil.table.requirements",
    "TableRequirement": "frazil.table.requirements",
    "requirement_from_json": "frazil.table.requirements",
    "requirements_for": "frazil.table.requirements",
    "validate_requirements": "frazil.table.requirements",
    "UpdateSchema": "frazil.table.update_schema",
    "UpdateSortOrder": "frazil.table.update_sort_order",
    "UpdateSpec": "frazil.table.update_spec",
    "AddPartitionSpec": "frazil.table.updates",
    "AddSchema": "frazil.table.updates",
    "AddSnapshot": "frazil.table.updates",
    "AddSortOrder": "frazil.table.updates",
    "AssignUUID": "frazil.table.updates",
    "RemovePartitionSpecs": "frazil.table.updates",
    "RemovePartitionStatistics": "frazil.table.updates",
    "RemoveProperties": "frazil.table.updates",
    "RemoveSchemas": "frazil.table.updates",
    "RemoveSnapshotRef": "frazil.table.updates",
    "RemoveSnapshots": "frazil.table.updates",
    "RemoveStatistics": "frazil.table.updates",
    "SetCurrentSchema": "frazil.table.updates",
    "SetDefaultSortOrder": "frazil.table.updates",
    "SetDefaultSpec": "frazil.table.updates",
    "SetLocation": "frazil.table.updates",
    "SetPartitionStatistics": "frazil.table.updates",
    "SetProperties": "frazil.table.updates",
    "SetSnapshotRef": "frazil.table.updates",
    "SetStatistics": "frazil.table.updates",
    "TableUpdate": "frazil.table.updates",
    "UpgradeFormatVersion": "frazil.table.updates",
    "apply_updates": "frazil.table.updates",
    "update_from_json": "frazil.table.updates",
    "AddViewVersion": "frazil.table.view_updates",
    "AssertViewUUID": "frazil.table.view_updates",
    "ReplaceView": "frazil.table.view_updates",
    "SetCurrentViewVersion": "frazil.table.view_updates",
    "apply_view_updates": "frazil.table.view_updates",
    "create_view": "frazil.table.view_updates",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'frazil.table' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
    "RemovePartitionSpecs",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSchemas",
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
