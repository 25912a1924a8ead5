"""Commit and maintenance benchmark: frazil's commits against pyiceberg's and Java's, all on one
SQLite catalog (frazil's ``SqlCatalog``, pyiceberg's ``SqlCatalog`` and Java's ``JdbcCatalog``
share its ``iceberg_tables``).

- **Fast-append latency**: tables of 1k, 10k and 100k data files (metadata only: manifests of
  fake data files, committed by frazil in snapshots of at most 10k files). Each measurement
  resets the catalog pointer to the table's base version, writes one fresh tiny Parquet file
  (untimed), loads the table (untimed) and times registering that file with a fast append and
  committing it. frazil: ``FastAppend`` staged in ``table.transaction()``; pyiceberg:
  ``tx.update_snapshot().fast_append().append_data_file(...)``; Java 1.10.2:
  ``newFastAppend().appendFile(...).commit()`` timed inside the JVM (benches/java/
  CommitBench.java). Before timing, every contender's commit is checked (parent, totals, the
  new file in the table). Interleaved rounds, the order rotated each round; min and median.
- **Expire snapshots**: a table of 1,000 snapshots adding 100k data files (every tenth
  snapshot an overwrite removing the 100 files added five snapshots before), the data files
  present on disk as empty files. Each round restores the table directory to its pristine
  state (hard links, untimed), resets the pointer to the base version, loads the table
  (untimed) and times expiring every snapshot older than the current one with the files
  deleted through each contender's own FileIO: frazil
  ``table.maintenance.expire_snapshots().older_than(t).commit()``; Java 1.10.2
  ``table.expireSnapshots().expireOlderThan(t).commit()`` inside the JVM with the
  reachable-files cleanup (``ReachableFileCleanup``, what Spark's ``ExpireSnapshotsSparkAction``
  and frazil do; set by reflection, ``--java-cleanup``). Java core's default for a linear history
  is ``IncrementalFileCleanup``, which keeps the files a retained snapshot deleted until that
  snapshot expires too (here the 100 files the current overwrite removed), so it deletes a
  different set. Before timing, each contender's expiry is run once and the files gone from
  the table directory must be the same for all, and frazil must still plan the current
  snapshot's files afterwards.
- **Concurrent writers**: eight processes appending 10 rows each time to one table for a fixed
  time (``table.append``, fast appends): commits per second and commit attempts per commit.
  frazil retries inside its transaction (``commit.retry.*``, Java's backoff); pyiceberg 0.12
  does not retry SQL-catalog commits, so its writers retry in the loop with the same backoff.
  Afterwards the history must be linear with every commit in it exactly once.

    .venv/bin/python benches/bench_commit.py    # ~15 minutes (table generation the first time)
    .venv/bin/python benches/bench_commit.py --parts append --rounds 5 --output /tmp/c.md
    .venv/bin/python benches/bench_commit.py --profile   # cProfile of frazil's 100k append
    .venv/bin/python benches/bench_commit.py --parts expire --only frazil,java --expire-rounds 5
    .venv/bin/python benches/bench_commit.py --parts expire --profile   # cProfile of the expiry

Build frazil in release first: ``VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import random
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BENCH_DIR = Path(__file__).resolve().parent
WORK = BENCH_DIR / ".work" / "commit"
JAVA_SOURCE = BENCH_DIR / "java" / "CommitBench.java"
ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
SQLITE_JDBC = Path("/usr/share/java/sqlite-jdbc.jar")
CATALOG = "bench"
NAMESPACE = "bench"
CONTENDERS = ("frazil", "pyiceberg", "java")
BATCH = 10_000  # fake files per generating snapshot
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("data", pa.string())])
TABLE_PROPERTIES = {"commit.manifest-merge.enabled": "false"}


# ------------------------------------------------------------------------------ the tables


@dataclass(frozen=True)
class Base:
    """A table version every measurement starts from."""

    table: str  # namespace.name
    metadata: str
    files: int
    snapshots: int
    snapshot_id: int
    timestamp_ms: int
    seconds: float  # generation time

    @property
    def name(self) -> str:
        return self.table.split(".", 1)[1]


def frazil_catalog(work: Path) -> Any:
    from frazil.catalog.sql import SqlCatalog

    return SqlCatalog(CATALOG, uri=f"sqlite:///{work / 'catalog.db'}", warehouse=str(work / "wh"))


def fake_file(location: str, i: int) -> Any:
    """A data file that does not exist, with metrics like a small real one."""
    from frazil.manifest import DataFile

    return DataFile(
        content=0, file_path=f"{location}/data/fake-{i:07d}.parquet", file_format="PARQUET",
        partition={}, record_count=1000, file_size_in_bytes=20_000,
        column_sizes={1: 8000, 2: 12000}, value_counts={1: 1000, 2: 1000},
        null_value_counts={1: 0, 2: 0}, nan_value_counts=None,
        lower_bounds={1: struct.pack("<q", i * 1000), 2: b"a"},
        upper_bounds={1: struct.pack("<q", i * 1000 + 999), 2: b"z"},
        key_metadata=None, split_offsets=[4], equality_ids=None, sort_order_id=None,
        first_row_id=None, referenced_data_file=None, content_offset=None,
        content_size_in_bytes=None,
    )  # fmt: skip


def _commit(table: Any, add: list[Any], delete: list[str] | None = None) -> None:
    from frazil.table.snapshot import FastAppend, OverwriteFiles

    txn = table.transaction()
    producer: FastAppend | OverwriteFiles
    if delete:
        producer = OverwriteFiles(txn.staged_metadata, table.io, merge=False)
        for path in delete:
            producer.delete_file(path)
    else:
        producer = FastAppend(txn.staged_metadata, table.io)
    for file in add:
        producer.add_file(file)
    txn.add_change(producer)
    txn.commit_transaction()


def _base(table: Any, seconds: float) -> Base:
    snapshot = table.current_snapshot()
    return Base(
        ".".join(table.identifier), table.metadata_location,
        int(snapshot.summary["total-data-files"]), len(table.snapshots()),
        snapshot.snapshot_id, snapshot.timestamp_ms, round(seconds, 1),
    )  # fmt: skip


def _cached(work: Path, key: str) -> Base | None:
    state = work / "state.json"
    if not state.exists():
        return None
    entry = json.loads(state.read_text()).get(key)
    if entry is None or not Path(entry["metadata"]).exists():
        return None
    return Base(**entry)


def _remember(work: Path, key: str, base: Base) -> None:
    state = work / "state.json"
    data = json.loads(state.read_text()) if state.exists() else {}
    data[key] = base.__dict__
    state.write_text(json.dumps(data, indent=1))


def _new_table(catalog: Any, name: str, properties: dict[str, str] | None = None) -> Any:
    if not catalog.namespace_exists(NAMESPACE):
        catalog.create_namespace(NAMESPACE)
    ident = f"{NAMESPACE}.{name}"
    if catalog.table_exists(ident):
        catalog.drop_table(ident)
    return catalog.create_table(
        ident, SCHEMA, properties={**TABLE_PROPERTIES, **(properties or {})}
    )


def files_table(work: Path, files: int) -> Base:
    """A table of ``files`` fake data files, in snapshots of at most BATCH files."""
    key = f"files_{files}"
    cached = _cached(work, key)
    if cached is not None:
        return cached
    started = time.monotonic()
    table = _new_table(frazil_catalog(work), key)
    for start in range(0, files, BATCH):
        _commit(
            table, [fake_file(table.location(), i) for i in range(start, min(files, start + BATCH))]
        )
    base = _base(table, time.monotonic() - started)
    _remember(work, key, base)
    return base


def expire_table(work: Path, snapshots: int, per_snapshot: int) -> Base:
    """``snapshots`` snapshots of ``per_snapshot`` new fake files each; every tenth also removes
    the files added five snapshots before (an overwrite), so expiry has data files to delete."""
    key = f"expire_{snapshots}x{per_snapshot}"
    cached = _cached(work, key)
    if cached is not None:
        return cached
    started = time.monotonic()
    table = _new_table(frazil_catalog(work), key)
    location = table.location()
    for s in range(snapshots):
        add = [fake_file(location, s * per_snapshot + j) for j in range(per_snapshot)]
        delete = None
        if s % 10 == 9:
            delete = [
                fake_file(location, (s - 5) * per_snapshot + j).file_path
                for j in range(per_snapshot)
            ]
        _commit(table, add, delete)
        if s % 100 == 99:
            print(f"    {s + 1} snapshots ({time.monotonic() - started:.0f} s)", flush=True)
    base = _base(table, time.monotonic() - started)
    _remember(work, key, base)
    return base


def reset(work: Path, base: Base) -> None:
    """Point the catalog back at ``base`` (what every measurement starts from)."""
    with sqlite3.connect(work / "catalog.db", timeout=30) as conn:
        changed = conn.execute(
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = NULL "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (base.metadata, CATALOG, NAMESPACE, base.name),
        ).rowcount
    if changed != 1:
        raise RuntimeError(f"cannot reset {base.table}: not in the catalog")


@dataclass(frozen=True)
class Tiny:
    path: str
    size: int
    records: int


def tiny_file(work: Path, base: Base) -> Tiny:
    """A fresh 10-row Parquet file in the table's data directory."""
    directory = work / "wh" / NAMESPACE / base.name / "data"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"tiny-{uuid.uuid4()}.parquet"
    rows = pa.table({"id": pa.array(range(10), pa.int64()), "data": [f"r{i}" for i in range(10)]})
    pq.write_table(rows.cast(SCHEMA), path)
    return Tiny(str(path), path.stat().st_size, 10)


