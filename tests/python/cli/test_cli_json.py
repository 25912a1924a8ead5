"""Every ``frazil`` command with ``--json`` prints strict JSON (RFC 8259) with kebab-case keys.

One table exercises every value the output must carry: NaN and infinities, nulls, uuid,
binary, fixed, decimal, date, timestamptz, and nested struct, list and maps; it has several
snapshots, a partition spec, a sort order and a tag. The test walks the parser, so a new
command without a JSON case here fails it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.cli import _parser, main
from frazil.cli._ddl import parse_partition_spec, parse_schema
from frazil.table import Table

SCHEMA = (
    "id long not null, name string, score double, price decimal(10, 2), day date, "
    "ts timestamptz, u uuid, raw binary, fx fixed[4], loc struct<city: string, zip: int>, "
    "tags list<string>, attrs map<string, int>, codes map<int, string>"
)
UUIDS = [uuid.UUID("12345678-1234-5678-9abc-def012345678"), uuid.UUID(int=1), None]


def _rows() -> pa.Table:
    utc = dt.timezone.utc
    return pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": ["alice", "", None],
            "score": [math.nan, math.inf, -math.inf],
            "price": pa.array([Decimal("1.50"), None, Decimal("-2.25")], pa.decimal128(10, 2)),
            "day": [dt.date(2024, 1, 2), None, dt.date(1969, 12, 31)],
            "ts": pa.array(
                [dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=utc), None, None],
                pa.timestamp("us", tz="UTC"),
            ),
            "u": pa.array([u.bytes if u else None for u in UUIDS], pa.binary(16)),
            "raw": [b"\x00\xff", None, b""],
            "fx": pa.array([b"abcd", None, b"\x00\x00\x00\x01"], pa.binary(4)),
            "loc": pa.array(
                [{"city": "Oslo", "zip": 150}, None, {"city": None, "zip": 2}],
                pa.struct([("city", pa.string()), ("zip", pa.int32())]),
            ),
            "tags": pa.array([["a", None], [], None], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
            "codes": pa.array([[(7, "seven")], [], None], pa.map_(pa.int32(), pa.string())),
        }
    )


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    catalog = InMemoryCatalog(warehouse=str(tmp_path / "warehouse"))
    catalog.create_namespace("db")
    schema = parse_schema(SCHEMA)
    table = catalog.create_table(
        "db.t", schema, partition_spec=parse_partition_spec("day(ts), bucket[4](id)", schema)
    )
    with table.update_sort_order() as order:
        order.asc("id")
    table.append(_rows())
    table.manage_snapshots().create_tag("first", table.current_snapshot().snapshot_id).commit_to()
    table.append(_rows())
    table.delete("id = 2")
    return catalog


def run(catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status = main(list(argv), catalog_factory=lambda name, props: catalog)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def _no_constant(name: str) -> Any:
    raise AssertionError(f"non-standard JSON constant {name}")


def strict_json(text: str) -> Any:
    """json.loads refusing NaN, Infinity and -Infinity (not RFC 8259 JSON)."""
    return json.loads(text, parse_constant=_no_constant)


_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# Keys that are data, not the command line's vocabulary: a table's column names (scan rows,
# partition tuples), property and summary maps, and map columns with string keys.
_DATA_KEYS = {"properties", "summary", "partition", "attrs", "loc", "refs"}


def check_keys(value: Any, path: str = "") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert _KEBAB.match(key), f"key {key!r} at {path or 'top'} is not kebab-case"
            if key not in _DATA_KEYS:
                check_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            check_keys(item, path)


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every runnable command path of the parser ("table describe", "scan", ...)."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] != name:
                    continue  # an alias ("ns")
                found |= _commands(sub, (*prefix, name)) or {" ".join((*prefix, name))}
    return found


def _table(catalog: InMemoryCatalog) -> Table:
    return catalog.load_table("db.t")


def test_every_command_prints_strict_kebab_case_json(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    table = _table(catalog)
    first = table.snapshots()[0]
    first_at = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, dt.timezone.utc).isoformat()
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(table.schema().to_json()))
    upsert_file = tmp_path / "upsert.parquet"
    import pyarrow.parquet as pq

    pq.write_table(table.scan(row_filter="id = 1", limit=1).to_arrow(), upsert_file)
    cases: dict[str, list[list[str]]] = {
        "demo": [["demo"]],
        "quickstart": [["quickstart", "--rows", "300", "--namespace", "qs"]],
        "namespace list": [["ns", "list"]],
        "namespace create": [["ns", "create", "other", "--property", "owner=me"]],
        "namespace properties": [["ns", "properties", "other", "--set", "a=1"]],
        "namespace drop": [["ns", "drop", "other"]],
        "table list": [["table", "list", "db"]],
        "table create": [
            ["table", "create", "db.made", "--schema", "id long, ts timestamptz"],
            ["table", "create", "db.from_file", "--schema", f"@{schema_file}"],
        ],
        "table describe": [["table", "describe", "db.t"]],
        "table schema": [["table", "schema", "db.t"]],
        "table spec": [["table", "spec", "db.t"]],
        "table sort-order": [["table", "sort-order", "db.t"]],
        "table history": [["table", "history", "db.t"]],
        "table snapshots": [["table", "snapshots", "db.t"]],
        "table files": [["table", "files", "db.t"]],
        "table properties": [["table", "properties", "db.t", "--set", "k=v"]],
        "table rename": [["table", "rename", "db.made", "db.renamed"]],
        "table drop": [["table", "drop", "db.renamed"]],
        "scan": [
            ["scan", "db.t", "--limit", "0"],
            ["scan", "db.t", "--snapshot-id", str(first.snapshot_id)],
            ["scan", "db.t", "--ref", "first", "--columns", "id,u,score"],
            ["scan", "db.t", "--as-of", first_at, "--filter", "id BETWEEN 2 AND 3"],
        ],
        "expire-snapshots": [["expire-snapshots", "db.t", "--dry-run"]],
        "remove-orphans": [["remove-orphans", "db.t", "--dry-run"]],
        "rewrite-manifests": [["rewrite-manifests", "db.t"]],
        "delete": [
            ["delete", "db.t", "--filter", "id = 3"],
            ["delete", "db.t", "--filter", "id < 0"],
        ],
        "upsert": [["upsert", "db.t", "--data", str(upsert_file), "--on", "id"]],
        "rewrite-data-files": [
            [
                "rewrite-data-files",
                "db.t",
                "--option",
                "min-input-files=1",
                "--option",
                "rewrite-all=true",
            ],
            ["rewrite-data-files", "db.t", "--strategy", "sort"],
        ],
        "rewrite-position-deletes": [["rewrite-position-deletes", "db.t"]],
    }
    # serve runs until stopped: its --json line is tested in tests/python/rest/test_serve_cli.py.
    assert set(cases) | {"serve"} == _commands(_parser()), "every command needs a --json case"
    outputs: dict[str, list[Any]] = {}
    for command, runs in cases.items():
        for argv in runs:
            # --json before the command, and after it.
            where = 0 if len(outputs) % 2 else len(argv)
            argv = [*argv[:where], "--json", *argv[where:]]
            text = run(catalog, capsys, *argv)
            assert text.count("\n") == 1, f"{argv}: one JSON document on one line: {text!r}"
            value = strict_json(text)
            if command in ("namespace properties", "table properties"):
                assert all(isinstance(v, str) for v in value.values())  # a property map
            elif command != "scan":  # rows are keyed by the table's column names
                check_keys(value)
            outputs.setdefault(command, []).append(value)

    describe = outputs["table describe"][0]
    assert describe["schema"] == table.schema().to_json()
    assert describe["partition-spec"]["fields"][1]["transform"] == "bucket[4]"
    assert describe["sort-order"]["fields"][0]["direction"] == "asc"
    assert isinstance(describe["snapshot-count"], int) and describe["snapshot-count"] == 3
    assert isinstance(describe["current-snapshot-id"], int)
    snapshots = outputs["table snapshots"][0]
    assert [s["snapshot-id"] for s in snapshots] == [s.snapshot_id for s in table.snapshots()]
    assert snapshots[0]["summary"]["operation"] == "append"
    assert isinstance(snapshots[0]["timestamp-ms"], int)
    history = outputs["table history"][0]
    assert all(isinstance(h["timestamp-ms"], int) for h in history)
    deleted, nothing = outputs["delete"]
    assert isinstance(deleted["snapshot-id"], int) and nothing["snapshot-id"] is None
    assert outputs["upsert"][0]["rows-updated"] == 0  # the same values: nothing to update
    compacted = outputs["rewrite-data-files"][0]
    assert compacted["rewritten-data-files-count"] > 0
    files = outputs["table files"][0]
    assert {f["content"] for f in files} <= {"data", "position-deletes", "equality-deletes"}
    assert all(isinstance(f["record-count"], int) for f in files)

    rows = sorted(outputs["scan"][1], key=lambda r: r["id"])  # the first snapshot
    assert [r["score"] for r in rows] == ["NaN", "Infinity", "-Infinity"]
    assert [r["name"] for r in rows] == ["alice", "", None]
    assert [r["price"] for r in rows] == ["1.50", None, "-2.25"]
    assert [r["day"] for r in rows] == ["2024-01-02", None, "1969-12-31"]
    assert rows[0]["ts"] == "2024-01-02T03:04:05.000006+00:00"
    assert [r["u"] for r in rows] == [None if u is None else str(u) for u in UUIDS]
    assert [r["raw"] for r in rows] == ["00ff", None, ""]
    assert rows[2]["fx"] == "00000001"
    assert rows[0]["loc"] == {"city": "Oslo", "zip": 150}
    assert [r["tags"] for r in rows] == [["a", None], [], None]
    assert [r["attrs"] for r in rows] == [{"k": 1}, None, {}]
    assert [r["codes"] for r in rows] == [[{"key": 7, "value": "seven"}], [], None]
    tagged = outputs["scan"][2]
    assert sorted(tagged[0]) == ["id", "score", "u"] and len(tagged) == 3
    assert sorted(r["id"] for r in outputs["scan"][0]) == [1, 1, 3, 3]  # id 2 deleted
    assert sorted(r["id"] for r in outputs["scan"][3]) == [2, 3]
    expired = outputs["expire-snapshots"][0]
    assert expired["expired-snapshots"] == 0 and isinstance(expired["older-than-ms"], int)
    assert "history.expire.max-snapshot-age-ms" in expired["reason"]


def test_strict_json_parser_refuses_nan() -> None:
    with pytest.raises(AssertionError, match="NaN"):
        strict_json('{"a": NaN}')


def test_uuid_prints_as_text_from_either_arrow_type() -> None:
    from frazil.cli._output import arrow_rows, dumps

    value = UUIDS[0]
    schema = parse_schema("a uuid, b uuid, f fixed[16]")
    rows = pa.table(
        {
            "a": pa.array([value.bytes, None], pa.binary(16)),
            "b": pa.array([value.bytes, None], pa.binary(16)).cast(pa.uuid()),
            "f": pa.array([value.bytes, None], pa.binary(16)),
        }
    )
    assert arrow_rows(rows, schema) == [
        {"a": str(value), "b": str(value), "f": value.bytes.hex()},
        {"a": None, "b": None, "f": None},
    ]
    # pyarrow's extension type is a uuid without the Iceberg schema too.
    assert arrow_rows(rows.select(["b"])) == [{"b": str(value)}, {"b": None}]
    assert strict_json(dumps(arrow_rows(rows, schema)))[0]["b"] == str(value)


def test_nanoseconds_and_nested_non_finite_floats() -> None:
    from frazil.cli._output import arrow_rows, dumps

    rows = pa.table(
        {
            "ns": pa.array([1_700_000_000_123_456_789, -1], pa.timestamp("ns", tz="UTC")),
            "nested": pa.array(
                [{"xs": [math.nan, 1.5], "at": 5}, None],
                pa.struct([("xs", pa.list_(pa.float64())), ("at", pa.timestamp("ns"))]),
            ),
        }
    )
    parsed = strict_json(dumps(arrow_rows(rows)))
    assert parsed[0]["ns"] == "2023-11-14T22:13:20.123456789+00:00"
    assert parsed[1]["ns"] == "1969-12-31T23:59:59.999999999+00:00"
    assert parsed[0]["nested"] == {"xs": ["NaN", 1.5], "at": "1970-01-01T00:00:00.000000005"}
    assert parsed[1]["nested"] is None
