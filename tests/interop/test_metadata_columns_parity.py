"""Metadata columns read by frazil equal Spark's (Iceberg Java 1.10.2) ``SELECT _file, _pos,
_spec_id, _partition, ...`` (issue 11; spec: Reserved Field IDs).

The table is written through Spark SQL: a v2 table partitioned by ``cat``, then by
``bucket(4, id)`` too (so ``_partition`` has the fields of both specs, with nulls for the
older files), with merge-on-read DELETE and UPDATE (position delete files). Deleted rows are
compared too: Spark's reader keeps and flags them when ``_deleted`` is selected.
"""

from __future__ import annotations

from typing import Any

import frazil
import pyarrow.parquet as pq
from java_referee import Warehouse

NAMESPACE = "metadata_columns"
MERGE_ON_READ = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)
COLUMNS = ("id", "_file", "_pos", "_spec_id", "_partition", "_deleted")


def _value(value: Any) -> Any:
    if isinstance(value, dict):  # a struct read by frazil
        return tuple(_value(v) for v in value.values())
    if isinstance(value, tuple):  # a pyspark Row
        return tuple(_value(v) for v in value)
    return value


def _rows(rows: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(_value(v) for v in row) for row in rows), key=repr)


def _frazil(table: Any, names: tuple[str, ...], **scan: Any) -> list[tuple[Any, ...]]:
    result = table.scan(selected_fields=names, **scan).to_arrow()
    assert result.column_names == list(names)
    return _rows(tuple(r.values()) for r in result.to_pylist())


def test_metadata_columns_equal_spark(tables: Warehouse) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    full = tables.name(NAMESPACE, "mor")
    tables.sql(
        f"CREATE TABLE {full} (id bigint, cat string, val double) USING iceberg "
        f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='2', {MERGE_ON_READ}, "
        "'write.parquet.row-group-size-bytes'='4096', 'write.parquet.page-size-bytes'='1024')"
    )
    tables.sql(
        f"INSERT INTO {full} SELECT id, CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE NULL "
        "END, id / 4.0 FROM range(0, 3000) ORDER BY id"
    )
    tables.sql(f"ALTER TABLE {full} ADD PARTITION FIELD bucket(4, id) AS shard")
    tables.sql(
        f"INSERT INTO {full} SELECT id, CASE id % 2 WHEN 0 THEN 'a' ELSE 'c' END, id / 2.0 "
        "FROM range(3000, 5000) ORDER BY id"
    )
    tables.sql(f"DELETE FROM {full} WHERE id % 7 = 0")
    tables.sql(f"UPDATE {full} SET val = -val WHERE id % 11 = 1")
    metadata = tables.current_metadata_file(NAMESPACE, "mor")
    table = frazil.StaticTable.from_metadata(str(metadata))
    tasks = list(table.scan().plan_files())
    assert any(task.delete_files for task in tasks), "merge-on-read must leave delete files"
    assert len({task.spec_id for task in tasks}) == 2
    # Row groups small enough that positions cross them.
    groups = [
        pq.read_metadata(task.file.file_path.removeprefix("file:")).num_row_groups for task in tasks
    ]
    assert max(groups) > 1, groups

    live = ", ".join(c for c in COLUMNS if c != "_deleted")
    expected = _rows(tables.sql(f"SELECT {live} FROM {full}"))
    assert _frazil(table, COLUMNS[:-1]) == expected
    # Some rows of the old spec have no shard, some no cat: nulls inside _partition.
    assert any(row[4][1] is None for row in expected)
    assert any(row[4][0] is None for row in expected)

    # With _deleted, Spark keeps deleted rows and flags them.
    flagged = _rows(tables.sql(f"SELECT {', '.join(COLUMNS)} FROM {full}"))
    assert _frazil(table, COLUMNS) == flagged
    assert any(row[5] for row in flagged) and not all(row[5] for row in flagged)

    # A filter that skips row groups keeps positions absolute.
    where = "id >= 4500"
    filtered = _rows(tables.sql(f"SELECT {live} FROM {full} WHERE {where}"))
    assert filtered and _frazil(table, COLUMNS[:-1], row_filter=where) == filtered
