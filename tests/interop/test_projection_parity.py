"""Inclusive and strict projections and residuals against Apache Iceberg Java 1.10.2.

A battery of filters over a schema of every transformable type, projected onto specs
that use every transform (several per column, void included), by Java
(``Projections.inclusive(spec).project`` / ``strict``) and by frazil. Both results are
bound to the spec's partition type by frazil and written as expression JSON, which
sorts sets and folds one-value sets into ``=``; where the texts still differ, the two
must agree on every partition tuple built from their values.

Residuals: for rows with no nulls, Java's ``ResidualEvaluator`` on the row's partition
(computed by Java's transforms) and frazil's give the same filter after NOT is pushed
into the predicates.

Where Java 1.10.2 is wrong per the spec, frazil follows the spec, and the tests at the
end show Java's answer losing rows: truncate's width counts code points (Java: UTF-16
units), truncating near an int's minimum does not wrap around, and a null partition
value is not below every value.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from frazil import _native

pytestmark = pytest.mark.interop

COLUMNS: list[tuple[int, str, str]] = [
    (1, "i", "int"),
    (2, "id", "long"),
    (3, "dec", "decimal(9,2)"),
    (4, "s", "string"),
    (5, "d", "date"),
    (6, "ts", "timestamp"),
    (7, "tz", "timestamptz"),
    (8, "ns", "timestamp_ns"),
    (9, "b", "binary"),
    (10, "f", "double"),
    (11, "u", "uuid"),
    (12, "req", "int"),
]
SCHEMA = json.dumps(
    {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": fid, "name": name, "required": name == "req", "type": ty}
            for fid, name, ty in COLUMNS
        ],
    }
)
TYPES = {name: ty for _, name, ty in COLUMNS}
IDS = {name: fid for fid, name, _ in COLUMNS}

SPECS: dict[str, list[tuple[str, str]]] = {
    "identity": [
        (c, "identity") for c in ("i", "id", "dec", "s", "d", "ts", "tz", "ns", "b", "f", "u")
    ],
    "bucket": [
        ("i", "bucket[4]"),
        ("id", "bucket[16]"),
        ("dec", "bucket[6]"),
        ("s", "bucket[7]"),
        ("d", "bucket[3]"),
        ("ts", "bucket[5]"),
        ("tz", "bucket[3]"),
        ("ns", "bucket[5]"),
        ("b", "bucket[2]"),
        ("u", "bucket[8]"),
    ],
    "truncate": [
        ("i", "truncate[10]"),
        ("id", "truncate[100]"),
        ("dec", "truncate[50]"),
        ("s", "truncate[3]"),
        ("b", "truncate[2]"),
    ],
    "time": [("d", "year"), ("ts", "month"), ("tz", "day"), ("ns", "hour")],
    "time-fine": [
        ("d", "month"),
        ("d", "day"),
        ("ts", "year"),
        ("ts", "day"),
        ("ts", "hour"),
        ("tz", "hour"),
        ("ns", "day"),
    ],
    "mixed": [
        ("i", "truncate[3]"),
        ("i", "bucket[2]"),
        ("s", "truncate[1]"),
        ("s", "void"),
        ("ts", "day"),
        ("ts", "void"),
        ("d", "identity"),
    ],
    "void": [("i", "void"), ("s", "void"), ("ts", "void")],
}


def spec_json(name: str) -> str:
    fields = [
        {"source-id": IDS[column], "field-id": 1000 + k, "name": f"p{k}", "transform": transform}
        for k, (column, transform) in enumerate(SPECS[name])
    ]
    return json.dumps({"spec-id": 0, "fields": fields})


def pred(op: str, term: str, value: Any = None, values: list[Any] | None = None) -> str:
    out: dict[str, Any] = {"type": op, "term": term}
    if values is not None:
        out["values"] = values
    elif value is not None:
        out["value"] = value
    return json.dumps(out, ensure_ascii=False)


def comparisons(term: str, *literals: Any) -> Iterator[str]:
    for literal in literals:
        for op in ("lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq"):
            yield pred(op, term, literal)
    yield pred("in", term, values=list(literals))
    yield pred("not-in", term, values=list(literals))
    yield pred("is-null", term)
    yield pred("not-null", term)


def both(kind: str, left: str, right: str) -> str:
    return f'{{"type":"{kind}","left":{left},"right":{right}}}'


def negated(child: str) -> str:
    return f'{{"type":"not","child":{child}}}'


def battery() -> list[str]:
    out: list[str] = []
    out += comparisons("i", 15, -5, 0, 10)
    out += comparisons("id", 100, 34, -1)
    out += comparisons("dec", "10.05", "-0.01", "10.50")
    out += comparisons("s", "abcdef", "ab", "abc", "aé")
    for prefix in ("", "a", "ab", "abc", "abcd", "aé", "éé"):
        out += [pred("starts-with", "s", prefix), pred("not-starts-with", "s", prefix)]
    out += comparisons("d", "1970-01-01", "1969-12-01", "1969-10-31", "1969-12-31", "2017-11-16")
    out += comparisons(
        "ts",
        "1970-01-01T00:00:00",
        "1969-12-31T10:00:00",
        "2019-01-01T12:00:00",
        "1969-01-01T00:00:00",
    )
    out += comparisons(
        "tz", "1970-01-01T00:00:00+00:00", "1969-12-31T23:00:00+00:00", "2017-11-16T22:31:08+00:00"
    )
    out += comparisons(
        "ns",
        "1970-01-01T00:00:00.000000001",
        "1969-12-31T23:59:59.999999999",
        "2019-01-01T00:00:00",
    )
    out += comparisons("b", "010203", "01", "ff")
    out += comparisons("f", 1.5, 0.0)
    out += [pred("is-nan", "f"), pred("not-nan", "f")]
    out += comparisons(
        "u", "f79c3e09-677c-4bbd-a479-3f349cb785e7", "00000000-0000-0000-0000-000000000001"
    )
    out += [pred("is-null", "req"), pred("lt", "req", 3)]
    out += [
        negated(pred("lt", "i", 15)),
        negated(pred("starts-with", "s", "ab")),
        both(
            "or",
            both("and", pred("gt", "i", 5), pred("eq", "s", "abcdef")),
            pred("lt", "d", "1970-01-01"),
        ),
        negated(
            both("or", pred("eq", "ts", "1969-12-31T10:00:00"), pred("in", "i", values=[1, 2, 3]))
        ),
        both(
            "and",
            pred("gt-eq", "ts", "2019-01-01T00:00:00"),
            pred("lt", "ts", "2019-01-02T00:00:00"),
        ),
        both("or", pred("not-eq", "id", 34), negated(pred("is-null", "b"))),
    ]
    return out


BATTERY = battery()


class Java:
    """Iceberg Java's projections and residuals over py4j."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self.iceberg = jvm.org.apache.iceberg
        self.expressions = jvm.org.apache.iceberg.expressions
        self.schema = self.iceberg.SchemaParser.fromJson(SCHEMA)
        self.specs: dict[str, Any] = {}

    def spec(self, name: str) -> Any:
        if name not in self.specs:
            self.specs[name] = self.iceberg.PartitionSpecParser.fromJson(
                self.schema, spec_json(name)
            )
        return self.specs[name]

    def bound(self, filter_json: str) -> Any:
        parser = self.expressions.ExpressionParser
        if '"ns"' in filter_json:
            # fromJson(json, schema) reads a timestamp_ns value as a plain long, which
            # binding then takes for microseconds (1 ns becomes 1000 ns): Java gets
            # these filters without the schema, as text it parses when binding.
            unbound = parser.fromJson(filter_json)
        else:
            unbound = parser.fromJson(filter_json, self.schema)
        return self.expressions.Binder.bind(self.schema.asStruct(), unbound, True)

    def project(self, spec: str, filter_json: str, strict: bool) -> str:
        s = self.spec(spec)
        evaluator = (
            self.expressions.Projections.strict(s)
            if strict
            else self.expressions.Projections.inclusive(s)
        )
        projected = evaluator.project(self.bound(filter_json))
        bound = self.expressions.Binder.bind(s.partitionType(), projected, True)
        return str(self.expressions.ExpressionParser.toJson(bound))

    def partition(self, spec: str, row: dict[str, Any]) -> tuple[Any, list[Any]]:
        """Java's partition of a row (JSON values by column name) and its tuple as JSON.

        Values stay inside the JVM (py4j would turn a Long into a Python int and back
        into an Integer): the row is parsed as a struct, partitioned by PartitionKey.
        """
        s = self.spec(spec)
        parser = self.iceberg.SingleValueParser
        by_id = json.dumps({str(IDS[name]): value for name, value in row.items()})
        record = parser.fromJson(self.schema.asStruct(), by_id)
        key = self.iceberg.PartitionKey(s, self.schema)
        key.partition(record)
        values = json.loads(parser.toJson(s.partitionType(), key))
        return key, [values.get(str(1000 + k)) for k in range(len(SPECS[spec]))]

    def residual(self, spec: str, filter_json: str, data: Any) -> str:
        evaluator = self.expressions.ResidualEvaluator.of(
            self.spec(spec), self.bound(filter_json), True
        )
        return str(self.expressions.ExpressionParser.toJson(evaluator.residualFor(data)))


