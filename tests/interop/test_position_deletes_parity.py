"""Position deletes written by Iceberg Java 1.10.2 (Spark merge-on-read DELETE) read by frazil.

- v3: Java writes deletion vectors (Puffin ``deletion-vector-v1`` blobs); a second DELETE on a
  file that already has one replaces it by a vector holding both deletes.
- v2: Java writes position delete Parquet files; with ``write.delete.granularity=partition``
  one delete file names several data files.

Before each DELETE the rows it will remove are collected through Spark as ``(_file, _pos)``.
frazil plans the table, builds each data file's index from the task's delete files (deletion
vectors read from the Puffin file at ``content_offset``/``content_size_in_bytes``; position
delete rows read with pyarrow into ``PositionDeletesByFile``), and the index must hold exactly
the positions Spark deleted. Applying it to the data file's batches must leave the rows Spark
still returns for that file.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import frazil
import pyarrow as pa
import pyarrow.parquet as pq
from frazil import _native
from java_referee import Warehouse

NAMESPACE = "position_deletes"
MERGE_ON_READ = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)


def _deleted_by(tables: Warehouse, name: str, condition: str) -> dict[str, set[int]]:
    """Runs ``DELETE FROM name WHERE condition``, returning the (file, pos) of the rows removed."""
    rows = tables.sql(f"SELECT _file, _pos FROM {name} WHERE {condition}")
    assert rows, f"the delete {condition!r} must remove rows"
    removed: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        removed[row[0]].add(row[1])
    tables.sql(f"DELETE FROM {name} WHERE {condition}")
    return removed


def _build(
    tables: Warehouse, table: str, version: int, extra: str
) -> tuple[str, dict[str, set[int]]]:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = tables.name(NAMESPACE, table)
    tables.sql(
        f"CREATE TABLE {name} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='{version}', {MERGE_ON_READ}{extra})"
    )
    # Three appends: several files per partition, ~10k rows each.
    for first in (0, 20_000, 40_000):
        tables.sql(
            f"INSERT INTO {name} SELECT id, IF(id % 2 = 0, 'a', 'b') AS cat "
            f"FROM range({first}, {first + 20_000}) ORDER BY id"
        )
    expected: dict[str, set[int]] = defaultdict(set)
    for condition in (
        "id % 3 = 0 AND id < 30000",  # dense: bitmap containers
        "id BETWEEN 41000 AND 47000",  # a run
        "id % 1000 = 1",  # files that already have deletes
    ):
        for path, positions in _deleted_by(tables, name, condition).items():
            expected[path] |= positions
    return name, expected


def _read(path: str) -> pa.Table:
    return pq.read_table(pa.BufferReader(_native.RawFileIO().read(path)))


def _indexes(metadata_location: str, version: int) -> dict[str, Any]:
    table = frazil.StaticTable.from_metadata(metadata_location)
    indexes: dict[str, Any] = {}
    for task in table.scan().plan_files():
        data_file = task.file.file_path
        index = _native.PositionDeleteIndex(data_file)
        for delete in task.delete_files:
            assert delete.content == 1, "merge-on-read DELETE writes position deletes only"
            if version == 3:
                assert delete.file_format.upper() == "PUFFIN"
                assert delete.referenced_data_file == data_file
                index.read_deletion_vector(
                    delete.file_path,
                    delete.content_offset,
                    delete.content_size_in_bytes,
                    record_count=delete.record_count,
                    referenced_data_file=delete.referenced_data_file,
                )
            else:
                assert delete.file_format.upper() == "PARQUET"
                rows = _read(delete.file_path)
                index.add_position_file(
                    _native.PositionDeletesByFile(
                        rows["file_path"], rows["pos"], source=delete.file_path
                    )
                )
        if version == 3:
            # Spec: at most one deletion vector per data file.
            assert len(task.delete_files) <= 1
        indexes[data_file] = index
    return indexes


def _check(tables: Warehouse, name: str, version: int, expected: dict[str, set[int]]) -> None:
    namespace, table = name.split(".")[1:]
    metadata = str(tables.current_metadata_file(namespace, table))
    indexes = _indexes(metadata, version)
    assert set(expected) <= set(indexes), "every file Spark deleted from is planned"
    assert sum(len(p) for p in expected.values()) > 15_000
    for data_file, index in indexes.items():
        assert index.positions().to_pylist() == sorted(expected.get(data_file, set())), data_file
    # Applying the index to the data files leaves what Spark reads from each of them.
    live: dict[str, list[int]] = defaultdict(list)
    for row in tables.sql(f"SELECT _file, id FROM {name}"):
        live[row[0]].append(row[1])
    for data_file, index in indexes.items():
        kept: list[int] = []
        start = 0
        for batch in _read(data_file).to_batches(max_chunksize=7_000):
            kept.extend(index.apply(batch, start).column("id").to_pylist())
            start += batch.num_rows
        assert sorted(kept) == sorted(live.get(data_file, [])), data_file


def test_v3_deletion_vectors_from_spark(tables: Warehouse) -> None:
    name, expected = _build(tables, "dv_v3", 3, "")
    _check(tables, name, 3, expected)


def test_v2_position_delete_files_from_spark(tables: Warehouse) -> None:
    name, expected = _build(tables, "pd_v2", 2, ", 'write.delete.granularity'='partition'")
    namespace, table = name.split(".")[1:]
    # Partition granularity: some delete file names more than one data file, so rows of other
    # files must be left out of each data file's index.
    metadata = str(tables.current_metadata_file(namespace, table))
    delete_paths = {
        d.file_path
        for task in frazil.StaticTable.from_metadata(metadata).scan().plan_files()
        for d in task.delete_files
    }
    assert any(len(set(_read(p)["file_path"].to_pylist())) > 1 for p in delete_paths)
    _check(tables, name, 2, expected)


def test_v2_deletes_carried_into_deletion_vectors_after_upgrade(tables: Warehouse) -> None:
    # Spec, "Deletion Vectors": a DV written for a data file replaces its position delete files,
    # so the task carries the DV alone and the DV alone holds every deleted position.
    name, expected = _build(tables, "upgraded", 2, "")
    tables.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('format-version'='3')")
    for path, positions in _deleted_by(tables, name, "id % 1000 IN (7, 8) AND id < 20000").items():
        expected[path] |= positions
    namespace, table = name.split(".")[1:]
    metadata = str(tables.current_metadata_file(namespace, table))
    tasks = list(frazil.StaticTable.from_metadata(metadata).scan().plan_files())
    upgraded = 0
    for task in tasks:
        formats = {d.file_format.upper() for d in task.delete_files}
        if "PUFFIN" in formats:
            upgraded += 1
            assert formats == {"PUFFIN"}, task.file.file_path
    assert upgraded >= 2
    for task in tasks:
        index = _native.PositionDeleteIndex(task.file.file_path)
        for delete in task.delete_files:
            if delete.file_format.upper() == "PUFFIN":
                index.read_deletion_vector(
                    delete.file_path,
                    delete.content_offset,
                    delete.content_size_in_bytes,
                    record_count=delete.record_count,
                    referenced_data_file=delete.referenced_data_file,
                )
            else:
                rows = _read(delete.file_path)
                index.add_position_file(
                    _native.PositionDeletesByFile(
                        rows["file_path"], rows["pos"], source=delete.file_path
                    )
                )
        expected_positions = sorted(expected.get(task.file.file_path, set()))
        assert index.positions().to_pylist() == expected_positions
