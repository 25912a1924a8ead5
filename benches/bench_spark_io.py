"""Spark reads and writes: frazil.spark against Iceberg Java's Spark integration in the same
Spark 3.5 session (local[2]), on the same tables (issue 23, "Speed").

Cases (ROWS rows, default 10M; ``--rows`` for a quick check):

- read into ``noop``: every row of an unpartitioned table, through ``frazil.spark.read`` and
  ``spark.read.format("iceberg")``;
- filtered ``count()``: ``id < ROWS/2`` pushed into both planners;
- read with 10% position deletes (Java's merge-on-read DELETE wrote them) into ``noop``;
- write partitioned by ``day(ts), bucket[16](id)``: ``frazil.spark.write`` against Java's
  ``writeTo(...).append()``, both with ``write.distribution-mode=hash``;
- the floor: frazil's single-process local ``to_arrow()`` of the plain table.

Contenders run interleaved, their order rotated each round; the section of benches/RESULTS.md
between its markers is replaced.

    .venv/bin/python benches/bench_spark_io.py [--rows 10000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "interop"))

from _report import header, how_to_run, write_section

MARKERS = ("<!-- bench_spark_io:begin -->", "<!-- bench_spark_io:end -->")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _session(scratch: Path, warehouse: Path) -> Any:
    from java_referee import iceberg_spark_jars, local_spark_session

    return local_spark_session(
        app_name="bench-spark-io",
        driver_memory="6g",
        class_path=list(iceberg_spark_jars().values()),
        scratch=scratch,
        catalog="bench",
        warehouse=warehouse,
    )


def _build(spark: Any, rows: int) -> dict[str, str]:
    """The tables, written by Java (Spark SQL into the Hadoop catalog ``bench``); returns
    their metadata locations."""
    source = spark.range(0, rows, numPartitions=8).selectExpr(
        "id",
        "timestamp_seconds(1600000000 + id % 2592000) AS ts",
        "concat('name-', cast(id % 1000 AS string)) AS s",
        "cast(id AS double) / 3 AS d",
    )
    spark.sql("CREATE NAMESPACE IF NOT EXISTS bench.db")
    for name, props in (
        ("plain", ""),
        (
            "deletes",
            ", 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='file'",
        ),
    ):
        spark.sql(
            f"CREATE TABLE bench.db.{name} (id bigint, ts timestamp, s string, d double) "
            f"USING iceberg TBLPROPERTIES ('format-version'='2'{props})"
        )
        source.writeTo(f"bench.db.{name}").append()
    spark.sql("DELETE FROM bench.db.deletes WHERE id % 10 = 3")
    for name in ("part_java", "part_frazil"):
        spark.sql(
            f"CREATE TABLE bench.db.{name} (id bigint, ts timestamp, s string, d double) "
            "USING iceberg PARTITIONED BY (days(ts), bucket(16, id)) "
            "TBLPROPERTIES ('format-version'='2', 'write.distribution-mode'='hash')"
        )
    return {
        name: spark.sql(f"SELECT file FROM bench.db.{name}.metadata_log_entries")
        .orderBy("timestamp", ascending=False)
        .first()[0]
        for name in ("plain", "deletes")
    }


def _timed(work: Any) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="leave RESULTS.md alone")
    args = parser.parse_args()

    import frazil
    import frazil.spark

    root = Path(tempfile.mkdtemp(prefix="bench-spark-io-"))
    try:
        (root / "scratch").mkdir()
        spark = _session(root / "scratch", root / "warehouse")
        print(f"building {args.rows:,} rows ...", flush=True)
        started = time.monotonic()
        locations = _build(spark, args.rows)
        print(f"  built in {time.monotonic() - started:.0f} s", flush=True)
        plain = frazil.StaticTable.from_metadata(locations["plain"])
        deletes = frazil.StaticTable.from_metadata(locations["deletes"])
        half = args.rows // 2
        java = spark.read.format("iceberg")

        def noop(frame: Any) -> None:
            frame.write.format("noop").mode("overwrite").save()

        def frazil_write() -> None:
            from frazil.catalog import load_catalog

            catalog = load_catalog("bench_fs", type="filesystem", warehouse=str(root / "warehouse"))
            frazil.spark.write(source(), catalog.load_table("db.part_frazil"))

        def source() -> Any:
            return spark.read.format("iceberg").load(locations["plain"])

        cases: dict[str, dict[str, Any]] = {
            "read into noop": {
                "frazil.spark": lambda: noop(frazil.spark.read(spark, plain)),
                "Java (Iceberg Spark)": lambda: noop(java.load(locations["plain"])),
                "frazil local to_arrow (floor)": lambda: plain.scan().to_arrow(),
            },
            "filtered count()": {
                "frazil.spark": lambda: frazil.spark.read(
                    spark, plain, row_filter=f"id < {half}"
                ).count(),
                "Java (Iceberg Spark)": lambda: (
                    java.load(locations["plain"]).where(f"id < {half}").count()
                ),
            },
            "read, 10% position deletes, into noop": {
                "frazil.spark": lambda: noop(frazil.spark.read(spark, deletes)),
                "Java (Iceberg Spark)": lambda: noop(java.load(locations["deletes"])),
            },
            "write, day(ts) + bucket[16](id), hash": {
                "frazil.spark": frazil_write,
                "Java (Iceberg Spark)": lambda: source().writeTo("bench.db.part_java").append(),
            },
        }
        # One untimed pass: Python workers started, JIT and caches warm for every contender.
        for contenders in cases.values():
            for work in contenders.values():
                work()
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for case, contenders in cases.items():
                names = list(contenders)
                k = r % len(names)
                for name in names[k:] + names[:k]:
                    times.setdefault((case, name), []).append(_timed(contenders[name]))
            print(f"  round {r + 1}/{args.rounds} at {time.monotonic() - started:.0f} s")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    lines = header(
        "Spark reads and writes (frazil.spark vs Iceberg Java)", "benches/bench_spark_io.py"
    )
    lines += [
        f"- Rows: {args.rows:,}; Spark 3.5 local[2], one session; {args.rounds} rounds, "
        "interleaved; cells: min (median) seconds; ratio = frazil.spark / Java (medians; "
        "below 1 is faster)",
        "",
        "| case | frazil.spark | Java (Iceberg Spark) | ratio | frazil local floor |",
        "|---|---|---|---|---|",
    ]
    for case, contenders in cases.items():
        ours = times[(case, "frazil.spark")]
        theirs = times[(case, "Java (Iceberg Spark)")]
        floor = times.get((case, "frazil local to_arrow (floor)"))
        ratio = statistics.median(ours) / statistics.median(theirs)
        cell = lambda xs: f"{min(xs):.2f} ({statistics.median(xs):.2f})"  # noqa: E731
        lines.append(
            f"| {case} | {cell(ours)} | {cell(theirs)} | {ratio:.2f} | "
            f"{cell(floor) if floor else ''} |"
        )
        del contenders
    lines += ["", *how_to_run("python benches/bench_spark_io.py --rows 10000000 --rounds 3")]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(RESULTS, MARKERS, text)


if __name__ == "__main__":
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    main()
