"""The Arrow a scan hands out (issue 22), as pyiceberg 0.12 hands it out:

- nullability: a field, list element or map value is nullable exactly when it is optional,
  in ``to_arrow``, ``to_batches``, ``to_arrow_batch_reader``, ``read_task`` and empty scans;
  a data file that holds a null where the schema requires a value is refused, naming it;
- uuid: ``pa.uuid()`` (pyarrow's canonical extension type), also nested, in partition values
  (``_partition``, inspect tables) and metric bounds; the option or table property
  ``read.arrow.uuid-type = fixed_size_binary`` keeps ``fixed_size_binary(16)``; DuckDB, polars
  and pandas take either;
- pyiceberg's names: ``Table.name()``, ``DataScan.to_arrow_batch_reader()``, ``update()``,
  ``Table.scan``'s parameters in pyiceberg's order, ``to_pandas()`` without pandas.
"""

from __future__ import annotations

import inspect
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import Schema, read_task
from frazil import types as t
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import FrazilError, InvalidDataError, ValidationError
from frazil.table.read import read_task_schema, scan_arrow_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_helpers import DataTable, file_schema
from scan_helpers import data_file

U1, U2 = uuid.UUID(int=1), uuid.UUID(int=2**128 - 1)
FIXED = {"read.arrow.uuid-type": "fixed_size_binary"}

NESTED = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "u", t.UUIDType()),
    t.required(
        3,
        "s",
        t.StructType((t.required(4, "a", t.UUIDType()), t.optional(5, "b", t.StringType()))),
    ),
    t.optional(
        6,
        "o",
        t.StructType((t.required(7, "r", t.IntegerType()), t.optional(8, "x", t.LongType()))),
    ),
    t.required(9, "l", t.ListType(10, t.UUIDType(), element_required=True)),
    t.optional(11, "lo", t.ListType(12, t.LongType(), element_required=False)),
    t.optional(13, "m", t.MapType(14, t.StringType(), 15, t.UUIDType(), value_required=True)),
    t.optional(16, "mo", t.MapType(17, t.StringType(), 18, t.LongType(), value_required=False)),
)
ROWS: dict[str, list[Any]] = {
    "id": [1, 2, 3],
    "u": [U1.bytes, None, U2.bytes],
    "s": [{"a": U1.bytes, "b": "x"}, {"a": U2.bytes, "b": None}, {"a": U1.bytes, "b": "z"}],
    "o": [{"r": 1, "x": None}, None, {"r": 3, "x": 4}],
    "l": [[U1.bytes], [], [U2.bytes, U1.bytes]],
    "lo": [[1, None], None, []],
    "m": [[("k", U2.bytes)], None, []],
    "mo": [[("k", None)], [], None],
}


def _nullability(arrow_type: pa.DataType, iceberg: t.IcebergType) -> None:
    """Every field, element and value below ``arrow_type`` is nullable iff optional."""
    if isinstance(iceberg, t.StructType):
        for i, f in enumerate(iceberg.fields):
            _field(arrow_type.field(i), f)
    elif isinstance(iceberg, t.ListType):
        assert arrow_type.value_field.nullable == (not iceberg.element_required)
        _nullability(arrow_type.value_type, iceberg.element_type)
    elif isinstance(iceberg, t.MapType):
        assert not arrow_type.key_field.nullable
        assert arrow_type.item_field.nullable == (not iceberg.value_required)
        _nullability(arrow_type.item_type, iceberg.value_type)


def _field(arrow: pa.Field, iceberg: t.NestedField) -> None:
    assert arrow.name == iceberg.name
    assert arrow.nullable == (not iceberg.required), iceberg.name
    if isinstance(iceberg.field_type, t.UUIDType):
        assert arrow.type == pa.uuid()
    _nullability(arrow.type, iceberg.field_type)


def _check_schema(arrow: pa.Schema, schema: Schema) -> None:
    assert len(arrow) == len(schema.fields)
    for f, iceberg in zip(arrow, schema.fields, strict=True):
        _field(f, iceberg)


@pytest.fixture
def nested(tmp_path: Path) -> Any:
    table = DataTable(tmp_path, NESTED)
    table.commit([table.data(table.write_parquet(ROWS))])
    return table.table()


