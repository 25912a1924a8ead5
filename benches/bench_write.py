"""Write benchmark: frazil's append against pyiceberg's and the pyarrow floor.

The data (generated once with vectorized numpy/pyarrow and cached as an Arrow IPC file under
benches/.work/, so generation is never timed): ``rows`` rows, 10 columns of mixed types (long
``id``, timestamptz ``ts`` over ``DAYS`` days in random order, int, double with 1% nulls, a
low-cardinality string, a ~30-character string with 1% nulls, decimal(12, 2), date, boolean,
16-byte binary).

Cases: the table unpartitioned, and partitioned by ``day(ts), bucket[16](id)`` (``DAYS`` x 16
partitions). Contenders, each writing the whole pyarrow Table into a fresh table:

- frazil: ``table.append(data)`` once ``Table.append`` exists; until then what it will do:
  ``write_data_files`` (the Parquet data files with their metrics), one manifest
  (``frazil.manifest.write_manifest``) and a manifest list; no catalog commit (a few
  milliseconds at most);
- pyiceberg: ``table.append(data)`` on a ``SqlCatalog`` over SQLite (write, manifests, commit);
- floor: ``pq.write_table(data, path, compression="zstd")``, one file, no Iceberg logic;
  the same for both cases (it does not partition);
- floor-parallel: the data cut into one slice per core, each written by
  ``pq.write_table`` in its own thread (reported for the question "would a multi-file floor
  be fairer"; the targets use the one-file floor).

Before timing, each contender's output is read back with pyarrow and checked against the
input (rows, ``sum(id)``, ``sum(qty)``, ``sum(amount)``, non-null ``note`` values, and for
frazil the record counts of its data files). Then ``--rounds`` interleaved rounds (each round
runs every case once per contender, in an order rotated each round); min and median wall
seconds and CPU seconds of the process.

    .venv/bin/python benches/bench_write.py             # 10M rows; writes benches/RESULTS.md
    .venv/bin/python benches/bench_write.py --small     # 1M rows: a quick check

Build frazil in release first: ``VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

# Run as a script: benches/ is on sys.path, so its modules import by name.
import write_report

BENCH_DIR = Path(__file__).resolve().parent
WORK = BENCH_DIR / ".work"
CONTENDERS = ("frazil", "pyiceberg", "pyarrow", "pyarrow-parallel")
CASES = ("unpartitioned", "partitioned")
FULL_ROWS, SMALL_ROWS, DAYS, BUCKETS = 10_000_000, 1_000_000, 10, 16
DATA_VERSION = 1  # bump when the generator changes: the cache file name carries it
START_MICROS = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
CATEGORIES = ["books", "garden", "toys", "music", "electronics", "kitchen", "sports", "beauty",
              "office", "pets", "auto", "baby", "games", "health", "tools", "grocery"]  # fmt: skip


# --------------------------------------------------------------------------------- data


def _with_nulls(array: pa.Array, rng: np.random.Generator, fraction: float) -> pa.Array:
    mask = pa.array(rng.random(len(array)) < fraction)
    return pc.if_else(mask, pa.nulls(len(array), array.type), array)


def generate(rows: int, seed: int = 20261124) -> pa.Table:
    """The benchmark's rows, vectorized (no Python loop over rows)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(rows, dtype=np.int64)
    micros = START_MICROS + rng.integers(0, DAYS * 86_400_000_000, rows, dtype=np.int64)
    category = pa.array(CATEGORIES).take(pa.array(rng.integers(0, len(CATEGORIES), rows)))
    # ~30 characters: "order-<12 digits>-<category>".
    digits = pc.utf8_lpad(pc.cast(pa.array((ids * 7919) % 10**12), pa.string()), 12, "0")
    note = pc.binary_join_element_wise("order", digits, category, "-")
    unscaled = rng.integers(-(10**9), 10**9, rows, dtype=np.int64)
    # decimal128 values are 16-byte little-endian two's complement: the int64 sign-extended.
    words = np.empty((rows, 2), dtype=np.int64)
    words[:, 0] = unscaled
    words[:, 1] = unscaled >> 63
    amount = pa.Array.from_buffers(pa.decimal128(12, 2), rows, [None, pa.py_buffer(words)])
    payload = pa.Array.from_buffers(
        pa.binary(),
        rows,
        [None, pa.py_buffer(np.arange(rows + 1, dtype=np.int32) * 16),
         pa.py_buffer(rng.integers(0, 256, rows * 16, dtype=np.uint8))],
    )  # fmt: skip
    return pa.table(
        {
            "id": pa.array(ids),
            "ts": pa.array(micros).cast(pa.timestamp("us", "UTC")),
            "qty": pa.array(rng.integers(0, 1000, rows, dtype=np.int32)),
            "price": _with_nulls(pa.array(rng.random(rows) * 1000), rng, 0.01),
            "category": category,
            "note": _with_nulls(note, rng, 0.01),
            "amount": amount,
            "day": pa.array(rng.integers(19_000, 21_000, rows, dtype=np.int32)).cast(pa.date32()),
            "flag": pa.array(rng.random(rows) < 0.3),
            "payload": payload,
        }
    )