# ------------------------------------------------------------------------------ contenders


class Contender:
    name = ""
    note = ""

    def append(self, base: Base, tiny: Tiny) -> float:
        """Load the table (untimed), then fast-append ``tiny`` and commit: wall seconds."""
        raise NotImplementedError

    def expire(self, base: Base) -> float:
        """Load the table (untimed), then expire every snapshot older than the current one,
        deleting the files: wall seconds."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class Frazil(Contender):
    name = "frazil"

    def __init__(self, work: Path) -> None:
        import frazil

        self.catalog = frazil_catalog(work)
        self.note = f"frazil {getattr(frazil, '__version__', '?')}"

    def append(self, base: Base, tiny: Tiny) -> float:
        from frazil.table.snapshot import FastAppend

        table = self.catalog.load_table(base.table)
        # Only what Java and pyiceberg are given too: path, format, size, record count.
        file = dataclasses.replace(
            fake_file("", 0), file_path=tiny.path, file_size_in_bytes=tiny.size,
            record_count=tiny.records, column_sizes=None, value_counts=None,
            null_value_counts=None, lower_bounds=None, upper_bounds=None, split_offsets=None,
        )  # fmt: skip
        start = time.perf_counter()
        txn = table.transaction()
        producer = FastAppend(txn.staged_metadata, table.io)
        producer.add_file(file)
        txn.add_change(producer)
        txn.commit_transaction()
        return time.perf_counter() - start

    def expire(self, base: Base) -> float:
        table = self.catalog.load_table(base.table)
        start = time.perf_counter()
        table.maintenance.expire_snapshots().older_than(base.timestamp_ms).commit()
        return time.perf_counter() - start


class Pyiceberg(Contender):
    name = "pyiceberg"

    def __init__(self, work: Path) -> None:
        import pyiceberg
        from pyiceberg.catalog.sql import SqlCatalog

        self.catalog = SqlCatalog(
            CATALOG, uri=f"sqlite:///{work / 'catalog.db'}", warehouse=f"file://{work / 'wh'}"
        )
        self.note = f"pyiceberg {pyiceberg.__version__}"

    def append(self, base: Base, tiny: Tiny) -> float:
        from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
        from pyiceberg.typedef import Record

        table = self.catalog.load_table(base.table)
        start = time.perf_counter()
        file = DataFile.from_args(
            content=DataFileContent.DATA, file_path=tiny.path, file_format=FileFormat.PARQUET,
            partition=Record(), record_count=tiny.records, file_size_in_bytes=tiny.size,
        )  # fmt: skip
        file.spec_id = table.metadata.default_spec_id
        with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
            append.append_data_file(file)
        return time.perf_counter() - start


def find_iceberg_jar() -> Path:
    import snowpark_connect_deps_iceberg  # type: ignore[import-untyped]

    for jar in snowpark_connect_deps_iceberg.list_jars():
        if Path(jar).name == ICEBERG_JAR:
            return Path(jar)
    raise RuntimeError(f"{ICEBERG_JAR} not found in snowpark_connect_deps_iceberg")


class Java(Contender):
    """Apache Iceberg Java in one JVM driven over a pipe; times from System.nanoTime."""

    name = "java"

    def __init__(self, work: Path, opts: str, cleanup: str = "reachable") -> None:
        import pyspark

        self.cleanup = cleanup

        jar = find_iceberg_jar()
        slf4j = sorted((Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
        if not slf4j:
            raise RuntimeError("pyspark's slf4j-api jar not found")
        if not SQLITE_JDBC.exists():
            raise RuntimeError(
                f"{SQLITE_JDBC} not found: Java's JdbcCatalog needs Debian's "
                "libxerial-sqlite-jdbc-java (tests/run installs it)"
            )
        classes = BENCH_DIR / ".work" / "commit-java-classes"
        classes.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join([str(jar), str(slf4j[0]), str(SQLITE_JDBC)])
        subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", classpath, str(JAVA_SOURCE)],
            check=True,
        )
        command = ["java", *opts.split(), "-cp", f"{classpath}{os.pathsep}{classes}",
                   "CommitBench", str(work / "catalog.db"), str(work / "wh"), CATALOG]  # fmt: skip
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True,
        )  # fmt: skip
        ready = self._read()
        if not ready.startswith("ready "):
            raise RuntimeError(f"CommitBench did not start: {ready!r}")
        self.note = (
            f"Java {ready.split(' ', 1)[1]}, {jar.name}, {SQLITE_JDBC.name}; `{opts}`; "
            f"expiry cleanup {cleanup}"
        )

    def _send(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self._read()

    def _read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line or line.startswith("error"):
            raise RuntimeError(f"CommitBench failed: {line!r} (exit {self.proc.poll()})")
        return line

    def append(self, base: Base, tiny: Tiny) -> float:
        return int(self._send(f"append {base.table} {tiny.path} {tiny.size} {tiny.records}")) / 1e9

    def expire(self, base: Base) -> float:
        reply = self._send(f"expire {base.table} {base.timestamp_ms} {self.cleanup}")
        return int(reply) / 1e9

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)


# -------------------------------------------------------------------------------- checking


def check_append(work: Path, contender: Contender, base: Base, deep: bool) -> None:
    """One append by ``contender`` on ``base``, read back by frazil: one snapshot on top of
    the base, totals up by one file, and (``deep``) the new file among the planned ones."""
    reset(work, base)
    tiny = tiny_file(work, base)
    contender.append(base, tiny)
    table = frazil_catalog(work).load_table(base.table)
    snapshot = table.current_snapshot()
    problems = []
    if snapshot.parent_snapshot_id != base.snapshot_id:
        problems.append(f"parent {snapshot.parent_snapshot_id}, expected {base.snapshot_id}")
    summary = snapshot.summary
    if summary.get("added-data-files") != "1" or summary.get("operation") != "append":
        problems.append(f"summary {summary}")
    if int(summary.get("total-data-files", -1)) != base.files + 1:
        problems.append(f"total-data-files {summary.get('total-data-files')}, not {base.files + 1}")
    if deep:
        paths = {task.file.file_path for task in table.scan().plan_files()}
        if len(paths) != base.files + 1 or tiny.path not in {
            p.removeprefix("file://") for p in paths
        }:
            problems.append(
                f"planned {len(paths)} files, the new one among them: {tiny.path in paths}"
            )
    if problems:
        raise AssertionError(f"{contender.name} append on {base.table}: {'; '.join(problems)}")
    reset(work, base)


class ExpireCopy:
    """The expiry table's directory, restored before each expiry from a pristine copy made of
    hard links (neither contender rewrites a file in place: they write new metadata and
    delete), the data files present as empty files so that their deletion is real."""

    def __init__(self, work: Path, base: Base, data_files: int) -> None:
        self.base = base
        self.table_dir = Path(base.metadata).parent.parent
        self.pristine = work / "expire-pristine" / base.name
        if not (self.pristine / ".complete").exists():
            self._make_pristine(data_files)
        self.files = self._listing(self.pristine)

    def _make_pristine(self, data_files: int) -> None:
        from frazil import read_metadata

        metadata = read_metadata(self.base.metadata)
        missing = [
            s.manifest_list for s in metadata.snapshots
            if s.manifest_list and not Path(s.manifest_list).exists()
        ]  # fmt: skip
        if missing:
            raise RuntimeError(
                f"{self.table_dir} lost {len(missing)} manifest lists (an interrupted run?): "
                "delete the work directory's expire table to generate it again"
            )
        print(f"  pristine copy of {self.table_dir} (data files as empty files) ...", flush=True)
        shutil.rmtree(self.pristine, ignore_errors=True)
        shutil.copytree(self.table_dir, self.pristine, copy_function=os.link)
        (self.pristine / "data").mkdir(exist_ok=True)
        location = metadata.location
        for i in range(data_files):
            name = Path(fake_file(location, i).file_path).name
            (self.pristine / "data" / name).touch()
        (self.pristine / ".complete").touch()

    @staticmethod
    def _listing(root: Path) -> set[str]:
        return {
            str(Path(d, f).relative_to(root))
            for d, _, files in os.walk(root)
            for f in files
            if f != ".complete"
        }

    def restore(self, work: Path) -> None:
        shutil.rmtree(self.table_dir, ignore_errors=True)
        shutil.copytree(self.pristine, self.table_dir, copy_function=os.link)
        (self.table_dir / ".complete").unlink()
        reset(work, self.base)

    def deleted(self) -> set[str]:
        """The pristine files gone from the table directory (paths relative to it)."""
        return self.files - self._listing(self.table_dir)


def file_kind(relative: str) -> str:
    name = Path(relative).name
    if relative.startswith("data/"):
        return "data files"
    if name.startswith("snap-") and name.endswith(".avro"):
        return "manifest lists"
    if name.endswith(".avro"):
        return "manifests"
    if name.endswith(".metadata.json"):
        return "metadata files"
    if name.endswith(".stats") or name.endswith(".puffin"):
        return "statistics"
    return "other"


def by_kind(paths: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in paths:
        counts[file_kind(path)] = counts.get(file_kind(path), 0) + 1
    return dict(sorted(counts.items()))


# ------------------------------------------------------------------------------- the parts


@dataclass
class Series:
    times: list[float] = field(default_factory=list)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def run_append(work: Path, contenders: list[Contender], bases: list[Base], rounds: int,
               warmup: int) -> dict[tuple[str, int], Series]:  # fmt: skip
    print("checking each contender's append ...", flush=True)
    for base in bases:
        for c in contenders:
            check_append(work, c, base, deep=base.files <= 10_000)
            print(f"  {c.name:10} {base.table}: ok", flush=True)
    for c in contenders:  # untimed (the JVM's JIT, Python's first-call imports)
        for _ in range(warmup):
            reset(work, bases[0])
            c.append(bases[0], tiny_file(work, bases[0]))
    results = {(c.name, b.files): Series() for c in contenders for b in bases}
    print(f"timing {rounds} interleaved rounds ...", flush=True)
    for r in range(rounds):
        for base in bases:
            k = r % len(contenders)
            for c in contenders[k:] + contenders[:k]:
                reset(work, base)
                tiny = tiny_file(work, base)
                gc.collect()
                results[c.name, base.files].times.append(c.append(base, tiny))
        line = "  ".join(
            f"{c.name} {b.files // 1000}k {results[c.name, b.files].times[-1] * 1000:.1f}"
            for b in bases for c in contenders
        )  # fmt: skip
        print(f"  round {r + 1}/{rounds} (ms): {line}", flush=True)
    for base in bases:
        reset(work, base)
    return results


def check_expire(work: Path, contenders: list[Contender], copy: ExpireCopy) -> dict[str, int]:
    """One expiry by each contender on a fresh copy: the files each deleted (read from the
    disk) must be the same, and the current snapshot must still plan every live file."""
    deleted: dict[str, set[str]] = {}
    for c in contenders:
        copy.restore(work)
        c.expire(copy.base)
        deleted[c.name] = copy.deleted()
        table = frazil_catalog(work).load_table(copy.base.table)
        planned = sum(1 for _ in table.scan().plan_files())
        print(f"  {c.name:10} deleted {by_kind(deleted[c.name])}; plans {planned:,} files",
              flush=True)  # fmt: skip
        if len(table.snapshots()) != 1 or planned != copy.base.files:
            raise AssertionError(
                f"{c.name}: {len(table.snapshots())} snapshots left, {planned} files planned "
                f"after the expiry, expected 1 and {copy.base.files}"
            )
    reference = next(iter(deleted))
    for name, paths in deleted.items():
        if paths != deleted[reference]:
            only_here = paths - deleted[reference]
            only_there = deleted[reference] - paths
            raise AssertionError(
                f"{name} and {reference} delete different files: only {name} "
                f"{by_kind(only_here)} (e.g. {sorted(only_here)[:3]}), only {reference} "
                f"{by_kind(only_there)} (e.g. {sorted(only_there)[:3]})"
            )
    return by_kind(deleted[reference])


def run_expire(work: Path, contenders: list[Contender], copy: ExpireCopy, rounds: int
               ) -> tuple[dict[str, Series], dict[str, int]]:  # fmt: skip
    expiring = [c for c in contenders if c.name != "pyiceberg"]
    print("checking that every contender deletes the same files ...", flush=True)
    deleted = check_expire(work, expiring, copy)
    results = {c.name: Series() for c in expiring}
    for r in range(rounds):
        k = r % len(expiring)
        for c in expiring[k:] + expiring[:k]:
            copy.restore(work)
            gc.collect()
            results[c.name].times.append(c.expire(copy.base))
        line = "  ".join(f"{n} {s.times[-1]:.2f} s" for n, s in results.items())
        print(f"  round {r + 1}/{rounds}: {line}", flush=True)
    copy.restore(work)
    return results, deleted


def profile_expire(work: Path, copy: ExpireCopy) -> None:
    import cProfile
    import pstats

    frazil = Frazil(work)
    profiler = cProfile.Profile()
    copy.restore(work)
    table = frazil.catalog.load_table(copy.base.table)
    profiler.enable()
    table.maintenance.expire_snapshots().older_than(copy.base.timestamp_ms).commit()
    profiler.disable()
    copy.restore(work)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


WRITER_ROWS = pa.table({"id": pa.array(range(10), pa.int64()), "data": ["x"] * 10}).cast(SCHEMA)


def backoff_s(attempt: int) -> float:
    """Java's Tasks.exponentialBackoff with its defaults (100 ms doubling, 10% jitter)."""
    delay = min(100 * 2.0 ** (attempt - 1), 60_000.0)
    return (delay + delay * 0.1 * random.random()) / 1000


