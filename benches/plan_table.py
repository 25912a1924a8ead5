"""The synthetic table that benches/bench_plan.py plans: metadata only.

A v2 table of events, partitioned by ``day(ts)`` and ``bucket[8](user_id)``, 12 columns with
metrics on 11 of them, written by frazil's own writers (``frazil.manifest.write_manifest`` /
``write_manifest_list``, ``frazil.TableMetadata`` + ``write_metadata``). Planning never opens
a data or delete file, so none exists; every manifest, manifest list and the metadata file do.

History (most of it expired, as in a real table; the entries keep their sequence numbers):

- one append a day for ``days`` days, at sequence number ``2k + 1`` for day k: one data
  manifest of ``files_per_day`` files, 5% of them late arrivals for the day before;
- after every 10th day, a merge-on-read DELETE at sequence number ``2k + 2``: one delete
  manifest with position delete files for the last 10 days, partition-scoped (about half of
  the (day, bucket) partitions, ``file_path`` bounds spanning every data file of the partition
  written before it) and file-scoped (5% of those data files: ``referenced_data_file`` and
  equal ``file_path`` bounds, as Java writes them). A late arrival for day k lands after the
  delete that covered day k, so the sequence-number rule (spec: "Scan Planning") matters;
- snapshot 1 is the last DELETE: every data and delete manifest above;
- snapshot 2 (current) adds equality deletes on ``id``: one per partition of the last 20
  days (spec 0), and two global ones under the unpartitioned spec 1 (one spanning every id,
  one the first tenth of them, so Java's range check on equality columns matters).

Cached under benches/.work/ (gitignored), keyed by the parameters and ``GENERATOR_VERSION``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import shutil
import struct
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

WORK = Path(__file__).resolve().parent / ".work"
# Bump when the generated table changes, so stale caches are not reused.
GENERATOR_VERSION = 1

DAY0 = dt.date(2025, 1, 1)
EPOCH = dt.date(1970, 1, 1)
MICROS_PER_DAY = 86_400_000_000
BUCKETS = 8
LATE_FRACTION = 0.05
DELETE_EVERY = 10
EQ_DELETE_DAYS = 20
# Reserved field ids of position delete files (spec: "Reserved Field IDs").
FILE_PATH_ID = 2147483546
POS_ID = 2147483545
SEED = 20261123

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "user_id", "required": False, "type": "long"},
        {"id": 4, "name": "event_type", "required": False, "type": "string"},
        {"id": 5, "name": "country", "required": False, "type": "string"},
        {"id": 6, "name": "amount", "required": False, "type": "double"},
        {"id": 7, "name": "quantity", "required": False, "type": "int"},
        {"id": 8, "name": "price", "required": False, "type": "decimal(10, 2)"},
        {"id": 9, "name": "session_id", "required": False, "type": "string"},
        {"id": 10, "name": "is_mobile", "required": False, "type": "boolean"},
        {"id": 11, "name": "event_date", "required": False, "type": "date"},
        {"id": 12, "name": "payload", "required": False, "type": "binary"},
    ],
}
COLUMN_IDS = range(1, 13)
METRIC_IDS = range(1, 12)  # payload (12) has sizes and counts only, like metrics mode "counts"
SPEC: dict[str, Any] = {
    "spec-id": 0,
    "fields": [
        {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000},
        {"name": "user_id_bucket", "transform": f"bucket[{BUCKETS}]", "source-id": 3,
         "field-id": 1001},
    ],
}  # fmt: skip
UNPARTITIONED: dict[str, Any] = {"spec-id": 1, "fields": []}
EVENT_TYPES = ["add_to_cart", "checkout", "click", "login", "purchase", "search", "view"]
COUNTRIES = ["AD", "AE", "AR", "AT", "AU", "BE", "BR", "CA", "US", "UY", "ZA", "ZM", "ZW"]


@dataclass(frozen=True)
class PlanTable:
    """Where the generated table is, and the facts the benchmark's filters are built from."""

    directory: str
    metadata: str
    snapshot_positional: int  # snapshot 1: data files and position deletes
    snapshot_equality: int  # snapshot 2 (current): adds equality deletes
    days: int
    files_per_day: int
    data_files: int
    position_deletes: int
    equality_deletes: int
    data_manifests: int
    delete_manifests: int
    max_id: int  # ids run from 0 to max_id, increasing from file to file in write order
    manifest_bytes: int
    generation_seconds: float

    def day(self, k: int) -> dt.date:
        return DAY0 + dt.timedelta(days=k)


