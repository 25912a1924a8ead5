"""Scan-planning benchmark: frazil's ``plan_files()`` against pyiceberg's and Java's.

The table (benches/plan_table.py, generated once and cached under benches/.work/) is a v2
table of 200,000 data files in 200 deflate manifests, with position deletes (snapshot 1) and
equality deletes (snapshot 2): metadata only. Every contender plans the same cases, in
interleaved rounds (each round runs every case once per contender, in an order rotated each
round); the figures are wall seconds, min and median over the rounds. Before timing, every
contender's plan of every case is checked against the others': the same data files with the
same delete files (counts and a SHA-256 over the sorted "data file, sorted delete files"
lines). A difference stops the run.

- frazil: ``table.scan(row_filter=..., snapshot_id=...).plan_files()`` on a table opened
  once by ``frazil.StaticTable.from_metadata(path)``, iterated in Python, touching
  ``task.file.file_path`` and ``task.delete_files``.
- pyiceberg: the same through ``pyiceberg.table.StaticTable``.
- Apache Iceberg Java 1.10.2: ``TableScan.planFiles()`` on a ``BaseTable`` opened once, in a
  JVM kept up between rounds and timed inside it (benches/java/PlanBench.java, compiled with
  javac at run time).

Every contender plans on a table it holds, as a user does (and as Java's planner is used);
``--reopen`` opens the table from its metadata file in every plan instead, for all alike.

Also measured in fresh processes: ``import frazil`` against ``import pyarrow``, the first plan
against the steady state, and the peak RSS of a process planning the full scan.

    .venv/bin/python benches/bench_plan.py     # ~15 minutes (pyiceberg most), writes RESULTS.md
    .venv/bin/python benches/bench_plan.py --only java,pyiceberg --output /tmp/plan.md

Build frazil in release first: ``VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script: benches/ is on sys.path, so its modules import by name.
import plan_report
from _report import interleaved
from plan_table import PlanTable, cached_table

BENCH_DIR = Path(__file__).resolve().parent
JAVA_SOURCE = BENCH_DIR / "java" / "PlanBench.java"
ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
CONTENDERS = ("frazil", "pyiceberg", "java")


# --------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    equality: bool  # snapshot 2 (with equality deletes), else snapshot 1
    text: str | None  # the filter as text, for frazil and pyiceberg (None: no filter)
    java: Any  # the same filter in Iceberg's ExpressionParser JSON, for Java
    # Plans timed back to back per measurement (the figure is their mean): a plan of a few
    # milliseconds timed alone measures the caches the previous, larger case left cold.
    # The same for every contender.
    repeat: int = 1

    def snapshot(self, table: PlanTable) -> int:
        return table.snapshot_equality if self.equality else table.snapshot_positional


def _ts(day: str) -> str:
    return f"{day}T00:00:00+00:00"


def _and(*preds: tuple[str, str, Any]) -> Any:
    nodes = [{"type": op, "term": term, "value": value} for term, op, value in preds]
    out = nodes[0]
    for node in nodes[1:]:
        out = {"type": "and", "left": out, "right": node}
    return out


def cases(table: PlanTable) -> list[Case]:
    day = table.day(table.days // 2)
    after = day.fromordinal(day.toordinal() + 1)
    before = table.day(-365)
    low = table.max_id // 2
    high = low + 2_000_000  # about 10 data files: a few hundred thousand ids each
    return [
        Case("full_positional", "full scan, position deletes", False, None, True),
        Case(
            "one_day",
            f"one day ({day})",
            False,
            f"ts >= '{_ts(day.isoformat())}' AND ts < '{_ts(after.isoformat())}'",
            _and(("ts", "gt-eq", _ts(day.isoformat())), ("ts", "lt", _ts(after.isoformat()))),
            repeat=10,
        ),
        Case(
            "metrics_range",
            "narrow id range (metrics)",
            False,
            f"id >= {low} AND id < {high}",
            _and(("id", "gt-eq", low), ("id", "lt", high)),
        ),
        Case(
            "none_by_partition",
            "nothing matches by partition",
            False,
            f"ts < '{_ts(before.isoformat())}'",
            _and(("ts", "lt", _ts(before.isoformat()))),
            repeat=50,
        ),
        Case(
            "none_by_metrics",
            "nothing matches by metrics",
            False,
            "amount > 1000000.0",
            _and(("amount", "gt", 1_000_000.0)),
        ),
        Case("full_equality", "full scan, equality deletes", True, None, True),
    ]


def _scan_kwargs(case: Case, table: PlanTable) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"snapshot_id": case.snapshot(table)}
    if case.text is not None:
        kwargs["row_filter"] = case.text
    return kwargs


# ---------------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Signature:
    """What a plan selected: data files, delete-file references, distinct delete files, and
    a SHA-256 over the sorted lines "data path TAB sorted delete paths joined by TAB"."""

    files: int
    delete_refs: int
    distinct_deletes: int
    digest: str

    def __str__(self) -> str:
        return (
            f"{self.files} data files, {self.delete_refs} delete refs "
            f"({self.distinct_deletes} distinct), sha256 {self.digest[:16]}"
        )


def signature(pairs: Iterable[tuple[str, list[str]]]) -> Signature:
    lines, distinct, refs = [], set(), 0
    for path, deletes in pairs:
        deletes = sorted(deletes)
        distinct.update(deletes)
        refs += len(deletes)
        lines.append("\t".join([path, *deletes]))
    lines.sort()
    sha = hashlib.sha256()
    for line in lines:
        sha.update(line.encode())
        sha.update(b"\n")
    return Signature(len(lines), refs, len(distinct), sha.hexdigest())


class Unsupported(Exception):
    """The contender does not plan this case (reported as such, never as a number)."""


class Contender:
    name = ""
    note = ""

    def check(self, case: Case) -> Signature:
        raise NotImplementedError

    def time_once(self, case: Case) -> float:
        """Wall seconds of one plan."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class PythonContender(Contender):
    def __init__(self, table: PlanTable, reopen: bool) -> None:
        self.table = table
        self.reopen = reopen
        self._loaded: Any = None

    def open_table(self) -> Any:
        raise NotImplementedError

    def loaded(self) -> Any:
        """The table to plan on: opened once, or again for every plan with ``--reopen``."""
        if self.reopen:
            return self.open_table()
        if self._loaded is None:
            self._loaded = self.open_table()
        return self._loaded

    def tasks(self, case: Case) -> Iterable[Any]:
        raise NotImplementedError

    def check(self, case: Case) -> Signature:
        return signature(
            (t.file.file_path, [d.file_path for d in t.delete_files]) for t in self.tasks(case)
        )

    def time_once(self, case: Case) -> float:
        start = time.perf_counter()
        for _ in range(case.repeat):
            files = chars = deletes = 0
            for task in self.tasks(case):
                files += 1
                chars += len(task.file.file_path)
                deletes += len(task.delete_files)
            if files and not chars:
                raise AssertionError(f"{self.name}: no file paths on {case.name}")
        return (time.perf_counter() - start) / case.repeat


