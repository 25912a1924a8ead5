"""The RESULTS.md section of benches/bench_commit.py."""

from __future__ import annotations

import datetime as dt
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from _report import write_section

if TYPE_CHECKING:
    from bench_commit import Base, Concurrent, Series

BEGIN = "<!-- commit results: begin -->"
END = "<!-- commit results: end -->"
TARGET_MS = 30.0


@dataclass
class Report:
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    notes: list[str] = field(default_factory=list)
    bases: list[Base] = field(default_factory=list)
    append: dict[tuple[str, int], Series] = field(default_factory=dict)
    rounds: int = 0
    expire_base: Base | None = None
    expire: dict[str, Series] = field(default_factory=dict)
    expire_deleted: dict[str, int] = field(default_factory=dict)
    expire_cleanup: str = "reachable"
    expire_added: int = 0
    concurrent: list[Concurrent] = field(default_factory=list)
    elapsed: float = 0.0
    command: str = ""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _versus(ratio: float) -> str:
    """frazil against a peer, from peer time / frazil time."""
    return f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 else str(n)


def _append_lines(r: Report) -> list[str]:
    if not r.append:
        return []
    names = sorted({c for c, _ in r.append}, key=["frazil", "pyiceberg", "java"].index)
    lines = [
        "### Fast-append commit latency",
        "",
        "One fresh 10-row Parquet file registered by a fast append and committed, on a table "
        "of N data files (fake files in manifests of at most 10k entries; the table loaded "
        f"untimed, the pointer reset to the same base version before each measurement); {r.rounds} "
        "interleaved rounds, median (min).",
        "",
        "| table | " + " | ".join(names) + " | frazil vs pyiceberg | frazil vs Java |",
        "|---|" + "---:|" * (len(names) + 2),
    ]
    for base in r.bases:
        cells = [
            f"{ms(r.append[n, base.files].median)} ({ms(r.append[n, base.files].min)})"
            for n in names
        ]
        ratios = []
        for peer in ("pyiceberg", "java"):
            if ("frazil", base.files) in r.append and (peer, base.files) in r.append:
                ratios.append(
                    _versus(
                        r.append[peer, base.files].median / r.append["frazil", base.files].median
                    )
                )
            else:
                ratios.append("-")
        lines.append(
            f"| {_size(base.files)} files, {base.snapshots} snapshots | "
            + " | ".join(cells + ratios)
            + " |"
        )
    if "frazil" in names and r.bases:
        medians = [r.append["frazil", b.files].median for b in r.bases]
        flat = max(medians) / min(medians)
        under = max(medians) * 1000 < TARGET_MS
        faster = all(
            r.append["frazil", b.files].median < r.append[p, b.files].median
            for b in r.bases
            for p in names
            if p != "frazil"
        )
        lines += [
            "",
            f"Target (flat in table size, under {TARGET_MS:.0f} ms, faster than both): "
            f"largest/smallest frazil median {flat:.2f}x; under {TARGET_MS:.0f} ms: "
            f"{'yes' if under else 'no'}; faster than every peer at every size: "
            f"{'yes' if faster else 'no'}.",
        ]
    return lines


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {kind}" for kind, n in counts.items())


def _expire_lines(r: Report) -> list[str]:
    base = r.expire_base
    if base is None:
        return []
    lines = [
        "### Expire snapshots",
        "",
        f"A table of {base.snapshots:,} snapshots adding {r.expire_added:,} data files "
        f"({base.files:,} live; every tenth snapshot an overwrite removing the 100 files added "
        "five snapshots before), the data files on disk as empty files. Each round restores "
        "the table directory (hard links) and the catalog pointer, loads the table (untimed) "
        "and times expiring every snapshot older than the current one, deleting the files "
        "through the contender's FileIO (Java: core's `expireSnapshots().expireOlderThan(t)"
        f".commit()` with the {r.expire_cleanup} file cleanup, its default delete executor). "
        "Java core would pick its incremental cleanup for this linear history; it keeps the "
        "100 data files the current overwrite removed until that snapshot expires as well, "
        "where the reachable cleanup (Spark's expire action, frazil) deletes every file no "
        "retained snapshot reaches. Checked first: the files each contender deletes "
        f"(read from the disk) are the same, {_kinds(r.expire_deleted)}, and the current "
        "snapshot still plans every live file. Interleaved rounds, median (min) of "
        f"{len(next(iter(r.expire.values())).times)}.",
        "",
        "| contender | expire + file cleanup |",
        "|---|---:|",
    ]
    for name, series in r.expire.items():
        lines.append(f"| {name} | {series.median:.2f} s ({series.min:.2f} s) |")
    if "frazil" in r.expire and "java" in r.expire:
        ratio = r.expire["java"].median / r.expire["frazil"].median
        lines += ["", f"frazil is {_versus(ratio)} than Java."]
    return lines


def _concurrent_lines(r: Report) -> list[str]:
    if not r.concurrent:
        return []
    lines = [
        "### Concurrent writers",
        "",
        "Writer processes each appending 10 rows per commit (`table.append`, fast appends) to "
        "one table of the SQLite catalog for a fixed time; a commit lost to another writer "
        "is retried by each library itself per the table's `commit.retry.*` (num-retries set "
        "to 1000; 100 ms doubling backoff, Java's defaults, which pyiceberg 0.12 follows too). "
        "Commits/s counts commits landed within the run; retries per commit are commit "
        "attempts at the catalog beyond the first, over every commit (the last in-flight ones "
        "finish after the run, under long backoffs: 'until done'). Checked afterwards: one "
        "linear history holding every commit once.",
        "",
        "| contender | writers | seconds | commits in time | commits/s | retries per commit |"
        " all commits, until done |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in r.concurrent:
        lines.append(
            f"| {c.contender} | {c.writers} | {c.seconds:.0f} | {c.in_time} | "
            f"{c.per_second:.1f} | {c.retries_per_commit:.2f} | {c.commits} in "
            f"{c.elapsed:.0f} s |"
        )
    return lines


def section(r: Report) -> str:
    lines = [
        "## Commits and maintenance (`benches/bench_commit.py`)",
        "",
        f"Run {dt.date.today().isoformat()} on {platform.machine()}, Python "
        f"{platform.python_version()}; load average {r.load_before[0]:.1f} before, "
        f"{r.load_after[0]:.1f} after (a shared machine); {r.elapsed / 60:.0f} minutes. "
        "Contenders: " + "; ".join(r.notes) + ". One SQLite catalog file shared by frazil's "
        "SqlCatalog, pyiceberg's SqlCatalog and Java's JdbcCatalog.",
        "",
        *_append_lines(r),
        "",
        *_expire_lines(r),
        "",
        *_concurrent_lines(r),
        "",
        f"Command: `.venv/bin/python {r.command}`. Options: `--only`, `--parts "
        "append,expire,concurrent`, `--sizes`, `--rounds`, `--warmup`, `--expire-rounds`, "
        "`--expire-snapshots`, `--expire-files`, `--writers`, `--seconds`, `--java-opts`, "
        "`--profile`, `--java-cleanup`, `--output`, `--work`. Tables are generated on the "
        "first run and cached under the work directory (default benches/.work/commit).",
    ]
    return "\n".join(lines) + "\n"


def splice(path: Path, section_text: str) -> None:
    """Replaces this benchmark's section of ``path``, keeping the other benchmarks' ones."""
    write_section(path, (BEGIN, END), section_text)
