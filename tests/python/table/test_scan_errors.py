"""Bad input to scan planning (issue 10, "Bad input"): a filter on an unknown column, a
literal that cannot convert, a snapshot id or ref that does not exist, an ``as_of`` before
the first snapshot, a manifest list that names a missing manifest. Each is a FrazilError
(never a panic, a bare builtin or an empty plan) whose message names what was wrong.

The table is written with frazil's own manifest writers: two snapshots, a tag, no data
files needed (planning reads manifests only).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from frazil import manifest as m
from frazil.errors import FrazilError, NotFoundError, UnknownFieldError, ValidationError

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "s", "required": False, "type": "string"},
    ],
}
SPEC: dict[str, Any] = {"spec-id": 0, "fields": []}
FIRST, SECOND = 1_700_000_000_000, 1_700_000_100_000  # the snapshots' timestamps (ms)
SNAPSHOTS = ((101, FIRST), (202, SECOND))


def _entry(root: Path, n: int) -> dict[str, Any]:
    return {
        "status": 1,
        "data_file": {
            "content": 0,
            "file_path": str(root / "data" / f"{n}.parquet"),
            "file_format": "PARQUET",
            "partition": {},
            "record_count": 10,
            "file_size_in_bytes": 1000,
            "lower_bounds": {1: (n * 10).to_bytes(8, "little", signed=True)},
            "upper_bounds": {1: (n * 10 + 9).to_bytes(8, "little", signed=True)},
        },
    }


def write_table(root: Path) -> Path:
    """A v2 table: snapshot 101 appends one file, 202 another; tag ``first`` on 101.
    Returns the metadata file."""
    metadata_dir = root / "metadata"
    metadata_dir.mkdir(parents=True)
    manifests: list[dict[str, Any]] = []
    snapshots = []
    parent = None
    for n, (snapshot_id, timestamp) in enumerate(SNAPSHOTS):
        manifests.append(
            m.write_manifest(
                metadata_dir / f"m{n}.avro",
                [_entry(root, n)],
                schema=SCHEMA,
                spec=SPEC,
                snapshot_id=snapshot_id,
            )
        )
        manifest_list = metadata_dir / f"snap-{snapshot_id}.avro"
        m.write_manifest_list(
            manifest_list,
            manifests,
            snapshot_id=snapshot_id,
            sequence_number=n + 1,
            parent_snapshot_id=parent,
        )
        snapshot = {
            "snapshot-id": snapshot_id,
            "sequence-number": n + 1,
            "timestamp-ms": timestamp,
            "manifest-list": str(manifest_list),
            "summary": {"operation": "append"},
            "schema-id": 0,
        }
        if parent is not None:
            snapshot["parent-snapshot-id"] = parent
        snapshots.append(snapshot)
        parent = snapshot_id
    metadata = {
        "format-version": 2,
        "table-uuid": "0f5c5c6e-7d65-4c1b-8c53-5c3c8a5f0b21",
        "location": str(root),
        "last-sequence-number": 2,
        "last-updated-ms": SECOND,
        "last-column-id": 3,
        "schemas": [SCHEMA],
        "current-schema-id": 0,
        "partition-specs": [SPEC],
        "default-spec-id": 0,
        "last-partition-id": 999,
        "properties": {},
        "current-snapshot-id": 202,
        "snapshots": snapshots,
        "snapshot-log": [{"snapshot-id": s, "timestamp-ms": t} for s, t in SNAPSHOTS],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "refs": {
            "main": {"snapshot-id": 202, "type": "branch"},
            "first": {"snapshot-id": 101, "type": "tag"},
        },
    }
    location = metadata_dir / "v1.metadata.json"
    location.write_text(json.dumps(metadata))
    return location


def _plan(table: Any, **kwargs: Any) -> list[str]:
    return [str(task.file.file_path) for task in table.scan(**kwargs).plan_files()]


def _filter(expr: Any) -> Any:
    from frazil.expressions import from_json

    return from_json(json.dumps(expr))


@pytest.fixture
def table(tmp_path: Path) -> Any:
    import frazil

    return frazil.StaticTable.from_metadata(str(write_table(tmp_path / "t")))


def test_the_table_plans(table: Any, tmp_path: Path) -> None:
    """The fixture is a valid table: the errors below come from the bad input alone."""
    data = tmp_path / "t" / "data"
    assert sorted(_plan(table)) == [str(data / "0.parquet"), str(data / "1.parquet")]
    assert _plan(table, snapshot_id=101) == [str(data / "0.parquet")]
    assert _plan(table, ref="first") == [str(data / "0.parquet")]
    assert _plan(table, as_of=FIRST) == [str(data / "0.parquet")]
    assert _plan(table, row_filter=_filter({"type": "gt", "term": "id", "value": 9})) == [
        str(data / "1.parquet")
    ]


@pytest.mark.parametrize("term", ["nope", "ID", "s.inner"])
def test_filter_on_an_unknown_column(table: Any, term: str) -> None:
    expr = {"type": "eq", "term": term, "value": 1}
    with pytest.raises(UnknownFieldError) as raised:
        _plan(table, row_filter=_filter(expr))
    assert term in str(raised.value)


@pytest.mark.parametrize(
    ("term", "value"),
    [
        ("id", "not a number"),
        ("ts", "yesterday"),
        ("ts", "2024-13-45T00:00:00+00:00"),
        ("id", True),
    ],
)
def test_literal_that_cannot_convert(table: Any, term: str, value: Any) -> None:
    expr = {"type": "lt", "term": term, "value": value}
    with pytest.raises(ValidationError) as raised:
        _plan(table, row_filter=_filter(expr))
    message = str(raised.value)
    assert term in message
    assert str(value) in message or json.dumps(value) in message


def test_starts_with_on_a_number(table: Any) -> None:
    with pytest.raises(ValidationError) as raised:
        _plan(table, row_filter=_filter({"type": "starts-with", "term": "id", "value": "1"}))
    assert "id" in str(raised.value)


def test_snapshot_id_that_does_not_exist(table: Any) -> None:
    with pytest.raises(FrazilError) as raised:
        _plan(table, snapshot_id=999)
    assert "999" in str(raised.value)


@pytest.mark.parametrize("ref", ["nope", "First", "main2"])
def test_ref_that_does_not_exist(table: Any, ref: str) -> None:
    with pytest.raises(FrazilError) as raised:
        _plan(table, ref=ref)
    assert ref in str(raised.value)


@pytest.mark.parametrize(
    "as_of",
    [FIRST - 1, 0, dt.datetime.fromtimestamp((FIRST - 1000) / 1000, tz=dt.timezone.utc)],
)
def test_as_of_before_the_first_snapshot(table: Any, as_of: Any) -> None:
    with pytest.raises(FrazilError) as raised:
        _plan(table, as_of=as_of)
    message = str(raised.value)
    if isinstance(as_of, dt.datetime):
        ms = int(as_of.timestamp() * 1000)
        assert str(ms) in message or as_of.isoformat()[:19] in message, message
    else:
        assert str(as_of) in message


def test_manifest_list_naming_a_missing_manifest(tmp_path: Path) -> None:
    import frazil

    location = write_table(tmp_path / "t")
    missing = tmp_path / "t" / "metadata" / "m1.avro"  # in the current snapshot only
    missing.unlink()
    table = frazil.StaticTable.from_metadata(str(location))
    assert _plan(table, snapshot_id=101) == [str(tmp_path / "t" / "data" / "0.parquet")]
    with pytest.raises(NotFoundError) as raised:
        _plan(table)
    assert str(missing) in str(raised.value)
