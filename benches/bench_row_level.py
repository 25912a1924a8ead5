"""Row-level changes and compaction: frazil against Iceberg Java 1.10.2 (Spark 3.5, local[2],
one session), pyiceberg and the pyarrow floor, on the same tables (issue 24, "Speed").

The data (``ROWS`` rows, default 10M, generated vectorized): ``id`` long (0..ROWS-1, in
order, so every data file holds a range of ids), ``ts`` timestamptz, ``s`` string,
``d`` double (``id / 4``: sums are exact in any order), ``k`` int (a multiplicative hash of
``id`` into 0..99, so ``k = 7`` is 1% of the rows of every file). Each table is built once by
frazil into a Hadoop-layout warehouse (``FileSystemCatalog``, which Java's Hadoop catalog in
the Spark session reads too); before every run the table directory is restored to that base
state (every file the run added removed, ``version-hint.text`` rewritten), so every contender
starts from the very same files and metadata, and the table properties a contender needs
(``write.*.mode``) are set before the clock starts.

Cases:

1. ``delete``: delete ``k = 7`` (1% of a table of ``--files`` appends, so 2 files an append;
   the filter touches every file), v2 (position deletes) and v3 (deletion vectors): frazil
   merge-on-read, frazil copy-on-write, Java's Spark ``DELETE FROM`` in merge-on-read. Then the
   next full read, frazil's ``scan().to_arrow()``, after frazil's merge-on-read delete against
   the same read of the table without deletes.
2. ``upsert``: ``ROWS / 10`` keys (half of them ids of the table, sampled across every file,
   each with a new ``d`` and ``s``; half new ids) into the table: frazil's ``table.upsert``
   copy-on-write and merge-on-read, frazil's ``table.merge(...)`` (update and insert
   clauses) merge-on-read, Java's ``MERGE INTO ... WHEN MATCHED THEN UPDATE SET * WHEN NOT
   MATCHED THEN INSERT *`` from a cached temp view of the same source, per mode; pyiceberg's
   ``upsert`` (copy-on-write only, through a ``SqlCatalog`` that registers the same metadata
   file) on a tenth of the keys of the same shape, and scaled to all of them.
3. ``rewrite``: ``rewrite_data_files`` (binpack, ``target-file-size-bytes``) of a v2 table of
   ``--small-files`` files (ROWS rows) with 10% of its rows deleted (``k < 10``, frazil's
   merge-on-read delete, part of the base state): frazil's
   ``table.maintenance.rewrite_data_files``, Java's ``CALL <catalog>.system.rewrite_data_files``,
   and the floor: pyarrow reading the same files (a thread per core), dropping the deleted rows
   with a boolean mask computed before the clock starts, and writing the live rows as zstd
   Parquet files of the target size (``pq.write_table``, a thread per core): IO, decode,
   filter and encode, no Iceberg work.

Every run's result is checked after the clock stops against what the data says it must be
(frazil reads the table back: rows, ``sum(id)``, ``sum(d)``, rows of ``k = 7`` and
``k < 10``, rows carrying the source's new ``s``; the operations' own counts; the floor's
files read back), so a fast wrong answer stops the run. One untimed pass of every contender
first (JIT, Python workers and caches warm), then ``--rounds`` interleaved rounds, the
contenders' order rotated each round. Wall seconds, and CPU seconds of this process plus the
Spark JVM.

    .venv/bin/python benches/bench_row_level.py                  # 10M rows; writes RESULTS.md
    .venv/bin/python benches/bench_row_level.py --rows 200000    # a quick check

Build frazil in release first: ``VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "interop"))

from _report import environment_lines, header, how_to_run, min_median, write_section

MARKERS = ("<!-- bench_row_level:begin -->", "<!-- bench_row_level:end -->")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
CATALOG = "bench"  # the Spark catalog's name and frazil's
CASES = ("delete", "upsert", "rewrite")
START_SECONDS = 1_767_225_600  # 2026-01-01T00:00:00Z
UPDATED = "upserted"  # the source rows' s
MOR, COW = "merge-on-read", "copy-on-write"


# --------------------------------------------------------------------------------- data


def bucket_of(ids: np.ndarray) -> np.ndarray:
    """k: a multiplicative (Fibonacci) hash of the id into 0..99, spread over every file."""
    mixed = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return ((mixed >> np.uint64(40)) % np.uint64(100)).astype(np.int32)


def rows_of(ids: np.ndarray, s: pa.Array | None = None, shift: float = 0.0) -> pa.Table:
    """The table's columns for ``ids``; ``s`` (default ``name-<id % 1000>``) and ``d``
    (``id / 4 + shift``) as given."""
    ids = ids.astype(np.int64)
    if s is None:
        s = pc.binary_join_element_wise("name", pc.cast(pa.array(ids % 1000), pa.string()), "-")
    return pa.table(
        {
            "id": pa.array(ids),
            "ts": pa.array((START_SECONDS + ids % 2_592_000) * 1_000_000).cast(
                pa.timestamp("us", "UTC")
            ),
            "s": s,
            "d": pa.array(ids * 0.25 + shift),
            "k": pa.array(bucket_of(ids)),
        }
    )


def upsert_source(rows: int, keys: int, seed: int) -> pa.Table:
    """``keys`` rows: half of them ids of the table (sampled uniformly, so over every file)
    with ``d`` moved by 0.5 and ``s`` = UPDATED, half new ids; shuffled."""
    rng = np.random.default_rng(seed)
    matched = rng.choice(rows, keys // 2, replace=False)
    new = np.arange(rows, rows + keys - keys // 2)
    ids = rng.permutation(np.concatenate([matched, new]))
    return rows_of(ids, pa.array([UPDATED] * len(ids)), shift=0.5)


@dataclass(frozen=True)
class Signature:
    """What a table (or the floor's files) holds."""

    rows: int
    sum_id: int
    sum_d: float
    k7: int  # rows of k = 7
    k10: int  # rows of k < 10
    updated: int  # rows whose s is UPDATED

    def __str__(self) -> str:
        return (
            f"{self.rows:,} rows, sum(id) {self.sum_id}, sum(d) {self.sum_d}, "
            f"{self.k7:,} of k=7, {self.k10:,} of k<10, {self.updated:,} upserted"
        )


def signature(table: pa.Table) -> Signature:
    k = table.column("k")
    return Signature(
        table.num_rows,
        int(pc.sum(table.column("id")).as_py() or 0),
        float(pc.sum(table.column("d")).as_py() or 0.0),
        int(pc.sum(pc.equal(k, 7)).as_py() or 0),
        int(pc.sum(pc.less(k, 10)).as_py() or 0),
        int(pc.sum(pc.equal(table.column("s"), UPDATED)).as_py() or 0),
    )


def merged(base: pa.Table, source: pa.Table) -> Signature:
    """The signature an upsert of ``source`` into ``base`` must leave (computed, not run)."""
    matched = pc.is_in(base.column("id"), source.column("id"))
    kept = base.filter(pc.invert(matched))
    both = signature(pa.concat_tables([kept, source]))
    return both


# ------------------------------------------------------------------------------ tables


class BaseState:
    """A table directory's files and version hint as built: :meth:`restore` removes every
    file added since and rewrites the hint, so the next run starts from the same state."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files = {p for p in directory.rglob("*") if p.is_file()}
        self.hint_path = directory / "metadata" / "version-hint.text"
        self.hint = self.hint_path.read_bytes()

    def restore(self) -> None:
        for p in list(self.directory.rglob("*")):
            if p.is_file() and p not in self.files:
                p.unlink()
        self.hint_path.write_bytes(self.hint)


class Tables:
    """The warehouse, frazil's catalog over it, and the built tables' base states."""

    def __init__(self, warehouse: Path) -> None:
        from frazil.catalog.filesystem import FileSystemCatalog

        self.warehouse = warehouse
        self.catalog = FileSystemCatalog(CATALOG, warehouse=str(warehouse))
        self.catalog.create_namespace("db")
        self.bases: dict[str, BaseState] = {}

    def load(self, name: str, **properties: str) -> Any:
        """The table restored to its base state, with ``properties`` set (not timed)."""
        self.bases[name].restore()
        table = self.catalog.load_table(f"db.{name}")
        if properties:
            with table.transaction() as txn:
                txn.set_properties(properties)
            table = self.catalog.load_table(f"db.{name}")
        return table

    def read(self, name: str) -> pa.Table:
        return self.catalog.load_table(f"db.{name}").scan().to_arrow()

    def build(self, name: str, data: pa.Table, files: int, properties: dict[str, str]) -> None:
        """``data`` in ``files`` slices, each written by frazil's writer on its own (2 files
        each on 2 cores), appended in one snapshot."""
        from frazil.table.write import WrittenDataFiles, write_data_files

        table = self.catalog.create_table(f"db.{name}", data.schema, properties=properties)
        step = -(-data.num_rows // files)
        written = []
        for i in range(files):
            piece = data.slice(i * step, step)
            if piece.num_rows:
                written += write_data_files(table.metadata, table.io, piece)
        table.append(WrittenDataFiles(tuple(written), table.metadata.default_spec_id))
        self.bases[name] = BaseState(self.warehouse / "db" / name)

    def data_files(self, name: str) -> list[str]:
        table = self.catalog.load_table(f"db.{name}")
        return [str(p) for p in table.inspect.data_files().column("file_path").to_pylist()]

    def snapshot_base(self, name: str) -> None:
        self.bases[name] = BaseState(self.warehouse / "db" / name)


# ------------------------------------------------------------------------------ timing


class Clock:
    """Wall seconds and CPU seconds of this process plus the Spark JVM's (from /proc)."""

    def __init__(self, jvm_pid: int | None) -> None:
        self.jvm_pid = jvm_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def _jvm_cpu(self) -> float:
        if self.jvm_pid is None:
            return 0.0
        fields = Path(f"/proc/{self.jvm_pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime

    def time(self, work: Callable[[], Any]) -> tuple[Any, float, float]:
        gc.collect()
        cpu, jvm, start = time.process_time(), self._jvm_cpu(), time.perf_counter()
        result = work()
        wall = time.perf_counter() - start
        return result, wall, time.process_time() - cpu + self._jvm_cpu() - jvm


@dataclass
class Contender:
    """One way of doing one case: ``prepare`` (not timed) returns the timed work, ``check``
    (not timed) gets its result and raises on a wrong answer."""

    case: str
    name: str
    prepare: Callable[[], Callable[[], Any]]
    check: Callable[[Any], str]
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    scale: float = 1.0  # pyiceberg's runs on a tenth of the keys: its figures times this
    once: bool = False  # timed in the first pass only (pyiceberg on every key: minutes)
    outcome: str = ""


def expect(what: str, got: Any, want: Any) -> None:
    if got != want:
        raise AssertionError(f"{what}: got {got}, expected {want}")


# -------------------------------------------------------------------------- Spark / Java


def spark_session(scratch: Path, warehouse: Path) -> Any:
    from java_referee import iceberg_spark_jars, local_spark_session

    return local_spark_session(
        app_name="bench-row-level",
        driver_memory="8g",
        class_path=list(iceberg_spark_jars().values()),
        scratch=scratch,
        catalog=CATALOG,
        warehouse=warehouse,
        # Every statement loads the table afresh: the directories are restored under it.
        catalog_options={"cache-enabled": "false"},
    )


# ------------------------------------------------------------------------------- cases


def delete_contenders(tables: Tables, spark: Any, base: pa.Table, version: int) -> list[Contender]:
    name = f"t_v{version}"
    case = f"delete 1% (k = 7), v{version}"
    gone = signature(base.filter(pc.not_equal(base.column("k"), 7)))
    full = signature(base)

    def deleted(_: Any) -> str:
        got = signature(tables.read(name))
        expect(f"{case}: the table after the delete", got, gone)
        return str(got)

    def frazil(mode: str) -> Callable[[], Any]:
        table = tables.load(name, **{"write.delete.mode": mode})
        return lambda: table.delete("k = 7")

    def java() -> Callable[[], Any]:
        tables.load(name)  # merge-on-read, the base tables' mode
        return lambda: spark.sql(f"DELETE FROM {CATALOG}.db.{name} WHERE k = 7").collect()

    def read(with_deletes: bool) -> Callable[[], Any]:
        table = tables.load(name)
        if with_deletes:
            table.delete("k = 7")
            table = tables.catalog.load_table(f"db.{name}")
        return lambda: table.scan().to_arrow()

    def read_back(want: Signature) -> Callable[[Any], str]:
        def check(result: Any) -> str:
            got = signature(result)
            expect(f"{case}: the read", got, want)
            return str(got)

        return check

    read_case = f"next full read, v{version}"
    return [
        Contender(case, "frazil merge-on-read", lambda: frazil(MOR), deleted),
        Contender(case, "frazil copy-on-write", lambda: frazil(COW), deleted),
        Contender(case, "Java DELETE (merge-on-read)", java, deleted),
        Contender(read_case, "frazil, no deletes", lambda: read(False), read_back(full)),
        Contender(read_case, "frazil, after the MoR delete", lambda: read(True), read_back(gone)),
    ]


def upsert_contenders(
    tables: Tables,
    spark: Any,
    base: pa.Table,
    version: int,
    source: pa.Table,
    small_source: pa.Table,
    scratch: Path,
    java_modes: Sequence[str],
    pyiceberg: str,
) -> list[Contender]:
    name = f"t_v{version}"
    case = f"upsert {source.num_rows:,} keys, v{version}"
    want = merged(base, source)
    matched = source.num_rows // 2
    new = source.num_rows - matched

    def content(result_counts: tuple[int, int] | None, got: Signature, wanted: Signature) -> str:
        expect(f"{case}: the table after the upsert", got, wanted)
        return str(got) + ("" if result_counts is None else f"; counts {result_counts}")

    def frazil_upsert(mode: str) -> Callable[[], Any]:
        table = tables.load(name, **{"write.merge.mode": mode})
        return lambda: table.upsert(source, join_cols=["id"])

    def frazil_merge(mode: str) -> Callable[[], Any]:
        table = tables.load(name, **{"write.merge.mode": mode})
        return lambda: (
            table.merge(source, on="id").when_matched_update().when_not_matched_insert().execute()
        )

    def upserted(result: Any) -> str:
        counts = (result.rows_updated, result.rows_inserted)
        expect(f"{case}: frazil's counts (updated, inserted)", counts, (matched, new))
        return content(counts, signature(tables.read(name)), want)

    # Java's source: the same rows, from Parquet into a cached temp view (memory, like
    # frazil's Arrow source).
    parquet = scratch / f"upsert-source-v{version}.parquet"
    pq.write_table(source, parquet)
    view = f"source_v{version}"
    frame = spark.read.parquet(str(parquet)).cache()
    expect("Java's source rows", frame.count(), source.num_rows)
    frame.createOrReplaceTempView(view)

    def java(mode: str) -> Callable[[], Any]:
        tables.load(name, **{"write.merge.mode": mode})
        statement = (
            f"MERGE INTO {CATALOG}.db.{name} t USING {view} s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )
        return lambda: spark.sql(statement).collect()

    def java_merged(_: Any) -> str:
        return content(None, signature(tables.read(name)), want)

    contenders = [
        Contender(case, "frazil upsert, copy-on-write", lambda: frazil_upsert(COW), upserted),
        Contender(case, "frazil upsert, merge-on-read", lambda: frazil_upsert(MOR), upserted),
        Contender(case, "frazil merge(), merge-on-read", lambda: frazil_merge(MOR), upserted),
    ]
    for mode in java_modes:
        label = f"Java MERGE INTO, {mode}"
        contenders.append(Contender(case, label, lambda m=mode: java(m), java_merged))
    if version == 2 and pyiceberg != "none":
        catalog = pyiceberg_catalog(scratch)
        tenth = pyiceberg_contender(tables, catalog, base, name, case, small_source)
        tenth.scale = source.num_rows / small_source.num_rows
        contenders.append(tenth)
        if pyiceberg == "both":
            every = pyiceberg_contender(tables, catalog, base, name, case, source)
            every.once = True
            contenders.append(every)
    return contenders


def pyiceberg_catalog(scratch: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    where = scratch / "pyiceberg"
    where.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("pyi", uri=f"sqlite:///{where}/catalog.db", warehouse=f"file://{where}")
    catalog.create_namespace("db")
    return catalog


def pyiceberg_contender(
    tables: Tables, catalog: Any, base: pa.Table, name: str, case: str, source: pa.Table
) -> Contender:
    want = merged(base, source)
    matched = source.num_rows // 2
    state: dict[str, Any] = {}

    def prepare() -> Callable[[], Any]:
        # pyiceberg writes copy-on-write only (it warns on merge-on-read and falls back).
        ours = tables.load(name, **{"write.delete.mode": COW, "write.merge.mode": COW})
        runs = len(catalog.list_tables("db"))
        table = catalog.register_table(("db", f"{name}_{runs}"), ours.metadata_location)
        state["table"] = table
        return lambda: table.upsert(source, join_cols=["id"])

    def check(result: Any) -> str:
        import frazil

        counts = (result.rows_updated, result.rows_inserted)
        expect(
            "pyiceberg's counts (updated, inserted)", counts, (matched, source.num_rows - matched)
        )
        location = state["table"].metadata_location.removeprefix("file://")
        got = signature(frazil.StaticTable.from_metadata(location).scan().to_arrow())
        expect(f"{case}: pyiceberg's table", got, want)
        return f"{got}; counts {counts}"

    label = f"pyiceberg upsert ({source.num_rows:,} keys), copy-on-write"
    return Contender(case, label, prepare, check)


def rewrite_contenders(
    tables: Tables, spark: Any, small: pa.Table, target: int, scratch: Path
) -> list[Contender]:
    name = "small_v2"
    case = f"rewrite_data_files of {len(tables.data_files(name)):,} files, 10% deleted"
    want = signature(small.filter(pc.greater_equal(small.column("k"), 10)))
    options = {"target-file-size-bytes": str(target)}
    inputs = tables.data_files(name)

    def frazil() -> Callable[[], Any]:
        table = tables.load(name)
        return lambda: table.maintenance.rewrite_data_files(options=options)

    def frazil_done(result: Any) -> str:
        counts = (result.rewritten_data_files_count, result.added_data_files_count)
        expect("frazil's rewritten files", counts[0], len(inputs))
        got = signature(tables.read(name))
        expect(f"{case}: frazil's table", got, want)
        return f"{got}; rewritten, added files {counts}"

    def java() -> Callable[[], Any]:
        tables.load(name)
        statement = (
            f"CALL {CATALOG}.system.rewrite_data_files(table => 'db.{name}', "
            f"options => map('target-file-size-bytes', '{target}'))"
        )
        return lambda: spark.sql(statement).collect()

    def java_done(result: Any) -> str:
        row = result[0].asDict()
        expect("Java's rewritten files", row["rewritten_data_files_count"], len(inputs))
        got = signature(tables.read(name))
        expect(f"{case}: Java's table", got, want)
        return f"{got}; rewritten, added files {row['rewritten_data_files_count']}, " + str(
            row["added_data_files_count"]
        )

    # The floor's masks: which rows of each file are live, computed before timing from the
    # rule the delete used (frazil's reader applies the delete files themselves).
    tables.bases[name].restore()
    masks = [pc.greater_equal(pq.read_table(p, columns=["k"]).column("k"), 10) for p in inputs]
    threads = os.cpu_count() or 1
    out = scratch / "floor"
    total = sum(os.path.getsize(p) for p in inputs)
    rows_per_file = max(1, int(small.num_rows * target / total))

    def floor() -> Callable[[], Any]:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)

        def live(i: int) -> pa.Table:
            return pq.read_table(inputs[i]).filter(masks[i])

        def write(job: tuple[int, pa.Table]) -> str:
            path = str(out / f"part-{job[0]:05d}.parquet")
            pq.write_table(job[1], path, compression="zstd")
            return path

        def run() -> list[str]:
            with ThreadPoolExecutor(threads) as pool:
                rows = pa.concat_tables(pool.map(live, range(len(inputs))))
                pieces = [
                    (i, rows.slice(start, rows_per_file))
                    for i, start in enumerate(range(0, rows.num_rows, rows_per_file))
                ]
                return list(pool.map(write, pieces))

        return run

    def floor_done(paths: list[str]) -> str:
        got = signature(pa.concat_tables(pq.read_table(p) for p in paths))
        expect(f"{case}: the floor's files", got, want)
        return f"{got}; {len(paths)} files"

    return [
        Contender(case, "frazil", frazil, frazil_done),
        Contender(case, "Java CALL rewrite_data_files", java, java_done),
        Contender(case, "pyarrow floor", floor, floor_done),
    ]


# ------------------------------------------------------------------------------ report


def cell(xs: list[float], scale: float = 1.0) -> str:
    if not xs:
        return ""
    return min_median([x * scale for x in xs], lambda s: f"{s:.2f} s")


def med(c: Contender) -> float:
    return statistics.median(c.times) * c.scale


def ratio(a: Contender | None, b: Contender | None) -> str:
    """a's median over b's, as "0.12x"."""
    if a is None or b is None or not a.times or not b.times:
        return ""
    return f"{med(a) / med(b):.2f}x"


def report(
    contenders: list[Contender], args: argparse.Namespace, load: Any, notes: list[str],
    elapsed: float, shape: list[str],
) -> str:  # fmt: skip
    by = {(c.case, c.name): c for c in contenders}
    small = "" if args.rows >= 10_000_000 else f" (SMALL SCALE: --rows {args.rows:,})"
    lines = header(
        f"Row-level changes and compaction (`benches/bench_row_level.py`){small}",
        "benches/bench_row_level.py",
    )
    lines += [*environment_lines(load, notes), *shape]
    lines += [
        f"- {args.rounds} interleaved rounds after one untimed checked pass; run took "
        f"{elapsed / 60:.0f} min. Cells: wall seconds, min (median); CPU: seconds of this "
        "process plus the Spark JVM, median. Ratios use medians.",
        "",
        "| case | contender | wall | CPU | checked result |",
        "|---|---|---|---|---|",
    ]
    for c in contenders:
        scaled = f" (x{c.scale:.0f}: {cell(c.times, c.scale)} scaled)" if c.scale != 1 else ""
        once = " (1 run, in the checked pass)" if c.once else ""
        cpu = f"{statistics.median(c.cpu):.2f} s" if c.cpu else ""
        rows = c.outcome.split(" rows", 1)[0] + " rows"
        brief = rows + ("; " + c.outcome.split("; ", 1)[1] if "; " in c.outcome else "")
        lines.append(f"| {c.case} | {c.name} | {cell(c.times)}{scaled}{once} | {cpu} | {brief} |")
    lines += ["", "### Against the targets (medians)", ""]
    for case in dict.fromkeys(c.case for c in contenders):
        get = lambda n, case=case: by.get((case, n))  # noqa: E731
        if case.startswith("delete"):
            mor, cow, java = (get("frazil merge-on-read"), get("frazil copy-on-write"),
                              get("Java DELETE (merge-on-read)"))  # fmt: skip
            lines.append(
                f"- {case}: copy-on-write / merge-on-read {ratio(cow, mor)} (target >= 10x); "
                f"Java / frazil merge-on-read {ratio(java, mor)} (target > 1x)"
            )
        elif case.startswith("next full read"):
            lines.append(
                f"- {case}: with the deletes / without {ratio(get('frazil, after the MoR delete'), get('frazil, no deletes'))} (target <= 1.3x)"  # noqa: E501
            )
        elif case.startswith("upsert"):
            cow, mor = get("frazil upsert, copy-on-write"), get("frazil upsert, merge-on-read")
            parts = []
            if cow and cow.times:
                parts.append(f"copy-on-write {med(cow):.1f} s (target < 20 s)")
            if mor and mor.times:
                parts.append(f"merge-on-read {med(mor):.1f} s (target < 10 s)")
            for c in contenders:
                if c.case == case and not c.name.startswith("frazil"):
                    ours = cow if COW in c.name else mor
                    parts.append(f"{c.name} / frazil {ratio(c, ours)}")
            lines.append(f"- {case}: " + "; ".join(parts))
        elif case.startswith("rewrite"):
            ours = get("frazil")
            lines.append(
                f"- {case}: frazil / floor {ratio(ours, get('pyarrow floor'))} (target <= 1.3x); "
                f"frazil / Java {ratio(ours, get('Java CALL rewrite_data_files'))} (target < 1x)"
            )
    lines += [
        "",
        "### Method",
        "",
        "- One process drives every contender; the Spark session (local[2]) is up for the whole "
        "run. Every table is built once by frazil; before each run its directory is restored to "
        "that base state (the files the previous run added removed, `version-hint.text` "
        "rewritten: Java's Hadoop catalog, its table cache off, and frazil's catalog then load "
        "the base metadata), the contender's `write.*.mode` set, and the garbage collector run; "
        "only the operation itself is timed (Java: the SQL statement's `collect()`).",
        "- After every run, timed or not, the table is read back by frazil (pyiceberg's: from "
        "the metadata file it committed) and its rows, `sum(id)`, `sum(d)`, rows of `k = 7`, "
        "`k < 10` and of the source's `s` compared with what the data says; the operations' "
        "counts too (upsert: updated and inserted rows; rewrite: files rewritten). Any "
        "difference stops the run. The table's checked column shows the rows and the counts.",
        "- The page cache is warm (every table fits in memory many times); the first, untimed "
        "pass warms the JIT, Spark and the caches for every contender.",
        "",
        *how_to_run(
            ".venv/bin/python benches/bench_row_level.py                 # 10M rows, every case",
            ".venv/bin/python benches/bench_row_level.py --rows 200000   # a quick check",
        ),
        "Options: `--case delete|upsert|rewrite|all`, `--rounds N`, `--rows N`, `--files N`, "
        "`--small-files N`, `--target-mb N`, `--versions 2,3`, `--upsert-versions 2`, "
        "`--java-modes merge-on-read,copy-on-write`, `--pyiceberg tenth|both|none`, `--no-write`.",
    ]
    return "\n".join(lines)


# -------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", choices=[*CASES, "all"], default="all")
    parser.add_argument("--files", type=int, default=24, help="data files of the 10M table")
    parser.add_argument("--small-files", type=int, default=1000, help="files to rewrite")
    parser.add_argument("--target-mb", type=int, default=32, help="rewrite target file size")
    parser.add_argument("--versions", default="2,3", help="format versions of delete/upsert")
    parser.add_argument("--upsert-versions", default="2", help="format versions of upsert")
    parser.add_argument("--java-modes", default=f"{MOR},{COW}", help="Java MERGE INTO modes")
    parser.add_argument(
        "--pyiceberg",
        choices=["tenth", "both", "none"],
        default="both",
        help="pyiceberg's upsert on a tenth of the keys every round; both: also once on all",
    )
    parser.add_argument("--no-write", action="store_true", help="leave RESULTS.md alone")
    args = parser.parse_args()
    cases = CASES if args.case == "all" else (args.case,)
    versions = [int(v) for v in args.versions.split(",") if v]
    upsert_versions = [int(v) for v in args.upsert_versions.split(",") if v]
    java_modes = [m for m in args.java_modes.split(",") if m]

    import frazil
    import pyiceberg
    import pyspark

    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="bench-row-level-"))
    try:
        (root / "scratch").mkdir()
        warehouse = root / "warehouse"
        tables = Tables(warehouse)
        spark = spark_session(root / "scratch", warehouse)
        jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
        clock = Clock(jvm_pid)
        print(f"building tables of {args.rows:,} rows ...", flush=True)
        base = rows_of(np.arange(args.rows))
        props = {"write.delete.mode": MOR, "write.update.mode": MOR, "write.merge.mode": MOR}
        shape: list[str] = []
        contenders: list[Contender] = []
        if "delete" in cases or "upsert" in cases:
            for v in sorted({*versions, *upsert_versions}):
                tables.build(f"t_v{v}", base, args.files, {"format-version": str(v), **props})
            n = len(tables.data_files(f"t_v{sorted({*versions, *upsert_versions})[0]}"))
            shape.append(
                f"- Tables of cases 1 and 2: {args.rows:,} rows (id long, ts timestamptz, s "
                f"string, d double, k int) in {n} data files ({args.files} slices, each written "
                "by frazil's writer on 2 cores), one snapshot, unpartitioned"
            )
        if "delete" in cases:
            for v in versions:
                contenders += delete_contenders(tables, spark, base, v)
        if "upsert" in cases:
            keys = max(2, args.rows // 10)
            source = upsert_source(args.rows, keys, seed=24)
            small = upsert_source(args.rows, keys // 10, seed=25)
            for v in upsert_versions:
                contenders += upsert_contenders(
                    tables,
                    spark,
                    base,
                    v,
                    source,
                    small,
                    root / "scratch",
                    java_modes,
                    args.pyiceberg,
                )
            shape.append(
                f"- Upsert source: {keys:,} keys, {keys // 2:,} of them ids of the table sampled "
                "uniformly (so in every file), with new `d` and `s`; the others new ids; "
                f"pyiceberg: {small.num_rows:,} keys of the same shape, its times scaled by "
                f"{keys / max(1, small.num_rows):.0f} in the scaled column"
            )
        if "rewrite" in cases:
            tables.build("small_v2", base, args.small_files, {"format-version": "2", **props})
            table = tables.catalog.load_table("db.small_v2")
            table.delete("k < 10")
            tables.snapshot_base("small_v2")
            target = args.target_mb << 20
            contenders += rewrite_contenders(tables, spark, base, target, root / "scratch")
            deletes = tables.catalog.load_table("db.small_v2").inspect.delete_files().num_rows
            shape.append(
                f"- Rewrite table: {args.rows:,} rows in {len(tables.data_files('small_v2')):,} "
                f"files, v2, 10% of rows (k < 10) deleted by frazil's merge-on-read delete "
                f"({deletes:,} position delete files); target-file-size-bytes {target:,}"
            )
        print(f"  built in {time.monotonic() - started:.0f} s", flush=True)

        print("checking every contender (untimed pass) ...", flush=True)
        for c in contenders:
            work = c.prepare()
            result, wall, cpu = clock.time(work)
            c.outcome = c.check(result)
            if c.once:
                c.times.append(wall)
                c.cpu.append(cpu)
            print(f"  {c.case:40} {c.name:40} {wall:7.2f} s: {c.outcome}", flush=True)
        load_before = os.getloadavg()
        print(f"timing {args.rounds} interleaved rounds ...", flush=True)
        groups = list(dict.fromkeys(c.case for c in contenders))
        for r in range(args.rounds):
            for case in groups:
                ones = [c for c in contenders if c.case == case and not c.once]
                k = r % len(ones)
                for c in ones[k:] + ones[:k]:
                    work = c.prepare()
                    result, wall, cpu = clock.time(work)
                    outcome = c.check(result)
                    c.times.append(wall)
                    c.cpu.append(cpu)
                    print(f"  {c.name:40} {wall:7.2f} s wall {cpu:7.2f} s CPU: {outcome}")
            print(
                f"  round {r + 1}/{args.rounds} at {time.monotonic() - started:.0f} s", flush=True
            )
        load_after = os.getloadavg()
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    notes = [
        f"frazil {getattr(frazil, '__version__', '?')}",
        "Iceberg Java 1.10.2 (iceberg-spark-runtime-3.5) on PySpark "
        f"{pyspark.__version__}, local[2], driver 8g, Hadoop catalog over the same warehouse",
        f"pyiceberg {pyiceberg.__version__} (SqlCatalog on SQLite, the same metadata registered)",
    ]
    text = report(contenders, args, (load_before, load_after), notes,
                  time.monotonic() - started, shape)  # fmt: skip
    print(text)
    if not args.no_write:
        write_section(RESULTS, MARKERS, text)


if __name__ == "__main__":
    main()
