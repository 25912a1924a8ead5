"""Arrow data from Python reaches every Rust binding intact, or as a FrazilError, never as a
Rust panic (src/py/arrow_in.rs).

pyarrow slices a struct by its own offset and leaves its children whole; arrow-rs 59 applied
that offset twice to a struct child (apache/arrow-rs#7595) and panicked inside the argument
import. The shapes below panicked before the import pushed offsets down itself: a sliced
struct-of-struct column (a sliced manifest's ``data_file.partition``), a sliced fixed-size
list of structs, a sliced sparse union with a struct member.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import _native
from frazil import manifest as m
from frazil.errors import FrazilError, InvalidDataError
from frazil.table.write._partition import gather_rows
from hypothesis import given, settings
from hypothesis import strategies as st

NESTED = pa.array([{"a": {"b": i, "c": str(i)}} for i in range(6)])


def _copy(table: pa.Table) -> pa.Table:
    """``table`` rebuilt from Python values: every array at offset 0."""
    return pa.Table.from_pylist(table.to_pylist(), schema=table.schema)


def _panicking_shapes() -> dict[str, pa.Array]:
    return {
        "struct<struct>": NESTED,
        "fixed_size_list<struct<struct>>": pa.FixedSizeListArray.from_arrays(NESTED, 2),
        "sparse_union<struct<struct>>": pa.UnionArray.from_sparse(
            pa.array([0, 1, 0, 1, 0, 1], pa.int8()), [NESTED, pa.array(range(6))]
        ),
        "struct<struct<struct>> with nulls": pa.array(
            [None, {"a": {"b": {"c": 1}}}, {"a": None}, {"a": {"b": None}}, {"a": {"b": {"c": 5}}}]
        ),
    }


@pytest.mark.parametrize("name", sorted(_panicking_shapes()))
def test_gather_rows_of_sliced_nested_columns(name: str) -> None:
    column = _panicking_shapes()[name]
    table = pa.table({"id": pa.array(range(len(column))), "c": column}).slice(1, 2)
    indices = pa.array([1, 0, 1], pa.int64())
    # The bare binding: the Python wrapper used to copy such columns first.
    assert _native.gather_rows(table, indices).to_pylist() == table.take(indices).to_pylist()


def _manifest(tmp_path: Path) -> tuple[pa.Table, dict[str, Any], dict[str, Any]]:
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
    }
    spec = {
        "spec-id": 0,
        "fields": [{"name": "id", "transform": "identity", "source-id": 1, "field-id": 1000}],
    }
    entries = [
        {
            "status": 1,
            "snapshot_id": 3,
            "data_file": {
                "content": 0,
                "file_path": f"f{i}.parquet",
                "file_format": "PARQUET",
                "partition": {"id": i},
                "record_count": 1,
                "file_size_in_bytes": 10,
            },
        }
        for i in range(4)
    ]
    path = tmp_path / "whole.avro"
    m.write_manifest(path, entries, schema=schema, spec=spec, format_version=2, snapshot_id=3)
    return m.read_manifest(path), schema, spec


def test_manifest_bindings_take_sliced_entries(tmp_path: Path) -> None:
    whole, schema, spec = _manifest(tmp_path)
    sliced = whole.slice(1, 2)  # data_file (a struct) at offset 1 over data_file.partition
    assert sliced.column("data_file").chunk(0).offset == 1
    schema_json, spec_json = json.dumps(schema), json.dumps(spec)

    path = tmp_path / "sliced.avro"
    data, row = _native.write_manifest(str(path), sliced, schema_json, spec_json, 0, 2, False, 3)
    path.write_bytes(data)
    assert m.read_manifest(path).to_pylist() == sliced.to_pylist()
    assert row.column("added_files_count").to_pylist() == [2]

    flt = json.dumps({"type": "eq", "term": "id", "value": 2})
    assert _native.match_files(sliced, flt, schema_json, spec_json) == _native.match_files(
        _copy(sliced), flt, schema_json, spec_json
    )
    might, _ = _native.match_files(sliced, flt, schema_json, spec_json)
    assert might == [False, True]

    rows = pa.concat_tables([row, row, row]).slice(1)
    listed, _ = _native.write_manifest_list(rows, 2, 3, None, 1)
    list_path = tmp_path / "list.avro"
    list_path.write_bytes(listed)
    assert len(m.read_manifest_list(list_path)) == 2


def test_delete_bindings_take_sliced_batches() -> None:
    batch = pa.record_batch({"id": pa.array(range(6), pa.int64()), "c": NESTED}).slice(1, 4)

    positions = _native.PositionDeleteIndex("f")
    positions.add_position_file(
        _native.PositionDeletesByFile(pa.array(["f", "f"]), pa.array([2, 4], pa.int64()))
    )
    kept = positions.apply(batch, 1)
    assert kept.to_pylist() == [batch.to_pylist()[i] for i in (0, 2)]

    deletes = _native.EqualityDeleteSet(pa.schema([("id", pa.int64())]))
    deletes.add(pa.record_batch({"id": pa.array([0, 2, 3], pa.int64())}).slice(1))
    kept = deletes.apply(batch, ["id"])
    assert kept.to_pylist() == [r for r in batch.to_pylist() if r["id"] not in (2, 3)]
    mask = deletes.deleted_mask(batch.select(["id"]))
    assert mask.to_pylist() == [False, True, True, False]
    # Keys that cannot be keys (a nested struct) are refused with a FrazilError.
    with pytest.raises(FrazilError):
        deletes.deleted_mask(batch.select(["c"]))


# A panic inside arrow-rs while importing is still an InvalidDataError naming the argument.
# The C data below claims 5 rows over a 2-row child, which pyarrow refuses to build; arrow-rs
# asserts (a panic, before any read past the child) when it slices the child to 5 rows.


class _ArrowArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class _LyingBatch:
    """A record batch whose exported C array claims more rows than its column has."""

    def __init__(self, batch: pa.RecordBatch, length: int) -> None:
        self.batch, self.length = batch, length

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        schema_capsule, array_capsule = self.batch.__arrow_c_array__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        array = _ArrowArray.from_address(get(array_capsule, b"arrow_array"))
        array.length = self.length
        return schema_capsule, array_capsule


def test_a_panicking_import_is_an_invalid_data_error() -> None:
    inner = pa.record_batch({"s": pa.array([{"a": 1}, {"a": 2}])})
    deletes = _native.EqualityDeleteSet(pa.schema([("x", pa.int64())]))
    with pytest.raises(InvalidDataError) as raised:
        deletes.apply(_LyingBatch(inner, 5), ["x"])
    assert "could not import the Arrow data" in str(raised.value)
    assert "arrow-rs panicked" in str(raised.value)
    assert any("'batch'" in note for note in getattr(raised.value, "__notes__", []))


def test_deletion_vector_positions_are_imported_through_the_guard(tmp_path: Path) -> None:
    # Positions given as Arrow data take the guarded import too: a panicking import is an
    # InvalidDataError, a sliced nested array a FrazilError, never a PanicException.
    lying = _LyingBatch(pa.array([{"a": 1}, {"a": 2}]), 5)
    with pytest.raises(InvalidDataError, match="arrow-rs panicked"):
        _native.encode_deletion_vector(lying)
    with pytest.raises(InvalidDataError, match="arrow-rs panicked"):
        _native.write_deletion_vector_puffin(str(tmp_path / "dv.puffin"), [("f", lying)])
    assert not (tmp_path / "dv.puffin").exists()
    with pytest.raises(FrazilError, match="int64"):
        _native.encode_deletion_vector(NESTED.slice(1, 4))
    # Sliced int64 positions, chunked or not, and plain ints all give the same vector.
    positions = pa.array([7, 1, 2, 5], pa.int64()).slice(1, 3)
    expected = _native.encode_deletion_vector([1, 2, 5])
    assert _native.encode_deletion_vector(positions) == expected
    assert _native.encode_deletion_vector(pa.chunked_array([positions[:1], positions[1:]])) == (
        expected
    )


def test_non_arrow_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        _native.gather_rows([1, 2], pa.array([0], pa.int64()))
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        _native.EqualityDeleteSet(pa.schema([("x", pa.int64())])).add(object())


# Random nested types, sliced at random: the gather equals pyarrow's take.

_leaf = st.sampled_from([pa.int32(), pa.string(), pa.bool_()])


def _nest(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: pa.struct([(f"f{i}", t) for i, t in enumerate(ts)])
        ),
        children.map(pa.list_),
        children.map(lambda t: pa.list_(t, 2)),
        children.map(lambda t: pa.map_(pa.int32(), t)),
    )


_types = st.recursive(_leaf, _nest, max_leaves=6)


def _value(t: pa.DataType, draw: Any, nullable: bool = True) -> Any:
    if nullable and draw(st.integers(0, 5)) == 0:
        return None
    if pa.types.is_struct(t):
        return {f.name: _value(f.type, draw) for f in t}
    if pa.types.is_fixed_size_list(t):
        return [_value(t.value_type, draw) for _ in range(t.list_size)]
    if pa.types.is_list(t):
        return [_value(t.value_type, draw) for _ in range(draw(st.integers(0, 2)))]
    if pa.types.is_map(t):
        keys = draw(st.lists(st.integers(0, 9), max_size=2, unique=True))
        return [(k, _value(t.item_type, draw)) for k in keys]
    if pa.types.is_integer(t):
        return draw(st.integers(-5, 5))
    if pa.types.is_string(t):
        return draw(st.text(max_size=3))
    return draw(st.booleans())


@st.composite
def _sliced_tables(draw: Any) -> pa.Table:
    types = draw(st.lists(_types, min_size=1, max_size=3))
    n = draw(st.integers(1, 12))
    columns = {
        f"c{i}": pa.array([_value(t, draw) for _ in range(n)], t) for i, t in enumerate(types)
    }
    table = pa.table(columns)
    # Several chunks, each sliced: offsets at every level pyarrow slices.
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=2)))
    chunks = [table.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    table = pa.concat_tables(chunks)
    offset = draw(st.integers(0, n - 1))
    return table.slice(offset, draw(st.integers(0, n - offset)))


@settings(max_examples=100, deadline=None)
@given(table=_sliced_tables(), data=st.data())
def test_gather_rows_of_sliced_nested_tables_equals_take(table: pa.Table, data: Any) -> None:
    indices = pa.array(
        data.draw(st.lists(st.integers(0, max(table.num_rows - 1, 0)), max_size=8))
        if table.num_rows
        else [],
        pa.int64(),
    )
    gathered = gather_rows(table, indices)
    expected = table.take(indices)
    assert gathered.schema == expected.schema
    assert gathered.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("chunked", [False, True])
def test_array_bindings_take_sliced_nested_arrays(chunked: bool) -> None:
    # Arrays and streams of arrays (pyo3-arrow's AnyArray) go through the same import: a
    # sliced struct-of-struct is read correctly, and refused by a FrazilError where the
    # binding wants another type.
    sliced = NESTED.slice(1, 4)
    values: Any = pa.chunked_array([sliced, sliced]) if chunked else sliced
    assert _native.distinct_count(values) is None  # not a countable type, not a panic
    with pytest.raises(FrazilError):
        _native.gather_rows(pa.table({"x": range(8)}), values)
    with pytest.raises(FrazilError):
        _native.bytes_min_max(values)
    identity = _native.apply_transform(_native.Transform("identity"), values)
    assert identity.to_pylist() == values.to_pylist()
    with pytest.raises(FrazilError):
        _native.apply_transform(_native.Transform("bucket[4]"), values)
    with pytest.raises(FrazilError):
        _native.PositionDeletesByFile(values, values)
    strings = pa.array(["x", "f", "f", "g", "f"]).slice(1, 4)
    positions = pa.array([9, 1, 2, 3, 4], pa.int64()).slice(1, 4)
    index = _native.PositionDeleteIndex("f")
    index.add_position_file(
        _native.PositionDeletesByFile(
            pa.chunked_array([strings]) if chunked else strings, positions
        )
    )
    assert sorted(index.positions().to_pylist()) == [1, 2, 4]
