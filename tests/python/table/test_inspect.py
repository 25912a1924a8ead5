"""Metadata tables (``table.inspect``): Java 1.10's columns, types and values, on tables
written with frazil's manifest writers (scan_helpers.TableWriter)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import StaticTable
from frazil.errors import NotFoundError
from scan_helpers import TableWriter, data_file, entry

UTC = dt.timezone.utc
T1, T2, T3 = 1_700_000_000_000, 1_700_000_100_000, 1_700_000_200_000


def at(millis: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(millis / 1000, tz=UTC)


def day(text: str) -> int:
    return (dt.date.fromisoformat(text) - dt.date(1970, 1, 1)).days


def rewrite(location: Path, **changes: Any) -> StaticTable:
    """The metadata JSON at ``location`` with top-level keys replaced, reopened."""
    metadata = json.loads(location.read_text())
    metadata.update(changes)
    location.write_text(json.dumps(metadata))
    return StaticTable.from_metadata(str(location))


@pytest.fixture
def writer(tmp_path: Path) -> TableWriter:
    """Snapshots 1 (two data files), 2 (child of 1: a position delete file) and 3 (child of 1,
    not current: a data file in the unpartitioned spec)."""
    w = TableWriter(tmp_path / "t")
    a = data_file(
        w.path("a.parquet"),
        {"cat": "x", "ts_day": day("2024-01-02")},
        records=10,
        column_sizes=[(1, 80)],
        lower_bounds=[(1, (1).to_bytes(8, "little"))],
        split_offsets=[4],
    )
    b = data_file(w.path("b.parquet"), {"cat": None, "ts_day": day("2024-01-03")}, records=5)
    w.commit(1, T1, [([entry(a), entry(b)], 0, "data")])
    d = data_file(
        w.path("d.parquet"),
        {"cat": "x", "ts_day": day("2024-01-02")},
        records=2,
        size=300,
        content=1,
    )
    w.commit(2, T2, [([entry(d)], 0, "deletes")], parent=1)
    c = data_file(w.path("c.parquet"), records=7, size=700)
    w.commit(3, T3, [([entry(c)], 1, "data")], parent=1)
    return w


def location(w: TableWriter, **kwargs: Any) -> Path:
    return w.write(**kwargs)


def test_snapshots(writer: TableWriter) -> None:
    table = writer.table(current=2)
    result = table.inspect.snapshots()
    assert result.schema == pa.schema(
        [
            pa.field("committed_at", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("parent_id", pa.int64()),
            pa.field("operation", pa.string()),
            pa.field("manifest_list", pa.string()),
            pa.field("summary", pa.map_(pa.string(), pa.field("value", pa.string(), False))),
        ]
    )
    meta = writer.meta
    assert result.to_pylist() == [
        {
            "committed_at": at(T1),
            "snapshot_id": 1,
            "parent_id": None,
            "operation": "append",
            "manifest_list": str(meta / "snap-1.avro"),
            "summary": [],
        },
        {
            "committed_at": at(T2),
            "snapshot_id": 2,
            "parent_id": 1,
            "operation": "append",
            "manifest_list": str(meta / "snap-2.avro"),
            "summary": [],
        },
        {
            "committed_at": at(T3),
            "snapshot_id": 3,
            "parent_id": 1,
            "operation": "append",
            "manifest_list": str(meta / "snap-3.avro"),
            "summary": [],
        },
    ]


def test_history_marks_the_current_ancestors(writer: TableWriter) -> None:
    # The log says 3 was current once, then 2 again: 3 is not an ancestor of the current 2.
    table = writer.table(current=2, log=[(1, T1), (3, T3), (2, T3 + 5)])
    result = table.inspect.history()
    assert result.schema.names == [
        "made_current_at",
        "snapshot_id",
        "parent_id",
        "is_current_ancestor",
    ]
    assert result.schema.field("made_current_at").type == pa.timestamp("us", tz="UTC")
    assert not result.schema.field("is_current_ancestor").nullable
    assert result.to_pylist() == [
        {
            "made_current_at": at(T1),
            "snapshot_id": 1,
            "parent_id": None,
            "is_current_ancestor": True,
        },
        {"made_current_at": at(T3), "snapshot_id": 3, "parent_id": 1, "is_current_ancestor": False},
        {
            "made_current_at": at(T3 + 5),
            "snapshot_id": 2,
            "parent_id": 1,
            "is_current_ancestor": True,
        },
    ]


def test_history_of_an_expired_snapshot_has_no_parent(writer: TableWriter) -> None:
    path = writer.write(current=2)
    table = rewrite(path, **{"snapshot-log": [{"snapshot-id": 99, "timestamp-ms": 5}]})
    assert table.inspect.history().to_pylist() == [
        {
            "made_current_at": at(5),
            "snapshot_id": 99,
            "parent_id": None,
            "is_current_ancestor": False,
        }
    ]


def test_refs(writer: TableWriter) -> None:
    path = writer.write(current=2)
    refs = {
        "main": {"snapshot-id": 2, "type": "branch"},
        "tag1": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 86_400_000},
        "dev": {
            "snapshot-id": 3,
            "type": "branch",
            "min-snapshots-to-keep": 4,
            "max-snapshot-age-ms": 1000,
            "max-ref-age-ms": 2000,
        },
    }
    result = rewrite(path, refs=refs).inspect.refs()
    assert result.schema == pa.schema(
        [
            pa.field("name", pa.string(), nullable=False),
            pa.field("type", pa.string(), nullable=False),
            pa.field("snapshot_id", pa.int64(), nullable=False),
            pa.field("max_reference_age_in_ms", pa.int64()),
            pa.field("min_snapshots_to_keep", pa.int32()),
            pa.field("max_snapshot_age_in_ms", pa.int64()),
        ]
    )
    assert sorted(result.to_pylist(), key=lambda r: r["name"]) == [
        {
            "name": "dev",
            "type": "BRANCH",
            "snapshot_id": 3,
            "max_reference_age_in_ms": 2000,
            "min_snapshots_to_keep": 4,
            "max_snapshot_age_in_ms": 1000,
        },
        {
            "name": "main",
            "type": "BRANCH",
            "snapshot_id": 2,
            "max_reference_age_in_ms": None,
            "min_snapshots_to_keep": None,
            "max_snapshot_age_in_ms": None,
        },
        {
            "name": "tag1",
            "type": "TAG",
            "snapshot_id": 1,
            "max_reference_age_in_ms": 86_400_000,
            "min_snapshots_to_keep": None,
            "max_snapshot_age_in_ms": None,
        },
    ]


def test_metadata_log_entries(writer: TableWriter) -> None:
    path = writer.write(current=2, log=[(1, T1), (2, T2)])
    old = [
        {"timestamp-ms": T1 - 10, "metadata-file": "/old/v0.metadata.json"},
        {"timestamp-ms": T1, "metadata-file": "/old/v1.metadata.json"},
        {"timestamp-ms": T2 + 1, "metadata-file": "/old/v2.metadata.json"},
    ]
    table = rewrite(path, **{"metadata-log": old, "last-updated-ms": T3 + 7})
    result = table.inspect.metadata_log_entries()
    assert result.schema == pa.schema(
        [
            pa.field("timestamp", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("file", pa.string(), nullable=False),
            pa.field("latest_snapshot_id", pa.int64()),
            pa.field("latest_schema_id", pa.int32()),
            pa.field("latest_sequence_number", pa.int64()),
        ]
    )
    assert result.to_pylist() == [
        # Written before the first snapshot: no snapshot was current.
        {
            "timestamp": at(T1 - 10),
            "file": "/old/v0.metadata.json",
            "latest_snapshot_id": None,
            "latest_schema_id": None,
            "latest_sequence_number": None,
        },
        # The log entry at the same millisecond counts (Java: at or before).
        {
            "timestamp": at(T1),
            "file": "/old/v1.metadata.json",
            "latest_snapshot_id": 1,
            "latest_schema_id": 0,
            "latest_sequence_number": 1,
        },
        {
            "timestamp": at(T2 + 1),
            "file": "/old/v2.metadata.json",
            "latest_snapshot_id": 2,
            "latest_schema_id": 0,
            "latest_sequence_number": 2,
        },
        # The current file last, at the metadata's last-updated-ms.
        {
            "timestamp": at(T3 + 7),
            "file": str(path),
            "latest_snapshot_id": 2,
            "latest_schema_id": 0,
            "latest_sequence_number": 2,
        },
    ]


def test_unknown_snapshot_id_is_refused(writer: TableWriter) -> None:
    table = writer.table()
    with pytest.raises(NotFoundError, match="12345"):
        table.inspect.manifests(snapshot_id=12345)


def manifest_row(path: Path, spec_id: int, snapshot_id: int, **counts: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "content": counts.pop("content", 0),
        "path": str(path),
        "length": path.stat().st_size,
        "partition_spec_id": spec_id,
        "added_snapshot_id": snapshot_id,
    }
    for name in (
        "added_data_files_count",
        "existing_data_files_count",
        "deleted_data_files_count",
        "added_delete_files_count",
        "existing_delete_files_count",
        "deleted_delete_files_count",
    ):
        row[name] = counts.pop(name, 0)
    assert not counts
    return row


def summary(null: bool, lower: str | None, upper: str | None) -> dict[str, Any]:
    return {
        "contains_null": null,
        "contains_nan": False,
        "lower_bound": lower,
        "upper_bound": upper,
    }


def test_manifests(writer: TableWriter) -> None:
    table = writer.table(current=2)
    result = table.inspect.manifests()
    assert result.schema.names == [
        "content",
        "path",
        "length",
        "partition_spec_id",
        "added_snapshot_id",
        "added_data_files_count",
        "existing_data_files_count",
        "deleted_data_files_count",
        "added_delete_files_count",
        "existing_delete_files_count",
        "deleted_delete_files_count",
        "partition_summaries",
    ]
    assert result.schema.field("partition_summaries").type == pa.list_(
        pa.field(
            "element",
            pa.struct(
                [
                    pa.field("contains_null", pa.bool_(), False),
                    pa.field("contains_nan", pa.bool_()),
                    pa.field("lower_bound", pa.string()),
                    pa.field("upper_bound", pa.string()),
                ]
            ),
            False,
        )
    )
    meta = writer.meta
    by_cat_and_day = [summary(True, "x", "x"), summary(False, "2024-01-02", "2024-01-03")]
    assert result.to_pylist() == [
        {
            **manifest_row(meta / "m1.avro", 0, 1, added_data_files_count=2),
            "partition_summaries": by_cat_and_day,
        },
        {
            **manifest_row(meta / "m2.avro", 0, 2, content=1, added_delete_files_count=1),
            "partition_summaries": [
                summary(False, "x", "x"),
                summary(False, "2024-01-02", "2024-01-02"),
            ],
        },
    ]
    # Another snapshot's manifests, and every snapshot's in all_manifests.
    third = table.inspect.manifests(snapshot_id=3).to_pylist()
    assert [r["path"] for r in third] == [str(meta / "m1.avro"), str(meta / "m3.avro")]
    assert third[1]["partition_summaries"] == []
    every = table.inspect.all_manifests()
    assert every.schema.names[-1] == "reference_snapshot_id"
    assert not every.schema.field("partition_summaries").type.value_type.field(1).nullable
    assert [(r["reference_snapshot_id"], Path(r["path"]).name) for r in every.to_pylist()] == [
        (1, "m1.avro"),
        (2, "m1.avro"),
        (2, "m2.avro"),
        (3, "m1.avro"),
        (3, "m3.avro"),
    ]


def test_a_table_without_snapshots_has_empty_tables(tmp_path: Path) -> None:
    table = TableWriter(tmp_path / "t").table()
    for name in ("snapshots", "history", "manifests", "all_manifests", "files", "entries"):
        assert getattr(table.inspect, name)().num_rows == 0, name
    assert table.inspect.partitions().num_rows == 0
    assert table.inspect.files().schema.names[:5] == [
        "content",
        "file_path",
        "file_format",
        "spec_id",
        "partition",
    ]


def file_row(path: str, spec_id: int, partition: dict[str, Any], **values: Any) -> dict[str, Any]:
    """A files-table row: the given values, the rest null."""
    row: dict[str, Any] = dict.fromkeys(
        [
            "content",
            "file_path",
            "file_format",
            "spec_id",
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
            "first_row_id",
            "referenced_data_file",
            "content_offset",
            "content_size_in_bytes",
        ]
    )
    row.update(content=0, file_path=path, file_format="PARQUET", spec_id=spec_id)
    row.update(partition=partition, file_size_in_bytes=1000)
    row.update(values)
    return row


def without_metrics(result: pa.Table) -> list[dict[str, Any]]:
    """The rows without ``readable_metrics`` (tested in test_inspect_metrics.py)."""
    assert result.column_names[-1] == "readable_metrics"
    rows: list[dict[str, Any]] = result.drop_columns(["readable_metrics"]).to_pylist()
    return rows


def test_files_tables(writer: TableWriter) -> None:
    a_path, b_path, c_path, d_path = (writer.path(f"{n}.parquet") for n in "abcd")
    # Snapshot 4 marks a deleted: the files tables drop it, entries keeps the DELETED entry.
    gone = data_file(a_path, {"cat": "x", "ts_day": day("2024-01-02")}, records=10)
    writer.commit(
        4,
        T3 + 10,
        [
            (
                [entry(gone, status=2, snapshot_id=1, sequence_number=1, file_sequence_number=1)],
                0,
                "data",
            )
        ],
        parent=2,
    )
    table = writer.table(current=2)
    x_day2 = {"cat": "x", "ts_day": dt.date(2024, 1, 2)}
    a = file_row(
        a_path,
        0,
        x_day2,
        record_count=10,
        column_sizes=[(1, 80)],
        lower_bounds=[(1, b"\x01\x00\x00\x00\x00\x00\x00\x00")],
        split_offsets=[4],
    )
    b = file_row(b_path, 0, {"cat": None, "ts_day": dt.date(2024, 1, 3)}, record_count=5)
    d = file_row(d_path, 0, x_day2, content=1, record_count=2, file_size_in_bytes=300)
    c = file_row(c_path, 1, {"cat": None, "ts_day": None}, record_count=7, file_size_in_bytes=700)
    files = table.inspect.files()
    assert files.schema.field("partition").type == pa.struct(
        [pa.field("cat", pa.string()), pa.field("ts_day", pa.date32())]
    )
    assert files.schema.field("column_sizes").type == pa.map_(
        pa.field("key", pa.int32(), False), pa.field("value", pa.int64(), False)
    )
    assert without_metrics(files) == [a, b, d]
    assert without_metrics(table.inspect.data_files()) == [a, b]
    assert without_metrics(table.inspect.delete_files()) == [d]
    assert without_metrics(table.inspect.files(snapshot_id=3)) == [a, b, c]
    assert without_metrics(table.inspect.data_files(snapshot_id=4)) == [a, b]
    all_files = without_metrics(table.inspect.all_files())
    assert sorted(all_files, key=lambda r: (r["file_path"], r["content"])) == [a, b, c, d]

    entries = table.inspect.entries(snapshot_id=4)
    assert entries.schema.names == [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
        "data_file",
        "readable_metrics",
    ]
    assert [
        (r["status"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"])
        for r in entries.to_pylist()
    ] == [(1, 1, 1, 1), (1, 1, 1, 1), (1, 2, 2, 2), (2, 1, 1, 1)]
    assert [r["data_file"] for r in entries.to_pylist()] == [
        a,
        b,
        d,
        {**a, "column_sizes": None, "lower_bounds": None, "split_offsets": None},
    ]


def test_files_of_an_unpartitioned_table_have_no_partition_column(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", specs=({"spec-id": 0, "fields": []},))
    w.commit(1, T1, [([entry(data_file(w.path("a.parquet"), records=3))], 0, "data")])
    table = w.table()
    assert "partition" not in table.inspect.files().schema.names
    assert "partition" not in table.inspect.entries().schema.field("data_file").type.names
    partitions = table.inspect.partitions()
    assert partitions.schema.names[:2] == ["record_count", "file_count"]
    assert partitions.to_pylist() == [
        {
            "record_count": 3,
            "file_count": 1,
            "total_data_file_size_in_bytes": 1000,
            "position_delete_record_count": 0,
            "position_delete_file_count": 0,
            "equality_delete_record_count": 0,
            "equality_delete_file_count": 0,
            "last_updated_at": at(T1),
            "last_updated_snapshot_id": 1,
        }
    ]


def test_partitions(writer: TableWriter) -> None:
    table = writer.table(current=2)
    result = table.inspect.partitions()
    assert result.schema.names == [
        "partition",
        "spec_id",
        "record_count",
        "file_count",
        "total_data_file_size_in_bytes",
        "position_delete_record_count",
        "position_delete_file_count",
        "equality_delete_record_count",
        "equality_delete_file_count",
        "last_updated_at",
        "last_updated_snapshot_id",
    ]

    def row(
        partition: dict[str, Any],
        spec_id: int,
        data: tuple[int, int, int],
        deletes: tuple[int, int],
        snapshot: int,
        millis: int,
    ) -> dict[str, Any]:
        return {
            "partition": partition,
            "spec_id": spec_id,
            "record_count": data[0],
            "file_count": data[1],
            "total_data_file_size_in_bytes": data[2],
            "position_delete_record_count": deletes[0],
            "position_delete_file_count": deletes[1],
            "equality_delete_record_count": 0,
            "equality_delete_file_count": 0,
            "last_updated_at": at(millis),
            "last_updated_snapshot_id": snapshot,
        }

    x = {"cat": "x", "ts_day": dt.date(2024, 1, 2)}
    other = {"cat": None, "ts_day": dt.date(2024, 1, 3)}
    assert result.to_pylist() == [
        row(x, 0, (10, 1, 1000), (2, 1), 2, T2),
        row(other, 0, (5, 1, 1000), (0, 0), 1, T1),
    ]
    assert table.inspect.partitions(snapshot_id=3).to_pylist() == [
        row(x, 0, (10, 1, 1000), (0, 0), 1, T1),
        row(other, 0, (5, 1, 1000), (0, 0), 1, T1),
        row({"cat": None, "ts_day": None}, 1, (7, 1, 700), (0, 0), 3, T3),
    ]
