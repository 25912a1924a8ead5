"""Iceberg's partition transforms as Spark Columns (spec: "Partition Transforms").

``bucket(16, "id")``, ``truncate(4, "name")``, ``years``, ``months``, ``days``, ``hours``,
``identity`` and ``transform("bucket[16]", col)`` return Columns whose values equal Iceberg
Java's ``system.bucket``, ``system.truncate``, ``system.years``... value for value, with the
result types Java's functions have: int for bucket/years/months/hours, date for days (as
Java 1.10.2's ``system.days``), the input type for truncate. The values always come from
frazil's Rust kernels (:func:`frazil._native.apply_transform` on Arrow arrays); this module
only moves data between Spark and Arrow.

Spark 4.1+: Arrow-native scalar UDFs (``arrow_udf``), pyarrow arrays in and out, no pandas.

Spark 3.5 (and 4.0, which has no Arrow UDFs yet): Arrow-backed ``pandas_udf``, chosen over
``mapInArrow`` by measurement (``python benches/bench_spark.py transforms``: bucket[16] of 2M
values, 1% nulls, local[2], a shared 2-core machine at load 15; benches/RESULTS.md "Spark"):
the pandas UDF 597k rows/s on longs and 577k on strings, mapInArrow appending the column to
a one-column frame 996k and 643k (Java's system.bucket 4.1M and 2.2M). frazil's kernel takes
0.3 ms per 10,000-row batch (30M rows/s, pandas conversions included): Spark's Python round
trip is the cost either way. mapInArrow is up to 1.7x faster on a one-column frame, but it
gives a DataFrame, not a Column (no ``withColumn``, ``select``, ``repartition`` or
``sortWithinPartitions`` on it), and it ships every column of the row to Python and back
where the UDF ships only its input, so on real (wide) rows the advantage turns around. Hence
pandas_udf for the Columns; a writer that already runs a mapInArrow over whole rows should
call :mod:`frazil.transforms` there instead.
Spark 3.5 hands pandas UDFs lossy or shifted values for some types, so the input is first reduced
in the JVM to a form pandas carries exactly: longs and ints without nulls (``coalesce``;
a null would turn the column into float64 and round longs above 2**53), dates as day counts
(``unix_date``), timestamps as UTC microseconds (``unix_micros``: Spark otherwise localizes
them to the session zone, ambiguous at DST changes) and timestamp_ntz as microseconds from
the epoch (an exact interval subtraction, as a decimal: pandas' datetime64[ns] overflows
after 2262). Nulls
are put back in the JVM (``when(col IS NULL, NULL)``).

The input type is resolved on the driver, from ``df`` when given (``bucket(16, "id",
df=df)``), or from a column of a DataFrame (``df["id"]``) on classic Spark 3.5. An unknown
transform, a transform that does not apply to the type, or a bad parameter raises a
:class:`~frazil.errors.FrazilError` there, naming both. Without a resolvable type, Spark
4.1+ checks the type at the first batch (bucket, years, months, days, hours; the error names
the transform and the Arrow type); truncate and identity (whose result type is the input
type) and every function on Spark 3.5 (which picks the JVM-side conversion by type) need it.

UDF objects are cached per (transform, input type). pyspark is imported only when a function
is called (:func:`frazil.spark._pyspark.require`).
"""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa

from frazil._native import Transform, apply_transform
from frazil.errors import (
    FrazilError,
    FrazilTypeError,
    InvalidTransformError,
    InvalidValueError,
    UnsupportedTransformError,
)
from frazil.spark._pyspark import require, spark_version

__all__ = [
    "add_partition_columns",
    "bucket",
    "days",
    "hours",
    "identity",
    "months",
    "transform",
    "truncate",
    "years",
]

