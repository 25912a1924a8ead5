"""Manifest decoding speed: frazil against its peers, entries per second.

Synthetic table: 200 manifests of 1,000 data-file entries (200,000 in all),
10 columns of realistic metrics (sizes, value/null/NaN counts, lower and upper
bounds), two partition fields, deflate, written by frazil. The same files are
read, in interleaved rounds, by frazil, pyiceberg (``ManifestFile.
fetch_manifest_entry``), pyiceberg-core (``manifest.read_manifest_entries``),
fastavro (plain records) and Apache Iceberg Java (``ManifestFiles.read``, timed
inside a JVM kept running between rounds; benches/java/ManifestBench.java).
Run with a release build and the test, interop and bench extras installed:

    python benches/bench_manifest.py [--manifests 200] [--entries 1000] [--rounds 3]
        [--data random|spark] [--skip pyiceberg,pyiceberg-core,fastavro,java]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frazil import manifest as m

COLUMNS = 10


def schema_and_spec() -> tuple[dict[str, Any], dict[str, Any]]:
    fields = [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
    ]
    fields += [
        {"id": i, "name": f"c{i}", "required": False, "type": "long" if i % 2 else "string"}
        for i in range(3, COLUMNS + 1)
    ]
    schema = {"type": "struct", "schema-id": 0, "fields": fields}
    spec = {
        "spec-id": 0,
        "fields": [
            {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000},
            {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
        ],
    }
    return schema, spec


def entry(rng: random.Random, k: int, i: int) -> dict[str, Any]:
    records = rng.randrange(1_000, 1_000_000)
    lower, upper = [], []
    for c in range(1, COLUMNS + 1):
        if c % 2 or c == 2:  # long and timestamptz columns: 8-byte bounds
            lo = rng.randrange(0, 1 << 40)
            lower.append((c, struct.pack("<q", lo)))
            upper.append((c, struct.pack("<q", lo + rng.randrange(1 << 30))))
        else:
            lower.append((c, f"value-{rng.randrange(10**6):06d}".encode()))
            upper.append((c, f"value-{rng.randrange(10**6, 10**7):07d}".encode()))
    day = 19_000 + rng.randrange(365)
    # Arguments are evaluated in order, so the random draws stay in the order
    # that earlier runs of this bench used.
    return added_entry(
        k,
        file_path=f"s3://warehouse/db/table/data/ts_day={day}/{k:05d}-{i:05d}-"
        f"{rng.getrandbits(64):016x}.parquet",
        partition={"ts_day": day, "id_bucket": rng.randrange(16)},
        records=records,
        file_size=records * 40,
        column_sizes=[(c, rng.randrange(1 << 24)) for c in range(1, COLUMNS + 1)],
        null_counts=[(c, rng.randrange(100)) for c in range(1, COLUMNS + 1)],
        bounds=(lower, upper),
    )


def added_entry(
    k: int,
    *,
    file_path: str,
    partition: dict[str, Any],
    records: int,
    file_size: int,
    column_sizes: list[tuple[int, int]],
    null_counts: list[tuple[int, int]],
    bounds: tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]],
) -> dict[str, Any]:
    """An ADDED data-file entry of manifest k, in the manifest_entry layout."""
    return {
        "status": 1,
        "snapshot_id": 1000 + k,
        "sequence_number": k,
        "file_sequence_number": k,
        "data_file": {
            "content": 0,
            "file_path": file_path,
            "file_format": "PARQUET",
            "partition": partition,
            "record_count": records,
            "file_size_in_bytes": file_size,
            "column_sizes": column_sizes,
            "value_counts": [(c, records) for c in range(1, COLUMNS + 1)],
            "null_value_counts": null_counts,
            "nan_value_counts": [],
            "lower_bounds": bounds[0],
            "upper_bounds": bounds[1],
            "split_offsets": [4],
            "sort_order_id": 0,
        },
    }


def spark_entry(rng: random.Random, k: int, i: int) -> dict[str, Any]:
    """An entry as one Spark append per manifest would write it: the write's
    job UUID in every file name, one day per manifest, ids increasing from
    file to file, timestamps within the day, bounded value domains and
    two-letter codes in the string columns, sizes that follow the row count,
    and mostly zero null counts. Real metrics repeat like this, so the
    manifests compress about 2.5x rather than the random profile's 1.7x."""
    records = rng.randrange(100_000, 1_000_000)
    day = 19_000 + k
    job = f"{random.Random(k).getrandbits(128):032x}"
    job = f"{job[:8]}-{job[8:12]}-{job[12:16]}-{job[16:20]}-{job[20:]}"
    first_id = (k * 1_000 + i) * 1_000_000
    lower, upper = [], []
    for c in range(1, COLUMNS + 1):
        if c == 1:
            lo, hi = first_id, first_id + records - 1
        elif c == 2:
            lo = day * 86_400_000_000 + rng.randrange(3_600_000_000)
            hi = (day + 1) * 86_400_000_000 - 1 - rng.randrange(3_600_000_000)
        elif c % 2:
            lo, hi = rng.randrange(1_000), 10_000_000 - rng.randrange(1_000)
        else:
            lower.append((c, rng.choice(["AD", "AE", "AF", "AG"]).encode()))
            upper.append((c, rng.choice(["ZA", "ZM", "ZW"]).encode()))
            continue
        lower.append((c, struct.pack("<q", lo)))
        upper.append((c, struct.pack("<q", hi)))
    bucket = i % 16
    return added_entry(
        k,
        file_path=f"s3://warehouse/db/table/data/ts_day={day}/id_bucket={bucket}/"
        f"{i:05d}-{1000 + i}-{job}-00001.parquet",
        partition={"ts_day": day, "id_bucket": bucket},
        records=records,
        file_size=records * 40 + rng.randrange(100_000),
        column_sizes=[(c, records * 4 + rng.randrange(records)) for c in range(1, COLUMNS + 1)],
        null_counts=[(c, 0 if c < 5 else rng.randrange(1_000)) for c in range(1, COLUMNS + 1)],
        bounds=(lower, upper),
    )


