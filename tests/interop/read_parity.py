"""Shared steps of the read parity tests (test_read_*_parity.py): rows as Spark, Iceberg Java's
generic reader and frazil read them, in one comparable form, and filters as Spark SQL.

Rows are compared in a plain form that no date-time conversion touches (PySpark's own
conversion fails on 0001-01-01 and Python's datetime stops at 9999 and has no nanoseconds):
Spark's rows come as Arrow (``DataFrame._collect_as_arrow``), frazil's are Arrow, and both go
through :func:`plain_rows`:

- date -> days, time / timestamp -> micros, timestamp_ns -> nanos (ints);
- float and double -> ``("f", repr(value))``, so NaN equals NaN and -0.0 differs from 0.0;
- uuid, fixed, binary -> bytes (a uuid's 16 bytes: Spark cannot hold uuids, and a view of
  Java's rows holds them as binary, which Spark orders as unsigned bytes like Iceberg);
- struct -> tuple, list -> list, map -> ``("map", sorted pairs)`` (a NULL map stays None and
  an empty map is ``("map", [])``: not the same row).

Filters (Java's ExpressionParser JSON, tests/interop/scan_filters.py) become Spark SQL with
:func:`where_sql`, which spells out Iceberg's row semantics where Spark's SQL differs on
purpose (see its docstring). Each SQL condition is computed as a boolean column over the rows
of one snapshot (a projection: nothing is pushed into Iceberg Java's planner), so hundreds of
filters cost one Spark query.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import frazil
import pyarrow as pa
from scan_filters import Filter, family, from_json_value, push_not

Row = tuple[Any, ...]
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


# --- the plain form -----------------------------------------------------------------------


def _float(value: float | None) -> Any:
    return None if value is None else ("f", repr(float(value)))


def _plain_array(array: pa.Array) -> list[Any]:
    kind = array.type
    if isinstance(kind, pa.BaseExtensionType):
        return _plain_array(array.storage)
    if pa.types.is_struct(kind):
        children = [_plain_array(child) for child in array.flatten()]
        valid = array.is_valid().to_pylist()
        return [tuple(c[n] for c in children) if ok else None for n, ok in enumerate(valid)]
    if pa.types.is_map(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind):
        # offsets index the whole child array (values of null entries are not looked at)
        offsets = array.offsets.to_pylist()
        valid = array.is_valid().to_pylist()
        if pa.types.is_map(kind):
            keys, items = _plain_array(array.keys), _plain_array(array.items)
            flat: list[Any] = list(zip(keys, items, strict=True))
        else:
            flat = _plain_array(array.values)
        out: list[Any] = []
        for n, ok in enumerate(valid):
            entries = flat[offsets[n] : offsets[n + 1]]
            if not ok:
                out.append(None)
            elif pa.types.is_map(kind):
                out.append(("map", sorted(entries, key=repr)))
            else:
                out.append(entries)
        return out
    if pa.types.is_timestamp(kind) or pa.types.is_time(kind):
        return list(array.cast(pa.int64()).to_pylist())
    if pa.types.is_date32(kind):
        return list(array.cast(pa.int32()).to_pylist())
    if pa.types.is_floating(kind):
        return [_float(v) for v in array.to_pylist()]
    if pa.types.is_dictionary(kind):
        return _plain_array(array.dictionary_decode())
    return list(array.to_pylist())


def plain_rows(table: pa.Table) -> list[Row]:
    """The table's rows in the plain form, sorted."""
    columns = [_plain_array(c.combine_chunks()) for c in table.columns]
    return sorted(zip(*columns, strict=True), key=repr) if columns else []


def _plain_java(type_: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(type_, str):
        kind = family(type_)
        if kind in ("float", "double"):
            return _float(float(value))
        if kind == "decimal":
            return Decimal(value)
        if kind in ("binary", "fixed"):
            return bytes.fromhex(value)
        if kind == "uuid":
            return bytes.fromhex(value.replace("-", ""))
        return value
    if type_["type"] == "struct":
        return tuple(_plain_java(f["type"], v) for f, v in zip(type_["fields"], value, strict=True))
    if type_["type"] == "list":
        return [_plain_java(type_["element"], v) for v in value]
    if type_["type"] == "map":
        pairs = [(_plain_java(type_["key"], k), _plain_java(type_["value"], v)) for k, v in value]
        return ("map", sorted(pairs, key=repr))
    raise AssertionError(f"unexpected type {type_}")


def java_plain_rows(text: str, schema: Mapping[str, Any]) -> list[Row]:
    """ReadReferee.readRows output (tests/interop/java/ReadReferee.java) in the plain form."""
    rows = [
        _plain_java(schema | {"type": "struct"}, json.loads(line))
        for line in text.split("\n")
        if line
    ]
    return sorted(rows, key=repr)


def spark_arrow(spark: Any, query: str) -> pa.Table:
    """A Spark query's result as Arrow (no Python datetimes on the way)."""
    df = spark.sql(query)
    batches = df._collect_as_arrow()
    if batches:
        return pa.Table.from_batches(batches)
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema).empty_table()


