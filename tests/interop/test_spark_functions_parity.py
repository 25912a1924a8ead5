"""frazil.spark.functions against Iceberg Java 1.10.2's Spark functions (``system.bucket``,
``system.truncate``, ``system.years``, ...) in the same Spark 3.5 session.

Over 10,000 seeded values per Spark type (plus nulls), with the generators' edge cases always
included: type boundaries, negatives, pre-1970 dates and timestamps (year 1 to 9999) and
multi-byte strings. Every comparison is row for row inside Spark (``NOT (frazil <=> java)``),
and the result types must be Java's. Where Java 1.10.2 contradicts the spec (truncate wraps
around at the integer minimum), frazil follows the spec: those values are left out of the bulk
comparison and tested separately below.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import generators as gen
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import transforms
from frazil.errors import FrazilError, InvalidTransformError, UnsupportedTransformError
from frazil.spark import functions as ff
from java_referee import make_decimal

N = 10_000
BUCKETS = [1, 16, 1024, 2**31 - 1]
INT_WIDTHS = [1, 10, 1000, 2**31 - 1]
STRING_WIDTHS = [1, 2, 3, 5, 16]
INT_RANGES = {
    "tinyint": (pa.int8(), -(2**7), 2**7 - 1),
    "smallint": (pa.int16(), -(2**15), 2**15 - 1),
    "int": (pa.int32(), -(2**31), 2**31 - 1),
    "bigint": (pa.int64(), -(2**63), 2**63 - 1),
}
DECIMALS = [(9, 2), (18, 6), (38, 10)]


@pytest.fixture(autouse=True)
def _proleptic_parquet(spark: Any) -> Iterator[None]:
    # The test data goes through Parquet files written by pyarrow (proleptic Gregorian):
    # read dates before 1582 and timestamps before 1900 as they are, without rebasing.
    key = "spark.sql.parquet.datetimeRebaseModeInRead"
    previous = spark.conf.get(key)
    spark.conf.set(key, "CORRECTED")
    yield
    spark.conf.set(key, previous)


def _rng(*parts: object) -> random.Random:
    return random.Random(repr(("spark-functions", *parts)))


def _with_nulls(values: list[Any]) -> list[Any]:
    middle = len(values) // 2
    return [None, *values[:middle], None, *values[middle:], None]


def _frame(spark: Any, tmp_path: Path, name: str, columns: dict[str, pa.Array]) -> Any:
    """The columns as a Spark DataFrame (through Parquet: Spark reads every type exactly)."""
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.table(columns), path)
    return spark.read.parquet(str(path))


def _compare(df: Any, catalog: str, pairs: list[tuple[Any, str]], where: str | None = None) -> int:
    """Row for row: each frazil Column equals its Java SQL expression (nulls included), with
    the same Spark type. Returns the number of rows compared."""
    from pyspark.sql import functions as F

    if where is not None:
        df = df.where(where)
    selected = ["v"]
    columns = []
    for i, (mine, java) in enumerate(pairs):
        sql = java.replace("system.", f"{catalog}.system.")
        columns += [mine.alias(f"f{i}"), F.expr(sql).alias(f"j{i}")]
    frame = df.select(*selected, *columns)
    for i, (_, java) in enumerate(pairs):
        mine_type, java_type = frame.schema[f"f{i}"].dataType, frame.schema[f"j{i}"].dataType
        assert mine_type == java_type, f"{java}: frazil gives {mine_type}, Java {java_type}"
    differs = " OR ".join(f"NOT (f{i} <=> j{i})" for i in range(len(pairs)))
    bad = frame.where(differs).limit(5).collect()
    assert not bad, f"frazil differs from Java: {pairs[0][1]}...: {bad}"
    return int(frame.count())


def _wrap(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def _java_truncate(value: int, width: int, bits: int) -> int:
    """Java's TruncateUtil: the spec's formula in wrapping int (long for bigint) arithmetic,
    cast back to the type (bits)."""

    def rem(a: int, b: int) -> int:  # Java's %: the sign of the dividend
        r = abs(a) % b
        return -r if a < 0 else r

    arithmetic = 64 if bits == 64 else 32
    wrapped = _wrap(value - rem(_wrap(rem(value, width) + width, arithmetic), width), arithmetic)
    return _wrap(wrapped, bits)


def test_integers(spark: Any, catalog: str, tmp_path: Path) -> None:
    for type_name, (arrow_type, lo, hi) in INT_RANGES.items():
        values = _with_nulls(gen.ints(_rng(type_name), N, lo, hi))
        columns = {"v": pa.array(values, arrow_type)}
        bits = arrow_type.bit_width
        for w in INT_WIDTHS:
            # The spec's truncate (Python's % is non-negative), null where the type cannot
            # hold it; and whether Java's wrapping arithmetic gives that same value.
            spec = [None if v is None else v - v % w for v in values]
            spec = [None if s is None or not lo <= s <= hi else s for s in spec]
            columns[f"spec_{w}"] = pa.array(spec, arrow_type)
            columns[f"agree_{w}"] = pa.array(
                [
                    v is None or (s is not None and _java_truncate(v, w, bits) == s)
                    for v, s in zip(values, spec, strict=True)
                ]
            )
        df = _frame(spark, tmp_path, type_name, columns)
        assert df.schema["v"].dataType.simpleString() == type_name
        v = df["v"]
        pairs = [(ff.bucket(n, v, df=df), f"system.bucket({n}, v)") for n in BUCKETS]
        pairs.append((ff.transform("bucket[16]", v, df=df), "system.bucket(16, v)"))
        pairs.append((ff.identity(v, df=df), "v"))
        assert _compare(df, catalog, pairs) == N + 3
        for w in INT_WIDTHS:
            pairs = [
                (ff.truncate(w, v, df=df), f"system.truncate({w}, v)"),
                (ff.transform(f"truncate[{w}]", v, df=df), f"system.truncate({w}, v)"),
            ]
            # (only a few hundred rows agree for tinyint with a huge width)
            assert _compare(df, catalog, pairs, where=f"agree_{w}") > 100
            # Where Java's int arithmetic overflows (huge widths, values near the type's
            # minimum) frazil still gives the spec's value whenever the type can hold it.
            pairs = [(ff.truncate(w, v, df=df), f"spec_{w}")]
            assert _compare(df, catalog, pairs, where=f"v IS NULL OR spec_{w} IS NOT NULL") > N // 2


def test_decimals(spark: Any, catalog: str, tmp_path: Path) -> None:
    for precision, scale in DECIMALS:
        unscaled = gen.decimal_unscaled(_rng("decimal", precision, scale), N, precision)
        values = _with_nulls([make_decimal(u, scale) for u in unscaled])
        columns = {"v": pa.array(values, pa.decimal128(precision, scale))}
        limit = 10**precision
        for w in INT_WIDTHS[:3]:
            columns[f"fits_{w}"] = pa.array(
                [u is None or -limit < u - u % w for u in _with_nulls(unscaled)]
            )
        df = _frame(spark, tmp_path, f"decimal_{precision}_{scale}", columns)
        v = df["v"]
        pairs = [(ff.bucket(n, v, df=df), f"system.bucket({n}, v)") for n in BUCKETS]
        assert _compare(df, catalog, pairs) == N + 3
        for w in INT_WIDTHS[:3]:
            pairs = [(ff.truncate(w, v, df=df), f"system.truncate({w}, v)")]
            assert _compare(df, catalog, pairs, where=f"fits_{w}") > N // 2


def test_dates(spark: Any, catalog: str, tmp_path: Path) -> None:
    values = _with_nulls(gen.days(_rng("date"), N))
    df = _frame(spark, tmp_path, "date", {"v": pa.array(values, pa.int32()).cast(pa.date32())})
    assert df.schema["v"].dataType.simpleString() == "date"
    v = df["v"]
    pairs = [(ff.bucket(n, v, df=df), f"system.bucket({n}, v)") for n in BUCKETS]
    pairs += [
        (ff.years(v, df=df), "system.years(v)"),
        (ff.months(v, df=df), "system.months(v)"),
        (ff.days(v, df=df), "system.days(v)"),
        (ff.transform("year", v, df=df), "system.years(v)"),
        (ff.transform("month", v, df=df), "system.months(v)"),
        (ff.transform("day", v, df=df), "system.days(v)"),
    ]
    assert _compare(df, catalog, pairs) == N + 3


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
@pytest.mark.parametrize("ntz", [False, True], ids=["timestamp", "timestamp_ntz"])
def test_timestamps(spark: Any, catalog: str, tmp_path: Path, ntz: bool, zone: str) -> None:
    # A session zone with DST must not move anything: transforms work on the UTC value
    # (timestamp) or the wall-clock value (timestamp_ntz).
    # Plus instants around Los Angeles' DST gap and overlap in 2021 and its switch from local
    # mean time in 1883 (where Spark's own timestamp arithmetic goes through the zone).
    special = [1_615_689_000_000_000, 1_636_248_600_000_000, -2_717_668_800_000_000]
    values = _with_nulls(special + gen.micros(_rng("micros", ntz), N - len(special)))
    arrow_type = pa.timestamp("us") if ntz else pa.timestamp("us", "UTC")
    df = _frame(spark, tmp_path, "ts", {"v": pa.array(values, pa.int64()).cast(arrow_type)})
    assert df.schema["v"].dataType.simpleString() == ("timestamp_ntz" if ntz else "timestamp")
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        v = df["v"]
        pairs = [(ff.bucket(n, v, df=df), f"system.bucket({n}, v)") for n in BUCKETS]
        pairs += [
            (ff.years(v, df=df), "system.years(v)"),
            (ff.months(v, df=df), "system.months(v)"),
            (ff.days(v, df=df), "system.days(v)"),
            (ff.hours(v, df=df), "system.hours(v)"),
            (ff.transform("hour", v, df=df), "system.hours(v)"),
        ]
        assert _compare(df, catalog, pairs) == N + 3
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


@pytest.mark.parametrize("kind", ["string", "binary", "uuid"])
def test_strings_and_binary(spark: Any, catalog: str, tmp_path: Path, kind: str) -> None:
    # uuid as Spark holds it: its text in a string column.
    rng = _rng(kind)
    if kind == "string":
        values: list[Any] = gen.strings(rng, N)
        array = pa.array(_with_nulls(values), pa.string())
    elif kind == "binary":
        array = pa.array(_with_nulls(gen.binaries(rng, N)), pa.binary())
    else:
        array = pa.array(_with_nulls([str(u) for u in gen.uuids(rng, N)]), pa.string())
    df = _frame(spark, tmp_path, kind, {"v": array})
    v = df["v"]
    pairs = [(ff.bucket(n, v, df=df), f"system.bucket({n}, v)") for n in BUCKETS]
    pairs += [(ff.truncate(w, v, df=df), f"system.truncate({w}, v)") for w in STRING_WIDTHS]
    assert _compare(df, catalog, pairs) == N + 3


def test_resolved_columns_need_no_df(spark: Any, catalog: str) -> None:
    # df["x"] carries its type on classic Spark 3.5: no df= needed.
    df = spark.range(1000).selectExpr("id - 500 AS v", "cast(id AS string) AS s")
    pairs = [(ff.bucket(16, df["v"]), "system.bucket(16, v)")]
    pairs += [(ff.truncate(2, df["s"]), "system.truncate(2, s)")]
    assert _compare(df, catalog, pairs) == 1000


# --- where Java 1.10.2 contradicts the spec ----------------------------------------------------


@pytest.mark.parametrize(("type_name", "value"), [("int", -(2**31)), ("tinyint", -128)])
def test_truncate_at_the_integer_minimum_follows_the_spec(
    spark: Any, catalog: str, type_name: str, value: int
) -> None:
    # Spec: truncate[10](v) = v - (v mod 10) = value - 8, below the type's minimum. Java wraps
    # around in int arithmetic and returns a large positive number; frazil refuses the value
    # (its result cannot be held by the type) rather than give a wrong partition.
    df = spark.sql(f"SELECT CAST({value} AS {type_name}) AS v")
    java = df.selectExpr(f"{catalog}.system.truncate(10, v)").first()[0]
    assert java > 0  # wrapped around
    with pytest.raises(Exception, match=r"truncate\[10\]") as raised:
        df.select(ff.truncate(10, df["v"])).collect()
    assert "range" in str(raised.value) or "smallest" in str(raised.value)


# --- bad input: refused on the driver, naming transform and type --------------------------------


def test_bad_input_is_refused_when_the_column_is_built(spark: Any) -> None:
    df = spark.sql("SELECT 1.5D AS d, DATE'2020-01-01' AS dt, 1L AS l, 'x' AS s")
    with pytest.raises(UnsupportedTransformError, match=r"bucket\[16\].*double"):
        ff.bucket(16, "d", df=df)
    with pytest.raises(UnsupportedTransformError, match=r"hour.*date"):
        ff.hours("dt", df=df)
    with pytest.raises(UnsupportedTransformError, match=r"truncate\[4\].*date"):
        ff.truncate(4, df["dt"])
    with pytest.raises(UnsupportedTransformError, match=r"year.*bigint"):
        ff.transform("years", "l", df=df)
    with pytest.raises(InvalidTransformError, match="unknown transform"):
        ff.transform("bucketz[16]", "l", df=df)
    with pytest.raises(InvalidTransformError, match="positive"):
        ff.bucket(0, "l", df=df)
    with pytest.raises(InvalidTransformError, match="positive"):
        ff.truncate(-1, "s", df=df)
    with pytest.raises(FrazilError, match="must be an int"):
        ff.bucket("16", "l", df=df)  # type: ignore[arg-type]
    with pytest.raises(FrazilError, match="needs the column's type"):
        ff.bucket(16, "l")  # Spark 3.5 picks its conversion by type


# --- process model ---------------------------------------------------------------------------


def test_two_million_rows_through_forked_python_workers(spark: Any, catalog: str) -> None:
    df = spark.range(2_000_000).selectExpr(
        "id * 2654435761 - 4000000000000 AS v", "concat('k', cast(id AS string), 'ü') AS s"
    )
    pairs = [
        (ff.bucket(16, df["v"]), "system.bucket(16, v)"),
        (ff.bucket(16, df["s"]), "system.bucket(16, s)"),
    ]
    assert _compare(df, catalog, pairs) == 2_000_000


def test_add_partition_columns(spark: Any, tmp_path: Path) -> None:
    from frazil.catalog.memory import InMemoryCatalog
    from frazil.partitioning import PartitionField, PartitionSpec

    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    schema = pa.schema(
        [("id", pa.int64()), ("ts", pa.timestamp("us", "UTC")), ("name", pa.string())]
    )
    table = catalog.create_table("db.t", schema)
    fields = {f.name: f.field_id for f in table.schema().fields}
    spec = PartitionSpec(
        PartitionField(fields["id"], 1000, "bucket[4]", "id_bucket"),
        PartitionField(fields["ts"], 1001, "day", "ts_day"),
        PartitionField(fields["name"], 1002, "truncate[3]", "name_trunc"),
    )
    table = catalog.create_table("db.p", schema, partition_spec=spec)
    df = spark.sql(
        "SELECT id, timestamp_micros(id * 3600000000 - 1000000000000) AS ts, "
        "concat('näme', cast(id AS string)) AS name FROM range(200)"
    )
    out = ff.add_partition_columns(df, table)
    assert out.columns == ["id", "ts", "name", "id_bucket", "ts_day", "name_trunc"]
    collected = out.selectExpr("*", "unix_micros(ts) AS us").collect()
    ids = pa.array([r["id"] for r in collected], pa.int64())
    ts = pa.array([r["us"] for r in collected], pa.int64()).cast(pa.timestamp("us", "UTC"))
    names = pa.array([r["name"] for r in collected], pa.string())
    assert [r["id_bucket"] for r in collected] == transforms.bucket(ids, 4).to_pylist()
    assert [r["ts_day"] for r in collected] == transforms.day(ts).cast(pa.date32()).to_pylist()
    assert [r["name_trunc"] for r in collected] == transforms.truncate(names, 3).to_pylist()
    assert len(collected) == 200


def test_imports_without_pyspark_and_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pyspark'] = None\n"
        "import frazil.spark.functions as f\n"
        "assert 'pyspark' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "from frazil.errors import MissingDependencyError\n"
        "try:\n"
        "    f.bucket(16, 'id')\n"
        "except MissingDependencyError as e:\n"
        "    assert 'frazil[spark]' in str(e), e\n"
        "    print('ok')\n"
    )
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