class Frazil(PythonContender):
    name = "frazil"

    def __init__(self, table: PlanTable, reopen: bool) -> None:
        super().__init__(table, reopen)
        import frazil

        # Any: the table API is being written alongside this benchmark.
        self.frazil: Any = frazil
        self.note = f"frazil {getattr(frazil, '__version__', '?')}"

    def open_table(self) -> Any:
        return self.frazil.StaticTable.from_metadata(self.table.metadata)

    def tasks(self, case: Case) -> Iterable[Any]:
        table = self.loaded()
        return table.scan(**_scan_kwargs(case, self.table)).plan_files()  # type: ignore[no-any-return]


class Pyiceberg(PythonContender):
    name = "pyiceberg"

    def __init__(self, table: PlanTable, reopen: bool) -> None:
        super().__init__(table, reopen)
        import pyiceberg
        from pyiceberg.table import StaticTable

        self.static_table = StaticTable
        self.note = f"pyiceberg {pyiceberg.__version__}"

    def open_table(self) -> Any:
        return self.static_table.from_metadata(self.table.metadata)

    def tasks(self, case: Case) -> Iterable[Any]:
        table = self.loaded()
        try:
            return table.scan(**_scan_kwargs(case, self.table)).plan_files()
        except ValueError as error:
            # pyiceberg 0.12 refuses equality deletes: "does not yet support equality deletes".
            if "equality deletes" in str(error):
                raise Unsupported(str(error)) from None
            raise


