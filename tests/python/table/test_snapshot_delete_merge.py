"""Delete manifests are merged like data manifests (Java's MergingSnapshotProducer has a
second ManifestMergeManager for them, with the same ``commit.manifest-merge.*`` properties),
keeping each delete file's sequence numbers, on which it depends to apply to the right data
files (spec: "Sequence Numbers", "Scan Planning")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.manifest import STATUS_EXISTING, read_manifest, read_manifest_list
from frazil.schema import Schema
from frazil.table import Table
from frazil.types import NestedField, parse_type
from snapshot_delete_helpers import commit_deletes, equality_deletes, position_deletes


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _manifests(table: Table) -> list[dict[str, Any]]:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    rows: list[dict[str, Any]] = read_manifest_list(snapshot.manifest_list).to_pylist()
    return rows


def _data_paths(table: Table) -> list[str]:
    return [t.file.file_path for t in table.scan().plan_files()]


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table_with_three_delete_manifests(catalog: InMemoryCatalog, **properties: str) -> Table:
    """Data file A = [1, 2, 3] (seq 1); equality delete id=1 (seq 2); position delete of A's
    row 1, id 2 (seq 3); data file B = [1, 5] (seq 4); equality delete id=5 (seq 5). Live:
    A's 3 and B's 1 and (B's 5 deleted)."""
    schema = Schema(NestedField(1, "id", parse_type("long"), False))
    props = {"commit.manifest.min-count-to-merge": "3", **properties}
    table = catalog.create_table("db.t", schema, properties=props)
    table.append(_rows([1, 2, 3]))
    (a,) = _data_paths(table)
    commit_deletes(table, [equality_deletes(table, "eq1.parquet", [1])])
    commit_deletes(table, [position_deletes(table, "pos1.parquet", [(a, 1)])])
    table.append(_rows([1, 5]))
    commit_deletes(table, [equality_deletes(table, "eq5.parquet", [5])])
    deletes = [m for m in _manifests(table) if m["content"] == 1]
    assert len(deletes) == 3  # the delete-only commits do not merge
    assert _ids(table) == [1, 3]
    return table


@pytest.mark.parametrize("operation", ["append", "overwrite"])
def test_small_delete_manifests_are_merged_keeping_sequence_numbers(
    catalog: InMemoryCatalog, operation: str
) -> None:
    table = _table_with_three_delete_manifests(catalog)
    if operation == "append":
        table.append(_rows([7]))
    else:
        table.overwrite(_rows([7]), overwrite_filter="id = 100")  # removes nothing
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.sequence_number == 6
    deletes = [m for m in _manifests(table) if m["content"] == 1]
    assert len(deletes) == 1
    (merged,) = deletes
    assert merged["added_snapshot_id"] == snapshot.snapshot_id
    assert merged["existing_files_count"] == 3 and merged["added_files_count"] == 0
    assert merged["min_sequence_number"] == 2
    entries = read_manifest(merged["manifest_path"], manifest_file=merged).to_pylist()
    by_name = {Path(e["data_file"]["file_path"]).name: e for e in entries}
    assert {n: e["sequence_number"] for n, e in by_name.items()} == {
        "eq1.parquet": 2,
        "pos1.parquet": 3,
        "eq5.parquet": 5,
    }
    assert all(e["file_sequence_number"] == e["sequence_number"] for e in entries)
    assert all(e["status"] == STATUS_EXISTING for e in entries)
    assert {e["data_file"]["content"] for e in entries} == {1, 2}
    # Were eq1's sequence number lost (inherited as 6), it would delete B's 1 too.
    assert _ids(table) == [1, 3, 7]
    assert snapshot.summary is not None and snapshot.summary["total-delete-files"] == "3"


def test_delete_manifests_below_min_count_stay(catalog: InMemoryCatalog) -> None:
    table = _table_with_three_delete_manifests(
        catalog, **{"commit.manifest.min-count-to-merge": "4"}
    )
    before = [m["manifest_path"] for m in _manifests(table) if m["content"] == 1]
    table.append(_rows([7]))
    after = [m["manifest_path"] for m in _manifests(table) if m["content"] == 1]
    assert after == before
    assert _ids(table) == [1, 3, 7]


def test_delete_manifests_not_merged_when_merging_is_disabled(catalog: InMemoryCatalog) -> None:
    table = _table_with_three_delete_manifests(
        catalog, **{"commit.manifest-merge.enabled": "false"}
    )
    table.append(_rows([7]))
    assert len([m for m in _manifests(table) if m["content"] == 1]) == 3
    assert _ids(table) == [1, 3, 7]


def test_delete_manifests_bin_packed_by_target_size(catalog: InMemoryCatalog) -> None:
    # A target below one manifest's length: every bin holds one manifest, nothing merges.
    table = _table_with_three_delete_manifests(
        catalog, **{"commit.manifest.target-size-bytes": "100"}
    )
    before = [m["manifest_path"] for m in _manifests(table) if m["content"] == 1]
    table.append(_rows([7]))
    after = [m["manifest_path"] for m in _manifests(table) if m["content"] == 1]
    assert after == before
