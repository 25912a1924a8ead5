"""Filters for the scan-planning parity tests, and what they mean row by row.

A filter is Java's ``ExpressionParser`` JSON with its values in the Appendix D JSON form of
the column's type (dates ``"2024-01-02"``, timestamps ``"2024-01-02T10:00:00"`` or
``"...+00:00"``, decimals ``"1.50"`` at the column's scale, binary and fixed as hex, uuids as
text, floats as JSON numbers), so that Java reads it with ``ExpressionParser.fromJson(json,
schema)`` and frazil with ``frazil.expressions.from_json(json, schema)``.

:func:`battery` derives one table's filters from its columns and the values written to them:
every operation on every column, at the lowest, middle and highest values, beyond them, in
gaps between them and at the partition edges the table names; NaN and -0.0; string prefixes
that stop inside and beyond 16-character truncated bounds; IN lists over 200 values; AND / OR
/ NOT combinations; always true and false.

:func:`matches` decides whether a row matches a filter: the ground truth a planner must keep
("a file holding a matching row is planned"). The semantics are deliberately the narrowest
any reading of the spec allows, so that the ground truth never asks for a file a correct
planner may skip:

- NOT is first pushed into the predicates (Iceberg's ``negate``: ``NOT a < 1`` is ``a >= 1``).
- A null value matches only IS NULL and NOT NAN (null is not NaN: Java's Evaluator, Spark
  and frazil's reader agree; a planner pruning such a row loses it from every reader).
- NaN matches IS NAN, NOT NAN never, and ``!=`` / NOT IN always; every ordered comparison,
  ``=`` and IN with NaN are false (bounds never hold NaN: the spec, Manifests).
- Floats order -0.0 before 0.0 (the spec's sort order: ``-0 < 0``), so ``= 0.0`` does not
  match -0.0.
- Strings compare by code point (the order of their UTF-8 bytes); binary, fixed and uuid as
  unsigned bytes (a uuid's 128-bit unsigned value).

:func:`uuid_metrics_might_match` is the inclusive metrics evaluator for filters on one uuid
column, with uuids ordered as unsigned bytes (what Java 1.10.2 gets wrong: it orders
``java.util.UUID`` by signed longs).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
import struct
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal
from typing import Any

_INF = (float("inf"), float("-inf"))
IN_PREDICATE_LIMIT = 200  # Java's InclusiveMetricsEvaluator: larger IN lists "might match"
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_WIDE = Context(prec=80)  # decimal(38, S) needs more than the default 28 digits
FLOAT_MAX = 3.4028234663852886e38  # the largest finite float32
INT_RANGE = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}

# which comparisons to make at each probe value (column_battery)
PROBE_OPS = {
    "middle": ("eq", "not-eq", "lt", "gt-eq"),
    "lowest": ("lt", "lt-eq"),
    "highest": ("gt", "gt-eq"),
    "below all": ("eq", "lt-eq"),
    "above all": ("eq", "gt-eq"),
    "absent, inside": ("eq",),
    "edge": ("eq", "lt", "lt-eq", "gt", "gt-eq"),
}
NEGATED = {
    "lt": "gt-eq",
    "lt-eq": "gt",
    "gt": "lt-eq",
    "gt-eq": "lt",
    "eq": "not-eq",
    "not-eq": "eq",
    "in": "not-in",
    "not-in": "in",
    "is-null": "not-null",
    "not-null": "is-null",
    "is-nan": "not-nan",
    "not-nan": "is-nan",
    "starts-with": "not-starts-with",
    "not-starts-with": "starts-with",
}


@dataclass(frozen=True)
class Column:
    """One primitive column of a table: dotted name, Iceberg type string, field id, the
    values written to it (nulls and NaN included) and values worth probing (partition edges)."""

    name: str
    type: str
    field_id: int
    values: tuple[Any, ...]
    edges: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Filter:
    """One filter of the battery: a label for messages, its JSON and the columns it reads."""

    label: str
    expr: Any = field(compare=False)
    text: str
    columns: frozenset[str]


def make_filter(label: str, expr: Any) -> Filter:
    return Filter(label, expr, json.dumps(expr, separators=(",", ":")), frozenset(_terms(expr)))


def _terms(expr: Any) -> Iterable[str]:
    if isinstance(expr, bool):
        return
    kind = expr["type"]
    if kind in ("and", "or"):
        yield from _terms(expr["left"])
        yield from _terms(expr["right"])
    elif kind == "not":
        yield from _terms(expr["child"])
    else:
        yield expr["term"]


# --- values -------------------------------------------------------------------------------


def _precision(type_: str) -> int:
    match = _DECIMAL.fullmatch(type_)
    assert match, type_
    return int(match.group(1))


def _scale(type_: str) -> int:
    match = _DECIMAL.fullmatch(type_)
    assert match, type_
    return int(match.group(2))


def family(type_: str) -> str:
    if type_.startswith("decimal"):
        return "decimal"
    if type_.startswith("fixed"):
        return "fixed"
    return type_


def to_json_value(type_: str, value: Any) -> Any:
    """A Python value of the column's type -> its Appendix D JSON value."""
    kind = family(type_)
    if kind in ("boolean", "int", "long", "string"):
        return value
    if kind in ("float", "double"):
        assert not math.isnan(value) and not math.isinf(value), "Java refuses NaN literals"
        return float(value)
    if kind == "decimal":
        return str(value.quantize(Decimal(1).scaleb(-_scale(type_)), context=_WIDE))
    if kind in ("date", "time"):
        return value.isoformat()
    if kind == "timestamp":
        assert value.tzinfo is None
        return value.isoformat(timespec="microseconds")
    if kind == "timestamptz":
        utc = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return utc.isoformat(timespec="microseconds") + "+00:00"
    if kind == "uuid":
        return str(value)
    if kind in ("binary", "fixed"):
        return bytes(value).hex()
    raise AssertionError(f"no JSON form for {type_}")