def find_iceberg_jar() -> Path:
    import snowpark_connect_deps_iceberg  # type: ignore[import-untyped]

    for jar in snowpark_connect_deps_iceberg.list_jars():
        if Path(jar).name == ICEBERG_JAR:
            return Path(jar)
    raise RuntimeError(f"{ICEBERG_JAR} not found in snowpark_connect_deps_iceberg")


class Java(Contender):
    """Apache Iceberg Java 1.10.2 in one JVM driven over a pipe; times from System.nanoTime."""

    name = "java"

    def __init__(
        self, table: PlanTable, all_cases: list[Case], warmup: int, opts: str, reopen: bool
    ) -> None:
        import pyspark

        jar = find_iceberg_jar()
        slf4j = sorted((Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
        if not slf4j:
            raise RuntimeError("pyspark's slf4j-api jar not found")
        classes = BENCH_DIR / ".work" / "plan-java-classes"
        classes.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join([str(jar), str(slf4j[0])])
        subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", classpath, str(JAVA_SOURCE)],
            check=True,
        )
        self.command = ["java", *opts.split(), "-cp", f"{classpath}{os.pathsep}{classes}",
                        "PlanBench", table.metadata, *(["reopen"] if reopen else [])]  # fmt: skip
        self.proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ready = self._read()
        if not ready.startswith("ready "):
            raise RuntimeError(f"PlanBench did not start: {ready!r}")
        self.version = ready.split(" ", 1)[1]
        self.warmup = warmup
        for case in all_cases:
            self._send(f"define {case.name} {case.snapshot(table)} {json.dumps(case.java)}")
        self.note = (
            f"Java {self.version}, {jar.name}; JVM flags `{opts}`; {warmup} untimed plans "
            "per case first"
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
            raise RuntimeError(f"PlanBench failed: {line!r} (exit {self.proc.poll()})")
        return line

    def check(self, case: Case) -> Signature:
        files, refs, distinct, digest = self._send(f"check {case.name}").split()
        self._send(f"warm {case.name} {self.warmup}")
        return Signature(int(files), int(refs), int(distinct), digest)

    def time_once(self, case: Case) -> float:
        wall_ns, _cpu_ns, _files, _refs = self._send(f"time {case.name} {case.repeat}").split()
        return int(wall_ns) / 1e9 / case.repeat

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)


# ------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    contender: str
    case: str
    status: str = "ok"  # "ok", "unsupported: ...", "error: ..."
    signature: Signature | None = None
    times: list[float] = field(default_factory=list)


def check_all(contenders: list[Contender], all_cases: list[Case]) -> dict[tuple[str, str], Outcome]:
    """Every contender's plan of every case; raises if two contenders selected differently."""
    outcomes: dict[tuple[str, str], Outcome] = {}
    for case in all_cases:
        reference: Outcome | None = None
        for c in contenders:
            out = Outcome(c.name, case.name)
            outcomes[c.name, case.name] = out
            try:
                out.signature = c.check(case)
            except Unsupported as error:
                out.status = f"unsupported: {error}"
            print(f"  {case.name:18} {c.name:10} {out.signature or out.status}", flush=True)
            if out.signature is None:
                continue
            if reference is None:
                reference = out
            elif out.signature != reference.signature:
                raise AssertionError(
                    f"{case.name}: {c.name} and {reference.contender} selected different "
                    f"files: {out.signature} against {reference.signature}"
                )
    return outcomes


def time_rounds(
    contenders: list[Contender],
    all_cases: list[Case],
    outcomes: dict[tuple[str, str], Outcome],
    rounds: int,
    started: float,
) -> None:
    for c, case in interleaved(contenders, all_cases, rounds, started):
        out = outcomes[c.name, case.name]
        if out.status == "ok":
            out.times.append(c.time_once(case))
            gc.collect()


# ------------------------------------------------------------------ fresh-process figures

# Children are plain ``python -c`` scripts, so nothing of this module is loaded in them.
IMPORT_CHILD = """
import json, sys, time
start = time.perf_counter()
exec(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

PLAN_CHILD = """
import json, sys, time
spec = json.loads(sys.argv[1])
start = time.perf_counter()
if spec["contender"] == "frazil":
    import frazil
    open_table = frazil.StaticTable.from_metadata
else:
    from pyiceberg.table import StaticTable
    open_table = StaticTable.from_metadata
imported = time.perf_counter() - start
times = []
files = 0
for _ in range(spec["plans"]):
    start = time.perf_counter()
    files = 0
    for task in open_table(spec["metadata"]).scan(**spec["scan"]).plan_files():
        files += 1
        task.file.file_path
        task.delete_files
    times.append(time.perf_counter() - start)
print(json.dumps({"import": imported, "times": times, "files": files}))
"""


def run_child(code: str, arg: str) -> tuple[dict[str, Any], int]:
    """Runs ``python -c code arg``; returns its JSON reply and its peak RSS in bytes.

    The peak is the child's own ``VmHWM`` (/proc/self/status), read at its end. Not the
    ``ru_maxrss`` that ``os.wait4`` gives: Linux carries the parent's high-water mark over
    the child's exec (subprocess uses vfork), so a child of this process, which has held
    pyiceberg's plans, would report this process's peak instead of its own.
    """
    proc = subprocess.run([sys.executable, "-c", code + HWM, arg], capture_output=True, text=True)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:]
        raise RuntimeError(f"child failed ({proc.returncode}): {last}")
    reply, hwm = proc.stdout.strip().splitlines()[-2:]
    return json.loads(reply), int(hwm) * 1024


# Appended to every child: its peak RSS in KiB, on the last line.
HWM = """
import re
print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
"""


@dataclass
class Fresh:
    """Figures from fresh processes (min over runs, seconds or bytes)."""

    imports: dict[str, float] = field(default_factory=dict)  # module -> seconds
    first_plan: dict[str, tuple[float, float]] = field(default_factory=dict)  # first, steady
    peak_rss: dict[str, tuple[int, int]] = field(default_factory=dict)  # planning, idle
    first_case: str = ""
    full_case: str = ""
    runs: int = 0
    errors: list[str] = field(default_factory=list)


def _compile_frazil() -> None:
    """Writes frazil's bytecode, as ``pip install`` does for a wheel: an editable install
    under PYTHONDONTWRITEBYTECODE would otherwise compile every module from source in each
    fresh process, a cost no installed user pays."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("frazil")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=1)


def fresh_figures(table: PlanTable, all_cases: list[Case], wanted: set[str], runs: int) -> Fresh:
    by_name = {c.name: c for c in all_cases}
    first, full = by_name["one_day"], by_name["full_positional"]
    fresh = Fresh(first_case=first.label, full_case=full.label, runs=runs)
    python = [c for c in ("frazil", "pyiceberg") if c in wanted]
    modules = ["pyarrow"] + (["frazil", plan_report.TABLE_IMPORT] if "frazil" in wanted else [])
    _compile_frazil()
    print(f"fresh processes: {runs} runs of each figure ...", flush=True)
    for _ in range(runs):  # interleaved, like the rounds
        for module in modules:
            statement = module if module.startswith("from ") else f"import {module}"
            reply, _rss = run_child(IMPORT_CHILD, statement)
            old = fresh.imports.get(module, float("inf"))
            fresh.imports[module] = min(old, reply["seconds"])
        for name in list(python):
            try:
                spec = {"contender": name, "metadata": table.metadata, "plans": 8,
                        "scan": _scan_kwargs(first, table)}  # fmt: skip
                reply, _rss = run_child(PLAN_CHILD, json.dumps(spec))
                times = reply["times"]
                old_first, old_steady = fresh.first_plan.get(name, (float("inf"),) * 2)
                fresh.first_plan[name] = (min(old_first, times[0]), min(old_steady, *times[1:]))
                spec = {**spec, "plans": 1, "scan": _scan_kwargs(full, table)}
                _reply, rss = run_child(PLAN_CHILD, json.dumps(spec))
                _reply, idle = run_child(PLAN_CHILD, json.dumps({**spec, "plans": 0}))
                old_rss, old_idle = fresh.peak_rss.get(name, (1 << 62, 1 << 62))
                fresh.peak_rss[name] = (min(old_rss, rss), min(old_idle, idle))
            except RuntimeError as error:
                fresh.errors.append(f"{name}: {error}")
                python.remove(name)
    return fresh


# -------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CONTENDERS), help="frazil,pyiceberg,java")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--java-warmup", type=int, default=5, help="untimed Java plans per case")
    parser.add_argument("--java-opts", default="-Xms1g -Xmx4g", help="JVM flags")
    parser.add_argument("--fresh-runs", type=int, default=5, help="fresh processes per figure")
    parser.add_argument("--skip-fresh", action="store_true", help="no fresh-process figures")
    parser.add_argument(
        "--reopen",
        action="store_true",
        help="open the table from its metadata file in every plan (every contender)",
    )
    parser.add_argument("--days", type=int, default=200, help="data manifests (one a day)")
    parser.add_argument("--files-per-day", type=int, default=1000)
    parser.add_argument(
        "--output",
        type=Path,
        help="where to write the section (default benches/RESULTS.md, and only when frazil ran)",
    )
    args = parser.parse_args()
    wanted = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = wanted - set(CONTENDERS)
    if unknown:
        parser.error(f"unknown contenders {sorted(unknown)}; choose from {CONTENDERS}")
    started = time.monotonic()
    table = cached_table(args.days, args.files_per_day)
    print(
        f"table: {table.data_files:,} data files in {table.data_manifests} manifests, "
        f"{table.position_deletes:,} position and {table.equality_deletes} equality delete "
        f"files in {table.delete_manifests} + 2 delete manifests; "
        f"{table.manifest_bytes / 1e6:.1f} MB of manifests (generated in "
        f"{table.generation_seconds} s); {table.metadata}",
        flush=True,
    )
    all_cases = cases(table)
    contenders: list[Contender] = []
    try:
        if "frazil" in wanted:
            contenders.append(Frazil(table, args.reopen))
        if "pyiceberg" in wanted:
            contenders.append(Pyiceberg(table, args.reopen))
        if "java" in wanted:
            print("compiling and starting PlanBench.java ...", flush=True)
            contenders.append(Java(table, all_cases, args.java_warmup, args.java_opts, args.reopen))
        print("checking that every contender plans the same files ...", flush=True)
        outcomes = check_all(contenders, all_cases)
        load_before = os.getloadavg()
        print(f"timing {args.rounds} interleaved rounds ...", flush=True)
        time_rounds(contenders, all_cases, outcomes, args.rounds, started)
        load_after = os.getloadavg()
    finally:
        for c in contenders:
            c.close()
    fresh = None if args.skip_fresh else fresh_figures(table, all_cases, wanted, args.fresh_runs)
    section = plan_report.section(
        table=table,
        cases=all_cases,
        contenders=[c.name for c in contenders],
        notes=[c.note for c in contenders],
        outcomes=outcomes,
        fresh=fresh,
        load=(load_before, load_after),
        rounds=args.rounds,
        elapsed=time.monotonic() - started,
        reopen=args.reopen,
    )
    print(section)
    output = args.output
    if output is None and "frazil" in wanted:
        output = BENCH_DIR / "RESULTS.md"
    if output is not None:
        plan_report.splice(output, section)
        print(f"written to {output}")
    else:
        print("not written: frazil did not run (give --output to write this section anyway)")


if __name__ == "__main__":
    main()