@pytest.fixture(scope="module")
def iceberg(java: Any) -> Java:
    return Java(java)


def normal(expr_json: str, spec: str) -> Any:
    return json.loads(_native._bind_partition_filter_for_tests(expr_json, SCHEMA, spec_json(spec)))


def values_by_term(expr: Any, out: dict[str, list[Any]]) -> None:
    if isinstance(expr, dict):
        if "term" in expr and isinstance(expr["term"], str):
            found = out.setdefault(expr["term"], [])
            found += expr.get("values", [])
            if "value" in expr:
                found.append(expr["value"])
        for key in ("left", "right", "child"):
            if key in expr:
                values_by_term(expr[key], out)


def neighbours(value: Any) -> list[Any]:
    """The value and values next to it, where its JSON form says what it is."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [value]
    if isinstance(value, int):
        return [value - 1, value, value + 1]
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        return [value, value + "a", value[:-1]]
    return [(day + dt.timedelta(days=d)).isoformat() for d in (-1, 0, 1)]


def equivalent(a: Any, b: Any, spec: str) -> str | None:
    """None if the two partition filters agree on every tuple built from their values."""
    fields = [f"p{k}" for k in range(len(SPECS[spec]))]
    found: dict[str, list[Any]] = {}
    values_by_term(a, found)
    values_by_term(b, found)
    candidates = []
    for field in fields:
        options: list[Any] = [None]
        for v in found.get(field, []):
            options += [n for n in neighbours(v) if n not in options]
        candidates.append(options[:12])
    for tuple_values in itertools.islice(itertools.product(*candidates), 3000):
        text = json.dumps(list(tuple_values))
        try:
            left = _native._eval_partition_filter_for_tests(
                json.dumps(a), SCHEMA, spec_json(spec), text
            )
            right = _native._eval_partition_filter_for_tests(
                json.dumps(b), SCHEMA, spec_json(spec), text
            )
        except Exception:  # a neighbour outside its type (a string one too short for binary...)
            continue
        if left != right:
            return f"they differ on {text}: {left} vs {right}"
    return None


def java_mangles(spec: str, filter_json: str) -> bool:
    """Java 1.10.2's identity projection of IN / NOT IN on timestamp_ns rebuilds the set
    from plain longs, which binding reads as microseconds (see the test at the end)."""
    f = json.loads(filter_json)
    return spec == "identity" and f.get("term") == "ns" and f.get("type") in ("in", "not-in")


def orders_uuids(filter_json: str) -> bool:
    """Java 1.10.2 orders UUIDs as signed longs (see the test at the end)."""
    f = json.loads(filter_json)
    return f.get("term") == "u" and f.get("type") in ("lt", "lt-eq", "gt", "gt-eq")


@pytest.mark.parametrize("strict", [False, True], ids=["inclusive", "strict"])
@pytest.mark.parametrize("spec", list(SPECS))
def test_projections_match_java(iceberg: Java, spec: str, strict: bool) -> None:
    assert len(BATTERY) >= 40
    for filter_json in BATTERY:
        if java_mangles(spec, filter_json):
            continue
        ours = normal(
            _native._project_for_tests(filter_json, SCHEMA, spec_json(spec), strict), spec
        )
        try:
            theirs = normal(iceberg.project(spec, filter_json, strict), spec)
        except Exception as e:
            raise AssertionError(f"Java fails on {filter_json} on {spec}: {e}") from e
        if ours != theirs:
            problem = equivalent(ours, theirs, spec)
            assert problem is None, (
                f"{filter_json} on {spec}: frazil {ours}, Java {theirs}; {problem}"
            )


ROWS: list[dict[str, Any]] = [
    {
        "i": 15,
        "id": 34,
        "dec": "10.05",
        "s": "abcdef",
        "d": "1969-12-31",
        "ts": "1969-12-31T10:00:00",
        "tz": "2017-11-16T22:31:08+00:00",
        "ns": "1969-12-31T23:59:59.999999999",
        "b": "010203",
        "f": 1.5,
        "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        "req": 1,
    },
    {
        "i": -5,
        "id": 100,
        "dec": "-0.01",
        "s": "ab",
        "d": "2017-11-16",
        "ts": "2019-01-01T12:00:00",
        "tz": "1970-01-01T00:00:00+00:00",
        "ns": "2019-01-01T00:00:00",
        "b": "01",
        "f": 0.0,
        "u": "00000000-0000-0000-0000-000000000001",
        "req": 2,
    },
    {
        "i": 0,
        "id": -1,
        "dec": "10.50",
        "s": "aé",
        "d": "1970-01-01",
        "ts": "1969-01-01T00:00:00",
        "tz": "1969-12-31T23:00:00+00:00",
        "ns": "1970-01-01T00:00:00.000000001",
        "b": "ff",
        "f": -2.0,
        "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        "req": 3,
    },
]


@pytest.mark.parametrize("spec", list(SPECS))
def test_residuals_match_java(iceberg: Java, spec: str) -> None:
    for row in ROWS:
        data, tuple_json = iceberg.partition(spec, row)
        for filter_json in BATTERY:
            if java_mangles(spec, filter_json) or orders_uuids(filter_json):
                continue
            ours = _native._residual_for_tests(
                filter_json, SCHEMA, spec_json(spec), json.dumps(tuple_json)
            )
            theirs = iceberg.residual(spec, filter_json, data)
            ours_normal = _native._normalize_filter_for_tests(ours, SCHEMA)
            theirs_normal = _native._normalize_filter_for_tests(theirs, SCHEMA)
            assert json.loads(ours_normal) == json.loads(theirs_normal), (
                f"{filter_json} on {spec} for {tuple_json}: frazil {ours}, Java {theirs}"
            )


# --- where Java 1.10.2 is wrong ------------------------------------------------------


def prunes(expr_json: str, spec: str, tuple_values: list[Any]) -> bool:
    text = json.dumps(tuple_values, ensure_ascii=False)
    return not _native._eval_partition_filter_for_tests(expr_json, SCHEMA, spec_json(spec), text)


def test_truncate_width_counts_code_points(iceberg: Java) -> None:
    # "a😀" is 2 code points but 3 UTF-16 units. With truncate[3], Java takes it as
    # exactly W long and projects `= "a😀"`: the partition "a😀b" of the row "a😀bc",
    # which starts with "a😀", is pruned. The spec's width counts code points.
    filter_json = pred("starts-with", "s", "a😀")
    java = iceberg.project("truncate", filter_json, False)
    ours = _native._project_for_tests(filter_json, SCHEMA, spec_json("truncate"), False)
    partition = [None, None, None, "a😀b", None]
    assert prunes(java, "truncate", partition)
    assert not prunes(ours, "truncate", partition)
    # NOT STARTS WITH: Java projects `!= "a😀"` inclusively, frazil keeps the predicate;
    # both keep "a😀b" (it does not hold only "a😀"), and frazil prunes "a😀".
    filter_json = pred("not-starts-with", "s", "a😀")
    ours = _native._project_for_tests(filter_json, SCHEMA, spec_json("truncate"), False)
    assert not prunes(ours, "truncate", [None, None, None, "xyz", None])
    assert prunes(ours, "truncate", [None, None, None, "a😀", None])


def test_truncate_near_the_int_minimum_does_not_wrap(iceberg: Java) -> None:
    # truncate[10](-2147483648) is -2147483650, below the smallest int: Java wraps it
    # to 2147483646 and projects `i >= -2147483648` (every row) to `p0 >= 2147483646`,
    # pruning the partition 0 that holds the row 5. frazil cannot project it: true.
    filter_json = pred("gt-eq", "i", -(2**31))
    java = iceberg.project("truncate", filter_json, False)
    ours = _native._project_for_tests(filter_json, SCHEMA, spec_json("truncate"), False)
    assert prunes(java, "truncate", [0, None, None, None, None])
    assert json.loads(ours) is True


def test_null_partition_values_are_not_below_every_value(iceberg: Java) -> None:
    # Java's residual evaluator orders nulls first: on a null identity partition,
    # `i < 5` is decided true and the null rows are returned. No row of the
    # partition matches (null < 5 is not true): frazil's residual is false.
    data = iceberg.iceberg.PartitionData(iceberg.spec("identity").partitionType())
    filter_json = pred("lt", "i", 5)
    assert json.loads(iceberg.residual("identity", filter_json, data)) is True
    tuple_json = json.dumps([None] * len(SPECS["identity"]))
    assert (
        json.loads(
            _native._residual_for_tests(filter_json, SCHEMA, spec_json("identity"), tuple_json)
        )
        is False
    )
    # NOT NaN of null is true for both.
    filter_json = pred("not-nan", "f")
    assert json.loads(iceberg.residual("identity", filter_json, data)) is True
    assert (
        json.loads(
            _native._residual_for_tests(filter_json, SCHEMA, spec_json("identity"), tuple_json)
        )
        is True
    )


def test_identity_projection_of_timestamp_ns_sets(iceberg: Java) -> None:
    # Java rebuilds the set of an identity projection from the values alone; a long
    # bound to timestamp_ns is taken as microseconds, so 2019-01-01 in nanoseconds
    # overflows. frazil keeps the set as it is.
    filter_json = pred("in", "ns", values=["1970-01-01T00:00:00.000000001", "2019-01-01T00:00:00"])
    with pytest.raises(Exception, match="long overflow"):
        iceberg.project("identity", filter_json, False)
    ours = json.loads(_native._project_for_tests(filter_json, SCHEMA, spec_json("identity"), False))
    assert ours == {
        "type": "in",
        "term": "p7",
        "values": ["1970-01-01T00:00:00.000000001", "2019-01-01T00:00:00"],
    }


def test_uuids_order_as_unsigned_bytes(iceberg: Java) -> None:
    # The spec orders UUIDs by their bytes, unsigned; Java 1.10.2 compares the two
    # longs signed, so f79c3e09-... sorts below 00000000-...-0001 and its residual
    # of `u < 00000000-...-0001` on that identity partition is true, returning rows
    # that do not match. frazil's residual is false.
    row = ROWS[0]
    data, tuple_json = iceberg.partition("identity", row)
    filter_json = pred("lt", "u", "00000000-0000-0000-0000-000000000001")
    assert json.loads(iceberg.residual("identity", filter_json, data)) is True
    ours = _native._residual_for_tests(
        filter_json, SCHEMA, spec_json("identity"), json.dumps(tuple_json)
    )
    assert json.loads(ours) is False
