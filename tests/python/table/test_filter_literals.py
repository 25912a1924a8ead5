"""A filter's literals bind the same way wherever the filter is used: a scan, a delete and an
overwrite's filter all go through the Rust binder (src/expr/literal.rs, ``convert``), so that a
literal of another kind than its column (5.0 or 5.5 against a long column, a date as text, a
number against a decimal column) selects the same rows in each, and a literal that cannot be
converted is the same FrazilError in each.

Java refuses a floating-point literal against an integer column (``DoubleLiteral.to(LONG)`` is
null: "Invalid value for conversion"); frazil's binder converts an integral one exactly and
places a fractional one between two column values (``n = 5.5`` matches nothing, ``n < 5.5`` is
``n <= 5``), as documented at ``convert``."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import FrazilError
from frazil.expressions import (
    EqualTo,
    Expression,
    GreaterThanOrEqual,
    In,
    LessThan,
    NotEqualTo,
    NotIn,
    Reference,
)
from frazil.table import Table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCHEMA = pa.schema(
    [
        pa.field("n", pa.int64()),
        pa.field("i", pa.int32()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.date32()),
        pa.field("dec", pa.decimal128(5, 1)),
        pa.field("s", pa.struct([pa.field("x", pa.int64())])),
    ]
)
ROWS = pa.table(
    {
        "n": pa.array([4, 5, 6, None], pa.int64()),
        "i": pa.array([1, 2, 3, None], pa.int32()),
        "f": pa.array([1.5, 2.0, 3.0, None], pa.float32()),
        "d": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3), None],
        "dec": [decimal.Decimal(v) for v in ("1.5", "2.0", "3.1")] + [None],
        "s": [{"x": 40}, {"x": 50}, {"x": 60}, None],
    },
    schema=SCHEMA,
)
ALL = [4, 5, 6, None]


def _table(tmp_path: Path, name: str = "t") -> Table:
    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table(f"db.{name}", SCHEMA)
    # Two files, so that a filter matching some rows of the second rewrites it.
    table.append(ROWS.slice(0, 1))
    table.append(ROWS.slice(1))
    return table


def _n(table: Table, **scan: Any) -> list[int | None]:
    values = table.scan(**scan).to_arrow().column("n").to_pylist()
    return sorted(values, key=lambda v: (v is None, v or 0))


def _rest(matched: list[int | None]) -> list[int | None]:
    return [v for v in ALL if v not in matched]


FILTERS: list[tuple[Expression | str, list[int | None]]] = [
    (EqualTo("n", 5.0), [5]),
    (EqualTo("n", 5.5), []),
    (LessThan("n", 5.5), [4, 5]),
    (GreaterThanOrEqual("n", 4.5), [5, 6]),
    (NotEqualTo("n", 5.0), [4, 6, None]),
    (In("n", [5.0, 6.0, 7.5]), [5, 6]),
    (NotIn("n", [5.0]), [4, 6, None]),
    (EqualTo("i", 2**40), []),
    # Beyond the int range: Java's aboveMax, and `i < aboveMax` is alwaysTrue (null rows
    # included, as Java's UnboundPredicate.bindLiteralOperation has it).
    (LessThan("i", 2**40), ALL),
    (EqualTo("f", 2), [5]),
    (EqualTo("d", "2024-01-02"), [5]),
    (LessThan("d", "2024-01-03"), [4, 5]),
    (EqualTo("dec", 2), [5]),
    (EqualTo("dec", "1.50"), [4]),
    (EqualTo("dec", 3.1), [6]),
    (EqualTo(Reference("s.x"), 50.0), [5]),
    ("n = 5.0 or d = '2024-01-03'", [5, 6]),
]


@pytest.mark.parametrize(("row_filter", "matched"), FILTERS, ids=str)
def test_scan_delete_and_overwrite_bind_literals_alike(
    tmp_path: Path, row_filter: Expression | str, matched: list[int | None]
) -> None:
    assert _n(_table(tmp_path, "scan"), row_filter=row_filter) == matched
    deleted = _table(tmp_path, "delete")
    deleted.delete(row_filter)
    assert _n(deleted) == _rest(matched)
    overwritten = _table(tmp_path, "overwrite")
    overwritten.overwrite(ROWS.slice(0, 0), overwrite_filter=row_filter)
    assert _n(overwritten) == _rest(matched)


def test_case_insensitive_delete_tests_the_rows_with_the_schema_names(tmp_path: Path) -> None:
    table = _table(tmp_path)
    table.delete("N = 5.0 OR S.X = 60", case_sensitive=False)
    assert _n(table) == [4, None]


@pytest.mark.parametrize(
    "row_filter", [EqualTo("n", "five"), EqualTo("d", "2024-02-30"), EqualTo("n", True)], ids=str
)
def test_a_literal_that_cannot_bind_is_the_same_error_everywhere(
    tmp_path: Path, row_filter: Expression
) -> None:
    table = _table(tmp_path)
    messages = []
    for attempt in (
        lambda: table.scan(row_filter=row_filter).to_arrow(),
        lambda: table.delete(row_filter),
        lambda: table.overwrite(ROWS.slice(0, 0), overwrite_filter=row_filter),
    ):
        with pytest.raises(FrazilError) as raised:
            attempt()
        messages.append(str(raised.value))
    assert messages[0] == messages[1] == messages[2]
    assert "cannot bind" in messages[0] or "invalid" in messages[0].lower()
    assert _n(table) == ALL


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    op=st.sampled_from([EqualTo, NotEqualTo, LessThan, GreaterThanOrEqual]),
    value=st.one_of(
        st.integers(3, 7).map(float),
        st.floats(3, 7, allow_nan=False).map(lambda v: round(v, 1)),
    ),
)
def test_float_literal_on_a_long_column_deletes_what_the_scan_selects(
    tmp_path_factory: pytest.TempPathFactory, op: type[Expression], value: float
) -> None:
    table = _table(tmp_path_factory.mktemp("t"))
    row_filter = op("n", value)  # type: ignore[call-arg]
    matched = _n(table, row_filter=row_filter)
    # Iceberg's comparisons on the mathematical values: a null n never satisfies an
    # ordered comparison or =, and satisfies != (spec: "Scan Planning", null semantics).
    expected = [
        v
        for v in ALL
        if (v is None and op is NotEqualTo)
        or (
            v is not None
            and {
                EqualTo: v == value,
                NotEqualTo: v != value,
                LessThan: v < value,
                GreaterThanOrEqual: v >= value,
            }[op]
        )
    ]
    assert matched == expected
    table.delete(row_filter)
    assert _n(table) == _rest(matched)
