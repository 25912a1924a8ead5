"""The manifests metadata tables (Java's ``ManifestsTable`` and ``AllManifestsTable``): one
row per manifest of a manifest list, with partition summaries' bounds as human strings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import InvalidDataError
from frazil.table._human import human_string
from frazil.table.inspect._common import field, manifest_rows, snapshot, spec

if TYPE_CHECKING:
    from frazil.table._table import Table


def _summaries(contains_nan_required: bool) -> pa.DataType:
    element = pa.struct(
        [
            field("contains_null", pa.bool_(), True),
            field("contains_nan", pa.bool_(), contains_nan_required),
            field("lower_bound", pa.string()),
            field("upper_bound", pa.string()),
        ]
    )
    return pa.list_(pa.field("element", element, nullable=False))


MANIFESTS_SCHEMA = pa.schema(
    [
        field("content", pa.int32(), True),
        field("path", pa.string(), True),
        field("length", pa.int64(), True),
        field("partition_spec_id", pa.int32(), True),
        field("added_snapshot_id", pa.int64(), True),
        field("added_data_files_count", pa.int32(), True),
        field("existing_data_files_count", pa.int32(), True),
        field("deleted_data_files_count", pa.int32(), True),
        field("added_delete_files_count", pa.int32(), True),
        field("existing_delete_files_count", pa.int32(), True),
        field("deleted_delete_files_count", pa.int32(), True),
        field("partition_summaries", _summaries(False), True),
    ]
)

# Java's AllManifestsTable: looser nullability, a required contains_nan, and the snapshot
# whose manifest list was read.
ALL_MANIFESTS_SCHEMA = pa.schema(
    [
        field("content", pa.int32(), True),
        field("path", pa.string(), True),
        field("length", pa.int64(), True),
        field("partition_spec_id", pa.int32()),
        field("added_snapshot_id", pa.int64()),
        field("added_data_files_count", pa.int32()),
        field("existing_data_files_count", pa.int32()),
        field("deleted_data_files_count", pa.int32()),
        field("added_delete_files_count", pa.int32(), True),
        field("existing_delete_files_count", pa.int32(), True),
        field("deleted_delete_files_count", pa.int32(), True),
        field("partition_summaries", _summaries(True)),
        field("reference_snapshot_id", pa.int64(), True),
    ]
)


def manifests_table(table: Table, snapshot_id: int | None) -> pa.Table:
    snap = snapshot(table, snapshot_id)
    rows = [] if snap is None else manifest_rows(table, snap)
    return pa.Table.from_pylist([_row(table, r) for r in rows], schema=MANIFESTS_SCHEMA)


def all_manifests_table(table: Table) -> pa.Table:
    out = []
    for snap in table.metadata.snapshots:
        for row in manifest_rows(table, snap):
            out.append({**_row(table, row), "reference_snapshot_id": snap.snapshot_id})
    return pa.Table.from_pylist(out, schema=ALL_MANIFESTS_SCHEMA)


def _row(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    content = row["content"]
    data, deletes = content == 0, content == 1
    return {
        "content": content,
        "path": row["manifest_path"],
        "length": row["manifest_length"],
        "partition_spec_id": row["partition_spec_id"],
        "added_snapshot_id": row["added_snapshot_id"],
        "added_data_files_count": row["added_files_count"] if data else 0,
        "existing_data_files_count": row["existing_files_count"] if data else 0,
        "deleted_data_files_count": row["deleted_files_count"] if data else 0,
        "added_delete_files_count": row["added_files_count"] if deletes else 0,
        "existing_delete_files_count": row["existing_files_count"] if deletes else 0,
        "deleted_delete_files_count": row["deleted_files_count"] if deletes else 0,
        "partition_summaries": _partition_summaries(
            table, row["partition_spec_id"], row["partitions"]
        ),
    }


def _partition_summaries(
    table: Table, spec_id: int, summaries: list[dict[str, Any]] | None
) -> list[dict[str, Any]] | None:
    if summaries is None:
        return None
    manifest_spec = spec(table, spec_id)
    partition_type = manifest_spec.partition_type(table.metadata.schema())
    if len(summaries) != len(manifest_spec.fields):
        raise InvalidDataError(
            f"a manifest of partition spec {spec_id} has {len(summaries)} partition "
            f"summaries for {len(manifest_spec.fields)} partition fields"
        )
    out = []
    for summary, partition_field, typed in zip(
        summaries, manifest_spec.fields, partition_type.fields, strict=True
    ):
        out.append(
            {
                "contains_null": summary["contains_null"],
                "contains_nan": summary["contains_nan"],
                "lower_bound": human_string(
                    partition_field.transform, typed.field_type, summary["lower_bound"]
                ),
                "upper_bound": human_string(
                    partition_field.transform, typed.field_type, summary["upper_bound"]
                ),
            }
        )
    return out
