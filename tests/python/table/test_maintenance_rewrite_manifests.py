"""Rewriting manifests: a ``replace`` snapshot whose manifests hold the same live entries
(EXISTING, with their snapshot ids and sequence numbers), clustered by partition, and scans
that read exactly as before."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from frazil.errors import CommitValidationError
from frazil.manifest import STATUS_EXISTING, read_manifest_list, read_manifests
from frazil.table._table import Table
from maintenance_helpers import commit, make_table, rows_of, write_data_file

NOW = time.time_ns() // 1_000_000


def _entries(table: Table) -> list[dict[str, Any]]:
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list
    rows = read_manifest_list(snapshot.manifest_list, io=table.io).to_pylist()
    out = []
    for row, entries in zip(rows, read_manifests(rows, io=table.io), strict=True):
        for entry in entries.to_pylist():
            entry["manifest"] = row["manifest_path"]
            out.append(entry)
    return out


def _live(table: Table) -> dict[str, tuple[int, int, int]]:
    """file -> (snapshot id, data sequence number, file sequence number) of live entries."""
    return {
        e["data_file"]["file_path"]: (
            e["snapshot_id"],
            e["sequence_number"],
            e["file_sequence_number"],
        )
        for e in _entries(table)
        if e["status"] != 2
    }


def _table(tmp_path: Path, commits: int = 12, **properties: str) -> Table:
    table = make_table(tmp_path, **properties)
    for i in range(commits):
        files = [write_data_file(table, [i * 10 + k], f"p{(i + k) % 4}") for k in range(2)]
        commit(table, files, timestamp_ms=NOW - 1000 + i)
    # A delete so that some manifest holds a DELETED entry, which must not come back.
    first = _entries(table)[-1]["data_file"]["file_path"]
    commit(table, removed=[first], timestamp_ms=NOW, operation="delete")
    return table


def test_rewrite_keeps_rows_entries_and_sequence_numbers(tmp_path: Path) -> None:
    table = _table(tmp_path)
    before_rows = rows_of(table)
    before_live = _live(table)
    parent = table.current_snapshot()
    assert parent is not None
    before_manifests = len(read_manifest_list(parent.manifest_list or "", io=table.io))

    result = table.rewrite_manifests()

    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.snapshot_id == result.snapshot_id
    assert snapshot.operation == "replace"
    assert snapshot.parent_snapshot_id == parent.snapshot_id
    assert snapshot.sequence_number == parent.sequence_number + 1
    assert rows_of(table) == before_rows
    assert _live(table) == before_live
    entries = _entries(table)
    assert all(e["status"] == STATUS_EXISTING for e in entries)
    assert len(entries) == len(before_live) == result.entries_processed
    summary = snapshot.summary or {}
    assert summary["manifests-replaced"] == str(before_manifests)
    assert summary["manifests-created"] == str(len(result.added_manifests)) == "1"
    assert summary["manifests-kept"] == "0"
    assert summary["entries-processed"] == str(len(before_live))
    # The replaced manifests are still there for older snapshots (expiry removes them).
    assert all(Path(p).exists() for p in result.rewritten_manifests)
    reloaded = table.catalog.load_table(table.identifier)  # type: ignore[union-attr]
    assert rows_of(reloaded) == before_rows


def test_small_target_size_clusters_by_partition(tmp_path: Path) -> None:
    table = _table(tmp_path, **{"commit.manifest.target-size-bytes": "6000"})
    before_rows = rows_of(table)
    result = table.rewrite_manifests()
    assert len(result.added_manifests) > 1
    by_manifest: dict[str, list[str]] = {}
    for entry in _entries(table):
        by_manifest.setdefault(entry["manifest"], []).append(entry["data_file"]["partition"]["cat"])
    # Entries are sorted by partition across the new manifests: each covers a contiguous
    # range, and ranges follow one another.
    ordered = [by_manifest[m] for m in result.added_manifests]
    flat = [cat for cats in ordered for cat in cats]
    assert flat == sorted(flat)
    assert rows_of(table) == before_rows
    # Rewriting the rewritten table again keeps everything too.
    table.rewrite_manifests()
    assert rows_of(table) == before_rows


def test_delete_manifests_are_kept(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    data = write_data_file(table, [1, 2], "a")
    commit(table, [data], timestamp_ms=NOW - 10)
    deletes = write_data_file(table, [5], "a", content=1)  # a delete manifest's entry
    deletes["record_count"] = 1
    commit(table, [deletes], timestamp_ms=NOW - 5, operation="overwrite")
    result = table.rewrite_manifests()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    rows = read_manifest_list(snapshot.manifest_list or "", io=table.io).to_pylist()
    assert [r["content"] for r in rows] == [0, 1]
    assert (snapshot.summary or {})["manifests-kept"] == "1"
    assert len(result.rewritten_manifests) == 1


def test_a_table_without_snapshots_is_left_alone(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    location = table.metadata_location
    with pytest.raises(CommitValidationError, match="no snapshot"):
        table.rewrite_manifests()
    assert table.metadata_location == location
