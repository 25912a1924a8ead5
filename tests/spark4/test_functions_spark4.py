"""frazil.spark.functions on Spark 4.3 (Arrow UDFs, no Iceberg jar, no pandas).

Without Java's functions here, the Columns are compared with frazil.transforms applied
locally to the same values (the Spark 3.5 parity test ties those to Java), and with values
checked by hand against the spec: Appendix B's hash examples (bucket[2147483647] keeps the
hash's 31 low bits) and the temporal transforms' floor semantics.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import transforms
from frazil.errors import FrazilError, InvalidTransformError, UnsupportedTransformError
from frazil.spark import functions as ff

N = 10_000
MAX_INT = 2**31 - 1


@pytest.fixture(autouse=True)
def _proleptic_parquet(spark: Any) -> Iterator[None]:
    # The data goes through Parquet written by pyarrow (proleptic Gregorian): no rebasing.
    key = "spark.sql.parquet.datetimeRebaseModeInRead"
    previous = spark.conf.get(key)
    spark.conf.set(key, "CORRECTED")
    yield
    spark.conf.set(key, previous)


def _with_nulls(values: list[Any]) -> list[Any]:
    middle = len(values) // 2
    return [None, *values[:middle], None, *values[middle:], None]


def _ints(rng: random.Random, lo: int, hi: int) -> list[int]:
    edges = [lo, hi, lo + 1, hi - 1, 0, 1, -1, 9, -9, 10, -10, 11, -11]
    return edges + [rng.randint(lo, hi) for _ in range(N - len(edges))]


def _strings(rng: random.Random) -> list[str]:
    alphabet = "aZ09 ~é€日本語ß\u0301\U0001d11e🧊😀\U0010ffff"
    edges = ["", "iceberg", "😀😀😀", "日本語テキスト"]
    return edges + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        for _ in range(N - len(edges))
    ]


MIN_MICROS = -62_135_596_800_000_000  # 0001-01-01
MAX_MICROS = 253_402_300_799_999_999  # 9999-12-31 23:59:59.999999


def _micros(rng: random.Random) -> list[int]:
    edges = [MIN_MICROS, MAX_MICROS, 0, -1, 1, -86_400_000_000, -3_600_000_000 - 1]
    return edges + [rng.randint(MIN_MICROS, MAX_MICROS) for _ in range(N - len(edges))]


def _frame(spark: Any, tmp_path: Path, name: str, array: pa.Array) -> Any:
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.table({"v": array}), path)
    return spark.read.parquet(str(path))


def _check(df: Any, columns: dict[str, tuple[Any, Any]]) -> None:
    """Each Column (name -> (Column, expected Arrow array over df's v in order)) equals the
    expected values row for row."""
    got = df.select("v", *[c.alias(name) for name, (c, _) in columns.items()]).toArrow()
    source = got.column("v").combine_chunks()
    for name, (_, expected) in columns.items():
        want = expected(source) if callable(expected) else expected
        have = got.column(name).combine_chunks()
        assert have.to_pylist() == want.to_pylist(), name


# The smallest value whose truncate[w] the type can hold is LOWEST[kind] + w - 1.
LOWEST = {"tinyint": -128, "int": -(2**31), "bigint": -(2**63)}

CASES = {
    "tinyint": lambda rng: pa.array(_with_nulls(_ints(rng, -128, 127)), pa.int8()),
    "int": lambda rng: pa.array(_with_nulls(_ints(rng, -(2**31), 2**31 - 1)), pa.int32()),
    "bigint": lambda rng: pa.array(_with_nulls(_ints(rng, -(2**63), 2**63 - 1)), pa.int64()),
    "decimal(9,2)": lambda rng: pa.array(
        _with_nulls([Decimal(v).scaleb(-2) for v in _ints(rng, -(10**9) + 1, 10**9 - 1)]),
        pa.decimal128(9, 2),
    ),
    "string": lambda rng: pa.array(_with_nulls(_strings(rng)), pa.string()),
    "binary": lambda rng: pa.array(_with_nulls([s.encode() for s in _strings(rng)]), pa.binary()),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_bucket_and_truncate_equal_frazil_transforms(spark: Any, tmp_path: Path, kind: str) -> None:
    df = _frame(
        spark,
        tmp_path,
        kind.replace("(", "_").replace(",", "_")[:8],
        CASES[kind](random.Random(kind)),
    )
    assert df.schema["v"].dataType.simpleString() == kind
    v = df["v"]
    columns: dict[str, tuple[Any, Any]] = {}
    for n in (1, 16, 1024, MAX_INT):
        columns[f"b{n}"] = (ff.bucket(n, v, df=df), lambda a, n=n: transforms.bucket(a, n))
    columns["t"] = (ff.transform("bucket[16]", "v"), lambda a: transforms.bucket(a, 16))
    # The spec's truncate[w] of values near the type's minimum does not fit the type (e.g.
    # -130 for truncate[10](-128)): refused (test_truncate_beyond_the_type_is_refused), so
    # compared on the other values.
    for w in (1, 3, 16) if kind == "tinyint" else (1, 10, 1000):
        if kind in LOWEST:
            df = df.where(f"v IS NULL OR v >= {LOWEST[kind] + w - 1}")
        elif kind.startswith("decimal"):
            df = df.where(f"v IS NULL OR v >= {Decimal(-(10**9) + w).scaleb(-2)}")
        columns[f"w{w}"] = (
            ff.truncate(w, v, df=df),
            lambda a, w=w: transforms.truncate(a, w).cast(a.type),
        )
    _check(df, columns)


@pytest.mark.parametrize("ntz", [False, True], ids=["timestamp", "timestamp_ntz"])
def test_temporal_equal_frazil_transforms(spark: Any, tmp_path: Path, ntz: bool) -> None:
    arrow_type = pa.timestamp("us") if ntz else pa.timestamp("us", "UTC")
    values = _with_nulls(_micros(random.Random(f"ts{ntz}")))
    df = _frame(spark, tmp_path, "ts", pa.array(values, pa.int64()).cast(arrow_type))
    v = df["v"]
    _check(
        df,
        {
            "b": (ff.bucket(16, v, df=df), lambda a: transforms.bucket(a, 16)),
            "y": (ff.years("v"), transforms.year),
            "m": (ff.months("v"), transforms.month),
            "d": (ff.days("v"), lambda a: transforms.day(a).cast(pa.date32())),
            "h": (ff.hours("v"), transforms.hour),
        },
    )


def test_dates_equal_frazil_transforms(spark: Any, tmp_path: Path) -> None:
    rng = random.Random("date")
    days = [-719_162, 2_932_896, 0, -1, 1] + [
        rng.randint(-719_162, 2_932_896) for _ in range(N - 5)
    ]
    df = _frame(spark, tmp_path, "date", pa.array(_with_nulls(days), pa.int32()).cast(pa.date32()))
    _check(
        df,
        {
            "b": (ff.bucket(16, "v"), lambda a: transforms.bucket(a, 16)),
            "y": (ff.years("v"), transforms.year),
            "m": (ff.months("v"), transforms.month),
            "d": (ff.days("v"), lambda a: a),
        },
    )


def test_spec_appendix_b_examples(spark: Any) -> None:
    # Appendix B, "32-bit Hash Requirements": hash values; bucket[2147483647] of a value is
    # (hash & 0x7FFFFFFF) mod 2147483647.
    df = spark.sql(
        "SELECT 34 AS i, 34L AS l, 14.20BD AS d, DATE'2017-11-16' AS dt, "
        "TIME'22:31:08' AS t, TIMESTAMP_NTZ'2017-11-16 22:31:08' AS ts, "
        "TIMESTAMP'2017-11-16 14:31:08-08:00' AS tz, 'iceberg' AS s, X'00010203' AS b, "
        "'f79c3e09-677c-4bbd-a479-3f349cb785e7' AS u"
    )
    hashes = {
        "i": 2017239379,
        "l": 2017239379,
        "d": -500754589,
        "dt": -653330422,
        "t": -662762989,
        "ts": -2047944441,
        "tz": -2047944441,
        "s": 1210000089,
        "b": -188683207,
    }
    row = df.select(*[ff.bucket(MAX_INT, c, df=df).alias(c) for c in hashes]).first()
    for column, value in hashes.items():
        assert row[column] == (value & MAX_INT) % MAX_INT, column
    # A uuid as Spark holds it (its text) hashes as that string, as Java's system.bucket does.
    text = pa.array(["f79c3e09-677c-4bbd-a479-3f349cb785e7"])
    assert df.select(ff.bucket(16, "u")).first()[0] == transforms.bucket(text, 16)[0].as_py()


def test_spec_floor_semantics_and_truncate_values(spark: Any) -> None:
    # Spec "Partition Transforms": one microsecond before the epoch is year, month, day and
    # hour -1; truncate[10](-1) = -10; strings are cut by code points.
    df = spark.sql(
        "SELECT TIMESTAMP_NTZ'1969-12-31 23:59:59.999999' AS ts, -1 AS i, "
        "'😀é日x' AS s, 12.34BD AS d"
    )
    row = df.select(
        ff.years("ts"),
        ff.months("ts"),
        ff.days("ts"),
        ff.hours("ts"),
        ff.truncate(10, "i", df=df),
        ff.truncate(3, "s", df=df),
        ff.truncate(50, "d", df=df),
    ).first()
    assert list(row) == [-1, -1, dt.date(1969, 12, 31), -1, -10, "😀é日", Decimal("12.00")]


def test_time_type(spark: Any) -> None:
    df = spark.sql("SELECT CASE WHEN id = 0 THEN TIME'22:31:08' END AS t FROM range(2)")
    assert [r[0] for r in df.select(ff.bucket(16, "t", df=df)).collect()] == [
        (-662762989 & MAX_INT) % 16,
        None,
    ]
    with pytest.raises(UnsupportedTransformError, match=r"hour.*time"):
        ff.hours("t", df=df)


def test_truncate_beyond_the_type_is_refused(spark: Any) -> None:
    df = spark.sql("SELECT CAST(-128 AS TINYINT) AS v")
    with pytest.raises(Exception, match=r"truncate\[10\]"):
        df.select(ff.truncate(10, "v", df=df)).collect()


def test_bad_input_is_refused_when_the_column_is_built(spark: Any) -> None:
    df = spark.sql("SELECT 1.5D AS d, DATE'2020-01-01' AS dt, 1L AS l, 'x' AS s")
    with pytest.raises(UnsupportedTransformError, match=r"bucket\[16\].*double"):
        ff.bucket(16, "d", df=df)
    with pytest.raises(UnsupportedTransformError, match=r"hour.*date"):
        ff.hours("dt", df=df)
    with pytest.raises(InvalidTransformError, match="unknown transform"):
        ff.transform("bucketz[16]", "l", df=df)
    with pytest.raises(InvalidTransformError, match="positive"):
        ff.bucket(0, "l")
    with pytest.raises(FrazilError, match="needs the column's type"):
        ff.truncate(4, "s")  # its result type is the input's


def test_unresolved_columns_are_checked_at_the_first_batch(spark: Any) -> None:
    df = spark.sql("SELECT 1.5D AS d")
    with pytest.raises(Exception, match=r"bucket\[16\].*(double|Float64)"):
        df.select(ff.bucket(16, "d")).collect()


def test_two_million_rows_through_forked_python_workers(spark: Any) -> None:
    df = spark.range(2_000_000).selectExpr("id * 2654435761 - 4000000000000 AS v")
    _check(df, {"b": (ff.bucket(16, "v"), lambda a: transforms.bucket(a, 16))})
