"""The RESULTS.md section of benches/bench_write.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from _report import Load, environment_lines, header, how_to_run, min_median, ratio_cell, ratio_of
from read_report import seconds, write

if TYPE_CHECKING:
    from bench_write import Outcome

__all__ = ["MARKERS", "section", "write"]

MARKERS = ("<!-- writing results: begin -->", "<!-- writing results: end -->")
LABELS = {
    "frazil": "frazil",
    "pyiceberg": "pyiceberg",
    "pyarrow": "pyarrow floor",
    "pyarrow-parallel": "pyarrow parallel floor",
}
CASE_LABELS = {"unpartitioned": "unpartitioned", "partitioned": "day(ts), bucket[16](id)"}
FLOOR_TARGET = 1.2  # frazil / floor at most
PYICEBERG_TARGET = 3.0  # pyiceberg / frazil at least, partitioned


def _cell(out: Outcome | None, cpu: bool) -> str:
    if out is None or not out.times:
        return ""
    return min_median(out.cpu if cpu else out.times, seconds)


def times_table(
    cases: Sequence[str], contenders: list[str], outs: dict[tuple[str, str], Outcome], cpu: bool
) -> list[str]:
    others = [c for c in contenders if c != "frazil"] if "frazil" in contenders else []
    head = ["case", *(LABELS[c] for c in contenders)]
    head += [f"frazil / {LABELS[c]} (min / median)" for c in others]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for case in cases:
        row = [CASE_LABELS[case]] + [_cell(outs.get((c, case)), cpu) for c in contenders]
        for c in others:
            row.append(ratio_cell(outs.get(("frazil", case)), outs.get((c, case)), cpu))
        lines.append("| " + " | ".join(row) + " |")
    return lines


def files_table(
    cases: Sequence[str], contenders: list[str], outs: dict[tuple[str, str], Outcome]
) -> list[str]:
    head = ["case", *(LABELS[c] for c in contenders)]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for case in cases:
        row = [CASE_LABELS[case]]
        for c in contenders:
            out = outs.get((c, case))
            row.append("" if out is None else f"{out.files} files, {out.bytes / 1e6:.0f} MB")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def verdicts(cases: Sequence[str], outs: dict[tuple[str, str], Outcome]) -> list[str]:
    lines = []
    for case in cases:
        ours = outs.get(("frazil", case))
        if ours is None:
            return ["- frazil was not run: no verdicts."]
        parts = []
        floor = ratio_of(ours, outs.get(("pyarrow", case)), min)
        if floor is not None:
            met = "met" if floor <= FLOOR_TARGET else "**MISS**"
            parts.append(f"{floor:.2f}x the one-file floor (target <= {FLOOR_TARGET}x): {met}")
        parallel = ratio_of(ours, outs.get(("pyarrow-parallel", case)), min)
        if parallel is not None:
            parts.append(f"{parallel:.2f}x the parallel floor")
        peer = ratio_of(ours, outs.get(("pyiceberg", case)), min)
        if peer is not None:
            text = f"{1 / peer:.2f}x faster than pyiceberg"
            if case == "partitioned":
                met = "met" if 1 / peer >= PYICEBERG_TARGET else "**MISS**"
                text += f" (target >= {PYICEBERG_TARGET}x): {met}"
            parts.append(text)
        lines.append(f"- {CASE_LABELS[case]}: " + "; ".join(parts))
    return lines


def section(
    *,
    rows: int,
    data_bytes: int,
    generated: float,
    contenders: list[str],
    notes: list[str],
    outcomes: dict[tuple[str, str], Outcome],
    load: Load,
    rounds: int,
    small: bool,
    elapsed: float,
) -> str:
    from bench_write import BUCKETS, CASES, DAYS

    title = "Writing tables (append) (`benches/bench_write.py`)"
    lines = [
        *header(title, "benches/bench_write.py", small=small),
        *environment_lines(load, notes),
        f"- Data: {rows:,} rows, {data_bytes / 1e6:.0f} MB of Arrow in memory (generated "
        "vectorized by the script, cached under benches/.work/"
        + (f", generated in {generated:.0f} s" if generated else "")
        + "): long id, timestamptz ts (random over "
        f"{DAYS} days), int, double (1% nulls), short low-cardinality string, ~30-character "
        "string (1% nulls), decimal(12, 2), date, boolean, 16-byte binary",
        f"- Partitioned case: `day(ts), bucket[{BUCKETS}](id)`, {DAYS * BUCKETS} partitions",
        f"- {rounds} interleaved rounds; run took {elapsed:.0f} s",
        "",
        "### Wall time of one append of the whole pyarrow Table: min (median)",
        "",
        *times_table(CASES, contenders, outcomes, cpu=False),
        "",
        "Ratios: frazil's time over the other's; below 1 means frazil is faster.",
        "",
        "### CPU seconds of the process per append (every thread): min (median)",
        "",
        *times_table(CASES, contenders, outcomes, cpu=True),
        "",
        "### Files written",
        "",
        *files_table(CASES, contenders, outcomes),
        "",
        "### frazil against its targets (by minimum)",
        "",
        *verdicts(CASES, outcomes),
        "",
        "### Method",
        "",
        "- One process drives the contenders. Each round runs every case once per contender, "
        "in an order rotated each round, each into a fresh table (created before the clock "
        "starts; its files removed after); the garbage collector runs before each write.",
        "- Before timing, every contender's files are read back with pyarrow and compared with "
        "the input (rows, `sum(id)`, `sum(qty)`, `sum(amount)`, non-null `note` values; "
        "frazil's data files' record counts too). Any difference stops the run.",
        "- The floors do no Iceberg work: no partitioning, no field ids, no metrics, no "
        "manifests; the same for both cases.",
        "",
        *how_to_run(
            ".venv/bin/python benches/bench_write.py            # 10M rows",
            ".venv/bin/python benches/bench_write.py --small    # 1M rows, a quick check",
        ),
        "Options: `--only frazil,pyiceberg,pyarrow,pyarrow-parallel`, `--rounds N`, `--rows N`, "
        "`--output PATH`, `--no-write`.",
    ]
    return "\n".join(lines) + "\n"