def cached_data(rows: int) -> tuple[pa.Table, Path, float]:
    """The rows, from benches/.work/ when generated before; the file and the seconds spent
    generating (0 when cached)."""
    path = WORK / f"write-data-v{DATA_VERSION}-{rows}.arrow"
    seconds = 0.0
    if not path.exists():
        start = time.perf_counter()
        table = generate(rows)
        WORK.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with pa.OSFile(str(partial), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=1 << 17)
        partial.rename(path)
        seconds = time.perf_counter() - start
    # Read into memory (not mapped): no contender pays for page faults.
    with pa.OSFile(str(path), "rb") as source:
        table = ipc.open_file(source).read_all()
    return table, path, seconds


@dataclass(frozen=True)
class Signature:
    """What a written table holds: rows, sums of ``id``, ``qty`` and unscaled ``amount``, and
    the non-null ``note`` values."""

    rows: int
    sum_id: int
    sum_qty: int
    sum_amount: str
    notes: int

    def __str__(self) -> str:
        return (
            f"{self.rows:,} rows, sum(id) {self.sum_id}, sum(qty) {self.sum_qty}, "
            f"sum(amount) {self.sum_amount}, {self.notes:,} notes"
        )


def signature(table: pa.Table) -> Signature:
    def total(name: str) -> Any:
        return pc.sum(table.column(name)).as_py() or 0

    notes = table.num_rows - table.column("note").null_count
    return Signature(
        table.num_rows, int(total("id")), int(total("qty")), str(total("amount")), notes
    )


def read_files(paths: list[str]) -> pa.Table:
    columns = ["id", "qty", "amount", "note"]
    return pa.concat_tables(pq.read_table(p, columns=columns) for p in paths)


# ---------------------------------------------------------------------------- contenders


class Written:
    """What one write left: its data files (for the check) and the record counts the writer
    reported, summed (None when it reports none). ``files`` may be a callable returning both,
    called after the timing (listing a table's files is not part of its write)."""

    def __init__(
        self, files: list[str] | Callable[[], tuple[list[str], int]], records: int | None = None
    ) -> None:
        self._files = files
        self._records = records

    def resolve(self) -> Written:
        if callable(self._files):
            self._files, self._records = self._files()
        return self

    @property
    def files(self) -> list[str]:
        assert not callable(self._files), "resolve() first"
        return self._files

    @property
    def records(self) -> int | None:
        return self._records


class Contender:
    name = ""
    note = ""

    def prepare(self, case: str, data: pa.Table, where: Path) -> Callable[[], Written]:
        """A fresh table for ``case`` under ``where`` (not timed); returns the timed write."""
        raise NotImplementedError


SCHEMA_JSON: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": i + 1, "name": name, "required": False, "type": kind}
        for i, (name, kind) in enumerate(
            [
                ("id", "long"),
                ("ts", "timestamptz"),
                ("qty", "int"),
                ("price", "double"),
                ("category", "string"),
                ("note", "string"),
                ("amount", "decimal(12, 2)"),
                ("day", "date"),
                ("flag", "boolean"),
                ("payload", "binary"),
            ]
        )
    ],
}


