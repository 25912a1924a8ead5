"""The tables that benches/bench_read.py reads: real Parquet data, written by Apache Iceberg
Java 1.10.2 through PySpark (local[2], a Hadoop catalog), built once and cached.

One data set, three variants (each a metadata file, so every reader opens it the same way):

- ``none``: table ``bench.events`` (v2, partitioned by ``day(ts)``) after one ``INSERT`` of
  ``rows`` rows spread evenly over ``days`` days: one data file per day (Spark's hash
  distribution clusters rows by partition), 9 columns of mixed types (long, timestamptz, int,
  double, two strings, decimal(10, 2), date, boolean; nulls in three of them);
- ``positional``: the same table after ``DELETE FROM ... WHERE id % 10 = 3`` in merge-on-read
  mode: Spark's position delete files, 10% of the rows deleted;
- ``equality``: table ``bench.events_eq``, which holds the same data files (appended through
  the Java API from the first snapshot of ``events``: the same Parquet, so the pyarrow floor
  reads the same bytes), its ``day(ts)`` partition field then dropped (spec 1,
  unpartitioned) so that one global equality delete file on ``id`` applies to every data file:
  ``rows / 10`` keys (``id % 10 = 7``), written by Java's ``EqualityDeleteWriter``
  (tests/interop/java/PlanReferee.addEqualityDeletes, through py4j).

For each variant Spark's own read gives the truth the bench checks every contender against:
row count, ``sum(id)``, ``sum(qty)`` and the number of non-null ``note`` values.

The streaming-memory table (``--memory``) is ``bench.events_big``: the same columns plus a
128-character ``payload`` (SHA-512 hex: does not compress, so the table reaches its size with
fewer rows), inserted a chunk of days at a time until its data files exceed ``target_bytes``;
then the same merge-on-read DELETE (10% of rows) and ``min(1M, rows / 10)`` equality keys.

Cached under benches/.work/ (gitignored), keyed by the parameters and ``GENERATOR_VERSION``;
``table.json`` is written last, so a build killed halfway is redone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
INTEROP = ROOT / "tests" / "interop"
WORK = BENCH_DIR / ".work"
# Bump when the generated tables change, so stale caches are not reused.
GENERATOR_VERSION = 2
CATALOG = "ref"
NAMESPACE = "bench"
RS = "\u001e"  # PlanReferee's row separator
T0_MICROS = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
MICROS_PER_DAY = 86_400_000_000
POSITION_DELETE = "id % 10 = 3"
EQUALITY_KEYS = "id % 10 = 7"
MAX_EQUALITY_KEYS = 1_000_000
MEMORY_CHUNK_DAYS = 4

COLUMNS_DDL = (
    "id bigint, ts timestamp, qty int, amount double, country string, note string, "
    "price decimal(10, 2), event_date date, flag boolean"
)
PROPERTIES = (
    "'format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
)


def _select(first: int, last: int, rows: int, days: int, payload: bool) -> str:
    """Rows ``first`` to ``last - 1`` of a data set of ``rows`` rows over ``days`` days."""
    extra = ", sha2(CAST(id AS STRING), 512) AS payload" if payload else ""
    return f"""
        SELECT id,
          timestamp_micros({T0_MICROS} + (id * {days} div {rows}) * {MICROS_PER_DAY}
                           + (id * 7919) % {MICROS_PER_DAY}) AS ts,
          IF(id % 17 = 0, NULL, CAST((id * 31) % 1000 AS INT)) AS qty,
          IF(id % 23 = 0, NULL, (id % 10007) * 1.25D) AS amount,
          element_at(array('US', 'DE', 'FR', 'BR', 'JP', 'IN', 'UY'), CAST(id % 7 AS INT) + 1)
            AS country,
          IF(id % 13 = 0, NULL, concat('note-', CAST((id * 2654435761) % 1000003 AS STRING)))
            AS note,
          CAST((id % 100000) / 100 AS DECIMAL(10, 2)) AS price,
          date_add(DATE'2024-01-01', CAST(id % 365 AS INT)) AS event_date,
          id % 3 = 0 AS flag{extra}
        FROM range({first}, {last})"""


@dataclass(frozen=True)
class Variant:
    """One metadata file to read, and Spark's answer for it."""

    name: str
    metadata: str
    data_files: tuple[str, ...]  # local paths, for the pyarrow floor
    delete_files: int
    equality_keys: int  # rows of the equality delete files
    rows: int  # rows Spark reads
    sum_id: int
    sum_qty: int
    notes: int  # non-null ``note`` values
    data_rows: int  # rows in the data files, deleted ones included
    data_bytes: int