def test_required_is_not_nullable_in_every_way_out(nested: Any, tmp_path: Path) -> None:
    scan = nested.scan()
    outputs = {
        "to_arrow": scan.to_arrow().schema,
        "to_batches": scan.to_batches().schema,
        "to_arrow_batch_reader": scan.to_arrow_batch_reader().schema,
        "empty": nested.scan(row_filter="id > 100").to_arrow().schema,
        "read_task_schema": read_task_schema(nested.schema()),
    }
    (task,) = scan.plan_files()
    batches = list(read_task(task, nested.schema(), io=nested.io))
    outputs["read_task"] = batches[0].schema
    for name, schema in outputs.items():
        _check_schema(schema, NESTED)
        assert schema == outputs["to_arrow"], name
    # No snapshot at all: the same schema.
    empty = DataTable(tmp_path / "empty", NESTED).table()
    assert empty.scan().to_arrow().schema == outputs["to_arrow"]
    # A selection keeps each field's nullability.
    picked = nested.scan(selected_fields=("s.a", "o", "id")).to_arrow().schema
    assert [(f.name, f.nullable) for f in picked] == [("id", False), ("s", False), ("o", True)]
    assert not picked.field("s").type.field("a").nullable


def test_values_read_back_with_the_stated_types(nested: Any) -> None:
    rows = nested.scan().to_arrow()
    rows.validate(full=True)
    assert rows.column("u").to_pylist() == [U1, None, U2]
    assert rows.column("s").to_pylist()[1] == {"a": U2, "b": None}
    assert rows.column("l").to_pylist() == [[U1], [], [U2, U1]]
    assert rows.column("m").to_pylist() == [[("k", U2)], None, []]
    assert rows.column("o").to_pylist() == [{"r": 1, "x": None}, None, {"r": 3, "x": 4}]
    # Filters on uuid columns (top level and in a struct) compare the values.
    assert nested.scan(row_filter=f"u = '{U2}'").to_arrow().column("id").to_pylist() == [3]
    found = nested.scan(row_filter=f"s.a = '{U1}'").to_arrow().column("id").to_pylist()
    assert found == [1, 3]
    assert nested.scan(row_filter=f"u != '{U2}'").count() == 2


def test_fixed_size_binary_option(nested: Any, tmp_path: Path) -> None:
    for scan in (nested.scan(options=FIXED), nested.scan().update(options=FIXED)):
        rows = scan.to_arrow()
        assert rows.schema.field("u").type == pa.binary(16)
        assert rows.schema.field("s").type.field("a").type == pa.binary(16)
        assert rows.schema.field("l").type.value_type == pa.binary(16)
        assert rows.column("u").to_pylist() == ROWS["u"]
        assert scan.to_batches().schema == rows.schema
        assert rows.schema == read_task_schema(nested.schema(), uuid_type="fixed_size_binary")
    (task,) = nested.scan().plan_files()
    batch = next(read_task(task, nested.schema(), io=nested.io, uuid_type="fixed_size_binary"))
    assert batch.schema.field("u").type == pa.binary(16)
    # As a table property: every scan of the table (an option still wins).
    table = DataTable(tmp_path / "p", NESTED, properties=FIXED)
    table.commit([table.data(table.write_parquet(ROWS))])
    loaded = table.table()
    assert loaded.scan().to_arrow().schema.field("u").type == pa.binary(16)
    override = {"read.arrow.uuid-type": "uuid"}
    assert loaded.scan(options=override).to_arrow().schema.field("u").type == pa.uuid()
    with pytest.raises(ValidationError, match=r"read\.arrow\.uuid-type.*'string'"):
        nested.scan(options={"read.arrow.uuid-type": "string"}).to_arrow()
    with pytest.raises(ValidationError, match="uuid_type"):
        next(read_task(task, nested.schema(), io=nested.io, uuid_type="UUID"))


def test_engines_take_the_uuid_type(nested: Any) -> None:
    scan = nested.scan(selected_fields=("id", "u", "s"))
    connection = scan.to_duckdb("rows")
    kinds = dict(connection.sql("select column_name, column_type from (describe rows)").fetchall())
    assert kinds["u"] == "UUID"
    got = connection.sql("select id, u, s.a from rows order by id").fetchall()
    assert got == [(1, U1, U1), (2, None, U2), (3, U2, U1)]
    assert connection.sql(f"select id from rows where u = '{U2}'").fetchall() == [(3,)]
    fixed = nested.scan(selected_fields=("id", "u"), options=FIXED).to_duckdb("rows")
    assert (
        dict(fixed.sql("select column_name, column_type from (describe rows)").fetchall())["u"]
        == "BLOB"
    )
    # polars has no uuid type: it takes the 16 bytes.
    frame = scan.to_polars()
    assert frame.schema["u"] == pl.Binary()
    assert frame.sort("id").get_column("u").to_list() == [U1.bytes, None, U2.bytes]
    assert pl.DataFrame(scan).get_column("u").to_list() == frame.get_column("u").to_list()
    frame_pd = scan.to_pandas().sort_values("id")
    assert frame_pd["u"].tolist()[0] == U1 and frame_pd["u"].tolist()[2] == U2


