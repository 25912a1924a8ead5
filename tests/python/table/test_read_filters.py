"""Reading rows through a filter (issue 11): the residual applied to batches with the project's
value semantics (src/expr/visitors/compare.rs: NOT pushed into predicates, null and NaN never
ordered, -0.0 before +0.0), and the scan API around it: ``to_arrow`` (schema kept when empty),
``to_batches`` (a stream), ``to_pandas``, ``count`` (from metadata when nothing is left to
apply), ``limit`` (stops early), ``__arrow_c_stream__``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import Schema
from frazil import expressions as ex
from frazil import types as t
from frazil.table._arrow_project import file_fields
from frazil.table._row_groups import row_group_filter
from frazil.table.read import scan_arrow_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_helpers import DataTable

NAN = float("nan")
SCHEMA = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "f", t.DoubleType()),
    t.optional(3, "s", t.StringType()),
    t.optional(4, "n", t.IntegerType()),
    t.optional(5, "d", t.DateType()),
)
F = [-0.0, 0.0, NAN, None, 1.5, -2.0, math.inf]
S = ["abc", "", None, "abd", "b", "ab", "\u00e9"]
N = [1, None, -5, 0, 7, 2**31 - 1, -(2**31)]
D = [dt.date(2024, 1, 1), None, dt.date(1969, 12, 31), dt.date(2000, 2, 29), None, None, None]


@pytest.fixture
def table(tmp_path: Path) -> Any:
    writer = DataTable(tmp_path, SCHEMA)
    # Two files and small row groups, so batches and files both split the rows.
    rows = {"id": list(range(7)), "f": F, "s": S, "n": N, "d": D}
    first = writer.write_parquet({k: v[:4] for k, v in rows.items()}, row_group_size=2)
    second = writer.write_parquet({k: v[4:] for k, v in rows.items()}, row_group_size=2)
    writer.commit([writer.data(first), writer.data(second)])
    return writer.table()


def _ids(table: Any, row_filter: Any) -> list[int]:
    return sorted(table.scan(row_filter=row_filter).to_arrow().column("id").to_pylist())


@pytest.mark.parametrize(
    ("row_filter", "expected"),
    [
        (ex.LessThan("f", 0.0), [0, 5]),  # -0.0 < 0.0; NaN and null not ordered
        (ex.LessThanOrEqual("f", -0.0), [0, 5]),
        (ex.GreaterThan("f", -0.0), [1, 4, 6]),
        (ex.GreaterThanOrEqual("f", 0.0), [1, 4, 6]),
        (ex.EqualTo("f", 0.0), [1]),
        (ex.EqualTo("f", -0.0), [0]),
        (ex.NotEqualTo("f", 0.0), [0, 2, 3, 4, 5, 6]),  # NaN and null are != 0.0
        (ex.GreaterThan("f", 1.0), [4, 6]),  # NaN is not greater
        (ex.Not(ex.LessThan("f", 1.0)), [4, 6]),  # NOT pushed in: null and NaN stay out
        (ex.IsNaN("f"), [2]),
        (ex.NotNaN("f"), [0, 1, 3, 4, 5, 6]),  # NOT NaN(null) holds
        (ex.IsNull("f"), [3]),
        (ex.NotNull("f"), [0, 1, 2, 4, 5, 6]),
        (ex.In("f", [0.0, 1.5]), [1, 4]),
        (ex.NotIn("f", [-0.0, 1.5]), [1, 2, 3, 5, 6]),
        (ex.StartsWith("s", "ab"), [0, 3, 5]),
        (ex.NotStartsWith("s", "ab"), [1, 2, 4, 6]),  # null included, as its negation
        (ex.Or(ex.IsNull("s"), ex.EqualTo("s", "b")), [2, 4]),
        (ex.GreaterThan("s", "b"), [6]),  # UTF-8 byte order
        (ex.LessThan("n", 0), [2, 6]),
        (ex.In("n", [0, 7, 99]), [3, 4]),
        (ex.NotIn("n", [0, 7]), [0, 1, 2, 5, 6]),
        (ex.LessThan("d", dt.date(1970, 1, 1)), [2]),
        (ex.And(ex.GreaterThanOrEqual("id", 2), ex.Not(ex.IsNull("d"))), [2, 3]),
        ("n > 0 AND NOT (s = 'ab')", [0, 4]),
        (ex.AlwaysFalse(), []),
    ],
)
def test_residual_semantics(table: Any, row_filter: Any, expected: list[int]) -> None:
    assert _ids(table, row_filter) == expected


def test_filter_on_a_column_not_selected(table: Any) -> None:
    scan = table.scan(row_filter="n < 1", selected_fields=("s",))
    result = scan.to_arrow()
    assert result.column_names == ["s"]
    assert sorted(result.column("s").to_pylist(), key=repr) == sorted(
        [None, "abd", "\u00e9"], key=repr
    )
    assert scan.count() == 3


def test_empty_results_keep_the_schema(table: Any) -> None:
    result = table.scan(row_filter="id > 100").to_arrow()
    assert result.num_rows == 0 and result.schema == scan_arrow_schema(SCHEMA)
    empty = table.scan(row_filter="id > 100", selected_fields=("s", "id")).to_arrow()
    assert empty.column_names == ["id", "s"]
    assert table.scan(row_filter="id > 100").count() == 0
    assert table.scan(row_filter="id > 100").to_pandas().empty


def test_table_without_snapshots_reads_empty(tmp_path: Path) -> None:
    result = DataTable(tmp_path, SCHEMA).table().scan().to_arrow()
    assert result.num_rows == 0 and result.schema == scan_arrow_schema(SCHEMA)


def test_stream_protocol_and_batches(table: Any) -> None:
    scan = table.scan(row_filter="id >= 1")
    reader = scan.to_batches()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema == scan_arrow_schema(SCHEMA)
    assert sum(b.num_rows for b in reader) == 6
    assert pa.table(scan).num_rows == 6  # __arrow_c_stream__
    assert pa.RecordBatchReader.from_stream(scan).read_all().num_rows == 6
    frame = scan.to_pandas()
    assert sorted(frame["id"].tolist()) == [1, 2, 3, 4, 5, 6]


def test_limit_stops_reading(tmp_path: Path) -> None:
    writer = DataTable(tmp_path, SCHEMA)
    files = [
        writer.write_parquet({"id": list(range(i * 10, i * 10 + 10))}, row_group_size=3)
        for i in range(3)
    ]
    writer.commit([writer.data(f) for f in files])
    table = writer.table()
    order = [task.file.file_path for task in table.scan().plan_files()]
    # Files after the first are never opened: they can be gone.
    for later in order[1:]:
        Path(later).unlink()
    scan = table.scan(limit=4, options={"read.files-in-flight": 1})
    assert scan.to_arrow().num_rows == 4
    assert scan.count() == 4  # from metadata, capped
    assert table.scan(limit=0).to_arrow().num_rows == 0
    with pytest.raises(FileNotFoundError):
        table.scan(limit=25, options={"read.files-in-flight": 1}).to_arrow()


def test_count_from_metadata_without_reading(tmp_path: Path) -> None:
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "cat", t.StringType()))
    spec = {
        "spec-id": 0,
        "fields": [{"name": "cat", "transform": "identity", "source-id": 2, "field-id": 1000}],
    }
    writer = DataTable(tmp_path, schema, specs=[spec])
    a = writer.write_parquet({"id": [1, 2, 3], "cat": ["x", "x", "x"]})
    b = writer.write_parquet({"id": [4, 5], "cat": ["y", "y"]})
    writer.commit([writer.data(a, {"cat": "x"}), writer.data(b, {"cat": "y"})])
    table = writer.table()
    assert table.scan(row_filter="cat = 'x'").to_arrow().num_rows == 3
    Path(a).unlink()
    Path(b).unlink()
    # The partition answers the filter (residual true), no deletes: record counts suffice.
    assert table.scan().count() == 5
    assert table.scan(row_filter="cat = 'y'").count() == 2
    with pytest.raises(FileNotFoundError):
        table.scan(row_filter="id > 1").count()  # a residual: rows must be read


# --- random rows and filters against a direct evaluation ---------------------------------------


def _float_key(value: float) -> tuple[float, float]:
    return (value, math.copysign(1.0, value))


def _ordered(op: str) -> Callable[[Any, Any], bool]:
    return {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "=": lambda a, b: a == b,
    }[op]


def _python(predicate: tuple[Any, ...], row: dict[str, Any]) -> bool:
    kind = predicate[0]
    if kind == "and":
        return _python(predicate[1], row) and _python(predicate[2], row)
    if kind == "or":
        return _python(predicate[1], row) or _python(predicate[2], row)
    if kind == "not":
        return _python(_negated(predicate[1]), row)
    _, op, column, literal = predicate
    value = row[column]
    if op == "is_null":
        return value is None
    if op == "not_null":
        return value is not None
    if op == "is_nan":
        return value is not None and value != value
    if op == "not_nan":
        return not (value is not None and value != value)
    if op == "!=":
        return not _python(("p", "=", column, literal), row)
    if op == "not_in":
        return not _python(("p", "in", column, literal), row)
    if value is None or (isinstance(value, float) and value != value):
        return False
    if op == "in":
        return any(_python(("p", "=", column, v), row) for v in literal)
    if column == "f":
        return _ordered(op)(_float_key(value), _float_key(literal))
    return _ordered(op)(value, literal)


_NEGATIONS = {
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "=": "!=",
    "!=": "=",
    "in": "not_in",
    "not_in": "in",
    "is_null": "not_null",
    "not_null": "is_null",
    "is_nan": "not_nan",
    "not_nan": "is_nan",
}


def _negated(predicate: tuple[Any, ...]) -> tuple[Any, ...]:
    kind = predicate[0]
    if kind == "and":
        return ("or", _negated(predicate[1]), _negated(predicate[2]))
    if kind == "or":
        return ("and", _negated(predicate[1]), _negated(predicate[2]))
    if kind == "not":
        return predicate[1]
    return ("p", _NEGATIONS[predicate[1]], predicate[2], predicate[3])


_BUILDERS: dict[str, Callable[[str, Any], ex.Expression]] = {
    "<": ex.LessThan,
    "<=": ex.LessThanOrEqual,
    ">": ex.GreaterThan,
    ">=": ex.GreaterThanOrEqual,
    "=": ex.EqualTo,
    "!=": ex.NotEqualTo,
    "in": ex.In,
    "not_in": ex.NotIn,
}


def _frazil(predicate: tuple[Any, ...]) -> ex.Expression:
    kind = predicate[0]
    if kind == "and":
        return ex.And(_frazil(predicate[1]), _frazil(predicate[2]))
    if kind == "or":
        return ex.Or(_frazil(predicate[1]), _frazil(predicate[2]))
    if kind == "not":
        return ex.Not(_frazil(predicate[1]))
    _, op, column, literal = predicate
    unary = {"is_null": ex.IsNull, "not_null": ex.NotNull, "is_nan": ex.IsNaN, "not_nan": ex.NotNaN}
    if op in unary:
        return unary[op](column)
    return _BUILDERS[op](column, literal)


FLOATS = st.sampled_from([-0.0, 0.0, NAN, 1.5, -2.5, math.inf, -math.inf, 3.0])
INTS = st.integers(-5, 5)
STRINGS = st.sampled_from(["", "a", "ab", "b", "\u00e9", "z"])
VALUES = {"f": FLOATS, "n": INTS, "s": STRINGS}


@st.composite
def _predicates(draw: Any, depth: int = 2) -> tuple[Any, ...]:
    if depth > 0 and draw(st.booleans()):
        kind = draw(st.sampled_from(["and", "or", "not"]))
        if kind == "not":
            return ("not", draw(_predicates(depth - 1)))
        return (kind, draw(_predicates(depth - 1)), draw(_predicates(depth - 1)))
    column = draw(st.sampled_from(["f", "n", "s"]))
    ops = ["<", "<=", ">", ">=", "=", "!=", "in", "not_in", "is_null", "not_null"]
    if column == "f":
        ops += ["is_nan", "not_nan"]
    op = draw(st.sampled_from(ops))
    values = VALUES[column]
    if op in ("in", "not_in"):
        literal: Any = draw(st.lists(values.filter(lambda v: v == v), min_size=1, max_size=3))
    elif op in ("is_null", "not_null", "is_nan", "not_nan"):
        literal = None
    else:
        literal = draw(values.filter(lambda v: v == v))
    return ("p", op, column, literal)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    f=st.lists(st.one_of(st.none(), FLOATS), min_size=1, max_size=30),
    data=st.data(),
    predicate=_predicates(),
    sort=st.booleans(),
)
def test_random_filters_equal_python(
    tmp_path_factory: Any, f: list[Any], data: Any, predicate: tuple[Any, ...], sort: bool
) -> None:
    size = len(f)
    n = data.draw(st.lists(st.one_of(st.none(), INTS), min_size=size, max_size=size))
    s = data.draw(st.lists(st.one_of(st.none(), STRINGS), min_size=size, max_size=size))
    if sort:  # clustered values: row groups' statistics prune
        n = sorted(n, key=lambda v: (v is not None, v or 0))
    writer = DataTable(tmp_path_factory.mktemp("t"), SCHEMA)
    rows = {"id": list(range(size)), "f": f, "n": n, "s": s}
    writer.commit([writer.data(writer.write_parquet(rows, row_group_size=4))])
    table = writer.table()
    expected = [i for i in range(size) if _python(predicate, {"f": f[i], "n": n[i], "s": s[i]})]
    assert _ids(table, _frazil(predicate)) == expected


def test_row_groups_skipped_by_their_statistics(tmp_path: Path) -> None:
    writer = DataTable(tmp_path, SCHEMA)
    rows = {
        "id": list(range(40)),
        "n": [i // 10 for i in range(30)] + [None] * 10,
        "s": ["a"] * 10 + ["b"] * 10 + ["c"] * 10 + [None] * 10,
        "f": [float(i) for i in range(40)],
        "d": [dt.date(2024, 1, 1 + i // 10) for i in range(40)],
    }
    path = writer.write_parquet(rows, row_group_size=10)
    metadata = pq.ParquetFile(path).metadata
    fields = file_fields(pq.read_schema(path), path, None)

    def groups(row_filter: str | ex.Expression) -> list[int]:
        expression = ex.parse(row_filter) if isinstance(row_filter, str) else row_filter
        test = row_group_filter(expression, SCHEMA, fields, metadata)
        return [i for i in range(metadata.num_row_groups) if test(metadata.row_group(i))]

    assert groups("n >= 2") == [2]  # the all-null group holds no comparison
    assert groups("n = 1 OR s = 'c'") == [1, 2]
    assert groups("NOT (n < 1)") == [1, 2]
    assert groups("n IS NULL") == [3]
    assert groups("n IS NOT NULL AND id < 15") == [0, 1]
    assert groups("s IN ('a', 'zz')") == [0]
    assert groups(ex.GreaterThan("d", dt.date(2024, 1, 3))) == [3]
    assert groups("d > '2024-01-03'") == [0, 1, 2, 3]  # an untyped literal proves nothing
    assert groups("f < 0") == [0, 1, 2, 3]  # floats are never pruned (NaN)
    assert groups("n != 0") == [0, 1, 2, 3]
    writer.commit([writer.data(path)])
    table = writer.table()
    assert _ids(table, "n >= 2") == list(range(20, 30))
