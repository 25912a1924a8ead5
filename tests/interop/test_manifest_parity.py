"""Manifests and manifest lists against Apache Iceberg Java 1.10.2.

Java (through Spark SQL) writes a v2 table with appends, a merge-on-read
delete and an overwrite; frazil must decode its manifest lists and manifests
to exactly the entries Java reports (the ``entries`` and ``manifests``
metadata tables, with sequence numbers inherited). Then frazil rewrites every
manifest and the manifest list in place, and Java must read them back to the
same entries and the same query results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from frazil import manifest as m
from java_referee import Warehouse

NAMESPACE = "manifest_parity"


def _plain(value: Any) -> Any:
    """Spark rows as plain Python values (maps as sorted pairs, bytes as bytes)."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return sorted((k, _plain(v)) for k, v in value.items())
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _frazil_entry(row: dict[str, Any]) -> dict[str, Any]:
    df = dict(row["data_file"])
    for key in list(df):
        value = df[key]
        if key.endswith(("_sizes", "_counts", "_bounds")) and value is not None:
            df[key] = sorted(value)
    return {**row, "data_file": df}


COMPARED = [
    "content",
    "file_path",
    "file_format",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
]


def _java_entries(tables: Warehouse, name: str) -> dict[str, dict[str, Any]]:
    rows = tables.sql(
        "SELECT status, snapshot_id, sequence_number, file_sequence_number, data_file "
        f"FROM {name}.entries"
    )
    out = {}
    for row in rows:
        entry = _plain(row)
        entry["data_file"] = {k: entry["data_file"].get(k) for k in COMPARED}
        out[entry["data_file"]["file_path"]] = entry
    return out


def _frazil_entries(listing: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for table in m.read_manifests(listing):
        for row in table.to_pylist():
            entry = _frazil_entry(row)
            entry["data_file"] = {k: entry["data_file"].get(k) for k in COMPARED}
            out[entry["data_file"]["file_path"]] = entry
    return out


@pytest.fixture(scope="module")
def java_table(tables: Warehouse) -> str:
    name = tables.name(NAMESPACE, "t")
    tables.sql(f"DROP TABLE IF EXISTS {name}")
    tables.sql(
        f"CREATE TABLE {name} (id bigint, ts timestamp, category string, x double) USING iceberg "
        "PARTITIONED BY (days(ts), bucket(4, id), category) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    tables.sql(
        f"INSERT INTO {name} VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'a', 1.5), "
        "(2, TIMESTAMP '2024-01-02 11:00:00', 'b', double('NaN')), "
        "(3, TIMESTAMP '2024-01-02 12:00:00', NULL, -0.0)"
    )
    # Two rows in one partition, hence one data file: deleting one of them
    # writes a position delete file (merge-on-read).
    tables.sql(
        f"INSERT INTO {name} VALUES (4, TIMESTAMP '2023-12-31 23:00:00', 'a', 2.0), "
        "(4, TIMESTAMP '2023-12-31 22:00:00', 'a', 7.0)"
    )
    tables.sql(f"DELETE FROM {name} WHERE x = 7.0")
    tables.sql(f"INSERT INTO {name} VALUES (5, NULL, 'c', NULL)")
    return name


def _current_listing(tables: Warehouse) -> tuple[str, list[dict[str, Any]]]:
    metadata = tables.current_metadata(NAMESPACE, "t")
    snapshot = next(
        s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]
    )
    location = snapshot["manifest-list"]
    return location, m.read_manifest_list(location).to_pylist()


def test_java_manifest_lists_decode_like_java(tables: Warehouse, java_table: str) -> None:
    _, listing = _current_listing(tables)
    rows = tables.sql(
        "SELECT path, length, partition_spec_id, content, added_snapshot_id, "
        "added_data_files_count, existing_data_files_count, deleted_data_files_count, "
        "added_delete_files_count, existing_delete_files_count, deleted_delete_files_count "
        f"FROM {java_table}.manifests"
    )
    java = {r["path"]: r for r in rows}
    assert sorted(java) == sorted(row["manifest_path"] for row in listing)
    for row in listing:
        j = java[row["manifest_path"]]
        assert row["manifest_length"] == j["length"]
        assert row["partition_spec_id"] == j["partition_spec_id"]
        assert row["content"] == j["content"]
        assert row["added_snapshot_id"] == j["added_snapshot_id"]
        deletes = row["content"] == 1
        prefix = "delete" if deletes else "data"
        assert row["added_files_count"] == j[f"added_{prefix}_files_count"]
        assert row["existing_files_count"] == j[f"existing_{prefix}_files_count"]
        assert row["deleted_files_count"] == j[f"deleted_{prefix}_files_count"]
        assert row["sequence_number"] >= 1


def test_java_manifests_decode_to_javas_entries(tables: Warehouse, java_table: str) -> None:
    _, listing = _current_listing(tables)
    java = _java_entries(tables, java_table)
    ours = _frazil_entries(listing)
    assert sorted(ours) == sorted(java)
    assert any(e["data_file"]["content"] == 1 for e in ours.values()), "a position delete file"
    for path, entry in java.items():
        assert ours[path] == entry, path


