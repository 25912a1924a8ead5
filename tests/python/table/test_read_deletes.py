"""Reading rows with row-level deletes (spec: "Row-level Deletes", "Position Delete Files",
"Deletion Vectors"): Parquet position delete files and v3 deletion vectors applied by absolute
row position, also when a split reads only some row groups; equality deletes (NULL equals
NULL, NaN equals NaN, -0.0 is not +0.0, dropped columns still apply).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import Schema, _native, read_task
from frazil import types as t
from frazil.errors import FrazilError
from frazil.table._equality import EqualityDeletes, deleted_mask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_helpers import DataTable
from scan_helpers import data_file

SCHEMA = Schema(t.required(1, "id", t.LongType()), t.optional(2, "v", t.StringType()))


def _ids(table: Any, **scan: Any) -> list[int]:
    return sorted(table.scan(**scan).to_arrow().column("id").to_pylist())


def _write(table: DataTable, count: int, row_group_size: int = 7) -> str:
    return table.write_parquet(
        {"id": list(range(count)), "v": [str(i) for i in range(count)]},
        row_group_size=row_group_size,
    )


def _dv(table: DataTable, data_path: str, positions: list[int], name: str) -> dict[str, Any]:
    location = str(table.writer.root / "data" / name)
    (entry,) = _native.write_deletion_vector_puffin(location, [(data_path, positions)])
    return data_file(
        location,
        None,
        records=entry["record_count"],
        size=entry["file_size_in_bytes"],
        content=1,
        file_format="PUFFIN",
        referenced_data_file=entry["referenced_data_file"],
        content_offset=entry["content_offset"],
        content_size_in_bytes=entry["content_size_in_bytes"],
    )


def test_position_delete_files_apply_by_position(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a, b = _write(table, 30), _write(table, 10)
    table.commit([table.data(a), table.data(b)])
    # One delete file names both data files and a file not in the table; another repeats one.
    first = table.position_deletes([(a, 0), (a, 7), (a, 29), (b, 3), ("elsewhere", 1)])
    second = table.position_deletes([(a, 7), (a, 8)])
    table.commit(deletes=[first, second])
    loaded = table.table()
    expected = [i for i in range(30) if i not in (0, 7, 8, 29)] + [i for i in range(10) if i != 3]
    assert _ids(loaded) == sorted(expected)
    assert loaded.scan().count() == len(expected)
    # Before the deletes, every row.
    assert len(_ids(loaded, snapshot_id=1000)) == 40


def test_deletion_vectors_apply_by_position(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA, format_version=3)
    a = _write(table, 50)
    table.commit([table.data(a)])
    table.commit(deletes=[_dv(table, a, [1, 2, 3, 49], "dv1.puffin")])
    loaded = table.table()
    assert _ids(loaded) == [i for i in range(50) if i not in (1, 2, 3, 49)]
    assert loaded.scan().count() == 46


def test_positions_stay_absolute_in_splits_and_filters(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a = _write(table, 200, row_group_size=13)
    table.commit([table.data(a)])
    deleted = {0, 12, 13, 14, 100, 155, 199}
    table.commit(deletes=[table.position_deletes([(a, p) for p in sorted(deleted)])])
    loaded = table.table()
    scan = loaded.scan(options={"read.split.target-size": 200, "read.split.open-file-cost": 0})
    tasks = [task for group in scan.plan_tasks() for task in group.tasks]
    assert len(tasks) > 2
    ids = []
    for task in tasks:
        for batch in read_task(task, loaded.schema(), specs=loaded.specs(), batch_size=5):
            ids.extend(batch.column("id").to_pylist())
    assert sorted(ids) == [i for i in range(200) if i not in deleted]
    filtered = _ids(loaded, row_filter="id >= 150")
    assert filtered == [i for i in range(150, 200) if i not in deleted]


def _equality(table: DataTable, schema: Schema, rows: dict[str, list[Any]]) -> dict[str, Any]:
    path = table.write_parquet(rows, schema=schema)
    ids = [f.field_id for f in schema.fields]
    return data_file(
        path,
        None,
        records=len(next(iter(rows.values()))),
        size=Path(path).stat().st_size,
        content=2,
        equality_ids=ids,
    )


FLOATS = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "v", t.StringType()),
    t.optional(3, "f", t.FloatType()),
)


def test_equality_deletes(tmp_path: Path) -> None:
    table = DataTable(tmp_path, FLOATS)
    a = table.write_parquet(
        {
            "id": [0, 1, 2, 3, 4, 5, 6],
            "v": ["x", None, "y", None, "x", "z", "y"],
            "f": [0.0, -0.0, float("nan"), None, 1.5, 0.0, None],
        }
    )
    table.commit([table.data(a)])
    by_id = _equality(table, Schema(FLOATS.fields[0]), {"id": [6, 99]})
    # NULL equals NULL: the null key deletes rows 1 and 3, not the others.
    by_v = _equality(table, Schema(FLOATS.fields[1]), {"v": [None]})
    # -0.0 is not +0.0; NaN equals NaN.
    by_f = _equality(table, Schema(FLOATS.fields[2]), {"f": [-0.0, float("nan")]})
    # A two-column key: (x, 1.5) deletes row 4, (x, 2.0) nothing.
    by_pair = _equality(
        table, Schema(FLOATS.fields[1], FLOATS.fields[2]), {"v": ["x", "x"], "f": [1.5, 2.0]}
    )
    table.commit(deletes=[by_id, by_v, by_f, by_pair])
    loaded = table.table()
    assert _ids(loaded) == [0, 5]
    assert loaded.scan().count() == 2
    assert sorted(loaded.scan(selected_fields=("v",)).to_arrow().column("v").to_pylist()) == [
        "x",
        "z",
    ]
    # Before the deletes were committed, every row.
    assert len(_ids(loaded, snapshot_id=1000)) == 7


def test_equality_deletes_on_a_dropped_column(tmp_path: Path) -> None:
    table = DataTable(tmp_path, FLOATS)
    a = table.write_parquet({"id": [0, 1, 2], "v": ["x", "y", "x"], "f": [1.0, 2.0, 3.0]})
    table.commit([table.data(a)])
    table.commit(deletes=[_equality(table, Schema(FLOATS.fields[1]), {"v": ["x"]})])
    table.evolve(Schema(FLOATS.fields[0], FLOATS.fields[2], schema_id=1))
    loaded = table.table()
    assert loaded.scan().to_arrow().to_pylist() == [{"id": 1, "f": 2.0}]


NESTED = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(
        2,
        "point",
        t.StructType((t.optional(3, "x", t.LongType()), t.optional(4, "tag", t.StringType()))),
    ),
)


def test_equality_deletes_on_a_field_dropped_from_a_struct(tmp_path: Path) -> None:
    # The delete column point.tag is dropped from the struct after the deletes were written;
    # the deletes still apply (spec: equality field ids need not be in the current schema).
    table = DataTable(tmp_path, NESTED)
    a = table.write_parquet(
        {"id": [0, 1, 2], "point": [{"x": 1, "tag": "a"}, {"x": 2, "tag": "b"}, None]}
    )
    table.commit([table.data(a)])
    tag = NESTED.fields[1].field_type.fields[1]  # type: ignore[attr-defined]
    deletes = _equality(
        table, Schema(t.NestedField(4, "tag", tag.field_type, False)), {"tag": ["a"]}
    )
    table.commit(deletes=[deletes])
    table.evolve(
        Schema(
            NESTED.fields[0],
            t.optional(2, "point", t.StructType((t.optional(3, "x", t.LongType()),))),
            schema_id=1,
        )
    )
    loaded = table.table()
    assert loaded.scan().to_arrow().to_pylist() == [
        {"id": 1, "point": {"x": 2}},
        {"id": 2, "point": None},
    ]


def test_equality_delete_file_without_its_column_names_the_file(tmp_path: Path) -> None:
    table = DataTable(tmp_path, FLOATS)
    table.commit([table.data(table.write_parquet({"id": [0, 1]}))])
    wrong = _equality(table, Schema(FLOATS.fields[0]), {"id": [1]})
    wrong["equality_ids"] = [2]
    table.commit(deletes=[wrong])
    with pytest.raises(FrazilError, match=r"f2\.parquet.*field id 2"):
        table.table().scan().to_arrow()


def test_corrupt_deletion_vector_names_the_file(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA, format_version=3)
    a = _write(table, 5)
    table.commit([table.data(a)])
    dv = _dv(table, a, [1], "bad.puffin")
    location = Path(dv["file_path"])
    data = bytearray(location.read_bytes())
    data[dv["content_offset"] + 10] ^= 0xFF
    location.write_bytes(bytes(data))
    table.commit(deletes=[dv])
    with pytest.raises(FrazilError, match=r"bad\.puffin"):
        table.table().scan().to_arrow()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count=st.integers(1, 120),
    row_group_size=st.integers(1, 40),
    data=st.data(),
    use_dv=st.booleans(),
)
def test_random_deletes_equal_python(
    tmp_path_factory: Any, count: int, row_group_size: int, data: Any, use_dv: bool
) -> None:
    root = tmp_path_factory.mktemp("t")
    table = DataTable(root, SCHEMA, format_version=3 if use_dv else 2)
    a = _write(table, count, row_group_size)
    table.commit([table.data(a)])
    deleted = data.draw(st.sets(st.integers(0, count - 1)))
    by_value = data.draw(st.sets(st.integers(0, count - 1), max_size=5))
    if deleted:
        delete = (
            _dv(table, a, sorted(deleted), "dv.puffin")
            if use_dv
            else table.position_deletes([(a, p) for p in deleted])
        )
        table.commit(deletes=[delete])
    if by_value:
        # Equality deletes on v (the id as text), on top of the position deletes.
        rows = {"v": [str(i) for i in sorted(by_value)]}
        table.commit(deletes=[_equality(table, Schema(SCHEMA.fields[1]), rows)])
    loaded = table.table()
    expected = [i for i in range(count) if i not in deleted and i not in by_value]
    # to_arrow decodes runs of row groups whole; to_batches streams them batch by batch.
    assert _ids(loaded) == expected
    streamed = loaded.scan().to_batches().read_all()
    assert sorted(streamed.column("id").to_pylist()) == expected
    assert loaded.scan().count() == len(expected)


KEY_VALUES = {
    "f": st.sampled_from([None, 0.0, -0.0, float("nan"), 1.5, -1.5]),
    "s": st.sampled_from([None, "", "a", "b", "\u00e9"]),
    "n": st.sampled_from([None, 0, 1, -1, 2**40]),
}


def _same(a: Any, b: Any) -> bool:
    """Iceberg's equality of key values: null equals null, floats by canonical bits."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float):
        return (a != a and b != b) or struct.pack("<d", a) == struct.pack("<d", b)
    return bool(a == b)


@settings(max_examples=80, deadline=None)
@given(
    names=st.lists(st.sampled_from(["f", "s", "n"]), min_size=1, max_size=3, unique=True),
    data=st.data(),
)
def test_equality_keys_equal_python(names: list[str], data: Any) -> None:
    row = st.fixed_dictionaries({name: KEY_VALUES[name] for name in names})
    rows = data.draw(st.lists(row, max_size=25))
    deletes = data.draw(st.lists(row, min_size=1, max_size=10))
    types = {"f": pa.float32(), "s": pa.string(), "n": pa.int64()}

    def columns(items: list[dict[str, Any]]) -> list[pa.Array]:
        return [pa.array([r[n] for r in items], types[n]) for n in names]

    field_ids = tuple(range(len(names)))
    keys = pa.RecordBatch.from_arrays(columns(deletes), names=names)
    key_set = _native.EqualityDeleteSet(keys.schema)
    key_set.add(keys)
    group = EqualityDeletes(field_ids, key_set)
    mask = deleted_mask(group, columns(rows)) if rows else pa.array([], pa.bool_())
    expected = [any(all(_same(r[n], d[n]) for n in names) for d in deletes) for r in rows]
    assert mask.to_pylist() == expected