PROFILES = {"random": entry, "spark": spark_entry}


def build(
    directory: Path, manifests: int, entries: int, codec: str, profile: str = "random"
) -> list[dict[str, Any]]:
    import datetime as dt

    schema, spec = schema_and_spec()
    rng = random.Random(7)
    rows = []
    epoch = dt.date(1970, 1, 1)
    make = PROFILES[profile]
    for k in range(manifests):
        batch = [make(rng, k, i) for i in range(entries)]
        for e in batch:
            part = e["data_file"]["partition"]
            part["ts_day"] = epoch + dt.timedelta(days=part["ts_day"])
        path = directory / f"manifest-{k:04d}.avro"
        row = m.write_manifest(
            path, batch, schema=schema, spec=spec, snapshot_id=1000 + k, codec=codec
        )
        row["added_snapshot_id"] = 1000 + k
        rows.append(row)
    m.write_manifest_list(
        directory / "snap.avro", rows, snapshot_id=2000, sequence_number=manifests
    )
    return m.read_manifest_list(directory / "snap.avro").to_pylist()


# (entries read, sum of their record_count): the sum checks that every reader
# decoded the same entries.
Result = tuple[int, int]

NO_BOUNDS = [
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
    "data_file.content",
    "data_file.file_path",
    "data_file.file_format",
    "data_file.partition",
    "data_file.record_count",
    "data_file.file_size_in_bytes",
    "data_file.column_sizes",
    "data_file.value_counts",
    "data_file.null_value_counts",
    "data_file.nan_value_counts",
    "data_file.split_offsets",
    "data_file.sort_order_id",
]
PLANNING = ["data_file.file_path", "data_file.partition", "data_file.record_count"]


class Timing:
    """Best (lowest CPU) of the rounds of one reader. Python readers run on the
    calling thread, so CPU is that thread's time (``thread_time``): the machine
    is shared, and wall time also measures the other tenants (and process time
    the spinning BLAS threads that numpy starts). Java's CPU is the JVM's
    process time, which also counts its garbage collector and JIT threads."""

    def __init__(self, label: str, cpu_based: bool = True) -> None:
        self.label = label
        self.cpu_based = cpu_based
        self.cpu = self.wall = float("inf")
        self.result: Result | None = None

    def add(self, cpu: float, wall: float, result: Result) -> None:
        if self.result is not None and result != self.result:
            raise AssertionError(f"{self.label}: read {result}, earlier {self.result}")
        self.result = result
        self.cpu, self.wall = min(self.cpu, cpu), min(self.wall, wall)

    def rate(self) -> float:
        assert self.result is not None
        return self.result[0] / (self.cpu if self.cpu_based else self.wall)


