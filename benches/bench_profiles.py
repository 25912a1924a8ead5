"""Builds of the extension against each other: the same Python package with each build's
``_native`` library, timed on the hot paths of the other benches (issue 22: a faster first
install must not give up more than 3% on any benchmark).

Each build is given as NAME=PATH (a ``libfrazil.so`` or ``_native.abi3.so``); the first is the
baseline. For every round, every workload runs once per build in a fresh process, the builds
in an order that rotates from round to round; a process times its workload ``--reps`` times
after one untimed run and reports its best wall and CPU time. The figure per build is the
median over rounds of those bests, and the ratio is build / baseline (above 1: slower).

Workloads (frazil only; the peers are the other benches' business):

- ``plan_*``: ``plan_files()`` of bench_plan's generated table (``--days`` x
  ``--files-per-day`` data files), the full scan with equality deletes and one day;
- ``transform_*``: ``bucket[16]`` of 10M longs, ``truncate[4]`` and ``bucket[16]`` of 1M
  strings, ``day`` of 10M timestamps (bench_transforms' data);
- ``manifests``: ``read_manifests`` of bench_manifest's 200 manifests of 1,000 entries;
- ``read_*``: ``to_arrow()`` of bench_read's tables with position and equality deletes
  (``--read-rows``; written by Spark on the first run, cached);
- ``write``: a partitioned ``append`` of bench_write's 1M rows.

Command: ``.venv/bin/python benches/bench_profiles.py --build fat=target/release/libfrazil.so
--build thin=target/thin/libfrazil.so``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
PACKAGE = BENCH_DIR.parent / "python" / "frazil"

WORKLOADS = (
    "plan_equality",
    "plan_one_day",
    "transform_bucket_long",
    "transform_day",
    "transform_truncate_string",
    "transform_bucket_string",
    "manifests",
    "read_positional",
    "read_equality",
    "write",
)


# ------------------------------------------------------------------ one workload, one process


def _prepare(name: str, options: dict[str, Any], work: Path) -> Any:
    """The workload as a callable, its inputs generated (or loaded from the benches' caches)."""
    sys.path.insert(0, str(BENCH_DIR))
    if name.startswith("plan_"):
        import frazil
        from bench_plan import cases
        from plan_table import cached_table

        table = cached_table(options["days"], options["files_per_day"])
        wanted = {"plan_equality": "full_equality", "plan_one_day": "one_day"}[name]
        case = next(c for c in cases(table) if c.name == wanted)
        static = frazil.StaticTable.from_metadata(table.metadata)
        kwargs: dict[str, Any] = {"snapshot_id": case.snapshot(table)}
        if case.text is not None:
            kwargs["row_filter"] = case.text

        def plan() -> int:
            total = 0
            for _ in range(case.repeat):
                total += sum(1 for _ in static.scan(**kwargs).plan_files())
            return total

        return plan
    if name.startswith("transform_"):
        import numpy as np
        import pyarrow as pa
        from bench_transforms import make_strings
        from frazil import transforms

        rng = np.random.default_rng(20261122)
        if name == "transform_bucket_long":
            longs = pa.array(rng.integers(-(2**62), 2**62, 10_000_000))
            return lambda: transforms.bucket(longs, 16)
        if name == "transform_day":
            micros = pa.array(rng.integers(0, 2**50, 10_000_000)).cast(pa.timestamp("us"))
            return lambda: transforms.apply("day", micros)
        strings = make_strings(1_000_000, rng)
        if name == "transform_truncate_string":
            return lambda: transforms.truncate(strings, 4)
        return lambda: transforms.bucket(strings, 16)
    if name == "manifests":
        import bench_manifest
        from frazil import manifest

        directory = work / "manifests"
        if not (directory / "snap.avro").exists():
            directory.mkdir(parents=True, exist_ok=True)
            bench_manifest.build(directory, 200, 1000, "deflate")
        listing = manifest.read_manifest_list(directory / "snap.avro").to_pylist()
        return lambda: sum(t.num_rows for t in manifest.read_manifests(listing))
    if name.startswith("read_"):
        import frazil
        from read_table import cached_tables

        tables = cached_tables(options["read_rows"], 20)
        variant = tables.variant(name.removeprefix("read_"))
        static = frazil.StaticTable.from_metadata(variant.metadata)
        return lambda: static.scan().to_arrow().num_rows
    if name == "write":
        from bench_write import SCHEMA_JSON, cached_data
        from frazil.catalog.memory import InMemoryCatalog
        from frazil.schema import Schema

        data, _, _ = cached_data(1_000_000)
        where = Path(tempfile.mkdtemp(dir=work))

        def append() -> int:
            shutil.rmtree(where, ignore_errors=True)
            catalog = InMemoryCatalog(warehouse=str(where))
            catalog.create_namespace("bench")
            table = catalog.create_table(("bench", "t"), Schema.from_json(SCHEMA_JSON))
            with table.update_spec() as update:
                update.add_field("ts", "day").add_field("id", "bucket[16]")
            table.append(data)
            return 0

        return append
    raise SystemExit(f"unknown workload {name!r}")


def _child(name: str, reps: int, options: dict[str, Any], work: Path) -> None:
    run = _prepare(name, options, work)
    run()  # untimed: caches, pools, first-call costs
    best_wall = best_cpu = float("inf")
    for _ in range(reps):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    print(json.dumps({"wall": best_wall, "cpu": best_cpu}))


# ------------------------------------------------------------------------------- the driver


def _package_for(build: Path, root: Path) -> Path:
    """A directory holding the ``frazil`` package with ``build`` as its extension."""
    target = root / "frazil"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy2(build, target / "_native.abi3.so")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--days", type=int, default=200)
    parser.add_argument("--files-per-day", type=int, default=1000)
    parser.add_argument("--read-rows", type=int, default=10_000_000)
    parser.add_argument("--work", type=Path, default=BENCH_DIR / ".work" / "profiles")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    options = {
        "days": args.days,
        "files_per_day": args.files_per_day,
        "read_rows": args.read_rows,
    }
    args.work.mkdir(parents=True, exist_ok=True)
    if args.child:
        _child(args.child, args.reps, options, args.work)
        return
    if not args.build:
        parser.error("give at least one --build NAME=PATH (the first is the baseline)")
    builds: list[tuple[str, Path]] = []
    for item in args.build:
        name, _, path = item.partition("=")
        builds.append((name, Path(path).resolve()))
    workloads = args.workloads.split(",")
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as packages:
        roots = {name: _package_for(path, Path(packages) / name) for name, path in builds}
        for round_ in range(args.rounds):
            order = builds[round_ % len(builds) :] + builds[: round_ % len(builds)]
            for workload in workloads:
                for name, _ in order:
                    env = {**os.environ, "PYTHONPATH": str(roots[name])}
                    command = [sys.executable, __file__, "--child", workload]
                    command += ["--reps", str(args.reps), "--work", str(args.work)]
                    command += [
                        "--days",
                        str(args.days),
                        "--files-per-day",
                        str(args.files_per_day),
                    ]
                    command += ["--read-rows", str(args.read_rows)]
                    done = subprocess.run(
                        command,
                        env=env,
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"{workload} on {name} failed:\n{done.stderr}")
                    figures = json.loads(done.stdout.strip().splitlines()[-1])
                    results.setdefault((workload, name), []).append(figures)
            print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    base = builds[0][0]
    header = (
        "| workload | "
        + " | ".join(f"{name} wall (cpu)" for name, _ in builds)
        + " | "
        + " | ".join(f"{name}/{base} wall (cpu)" for name, _ in builds[1:])
        + " |"
    )
    print(header)
    print("|" + "---|" * (1 + 2 * len(builds) - 1))
    for workload in workloads:
        medians = {
            name: {
                key: statistics.median(r[key] for r in results[workload, name])
                for key in ("wall", "cpu")
            }
            for name, _ in builds
        }
        cells = [
            f"{medians[name]['wall'] * 1000:.1f} ms ({medians[name]['cpu'] * 1000:.0f})"
            for name, _ in builds
        ]
        ratios = [
            f"{medians[name]['wall'] / medians[base]['wall']:.3f} "
            f"({medians[name]['cpu'] / medians[base]['cpu']:.3f})"
            for name, _ in builds[1:]
        ]
        print(f"| {workload} | " + " | ".join(cells + ratios) + " |")


if __name__ == "__main__":
    main()
