"""File scan tasks as Appendix C JSON ("File Scan Task Serialization", "Content File (Data and
Delete) Serialization"): ``FileScanTask.to_json()`` and ``file_scan_task_from_json`` round-trip
every field (data file, delete files, partition values of every primitive type and of the
transforms' result types, column metrics, split offsets, key metadata, byte range, spec,
schema, residual), on hypothesis-generated tables written with frazil's manifest writers.

Appendix C carries no sequence numbers: a task read from JSON has none (documented in
src/scan/task_from_json.rs), and its file's ``manifest_path`` is a placeholder.
Java's parity is tests/interop/test_scan_task_json_parity.py.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from frazil.errors import FrazilError
from frazil.table.scan import file_scan_task_from_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scan_helpers import TableWriter, data_file, entry
from task_tables import (
    FILTERS,
    PARTITION_VALUES,
    SCHEMA,
    SPEC,
    T0,
    UNPARTITIONED,
    assert_round_trip,
    comparable,
    files,
    write_table,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(files(), min_size=1, max_size=5),
    st.sampled_from(FILTERS),
    st.integers(50, 20_000),
    st.booleans(),
)
def test_tasks_round_trip(
    specs: list[dict[str, Any]], row_filter: str | None, target: int, stats: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = write_table(Path(tmp) / "t", specs)
        options = {"include-column-stats": stats, "read.split.target-size": target}
        scan = table.scan(row_filter=row_filter, options=options)
        planned = list(scan.plan_files())
        pieces = [t for g in scan.plan_tasks() for t in g.tasks]
    if row_filter is None:
        assert len(planned) == len(specs)
    for task in planned + pieces:
        back = assert_round_trip(task, stats)
        n = int(Path(task.file.file_path).stem)
        # What was written, not only what frazil read back.
        assert comparable(back.file.partition) == comparable(task.file.partition)  # NaN
        assert comparable(back.file.partition) == comparable(specs[n]["partition"])
        assert back.file.record_count == specs[n]["records"]
        assert back.file.split_offsets == specs[n]["split_offsets"]
        assert back.file.key_metadata == specs[n]["key_metadata"]
        if stats:
            for name in ("column_sizes", "lower_bounds"):
                assert getattr(back.file, name) == specs[n]["metrics"].get(name)
        else:
            assert back.file.column_sizes is None and back.file.lower_bounds is None
        if specs[n]["deletes"] == ["dv"]:
            # The file's DV, and no position delete file (other files' equality deletes in
            # the same partition may apply).
            assert [d.referenced_data_file for d in back.delete_files if d.content == 1] == [
                task.file.file_path
            ]
            assert [d.file_format for d in back.delete_files if d.content == 1] == ["PUFFIN"]


def test_a_written_task_has_appendix_c_keys(tmp_path: Path) -> None:
    spec = {
        "partition": {
            **dict.fromkeys(PARTITION_VALUES),
            "p_s": "x",
            "p_u": uuid.UUID(int=1),
            "p_dec": Decimal("1.50"),
        },
        "records": 5,
        "size": 1000,
        "metrics": {"column_sizes": {1: 3}, "lower_bounds": {15: b"\x01"}},
        "split_offsets": [4, 500],
        "key_metadata": b"\xab",
        "sort_order_id": 0,
        "format": "PARQUET",
        "deletes": ["pos", "eq-global"],
        "eq_ids": [16],
    }
    table = write_table(tmp_path / "t", [spec])
    [task] = table.scan(row_filter="n < 3", options={"include-column-stats": "true"}).plan_files()
    written = json.loads(task.to_json())
    assert written["task-type"] == "file-scan-task"
    assert set(written) == {
        "task-type",
        "schema",
        "spec",
        "data-file",
        "start",
        "length",
        "delete-files",
        "residual-filter",
    }
    assert written["spec"] == SPEC
    assert (written["start"], written["length"]) == (0, 1000)
    assert written["residual-filter"] == {"type": "lt", "term": "n", "value": 3}
    # Hexadecimal in either case (Java writes upper case and reads both).
    written["data-file"]["key-metadata"] = written["data-file"]["key-metadata"].lower()
    assert written["data-file"] == {
        "spec-id": 0,
        "content": "DATA",
        "file-path": str(tmp_path / "t" / "data" / "0.parquet"),
        "file-format": "PARQUET",
        "partition": {
            "1004": "1.50",
            "1010": "x",
            "1011": "00000000-0000-0000-0000-000000000001",
        },
        "file-size-in-bytes": 1000,
        "record-count": 5,
        "column-sizes": {"keys": [1], "values": [3]},
        "lower-bounds": {"keys": [15], "values": ["01"]},
        "key-metadata": "ab",
        "split-offsets": [4, 500],
        "sort-order-id": 0,
        "first-row-id": 0,
    }
    contents = sorted((d["content"], d["spec-id"]) for d in written["delete-files"])
    assert contents == [("EQUALITY_DELETES", 1), ("POSITION_DELETES", 0)]
    eq = next(d for d in written["delete-files"] if d["content"] == "EQUALITY_DELETES")
    assert eq["equality-ids"] == [16] and eq["partition"] == {}
    assert_round_trip(task)


def test_a_hand_written_task(tmp_path: Path) -> None:
    """JSON shaped as Java writes it, without ``task-type`` (Java reads that as a file scan
    task), metrics maps, a position delete file and a residual on an unpartitioned spec."""
    text = json.dumps(
        {
            "schema": {
                "type": "struct",
                "schema-id": 0,
                "fields": [
                    {"id": 1, "name": "id", "required": True, "type": "int"},
                    {"id": 2, "name": "data", "required": False, "type": "string"},
                ],
            },
            "spec": {"spec-id": 0, "fields": []},
            "data-file": {
                "spec-id": 0,
                "content": "DATA",
                "file-path": "s3://bucket/data/a.parquet",
                "file-format": "PARQUET",
                "partition": {},
                "file-size-in-bytes": 2048,
                "record-count": 20,
                "column-sizes": {"keys": [1, 2], "values": [100, 200]},
                "value-counts": {"keys": [1, 2], "values": [20, 20]},
                "null-value-counts": {"keys": [1, 2], "values": [0, 3]},
                "nan-value-counts": {"keys": [], "values": []},
                "lower-bounds": {"keys": [1], "values": ["01000000"]},
                "upper-bounds": {"keys": [1], "values": ["0A000000"]},
                "split-offsets": [4, 1024],
                "sort-order-id": 1,
            },
            "start": 1024,
            "length": 1024,
            "delete-files": [
                {
                    "spec-id": 0,
                    "content": "POSITION_DELETES",
                    "file-path": "s3://bucket/data/a-deletes.parquet",
                    "file-format": "PARQUET",
                    "partition": {},
                    "file-size-in-bytes": 300,
                    "record-count": 2,
                }
            ],
            "residual-filter": {"type": "gt", "term": "id", "value": 5},
        }
    )
    task = file_scan_task_from_json(text)
    assert (task.start, task.length, task.spec_id) == (1024, 1024, 0)
    f = task.file
    assert f.file_path == "s3://bucket/data/a.parquet"
    assert (f.content, f.file_format, f.record_count, f.file_size_in_bytes) == (
        0,
        "PARQUET",
        20,
        2048,
    )
    assert f.partition == {}
    assert f.column_sizes == {1: 100, 2: 200}
    assert f.null_value_counts == {1: 0, 2: 3}
    assert f.nan_value_counts == {}
    assert f.lower_bounds == {1: b"\x01\x00\x00\x00"}
    assert f.upper_bounds == {1: b"\x0a\x00\x00\x00"}
    assert f.split_offsets == [4, 1024] and f.sort_order_id == 1
    assert f.key_metadata is None and f.first_row_id is None
    [d] = task.delete_files
    assert (d.content, d.file_path, d.record_count, d.file_size_in_bytes) == (
        1,
        "s3://bucket/data/a-deletes.parquet",
        2,
        300,
    )
    assert json.loads(task.residual_json) == {"type": "gt", "term": "id", "value": 5}
    assert_round_trip(task)


def test_file_format_is_written_upper_case(tmp_path: Path) -> None:
    """Java's FileFormat names; Java reads them case-insensitively."""
    w = TableWriter(tmp_path / "t", schema=SCHEMA, specs=(UNPARTITIONED,), default_spec_id=1)
    w.commit(1, T0, [([entry(data_file(w.path("a.parquet"), file_format="parquet"))], 1, "data")])
    [task] = w.table().scan().plan_files()
    assert task.file.file_format == "parquet"
    assert json.loads(task.to_json())["data-file"]["file-format"] == "PARQUET"
    assert file_scan_task_from_json(task.to_json()).file.file_format == "PARQUET"


