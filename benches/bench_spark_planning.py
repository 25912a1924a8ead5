"""frazil on Spark (issue 23, "Speed"): one subcommand per section.

    python benches/bench_spark_planning.py planning [--files 5000000] [--per-manifest 5000]

``planning``: a synthetic table of ``--files`` data files (metadata only: manifests written by
``frazil.manifest.write_manifest``, one manifest list, the metadata file; no data file
exists), planned with ``frazil.spark.planning.iter_tasks`` locally and distributed
(``read.data-planning-mode`` = ``distributed``) in a local[2] session, each in a fresh driver
process so that its peak RSS (``VmHWM`` of /proc/self/status) is its own. Prints one JSON line
per measurement. The table is cached under benches/.work/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"

# --- planning --------------------------------------------------------------------------------

PLANNING_GENERATOR_VERSION = 1
PLANNING_FILTERS = {
    "all": None,
    # A tenth of the days: partition pruning on manifests and entries.
    "days": "ts >= '2025-03-01T00:00:00+00:00' AND ts < '2025-03-11T00:00:00+00:00'",
    # Metrics pruning on every entry (ids are not partitioned).
    "id": "id < 1000000",
}


def planning_table(files: int, per_manifest: int) -> Path:
    """The metadata file of a table of ``files`` data files, ``per_manifest`` a manifest, one
    manifest a day (benches/plan_table.py's schema, spec and file shape: 12 columns, metrics
    on 11), made on first use."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sys.path.insert(0, str(HERE))
    import plan_table as pt
    from frazil import TableMetadata, write_metadata
    from frazil import manifest as m

    manifests = -(-files // per_manifest)
    directory = WORK / f"spark-planning-{files}x{per_manifest}-v{PLANNING_GENERATOR_VERSION}"
    metadata_path = directory / "metadata" / "v1.metadata.json"
    if metadata_path.exists():
        return metadata_path
    started = time.monotonic()
    meta = directory / "metadata"
    meta.mkdir(parents=True, exist_ok=True)
    rng = random.Random(pt.SEED)
    ids = pt._Ids()
    # One manifest's entries made once as dicts, then reused with new paths and days.
    template_entries = [
        {"status": 1, "data_file": pt._data_file(rng, ids, 0, i, 0, "job")}
        for i in range(per_manifest)
    ]
    template_path = meta / "template.avro"
    m.write_manifest(template_path, template_entries, schema=pt.SCHEMA, spec=pt.SPEC)
    template = m.read_manifest(template_path)
    template_path.unlink()
    data_file = template.column("data_file").combine_chunks()
    names = [f.name for f in data_file.type]
    partition = data_file.field("partition")
    rows = []
    for k in range(manifests):
        count = min(per_manifest, files - k * per_manifest)
        day = pt.DAY0 + dt.timedelta(days=k)
        paths = pa.array(
            [
                f"s3://warehouse/db/events/data/ts_day={day.isoformat()}/{k:06d}-{i:05d}.parquet"
                for i in range(count)
            ]
        )
        days = pa.array([day] * count, pa.date32())
        new_partition = pa.StructArray.from_arrays(
            [days, partition.field("user_id_bucket").slice(0, count)],
            fields=list(partition.type),
        )
        children = [
            paths
            if name == "file_path"
            else new_partition
            if name == "partition"
            else data_file.field(name).slice(0, count)
            for name in names
        ]
        entries = template.slice(0, count).set_column(
            template.schema.get_field_index("data_file"),
            "data_file",
            pa.StructArray.from_arrays(children, fields=list(data_file.type)),
        )
        assert pc.count(entries.column("status")).as_py() == count
        row = m.write_manifest(
            meta / f"data-{k:06d}.avro", entries, schema=pt.SCHEMA, spec=pt.SPEC, snapshot_id=1
        )
        rows.append(row)
        if k % 100 == 99:
            print(f"  {k + 1}/{manifests} manifests", file=sys.stderr, flush=True)
    manifest_list = meta / "snap-1.avro"
    m.write_manifest_list(manifest_list, rows, snapshot_id=1, sequence_number=1)
    now_ms = 1_760_000_000_000
    snapshot = {
        "sequence-number": 1,
        "snapshot-id": 1,
        "timestamp-ms": now_ms,
        # Totals as Java writes them: no equality deletes, so AUTO may distribute.
        "summary": {
            "operation": "append",
            "total-data-files": str(files),
            "total-delete-files": "0",
            "total-equality-deletes": "0",
            "total-position-deletes": "0",
        },
        "manifest-list": str(manifest_list),
        "schema-id": 0,
    }
    metadata = TableMetadata.from_json(
        {
            "format-version": 2,
            "table-uuid": "1d4b0a63-4f0a-4c7e-9a63-26a2f2f4f3c1",
            "location": str(directory),
            "last-sequence-number": 1,
            "last-updated-ms": now_ms,
            "last-column-id": 12,
            "current-schema-id": 0,
            "schemas": [pt.SCHEMA],
            "default-spec-id": 0,
            "partition-specs": [pt.SPEC],
            "last-partition-id": 1001,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": {},
            "current-snapshot-id": 1,
            "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
            "snapshots": [snapshot],
            "snapshot-log": [{"timestamp-ms": now_ms, "snapshot-id": 1}],
            "metadata-log": [],
        }
    )
    write_metadata(metadata, metadata_path.with_suffix(".tmp"))
    metadata_path.with_suffix(".tmp").rename(metadata_path)
    print(
        f"  table written in {time.monotonic() - started:.0f}s "
        f"({sum(p.stat().st_size for p in meta.glob('*.avro')) / 1e6:.0f} MB of manifests)",
        file=sys.stderr,
        flush=True,
    )
    return metadata_path


def _peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _spark_session() -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master("local[2]")
        .appName("frazil-bench-planning")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )


