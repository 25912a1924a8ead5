"""Which delete files apply to which data file (spec: "Scan Planning"), checked against a direct
model of the spec's rules on random tables written with frazil's manifest writers:

- a position delete file applies to data files of the same spec and partition whose data
  sequence number is <= its own; a file-scoped one (``referenced_data_file``) only to that file;
- a deletion vector applies to its referenced data file (data sequence number <= its own), and
  then no v2 position delete file does;
- an equality delete file applies to data files whose data sequence number is < its own, in the
  same spec and partition, or in every partition when its spec is unpartitioned.

The delete files carry no metrics, so the equality-delete overlap test never prunes here.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from frazil import StaticTable
from frazil import manifest as m
from hypothesis import given, settings
from hypothesis import strategies as st

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "p", "required": False, "type": "int"},
        {"id": 2, "name": "v", "required": False, "type": "long"},
    ],
}
PARTITIONED: dict[str, Any] = {
    "spec-id": 0,
    "fields": [{"name": "p", "transform": "identity", "source-id": 1, "field-id": 1000}],
}
UNPARTITIONED: dict[str, Any] = {"spec-id": 1, "fields": []}

data_files = st.lists(
    st.tuples(st.integers(0, 2), st.integers(1, 6)),  # (partition, data sequence number)
    min_size=1,
    max_size=8,
)
deletes = st.lists(
    st.tuples(
        st.sampled_from(["pos", "pos-file", "dv", "eq", "eq-global"]),
        st.integers(0, 2),  # partition
        st.integers(1, 6),  # data sequence number
        st.integers(0, 7),  # which data file a file-scoped delete or DV names
    ),
    max_size=10,
)


def _entry(path: str, content: int, seq: int, partition: dict[str, Any], **extra: Any) -> Any:
    data_file = {
        "content": content,
        "file_path": path,
        "file_format": "PUFFIN" if extra.get("dv") else "PARQUET",
        "partition": partition,
        "record_count": 1,
        "file_size_in_bytes": 100,
    }
    extra.pop("dv", None)
    data_file.update(extra)
    return {
        "status": 0,
        "snapshot_id": 1,
        "sequence_number": seq,
        "file_sequence_number": seq,
        "data_file": data_file,
    }


def _table(root: Path, data: list[tuple[int, int]], dels: list[Any]) -> Path:
    meta = root / "metadata"
    meta.mkdir()
    data_entries = [
        _entry(f"s3://b/data/{i}.parquet", 0, seq, {"p": p}) for i, (p, seq) in enumerate(data)
    ]
    manifests = [
        m.write_manifest(
            meta / "data.avro", data_entries, schema=SCHEMA, spec=PARTITIONED, snapshot_id=1
        )
    ]
    partitioned, unpartitioned, dv_targets = [], [], set()
    for j, (kind, p, seq, target) in enumerate(dels):
        path = f"s3://b/deletes/{j}"
        target_path = f"s3://b/data/{target % len(data)}.parquet"
        if kind == "pos":
            partitioned.append(_entry(path, 1, seq, {"p": p}))
        elif kind == "pos-file":
            tp, _ = data[target % len(data)]
            partitioned.append(_entry(path, 1, seq, {"p": tp}, referenced_data_file=target_path))
        elif kind == "dv":
            if target_path in dv_targets:
                continue  # one DV per data file
            tp, tseq = data[target % len(data)]
            dv_targets.add(target_path)
            partitioned.append(
                _entry(
                    path,
                    1,
                    max(seq, tseq),
                    {"p": tp},
                    dv=True,
                    referenced_data_file=target_path,
                    content_offset=4,
                    content_size_in_bytes=40,
                )
            )
        elif kind == "eq":
            partitioned.append(_entry(path, 2, seq, {"p": p}, equality_ids=[2]))
        else:
            unpartitioned.append(_entry(path, 2, seq, {}, equality_ids=[2]))
    if partitioned:
        manifests.append(
            m.write_manifest(
                meta / "del0.avro",
                partitioned,
                schema=SCHEMA,
                spec=PARTITIONED,
                snapshot_id=1,
                content="deletes",
                format_version=3,
            )
        )
    if unpartitioned:
        manifests.append(
            m.write_manifest(
                meta / "del1.avro",
                unpartitioned,
                schema=SCHEMA,
                spec=UNPARTITIONED,
                snapshot_id=1,
                content="deletes",
                format_version=3,
            )
        )
    m.write_manifest_list(
        meta / "snap.avro",
        manifests,
        snapshot_id=1,
        sequence_number=6,
        format_version=3,
        first_row_id=0,
    )
    metadata = {
        "format-version": 3,
        "table-uuid": "0f5c5c6e-7d65-4c1b-8c53-5c3c8a5f0b21",
        "location": "s3://b",
        "last-sequence-number": 6,
        "last-updated-ms": 1,
        "last-column-id": 2,
        "schemas": [SCHEMA],
        "current-schema-id": 0,
        "partition-specs": [PARTITIONED, UNPARTITIONED],
        "default-spec-id": 0,
        "last-partition-id": 1000,
        "properties": {},
        "next-row-id": 100,
        "current-snapshot-id": 1,
        "snapshots": [
            {
                "snapshot-id": 1,
                "sequence-number": 6,
                "timestamp-ms": 1,
                "manifest-list": str(meta / "snap.avro"),
                "summary": {"operation": "append"},
                "schema-id": 0,
                "first-row-id": 0,
                "added-rows": 8,
            }
        ],
        "snapshot-log": [{"snapshot-id": 1, "timestamp-ms": 1}],
        "metadata-log": [],
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
    }
    location = meta / "v1.metadata.json"
    location.write_text(json.dumps(metadata))
    return location


def _expected(data: list[tuple[int, int]], dels: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    dvs: dict[str, tuple[str, int]] = {}
    seen: set[str] = set()
    for j, (kind, _p, seq, target) in enumerate(dels):
        target_path = f"s3://b/data/{target % len(data)}.parquet"
        if kind == "dv" and target_path not in seen:
            seen.add(target_path)
            dvs[target_path] = (f"s3://b/deletes/{j}", max(seq, data[target % len(data)][1]))
    for i, (p, dseq) in enumerate(data):
        path = f"s3://b/data/{i}.parquet"
        applied: set[str] = set()
        for j, (kind, dp, seq, target) in enumerate(dels):
            delete = f"s3://b/deletes/{j}"
            names = f"s3://b/data/{target % len(data)}.parquet"
            if (kind == "eq" and dp == p and seq > dseq) or (kind == "eq-global" and seq > dseq):
                applied.add(delete)
            if path in dvs:
                continue
            if (kind == "pos" and dp == p and seq >= dseq) or (
                kind == "pos-file" and names == path and seq >= dseq
            ):
                applied.add(delete)
        if path in dvs:
            applied.add(dvs[path][0])
        out[path] = applied
    return out


@settings(max_examples=60, deadline=None)
@given(data_files, deletes)
def test_deletes_apply_as_the_spec_says(data: list[tuple[int, int]], dels: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = StaticTable.from_metadata(_table(Path(tmp), data, dels))
        planned = {
            task.file.file_path: {d.file_path for d in task.delete_files}
            for task in table.scan().plan_files()
        }
    assert planned == _expected(data, dels)