def _minimal() -> dict[str, Any]:
    return {
        "task-type": "file-scan-task",
        "schema": {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "id", "required": True, "type": "int"}],
        },
        "spec": {
            "spec-id": 3,
            "fields": [{"name": "id", "transform": "identity", "source-id": 1, "field-id": 1000}],
        },
        "data-file": {
            "spec-id": 3,
            "content": "DATA",
            "file-path": "a.parquet",
            "file-format": "PARQUET",
            "partition": {"1000": 7},
            "file-size-in-bytes": 10,
            "record-count": 1,
        },
        "start": 0,
        "length": 10,
        "residual-filter": True,
    }


def test_the_minimal_task_parses() -> None:
    task = file_scan_task_from_json(json.dumps(_minimal()))
    assert task.file.partition == {"id": 7}
    assert task.spec_id == 3 and task.delete_files == []
    assert json.loads(task.residual_json) is True


def _without(key: str) -> Any:
    def change(task: dict[str, Any]) -> None:
        del task[key]

    return change


def _set(path: tuple[str, ...], value: Any) -> Any:
    def change(task: dict[str, Any]) -> None:
        node = task
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "mentions"),
    [
        (_without("schema"), "schema"),
        (_without("spec"), "spec"),
        (_without("data-file"), "data-file"),
        (_set(("task-type",), "data-task"), "task-type"),
        (_set(("data-file", "spec-id"), 4), "spec"),
        (_set(("data-file", "content"), "SOMETHING"), "SOMETHING"),
        (_set(("data-file", "record-count"), "many"), "record-count"),
        (_set(("data-file", "partition"), {"1000": "seven"}), "id"),
        (_set(("data-file", "column-sizes"), {"keys": [1], "values": []}), "column-sizes"),
        (_set(("data-file", "lower-bounds"), {"keys": [1], "values": ["zz"]}), "zz"),
        (_set(("start",), "0"), "start"),
        (_set(("delete-files",), {}), "delete-files"),
        (_set(("residual-filter",), {"type": "lt", "term": "nope", "value": 1}), "nope"),
    ],
)
def test_bad_task_json(change: Any, mentions: str) -> None:
    task = _minimal()
    change(task)
    with pytest.raises(FrazilError) as raised:
        file_scan_task_from_json(json.dumps(task))
    assert mentions in str(raised.value)


@pytest.mark.parametrize("text", ["", "{", "[]", "null", '"task"'])
def test_not_a_task(text: str) -> None:
    with pytest.raises(FrazilError):
        file_scan_task_from_json(text)