def _wait_for_start() -> float:
    """Says "ready" (set-up done) and reads the common start time from the parent."""
    print("ready", flush=True)
    start_at = float(sys.stdin.readline())
    time.sleep(max(0.0, start_at - time.time()))
    return start_at


def writer(kind: str, work: Path, table_name: str, seconds: float) -> None:
    """One concurrent writer (a child process): appends from the common start time until the
    deadline, prints JSON."""
    commits = attempts = in_time = 0
    if kind == "frazil":
        catalog = frazil_catalog(work)
        inner = catalog.commit_table

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal attempts
            attempts += 1
            return inner(*args, **kwargs)

        catalog.commit_table = counting
        table = catalog.load_table(table_name)
        start_at = _wait_for_start()
        while time.time() < start_at + seconds:
            table.append(WRITER_ROWS)
            commits += 1
            if time.time() <= start_at + seconds:
                in_time += 1
    else:
        from pyiceberg.catalog.sql import SqlCatalog

        py_catalog = SqlCatalog(
            CATALOG, uri=f"sqlite:///{work / 'catalog.db'}", warehouse=f"file://{work / 'wh'}"
        )
        py_inner = py_catalog.commit_table

        def py_counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal attempts
            attempts += 1
            return py_inner(*args, **kwargs)

        py_catalog.commit_table = py_counting  # type: ignore[method-assign]
        table = py_catalog.load_table(table_name)
        start_at = _wait_for_start()
        while time.time() < start_at + seconds:
            table.append(WRITER_ROWS)  # pyiceberg retries per commit.retry.* itself
            commits += 1
            if time.time() <= start_at + seconds:
                in_time += 1
    ended = time.time()
    print(json.dumps({"commits": commits, "attempts": attempts, "in_time": in_time,
                      "elapsed": ended - start_at}))  # fmt: skip