class Frazil(Contender):
    name = "frazil"

    def __init__(self) -> None:
        import frazil

        self.note = (
            f"frazil {getattr(frazil, '__version__', '?')}: `table.append(data)` (data files, "
            "manifest, manifest list and the catalog commit), InMemoryCatalog"
        )

    def prepare(self, case: str, data: pa.Table, where: Path) -> Callable[[], Written]:
        from frazil.catalog.memory import InMemoryCatalog
        from frazil.schema import Schema

        catalog = InMemoryCatalog(warehouse=str(where))
        catalog.create_namespace("bench")
        table = catalog.create_table(("bench", case), Schema.from_json(SCHEMA_JSON))
        if case == "partitioned":
            with table.update_spec() as update:
                update.add_field("ts", "day").add_field("id", f"bucket[{BUCKETS}]")

        def append() -> Written:
            table.append(data)
            return Written(lambda: _frazil_files(table, case))

        return append


def _frazil_files(table: Any, case: str) -> tuple[list[str], int]:
    """The data files of the table's one snapshot (listed after the timing) and the records
    they report, after checking the append committed it."""
    table.refresh()
    snapshots = table.metadata.snapshots
    if len(snapshots) != 1 or snapshots[0].operation != "append":
        raise AssertionError(f"{case}: frazil's append left snapshots {snapshots}")
    files = table.inspect.files()
    paths = [str(p) for p in files.column("file_path").to_pylist()]
    return paths, sum(files.column("record_count").to_pylist())


class Pyiceberg(Contender):
    name = "pyiceberg"

    def __init__(self) -> None:
        import pyiceberg

        self.note = f"pyiceberg {pyiceberg.__version__}: `table.append(data)`, SqlCatalog on SQLite"

    def prepare(self, case: str, data: pa.Table, where: Path) -> Callable[[], Written]:
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.transforms import BucketTransform, DayTransform

        where.mkdir(parents=True, exist_ok=True)
        catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{where}/catalog.db", warehouse=f"file://{where}"
        )
        catalog.create_namespace("bench")
        table = catalog.create_table(("bench", case), schema=data.schema)
        if case == "partitioned":
            with table.update_spec() as update:
                update.add_field("ts", DayTransform(), "ts_day")
                update.add_field("id", BucketTransform(BUCKETS), "id_bucket")

        def append() -> Written:
            table.append(data)
            files = table.inspect.files().column("file_path").to_pylist()
            return Written([str(p).removeprefix("file://") for p in files])

        return append


class Floor(Contender):
    name = "pyarrow"
    note = 'floor: `pq.write_table(data, path, compression="zstd")`, one file'

    def prepare(self, case: str, data: pa.Table, where: Path) -> Callable[[], Written]:
        where.mkdir(parents=True, exist_ok=True)
        path = str(where / "data.parquet")

        def write() -> Written:
            pq.write_table(data, path, compression="zstd")
            return Written([path])

        return write


