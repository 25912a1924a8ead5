"""Reading rows (issue 11): projection by field id and schema evolution on read (spec: "Column
Projection", "Schema Evolution", "Default values"), through ``scan().to_arrow()`` and
``frazil.read_task``.

Files are written with one schema and read with a later one: renamed, reordered and dropped
columns, nested struct fields, list elements and map keys and values matched by id, type
promotions, added columns with an initial-default or null, identity partition values for
columns a file lacks, and files without field ids read through the name mapping.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import Schema, read_task
from frazil import types as t
from frazil.errors import FrazilError, InvalidDataError, UnknownFieldError
from frazil.name_mapping import NameMapping
from frazil.table.read import scan_arrow_schema
from read_helpers import DataTable, rows

UTC = dt.timezone.utc


def _schema(*fields: t.NestedField, schema_id: int = 0) -> Schema:
    return Schema(*fields, schema_id=schema_id)


BASE = _schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "name", t.StringType()),
    t.optional(3, "score", t.IntegerType()),
    t.optional(4, "ratio", t.FloatType()),
    t.optional(5, "amount", t.DecimalType(9, 2)),
    t.optional(6, "day", t.DateType()),
)


def _base_rows() -> dict[str, list[Any]]:
    return {
        "id": [1, 2, 3],
        "name": ["a", None, "c"],
        "score": [10, None, -3],
        "ratio": [0.5, float("nan"), None],
        "amount": [Decimal("1.25"), None, Decimal("-9999999.99")],
        "day": [dt.date(2024, 1, 1), dt.date(1969, 12, 31), None],
    }


def test_read_all_columns_in_schema_order(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    table.commit([table.data(table.write_parquet(_base_rows()))])
    result = table.table().scan().to_arrow()
    assert result.schema == scan_arrow_schema(BASE)
    assert result.column("id").to_pylist() == [1, 2, 3]
    assert result.column("name").to_pylist() == ["a", None, "c"]
    assert result.column("amount").to_pylist() == [Decimal("1.25"), None, Decimal("-9999999.99")]


def test_rename_reorder_drop_promote_and_add(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE, format_version=3)
    table.commit([table.data(table.write_parquet(_base_rows()))])
    evolved = _schema(
        t.optional(6, "when", t.TimestampType()),  # renamed, moved first, date -> timestamp
        t.optional(5, "amount", t.DecimalType(20, 2)),  # precision widened
        t.required(1, "key", t.LongType()),  # renamed
        t.optional(3, "score", t.LongType()),  # int -> long
        t.optional(4, "ratio", t.DoubleType()),  # float -> double
        t.optional(7, "added", t.StringType()),  # no default: null
        t.optional(8, "flag", t.BooleanType(), initial_default=True, write_default=False),
        schema_id=1,
    )  # name (2) dropped
    table.evolve(evolved)
    result = table.table().scan().to_arrow()
    assert result.schema == scan_arrow_schema(evolved)
    assert result.column_names == ["when", "amount", "key", "score", "ratio", "added", "flag"]
    assert result.column("when").to_pylist() == [
        dt.datetime(2024, 1, 1),
        dt.datetime(1969, 12, 31),
        None,
    ]
    assert result.column("amount").type == pa.decimal128(20, 2)
    assert result.column("amount").to_pylist()[2] == Decimal("-9999999.99")
    assert result.column("key").to_pylist() == [1, 2, 3]
    assert result.column("score").to_pylist() == [10, None, -3]
    ratio = result.column("ratio").to_pylist()
    assert ratio[0] == 0.5 and ratio[1] != ratio[1] and ratio[2] is None
    assert result.column("added").to_pylist() == [None, None, None]
    assert result.column("flag").to_pylist() == [True, True, True]


def test_files_of_two_schemas_in_one_scan(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE, format_version=3)
    table.commit([table.data(table.write_parquet(_base_rows()))])
    evolved = _schema(
        t.required(1, "id", t.LongType()),
        t.optional(9, "tag", t.StringType(), initial_default="old", write_default="new"),
        schema_id=1,
    )
    table.evolve(evolved)
    new = table.write_parquet({"id": [4], "tag": ["fresh"]})
    table.commit([table.data(new)])
    result = table.table().scan().to_arrow()
    assert rows(result) == [(1, "old"), (2, "old"), (3, "old"), (4, "fresh")]


def test_select_and_time_travel_use_the_snapshot_schema(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    first = table.commit([table.data(table.write_parquet(_base_rows()))])
    table.evolve(_schema(t.required(1, "key", t.LongType()), schema_id=1))
    table.commit([table.data(table.write_parquet({"key": [4]}))])
    loaded = table.table()
    old = loaded.scan(snapshot_id=first, selected_fields=("name", "id"))
    assert old.to_arrow().column_names == ["id", "name"]  # schema order, as Java's select
    assert rows(old.to_arrow()) == [(1, "a"), (2, None), (3, "c")]
    assert rows(loaded.scan().to_arrow()) == [(1,), (2,), (3,), (4,)]
    with pytest.raises(UnknownFieldError, match="nope"):
        loaded.scan(selected_fields=("nope",)).to_arrow()


NESTED = _schema(
    t.required(1, "id", t.LongType()),
    t.optional(
        2,
        "point",
        t.StructType(
            (
                t.optional(3, "x", t.IntegerType()),
                t.optional(4, "y", t.FloatType()),
            )
        ),
    ),
    t.optional(5, "tags", t.ListType(6, t.IntegerType())),
    t.optional(7, "attrs", t.MapType(8, t.StringType(), 9, t.IntegerType())),
    t.optional(
        10,
        "events",
        t.ListType(
            11,
            t.StructType(
                (t.optional(12, "a", t.IntegerType()), t.optional(13, "b", t.StringType()))
            ),
        ),
    ),
)


def _nested_rows() -> dict[str, list[Any]]:
    return {
        "id": [1, 2, 3, 4],
        "point": [{"x": 1, "y": 0.5}, None, {"x": None, "y": -1.0}, {"x": 7, "y": None}],
        "tags": [[1, 2], [], None, [None, 5]],
        "attrs": [[("k", 1)], None, [], [("a", None), ("b", 2)]],
        "events": [[{"a": 1, "b": "x"}], None, [None, {"a": 2, "b": None}], []],
    }


def test_nested_fields_evolve_by_id(tmp_path: Path) -> None:
    table = DataTable(tmp_path, NESTED, format_version=3)
    table.commit([table.data(table.write_parquet(_nested_rows()))])
    evolved = _schema(
        t.required(1, "id", t.LongType()),
        t.optional(
            2,
            "point",
            t.StructType(
                (
                    t.optional(4, "why", t.DoubleType()),  # renamed, promoted, moved first
                    t.optional(14, "z", t.IntegerType(), initial_default=0, write_default=0),
                )  # x (3) dropped
            ),
        ),
        t.optional(5, "tags", t.ListType(6, t.LongType())),
        t.optional(7, "attrs", t.MapType(8, t.StringType(), 9, t.LongType())),
        t.optional(
            10,
            "events",
            t.ListType(
                11,
                t.StructType(
                    (t.optional(13, "bee", t.StringType()), t.optional(15, "c", t.DateType()))
                ),
            ),
        ),
        schema_id=1,
    )
    table.evolve(evolved)
    result = table.table().scan().to_arrow()
    assert result.schema == scan_arrow_schema(evolved)
    assert result.column("point").to_pylist() == [
        {"why": 0.5, "z": 0},
        None,
        {"why": -1.0, "z": 0},
        {"why": None, "z": 0},
    ]
    assert result.column("tags").to_pylist() == [[1, 2], [], None, [None, 5]]
    assert result.column("attrs").to_pylist() == [[("k", 1)], None, [], [("a", None), ("b", 2)]]
    assert result.column("events").to_pylist() == [
        [{"bee": "x", "c": None}],
        None,
        [None, {"bee": None, "c": None}],
        [],
    ]


def test_select_a_nested_field(tmp_path: Path) -> None:
    table = DataTable(tmp_path, NESTED)
    table.commit([table.data(table.write_parquet(_nested_rows()))])
    result = table.table().scan(selected_fields=("point.y",)).to_arrow()
    assert result.column_names == ["point"]
    assert result.column("point").to_pylist() == [{"y": 0.5}, None, {"y": -1.0}, {"y": None}]


def test_identity_partition_fills_missing_column(tmp_path: Path) -> None:
    schema = _schema(t.required(1, "id", t.LongType()), t.optional(2, "region", t.StringType()))
    spec = {
        "spec-id": 0,
        "fields": [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}],
    }
    table = DataTable(tmp_path, schema, specs=[spec])
    # Files written by engines that leave identity partition columns out of the data (Hive).
    only_id = _schema(t.required(1, "id", t.LongType()))
    east = table.write_parquet({"id": [1, 2]}, schema=only_id)
    nowhere = table.write_parquet({"id": [3]}, schema=only_id)
    present = table.write_parquet({"id": [4], "region": ["file value"]})
    table.commit(
        [
            table.data(east, {"region": "east"}),
            table.data(nowhere, {"region": None}),
            table.data(present, {"region": "west"}),
        ]
    )
    result = table.table().scan().to_arrow()
    assert rows(result) == [(1, "east"), (2, "east"), (3, None), (4, "file value")]


def test_required_column_missing_from_file_is_an_error(tmp_path: Path) -> None:
    table = DataTable(tmp_path, _schema(t.required(1, "id", t.LongType())))
    table.commit([table.data(table.write_parquet({"id": [1]}))])
    table.evolve(
        _schema(
            t.required(1, "id", t.LongType()), t.required(2, "must", t.IntegerType()), schema_id=1
        )
    )
    with pytest.raises(InvalidDataError, match=r"f1\.parquet.*must"):
        table.table().scan().to_arrow()


def test_type_that_cannot_be_promoted_names_file_and_field(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    table.commit([table.data(table.write_parquet(_base_rows()))])
    table.evolve(
        _schema(
            t.required(1, "id", t.LongType()), t.optional(2, "name", t.IntegerType()), schema_id=1
        )
    )
    with pytest.raises(InvalidDataError, match=r"f1\.parquet.*name"):
        table.table().scan().to_arrow()


def test_file_without_ids_read_through_the_name_mapping(tmp_path: Path) -> None:
    table = DataTable(tmp_path, NESTED)
    path = table.write_parquet(_nested_rows(), ids=False)
    assert not any(pq.read_schema(path).field(i).metadata for i in range(5))
    table.commit([table.data(path)])
    with pytest.raises(FrazilError, match=r"f1\.parquet.*name mapping"):
        table.table().scan().to_arrow()
    mapping = NameMapping.from_schema(NESTED)
    table.properties["schema.name-mapping.default"] = mapping.to_json()
    result = table.table().scan().to_arrow()
    assert result.column("point").to_pylist() == _nested_rows()["point"]
    assert result.column("events").to_pylist() == _nested_rows()["events"]
    assert result.column("attrs").to_pylist() == _nested_rows()["attrs"]


def test_name_mapping_with_aliases_and_unmapped_columns(tmp_path: Path) -> None:
    schema = _schema(t.required(1, "id", t.LongType()), t.optional(2, "name", t.StringType()))
    table = DataTable(tmp_path, schema)
    path = str(tmp_path / "data" / "hive.parquet")
    pq.write_table(pa.table({"ID": [1, 2], "full_name": ["x", "y"], "junk": [0, 0]}), path)
    table.commit([table.data(path)])
    mapping = json.dumps(
        [{"field-id": 1, "names": ["id", "ID"]}, {"field-id": 2, "names": ["name", "full_name"]}]
    )
    table.properties["schema.name-mapping.default"] = mapping
    assert rows(table.table().scan().to_arrow()) == [(1, "x"), (2, "y")]


def test_read_task_by_itself(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    table.commit([table.data(table.write_parquet(_base_rows(), row_group_size=1))])
    loaded = table.table()
    (task,) = list(loaded.scan().plan_files())
    projected = _schema(t.optional(2, "name", t.StringType()), t.required(1, "id", t.LongType()))
    batches = list(read_task(task, loaded.schema(), projected, specs=loaded.specs(), batch_size=2))
    assert all(b.schema == scan_arrow_schema(projected) for b in batches)
    assert pa.Table.from_batches(batches).to_pylist() == [
        {"name": "a", "id": 1},
        {"name": None, "id": 2},
        {"name": "c", "id": 3},
    ]
    limited = list(read_task(task, loaded.schema(), projected, specs=loaded.specs(), limit=2))
    assert sum(b.num_rows for b in limited) == 2


def test_split_tasks_read_each_row_group_once(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    many = {k: v * 50 for k, v in _base_rows().items()}
    many["id"] = list(range(150))
    table.commit([table.data(table.write_parquet(many, row_group_size=10))])
    loaded = table.table()
    scan = loaded.scan(options={"read.split.target-size": 300, "read.split.open-file-cost": 0})
    tasks = [task for group in scan.plan_tasks() for task in group.tasks]
    assert len(tasks) > 3
    ids: list[int] = []
    for task in tasks:
        for batch in read_task(task, loaded.schema(), specs=loaded.specs()):
            ids.extend(batch.column("id").to_pylist())
    assert sorted(ids) == list(range(150))


def test_missing_and_corrupt_data_files_name_the_file(tmp_path: Path) -> None:
    table = DataTable(tmp_path, BASE)
    path = table.write_parquet(_base_rows())
    table.commit([table.data(path)])
    loaded = table.table()
    Path(path).write_bytes(Path(path).read_bytes()[:-30])
    with pytest.raises(InvalidDataError, match=r"f1\.parquet"):
        loaded.scan().to_arrow()
    Path(path).unlink()
    with pytest.raises(FileNotFoundError, match=r"f1\.parquet"):
        loaded.scan().to_arrow()


def test_nested_columns_with_deletes_and_filters(tmp_path: Path) -> None:
    table = DataTable(tmp_path, NESTED)
    many = {k: v * 10 for k, v in _nested_rows().items()}
    many["id"] = list(range(40))
    path = table.write_parquet(many, row_group_size=7)
    table.commit([table.data(path)])
    deleted = {0, 1, 2, 9, 10, 11, 12, 30}
    table.commit(deletes=[table.position_deletes([(path, p) for p in sorted(deleted)])])
    loaded = table.table()
    result = loaded.scan(row_filter="id >= 5").to_arrow()
    kept = [i for i in range(40) if i not in deleted and i >= 5]
    assert result.column("id").to_pylist() == kept
    for name in ("point", "tags", "attrs", "events"):
        assert result.column(name).to_pylist() == [many[name][i] for i in kept], name
    # Batches of a few rows: sliced list and map arrays keep their offsets right.
    (task,) = list(loaded.scan().plan_files())
    batches = read_task(task, loaded.schema(), specs=loaded.specs(), batch_size=3)
    rows = pa.Table.from_batches(list(batches))
    assert rows.column("events").to_pylist() == [
        many["events"][i] for i in range(40) if i not in deleted
    ]


def test_read_task_from_its_json(tmp_path: Path) -> None:
    # The Spark integration ships tasks to executors as Appendix C JSON.
    from frazil.table.scan import file_scan_task_from_json

    schema = _schema(t.required(1, "id", t.LongType()), t.optional(2, "region", t.StringType()))
    spec = {
        "spec-id": 0,
        "fields": [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}],
    }
    table = DataTable(tmp_path, schema, specs=[spec])
    path = table.write_parquet({"id": [1, 2, 3]}, schema=_schema(t.required(1, "id", t.LongType())))
    table.commit([table.data(path, {"region": "north"})])
    table.commit(deletes=[table.position_deletes([(path, 1)], {"region": "north"})])
    loaded = table.table()
    (task,) = list(loaded.scan(row_filter="id > 1").plan_files())
    assert len(task.delete_files) == 1
    shipped = file_scan_task_from_json(task.to_json())
    batches = read_task(shipped, loaded.schema(), specs=loaded.specs())
    assert pa.Table.from_batches(list(batches)).to_pylist() == [{"id": 3, "region": "north"}]
