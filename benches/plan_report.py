"""The RESULTS.md section of benches/bench_plan.py."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from _report import Load, Stat, environment_lines, header, how_to_run, min_median, write_section

if TYPE_CHECKING:
    from bench_plan import Case, Fresh, Outcome
    from plan_table import PlanTable

MARKERS = ("<!-- planning results: begin -->", "<!-- planning results: end -->")
LABELS = {"frazil": "frazil", "pyiceberg": "pyiceberg", "java": "Iceberg Java"}
# Issue 10's figures for this kind of machine (2 cores), seconds: (pyiceberg, Java).
REFERENCE: dict[str, tuple[float | None, float]] = {
    "full_positional": (13.3, 1.02),
    "one_day": (0.51, 0.036),
    "metrics_range": (8.9, 0.71),
    "none_by_metrics": (8.2, 0.60),
    "full_equality": (None, 0.70),
}
TARGET_X = {"java": 3.5, "pyiceberg": 40.0}  # frazil at least this many times faster
IMPORT_TARGET = 0.050  # import frazil: at most this much more than import pyarrow
TABLE_IMPORT = "from frazil import StaticTable"
FIRST_PLAN_TARGET = 0.020  # first plan in a fresh process: at most this much over steady state
RSS_TARGET = 300 * 1024 * 1024


def seconds(x: float) -> str:
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 0.001:
        return f"{x * 1000:.3g} ms"
    return f"{x * 1e6:.3g} us"


def difference(x: float) -> str:
    return f"{seconds(x)} more" if x >= 0 else f"{seconds(-x)} less"


def ratio(r: float) -> str:
    return f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB"


def _cell(out: Outcome) -> str:
    if out.status.startswith("unsupported"):
        return "unsupported"
    if not out.times:
        return f"**{out.status}**"
    return min_median(out.times, seconds)


def _speedup(outs: dict[tuple[str, str], Outcome], peer: str, case: str, stat: Stat) -> str:
    ours, theirs = outs.get(("frazil", case)), outs.get((peer, case))
    if ours is None or theirs is None or not ours.times:
        return ""
    if not theirs.times:
        return "unsupported" if theirs.status.startswith("unsupported") else ""
    return ratio(stat(theirs.times) / stat(ours.times))


def times_table(
    cases: Sequence[Case], contenders: list[str], outs: dict[tuple[str, str], Outcome]
) -> list[str]:
    peers = [p for p in ("java", "pyiceberg") if p in contenders and "frazil" in contenders]
    head = ["case", "data files / delete refs", *(LABELS[c] for c in contenders)]
    head += [f"frazil vs {LABELS[p]} (min / median)" for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for case in cases:
        sig = next((o.signature for (_, n), o in outs.items() if n == case.name and o.signature),
                   None)  # fmt: skip
        row = [case.label, f"{sig.files:,} / {sig.delete_refs:,}" if sig else ""]
        row += [_cell(outs[c, case.name]) for c in contenders]
        for p in peers:
            lo, med = (_speedup(outs, p, case.name, s) for s in (min, statistics.median))
            row.append(f"{lo} / {med}" if lo and lo != "unsupported" else lo)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def verdicts(
    cases: Sequence[Case], contenders: list[str], outs: dict[tuple[str, str], Outcome]
) -> list[str]:
    if "frazil" not in contenders:
        return ["- frazil was not run: no verdicts."]
    lines = []
    for case in cases:
        parts = []
        for peer, target in TARGET_X.items():
            if peer not in contenders:
                continue
            ours, theirs = outs["frazil", case.name], outs[peer, case.name]
            if theirs.status.startswith("unsupported"):
                parts.append(f"{LABELS[peer]} does not support it")
                continue
            if not theirs.times or not ours.times:
                parts.append(f"{LABELS[peer]} not timed ({theirs.status}; {ours.status})")
                continue
            x = min(theirs.times) / min(ours.times)
            met = "meets" if x >= target else "**MISSES**"
            parts.append(f"{ratio(x)} faster than {LABELS[peer]}, {met} the {target:g}x target")
        lines.append(f"- {case.label}: " + "; ".join(parts))
    return lines


def fresh_lines(fresh: Fresh | None) -> list[str]:
    if fresh is None:
        return ["Not measured (`--skip-fresh`)."]
    lines = [f"Each figure is the minimum over {fresh.runs} fresh processes.", ""]
    if "pyarrow" in fresh.imports:
        pa = fresh.imports["pyarrow"]
        line = f"- `import pyarrow`: {seconds(pa)}"
        if "frazil" in fresh.imports:
            more = fresh.imports["frazil"] - pa
            met = "meets" if more <= IMPORT_TARGET else "**MISSES**"
            line += (
                f"; `import frazil`: {seconds(fresh.imports['frazil'])}, {difference(more)} "
                f"({met} the under {seconds(IMPORT_TARGET)} more target)"
            )
        lines.append(line)
        if TABLE_IMPORT in fresh.imports:
            # Not the target's measure: `import frazil` loads its modules lazily, and a plan
            # needs pyarrow and the table modules; this is what a planning process pays.
            total = fresh.imports[TABLE_IMPORT]
            lines.append(
                f"- `{TABLE_IMPORT}` (what a plan needs, pyarrow included): {seconds(total)}, "
                f"{difference(total - pa)} than `import pyarrow`"
            )
    for name, (first, steady) in fresh.first_plan.items():
        more = first - steady
        line = (
            f'- {LABELS[name]}, first plan of "{fresh.first_case}" in a fresh process (after '
            f"the import): {seconds(first)} against {seconds(steady)} in the same process "
            f"afterwards, {seconds(more)} more"
        )
        if name == "frazil":
            met = "meets" if more <= FIRST_PLAN_TARGET else "**MISSES**"
            line += f" ({met} the under {seconds(FIRST_PLAN_TARGET)} target)"
        lines.append(line)
    for name, (peak, idle) in fresh.peak_rss.items():
        line = (
            f'- {LABELS[name]}, peak RSS of a fresh process planning "{fresh.full_case}": '
            f"{mib(peak)} (the same process without the plan: {mib(idle)})"
        )
        if name == "frazil":
            met = "meets" if peak < RSS_TARGET else "**MISSES**"
            line += f" ({met} the under {mib(RSS_TARGET)} target)"
        lines.append(line)
    lines += [f"- failed: {e}" for e in fresh.errors]
    return lines


def section(
    *,
    table: PlanTable,
    cases: Sequence[Case],
    contenders: list[str],
    notes: list[str],
    outcomes: dict[tuple[str, str], Outcome],
    fresh: Fresh | None,
    load: Load,
    rounds: int,
    elapsed: float,
    reopen: bool = False,
) -> str:
    reference = []
    for case in cases:
        if case.name in REFERENCE:
            py, java = REFERENCE[case.name]
            reference.append(f"{case.label} {'unsupported' if py is None else py} / {java}")
    lines = [
        *header("Scan planning (`benches/bench_plan.py`)", "benches/bench_plan.py"),
        *environment_lines(load, notes),
        f"- Table: {table.data_files:,} data files in {table.data_manifests} manifests, "
        f"{table.position_deletes:,} position delete files in {table.delete_manifests} delete "
        f"manifests (snapshot 1), {table.equality_deletes} equality delete files in 2 more "
        f"(snapshot 2); {table.manifest_bytes / 1e6:.1f} MB of deflate manifests, written by "
        f"frazil in {table.generation_seconds:.0f} s (benches/plan_table.py)",
        f"- {rounds} interleaved rounds; run took {elapsed:.0f} s",
        "- Cases (filter as frazil and pyiceberg get it; Java gets the same expression):",
        *(
            f"  - {c.label}: `{c.text or 'no filter'}` on snapshot {c.snapshot(table)}"
            + (" (equality deletes)" if c.equality else "")
            for c in cases
        ),
        "",
        "### Wall time per plan: min (median)",
        "",
        *times_table(cases, contenders, outcomes),
        "",
        "Ratios: the peer's time over frazil's; above 1 means frazil is faster. Issue 10's "
        "figures for this kind of machine, pyiceberg / Java seconds: " + "; ".join(reference) + ".",
        "",
        "### frazil against its targets (by minimum)",
        "",
        *verdicts(cases, contenders, outcomes),
        "",
        "### Fresh processes",
        "",
        *fresh_lines(fresh),
        "",
        "### Method",
        "",
        "- One process drives the contenders. Each round runs every case once per contender, "
        "in an order rotated each round. Figures are wall time (every planner may use threads: "
        "frazil its pool, pyiceberg its executor, Java its worker pool, one thread per core). "
        "A measurement of a case with a repeat count N ("
        + ", ".join(f"{c.label}: {c.repeat}" for c in cases if c.repeat > 1)
        + ") times N plans back to back and reports their mean, for every contender alike: "
        "a lone plan of a millisecond measures the caches the previous, larger case left cold.",
        "- Each plan iterates `plan_files()` (Java: "
        "`newScan().useSnapshot(id).filter(expr).planFiles()`), touching every task's data "
        "file path and delete files; the filter is parsed in every plan. "
        + (
            "With `--reopen` (this run), each plan first opens the table from its metadata "
            "file (Java: `new BaseTable(new StaticTableOperations(metadata, io))`)."
            if reopen
            else "Every contender plans on a table it opened once, as a user plans on a table "
            "they hold (Java: one `new BaseTable(new StaticTableOperations(metadata, io))`); "
            "a snapshot keeps its manifest list once read (Java's `BaseSnapshot` caches it, "
            "frazil's planner too; pyiceberg reads it again). `--reopen` opens the table from "
            "its metadata file in every plan instead, for every contender."
        )
        + " Python's garbage collector stays on (it is part of the cost of building objects) "
        "and collects between plans.",
        "- Before timing, every contender's plan of every case is compared: number of data "
        "files, of delete-file references and of distinct delete files, and a SHA-256 over the "
        'sorted lines "data file path, its sorted delete file paths". Any difference stops '
        'the run. pyiceberg 0.12 refuses tables with equality deletes ("PyIceberg does not '
        'yet support equality deletes"): unsupported, not timed.',
        "- Java runs in one JVM (benches/java/PlanBench.java, compiled with javac at run time, "
        "driven over a pipe) that stays up between rounds; `System.nanoTime` around each "
        "plan. A local FileIO over `Files.localInput` (the runtime jar ships no Hadoop).",
        "- Fresh processes: `python -c` children, after frazil's bytecode is written "
        "(compileall, as `pip install` of the wheel does; an editable install under "
        "PYTHONDONTWRITEBYTECODE would compile every module in every child). "
        "Import time is measured inside the child "
        "around the import statement. First plan: the child imports, then plans the same case "
        "8 times; steady state is the fastest of the 7 later plans. Peak RSS is the child's "
        "`VmHWM` (/proc/self/status) at its end: not `ru_maxrss` from `os.wait4`, which on "
        "Linux carries the parent's high-water mark over the child's exec (subprocess uses "
        "vfork) and so reports this process's peak when it is larger.",
        f"- The table: one append a day for {table.days} days (one manifest of "
        f"{table.files_per_day:,} files each, 5% late "
        "arrivals for the day before), a merge-on-read DELETE every 10 days (position deletes: "
        "partition-scoped for about half of the partitions, file-scoped for 5% of the files), "
        "then equality deletes on `id` for the last 20 days and two global ones under an "
        "unpartitioned spec. Partitioned by `day(ts)`, `bucket[8](user_id)`; 12 columns, "
        "bounds and counts on 11 (strings truncated to 16 characters, doubles with NaN "
        "counts, decimal, date, boolean). See benches/plan_table.py.",
        "",
        *how_to_run(".venv/bin/python benches/bench_plan.py"),
        "Options: `--only frazil,pyiceberg,java`, `--rounds N`, `--java-warmup N`, "
        "`--java-opts '...'`, `--fresh-runs N`, `--skip-fresh`, `--reopen`, `--days N`, "
        "`--files-per-day N`, `--output PATH`. The table is generated on the first run "
        "(about a minute) and cached under benches/.work/.",
    ]
    return "\n".join(lines) + "\n"


def splice(path: Path, section_text: str) -> None:
    """Replaces this benchmark's section of ``path``, keeping the other benchmarks' ones."""
    write_section(path, MARKERS, section_text)