def from_json_value(type_: str, value: Any) -> Any:
    """An Appendix D JSON value -> the Python value rows hold (float columns rounded to f32)."""
    kind = family(type_)
    if kind == "float":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if kind == "double":
        return float(value)
    if kind == "decimal":
        return Decimal(value)
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "time":
        return dt.time.fromisoformat(value)
    if kind in ("timestamp", "timestamptz"):
        return dt.datetime.fromisoformat(value)
    if kind == "uuid":
        return uuid.UUID(value)
    if kind in ("binary", "fixed"):
        return bytes.fromhex(value)
    return value


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def order_key(type_: str, value: Any) -> Any:
    """A key that orders values as Iceberg does (see the module docstring)."""
    kind = family(type_)
    if kind in ("float", "double"):
        return (value, math.copysign(1.0, value))
    if kind == "string":
        return value.encode("utf-8")
    if kind == "uuid":
        return value.bytes if isinstance(value, uuid.UUID) else bytes(value)
    if kind in ("binary", "fixed"):
        return bytes(value)
    return value


def _step(type_: str, value: Any, direction: int) -> Any | None:
    """A value just above (direction 1) or below (-1) ``value``, None when there is none."""
    kind = family(type_)
    if kind in ("int", "long"):
        low, high = INT_RANGE[kind]
        result = value + direction
        return result if low <= result <= high else None
    if kind in ("float", "double"):
        result = value + direction * (0.125 if abs(value) < 1e6 else abs(value) / 1e6)
        return (
            result
            if abs(result) <= (FLOAT_MAX if kind == "float" else sys.float_info.max)
            else None
        )
    if kind == "decimal":
        result = _WIDE.add(value, direction * Decimal(1).scaleb(-_scale(type_)))
        return result if len(result.as_tuple().digits) <= _precision(type_) else None
    try:  # None beyond Python's date and datetime range (years 1 to 9999)
        if kind == "date":
            return value + dt.timedelta(days=direction)
        if kind in ("timestamp", "timestamptz"):
            return value + dt.timedelta(microseconds=direction)
    except OverflowError:
        return None
    if kind == "time":
        micros = (value.hour * 3600 + value.minute * 60 + value.second) * 10**6
        micros += value.microsecond + direction
        if not 0 <= micros < 86_400 * 10**6:
            return None
        return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
    if kind == "string":
        return value + "!" if direction > 0 else (value[:-1] if value else None)
    if kind == "binary":
        return value + b"\x00" if direction > 0 else (value[:-1] if value else None)
    if kind == "uuid":
        number = value.int + direction
        return uuid.UUID(int=number) if 0 <= number < 2**128 else None
    return None