def _long(v: int) -> bytes:
    return struct.pack("<q", v)


def _decimal(unscaled: int) -> bytes:
    """Appendix D: the unscaled value as minimal big-endian two's complement."""
    size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(size, "big", signed=True)


def _session_bounds(rng: random.Random) -> tuple[bytes, bytes]:
    """UUID-like session ids, bounds truncated to 16 characters as Java's default metrics
    mode ``truncate(16)`` writes them (the upper bound's last character incremented)."""
    lo = f"{rng.randrange(0x100):02x}{rng.getrandbits(56):014x}"
    hi = f"f{rng.randrange(0xA, 0x10):x}{rng.getrandbits(56):014x}"
    return lo.encode(), (hi[:15] + chr(ord(hi[15]) + 1)).encode()


class _Ids:
    def __init__(self) -> None:
        self.next = 0


def _data_file(rng: random.Random, ids: _Ids, k: int, i: int, day: int, job: str) -> dict[str, Any]:
    """One data file's ``data_file`` struct, written by append k for day index ``day``."""
    records = rng.randrange(50_000, 500_000)
    first = ids.next
    ids.next += records
    bucket = rng.randrange(BUCKETS)
    epoch_day = (DAY0 - EPOCH).days + day
    ts_lo = epoch_day * MICROS_PER_DAY + rng.randrange(3_600_000_000)
    ts_hi = (epoch_day + 1) * MICROS_PER_DAY - 1 - rng.randrange(3_600_000_000)
    s_lo, s_hi = _session_bounds(rng)
    lower = {
        1: _long(first),
        2: _long(ts_lo),
        3: _long(rng.randrange(1_000)),
        4: rng.choice(EVENT_TYPES[:3]).encode(),
        5: rng.choice(COUNTRIES[:4]).encode(),
        6: struct.pack("<d", rng.random()),
        7: struct.pack("<i", 1),
        8: _decimal(rng.randrange(1, 100)),
        9: s_lo,
        10: b"\x00",
        11: struct.pack("<i", epoch_day),
    }
    upper = {
        1: _long(first + records - 1),
        2: _long(ts_hi),
        3: _long(10_000_000 - rng.randrange(1_000)),
        4: rng.choice(EVENT_TYPES[-3:]).encode(),
        5: rng.choice(COUNTRIES[-4:]).encode(),
        6: struct.pack("<d", 9_000 + 1_000 * rng.random()),
        7: struct.pack("<i", rng.randrange(50, 101)),
        8: _decimal(rng.randrange(50_000, 100_000)),
        9: s_hi,
        10: b"\x01",
        11: struct.pack("<i", epoch_day),
    }
    nulls = {c: 0 if c <= 3 else (rng.randrange(1_000) if rng.random() < 0.3 else 0)
             for c in COLUMN_IDS}  # fmt: skip
    date = DAY0 + dt.timedelta(days=day)
    return {
        "content": 0,
        "file_path": f"s3://warehouse/db/events/data/ts_day={date.isoformat()}/"
        f"user_id_bucket={bucket}/00{i % 100:03d}-{k}-{job}-{i:05d}.parquet",
        "file_format": "PARQUET",
        "partition": {"ts_day": date, "user_id_bucket": bucket},
        "record_count": records,
        "file_size_in_bytes": records * 38 + rng.randrange(100_000),
        "column_sizes": [(c, records * 4 + rng.randrange(records)) for c in COLUMN_IDS],
        "value_counts": [(c, records) for c in COLUMN_IDS],
        "null_value_counts": list(nulls.items()),
        "nan_value_counts": [(6, rng.randrange(10) if rng.random() < 0.1 else 0)],
        "lower_bounds": list(lower.items()),
        "upper_bounds": list(upper.items()),
        "split_offsets": [4, 67_108_868] if records > 400_000 else [4],
        "sort_order_id": 0,
    }


