"""Read benchmark: frazil's ``scan().to_arrow()`` against pyiceberg, DuckDB and the pyarrow floor.

The tables (benches/read_table.py, written once by Apache Iceberg Java through PySpark and
cached under benches/.work/): ``rows`` rows over ``days`` day partitions (one Parquet file a
day), 9 columns of mixed types, in three variants: no deletes; 10% of rows deleted by Spark's
merge-on-read position deletes; ``rows / 10`` equality-delete keys (one global file written by
Java's EqualityDeleteWriter) over the same data files.

Contenders, every one reading every variant whole (all columns) into one pyarrow Table:

- frazil: ``frazil.StaticTable.from_metadata(path).scan().to_arrow()``;
- pyiceberg: ``pyiceberg.table.StaticTable.from_metadata(path).scan().to_arrow()`` (0.12
  refuses equality deletes: reported "unsupported", not timed);
- DuckDB: ``SELECT * FROM iceberg_scan('path')`` through ``.to_arrow_table()`` (the iceberg
  extension from the PyPI wheels, in a temporary extension directory);
- floor: pyarrow's Parquet reader over the same data files (``pq.ParquetFile(path,
  pre_buffer=True).read()`` per file, one file per core at a time, ``pa.concat_tables``), no
  Iceberg logic (no planning, no deletes: it returns the deleted rows too).

Before timing, each contender's result is checked against Spark's read of the same snapshot
(row count, ``sum(id)``, ``sum(qty)``, non-null ``note`` values; the floor: the data files'
record count) and against the other contenders' column names; a difference stops the run.
Then ``--rounds`` interleaved rounds (each round runs every variant once per contender, in an
order rotated each round); min and median wall seconds.

``--memory``: a table of more than 4 GB of Parquet with position and equality deletes (built
once, a separate cached step), consumed through ``scan.to_batches()`` batch by batch in a
fresh process; its peak RSS (VmHWM).

    .venv/bin/python benches/bench_read.py              # 10M rows; writes benches/RESULTS.md
    .venv/bin/python benches/bench_read.py --small      # 1M rows: a quick check
    .venv/bin/python benches/bench_read.py --memory     # the 4 GB streaming table

Build frazil in release first: ``VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

# Run as a script: benches/ is on sys.path, so its modules import by name.
import read_report
from _report import interleaved
from read_table import Variant, cached_memory_table, cached_tables

BENCH_DIR = Path(__file__).resolve().parent
CONTENDERS = ("frazil", "pyiceberg", "duckdb", "pyarrow")
FULL_ROWS, SMALL_ROWS, DAYS = 10_000_000, 1_000_000, 20
MEMORY_BYTES, SMALL_MEMORY_BYTES = 4_300_000_000, 300_000_000
MEMORY_ROWS_PER_DAY = 1_000_000


# ---------------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Signature:
    """What a read returned: rows, ``sum(id)``, ``sum(qty)``, non-null ``note`` values."""

    rows: int
    sum_id: int
    sum_qty: int
    notes: int

    def __str__(self) -> str:
        return f"{self.rows:,} rows, sum(id) {self.sum_id}, sum(qty) {self.sum_qty}, " + (
            f"{self.notes:,} notes"
        )


def signature(table: pa.Table) -> Signature:
    def total(name: str) -> int:
        value = pc.sum(table.column(name)).as_py()
        return int(value or 0)

    return Signature(
        table.num_rows, total("id"), total("qty"), table.num_rows - table.column("note").null_count
    )


def truth(variant: Variant) -> Signature:
    return Signature(variant.rows, variant.sum_id, variant.sum_qty, variant.notes)


class Unsupported(Exception):
    """The contender cannot read this variant (reported as such, never as a number)."""


class TimedOut(Exception):
    """The contender did not finish within ``--timeout`` seconds (reported, never timed)."""


class Contender:
    name = ""
    note = ""

    def read(self, variant: Variant) -> pa.Table:
        raise NotImplementedError

    def close(self) -> None:
        pass


class Frazil(Contender):
    name = "frazil"

    def __init__(self) -> None:
        import frazil

        self.frazil: Any = frazil
        self.note = f"frazil {getattr(frazil, '__version__', '?')}"

    def read(self, variant: Variant) -> pa.Table:
        table = self.frazil.StaticTable.from_metadata(variant.metadata)
        return table.scan().to_arrow()


class Pyiceberg(Contender):
    name = "pyiceberg"

    def __init__(self) -> None:
        import pyiceberg
        from pyiceberg.table import StaticTable

        self.static_table = StaticTable
        self.note = f"pyiceberg {pyiceberg.__version__}"

    def read(self, variant: Variant) -> pa.Table:
        table = self.static_table.from_metadata(variant.metadata)
        try:
            return table.scan().to_arrow()
        except ValueError as error:
            # pyiceberg 0.12: "PyIceberg does not yet support equality deletes".
            if "equality deletes" in str(error):
                raise Unsupported(str(error)) from None
            raise


class DuckDB(Contender):
    name = "duckdb"

    def __init__(self, limit: float) -> None:
        import duckdb
        from duckdb_extensions import import_extension  # type: ignore[import-untyped]

        # A throwaway extension directory: nothing lands in ~/.duckdb.
        self.extensions = tempfile.mkdtemp(prefix="frazil-bench-duckdb-")
        self.con = duckdb.connect(config={"extension_directory": self.extensions})
        for name in ("avro", "iceberg"):
            import_extension(name, con=self.con)
            self.con.sql(f"LOAD {name}")
        ((iceberg,),) = self.con.sql(
            "SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'iceberg'"
        ).fetchall()
        self.note = f"DuckDB {duckdb.__version__}, iceberg extension {iceberg}"
        self.limit = limit
        self.interrupted = duckdb.InterruptException

    def read(self, variant: Variant) -> pa.Table:
        # DuckDB can be interrupted from another thread: a read past the limit is stopped
        # (its equality deletes can take minutes).
        timer = threading.Timer(self.limit, self.con.interrupt)
        timer.start()
        try:
            query = self.con.sql(f"SELECT * FROM iceberg_scan('{variant.metadata}')")
            return query.to_arrow_table()
        except self.interrupted:
            raise TimedOut(f"interrupted after {self.limit:g} s") from None
        except Exception as error:  # duckdb raises its own exception classes
            if "equality delete" in str(error).lower() or "not supported" in str(error).lower():
                raise Unsupported(str(error).splitlines()[0]) from None
            raise
        finally:
            timer.cancel()

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self.extensions, ignore_errors=True)


class Floor(Contender):
    """pyarrow over the variant's data files: what reading the Parquet costs by itself.

    Each file through ``pq.ParquetFile(path, pre_buffer=True).read()``, one file per core at
    a time, then ``pa.concat_tables``: at 1M rows this was about twice as fast as
    ``pyarrow.dataset.dataset(files).to_table()`` (and ``pq.read_table(files)``, the same
    dataset path), so it is the lower, fairer floor."""

    name = "pyarrow"

    def __init__(self) -> None:
        import pyarrow.parquet as pq

        self.pq = pq
        self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        self.note = (
            "floor: `pq.ParquetFile(f, pre_buffer=True).read()` per data file, "
            f"{os.cpu_count()} files at once, `pa.concat_tables`"
        )

    def _one(self, path: str) -> pa.Table:
        with self.pq.ParquetFile(path, pre_buffer=True) as parquet:
            return parquet.read()

    def read(self, variant: Variant) -> pa.Table:
        return pa.concat_tables(self.pool.map(self._one, variant.data_files))

    def close(self) -> None:
        self.pool.shutdown()


# ------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    contender: str
    variant: str
    status: str = "ok"  # "ok", "unsupported: ...", "timed out: ..."
    signature: Signature | None = None
    times: list[float] = field(default_factory=list)  # wall seconds
    # CPU seconds of this process (every thread: pyarrow's, DuckDB's, frazil's pool), a
    # steadier view than wall time on a shared machine.
    cpu: list[float] = field(default_factory=list)


def check_all(
    contenders: list[Contender], variants: tuple[Variant, ...]
) -> dict[tuple[str, str], Outcome]:
    """Every contender's read of every variant, against Spark's (the floor: against the data
    files' record count); raises on any difference."""
    outcomes: dict[tuple[str, str], Outcome] = {}
    for variant in variants:
        names: tuple[str, ...] | None = None
        for c in contenders:
            out = Outcome(c.name, variant.name)
            outcomes[c.name, variant.name] = out
            try:
                table = c.read(variant)
            except Unsupported as error:
                out.status = f"unsupported: {error}"
                print(f"  {variant.name:11} {c.name:10} {out.status}", flush=True)
                continue
            except TimedOut as error:
                out.status = f"timed out: {error}"
                print(f"  {variant.name:11} {c.name:10} {out.status}", flush=True)
                continue
            out.signature = signature(table)
            print(f"  {variant.name:11} {c.name:10} {out.signature}", flush=True)
            if isinstance(c, Floor):
                if table.num_rows != variant.data_rows:
                    raise AssertionError(
                        f"{variant.name}: the floor read {table.num_rows:,} rows, the data "
                        f"files hold {variant.data_rows:,}"
                    )
            elif out.signature != truth(variant):
                raise AssertionError(
                    f"{variant.name}: {c.name} read {out.signature}; Spark reads {truth(variant)}"
                )
            if names is None:
                names = tuple(table.column_names)
            elif tuple(table.column_names) != names:
                raise AssertionError(
                    f"{variant.name}: {c.name} returned columns {table.column_names}, "
                    f"others {list(names)}"
                )
            del table
            gc.collect()
    return outcomes


def time_rounds(
    contenders: list[Contender],
    variants: tuple[Variant, ...],
    outcomes: dict[tuple[str, str], Outcome],
    rounds: int,
    started: float,
) -> None:
    for c, variant in interleaved(contenders, variants, rounds, started):
        out = outcomes[c.name, variant.name]
        if out.status != "ok":
            continue
        start, cpu = time.perf_counter(), time.process_time()
        table = c.read(variant)
        out.times.append(time.perf_counter() - start)
        out.cpu.append(time.process_time() - cpu)
        if table.num_rows != (out.signature.rows if out.signature else -1):
            raise AssertionError(f"{c.name} read {table.num_rows} rows of {variant.name}")
        del table
        gc.collect()


# --------------------------------------------------------------------- streaming memory

# A plain ``python -c`` child, so nothing of this process is loaded in it. Its peak RSS is
# its own VmHWM (/proc/self/status): ``ru_maxrss`` from ``os.wait4`` carries this process's
# high-water mark over the child's exec (subprocess uses vfork).
STREAM_CHILD = """
import json, re, sys, time
spec = json.loads(sys.argv[1])
def hwm():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
import pyarrow as pa, pyarrow.compute as pc
if spec["contender"] == "frazil":
    import frazil
    idle = hwm()
    start = time.perf_counter()
    reader = frazil.StaticTable.from_metadata(spec["metadata"]).scan().to_batches()
else:
    import pyarrow.dataset as ds
    idle = hwm()
    start = time.perf_counter()
    reader = ds.dataset(spec["data_files"], format="parquet").scanner().to_reader()
rows = batches = biggest = sum_id = 0
for batch in reader:
    rows += batch.num_rows
    batches += 1
    biggest = max(biggest, batch.nbytes)
    sum_id += pc.sum(batch.column("id")).as_py() or 0
print(json.dumps({"rows": rows, "sum_id": sum_id, "batches": batches, "biggest": biggest,
                  "seconds": time.perf_counter() - start, "idle": idle, "peak": hwm()}))
"""


@dataclass(frozen=True)
class Stream:
    contender: str
    rows: int
    sum_id: int
    batches: int
    biggest_batch: int
    seconds: float
    idle_rss: int  # after the imports, before the scan
    peak_rss: int


def stream_in_child(contender: str, variant: Variant) -> Stream:
    spec = {"contender": contender, "metadata": variant.metadata,
            "data_files": list(variant.data_files)}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", STREAM_CHILD, json.dumps(spec)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{contender} child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    reply = json.loads(proc.stdout.strip().splitlines()[-1])
    return Stream(contender, reply["rows"], reply["sum_id"], reply["batches"], reply["biggest"],
                  reply["seconds"], reply["idle"], reply["peak"])  # fmt: skip


def run_memory(args: argparse.Namespace, started: float) -> None:
    target = SMALL_MEMORY_BYTES if args.small else MEMORY_BYTES
    # --small keeps the full run's file size (one file a day of MEMORY_ROWS_PER_DAY rows,
    # about 80 MB): the peak depends on the files in flight, not on the table's size.
    tables = cached_memory_table(target, MEMORY_ROWS_PER_DAY)
    variant = tables.variants[0]
    print(
        f"table: {tables.rows:,} rows in {len(variant.data_files)} data files, "
        f"{variant.data_bytes / 1e9:.2f} GB of Parquet, {variant.delete_files} delete files; "
        f"Spark reads {variant.rows:,} rows; {variant.metadata}",
        flush=True,
    )
    streams: list[Stream] = []
    for contender in ("frazil", "pyarrow"):
        s = stream_in_child(contender, variant)
        print(f"  {contender}: {s}", flush=True)
        expected = (variant.rows, variant.sum_id) if contender == "frazil" else None
        if expected is not None and (s.rows, s.sum_id) != expected:
            raise AssertionError(f"frazil streamed {s.rows} rows, sum(id) {s.sum_id}; Spark "
                                 f"reads {expected}")  # fmt: skip
        if contender == "pyarrow" and s.rows != variant.data_rows:
            raise AssertionError(f"the floor streamed {s.rows} rows of {variant.data_rows}")
        streams.append(s)
    section = read_report.memory_section(
        tables=tables, streams=streams, small=args.small, elapsed=time.monotonic() - started
    )
    print(section)
    read_report.write(args.output, read_report.MEMORY_MARKERS, section)


# -------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CONTENDERS), help=",".join(CONTENDERS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", action="store_true", help=f"{SMALL_ROWS:,} rows, not 10M")
    parser.add_argument("--rows", type=int, help="rows of the tables (overrides --small)")
    parser.add_argument("--memory", action="store_true", help="the streaming-memory run only")
    parser.add_argument(
        "--timeout", type=float, default=300, help="DuckDB reads stopped after this many seconds"
    )
    parser.add_argument(
        "--output", type=Path, default=BENCH_DIR / "RESULTS.md", help="where to write the section"
    )
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    args = parser.parse_args()
    if args.no_write:
        args.output = None
    started = time.monotonic()
    if args.memory:
        run_memory(args, started)
        return
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(wanted) - set(CONTENDERS)
    if unknown:
        parser.error(f"unknown contenders {sorted(unknown)}; choose from {CONTENDERS}")
    rows = args.rows or (SMALL_ROWS if args.small else FULL_ROWS)
    tables = cached_tables(rows, DAYS)
    for v in tables.variants:
        print(
            f"{v.name:11} {v.rows:,} rows ({v.data_rows:,} in {len(v.data_files)} data files, "
            f"{v.data_bytes / 1e6:.0f} MB; {v.delete_files} delete files): {v.metadata}",
            flush=True,
        )
    makers = {"frazil": Frazil, "pyiceberg": Pyiceberg, "duckdb": lambda: DuckDB(args.timeout),
              "pyarrow": Floor}  # fmt: skip
    contenders: list[Contender] = []
    try:
        for name in CONTENDERS:
            if name in wanted:
                contenders.append(makers[name]())
        print("checking every contender's rows against Spark's ...", flush=True)
        outcomes = check_all(contenders, tables.variants)
        load_before = os.getloadavg()
        print(f"timing {args.rounds} interleaved rounds ...", flush=True)
        time_rounds(contenders, tables.variants, outcomes, args.rounds, started)
        load_after = os.getloadavg()
    finally:
        for c in contenders:
            c.close()
    section = read_report.section(
        tables=tables,
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
        read_report.write(args.output, read_report.MARKERS, section)
    else:
        print("not written: frazil did not run")


if __name__ == "__main__":
    main()