def test_uuid_partition_values_and_metadata_tables(tmp_path: Path) -> None:
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "u", t.UUIDType()))
    spec = {
        "spec-id": 0,
        "fields": [{"name": "u", "transform": "identity", "source-id": 2, "field-id": 1000}],
    }
    table = DataTable(tmp_path, schema, specs=(spec,))
    # The file lacks the partition column: it reads as the identity partition's value.
    only_id = Schema(schema.fields[0])
    path = table.write_parquet({"id": [1, 2]}, schema=only_id)
    table.commit([table.data(path, {"u": U2})])
    loaded = table.table()
    rows = loaded.scan(selected_fields=("id", "u", "_partition")).to_arrow()
    assert rows.schema.field("u").type == pa.uuid()
    assert rows.column("u").to_pylist() == [U2, U2]
    assert rows.schema.field("_partition").type.field("u").type == pa.uuid()
    assert rows.column("_partition").to_pylist() == [{"u": U2}] * 2
    files = loaded.inspect.files()
    assert files.schema.field("partition").type.field("u").type == pa.uuid()
    assert files.column("partition").to_pylist() == [{"u": U2}]
    partitions = loaded.inspect.partitions()
    assert partitions.column("partition").to_pylist() == [{"u": U2}]
    fixed = loaded.scan(selected_fields=("u", "_partition"), options=FIXED).to_arrow()
    assert fixed.column("u").to_pylist() == [U2.bytes] * 2
    assert fixed.schema.field("_partition").type.field("u").type == pa.binary(16)


def test_uuid_equality_deletes_apply(tmp_path: Path) -> None:
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "u", t.UUIDType()))
    table = DataTable(tmp_path, schema)
    table.commit(
        [table.data(table.write_parquet({"id": [1, 2, 3], "u": [U1.bytes, None, U2.bytes]}))]
    )
    key = Schema(schema.fields[1])
    path = table.write_parquet({"u": [U2.bytes, None]}, schema=key)
    deletes = data_file(
        path, None, records=2, size=Path(path).stat().st_size, content=2, equality_ids=[2]
    )
    table.commit(deletes=[deletes])
    loaded = table.table()
    assert loaded.scan().to_arrow().column("id").to_pylist() == [1]
    assert loaded.scan().count() == 1


def _optional_file(table: DataTable, rows: dict[str, list[Any]], schema: Schema) -> str:
    """A Parquet file of ``rows`` whose columns are all optional (a writer that did not say
    required), with ``schema``'s field ids."""
    arrow = file_schema(schema)
    loose = pa.schema([f.with_nullable(True) for f in arrow])
    path = table.writer.path(f"loose{len(rows['id'])}.parquet")
    pq.write_table(pa.table(rows, schema=_all_nullable(loose)), path)
    return path