def python_timed(fn: Callable[[], Result]) -> Callable[[], tuple[float, float, Result]]:
    def run() -> tuple[float, float, Result]:
        wall, cpu = time.perf_counter(), time.thread_time()
        result = fn()
        return time.thread_time() - cpu, time.perf_counter() - wall, result

    return run


def frazil_reader(
    listing: list[dict[str, Any]], columns: list[str] | None, threads: int
) -> Callable[[], Result]:
    import pyarrow.compute as pc

    def read() -> Result:
        tables = m.read_manifests(listing, columns=columns, threads=threads)
        # Columnar output: counting is not decoding, so it stays out of the
        # Python loop the peers need (it costs well under 1% of the read).
        entries = sum(t.num_rows for t in tables)
        records = sum(
            pc.sum(pc.struct_field(t.column("data_file"), "record_count")).as_py() or 0
            for t in tables
        )
        return entries, records

    return read


def pyiceberg_reader(listing_path: Path) -> Callable[[], Result]:
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list

    io = PyArrowFileIO()
    manifests = list(read_manifest_list(io.new_input(str(listing_path))))

    def read() -> Result:
        entries = records = 0
        for manifest in manifests:
            for e in manifest.fetch_manifest_entry(io, discard_deleted=False):
                records += e.data_file.record_count
                entries += 1
        return entries, records

    return read


def pyiceberg_core_reader(listing: list[dict[str, Any]]) -> Callable[[], Result]:
    from pyiceberg_core import manifest as core

    paths = [row["manifest_path"] for row in listing]

    def read() -> Result:
        entries = records = 0
        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            for e in core.read_manifest_entries(data).entries():
                records += e.data_file.record_count
                entries += 1
        return entries, records

    return read


def fastavro_reader(listing: list[dict[str, Any]]) -> Callable[[], Result]:
    import fastavro

    paths = [row["manifest_path"] for row in listing]

    def read() -> Result:
        entries = records = 0
        for path in paths:
            with open(path, "rb") as f:
                for e in fastavro.reader(f):
                    records += e["data_file"]["record_count"]
                    entries += 1
        return entries, records

    return read