@dataclass(frozen=True)
class ReadTables:
    directory: str
    rows: int
    days: int
    variants: tuple[Variant, ...]
    generation_seconds: float

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    @staticmethod
    def from_json(data: dict[str, Any]) -> ReadTables:
        variants = tuple(
            Variant(**{**v, "data_files": tuple(v["data_files"])}) for v in data["variants"]
        )
        return ReadTables(**{**data, "variants": variants})


# ------------------------------------------------------------------------------ Spark


class Spark:
    """One local SparkSession with Iceberg Java, a Hadoop catalog over ``warehouse``."""

    def __init__(self, warehouse: Path, scratch: Path) -> None:
        # The interop tests' SparkSession recipe, so these tables come from the same Java
        # set-up as the parity tests. Appended: benches/ modules keep their names.
        if str(INTEROP) not in sys.path:
            sys.path.append(str(INTEROP))
        from java_referee import iceberg_spark_jars, local_spark_session

        jars = iceberg_spark_jars()
        classes = scratch / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        # PlanReferee.addEqualityDeletes: Java's EqualityDeleteWriter, as the interop tests use.
        sources = sorted(str(p) for p in (INTEROP / "java").glob("*.java"))
        subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", str(jars["runtime"]), *sources],
            check=True,
        )
        self.warehouse = warehouse
        self.session = local_spark_session(
            app_name="frazil-read-bench",
            driver_memory="2g",
            class_path=[jars["runtime"], jars["extensions"], classes],
            scratch=scratch,
            catalog=CATALOG,
            warehouse=warehouse,
            # Commits through the Java API go around Spark's catalog: no stale cached tables.
            catalog_options={"cache-enabled": "false"},
        )
        self.java = self.session._jvm

    def sql(self, statement: str) -> list[Any]:
        return list(self.session.sql(statement).collect())

    def java_table(self, table: str) -> Any:
        conf = self.session._jsc.hadoopConfiguration()
        catalog = self.java.org.apache.iceberg.hadoop.HadoopCatalog(conf, str(self.warehouse))
        identifier = self.java.org.apache.iceberg.catalog.TableIdentifier.parse(
            f"{NAMESPACE}.{table}"
        )
        return catalog.loadTable(identifier)

    def metadata_file(self, table: str) -> str:
        folder = self.warehouse / NAMESPACE / table / "metadata"
        version = (folder / "version-hint.text").read_text().strip()
        return str(folder / f"v{version}.metadata.json")

    def variant(self, name: str, table: str, equality_keys: int = 0) -> Variant:
        """The table's current snapshot as a variant, with Spark's answer for it."""
        self.sql(f"REFRESH TABLE {CATALOG}.{NAMESPACE}.{table}")
        full = f"{CATALOG}.{NAMESPACE}.{table}"
        ((rows, sum_id, sum_qty, notes),) = self.sql(
            f"SELECT count(*), sum(id), sum(qty), count(note) FROM {full}"
        )
        data_files, data_rows, data_bytes = [], 0, 0
        for path, records, size in self.sql(
            f"SELECT file_path, record_count, file_size_in_bytes FROM {full}.data_files"
        ):
            data_files.append(path.removeprefix("file:"))
            data_rows += records
            data_bytes += size
        ((deletes,),) = self.sql(f"SELECT count(*) FROM {full}.delete_files")
        return Variant(
            name=name,
            metadata=self.metadata_file(table),
            data_files=tuple(sorted(data_files)),
            delete_files=deletes,
            equality_keys=equality_keys,
            rows=rows,
            sum_id=int(sum_id),
            sum_qty=int(sum_qty),
            notes=notes,
            data_rows=data_rows,
            data_bytes=data_bytes,
        )

    def equality_delete_ids(self, table: str, ids: list[int]) -> None:
        """One global equality delete file on ``id`` (the table must have an unpartitioned
        spec 1), written by Java's EqualityDeleteWriter."""
        java_table = self.java_table(table)
        id_field = java_table.schema().findField("id").fieldId()
        rows = RS.join(f'{{"{id_field}":{i}}}' for i in ids)
        self.java.org.frazil.interop.PlanReferee.addEqualityDeletes(
            java_table, 1, str(id_field), "", rows
        )

    def stop(self) -> None:
        self.session.stop()


# ---------------------------------------------------------------------------- builders


def _create(spark: Spark, table: str, payload: bool) -> str:
    name = f"{CATALOG}.{NAMESPACE}.{table}"
    columns = COLUMNS_DDL + (", payload string" if payload else "")
    spark.sql(
        f"CREATE TABLE {name} ({columns}) USING iceberg PARTITIONED BY (days(ts)) "
        f"TBLPROPERTIES ({PROPERTIES})"
    )
    return name