class ParallelFloor(Contender):
    name = "pyarrow-parallel"

    def __init__(self) -> None:
        self.threads = os.cpu_count() or 1
        self.pool = ThreadPoolExecutor(max_workers=self.threads)
        self.note = (
            f"parallel floor: {self.threads} slices, each `pq.write_table(slice, path, "
            'compression="zstd")` in its own thread'
        )

    def prepare(self, case: str, data: pa.Table, where: Path) -> Callable[[], Written]:
        where.mkdir(parents=True, exist_ok=True)
        step = -(-data.num_rows // self.threads)
        parts = [(data.slice(i * step, step), str(where / f"data-{i}.parquet"))
                 for i in range(self.threads)]  # fmt: skip

        def one(part: tuple[pa.Table, str]) -> str:
            pq.write_table(part[0], part[1], compression="zstd")
            return part[1]

        return lambda: Written(list(self.pool.map(one, parts)))


# ------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    contender: str
    case: str
    files: int = 0
    bytes: int = 0
    times: list[float] = field(default_factory=list)  # wall seconds
    # CPU seconds of this process (every thread): steadier than wall time on a shared
    # machine.
    cpu: list[float] = field(default_factory=list)


def _timed(
    contender: Contender, case: str, data: pa.Table, round_dir: Path
) -> tuple[Written, float, float]:
    where = round_dir / f"{contender.name}-{case}"
    shutil.rmtree(where, ignore_errors=True)
    write = contender.prepare(case, data, where)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    written = write()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return written.resolve(), wall, cpu


def check_all(
    contenders: list[Contender], data: pa.Table, expected: Signature, scratch: Path
) -> dict[tuple[str, str], Outcome]:
    """One write per contender and case, read back and compared with the input."""
    outcomes: dict[tuple[str, str], Outcome] = {}
    for case in CASES:
        for c in contenders:
            written, _, _ = _timed(c, case, data, scratch)
            got = signature(read_files(written.files))
            size = sum(os.path.getsize(p) for p in written.files)
            print(f"  {case:13} {c.name:16} {len(written.files):4} files, {size / 1e6:.0f} MB: "
                  f"{got}", flush=True)  # fmt: skip
            if got != expected:
                raise AssertionError(f"{case}: {c.name} wrote {got}; the input has {expected}")
            if written.records is not None and written.records != expected.rows:
                raise AssertionError(
                    f"{case}: {c.name}'s data files report {written.records:,} records"
                )
            outcomes[c.name, case] = Outcome(c.name, case, len(written.files), size)
            shutil.rmtree(scratch / f"{c.name}-{case}", ignore_errors=True)
    return outcomes


def time_rounds(
    contenders: list[Contender],
    data: pa.Table,
    outcomes: dict[tuple[str, str], Outcome],
    rounds: int,
    scratch: Path,
    started: float,
) -> None:
    for r in range(rounds):
        for case in CASES:
            k = r % len(contenders)
            for c in contenders[k:] + contenders[:k]:
                written, wall, cpu = _timed(c, case, data, scratch)
                out = outcomes[c.name, case]
                if len(written.files) != out.files:
                    raise AssertionError(f"{c.name} wrote {len(written.files)} files of {case}")
                out.times.append(wall)
                out.cpu.append(cpu)
                shutil.rmtree(scratch / f"{c.name}-{case}", ignore_errors=True)
        print(f"  round {r + 1}/{rounds} done at {time.monotonic() - started:.0f} s", flush=True)


# -------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CONTENDERS), help=",".join(CONTENDERS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", action="store_true", help=f"{SMALL_ROWS:,} rows, not 10M")
    parser.add_argument("--rows", type=int, help="rows written (overrides --small)")
    parser.add_argument(
        "--output", type=Path, default=BENCH_DIR / "RESULTS.md", help="where to write the section"
    )
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    args = parser.parse_args()
    if args.no_write:
        args.output = None
    started = time.monotonic()
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(wanted) - set(CONTENDERS)
    if unknown:
        parser.error(f"unknown contenders {sorted(unknown)}; choose from {CONTENDERS}")
    rows = args.rows or (SMALL_ROWS if args.small else FULL_ROWS)
    data, path, generated = cached_data(rows)
    expected = signature(data)
    print(f"data: {path} ({data.nbytes / 1e6:.0f} MB in memory): {expected}", flush=True)
    makers: dict[str, Callable[[], Contender]] = {
        "frazil": Frazil, "pyiceberg": Pyiceberg, "pyarrow": Floor,
        "pyarrow-parallel": ParallelFloor,
    }  # fmt: skip
    contenders = [makers[name]() for name in CONTENDERS if name in wanted]
    scratch = WORK / "write-runs"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        print("checking every contender's files against the input ...", flush=True)
        outcomes = check_all(contenders, data, expected, scratch)
        load_before = os.getloadavg()
        print(f"timing {args.rounds} interleaved rounds ...", flush=True)
        time_rounds(contenders, data, outcomes, args.rounds, scratch, started)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for c in contenders:
            if isinstance(c, ParallelFloor):
                c.pool.shutdown()
    section = write_report.section(
        rows=rows,
        data_bytes=data.nbytes,
        generated=generated,
        contenders=[c.name for c in contenders],
        notes=[c.note for c in contenders],
        outcomes=outcomes,
        load=(load_before, load_after),
        rounds=args.rounds,
        small=rows < FULL_ROWS,
        elapsed=time.monotonic() - started,
    )
    print(section)
    if "frazil" in wanted:
        write_report.write(args.output, write_report.MARKERS, section)
    else:
        print("not written: frazil did not run")


if __name__ == "__main__":
    main()