def _entry(data_file: dict[str, Any], snapshot_id: int, seq: int) -> dict[str, Any]:
    # Explicit sequence numbers: the entries of an expired history keep theirs.
    return {
        "status": 1,
        "snapshot_id": snapshot_id,
        "sequence_number": seq,
        "file_sequence_number": seq,
        "data_file": data_file,
    }


def _position_delete(
    rng: random.Random, path: str, partition: dict[str, Any], targets: list[str], scoped: bool
) -> dict[str, Any]:
    rows = rng.randrange(10, 5_000) * len(targets)
    return {
        "content": 1,
        "file_path": path,
        "file_format": "PARQUET",
        "partition": partition,
        "record_count": rows,
        "file_size_in_bytes": rows * 12 + 2_000,
        "column_sizes": [(FILE_PATH_ID, rows), (POS_ID, rows * 4)],
        "value_counts": [(FILE_PATH_ID, rows), (POS_ID, rows)],
        "null_value_counts": [(FILE_PATH_ID, 0), (POS_ID, 0)],
        # Full paths, never truncated: Java's position delete writers keep them whole.
        "lower_bounds": [(FILE_PATH_ID, min(targets).encode()), (POS_ID, _long(0))],
        "upper_bounds": [(FILE_PATH_ID, max(targets).encode()), (POS_ID, _long(rows))],
        "referenced_data_file": targets[0] if scoped else None,
        "sort_order_id": None,
    }


def _equality_delete(
    rng: random.Random, path: str, partition: dict[str, Any], id_lo: int, id_hi: int
) -> dict[str, Any]:
    rows = rng.randrange(100, 10_000)
    return {
        "content": 2,
        "file_path": path,
        "file_format": "PARQUET",
        "partition": partition,
        "record_count": rows,
        "file_size_in_bytes": rows * 9 + 1_500,
        "column_sizes": [(1, rows * 8)],
        "value_counts": [(1, rows)],
        "null_value_counts": [(1, 0)],
        "lower_bounds": [(1, _long(id_lo))],
        "upper_bounds": [(1, _long(id_hi))],
        "equality_ids": [1],
        "sort_order_id": 0,
    }