def _all_nullable(schema: pa.Schema) -> pa.Schema:
    def loosen(ty: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(ty):
            return pa.struct([f.with_type(loosen(f.type)).with_nullable(True) for f in ty])
        if pa.types.is_list(ty):
            f = ty.value_field
            return pa.list_(f.with_type(loosen(f.type)).with_nullable(True))
        return ty

    return pa.schema([f.with_type(loosen(f.type)).with_nullable(True) for f in schema])


@pytest.mark.parametrize(
    ("rows", "where"),
    [
        ({"id": [1, None]}, "required field id has 1 null"),
        ({"id": [1, 2], "o": [{"r": None}, None]}, "required field o.r has 1 null"),
        ({"id": [1, 2], "lo": [[1, None], None]}, "required field lo.element has 1 null"),
    ],
)
def test_a_null_where_the_schema_requires_a_value_is_refused(
    tmp_path: Path, rows: dict[str, list[Any]], where: str
) -> None:
    schema = Schema(
        t.required(1, "id", t.LongType()),
        t.optional(2, "o", t.StructType((t.required(3, "r", t.IntegerType()),))),
        t.optional(4, "lo", t.ListType(5, t.LongType(), element_required=True)),
    )
    table = DataTable(tmp_path, schema)
    length = len(rows["id"])
    full = {f.name: rows.get(f.name, [None] * length) for f in schema.fields}
    path = _optional_file(table, full, schema)
    table.commit([table.data(path)])
    loaded = table.table()
    with pytest.raises(InvalidDataError, match=where) as raised:
        loaded.scan().to_arrow()
    assert path in str(raised.value)
    # Where the null is not read (filtered out, or a column not selected), nothing is wrong.
    if "id" in where:
        assert loaded.scan(row_filter="id = 1").to_arrow().num_rows == 1
    else:
        assert loaded.scan(selected_fields=("id",)).to_arrow().num_rows == 2


def test_nulls_under_a_null_parent_are_allowed(tmp_path: Path) -> None:
    schema = Schema(
        t.required(1, "id", t.LongType()),
        t.optional(2, "o", t.StructType((t.required(3, "r", t.IntegerType()),))),
        t.optional(4, "m", t.MapType(5, t.StringType(), 6, t.LongType(), value_required=True)),
    )
    table = DataTable(tmp_path, schema)
    table.commit(
        [
            table.data(
                table.write_parquet({"id": [1, 2], "o": [None, {"r": 2}], "m": [None, [("a", 1)]]})
            )
        ]
    )
    rows = table.table().scan().to_arrow()
    assert rows.column("o").to_pylist() == [None, {"r": 2}]
    assert rows.column("m").to_pylist() == [None, [("a", 1)]]


def test_a_required_column_with_an_initial_default_reads_non_null(tmp_path: Path) -> None:
    old = Schema(t.required(1, "id", t.LongType()))
    table = DataTable(tmp_path, old, format_version=3)
    table.commit([table.data(table.write_parquet({"id": [1, 2]}))])
    added = t.NestedField(2, "n", t.IntegerType(), True, initial_default=7, write_default=7)
    table.evolve(Schema(old.fields[0], added, schema_id=1))
    rows = table.table().scan().to_arrow()
    assert not rows.schema.field("n").nullable
    assert rows.column("n").to_pylist() == [7, 7]
    # The metadata columns keep their own nullability.
    meta = table.table().scan(selected_fields=("id", "_file", "_pos")).to_arrow().schema
    assert [f.nullable for f in meta] == [False, False, False]


def _schemas() -> st.SearchStrategy[Schema]:
    ids = iter(range(1, 10_000))

    def primitive() -> st.SearchStrategy[t.IcebergType]:
        return st.sampled_from([t.LongType(), t.StringType(), t.UUIDType(), t.DoubleType()])

    def nested(children: st.SearchStrategy[t.IcebergType]) -> st.SearchStrategy[t.IcebergType]:
        return st.one_of(
            st.lists(st.tuples(st.booleans(), children), min_size=1, max_size=3).map(
                lambda fs: t.StructType(
                    tuple(t.NestedField(next(ids), f"f{next(ids)}", c, r) for r, c in fs)
                )
            ),
            st.tuples(st.booleans(), children).map(
                lambda ec: t.ListType(next(ids), ec[1], element_required=ec[0])
            ),
            st.tuples(st.booleans(), children).map(
                lambda vc: t.MapType(
                    next(ids), t.StringType(), next(ids), vc[1], value_required=vc[0]
                )
            ),
        )

    types = st.recursive(primitive(), nested, max_leaves=6)
    return st.lists(st.tuples(st.booleans(), types), min_size=1, max_size=4).map(
        lambda fs: Schema(
            *(t.NestedField(next(ids), f"c{i}", ty, r) for i, (r, ty) in enumerate(fs))
        )
    )


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=_schemas())
def test_any_schema_states_its_nullability(schema: Schema) -> None:
    # The same rule as pyiceberg's schema_to_pyarrow (nullable = optional) at every depth.
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyiceberg.schema import Schema as PyicebergSchema

    arrow = scan_arrow_schema(schema)
    _check_schema(arrow, schema)
    theirs = schema_to_pyarrow(PyicebergSchema.model_validate_json(json.dumps(schema.to_json())))
    assert _flags(arrow) == _flags(theirs)


def _flags(schema: pa.Schema) -> list[Any]:
    def of(ty: pa.DataType) -> list[Any]:
        if pa.types.is_struct(ty):
            return [(f.nullable, of(f.type)) for f in ty]
        if pa.types.is_list(ty) or pa.types.is_large_list(ty):
            return [(ty.value_field.nullable, of(ty.value_type))]
        if pa.types.is_map(ty):
            return [(ty.item_field.nullable, of(ty.item_type))]
        return []

    return [(f.nullable, of(f.type)) for f in schema]


