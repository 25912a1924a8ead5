"""The writer's fast paths: partitions grouped by codes and one stable sort (nulls, wide
integer ranges, strings, several fields; input order kept within a file), and the dictionary
decision per column (parquet-mr's fallback rule)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from frazil.io import FileIO
from frazil.table.write import write_data_files
from write_helpers import col, read_back, schema_of, table_metadata


def test_rows_grouped_by_every_partition_tuple_in_input_order(tmp_path: Path) -> None:
    schema = schema_of(col(1, "a", "long"), col(2, "s", "string"), col(3, "n", "long"))
    md = table_metadata(tmp_path, schema, partition=[(1, "identity", "a"), (2, "identity", "s")])
    # ``a`` spans more than the direct-code range (dictionary codes), with nulls; ``s`` too.
    a_values = [None, 1, 10**15, -(10**15), 1]
    s_values = ["x", None, "y"]
    rows = 300
    data = pa.table(
        {
            "a": pa.array([a_values[i % 5] for i in range(rows)], pa.int64()),
            "s": [s_values[(i // 5) % 3] for i in range(rows)],
            "n": pa.array(range(rows), pa.int64()),
        }
    )
    files = list(write_data_files(md, FileIO(), data))
    expected: dict[tuple[object, object], list[int]] = {}
    for i in range(rows):
        expected.setdefault((a_values[i % 5], s_values[(i // 5) % 3]), []).append(i)
    assert len(files) == len(expected)
    for f in files:
        key = ((f.partition or {})["a"], (f.partition or {})["s"])
        back = read_back(f.file_path)
        assert back.column("n").to_pylist() == expected[key], key
        pairs = zip(back.column("a").to_pylist(), back.column("s").to_pylist(), strict=True)
        assert set(pairs) == {key}


def test_small_integer_ranges_and_nulls_in_several_fields(tmp_path: Path) -> None:
    schema = schema_of(col(1, "d", "date"), col(2, "b", "int"), col(3, "n", "long"))
    md = table_metadata(tmp_path, schema, partition=[(1, "identity", "d"), (2, "bucket[4]", "bb")])
    rows = 1000
    days = [None if i % 7 == 0 else 19000 + i % 3 for i in range(rows)]
    data = pa.table(
        {
            "d": pa.array(days, pa.int32()).cast(pa.date32()),
            "b": pa.array([None if i % 11 == 0 else i for i in range(rows)], pa.int32()),
            "n": pa.array(range(rows), pa.int64()),
        }
    )
    files = list(write_data_files(md, FileIO(), data))
    seen: list[int] = []
    for f in files:
        n = read_back(f.file_path).column("n").to_pylist()
        assert n == sorted(n)
        seen += n
    assert sorted(seen) == list(range(rows))
    partitions = {(str((f.partition or {})["d"]), (f.partition or {})["bb"]) for f in files}
    assert len(partitions) == len(files)
    assert ("None", None) in partitions


def _dictionary_encoded(path: str, column: int) -> bool:
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(column)
    return bool(chunk.has_dictionary_page)


def test_dictionary_only_where_it_pays(tmp_path: Path) -> None:
    schema = schema_of(col(1, "unique", "long"), col(2, "few", "string"), col(3, "text", "string"))
    md = table_metadata(tmp_path, schema)
    rows = 10_000
    data = pa.table(
        {
            "unique": pa.array(range(rows), pa.int64()),
            "few": [f"category-{i % 8}" for i in range(rows)],
            "text": [f"a unique note number {i:08d}" for i in range(rows)],
        }
    )
    (f,) = write_data_files(md, FileIO(), data)
    assert f.file_path is not None
    assert not _dictionary_encoded(f.file_path, 0)
    assert _dictionary_encoded(f.file_path, 1)
    assert not _dictionary_encoded(f.file_path, 2)
    assert read_back(f.file_path).equals(data.cast(read_back(f.file_path).schema))