def _equality_keys(rows: int, limit: int | None) -> list[int]:
    keys = list(range(7, rows, 10))  # EQUALITY_KEYS
    return keys if limit is None else keys[:limit]


def build(directory: Path, rows: int, days: int) -> ReadTables:
    """The three variants of benches/bench_read.py under ``directory`` (must not exist)."""
    start = time.monotonic()
    warehouse = directory / "warehouse"
    spark = Spark(warehouse, directory / "spark")
    try:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
        events = _create(spark, "events", payload=False)
        spark.sql(f"INSERT INTO {events} {_select(0, rows, rows, days, payload=False)}")
        none = spark.variant("none", "events")
        first_snapshot = spark.java_table("events").currentSnapshot().snapshotId()
        spark.sql(f"DELETE FROM {events} WHERE {POSITION_DELETE}")
        positional = spark.variant("positional", "events")

        # The same data files in a second table, then one global equality delete file.
        events_eq = _create(spark, "events_eq", payload=False)
        source, target = spark.java_table("events"), spark.java_table("events_eq")
        append = target.newAppend()
        tasks = source.newScan().useSnapshot(first_snapshot).planFiles().iterator()
        while tasks.hasNext():
            append.appendFile(tasks.next().file())
        append.commit()
        spark.sql(f"ALTER TABLE {events_eq} DROP PARTITION FIELD days(ts)")
        keys = _equality_keys(rows, None)
        spark.equality_delete_ids("events_eq", keys)
        equality = spark.variant("equality", "events_eq", len(keys))
    finally:
        spark.stop()
    return ReadTables(
        directory=str(directory),
        rows=rows,
        days=days,
        variants=(none, positional, equality),
        generation_seconds=round(time.monotonic() - start, 1),
    )


def build_memory(directory: Path, target_bytes: int, rows_per_day: int) -> ReadTables:
    """The streaming-memory table: data files over ``target_bytes``, then position and
    equality deletes."""
    start = time.monotonic()
    warehouse = directory / "warehouse"
    spark = Spark(warehouse, directory / "spark")
    # Rows are numbered as if the table had 10,000 days; the inserts stop once big enough.
    max_days = 10_000
    total_rows = rows_per_day * max_days
    try:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
        big = _create(spark, "events_big", payload=True)
        day = 0
        written = 0
        while written <= target_bytes:
            first, last = day * rows_per_day, (day + MEMORY_CHUNK_DAYS) * rows_per_day
            spark.sql(f"INSERT INTO {big} {_select(first, last, total_rows, max_days, True)}")
            day += MEMORY_CHUNK_DAYS
            ((written,),) = spark.sql(f"SELECT sum(file_size_in_bytes) FROM {big}.data_files")
            print(f"  {day} days, {written / 1e9:.2f} GB of data files", flush=True)
        rows = day * rows_per_day
        spark.sql(f"DELETE FROM {big} WHERE {POSITION_DELETE}")
        spark.sql(f"ALTER TABLE {big} DROP PARTITION FIELD days(ts)")
        keys = _equality_keys(rows, MAX_EQUALITY_KEYS)
        spark.equality_delete_ids("events_big", keys)
        both = spark.variant("memory", "events_big", len(keys))
    finally:
        spark.stop()
    return ReadTables(
        directory=str(directory),
        rows=rows,
        days=day,
        variants=(both,),
        generation_seconds=round(time.monotonic() - start, 1),
    )


def _cached(name: str, params: list[Any], make: Any) -> ReadTables:
    key = hashlib.sha256(json.dumps([GENERATOR_VERSION, *params]).encode()).hexdigest()[:12]
    directory = WORK / f"{name}-{key}"
    facts = directory / "table.json"
    if facts.exists():
        return ReadTables.from_json(json.loads(facts.read_text()))
    WORK.mkdir(parents=True, exist_ok=True)
    if directory.exists():
        shutil.rmtree(directory)
    print(f"building {name} {params} with Spark (cached under {directory}) ...", flush=True)
    tables: ReadTables = make(directory)
    # Spark's scratch (shuffle files, compiled classes) is not part of the table.
    shutil.rmtree(directory / "spark", ignore_errors=True)
    facts.write_text(json.dumps(asdict(tables), indent=1))
    return tables


def cached_tables(rows: int, days: int) -> ReadTables:
    return _cached(f"read-tables-{rows}x{days}", [rows, days], lambda d: build(d, rows, days))


def cached_memory_table(target_bytes: int, rows_per_day: int) -> ReadTables:
    return _cached(
        f"read-memory-{target_bytes}",
        [target_bytes, rows_per_day],
        lambda d: build_memory(d, target_bytes, rows_per_day),
    )