# --- pyiceberg's names -------------------------------------------------------------------------


def test_pyiceberg_names(tmp_path: Path) -> None:
    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", Schema(t.required(1, "id", t.LongType())))
    table.append(
        pa.table(
            {"id": pa.array(range(10), pa.int64())},
            schema=pa.schema([pa.field("id", pa.int64(), False)]),
        )
    )
    assert table.name() == ("db", "t")
    scan = table.scan(row_filter="id >= 3")
    reader = scan.to_arrow_batch_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all().equals(scan.to_arrow())
    assert scan.update(limit=2).to_arrow().num_rows == 2
    with pytest.raises(FrazilError, match="unknown argument"):
        scan.update(snapshot=1)
    # pyiceberg's positional order: row_filter, selected_fields, case_sensitive,
    # snapshot_id, options, limit.
    snapshot = table.current_snapshot()
    assert snapshot is not None
    positional = table.scan("id >= 3", ("id",), True, snapshot.snapshot_id, {"threads": 1}, 4)
    assert positional.options == {"threads": 1} and positional.limit == 4
    assert positional.to_arrow().num_rows == 4


def test_scan_parameters_are_pyicebergs() -> None:
    from frazil.table import Table
    from pyiceberg.table import Table as PyicebergTable

    ours = list(inspect.signature(Table.scan).parameters)
    theirs = list(inspect.signature(PyicebergTable.scan).parameters)
    assert ours[: len(theirs)] == theirs
    # frazil's own selectors come after, by keyword only.
    extra = inspect.signature(Table.scan).parameters
    assert [extra[n].kind for n in ours[len(theirs) :]] == [inspect.Parameter.KEYWORD_ONLY] * 2


def test_to_pandas_without_pandas_says_how_to_get_it(
    nested: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` fails
    with pytest.raises(FrazilError, match="pip install pandas"):
        nested.scan().to_pandas()


def test_copy_on_write_keeps_uuid_and_required_columns(tmp_path: Path) -> None:
    """A delete rewrites the rest of a file through the reader: uuid and required values go
    back to the writer as it takes them."""
    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    schema = Schema(
        t.required(1, "id", t.LongType()),
        t.optional(2, "u", t.UUIDType()),
        t.optional(3, "o", t.StructType((t.required(4, "r", t.IntegerType()),))),
    )
    table = catalog.create_table("db.u", schema)
    arrow = pa.schema(
        [
            pa.field("id", pa.int64(), False),
            pa.field("u", pa.binary(16)),
            pa.field("o", pa.struct([pa.field("r", pa.int32(), False)])),
        ]
    )
    rows = {"id": [1, 2, 3], "u": [U1.bytes, None, U2.bytes], "o": [{"r": 1}, None, {"r": 3}]}
    table.append(pa.table(rows, schema=arrow))
    table.delete("id = 2")
    read = table.scan().to_arrow().sort_by("id")
    assert read.column("u").to_pylist() == [U1, U2]
    assert read.column("o").to_pylist() == [{"r": 1}, {"r": 3}]
    assert not read.schema.field("id").nullable


def test_scan_methods_take_pyicebergs_parameter_names() -> None:
    from frazil.table.scan import DataScan
    from pyiceberg.table import DataScan as PyicebergScan

    for name in ("filter", "select", "with_case_sensitive", "use_ref", "to_pandas", "count"):
        ours = list(inspect.signature(getattr(DataScan, name)).parameters)
        theirs = list(inspect.signature(getattr(PyicebergScan, name)).parameters)
        assert ours == theirs, name


def test_nested_uuids_reach_pandas_and_empty_results_combine(nested: Any) -> None:
    # pyarrow's pandas conversion fails on a list of pa.uuid() (and of fixed_size_binary,
    # which failed before issue 22 too): nested uuids go as bytes.
    frame = nested.scan().to_pandas().sort_values("id")
    first = frame.iloc[0]
    assert first["u"] == U1
    assert first["s"]["a"] == U1.bytes
    assert list(first["l"]) == [U1.bytes]
    assert list(first["m"]) == [("k", U2.bytes)]
    # No rows: every column still has a chunk, which combines and converts.
    empty = nested.scan(row_filter="id > 100").to_arrow()
    assert [c.combine_chunks().type for c in empty.columns] == [f.type for f in empty.schema]
    assert nested.scan(row_filter="id > 100").to_pandas().shape == (0, len(NESTED.fields))
    assert nested.scan(row_filter="id > 100").to_polars().height == 0
