"""Cluster job (tests/spark4/test_cluster.py): frazil in executors shipped by venv-pack.

Executors' Python workers report where they run (interpreter, process, the JVM above them, the
thread count frazil would use) and bucket ROWS ids with frazil.transforms; the driver checks the
buckets against its own, then writes them to an Iceberg table with frazil's local API and
reads them back. Emits one JSON object (see the test for what it holds)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from spark4_cluster import cluster_session, emit

ROWS = 500_000
THREADS = "3"
FACTS = pa.schema(
    [
        ("pid", pa.int64()),
        ("executable", pa.string()),
        ("prefix", pa.string()),
        ("cwd", pa.string()),
        ("frazil", pa.string()),
        ("native", pa.string()),
        ("threads", pa.int32()),
        ("jvm_pid", pa.int64()),
        ("jvm_cmdline", pa.string()),
    ]
)


def _jvm_above() -> dict[str, Any]:
    """The nearest java process above this one (the executor JVM, through pyspark's daemon)."""
    pid = os.getppid()
    while pid > 1:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if cmdline and cmdline[0].endswith(b"java"):
            return {"pid": pid, "cmdline": b" ".join(cmdline).decode(errors="replace")}
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return {"pid": None, "cmdline": ""}


def facts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import frazil
    import frazil._native
    from frazil import _threads

    for _ in batches:
        pass
    jvm = _jvm_above()
    yield pa.RecordBatch.from_pylist(
        [
            {
                "pid": os.getpid(),
                "executable": sys.executable,
                "prefix": sys.prefix,
                "cwd": os.getcwd(),
                "frazil": frazil.__file__,
                "native": frazil._native.__file__,
                "threads": _threads.threads(),
                "jvm_pid": jvm["pid"],
                "jvm_cmdline": jvm["cmdline"],
            }
        ],
        schema=FACTS,
    )


def buckets(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from frazil import transforms

    for batch in batches:
        ids = batch.column("id")
        yield pa.RecordBatch.from_arrays([ids, transforms.bucket(ids, 16)], ["id", "bucket"])


def main() -> None:
    from frazil import transforms
    from frazil.catalog.filesystem import FileSystemCatalog

    spark = cluster_session(
        "frazil-cluster-executors", {"spark.executorEnv.FRAZIL_THREADS": THREADS}
    )
    driver_jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    reports = (
        spark.range(0, 4, numPartitions=4)
        .mapInArrow(
            facts,
            "pid long, executable string, prefix string, cwd string, frazil string, "
            "native string, threads int, jvm_pid long, jvm_cmdline string",
        )
        .collect()
    )
    computed = (
        spark.range(0, ROWS, numPartitions=4)
        .mapInArrow(buckets, "id long, bucket int")
        .toArrow()
        .sort_by("id")
    )
    expected = transforms.bucket(pa.array(range(ROWS), pa.int64()), 16)
    mismatches = pc.sum(pc.not_equal(computed.column("bucket"), expected)).as_py() or 0

    # The executors' result into an Iceberg table with frazil's local API, and back.
    catalog = FileSystemCatalog("local", warehouse=str(Path.cwd() / f"warehouse-{os.getpid()}"))
    catalog.create_namespace("db")
    table = catalog.create_table("db.buckets", computed.schema)
    table.append(computed)
    read = catalog.load_table("db.buckets").scan().to_arrow().sort_by("id")
    spark.stop()
    emit(
        {
            "driver": {
                "pid": os.getpid(),
                "executable": sys.executable,
                "jvm_pid": driver_jvm,
                "frazil_threads_env": os.environ.get("FRAZIL_THREADS"),
            },
            "executors": [row.asDict() for row in reports],
            "rows": computed.num_rows,
            "mismatches": mismatches,
            "table_rows": read.num_rows,
            "table_equal": read.equals(computed.cast(read.schema)),
        }
    )


if __name__ == "__main__":
    main()