class JavaReader:
    """Apache Iceberg Java 1.10 (the iceberg-spark-runtime jar) in a JVM that
    stays up between rounds, so its JIT is warm and its rounds interleave
    with the Python readers'. Single-threaded: one reader thread, serial GC."""

    def __init__(self, listing_path: Path, build_dir: Path, warmup: int) -> None:
        import pyspark
        import snowpark_connect_deps_iceberg

        runtime = [
            j
            for j in snowpark_connect_deps_iceberg.list_jars()
            if Path(j).name.startswith("iceberg-spark-runtime-3.5_2.12-")
        ]
        slf4j = sorted((Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
        if not runtime or not slf4j or not shutil.which("javac"):
            raise RuntimeError("needs javac, the iceberg-spark-runtime jar and pyspark's slf4j")
        classpath = os.pathsep.join([str(runtime[0]), str(slf4j[0])])
        source = Path(__file__).parent / "java" / "ManifestBench.java"
        classes = build_dir / "classes"
        subprocess.run(["javac", "-d", str(classes), "-cp", classpath, str(source)], check=True)
        self.proc = subprocess.Popen(
            [
                "java",
                "-XX:+UseSerialGC",
                "-Xmx2g",
                "-cp",
                f"{classpath}{os.pathsep}{classes}",
                "ManifestBench",
                str(listing_path),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        if not ready.startswith("ready"):
            raise RuntimeError(f"ManifestBench did not start: {ready!r}")
        for _ in range(warmup):
            self.command("all")
            self.command("planning")

    def command(self, cmd: str) -> tuple[float, float, Result]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split()
        if len(reply) != 5:
            raise RuntimeError(f"ManifestBench failed on {cmd!r}: {reply}")
        entries, records, _thread_ns, process_ns, wall_ns = map(int, reply)
        return process_ns / 1e9, wall_ns / 1e9, (entries, records)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifests", type=int, default=200)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument(
        "--data",
        choices=sorted(PROFILES),
        default="random",
        help="random metrics (the default), or metrics shaped like a Spark append's",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--java-warmup", type=int, default=3, help="untimed Java passes")
    parser.add_argument(
        "--skip", default="", help="comma-separated: pyiceberg,pyiceberg-core,fastavro,java"
    )
    args = parser.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        listing = build(directory, args.manifests, args.entries, args.codec, args.data)
        listing_path = directory / "snap.avro"
        total = args.manifests * args.entries
        size = sum(r["manifest_length"] for r in listing)
        print(
            f"{args.manifests} manifests, {total} entries, {size / 1e6:.1f} MB"
            f" ({args.codec}, {args.data} metrics)"
        )

        readers: list[tuple[Timing, Callable[[], tuple[float, float, Result]]]] = [
            (Timing("frazil, every field"), python_timed(frazil_reader(listing, None, 1))),
            (
                Timing("frazil, without bounds maps"),
                python_timed(frazil_reader(listing, NO_BOUNDS, 1)),
            ),
            (
                Timing("frazil, paths+partitions+counts"),
                python_timed(frazil_reader(listing, PLANNING, 1)),
            ),
            (
                Timing("frazil, every field, threads=2 (wall)", cpu_based=False),
                python_timed(frazil_reader(listing, None, 2)),
            ),
            (
                Timing("frazil, without bounds maps, threads=2 (wall)", cpu_based=False),
                python_timed(frazil_reader(listing, NO_BOUNDS, 2)),
            ),
        ]
        # Java runs right after frazil, so that its JIT and collector threads
        # have the pure-Python readers' seconds to settle before the next
        # round's parallel frazil reads, which need both cores.
        java = None
        if "java" not in skip:
            try:
                java = JavaReader(listing_path, directory, args.java_warmup)
            except (ImportError, RuntimeError, OSError, subprocess.CalledProcessError) as e:
                print(f"Java skipped: {e}")
        if java is not None:
            jv = java
            readers.append((Timing("Iceberg Java 1.10, every field"), lambda: jv.command("all")))
            readers.append(
                (
                    Timing("Iceberg Java 1.10, paths+partitions+counts"),
                    lambda: jv.command("planning"),
                )
            )
        if "pyiceberg" not in skip:
            readers.append(
                (
                    Timing("pyiceberg 0.12, every field"),
                    python_timed(pyiceberg_reader(listing_path)),
                )
            )
        if "pyiceberg-core" not in skip:
            readers.append(
                (
                    Timing("pyiceberg-core, every field"),
                    python_timed(pyiceberg_core_reader(listing)),
                )
            )
        if "fastavro" not in skip:
            readers.append(
                (Timing("fastavro, every field (dicts)"), python_timed(fastavro_reader(listing)))
            )
        try:
            for _ in range(args.rounds):
                for timing, run in readers:
                    timing.add(*run())
        finally:
            if java is not None:
                java.close()

        expected = readers[0][0].result
        base = readers[0][0].rate()
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"best of {args.rounds} interleaved rounds; load average {load}")
        print("last column: how many times faster frazil (every field, 1 thread) is")
        for timing, _ in readers:
            if timing.result != expected:
                raise AssertionError(f"{timing.label} read {timing.result}, frazil {expected}")
            kind = "cpu" if timing.cpu_based else "wall"
            # The calling thread's CPU says nothing about a parallel read.
            cpu = f"{timing.cpu * 1000:8.1f} ms" if timing.cpu_based else "      --   "
            print(
                f"{timing.label:<44} cpu {cpu}"
                f"  wall {timing.wall * 1000:8.1f} ms"
                f"  {timing.rate() / 1000:8.1f}k entries/s ({kind})"
                f"  {base / timing.rate():5.1f}x"
            )
        # Scaling: the parallel reads' wall time against the same fields read
        # on one thread (wall time too, so both include the same Python work).
        by_label = {timing.label: timing for timing, _ in readers}
        for one, two in (
            ("frazil, every field", "frazil, every field, threads=2 (wall)"),
            ("frazil, without bounds maps", "frazil, without bounds maps, threads=2 (wall)"),
        ):
            speedup = by_label[one].wall / by_label[two].wall
            fields = one.removeprefix("frazil, ")
            print(f"threads=2 speedup over 1 thread (wall), {fields}: {speedup:.2f}x")


if __name__ == "__main__":
    main()