# --- the battery --------------------------------------------------------------------------


def _pred(op: str, column: Column, value: Any = None, values: Sequence[Any] = ()) -> Any:
    expr: dict[str, Any] = {"type": op, "term": column.name}
    if op in ("in", "not-in"):
        expr["values"] = [to_json_value(column.type, v) for v in values]
    elif op not in ("is-null", "not-null", "is-nan", "not-nan"):
        expr["value"] = to_json_value(column.type, value)
    return expr


def _big_in_list(column: Column, present: Any) -> list[Any] | None:
    """Over IN_PREDICATE_LIMIT values around ``present`` (which is included)."""
    values = [present]
    up = down = present
    while len(values) <= IN_PREDICATE_LIMIT + 40:
        up = _step(column.type, up, 1) if up is not None else None
        down = _step(column.type, down, -1) if down is not None else None
        if up is None and down is None:
            return None
        values.extend(v for v in (up, down) if v is not None)
    return values


def column_battery(column: Column) -> list[Filter]:
    """Every operation that applies to the column's type, at its interesting values."""
    kind = family(column.type)
    out: list[Filter] = []

    def add(label: str, expr: Any) -> None:
        out.append(make_filter(f"{column.name}: {label}", expr))

    add("is null", _pred("is-null", column))
    add("not null", _pred("not-null", column))
    # JSON has no NaN or infinity: those are probed by IS NAN and by finite neighbours
    present = [v for v in column.values if v is not None and not is_nan(v) and v not in _INF]
    distinct = sorted({order_key(column.type, v): v for v in present}.items())
    values = [v for _, v in distinct]
    if kind in ("float", "double"):
        add("is nan", _pred("is-nan", column))
        add("not nan", _pred("not-nan", column))
        for zero in (0.0, -0.0):
            for op in ("eq", "lt", "gt-eq"):
                add(f"{op} {zero!r}", _pred(op, column, zero))
    if not values:
        return out
    if kind == "boolean":
        for b in (True, False):
            add(f"= {b}", _pred("eq", column, b))
            add(f"!= {b}", _pred("not-eq", column, b))
        add("in [true]", _pred("in", column, values=[True]))
        add("not in [false]", _pred("not-in", column, values=[False]))
        return out
    low, mid, high = values[0], values[len(values) // 2], values[-1]
    probes: list[tuple[str, Any]] = [("lowest", low), ("middle", mid), ("highest", high)]
    for label, base, direction in (("below all", low, -1), ("above all", high, 1)):
        beyond = _step(column.type, base, direction)
        if beyond is not None:
            probes.append((label, beyond))
    gap = _step(column.type, mid, 1)
    if gap is not None and all(order_key(column.type, gap) != k for k, _ in distinct):
        probes.append(("absent, inside", gap))
    probes.extend(("edge", e) for e in column.edges)
    for label, value in probes:
        for op in PROBE_OPS[label]:
            add(f"{op} {label} {to_json_value(column.type, value)!r}", _pred(op, column, value))
    absent = [v for label, v in probes if label == "absent, inside"]
    add("in [lowest, middle, absent]", _pred("in", column, values=[low, mid, *absent]))
    add("not in [middle]", _pred("not-in", column, values=[mid]))
    big = _big_in_list(column, mid)
    if big is not None:
        add(f"in {len(big)} values", _pred("in", column, values=big))
    if kind == "string":
        longest = max(values, key=len)
        for prefix in sorted({longest[:n] for n in (0, 16, 17)}):
            add(f"not starts with {prefix!r}", _pred("not-starts-with", column, prefix))
        prefixes = {longest[:n] for n in (1, 16, 17)} | {mid[:2], "~~nothing"}
        for prefix in sorted(prefixes | {longest[:16] + "\U0010ffff"}):
            add(f"starts with {prefix!r}", _pred("starts-with", column, prefix))
    return out


def combine(filters: Sequence[Filter], rng: random.Random, count: int) -> list[Filter]:
    """AND / OR / NOT of filters on different columns, and nested combinations."""
    out: list[Filter] = []
    for n in range(count):
        a, b = rng.sample(list(filters), 2)
        shape = n % 5
        if shape == 0:
            out.append(make_filter(f"({a.label}) and ({b.label})", _and(a.expr, b.expr)))
        elif shape == 1:
            out.append(make_filter(f"({a.label}) or ({b.label})", _or(a.expr, b.expr)))
        elif shape == 2:
            out.append(make_filter(f"not ({a.label})", {"type": "not", "child": a.expr}))
        elif shape == 3:
            expr = {"type": "not", "child": _and(a.expr, {"type": "not", "child": b.expr})}
            out.append(make_filter(f"not (({a.label}) and not ({b.label}))", expr))
        else:
            c = rng.choice(list(filters))
            expr = _or(_and(a.expr, b.expr), c.expr)
            out.append(make_filter(f"(({a.label}) and ({b.label})) or ({c.label})", expr))
    return out


def _and(a: Any, b: Any) -> Any:
    return {"type": "and", "left": a, "right": b}


def _or(a: Any, b: Any) -> Any:
    return {"type": "or", "left": a, "right": b}


def battery(columns: Sequence[Column], seed: int, combinations: int = 40) -> list[Filter]:
    """A table's filters: constants, every column's battery, then combinations. Filters on
    uuid columns are combined only among themselves (see uuid_metrics_might_match)."""
    rng = random.Random(seed)
    out = [
        make_filter("always true", True),
        make_filter("always false", False),
        make_filter("not true", {"type": "not", "child": True}),
        make_filter("true and false", _and(True, False)),
    ]
    per_column = [column_battery(c) for c in columns]
    for filters in per_column:
        out.extend(filters)
    plain = [f for c, fs in zip(columns, per_column, strict=True) if c.type != "uuid" for f in fs]
    uuids = [f for c, fs in zip(columns, per_column, strict=True) if c.type == "uuid" for f in fs]
    if len(plain) >= 2:
        out.extend(combine(plain, rng, combinations))
    if len(uuids) >= 2:
        out.extend(combine(uuids, rng, combinations // 4))
    seen: set[str] = set()
    unique = []
    for f in out:
        if f.text not in seen:
            seen.add(f.text)
            unique.append(f)
    return unique


# --- ground truth -------------------------------------------------------------------------


def push_not(expr: Any, negate: bool = False, keep_nan: Mapping[str, str] | None = None) -> Any:
    """NOT pushed into the predicates (Iceberg's Expression.negate / RewriteNot). With
    ``keep_nan`` (column types), a negated ordered comparison on a float or double column
    also keeps NaN rows: ``NOT x < c`` is ``x >= c OR x IS NAN`` (frazil's reading; the
    pitfalls' "NOT (x < c) ... drops NaN rows")."""
    if isinstance(expr, bool):
        return expr != negate
    kind = expr["type"]
    if kind == "not":
        return push_not(expr["child"], not negate, keep_nan)
    if kind in ("and", "or"):
        swapped = {"and": "or", "or": "and"}[kind] if negate else kind
        return {
            "type": swapped,
            "left": push_not(expr["left"], negate, keep_nan),
            "right": push_not(expr["right"], negate, keep_nan),
        }
    if not negate:
        return expr
    negated = {**expr, "type": NEGATED[kind]}
    if (
        keep_nan is not None
        and kind in ("lt", "lt-eq", "gt", "gt-eq")
        and keep_nan[expr["term"]] in ("float", "double")
    ):
        return {"type": "or", "left": negated, "right": {"type": "is-nan", "term": expr["term"]}}
    return negated


def matches(
    expr: Any, row: Mapping[str, Any], types: Mapping[str, str], keep_nan: bool = False
) -> bool:
    """Whether the row matches (module docstring: the narrowest semantics; with
    ``keep_nan``, NaN rows match the negation of an ordered comparison)."""
    return _matches(push_not(expr, keep_nan=types if keep_nan else None), row, types)


def _matches(expr: Any, row: Mapping[str, Any], types: Mapping[str, str]) -> bool:
    if isinstance(expr, bool):
        return expr
    kind = expr["type"]
    if kind == "and":
        return _matches(expr["left"], row, types) and _matches(expr["right"], row, types)
    if kind == "or":
        return _matches(expr["left"], row, types) or _matches(expr["right"], row, types)
    type_ = types[expr["term"]]
    value = row[expr["term"]]
    if kind in ("is-null", "not-null"):
        return bool((value is None) == (kind == "is-null"))
    if value is None:
        return kind == "not-nan"
    if kind in ("is-nan", "not-nan"):
        return bool(is_nan(value) == (kind == "is-nan"))
    if is_nan(value):
        return bool(kind in ("not-eq", "not-in"))
    if kind in ("starts-with", "not-starts-with"):
        return bool(value.startswith(expr["value"]) == (kind == "starts-with"))
    key = order_key(type_, value)
    if kind in ("in", "not-in"):
        found = any(key == order_key(type_, from_json_value(type_, v)) for v in expr["values"])
        return bool(found == (kind == "in"))
    literal = order_key(type_, from_json_value(type_, expr["value"]))
    compare: dict[str, Callable[[Any, Any], bool]] = {
        "eq": lambda a, b: a == b,
        "not-eq": lambda a, b: a != b,
        "lt": lambda a, b: a < b,
        "lt-eq": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "gt-eq": lambda a, b: a >= b,
    }
    return compare[kind](key, literal)


@dataclass(frozen=True)
class FieldStats:
    """One file's metrics for one column (None where the file has none)."""

    record_count: int
    value_count: int | None
    null_count: int | None
    lower: bytes | None
    upper: bytes | None


def uuid_metrics_might_match(expr: Any, stats: Mapping[str, FieldStats]) -> bool:
    """Java's InclusiveMetricsEvaluator for a filter on (non-partition) uuid columns, with
    uuid bounds ordered as unsigned bytes, as the spec orders them. ``stats`` holds each
    column's metrics in the file, by column name."""
    if any(s.record_count == 0 for s in stats.values()):
        return False
    return _uuid_might(push_not(expr), stats)


def _uuid_might(expr: Any, stats: Mapping[str, FieldStats]) -> bool:
    if isinstance(expr, bool):
        return expr
    kind = expr["type"]
    if kind == "and":
        return _uuid_might(expr["left"], stats) and _uuid_might(expr["right"], stats)
    if kind == "or":
        return _uuid_might(expr["left"], stats) or _uuid_might(expr["right"], stats)
    column = stats[expr["term"]]
    nulls_only = column.value_count is not None and column.value_count == column.null_count
    if kind == "is-null":
        return column.null_count != 0
    if kind in ("not-null", "lt", "lt-eq", "gt", "gt-eq", "eq", "in") and nulls_only:
        return False
    if kind in ("not-null", "not-eq", "not-in"):
        return True
    lower, upper = column.lower, column.upper
    if kind == "in":
        if len(expr["values"]) > IN_PREDICATE_LIMIT:
            return True
        literals = [uuid.UUID(v).bytes for v in expr["values"]]
        return any(
            (lower is None or lower <= v) and (upper is None or v <= upper) for v in literals
        )
    v = uuid.UUID(expr["value"]).bytes
    checks: dict[str, Callable[[], bool]] = {
        "lt": lambda: lower is None or lower < v,
        "lt-eq": lambda: lower is None or lower <= v,
        "gt": lambda: upper is None or upper > v,
        "gt-eq": lambda: upper is None or upper >= v,
        "eq": lambda: (lower is None or lower <= v) and (upper is None or v <= upper),
    }
    return checks[kind]()