def planning_child(metadata: str, mode: str, filter_name: str) -> dict[str, Any]:
    """One plan in this (fresh) process: the tasks are counted as they stream, not kept."""
    import frazil
    from frazil.spark import planning

    spark = _spark_session()
    try:
        table = frazil.StaticTable.from_metadata(metadata)
        options = {
            planning.DATA_PLANNING_MODE: mode,
            planning.DELETE_PLANNING_MODE: mode,
        }
        scan = table.scan(row_filter=PLANNING_FILTERS[filter_name], options=options)
        # Warm the session (JVM, Python workers) off the clock: a job like the plan's.
        spark.range(4, numPartitions=2).mapInArrow(lambda b: b, "id long").collect()
        rss_before = _peak_rss_mb()
        started = time.monotonic()
        groups = files = 0
        stream = planning.iter_tasks(spark, scan)
        # Distributed: the Spark jobs (executors decode and prune, entries collected) run
        # before iter_tasks returns; the driver forms the tasks while they are taken.
        jobs_seconds = time.monotonic() - started
        for group in stream:
            groups += 1
            files += len(group.tasks)
        seconds = time.monotonic() - started
        snapshot = scan.snapshot()
        assert snapshot is not None and snapshot.manifest_list is not None
        manifests = len(scan._raw().planning(snapshot.manifest_list).data_manifests())
        return {
            "mode": mode,
            "filter": filter_name,
            "seconds": round(seconds, 2),
            "seconds_before_first_task": round(jobs_seconds, 2),
            "tasks": files,
            "groups": groups,
            "manifests": manifests,
            "driver_peak_rss_mb_before": round(rss_before),
            "driver_peak_rss_mb": round(_peak_rss_mb()),
        }
    finally:
        spark.stop()


def planning(args: argparse.Namespace) -> None:
    """Local vs distributed planning of the synthetic table, each in a fresh process."""
    metadata = planning_table(args.files, args.per_manifest)
    for run in range(args.runs):
        for filter_name in args.filters:
            for mode in ("local", "distributed"):
                code = (
                    "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_spark; "
                    "print(json.dumps(bench_spark.planning_child(*sys.argv[2:])))"
                )
                done = subprocess.run(
                    [sys.executable, "-c", code, str(HERE), str(metadata), mode, filter_name],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    sys.stderr.write(done.stderr[-4000:])
                    raise SystemExit(f"planning child failed ({mode}, {filter_name})")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                result.update(files=args.files, per_manifest=args.per_manifest, run=run)
                print(json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sections = parser.add_subparsers(dest="section", required=True)
    plan = sections.add_parser("planning", help="local vs distributed scan planning")
    plan.add_argument("--files", type=int, default=5_000_000)
    plan.add_argument("--per-manifest", type=int, default=5_000)
    plan.add_argument("--runs", type=int, default=1)
    plan.add_argument(
        "--filters", nargs="+", default=["all", "days", "id"], choices=sorted(PLANNING_FILTERS)
    )
    plan.set_defaults(run=planning)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
