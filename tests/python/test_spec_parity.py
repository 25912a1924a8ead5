"""The Python model and frazil's Rust core read the spec's rules the same way.

The Rust core owns the type system (v1 to v3), transform result types, partition
types and partition field ids (see /work/shared/notes/architecture.md, rule 1); the
Python model asks it. These tests hold the two to one answer: for generated type
strings, type JSON and schemas, the Python model's reading (and its own constructors)
agree with Rust's, and both refuse the same malformed input; the partition type of
every transform over every source type agrees with the rules written out here.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from frazil import _native, types
from frazil import manifest as m
from frazil.errors import (
    FrazilError,
    InvalidMetadataError,
    UnknownTypeError,
    UnsupportedTransformError,
)
from frazil.partitioning import PartitionField, PartitionSpec, transform_result_type
from frazil.schema import Schema
from hypothesis import given, settings
from hypothesis import strategies as st

PRIMITIVES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "binary",
    "unknown",
]


def _rust_type(text: str) -> Any:
    """Rust's reading of a type string (or type JSON text): canonical JSON, or the
    FrazilError class it refuses with."""
    try:
        return json.loads(_native.canonical_type_json(text))
    except FrazilError as error:
        return type(error)


def _python_type(text: str) -> Any:
    try:
        return types.type_to_json(types.parse_type(text))
    except FrazilError as error:
        return type(error)


# --- type strings ---------------------------------------------------------------------


def _cased(word: str) -> st.SearchStrategy[str]:
    return st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
    )


SPACE = st.sampled_from(["", " ", "  ", "\t"])
NUMBER = st.one_of(
    st.integers(-2, 45).map(str),
    st.integers(0, 2**70).map(str),
    st.sampled_from(["+3", "03", "x", "", "1.5", "-0"]),
)
CRS = st.sampled_from(["", "OGC:CRS84", "EPSG:4326", "srid:3857", "projjson:x"])
ALGORITHM = st.sampled_from(["", "spherical", "Karney", "VINCENTY", "thomas", "andoyer", "flat"])


@st.composite
def type_strings(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["simple", "decimal", "fixed", "geometry", "geography", "junk"]))
    pad = draw(SPACE), draw(SPACE), draw(SPACE), draw(SPACE)
    if kind == "simple":
        body = draw(st.sampled_from([*PRIMITIVES, "variant", "integer", "list"]).flatmap(_cased))
    elif kind == "decimal":
        body = (
            f"{draw(_cased('decimal'))}({pad[2]}{draw(NUMBER)}{pad[3]},{pad[1]}"
            f"{draw(NUMBER)}{pad[2]})"
        )
    elif kind == "fixed":
        body = f"{draw(_cased('fixed'))}[{pad[2]}{draw(NUMBER)}{pad[3]}]"
    elif kind == "geometry":
        body = draw(_cased("geometry")) + draw(
            st.sampled_from(["", "()", "({})"]).map(lambda f: f.replace("{}", draw(CRS)))
        )
    elif kind == "geography":
        inner = draw(CRS) + draw(st.sampled_from(["", ","])) + draw(SPACE) + draw(ALGORITHM)
        body = draw(_cased("geography")) + draw(st.sampled_from(["", f"({inner})"]))
    else:
        body = draw(st.text(max_size=12))
    return f"{pad[0]}{body}{pad[1]}"


@settings(max_examples=400, deadline=None)
@given(type_strings())
def test_type_strings_read_the_same(text: str) -> None:
    rust = _rust_type(json.dumps(text))
    python = _python_type(text)
    assert python == rust
    if isinstance(python, str):
        parsed = types.parse_type(text)
        # The canonical string reads back as the same type, and prints as Java does.
        assert types.parse_type(str(parsed)) == parsed
        assert str(parsed) == python


@settings(max_examples=200, deadline=None)
@given(st.integers(-3, 45), st.integers(-3, 45))
def test_decimal_constructor_agrees_with_rust(precision: int, scale: int) -> None:
    rust_ok = isinstance(_rust_type(json.dumps(f"decimal({precision}, {scale})")), str)
    try:
        made = types.DecimalType(precision, scale)
    except UnknownTypeError:
        assert not rust_ok
    else:
        assert rust_ok and str(made) == f"decimal({precision}, {scale})"


@pytest.mark.parametrize("algorithm", ["spherical", "karney", "Karney", "flat", ""])
def test_geography_constructor_agrees_with_rust(algorithm: str) -> None:
    rust = _rust_type(json.dumps(f"geography(EPSG:4326, {algorithm})"))
    try:
        made: Any = types.GeographyType("EPSG:4326", algorithm)
    except UnknownTypeError:
        made = UnknownTypeError
    if algorithm == "Karney":
        # Rust (and Java) lower-case a parsed algorithm; the model takes canonical ones.
        assert rust == "geography(EPSG:4326, karney)" and made is UnknownTypeError
    elif algorithm in ("flat", ""):
        assert made is UnknownTypeError
    else:
        assert str(made) == rust


# --- nested type JSON and schemas ------------------------------------------------------


@st.composite
def type_json(draw: st.DrawFn, depth: int = 0) -> Any:
    ids = st.integers(-5, 2**31 - 1)
    leaf = st.sampled_from(
        [*PRIMITIVES, "decimal(9, 2)", "fixed[3]", "variant", "geometry(OGC:CRS84)"]
    )
    kind = draw(
        st.sampled_from(["leaf", "leaf", "struct", "list", "map"] if depth < 3 else ["leaf"])
    )
    if kind == "leaf":
        return draw(leaf)
    if kind == "struct":
        fields = []
        for _ in range(draw(st.integers(0, 3))):
            field: dict[str, Any] = {
                "id": draw(ids),
                "name": draw(st.text(min_size=1, max_size=5)),
                "required": draw(st.booleans()),
                "type": draw(type_json(depth + 1)),
            }
            if draw(st.booleans()):
                field["doc"] = draw(st.text(max_size=5))
            fields.append(field)
        return {"type": "struct", "fields": fields}
    if kind == "list":
        return {
            "type": "list",
            "element-id": draw(ids),
            "element-required": draw(st.booleans()),
            "element": draw(type_json(depth + 1)),
        }
    return {
        "type": "map",
        "key-id": draw(ids),
        "key": draw(leaf),
        "value-id": draw(ids),
        "value-required": draw(st.booleans()),
        "value": draw(type_json(depth + 1)),
    }


def _python_type_json(node: Any) -> Any:
    try:
        return types.type_to_json(types.type_from_json(node))
    except FrazilError as error:
        return type(error)


def _refused(result: Any) -> bool:
    return isinstance(result, type) and issubclass(result, FrazilError)


@settings(max_examples=300, deadline=None)
@given(type_json())
def test_type_json_reads_the_same(node: Any) -> None:
    assert _python_type_json(node) == _rust_type(json.dumps(node))


BREAKS = [
    ("id", None),
    ("id", "1"),
    ("id", True),
    ("id", 1.5),
    ("id", 2**31),
    ("name", None),
    ("name", 3),
    ("required", None),
    ("required", 1),
    ("type", None),
    ("type", "integer"),
    ("type", {"type": "tuple"}),
]


@settings(max_examples=200, deadline=None)
@given(type_json(), st.sampled_from(BREAKS), st.integers(0, 50))
def test_both_refuse_broken_struct_fields(node: Any, change: tuple[str, Any], pick: int) -> None:
    fields = _struct_fields(node)
    if not fields:
        return
    field = fields[pick % len(fields)]
    key, value = change
    if value is None:
        del field[key]
    else:
        field[key] = value
    rust = _rust_type(json.dumps({"type": "struct", "fields": [field]}))
    python = _python_type_json({"type": "struct", "fields": [field]})
    assert _refused(rust) and _refused(python), (field, rust, python)


def _struct_fields(node: Any) -> list[dict[str, Any]]:
    if not isinstance(node, dict):
        return []
    found = list(node.get("fields", []))
    for child in [*found, node]:
        for key in ("type", "element", "value"):
            inner = child.get(key) if isinstance(child, dict) else None
            if isinstance(inner, dict) and inner is not node:
                found += _struct_fields(inner)
    return found


@settings(max_examples=200, deadline=None)
@given(type_json(), st.integers(0, 2**31 - 1), st.lists(st.integers(1, 40), max_size=2))
def test_schemas_read_the_same(node: Any, schema_id: int, identifiers: list[int]) -> None:
    body = (
        {"type": "struct", "fields": node["fields"]}
        if isinstance(node, dict) and "fields" in node
        else {"type": "struct", "fields": []}
    )
    schema = {**body, "schema-id": schema_id}
    if identifiers:
        schema["identifier-field-ids"] = identifiers
    try:
        python: Any = Schema.from_json(schema).to_json()
    except FrazilError:
        return  # Python checks more (identifier fields, v3 types, defaults)
    rust = json.loads(_native.canonical_schema_json(json.dumps(schema)))
    python.setdefault("identifier-field-ids", [])
    rust.setdefault("identifier-field-ids", [])
    assert python == rust


# --- transform result types and partition types -----------------------------------------

TRANSFORMS = ["identity", "bucket[4]", "truncate[3]", "year", "month", "day", "hour", "void"]
SOURCES = [*PRIMITIVES, "decimal(9, 2)", "fixed[3]", "geometry(OGC:CRS84)", "variant"]
TIMESTAMPS = {"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"}


def expected_result(transform: str, source: str) -> str | None:
    """The spec's table ("Partition Transforms"), as Java types it: `day` gives `date`,
    `void` over a non-primitive gives `unknown`; None where the transform does not apply."""
    if source in ("variant", "geometry(OGC:CRS84)"):
        return "unknown" if transform == "void" else None
    if transform in ("identity", "void"):
        return source
    if transform.startswith("bucket"):
        return None if source in ("boolean", "float", "double", "unknown") else "int"
    if transform.startswith("truncate"):
        ok = source in ("int", "long", "string", "binary") or source.startswith("decimal")
        return source if ok else None
    if transform == "hour":
        return "int" if source in TIMESTAMPS else None
    if source not in TIMESTAMPS | {"date"}:
        return None
    return "date" if transform == "day" else "int"


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_transform_result_types(transform: str, source: str) -> None:
    expected = expected_result(transform, source)
    schema = Schema(types.optional(1, "c", types.parse_type(source)))
    spec = PartitionSpec(0, (PartitionField(1, 1000, transform, "p"),))
    if expected is None:
        with pytest.raises(UnsupportedTransformError):
            transform_result_type(transform, types.parse_type(source))
        with pytest.raises(UnsupportedTransformError):
            spec.partition_type(schema)
        with pytest.raises(FrazilError):
            m.manifest_entry_schema(spec.to_json(), schema.to_json())
        return
    assert str(transform_result_type(transform, types.parse_type(source))) == expected
    (field,) = spec.partition_type(schema).fields
    assert (field.field_id, field.name, str(field.field_type), field.required) == (
        1000,
        "p",
        expected,
        False,
    )
    # The manifest reader types the partition column by the same rule.
    arrow = m.manifest_entry_schema(spec.to_json(), schema.to_json())
    partition = arrow.field("data_file").type.field("partition").type
    assert partition.names == ["p"]
    if expected == "date":
        assert partition.field("p").type == pa.date32()


def test_partition_type_of_dropped_and_nested_sources() -> None:
    schema = Schema(
        types.required(1, "id", types.LongType()),
        types.optional(
            2, "s", types.StructType((types.optional(3, "ts", types.TimestampNanoType()),))
        ),
    )
    spec = PartitionSpec(
        0,
        (
            PartitionField(3, 1000, "day", "ts_day"),
            PartitionField(3, 1001, "bucket[8]", "ts_bucket"),
            PartitionField(9, 1002, "bucket[8]", "gone"),
            PartitionField(1, 1003, "truncate[10]", "id_t"),
        ),
    )
    assert [str(f.field_type) for f in spec.partition_type(schema).fields] == [
        "date",
        "int",
        "unknown",
        "long",
    ]


# --- partition field ids ---------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=5))
def test_partition_field_ids_all_or_none(with_id: list[bool]) -> None:
    fields = [
        {
            "name": f"p{i}",
            "transform": "identity",
            "source-id": 1,
            **({"field-id": 2000 + i} if has else {}),
        }
        for i, has in enumerate(with_id)
    ]
    schema = Schema(types.required(1, "id", types.LongType()))
    try:
        python: Any = [f.field_id for f in PartitionSpec.from_json_fields(fields, 0).fields]
    except InvalidMetadataError:
        python = InvalidMetadataError
    try:
        struct = json.loads(
            _native.partition_type(json.dumps(fields), json.dumps(schema.to_json()))
        )
        rust: Any = [f["id"] for f in struct["fields"]]
    except FrazilError:
        rust = InvalidMetadataError
    assert python == rust
    if all(with_id):
        assert python == [2000 + i for i in range(len(fields))]
    elif not any(with_id):
        # Old v1 writers wrote no ids: both number the fields from 1000 (Appendix C).
        assert python == [1000 + i for i in range(len(fields))]
    else:
        assert python is InvalidMetadataError
