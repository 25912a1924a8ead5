"""Row groups a residual filter cannot match, skipped by their Parquet statistics.

Only what the statistics prove is used: min/max and null counts of top-level int, long, date,
string and decimal columns (no floats: Parquet writers disagree about NaN in min/max), for
``<``, ``<=``, ``>``, ``>=``, ``=``, ``IN``, ``IS NULL`` and ``IS NOT NULL`` under AND and OR.
Everything else might match. Skipping a row group keeps later positions absolute: the reader
counts each group's first row from the file metadata.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

import pyarrow.parquet as pq

from frazil import expressions as ex
from frazil import types as t
from frazil.schema import Schema
from frazil.table._arrow_project import FileField
from frazil.table._row_filter import prepared

RowGroupTest = Callable[[Any], bool]
_PRUNABLE = (t.IntegerType, t.LongType, t.DateType, t.StringType, t.DecimalType)
_PYTHON = {
    t.IntegerType: int,
    t.LongType: int,
    t.DateType: dt.date,
    t.StringType: str,
    t.DecimalType: decimal.Decimal,
}


def _always(_group: Any) -> bool:
    return True


def _comparable(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is dt.date:
        return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    return isinstance(value, kind)


def row_group_filter(
    expression: ex.Expression,
    schema: Schema,
    fields: tuple[FileField, ...],
    metadata: pq.FileMetaData,
) -> RowGroupTest:
    """A test of a row group's metadata: False only when no row of the group can match."""
    columns: dict[str, int] = {}
    if metadata.num_row_groups:
        first = metadata.row_group(0)
        columns = {first.column(i).path_in_schema: i for i in range(first.num_columns)}

    def column_of(term: ex.Term) -> tuple[int, type] | None:
        if not isinstance(term, ex.Reference):
            return None
        field_id = schema.find_field_id(term.name)
        field = None if field_id is None else schema.find_field(field_id)
        if field is None or not isinstance(field.field_type, _PRUNABLE):
            return None
        source = next((f for f in fields if f.field_id == field_id and not f.children), None)
        if source is None or "." in source.name or source.name not in columns:
            return None
        return columns[source.name], _PYTHON[type(field.field_type)]

    def build(node: ex.Expression) -> RowGroupTest:
        if isinstance(node, ex.And):
            every = [build(o) for o in node.operands]
            return lambda g: all(test(g) for test in every)
        if isinstance(node, ex.Or):
            some = [build(o) for o in node.operands]
            return lambda g: any(test(g) for test in some)
        if isinstance(node, ex.AlwaysFalse):
            return lambda g: False
        if not isinstance(node, ex.UnboundPredicate):
            return _always
        found = column_of(node.term)
        if found is None:
            return _always
        index, kind = found
        return _predicate(node, index, kind)

    # NOT pushed in, equalities on one column joined: a key list is one IN, whose bounds test
    # is that of its equalities (a NOT IN proves nothing, as != does not).
    return build(prepared(expression))


def _predicate(predicate: ex.UnboundPredicate, index: int, kind: type) -> RowGroupTest:
    def stats(group: Any) -> Any:
        return group.column(index).statistics

    if isinstance(predicate, (ex.IsNull, ex.NotNull)):
        wanted_null = isinstance(predicate, ex.IsNull)

        def nulls(group: Any) -> bool:
            s = stats(group)
            if s is None or not s.has_null_count:
                return True
            return bool(s.null_count > 0 if wanted_null else s.null_count < group.num_rows)

        return nulls
    if isinstance(predicate, ex.SetPredicate) and isinstance(predicate, ex.In):
        values = list(predicate.values)
    elif isinstance(predicate, ex.LiteralPredicate) and not isinstance(
        predicate, (ex.NotEqualTo, ex.StartsWith, ex.NotStartsWith)
    ):
        values = [predicate.value]
    else:
        return _always
    if not all(_comparable(v, kind) for v in values):
        return _always

    def bounds(group: Any) -> bool:
        s = stats(group)
        if s is None:
            return True
        if s.has_null_count and s.null_count == group.num_rows:
            return False  # only nulls: no comparison holds
        if not s.has_min_max:
            return True
        low, high = s.min, s.max
        if not (_comparable(low, kind) and _comparable(high, kind)):
            return True
        if isinstance(predicate, ex.LessThan):
            return bool(low < values[0])
        if isinstance(predicate, ex.LessThanOrEqual):
            return bool(low <= values[0])
        if isinstance(predicate, ex.GreaterThan):
            return bool(high > values[0])
        if isinstance(predicate, ex.GreaterThanOrEqual):
            return bool(high >= values[0])
        return any(low <= v <= high for v in values)  # = and IN

    return bounds
