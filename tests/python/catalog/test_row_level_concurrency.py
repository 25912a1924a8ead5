"""Eight writers mixing row-level changes on one key space (spec: "Commit Conflict Resolution
and Retry", "Row-level Deletes"): forked processes on the SQLite and PostgreSQL catalogs, each
running a seeded random mix of appends of new keys, merge-on-read deletes of key ranges and
merge-on-read upserts of existing and new keys, with generous ``commit.retry.*``.

The key space: ids ``0, 2, ..., 2(N-1)`` at version 0, partitioned by ``truncate[200](id)``;
writer ``w`` takes its new keys from the odd ids ``16j + 2w + 1`` (disjoint across writers),
each once. Every operation works in a window of ids, so that writers meet often without all
conflicting. Commits refused by validation (``CommitValidationError``) are allowed and
counted; any other failure fails the test. With serializable isolation (the default) the
validations must keep the table what the successful operations, applied one after another in
commit order, make of it:

- an append sets its keys (new: never in the table) to its version;
- a delete of ``[lo, hi)`` removes the keys in that range;
- an upsert sets each of its keys to its version, whether the key was there (an update: its
  old row deleted by position) or not (an insert). Two upserts of one key cannot both land
  (the second finds the first's deletes and, serializable, its new row), so every key is
  there at most once.

Finally no file of a failed or retried attempt is left under the table's location: the
files there are exactly those the table's metadata references.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from concurrent_appends import RETRY, open_catalog
from frazil.errors import CommitValidationError
from frazil.table.maintenance.orphans import valid_files
from frazil.table.snapshot.producer import SnapshotProducer

WORKERS = 8
OPERATIONS = 14  # per writer
KEYS = 1000  # ids 0, 2, ..., 1998
WINDOW = 48
SEED = 24
pytestmark = [
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), pa.field("ver", pa.int64(), False)])
PROPERTIES = {
    **RETRY,
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}

Record = dict[str, Any]


def _rows(ids: list[int], ver: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "ver": pa.array([ver] * len(ids), pa.int64())},
        schema=SCHEMA,
    )


def _committed(txn: Any) -> int | None:
    """Commit ``txn``; the id of the snapshot it added (None: it changed nothing)."""
    producers = [c for c in txn._changes if isinstance(c, SnapshotProducer)]
    table = txn.commit_transaction()
    if not producers:
        return None
    (producer,) = producers
    assert table.metadata.snapshot_by_id(producer.snapshot_id) is not None
    return int(producer.snapshot_id)


def writer(kind: str, root: str, name: str, w: int) -> list[Record]:
    """Writer ``w``'s operations: a record for each, with ``snapshot`` its snapshot id, None
    when it changed nothing, or ``refused`` when validation refused it."""
    rng = random.Random(SEED * 100 + w)
    table = open_catalog(kind, root, name).load_table("db.t")
    used: set[int] = set()

    def new_keys(lo: int, count: int) -> list[int]:
        """Up to ``count`` unused keys of this writer in [lo, lo + WINDOW)."""
        out = []
        j = (lo - 2 * w - 1 + 15) // 16
        while len(out) < count and 16 * j + 2 * w + 1 < lo + WINDOW:
            key = 16 * j + 2 * w + 1
            if key >= lo and key not in used:
                used.add(key)
                out.append(key)
            j += 1
        return out

    records: list[Record] = []
    for n in range(OPERATIONS):
        ver = w * 1000 + n + 1
        lo = 2 * rng.randrange(0, KEYS - WINDOW // 2)
        op = rng.choices(["append", "delete", "upsert"], [3, 3, 4])[0]
        record: Record = {"writer": w, "op": op, "ver": ver}
        table.refresh()
        txn = table.transaction()
        if op == "append":
            keys = new_keys(lo, rng.randint(1, 3))
            if not keys:
                continue
            txn.append(_rows(keys, ver))
            record["keys"] = keys
        elif op == "delete":
            hi = lo + 2 * rng.randint(1, 8)
            txn.delete(f"id >= {lo} AND id < {hi}")
            record["range"] = (lo, hi)
        else:
            existing = sorted(rng.sample(range(lo, lo + WINDOW, 2), rng.randint(1, 4)))
            keys = sorted({*existing, *new_keys(lo, rng.randint(0, 2))})
            txn.upsert(_rows(keys, ver), ["id"])
            record["keys"] = keys
        try:
            record["snapshot"] = _committed(txn)
        except CommitValidationError as error:
            record["refused"] = str(error)
        records.append(record)
        # Seeded pauses, so that the writers drift apart rather than move in lockstep.
        time.sleep(rng.uniform(0, 0.02))
    return records


@pytest.fixture(params=[("sqlite", 2), ("postgresql", 3)], ids=["sqlite-v2", "postgresql-v3"])
def setup(request: pytest.FixtureRequest) -> tuple[str, int]:
    kind, version = request.param
    if kind == "postgresql":
        uri: str = request.getfixturevalue("postgres_uri")
        return uri, version
    return kind, version


@pytest.fixture
def root(tmp_path: Path) -> Iterator[str]:
    """In memory where possible (see test_write_concurrency.py)."""
    if not os.access("/dev/shm", os.W_OK):
        yield str(tmp_path)
        return
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="frazil-test-") as directory:
        yield directory


def _local(location: str) -> str:
    return location.removeprefix("file://").removeprefix("file:")


def test_eight_writers_of_row_level_changes_keep_the_table_serializable(
    setup: tuple[str, int], root: str
) -> None:
    kind, version = setup
    name = f"r-{uuid.uuid4().hex[:8]}"
    catalog = open_catalog(kind, root, name)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA, properties=PROPERTIES, format_version=version)
    with table.update_spec() as spec:
        spec.add_field("id", "truncate[200]")
    table.append(_rows(list(range(0, 2 * KEYS, 2)), 0))

    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS) as pool:
        results = pool.starmap(writer, [(kind, root, name, w) for w in range(WORKERS)])
    records = [r for rs in results for r in rs]

    table = open_catalog(kind, root, name).load_table("db.t")
    landed = [r for r in records if r.get("snapshot") is not None]
    refused = [r for r in records if "refused" in r]
    # Commit order: each landed snapshot is on main, in sequence number order.
    main: dict[int, int] = {}
    snapshot = table.current_snapshot()
    while snapshot is not None:
        main[snapshot.snapshot_id] = snapshot.sequence_number
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else table.metadata.snapshot_by_id(parent)
    assert all(r["snapshot"] in main for r in landed)
    assert len(main) == len(landed) + 1  # the base append, then every landed change

    expected = dict.fromkeys(range(0, 2 * KEYS, 2), 0)
    for record in sorted(landed, key=lambda r: main[r["snapshot"]]):
        if record["op"] == "append":
            assert not set(record["keys"]) & set(expected), record
            expected.update(dict.fromkeys(record["keys"], record["ver"]))
        elif record["op"] == "delete":
            lo, hi = record["range"]
            for key in [k for k in expected if lo <= k < hi]:
                del expected[key]
        else:
            expected.update(dict.fromkeys(record["keys"], record["ver"]))

    rows = table.scan().to_arrow()
    ids = rows.column("id").to_pylist()
    duplicates = sorted({i for i in ids if ids.count(i) > 1}) if len(ids) != len(set(ids)) else []
    assert not duplicates, f"keys present more than once: {duplicates}"
    actual = dict(zip(ids, rows.column("ver").to_pylist(), strict=True))
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    wrong = sorted(k for k in set(actual) & set(expected) if actual[k] != expected[k])
    assert (missing, extra, wrong) == ([], [], []), (missing[:20], extra[:20], wrong[:20])

    # The mix must have raced and must have done work: some of each kind landed, some
    # upserts and deletes were refused.
    for op in ("append", "delete", "upsert"):
        assert any(r["op"] == op for r in landed), f"no {op} landed"
    assert any(r["op"] in ("delete", "upsert") for r in refused), "the writers never conflicted"
    assert not any(r["op"] == "append" for r in refused), "an append was refused"

    # No file of a failed or retried attempt is left.
    valid = {_local(p) for p in valid_files(table)}
    left = {str(p) for p in Path(_local(table.location())).rglob("*") if p.is_file()}
    assert left <= valid, sorted(left - valid)[:20]
    counts = {op: sum(r["op"] == op for r in landed) for op in ("append", "delete", "upsert")}
    label = "sqlite" if kind == "sqlite" else "postgresql"
    print(f"\n[row-level concurrency {label} v{version}] landed {counts}, refused {len(refused)}")