def build(directory: Path, days: int, files_per_day: int) -> PlanTable:
    """Writes the table under ``directory`` (which must not exist) and returns its facts."""
    from frazil import TableMetadata, write_metadata
    from frazil import manifest as m

    start = time.monotonic()
    rng = random.Random(SEED)
    meta_dir = directory / "metadata"
    meta_dir.mkdir(parents=True)
    ids = _Ids()
    rows: list[dict[str, Any]] = []  # manifest-list rows of snapshot 1
    # (day, bucket) -> [(data sequence number, path)], and (day, bucket) -> (min id, max id)
    by_partition: dict[tuple[int, int], list[tuple[int, str]]] = {}
    id_ranges: dict[tuple[int, int], tuple[int, int]] = {}
    data_files = position_deletes = 0
    snapshot_positional = 0
    for k in range(days):
        seq, snapshot_id = 2 * k + 1, 10_000 + k
        job = f"{rng.getrandbits(128):032x}"
        late = int(files_per_day * LATE_FRACTION) if k > 0 else 0
        entries = []
        for i in range(files_per_day):
            day = k - 1 if i < late else k
            f = _data_file(rng, ids, k, i, day, job)
            key = (day, f["partition"]["user_id_bucket"])
            by_partition.setdefault(key, []).append((seq, f["file_path"]))
            lo = struct.unpack("<q", f["lower_bounds"][0][1])[0]
            hi = struct.unpack("<q", f["upper_bounds"][0][1])[0]
            old = id_ranges.get(key, (lo, hi))
            id_ranges[key] = (min(old[0], lo), max(old[1], hi))
            entries.append(_entry(f, snapshot_id, seq))
        data_files += len(entries)
        row = m.write_manifest(
            meta_dir / f"data-{k:04d}.avro", entries, schema=SCHEMA, spec=SPEC,
            snapshot_id=snapshot_id,
        )  # fmt: skip
        rows.append({**row, "added_snapshot_id": snapshot_id, "sequence_number": seq})

        if k % DELETE_EVERY != DELETE_EVERY - 1:
            continue
        # A merge-on-read DELETE over the last DELETE_EVERY days, after append k.
        seq, snapshot_id = 2 * k + 2, 20_000 + k
        deletes = []
        for day in range(k - DELETE_EVERY + 1, k + 1):
            date = DAY0 + dt.timedelta(days=day)
            for bucket in range(BUCKETS):
                covered = [p for s, p in by_partition.get((day, bucket), []) if s < seq]
                if not covered:
                    continue
                partition = {"ts_day": date, "user_id_bucket": bucket}
                base = (
                    f"s3://warehouse/db/events/data/ts_day={date.isoformat()}/"
                    f"user_id_bucket={bucket}/{snapshot_id}"
                )
                if rng.random() < 0.5:
                    f = _position_delete(rng, f"{base}-deletes.parquet", partition, covered, False)
                    deletes.append(_entry(f, snapshot_id, seq))
                for j, path in enumerate(covered):
                    if rng.random() < 0.05:
                        name = f"{base}-{j:05d}-deletes.parquet"
                        f = _position_delete(rng, name, partition, [path], True)
                        deletes.append(_entry(f, snapshot_id, seq))
        position_deletes += len(deletes)
        row = m.write_manifest(
            meta_dir / f"deletes-{k:04d}.avro", deletes, schema=SCHEMA, spec=SPEC,
            snapshot_id=snapshot_id, content="deletes",
        )  # fmt: skip
        rows.append({**row, "added_snapshot_id": snapshot_id, "sequence_number": seq})
        snapshot_positional = snapshot_id

    if snapshot_positional == 0:
        raise ValueError(f"days must be at least {DELETE_EVERY}: no DELETE would be written")
    last_seq = 2 * (days - 1) + 2
    list_1 = meta_dir / f"snap-{snapshot_positional}.avro"
    m.write_manifest_list(list_1, rows, snapshot_id=snapshot_positional, sequence_number=last_seq)

    # Snapshot 2: equality deletes on id (an upsert-style job over the last days).
    seq_2, snapshot_2 = last_seq + 1, 30_000
    eq_entries = []
    for day in range(max(0, days - EQ_DELETE_DAYS), days):
        date = DAY0 + dt.timedelta(days=day)
        for bucket in range(BUCKETS):
            if (day, bucket) not in id_ranges:
                continue
            lo, hi = id_ranges[day, bucket]
            path = (
                f"s3://warehouse/db/events/data/ts_day={date.isoformat()}/"
                f"user_id_bucket={bucket}/{snapshot_2}-eq-deletes.parquet"
            )
            partition = {"ts_day": date, "user_id_bucket": bucket}
            eq_entries.append(_entry(_equality_delete(rng, path, partition, lo, hi), snapshot_2,
                                     seq_2))  # fmt: skip
    global_entries = [
        _entry(_equality_delete(rng, f"s3://warehouse/db/events/data/{snapshot_2}-eq-{n}.parquet",
                                {}, 0, hi), snapshot_2, seq_2)
        for n, hi in enumerate((ids.next - 1, ids.next // 10))
    ]  # fmt: skip
    row_eq = m.write_manifest(
        meta_dir / "eq-deletes-spec0.avro", eq_entries, schema=SCHEMA, spec=SPEC,
        snapshot_id=snapshot_2, content="deletes",
    )  # fmt: skip
    row_global = m.write_manifest(
        meta_dir / "eq-deletes-spec1.avro", global_entries, schema=SCHEMA, spec=UNPARTITIONED,
        snapshot_id=snapshot_2, content="deletes",
    )  # fmt: skip
    rows_2 = [*rows]
    for row in (row_eq, row_global):
        rows_2.append({**row, "added_snapshot_id": snapshot_2, "sequence_number": seq_2})
    list_2 = meta_dir / f"snap-{snapshot_2}.avro"
    m.write_manifest_list(
        list_2, rows_2, snapshot_id=snapshot_2, parent_snapshot_id=snapshot_positional,
        sequence_number=seq_2,
    )  # fmt: skip

    now_ms = int((DAY0 + dt.timedelta(days=days) - EPOCH).days * 86_400_000)
    snapshots = [
        {
            "sequence-number": last_seq,
            "snapshot-id": snapshot_positional,
            "timestamp-ms": now_ms,
            "summary": {"operation": "delete"},
            "manifest-list": str(list_1),
            "schema-id": 0,
        },
        {
            "sequence-number": seq_2,
            "snapshot-id": snapshot_2,
            "parent-snapshot-id": snapshot_positional,
            "timestamp-ms": now_ms + 60_000,
            "summary": {"operation": "overwrite"},
            "manifest-list": str(list_2),
            "schema-id": 0,
        },
    ]
    metadata = TableMetadata.from_json(
        {
            "format-version": 2,
            "table-uuid": "6c3c8a3e-6a55-4d5c-9a39-7b0f5b1d2e11",
            "location": str(directory),
            "last-sequence-number": seq_2,
            "last-updated-ms": now_ms + 60_000,
            "last-column-id": 12,
            "current-schema-id": 0,
            "schemas": [SCHEMA],
            "default-spec-id": 0,
            "partition-specs": [SPEC, UNPARTITIONED],
            "last-partition-id": 1001,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": {"write.delete.mode": "merge-on-read"},
            "current-snapshot-id": snapshot_2,
            "refs": {"main": {"snapshot-id": snapshot_2, "type": "branch"}},
            "snapshots": snapshots,
            "snapshot-log": [
                {"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]}
                for s in snapshots
            ],
            "metadata-log": [],
        }
    )
    metadata_path = meta_dir / "00001-6c3c8a3e-6a55-4d5c-9a39-7b0f5b1d2e11.metadata.json"
    write_metadata(metadata, metadata_path)
    (directory / "metadata" / "version-hint.text").write_text("1")
    manifest_bytes = sum(p.stat().st_size for p in meta_dir.glob("*.avro"))
    return PlanTable(
        directory=str(directory),
        metadata=str(metadata_path),
        snapshot_positional=snapshot_positional,
        snapshot_equality=snapshot_2,
        days=days,
        files_per_day=files_per_day,
        data_files=data_files,
        position_deletes=position_deletes,
        equality_deletes=len(eq_entries) + len(global_entries),
        data_manifests=days,
        delete_manifests=len(rows) - days,
        max_id=ids.next - 1,
        manifest_bytes=manifest_bytes,
        generation_seconds=round(time.monotonic() - start, 1),
    )


def cached_table(days: int, files_per_day: int) -> PlanTable:
    """The table for these parameters, generated on first use and kept under benches/.work/."""
    key = hashlib.sha256(
        json.dumps([GENERATOR_VERSION, SEED, days, files_per_day]).encode()
    ).hexdigest()[:12]
    directory = WORK / f"plan-table-{days}x{files_per_day}-{key}"
    facts = directory / "table.json"
    if facts.exists():
        return PlanTable(**json.loads(facts.read_text()))
    # table.json is written last: a run killed halfway leaves no table that looks complete.
    WORK.mkdir(parents=True, exist_ok=True)
    if directory.exists():
        shutil.rmtree(directory)
    print(f"generating the table ({days} days x {files_per_day} files) ...", flush=True)
    table = build(directory, days, files_per_day)
    facts.write_text(json.dumps(asdict(table), indent=1))
    return table