def frazil_table(metadata_location: str) -> Any:
    return frazil.StaticTable.from_metadata(str(metadata_location))


def frazil_rows(table: Any, **scan: Any) -> list[Row]:
    return plain_rows(table.scan(**scan).to_arrow())


def assert_same_rows(actual: Sequence[Row], expected: Sequence[Row], label: str) -> None:
    """Row for row, with the rows only one side has in the message."""
    if list(actual) == list(expected):
        return
    remaining = list(expected)
    extra = []
    for row in actual:
        if row in remaining:
            remaining.remove(row)
        else:
            extra.append(row)
    raise AssertionError(
        f"{label}: frazil read {len(actual)} rows, the referee {len(expected)}; "
        f"only frazil: {extra[:5]}; only the referee: {remaining[:5]}"
    )


# --- filters as Spark SQL -----------------------------------------------------------------


@dataclass(frozen=True)
class SqlColumn:
    """How a filter column reads in Spark SQL: its Iceberg type and an SQL expression that
    gives the Iceberg value (for date, time and timestamps: the int days / micros / nanos)."""

    type: str
    sql: str


def spark_column(name: str, type_: str) -> SqlColumn:
    """A column of an Iceberg table Spark reads (timestamps as Spark timestamps)."""
    path = ".".join(f"`{part}`" for part in name.split("."))
    kind = family(type_)
    if kind == "date":
        return SqlColumn(type_, f"unix_date({path})")
    if kind == "timestamp":  # timestamp_ntz: the session time zone is UTC (conftest)
        return SqlColumn(type_, f"unix_micros(CAST({path} AS TIMESTAMP))")
    if kind == "timestamptz":
        return SqlColumn(type_, f"unix_micros({path})")
    return SqlColumn(type_, path)