def _drop_hadoop_checksum(location: str) -> None:
    """Hadoop's local file system keeps a ``.<name>.crc`` beside each file it
    wrote; a file rewritten by frazil has none (Hadoop then skips the check)."""
    path = Path(location.removeprefix("file:"))
    (path.parent / f".{path.name}.crc").unlink(missing_ok=True)


def test_java_reads_manifests_frazil_wrote(tables: Warehouse, java_table: str) -> None:
    before_entries = _java_entries(tables, java_table)
    before_rows = sorted(repr(_plain(r)) for r in tables.sql(f"SELECT * FROM {java_table}"))
    list_location, listing = _current_listing(tables)
    list_meta = m.read_manifest_list(list_location).schema.metadata
    schema = tables.current_metadata(NAMESPACE, "t")
    rewritten = []
    for row in listing:
        # Raw entries (no inheritance), rewritten in place by frazil.
        table = m.read_manifest(row["manifest_path"])
        meta = table.schema.metadata
        new_row = m.write_manifest(
            row["manifest_path"],
            table,
            schema=meta[b"schema"].decode(),
            spec=meta[b"partition-spec"].decode(),
            spec_id=int(meta[b"partition-spec-id"]),
            format_version=2,
            content=meta[b"content"].decode(),
        )
        _drop_hadoop_checksum(row["manifest_path"])
        for key in ("sequence_number", "min_sequence_number", "added_snapshot_id"):
            new_row[key] = row[key]
        assert new_row["added_files_count"] == row["added_files_count"]
        assert new_row["partitions"] == row["partitions"]
        rewritten.append(new_row)
    parent = list_meta.get(b"parent-snapshot-id", b"null").decode()
    m.write_manifest_list(
        list_location,
        rewritten,
        snapshot_id=int(list_meta[b"snapshot-id"]),
        parent_snapshot_id=None if parent == "null" else int(parent),
        sequence_number=int(list_meta[b"sequence-number"]),
    )
    _drop_hadoop_checksum(list_location)
    assert schema["current-snapshot-id"] == int(list_meta[b"snapshot-id"])
    tables.sql(f"REFRESH TABLE {java_table}")
    assert _java_entries(tables, java_table) == before_entries
    assert sorted(repr(_plain(r)) for r in tables.sql(f"SELECT * FROM {java_table}")) == before_rows
    # The Java API too: every live data file of the current snapshot, planned.
    java_table_obj = tables.java_table(NAMESPACE, "t")
    planned = java_table_obj.newScan().planFiles()
    paths = []
    iterator = planned.iterator()
    while iterator.hasNext():
        paths.append(str(iterator.next().file().location()))
    live = {
        p for p, e in before_entries.items() if e["status"] != 2 and e["data_file"]["content"] == 0
    }
    assert sorted(paths) == sorted(live)


def test_java_v3_manifests_decode_to_javas_entries(tables: Warehouse) -> None:
    """Format v3 as Java 1.10 writes it (row lineage: first_row_id), with
    deletion vectors (referenced_data_file, content_offset/size)."""
    name = tables.name(NAMESPACE, "t3")
    tables.sql(f"DROP TABLE IF EXISTS {name}")
    tables.sql(
        f"CREATE TABLE {name} (id bigint, category string) USING iceberg "
        "PARTITIONED BY (category) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    tables.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    tables.sql(f"INSERT INTO {name} VALUES (4, 'a')")
    tables.sql(f"DELETE FROM {name} WHERE id = 2")
    metadata = tables.current_metadata(NAMESPACE, "t3")
    assert metadata["format-version"] == 3
    snapshot = next(
        s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]
    )
    listing = m.read_manifest_list(snapshot["manifest-list"]).to_pylist()
    assert all(row["first_row_id"] is not None for row in listing if row["content"] == 0)
    rows = tables.sql(f"SELECT status, snapshot_id, sequence_number, data_file FROM {name}.entries")
    extra = ["first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes"]
    java = {}
    for row in rows:
        entry = _plain(row)
        df = entry["data_file"]
        keys = COMPARED + [k for k in extra if k in df]
        entry["data_file"] = {k: df.get(k) for k in keys}
        java[df["file_path"]] = entry
    ours = {}
    for table in m.read_manifests(listing):
        for row in table.to_pylist():
            entry = _frazil_entry(row)
            path = entry["data_file"]["file_path"]
            keys = list(java[path]["data_file"]) if path in java else COMPARED
            entry["data_file"] = {k: entry["data_file"].get(k) for k in keys}
            entry.pop("file_sequence_number")
            ours[path] = entry
    assert sorted(ours) == sorted(java)
    assert any(e["data_file"].get("referenced_data_file") for e in ours.values()), (
        "a deletion vector"
    )
    for path, entry in java.items():
        assert ours[path] == entry, path