# Spark type (class name) -> the Iceberg type a Spark column of it is written as.
_ICEBERG_TYPES = {
    "BooleanType": "boolean",
    "ByteType": "int",
    "ShortType": "int",
    "IntegerType": "int",
    "LongType": "long",
    "FloatType": "float",
    "DoubleType": "double",
    "DateType": "date",
    "TimeType": "time",
    "TimestampType": "timestamptz",
    "TimestampNTZType": "timestamp",
    "StringType": "string",
    "BinaryType": "binary",
}

# Java's names for the temporal functions (system.years...) and the Appendix C names.
_ALIASES = {"years": "year", "months": "month", "days": "day", "hours": "hour"}


# --- the kernel: runs in Spark's Python workers, on Arrow --------------------------------


def _arrow_input(values: pa.Array, spark_type: str) -> pa.Array:
    """Spark's Arrow representation of ``spark_type`` as the Arrow type frazil's kernels take
    for its Iceberg type. On 3.5 the JVM already reduced dates, timestamps and timestamp_ntz to
    day counts and microseconds (see the module docstring); here they get their type back."""
    if spark_type == "date" and values.type != pa.date32():
        return values.cast(pa.date32())
    if spark_type == "timestamp" and not pa.types.is_timestamp(values.type):
        return values.cast(pa.timestamp("us", "UTC"))
    if spark_type == "timestamp_ntz" and not pa.types.is_timestamp(values.type):
        return values.cast(pa.timestamp("us"))
    if pa.types.is_time64(values.type) and values.type.unit == "ns":
        # Spark 4.1's TIME is time64[ns] in Arrow, with at most microsecond precision.
        return values.cast(pa.time64("us"))
    return values


def _run(transform: str, spark_type: str, result: pa.DataType, values: pa.Array) -> pa.Array:
    """``transform`` over ``values`` (a batch of a ``spark_type`` column), as ``result``."""
    try:
        out = apply_transform(Transform(transform), _arrow_input(values, spark_type))
    except UnsupportedTransformError as error:  # a value error (InvalidValueError) passes as is
        raise UnsupportedTransformError(
            f"frazil.spark.functions: {transform} cannot be applied to the Spark type "
            f"{spark_type} (Arrow {values.type}): {error}"
        ) from None
    if out.type == result:
        return out
    try:
        return out.cast(result)
    except pa.ArrowInvalid:
        # truncate on tinyint/smallint: the spec's value (e.g. -130 for truncate[10](-128))
        # does not fit the input type; Java wraps it around, frazil refuses.
        raise InvalidValueError(
            f"frazil.spark.functions: {transform} of a {spark_type} value gives a result "
            f"outside {spark_type}'s range (the spec's result; Iceberg Java wraps it)"
        ) from None


def _pandas_kernel(
    transform: str, spark_type: str, arrow_in: pa.DataType, result: pa.DataType
) -> Any:
    """Spark 3.5: a pandas Series in, a pandas Series out, through Arrow."""
    import pandas as pd  # type: ignore[import-untyped]

    def run(values: pd.Series) -> pd.Series:
        array = pa.Array.from_pandas(values, type=arrow_in)
        return _run(transform, spark_type, result, array).to_pandas()

    run.__annotations__ = {"values": pd.Series, "return": pd.Series}
    run.__name__ = _udf_name(transform)
    return run


def _arrow_kernel(transform: str, spark_type: str | None, result: pa.DataType) -> Any:
    """Spark 4.1+: a pyarrow Array in, a pyarrow Array out."""

    def run(values: pa.Array) -> pa.Array:
        return _run(transform, spark_type or str(values.type), result, values)

    run.__annotations__ = {"values": pa.Array, "return": pa.Array}
    run.__name__ = _udf_name(transform)
    return run


def _udf_name(transform: str) -> str:
    """The name Spark shows for the column: ``bucket_16(id)``, ``day(ts)``."""
    return transform.replace("[", "_").replace("]", "")


# --- the driver: types, UDF objects, Columns ----------------------------------------------