@dataclass(frozen=True)
class Concurrent:
    contender: str
    writers: int
    commits: int
    attempts: int
    elapsed: float  # until the last writer's last commit landed
    seconds: float  # the run's length
    in_time: int  # commits landed within it

    @property
    def per_second(self) -> float:
        return self.in_time / self.seconds

    @property
    def retries_per_commit(self) -> float:
        return (self.attempts - self.commits) / self.commits


def run_concurrent(work: Path, kind: str, writers: int, seconds: float) -> Concurrent:
    catalog = frazil_catalog(work)
    name = f"concurrent_{kind}"
    _new_table(catalog, name, {"commit.retry.num-retries": "1000"})
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--writer",
                kind,
                "--table",
                f"{NAMESPACE}.{name}",
                "--seconds",
                str(seconds),
                "--work",
                str(work),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(writers)
    ]
    # Every writer set up (imports, catalog, table loaded) before the clock starts.
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"a {kind} writer did not start (exit {proc.wait()})")
    start_at = time.time() + 0.5
    outs = []
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{start_at}\n")
        proc.stdin.flush()
    for proc in procs:
        stdout, _ = proc.communicate(timeout=seconds + 600)
        if proc.returncode != 0:
            raise RuntimeError(f"a {kind} writer failed (exit {proc.returncode})")
        outs.append(json.loads(stdout.strip().splitlines()[-1]))
    result = Concurrent(
        kind, writers, sum(o["commits"] for o in outs), sum(o["attempts"] for o in outs),
        max(o["elapsed"] for o in outs), seconds, sum(o["in_time"] for o in outs),
    )  # fmt: skip
    # Every commit landed once, in one linear history.
    table = catalog.load_table(f"{NAMESPACE}.{name}")
    if table.current_snapshot() is None:
        raise AssertionError(f"{kind}: no commit landed ({result})")
    chain, snapshot = 0, table.current_snapshot()
    while snapshot is not None:
        chain += 1
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else table.snapshot_by_id(parent)
    total = int(table.current_snapshot().summary["total-records"])
    if not (chain == len(table.snapshots()) == result.commits and total == 10 * result.commits):
        raise AssertionError(
            f"{kind}: {result.commits} commits reported, {len(table.snapshots())} snapshots, "
            f"{chain} in the main history, {total} rows"
        )
    return result