def plain_column(name: str, type_: str) -> SqlColumn:
    """A column of a view built from plain rows (:func:`spark_view`): temporal values are
    already ints."""
    return SqlColumn(type_, ".".join(f"`{part}`" for part in name.split(".")))


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _nanos(text: str) -> int:
    """Appendix D JSON of a timestamp_ns value -> nanos from the epoch."""
    text = text.removesuffix("+00:00")
    whole, _, fraction = text.partition(".")
    seconds = dt.datetime.fromisoformat(whole) - EPOCH
    return (seconds // dt.timedelta(seconds=1)) * 10**9 + int((fraction or "0").ljust(9, "0"))


def sql_literal(type_: str, value: Any) -> str:
    """An Appendix D JSON value as a Spark SQL literal comparable with the column's SQL."""
    kind = family(type_)
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("int", "long"):
        return str(int(value))
    if kind in ("float", "double"):
        number = from_json_value(type_, value)  # floats rounded to float32 as Iceberg binds
        return f"CAST('{number!r}' AS {'FLOAT' if kind == 'float' else 'DOUBLE'})"
    if kind == "decimal":
        return f"CAST('{value}' AS {type_.upper()})"
    if kind == "string":
        return _string(str(value))
    if kind == "uuid":
        return f"X'{value.replace('-', '')}'"
    if kind in ("binary", "fixed"):
        return f"X'{value}'"
    if kind == "date":
        return str((dt.date.fromisoformat(value) - EPOCH_DATE).days)
    if kind == "time":
        t = dt.time.fromisoformat(value)
        return str(((t.hour * 60 + t.minute) * 60 + t.second) * 10**6 + t.microsecond)
    if kind in ("timestamp_ns", "timestamptz_ns"):
        return str(_nanos(value))
    if kind in ("timestamp", "timestamptz"):
        stamp = dt.datetime.fromisoformat(value).replace(tzinfo=None)
        return str((stamp - EPOCH) // dt.timedelta(microseconds=1))
    raise AssertionError(f"no SQL literal for {type_}")


def _negative_zero(column: str) -> str:
    return f"({column} = 0 AND substr(CAST({column} AS STRING), 1, 1) = '-')"


def _compare(op: str, column: SqlColumn, value: Any) -> str:
    """An ordered comparison or equality in Iceberg's order (spec "Sorting" for floats: -0.0
    before 0.0; NaN never compares: Spark orders NaN above every value and -0.0 = 0.0)."""
    kind = family(column.type)
    literal = sql_literal(column.type, value)
    x = column.sql
    if kind not in ("float", "double"):
        symbol = {"eq": "=", "lt": "<", "lt-eq": "<=", "gt": ">", "gt-eq": ">="}[op]
        return f"({x} {symbol} {literal})"
    number = from_json_value(column.type, value)
    is_zero = number == 0
    negative = math.copysign(1.0, number) < 0
    if is_zero:
        eq = f"({x} = 0 AND {'' if negative else 'NOT '}{_negative_zero(x)})"
        below = f"({x} < 0)" if negative else f"({x} < 0 OR {_negative_zero(x)})"
        positive_zero = f"({x} = 0 AND NOT {_negative_zero(x)})"
        above = f"({x} > 0 OR {positive_zero})" if negative else f"({x} > 0)"
    else:
        eq, below, above = f"({x} = {literal})", f"({x} < {literal})", f"({x} > {literal})"
    condition = {
        "eq": eq,
        "lt": below,
        "lt-eq": f"({below} OR {eq})",
        "gt": above,
        "gt-eq": f"({above} OR {eq})",
    }[op]
    return f"(NOT isnan({x}) AND {condition})"


def _true(condition: str) -> str:
    """SQL's unknown (a null operand) read as false: the predicate does not hold."""
    return f"coalesce({condition}, false)"


def _predicate(expr: Mapping[str, Any], columns: Mapping[str, SqlColumn]) -> str:
    kind = expr["type"]
    column = columns[expr["term"]]
    x = column.sql
    if kind == "is-null":
        return f"({x} IS NULL)"
    if kind == "not-null":
        return f"({x} IS NOT NULL)"
    if kind == "is-nan":
        return _true(f"isnan({x})")
    if kind == "not-nan":  # null is not NaN
        return f"NOT {_true(f'isnan({x})')}"
    if kind in ("eq", "lt", "lt-eq", "gt", "gt-eq"):
        return _true(_compare(kind, column, expr["value"]))
    if kind == "not-eq":  # null and NaN differ from every value
        return f"NOT {_true(_compare('eq', column, expr['value']))}"
    if kind in ("in", "not-in"):
        found = " OR ".join(_compare("eq", column, v) for v in expr["values"]) or "false"
        return _true(f"({found})") if kind == "in" else f"NOT {_true(f'({found})')}"
    if kind in ("starts-with", "not-starts-with"):
        prefix = expr["value"]
        starts = _true(f"(substring({x}, 1, {len(prefix)}) = {_string(prefix)})")
        return starts if kind == "starts-with" else f"NOT {starts}"
    raise AssertionError(f"unknown predicate {kind}")


def where_sql(expr: Any, columns: Mapping[str, SqlColumn]) -> str:
    """The filter as a two-valued Spark SQL condition with Iceberg's row semantics (those of
    frazil's reader, python/frazil/table/_row_filter.py): NOT is pushed into the predicates
    first (``NOT a < 1`` is ``a >= 1``, and on a float column ``a >= 1 OR a IS NAN``: the
    negation of a comparison NaN fails holds for NaN, as in IEEE 754, Spark and Java's
    Evaluator); a null value satisfies IS NULL, NOT NAN, ``!=``, NOT IN
    and NOT STARTS WITH and nothing else; NaN satisfies IS NAN, ``!=`` and NOT IN only; -0.0
    sorts before and differs from 0.0. Spark's SQL alone would drop nulls from ``!=`` and NOT
    IN (three-valued logic), order NaN above every value and equate -0.0 with 0.0."""
    types = {name: column.type for name, column in columns.items()}
    return _where(push_not(expr, keep_nan=types), columns)


def _where(expr: Any, columns: Mapping[str, SqlColumn]) -> str:
    if isinstance(expr, bool):
        return "true" if expr else "false"
    kind = expr["type"]
    if kind in ("and", "or"):
        joiner = " AND " if kind == "and" else " OR "
        return f"({_where(expr['left'], columns)}{joiner}{_where(expr['right'], columns)})"
    return _predicate(expr, columns)


# --- a battery of filters against one snapshot --------------------------------------------


def spread(filters: Sequence[Filter], most: int) -> tuple[Filter, ...]:
    """At most ``most`` filters spread evenly over a battery (ordered by column, then
    combinations), keeping a run short: each filter costs one frazil scan."""
    step = -(-len(filters) // most)
    return tuple(filters[::step])


def check_filters(
    spark: Any,
    source_sql: str,
    table: Any,
    filters: Sequence[Filter],
    columns: Mapping[str, SqlColumn],
    label: str,
    may_skip: Callable[[Filter, Mapping[str, Any]], bool] | None = None,
    chunk: int = 120,
    **scan: Any,
) -> int:
    """Each filter: frazil's ``scan(row_filter=..., **scan).to_arrow()`` equals the rows of
    ``source_sql`` (a Spark query or view over the same snapshot) where ``where_sql`` holds,
    except that frazil may leave out a row for which ``may_skip(filter, row by column name)``
    holds. Every mismatch is reported; returns how many filters kept some but not all rows."""
    schema = table.scan(**scan).schema()
    informative = 0
    failures: list[str] = []
    for start in range(0, len(filters), chunk):
        part = filters[start : start + chunk]
        flags = ", ".join(
            f"{where_sql(f.expr, columns)} AS `__filter_{n}`" for n, f in enumerate(part)
        )
        result = spark_arrow(spark, f"SELECT *, {flags} FROM ({source_sql})")
        data = result.select(list(range(result.num_columns - len(part))))
        names = data.column_names
        rows = list(zip(*[_plain_array(c.combine_chunks()) for c in data.columns], strict=True))
        for n, f in enumerate(part):
            keep = result.column(f"__filter_{n}").to_pylist()
            expected = sorted((r for r, k in zip(rows, keep, strict=True) if k), key=repr)
            expression = frazil.expressions.from_json(f.text, schema)
            actual = frazil_rows(table, row_filter=expression, **scan)
            if may_skip is not None:
                expected = [
                    r
                    for r in expected
                    if r in actual or not may_skip(f, dict(zip(names, r, strict=True)))
                ]
            try:
                assert_same_rows(actual, expected, f"{label}: {f.label} ({f.text})")
            except AssertionError as error:
                failures.append(str(error))
            informative += 0 < len(expected) < len(rows)
    assert not failures, f"{len(failures)} filters differ:\n" + "\n".join(failures[:10])
    return informative


# --- rows Iceberg Java's generic reader reads (tables Spark cannot read) ------------------

_SPARK_TYPES = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "date": "INT",
    "time": "BIGINT",
    "timestamp": "BIGINT",
    "timestamptz": "BIGINT",
    "timestamp_ns": "BIGINT",
    "timestamptz_ns": "BIGINT",
    "string": "STRING",
    "uuid": "BINARY",
    "binary": "BINARY",
    "fixed": "BINARY",
}


def plain_ddl(type_: Any) -> str:
    """The Spark type that holds an Iceberg type's plain values (temporal values as ints)."""
    if isinstance(type_, str):
        kind = family(type_)
        return type_.upper() if kind == "decimal" else _SPARK_TYPES[kind]
    if type_["type"] == "struct":
        fields = ", ".join(f"`{f['name']}`: {plain_ddl(f['type'])}" for f in type_["fields"])
        return f"STRUCT<{fields}>"
    if type_["type"] == "list":
        return f"ARRAY<{plain_ddl(type_['element'])}>"
    return f"MAP<{plain_ddl(type_['key'])}, {plain_ddl(type_['value'])}>"


def _to_spark(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "f":
        return float(value[1])
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "map":
        return {_to_spark(k): _to_spark(v) for k, v in value[1]}
    if isinstance(value, tuple):
        return tuple(_to_spark(v) for v in value)
    if isinstance(value, list):
        return [_to_spark(v) for v in value]
    return value


class JavaReader:
    """Iceberg Java's generic reader (tests/interop/java/ReadReferee.java) over a table."""

    def __init__(self, spark: Any, java_table: Any) -> None:
        self.spark = spark
        self.table = java_table
        self.cls = spark._jvm.org.frazil.interop.ReadReferee

    def rows(self, selection: str, schema: Mapping[str, Any]) -> list[Row]:
        """The rows of the selected snapshot (see ReadReferee.readRows), in the plain form."""
        return java_plain_rows(self.cls.readRows(self.table, selection), schema)

    def view(self, name: str, selection: str, schema: Mapping[str, Any]) -> list[Row]:
        """A temporary Spark view of the selected snapshot's rows; returns the rows."""
        rows = self.rows(selection, schema)
        ddl = ", ".join(f"`{f['name']}` {plain_ddl(f['type'])}" for f in schema["fields"])
        data = [tuple(_to_spark(v) for v in row) for row in rows]
        self.spark.createDataFrame(data, schema=ddl).createOrReplaceTempView(name)
        return rows
