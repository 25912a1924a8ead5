"""The RESULTS.md sections of benches/bench_read.py."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING

from _report import (
    Load,
    cpu_model,
    environment_lines,
    header,
    how_to_run,
    min_median,
    ratio_cell,
    ratio_of,
    version,
    write_section,
)

if TYPE_CHECKING:
    from bench_read import Outcome, Stream
    from read_table import ReadTables

MARKERS = ("<!-- reading results: begin -->", "<!-- reading results: end -->")
MEMORY_MARKERS = (
    "<!-- streaming memory results: begin -->",
    "<!-- streaming memory results: end -->",
)
LABELS = {
    "frazil": "frazil",
    "pyiceberg": "pyiceberg",
    "duckdb": "DuckDB",
    "pyarrow": "pyarrow floor",
}
VARIANT_LABELS = {
    "none": "no deletes",
    "positional": "10% position deletes",
    "equality": "equality deletes",
}
FLOOR_TARGET = {"none": 1.15, "positional": 1.3, "equality": 2.0}  # frazil / floor at most
PEERS = ("pyiceberg", "duckdb")  # frazil faster than each, on every variant
RSS_TARGET = 1 << 30
SCRIPT = "benches/bench_read.py"


def seconds(x: float) -> str:
    return f"{x:.2f} s" if x >= 1 else f"{x * 1000:.0f} ms"


def mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB"


def _cell(out: Outcome | None, cpu: bool = False) -> str:
    if out is None:
        return ""
    if out.status.startswith("unsupported"):
        return "unsupported"
    if out.status.startswith("timed out"):
        return f"not done: {out.status.removeprefix('timed out: ')}"
    if not out.times:
        return f"**{out.status}**"
    return min_median(out.cpu if cpu else out.times, seconds)


def _variant_label(tables: ReadTables, name: str) -> str:
    v = tables.variant(name)
    if name == "equality":
        return f"{v.equality_keys:,} equality keys"
    return VARIANT_LABELS[name]


def times_table(
    tables: ReadTables,
    contenders: list[str],
    outs: dict[tuple[str, str], Outcome],
    cpu: bool = False,
) -> list[str]:
    others = [c for c in contenders if c != "frazil"] if "frazil" in contenders else []
    head = ["variant", "rows read", *(LABELS[c] for c in contenders)]
    head += [f"frazil / {LABELS[c]} (min / median)" for c in others]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for v in tables.variants:
        row = [_variant_label(tables, v.name), f"{v.rows:,}"]
        row += [_cell(outs.get((c, v.name)), cpu) for c in contenders]
        for c in others:
            theirs = outs.get((c, v.name))
            if theirs is not None and theirs.status != "ok":
                row.append(theirs.status.split(":")[0])
                continue
            row.append(ratio_cell(outs.get(("frazil", v.name)), theirs, cpu))
        lines.append("| " + " | ".join(row) + " |")
    return lines


def verdicts(
    tables: ReadTables, contenders: list[str], outs: dict[tuple[str, str], Outcome]
) -> list[str]:
    if "frazil" not in contenders:
        return ["- frazil was not run: no verdicts."]
    lines = []
    for v in tables.variants:
        ours = outs.get(("frazil", v.name))
        parts = []
        floor = ratio_of(ours, outs.get(("pyarrow", v.name)), min)
        target = FLOOR_TARGET[v.name]
        if floor is not None:
            met = "met" if floor <= target else "**MISS**"
            parts.append(f"{floor:.2f}x the floor (target <= {target}x): {met}")
        for peer in PEERS:
            theirs = outs.get((peer, v.name))
            if theirs is None:
                continue
            if theirs.status.startswith("unsupported"):
                parts.append(f"{LABELS[peer]} unsupported")
                continue
            if theirs.status.startswith("timed out") and ours is not None and ours.times:
                parts.append(
                    f"{LABELS[peer]} {theirs.status} (frazil {seconds(min(ours.times))}): met"
                )
                continue
            x = ratio_of(ours, theirs, min)
            if x is None:
                continue
            met = "met" if x < 1 else "**MISS**"
            parts.append(f"{1 / x:.2f}x faster than {LABELS[peer]} (target > 1x): {met}")
        lines.append(f"- {_variant_label(tables, v.name)}: " + "; ".join(parts))
    return lines


def section(
    *,
    tables: ReadTables,
    contenders: list[str],
    notes: list[str],
    outcomes: dict[tuple[str, str], Outcome],
    load: Load,
    rounds: int,
    small: bool,
    elapsed: float,
) -> str:
    none = tables.variant("none")
    lines = [
        *header("Reading tables (`benches/bench_read.py`)", SCRIPT, small=small),
        *environment_lines(load, notes),
        f"- Tables (benches/read_table.py, written by Iceberg Java 1.10.2 through PySpark in "
        f"{tables.generation_seconds:.0f} s): {tables.rows:,} rows in "
        f"{len(none.data_files)} Parquet files ({none.data_bytes / 1e6:.0f} MB), partitioned "
        f"by `day(ts)` over {tables.days} days; columns long, timestamptz, int, double, two "
        "strings, decimal(10, 2), date, boolean",
        f"- {rounds} interleaved rounds; run took {elapsed:.0f} s",
        "",
        "### Wall time of a whole-table read into one pyarrow Table: min (median)",
        "",
        *times_table(tables, contenders, outcomes),
        "",
        "Ratios: frazil's time over the other's; below 1 means frazil is faster.",
        "",
        "### CPU seconds of the process per read (every thread): min (median)",
        "",
        *times_table(tables, contenders, outcomes, cpu=True),
        "",
        "Not the targets' measure (wall time is), but steadier when the machine is shared: "
        "a reader that keeps both cores busy and one that waits show here as what they cost.",
        "",
        "### frazil against its targets (by minimum)",
        "",
        *verdicts(tables, contenders, outcomes),
        "",
        "### Method",
        "",
        "- One process drives the contenders. Each round reads every variant once per "
        "contender, in an order rotated each round; the garbage collector runs between reads. "
        "Every contender uses its own threads (pyarrow's pool, DuckDB's `threads` default, "
        "frazil's files in flight: the core count).",
        "- Each read opens the table from its metadata file (planning included) and returns "
        "every column. frazil: `StaticTable.from_metadata(path).scan().to_arrow()`; pyiceberg "
        "0.12 the same through `pyiceberg.table.StaticTable`; DuckDB: `SELECT * FROM "
        "iceberg_scan('path')` then `.to_arrow_table()` (extension from the PyPI wheels "
        "`duckdb_extension_iceberg`/`_avro`); floor: pyarrow's Parquet reader over the "
        "variant's data files, `pq.ParquetFile(path, pre_buffer=True).read()` per file in a "
        "pool of one thread per core, then `pa.concat_tables`, with no Iceberg logic (it "
        "returns the deleted rows too). `pyarrow.dataset.dataset(files).to_table()` (and "
        "`pq.read_table(files)`, the same path) measured about twice as slow at 1M rows, so "
        "it is not the floor.",
        "- Before timing, every contender's result is checked against Spark's read of the "
        "same snapshot (rows, `sum(id)`, `sum(qty)`, non-null `note` values) and the column "
        "names against each other; the floor's row count against the data files' record "
        "counts. Any difference stops the run. pyiceberg 0.12 refuses equality deletes: "
        "unsupported, not timed. A DuckDB read still running after `--timeout` seconds "
        "(default 300) is interrupted (`con.interrupt()` from a timer thread) and reported "
        "as not done, not timed: its equality-delete reads ran for minutes at 1M rows.",
        "- Variants: `INSERT` of the rows (one file a day); `DELETE ... WHERE id % 10 = 3` in "
        "merge-on-read mode (Spark's position delete files); the same data files in a second "
        "table whose partition field is then dropped, with one global equality delete file on "
        "`id` (`id % 10 = 7`) written by Java's `EqualityDeleteWriter` through py4j.",
        "",
        *how_to_run(
            ".venv/bin/python benches/bench_read.py            # 10M rows",
            ".venv/bin/python benches/bench_read.py --small    # 1M rows, a quick check",
        ),
        "Options: `--only frazil,pyiceberg,duckdb,pyarrow`, `--rounds N`, `--rows N`, "
        "`--output PATH`, `--no-write`. The tables are built by Spark on the first run and "
        "cached under benches/.work/.",
    ]
    return "\n".join(lines) + "\n"


def memory_section(
    *, tables: ReadTables, streams: list[Stream], small: bool, elapsed: float
) -> str:
    v = tables.variants[0]
    lines = [
        *header("Streaming memory (`benches/bench_read.py --memory`)", SCRIPT, small=small),
        f"- Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
        f"pyarrow {version('pyarrow')}",
        f"- Table (benches/read_table.py, built by Iceberg Java through PySpark in "
        f"{tables.generation_seconds:.0f} s): {v.data_rows:,} rows in {len(v.data_files)} "
        f"Parquet files, {v.data_bytes / 1e9:.2f} GB; {v.delete_files} delete files (Spark's "
        f"merge-on-read DELETE of 10% of the rows, then {v.equality_keys:,} global "
        "equality keys on `id`); "
        f"{v.rows:,} rows left; run took {elapsed:.0f} s",
        f"- Data files of {v.data_bytes / len(v.data_files) / 1e6:.0f} MB on average (one a day "
        "of 1M rows, as the full run writes them). frazil reads `read.files-in-flight` files "
        f"at once (default: the core count, here {os.cpu_count()}); the one being consumed "
        "runs at most 4 batches ahead, the others within a 256 MiB budget, each reading at "
        "most 64 MiB of row groups per call: the peak follows those bounds (plus the delete "
        "sets), not the file or table size.",
        "",
        "| reader | rows | batches | largest batch | seconds | RSS after imports | peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in streams:
        reader = (
            "frazil `scan().to_batches()`"
            if s.contender == "frazil"
            else ("pyarrow floor `dataset(data_files).scanner().to_reader()` (no deletes)")
        )
        lines.append(
            f"| {reader} | {s.rows:,} | {s.batches:,} | {mib(s.biggest_batch)} | "
            f"{s.seconds:.1f} | {mib(s.idle_rss)} | {mib(s.peak_rss)} |"
        )
    frazil = next((s for s in streams if s.contender == "frazil"), None)
    if frazil is not None:
        met = "met" if frazil.peak_rss < RSS_TARGET else "**MISS**"
        lines += [
            "",
            f"Target: frazil's peak RSS under {mib(RSS_TARGET)}: {mib(frazil.peak_rss)}, {met}.",
        ]
    lines += [
        "",
        "Each reader runs in a fresh `python -c` process that consumes the stream batch by "
        "batch (summing `id`, keeping nothing); peak RSS is the child's own `VmHWM` "
        "(/proc/self/status) at its end. frazil's rows and `sum(id)` are checked against "
        "Spark's read.",
    ]
    return "\n".join(lines) + "\n"


def write(path: Path | None, markers: tuple[str, str], section_text: str) -> None:
    """Replaces this section of ``path``, keeping the other benchmarks' ones (``None``: the
    ``--no-write`` option)."""
    if path is None:
        print("not written (--no-write)")
        return
    write_section(path, markers, section_text)
    print(f"written to {path}")