def profile_append(work: Path, base: Base) -> None:
    import cProfile
    import pstats

    frazil = Frazil(work)
    for _ in range(3):
        reset(work, base)
        frazil.append(base, tiny_file(work, base))
    profiler = cProfile.Profile()
    for _ in range(10):
        reset(work, base)
        tiny = tiny_file(work, base)
        profiler.enable()
        frazil.append(base, tiny)
        profiler.disable()
    reset(work, base)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    import commit_report

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CONTENDERS), help="frazil,pyiceberg,java")
    parser.add_argument("--parts", default="append,expire,concurrent")
    parser.add_argument("--sizes", default="1000,10000,100000", help="data files per table")
    parser.add_argument("--rounds", type=int, default=15, help="append rounds")
    parser.add_argument("--warmup", type=int, default=5, help="untimed appends per contender")
    parser.add_argument("--expire-rounds", type=int, default=3)
    parser.add_argument("--expire-snapshots", type=int, default=1000)
    parser.add_argument("--expire-files", type=int, default=100, help="files per snapshot")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="concurrent run length")
    parser.add_argument("--java-opts", default="-Xms1g -Xmx4g")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile frazil's append (or, with --parts expire alone, its expiry)",
    )
    parser.add_argument(
        "--java-cleanup",
        default="reachable",
        choices=["reachable", "incremental", "auto"],
        help="Java's expiry file cleanup (see the docstring)",
    )
    parser.add_argument("--output", type=Path, help="default benches/RESULTS.md")
    parser.add_argument("--work", type=Path, default=WORK)
    # A concurrent writer (internal).
    parser.add_argument("--writer", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    work: Path = args.work
    if args.writer:
        writer(args.writer, work, args.table, args.seconds)
        return
    work.mkdir(parents=True, exist_ok=True)
    wanted = {s.strip() for s in args.only.split(",") if s.strip()}
    parts = {s.strip() for s in args.parts.split(",") if s.strip()}
    started = time.monotonic()
    sizes = [int(s) for s in args.sizes.split(",")]
    expiring = None
    if "expire" in parts:
        print(f"expiry table (generated once, cached under {work}) ...", flush=True)
        expire_base = expire_table(work, args.expire_snapshots, args.expire_files)
        expiring = ExpireCopy(work, expire_base, args.expire_snapshots * args.expire_files)
        if args.profile and parts == {"expire"}:
            profile_expire(work, expiring)
            return
    bases = []
    if "append" in parts or args.profile:
        print(f"tables (generated once, cached under {work}) ...", flush=True)
        bases = [files_table(work, n) for n in sizes]
    if args.profile:
        profile_append(work, bases[-1])
        return
    report = commit_report.Report(load_before=os.getloadavg())
    contenders: list[Contender] = []
    try:
        if "frazil" in wanted:
            contenders.append(Frazil(work))
        if "pyiceberg" in wanted:
            contenders.append(Pyiceberg(work))
        if "java" in wanted and parts & {"append", "expire"}:
            print("compiling and starting CommitBench.java ...", flush=True)
            contenders.append(Java(work, args.java_opts, args.java_cleanup))
        report.notes = [c.note for c in contenders]
        if "append" in parts:
            report.bases = bases
            report.append = run_append(work, contenders, bases, args.rounds, args.warmup)
            report.rounds = args.rounds
        if expiring is not None:
            report.expire_base = expiring.base
            report.expire_added = args.expire_snapshots * args.expire_files
            report.expire_cleanup = args.java_cleanup
            report.expire, report.expire_deleted = run_expire(
                work, contenders, expiring, args.expire_rounds
            )
    finally:
        for c in contenders:
            c.close()
    if "concurrent" in parts:
        for kind in [k for k in ("frazil", "pyiceberg") if k in wanted]:
            print(f"{args.writers} concurrent {kind} writers for {args.seconds} s ...", flush=True)
            result = run_concurrent(work, kind, args.writers, args.seconds)
            print(f"  {result}", flush=True)
            report.concurrent.append(result)
    report.load_after = os.getloadavg()
    report.elapsed = time.monotonic() - started
    report.command = " ".join(["benches/bench_commit.py", *sys.argv[1:]])
    text = commit_report.section(report)
    print(text)
    if "frazil" in wanted:
        commit_report.splice(args.output or BENCH_DIR / "RESULTS.md", text)


if __name__ == "__main__":
    main()
