"""How deep a schema's types may nest: the Rust core's MAX_NESTING_DEPTH (src/spec/types.rs), the
deepest pyarrow can receive (Arrow's C data interface imports 64 levels, a map takes two). Every
depth up to the limit is created, written, scanned and read back from its metadata; one level
more is refused where the schema is built or read, naming the field, the limit and, for a
metadata file, the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import _native
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import InvalidMetadataError, InvalidSchemaError, ValidationError
from frazil.schema import Schema
from frazil.table import StaticTable
from frazil.types import MAX_NESTING_DEPTH, LongType, NestedField, StructType

LIMIT = MAX_NESTING_DEPTH
KINDS = ["struct", "list", "map", "mixed"]


def _kind(kind: str, level: int) -> str:
    return kind if kind != "mixed" else ("struct", "list", "map")[level % 3]


def _arrow_type(kind: str, depth: int) -> pa.DataType:
    """A long inside ``depth`` nested Arrow types of ``kind``, innermost first."""
    t: pa.DataType = pa.int64()
    for level in range(depth):
        k = _kind(kind, level)
        if k == "struct":
            t = pa.struct([pa.field(f"f{level}", t)])
        elif k == "list":
            t = pa.list_(t)
        else:
            t = pa.map_(pa.string(), t)
    return t


def _value(kind: str, depth: int) -> Any:
    v: Any = 7
    for level in range(depth):
        k = _kind(kind, level)
        v = {f"f{level}": v} if k == "struct" else [v] if k == "list" else [("k", v)]
    return v


def _arrow_schema(kind: str, depth: int) -> pa.Schema:
    return pa.schema([pa.field("id", pa.int64()), pa.field("s", _arrow_type(kind, depth))])


def _schema_json(kind: str, depth: int) -> dict[str, Any]:
    """The Appendix C JSON of a schema whose field ``s`` nests ``depth`` types of ``kind``."""
    t: Any = "long"
    for level in range(depth):
        a, b = 1000 + 2 * level, 1001 + 2 * level
        k = _kind(kind, level)
        if k == "struct":
            t = {"type": "struct", "fields": [_field(a, f"f{level}", t)]}
        elif k == "list":
            t = {"type": "list", "element-id": a, "element-required": False, "element": t}
        else:
            t = {
                "type": "map",
                "key-id": a,
                "key": "string",
                "value-id": b,
                "value-required": False,
                "value": t,
            }
    return {"type": "struct", "schema-id": 0, "fields": [_field(1, "s", t)]}


def _field(field_id: int, name: str, field_type: Any) -> dict[str, Any]:
    return {"id": field_id, "name": name, "required": False, "type": field_type}


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def test_the_limit_is_the_rust_cores() -> None:
    assert LIMIT == _native.MAX_NESTING_DEPTH == 31


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT])
def test_every_depth_up_to_the_limit_is_created_written_and_scanned(
    catalog: InMemoryCatalog, kind: str, depth: int
) -> None:
    schema = _arrow_schema(kind, depth)
    table = catalog.create_table("db.t", schema)
    rows = pa.table({"id": [1, 2], "s": [_value(kind, depth), None]}, schema=schema)
    table.append(rows)
    # Read back through the metadata file, the scan's Arrow schema and its filter.
    loaded = catalog.load_table("db.t")
    scanned = loaded.scan(row_filter="id = 1").to_arrow()
    assert scanned.column("s").to_pylist() == [_value(kind, depth)]
    assert loaded.scan().count() == 2
    assert loaded.scan(selected_fields=("s",)).to_arrow().column("s").type == _arrow_type(
        kind, depth
    )


@pytest.mark.parametrize("kind", KINDS)
def test_one_level_more_is_refused_when_the_table_is_created(
    catalog: InMemoryCatalog, kind: str
) -> None:
    with pytest.raises(InvalidSchemaError) as raised:
        catalog.create_table("db.t", _arrow_schema(kind, LIMIT + 1))
    message = str(raised.value)
    assert f"nested more than {LIMIT} levels deep" in message
    assert f"at most {LIMIT}" in message and "pyarrow" in message
    assert "field 's." in message
    assert not catalog.table_exists("db.t")


def test_one_level_more_is_refused_by_a_schema_update(catalog: InMemoryCatalog) -> None:
    table = catalog.create_table("db.t", _arrow_schema("struct", LIMIT))
    location = table.metadata_location
    deepest = ".".join(["s", *(f"f{level}" for level in reversed(range(1, LIMIT)))])
    with pytest.raises(InvalidSchemaError, match=f"at most {LIMIT}"):
        with table.update_schema() as update:
            update.add_column((*deepest.split("."), "more"), StructType())
    assert catalog.load_table("db.t").metadata_location == location
    # A column beside the deepest one (not deeper) is fine.
    with table.update_schema() as update:
        update.add_column((*deepest.split("."), "beside"), LongType())


def _metadata_with_schema(
    catalog: InMemoryCatalog, tmp_path: Path, schema: Any, name: str = "v9"
) -> Path:
    """A metadata file of a table whose only schema is ``schema`` (JSON)."""
    if not catalog.table_exists("db.t"):
        catalog.create_table("db.t", _arrow_schema("struct", 1))
    location = catalog.load_table("db.t").metadata_location
    metadata = json.loads(Path(location.removeprefix("file://")).read_text())
    metadata["schemas"] = ["SCHEMA"]
    metadata["last-column-id"] = 100_000
    path = tmp_path / f"{name}.metadata.json"
    text = schema if isinstance(schema, str) else json.dumps(schema)
    path.write_text(json.dumps(metadata).replace('"SCHEMA"', text))
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_a_metadata_file_one_level_too_deep_is_refused_naming_it(
    catalog: InMemoryCatalog, tmp_path: Path, kind: str
) -> None:
    path = _metadata_with_schema(catalog, tmp_path, _schema_json(kind, LIMIT + 1))
    with pytest.raises(InvalidSchemaError) as raised:
        StaticTable.from_metadata(str(path))
    message = str(raised.value)
    assert message.startswith(str(path)) and f"at most {LIMIT}" in message
    # At the limit the same file reads, and its scan's Arrow schema is made.
    path = _metadata_with_schema(catalog, tmp_path, _schema_json(kind, LIMIT), "v10")
    assert StaticTable.from_metadata(str(path)).scan().to_arrow().num_rows == 0


@pytest.mark.parametrize("levels", [300, 3000])
def test_a_metadata_file_thousands_deep_is_refused_naming_it(
    catalog: InMemoryCatalog, tmp_path: Path, levels: int
) -> None:
    # Text, as json.dumps cannot write what the reader must refuse.
    field = '{"id": %d, "name": "f", "required": false, "type": '
    opened = "".join(field % (10 + i) + '{"type": "struct", "fields": [' for i in range(levels))
    schema = (
        '{"type": "struct", "schema-id": 0, "fields": ['
        + opened
        + field % 9
        + '"long"}'
        + "]}}" * levels
        + "]}"
    )
    path = _metadata_with_schema(catalog, tmp_path, schema)
    with pytest.raises(InvalidMetadataError) as raised:
        StaticTable.from_metadata(str(path))
    assert str(raised.value).startswith(str(path))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT, LIMIT + 1])
def test_python_and_rust_refuse_the_same_depths(kind: str, depth: int) -> None:
    text = json.dumps(_schema_json(kind, depth))
    python_ok = rust_ok = True
    try:
        Schema.from_json(json.loads(text))
    except InvalidSchemaError:
        python_ok = False
    try:
        _native.canonical_schema_json(text)
    except ValidationError as error:
        assert f"at most {LIMIT}" in str(error)
        rust_ok = False
    assert python_ok == rust_ok == (depth <= LIMIT)


def test_a_schema_built_in_python_is_held_to_the_limit() -> None:
    t: Any = LongType()
    for level in range(LIMIT + 1):
        t = StructType((NestedField(1000 + level, f"f{level}", t, required=False),))
    with pytest.raises(InvalidSchemaError, match=f"field 's.f{LIMIT}.*' is nested more"):
        Schema(NestedField(1, "s", t, required=False))
