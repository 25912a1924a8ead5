"""Equality deletes written by Iceberg Java 1.10.2 (``EqualityDeleteWriter`` through the Java API)
applied by frazil's ``EqualityDeleteSet``, against the rows Spark reads.

The table starts unpartitioned (spec 0) and is then partitioned by ``cat`` (spec 1), so that
an equality delete file of spec 0 is global and one of spec 1 is scoped to its partition:

- global, on ``id``: ids present in both partitions, and one id appended again after the
  delete (a newer data sequence number: not deleted);
- partition ``cat = 'a'``, on ``(s, n)``: delete rows with nulls (a null matches only a null,
  spec "Equality Delete Files"), so ``s IS NULL AND n = 4`` style deletes;
- partition ``cat = 'b'``, on ``s`` alone.

frazil plans the table (which delete files apply to which data file is the planner's rule) and,
for each task, reads the data file and its equality delete files with pyarrow, builds one set
per delete file keyed by its ``equality_ids`` and removes the matching rows. The rows left must
equal Spark's ``SELECT`` exactly.
"""

from __future__ import annotations

from typing import Any

import frazil
import pyarrow as pa
import pyarrow.parquet as pq
from frazil import _native
from java_referee import Warehouse
from scan_tables import RS, java_row

NAMESPACE = "equality_deletes"
COLUMNS = ("id", "cat", "s", "n")
TYPES = {"id": "long", "cat": "string", "s": "string", "n": "int"}


def _read(path: str) -> pa.Table:
    return pq.read_table(pa.BufferReader(_native.RawFileIO().read(path)))


def _rows(tables: Warehouse, name: str) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r) for r in tables.sql(f"SELECT {', '.join(COLUMNS)} FROM {name}")),
        key=repr,
    )


def _insert(tables: Warehouse, name: str, first: int, last: int) -> None:
    tables.sql(
        f"INSERT INTO {name} SELECT id, IF(id % 2 = 0, 'a', 'b') AS cat, "
        "IF(id % 5 = 0, NULL, concat('s', CAST(id % 7 AS STRING))) AS s, "
        "IF(id % 11 = 0, NULL, CAST(id % 13 AS INT)) AS n "
        f"FROM range({first}, {last}) ORDER BY id"
    )


def _frazil_rows(metadata_location: str) -> tuple[list[tuple[Any, ...]], int]:
    table = frazil.StaticTable.from_metadata(metadata_location)
    names = {f.field_id: f.name for f in table.schema().fields}
    rows: list[tuple[Any, ...]] = []
    applied = 0
    for task in table.scan().plan_files():
        data = _read(task.file.file_path).select(list(COLUMNS))
        for delete in task.delete_files:
            assert delete.content == 2, "only equality deletes were written"
            keys = [names[i] for i in delete.equality_ids]
            delete_rows = _read(delete.file_path).select(keys)
            # The delete file's columns take the table's types (as the reader projects them).
            key_schema = pa.schema([data.schema.field(k) for k in keys])
            deleted = _native.EqualityDeleteSet(key_schema)
            for batch in delete_rows.cast(key_schema).to_batches():
                deleted.add(batch, delete.file_path)
            kept = [deleted.apply(batch, keys, task.file.file_path) for batch in data.to_batches()]
            data = pa.Table.from_batches(kept, schema=data.schema)
            applied += 1
        rows.extend(tuple(r.values()) for r in data.to_pylist())
    return sorted(rows, key=repr), applied


def test_java_equality_deletes_leave_the_rows_spark_reads(tables: Warehouse) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = tables.name(NAMESPACE, "eq_v2")
    tables.sql(
        f"CREATE TABLE {name} (id bigint, cat string, s string, n int) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    _insert(tables, name, 0, 1_000)  # unpartitioned (spec 0)
    tables.sql(f"ALTER TABLE {name} ADD PARTITION FIELD cat")
    _insert(tables, name, 1_000, 3_000)  # by cat (spec 1)
    java_table = tables.java_table(NAMESPACE, "eq_v2")
    ids = {f.fieldId(): f.name() for f in java_table.schema().columns()}
    field_ids = {v: k for k, v in ids.items()}
    helper = tables.java.org.frazil.interop.PlanReferee

    def delete(spec_id: int, columns: list[str], partition: dict[str, Any], *rows: Any) -> None:
        helper.addEqualityDeletes(
            java_table,
            spec_id,
            ",".join(str(field_ids[c]) for c in columns),
            java_row(field_ids, partition, TYPES) if partition else "",
            RS.join(java_row(field_ids, dict(zip(columns, r, strict=True)), TYPES) for r in rows),
        )

    delete(0, ["id"], {}, (7,), (8,), (1_500,), (2_001,))
    delete(1, ["s", "n"], {"cat": "a"}, (None, 4), ("s3", None), ("s1", 1), (None, None))
    delete(1, ["s"], {"cat": "b"}, ("s2",))
    tables.sql(f"REFRESH TABLE {name}")
    _insert(tables, name, 7, 9)  # ids 7 and 8 again, newer than the global delete

    expected = _rows(tables, name)
    assert 0 < len(expected) < 3_002, "the deletes must remove rows"
    assert (7, "b", "s0", 7) in expected  # appended after the global delete of id 7
    # Partition-scoped deletes reach only files of their spec and partition: not the rows of
    # the unpartitioned files (ids below 1,000).
    assert [r for r in expected if r[1] == "a" and r[2] is None and r[3] is None and r[0] < 1_000]
    assert not [
        r for r in expected if r[1] == "a" and r[2] is None and r[3] is None and r[0] >= 1_000
    ]
    assert not [r for r in expected if r[1] == "b" and r[2] == "s2" and r[0] >= 1_000]
    namespace, table = name.split(".")[1:]
    got, applied = _frazil_rows(str(tables.current_metadata_file(namespace, table)))
    assert applied > 0
    assert got == expected