def _type_key(data_type: Any) -> str:
    """Spark's name of a type: ``"bigint"``, ``"decimal(9,2)"``, ``"timestamp_ntz"``."""
    return str(data_type.simpleString())


def _iceberg_type(data_type: Any) -> str | None:
    name = type(data_type).__name__
    if name == "DecimalType":
        return f"decimal({data_type.precision},{data_type.scale})"
    return _ICEBERG_TYPES.get(name)


def _parse(name: str) -> Transform:
    if not isinstance(name, str):
        raise FrazilTypeError(
            f"frazil.spark.functions: a transform name must be a string such as 'bucket[16]', "
            f"got {type(name).__name__}"
        )
    return Transform(_ALIASES.get(name, name))


def _parameter(function: str, what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FrazilTypeError(
            f"frazil.spark.functions.{function}: {what} must be an int, got {type(value).__name__}"
        )
    if not 0 < value < 2**31:
        raise InvalidTransformError(
            f"frazil.spark.functions.{function}: {what} must be a positive 32-bit integer, "
            f"got {value}"
        )
    return value


def _as_column(col: Any) -> Any:
    functions = require("pyspark.sql.functions")
    if isinstance(col, str):
        return functions.col(col)
    if hasattr(col, "_jc") or type(col).__name__ == "Column":
        return col
    raise FrazilTypeError(
        f"frazil.spark.functions: col must be a column name or a pyspark Column, "
        f"got {type(col).__name__}"
    )


def _resolve_type(col: Any, df: Any) -> Any:
    """The Spark type of ``col``: from ``df``, else from a resolved classic column (df["x"]),
    else None."""
    if df is not None:
        return df.select(col).schema.fields[0].dataType
    if isinstance(col, str):
        return None
    try:
        expr = col._jc.expr()
        if not expr.resolved():
            return None
        types = require("pyspark.sql.types")
        return types._parse_datatype_json_string(expr.dataType().json())
    except Exception:  # Spark Connect and Spark 4 columns: resolved only by a DataFrame
        return None


def _spark_result_type(t: Transform, data_type: Any) -> Any:
    types = require("pyspark.sql.types")
    if t.name in ("bucket", "year", "month", "hour"):
        return types.IntegerType()
    if t.name == "day":
        return types.DateType()  # Java 1.10.2's system.days returns a date
    return data_type


def _arrow_type(data_type: Any) -> pa.DataType:
    """The Arrow type Spark exchanges for ``data_type`` (UTC for timestamps: the values are
    UTC microseconds whatever the label)."""
    name = type(data_type).__name__
    simple = {
        "ByteType": pa.int8(),
        "ShortType": pa.int16(),
        "IntegerType": pa.int32(),
        "LongType": pa.int64(),
        "DateType": pa.date32(),
        "StringType": pa.string(),
        "BinaryType": pa.binary(),
    }
    if name == "DecimalType":
        return pa.decimal128(data_type.precision, data_type.scale)
    return simple[name]


def _check(t: Transform, text: str, data_type: Any) -> None:
    iceberg = _iceberg_type(data_type)
    if iceberg is None or not t.can_transform(iceberg):
        raise UnsupportedTransformError(
            f"frazil.spark.functions: {text} cannot be applied to a column of Spark type "
            f"{_type_key(data_type)}"
            + (f" (Iceberg {iceberg})" if iceberg else " (no Iceberg type)")
        )


@functools.lru_cache(maxsize=256)
def _udf_35(text: str, type_json: str) -> Any:
    """The pandas UDF for (transform, input type) on Spark 3.5 (cached: one per pair)."""
    functions = require("pyspark.sql.functions")
    types = require("pyspark.sql.types")
    data_type = types._parse_datatype_json_string(type_json)
    t = Transform(text)
    result = _spark_result_type(t, data_type)
    if t.name == "day":
        udf_result: Any = types.IntegerType()  # day counts; the JVM makes them dates
    else:
        udf_result = result
    arrow_result = pa.int32() if t.name != "truncate" else _arrow_type(data_type)
    kernel = _pandas_kernel(text, _type_key(data_type), _arrow_in_35(data_type), arrow_result)
    return functions.pandas_udf(kernel, udf_result)


@functools.lru_cache(maxsize=256)
def _udf_arrow(text: str, type_json: str | None) -> Any:
    """The Arrow UDF for (transform, input type or None) on Spark 4.1+ (cached)."""
    functions = require("pyspark.sql.functions")
    types = require("pyspark.sql.types")
    t = Transform(text)
    if type_json is None:
        result = _spark_result_type(t, None)
        spark_type = None
    else:
        data_type = types._parse_datatype_json_string(type_json)
        result = _spark_result_type(t, data_type)
        spark_type = _type_key(data_type)
    if t.name == "day":
        arrow_result = pa.date32()
    elif t.name == "truncate":
        arrow_result = _arrow_type(result)
    else:
        arrow_result = pa.int32()
    return functions.arrow_udf(_arrow_kernel(text, spark_type, arrow_result), result)


# Spark types that _jvm_input_35 reduces to non-null numbers (nulls restored in the JVM).
_REDUCED_35 = frozenset(
    [
        "ByteType",
        "ShortType",
        "IntegerType",
        "LongType",
        "DateType",
        "TimestampType",
        "TimestampNTZType",
    ]
)


def _arrow_in_35(data_type: Any) -> pa.DataType:
    """The Arrow type of what a Spark 3.5 pandas UDF receives after _jvm_input_35."""
    name = type(data_type).__name__
    if name == "DateType":
        return pa.int32()
    if name in ("TimestampType", "TimestampNTZType"):
        return pa.int64()
    return _arrow_type(data_type)


def _jvm_input_35(column: Any, data_type: Any) -> Any:
    """Spark 3.5: ``column`` in a form pandas carries exactly (see the module docstring)."""
    functions = require("pyspark.sql.functions")
    name = type(data_type).__name__
    if name in ("ByteType", "ShortType", "IntegerType", "LongType"):
        return functions.coalesce(column, functions.lit(0).cast(data_type))
    if name == "DateType":
        return functions.coalesce(functions.unix_date(column), functions.lit(0))
    if name == "TimestampType":
        return functions.coalesce(functions.unix_micros(column), functions.lit(0))
    if name == "TimestampNTZType":
        # ntz - ntz epoch is an exact day-time interval (no zone); as INTERVAL SECOND and a
        # decimal it gives the microseconds. (Adding it to a timestamp, or timestampdiff,
        # goes through the session zone: off by the zone's LMT offset before 1883 and
        # shifted in DST gaps.)
        epoch_ntz = functions.to_timestamp_ntz(functions.lit("1970-01-01 00:00:00"))
        seconds = (column - epoch_ntz).cast("interval second").cast("decimal(20,6)")
        micros = (seconds * 1_000_000).cast("bigint")
        return functions.coalesce(micros, functions.lit(0).cast("bigint"))
    return column


def _apply(text: str, col: Any, df: Any) -> Any:
    t = _parse(text)
    canonical = str(_ALIASES.get(text, text))
    column = _as_column(col)
    data_type = _resolve_type(col, df)
    functions = require("pyspark.sql.functions")
    if data_type is not None:
        _check(t, canonical, data_type)
    if t.name == "identity":
        if data_type is None:
            raise _needs_type(canonical)
        return column  # identity: the values unchanged, nothing to compute
    if t.name == "void":
        if data_type is None:
            raise _needs_type(canonical)
        return functions.lit(None).cast(data_type)
    version = spark_version()
    if version >= (4, 1):
        if data_type is None and t.name == "truncate":
            raise _needs_type(canonical)
        return _udf_arrow(canonical, None if data_type is None else data_type.json())(column)
    if version < (3, 5):
        raise FrazilError(f"frazil.spark.functions needs Spark 3.5 or 4.1+, found {version}")
    if data_type is None:
        raise _needs_type(canonical)
    udf = _udf_35(canonical, data_type.json())
    out = udf(_jvm_input_35(column, data_type))
    if t.name == "day":
        out = functions.date_from_unix_date(out)
    if type(data_type).__name__ in _REDUCED_35:
        out = functions.when(column.isNull(), functions.lit(None)).otherwise(out)
    return out


def _needs_type(transform: str) -> FrazilError:
    return FrazilTypeError(
        f"frazil.spark.functions: {transform} needs the column's type on the driver; pass "
        f"the DataFrame (df=df) or a column of it (df['name'])"
    )


# --- public API ----------------------------------------------------------------------------


def bucket(n: int, col: Any, *, df: Any = None) -> Any:
    """``bucket[n]`` of ``col`` (a name or Column), an int Column; equals ``system.bucket``."""
    return _apply(f"bucket[{_parameter('bucket', 'n', n)}]", col, df)


def truncate(width: int, col: Any, *, df: Any = None) -> Any:
    """``truncate[width]`` of ``col``, a Column of its type; equals ``system.truncate``."""
    return _apply(f"truncate[{_parameter('truncate', 'width', width)}]", col, df)


def years(col: Any, *, df: Any = None) -> Any:
    """Years from 1970 (floor) of a date or timestamp, an int Column (``system.years``)."""
    return _apply("year", col, df)


def months(col: Any, *, df: Any = None) -> Any:
    """Months from 1970-01 (floor), an int Column (``system.months``)."""
    return _apply("month", col, df)


def days(col: Any, *, df: Any = None) -> Any:
    """The day of a date or timestamp, a date Column (as Java's ``system.days``)."""
    return _apply("day", col, df)


def hours(col: Any, *, df: Any = None) -> Any:
    """Hours from 1970-01-01 00:00 (floor) of a timestamp, an int Column (``system.hours``)."""
    return _apply("hour", col, df)


def identity(col: Any, *, df: Any = None) -> Any:
    """The column itself, after checking that identity applies to its type."""
    return _apply("identity", col, df)


def transform(name: str, col: Any, *, df: Any = None) -> Any:
    """The transform named in Appendix C form (``"bucket[16]"``, ``"day"``, ``"truncate[4]"``,
    ``"identity"``, ``"void"``; Java's ``years``/``months``/``days``/``hours`` too)."""
    return _apply(name, col, df)


def _column_path(table_schema: Any, field_id: int) -> list[str]:
    """Names from the top-level column down to field ``field_id`` (partition sources are
    primitives, possibly inside structs; never inside lists or maps)."""

    def walk(fields: Any, path: list[str]) -> list[str] | None:
        for field in fields:
            if field.field_id == field_id:
                return [*path, field.name]
            children = getattr(field.field_type, "fields", None)
            if children is not None and type(field.field_type).__name__ == "StructType":
                found = walk(children, [*path, field.name])
                if found is not None:
                    return found
        return None

    found = walk(table_schema.fields, [])
    if found is None:
        raise InvalidTransformError(
            f"frazil.spark.add_partition_columns: partition source field id {field_id} "
            "is not in the table's current schema"
        )
    return found


def add_partition_columns(df: Any, table: Any) -> Any:
    """``df`` with one column per field of ``table``'s current partition spec, named after the
    partition field, holding its partition values (for clustering before a write)."""
    spec = table.spec()
    schema = table.schema()
    columns = []
    for field in spec.fields:
        path = _column_path(schema, field.source_id)
        column = df[path[0]]
        for name in path[1:]:
            column = column.getField(name)
        columns.append(transform(field.transform, column, df=df).alias(field.name))
    return df.select("*", *columns) if columns else df
