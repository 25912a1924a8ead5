"""Reading rows with row-level deletes (spec: "Row-level Deletes", "Position Delete Files",
"Deletion Vectors"): Parquet position delete files and v3 deletion vectors applied by absolute
row position, also when a split reads only some row groups; equality deletes refused rather
than ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from frazil import Schema, _native, read_task
from frazil import types as t
from frazil.errors import FrazilError
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


def test_equality_deletes_are_refused_not_ignored(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    a = _write(table, 5)
    table.commit([table.data(a)])
    eq_path = table.write_parquet({"id": [1], "v": ["1"]}, name="eq.parquet")
    eq = data_file(
        eq_path, None, records=1, size=Path(eq_path).stat().st_size, content=2, equality_ids=[1]
    )
    table.commit(deletes=[eq])
    with pytest.raises(FrazilError, match=r"equality delete.*eq\.parquet"):
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
    if deleted:
        delete = (
            _dv(table, a, sorted(deleted), "dv.puffin")
            if use_dv
            else table.position_deletes([(a, p) for p in deleted])
        )
        table.commit(deletes=[delete])
    loaded = table.table()
    assert _ids(loaded) == [i for i in range(count) if i not in deleted]
    assert loaded.scan().count() == count - len(deleted)
