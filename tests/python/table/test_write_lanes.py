"""Large in-memory writes: row groups of about ``write.parquet.row-group-size-bytes`` (not one
group per call), files rolled at ``write.target-file-size-bytes`` inside one call, and a chunk
with fewer partitions than cores split among several files written at once ("lanes", see
``frazil.table.write._lanes``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.io import FileIO
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table.write import write_data_files
from write_helpers import col, read_back, schema_of, table_metadata

ROW_GROUP = 64_000


def _data(rows: int) -> pa.Table:
    return pa.table(
        {
            "n": pa.array(range(rows), pa.int64()),
            "s": [f"row-{i:07d}" for i in range(rows)],
        }
    )


def _schema() -> Any:
    return schema_of(col(1, "n", "long"), col(2, "s", "string"))


def _metadata(tmp_path: Path, **properties: str) -> Any:
    """A table of ``_schema()`` with row groups of ``ROW_GROUP`` bytes and ``properties``."""
    return table_metadata(
        tmp_path,
        _schema(),
        properties={"write.parquet.row-group-size-bytes": str(ROW_GROUP), **properties},
    )


def _cores(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    # frazil._threads reads FRAZIL_THREADS at every call (the writer's lanes and the split).
    monkeypatch.setenv("FRAZIL_THREADS", str(count))


def test_a_large_call_is_written_as_row_groups_of_the_configured_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cores(monkeypatch, 1)
    data = _data(40_000)
    md = _metadata(tmp_path)
    (f,) = write_data_files(md, FileIO(), data)
    meta = pq.ParquetFile(f.file_path or "").metadata
    # Groups of at least the configured size and under twice it.
    expected_groups = data.nbytes // ROW_GROUP
    assert meta.num_row_groups == expected_groups > 4
    assert f.split_offsets is not None and len(f.split_offsets) == meta.num_row_groups
    assert read_back(f.file_path).equals(data)
    # A call just past the size (as a stream's chunks are) stays one group.
    rows = next(n for n in range(1_000, 40_000, 250) if _data(n).nbytes > ROW_GROUP * 1.2)
    (g,) = write_data_files(_metadata(tmp_path / "small"), FileIO(), _data(rows))
    assert pq.ParquetFile(g.file_path or "").metadata.num_row_groups == 1


def test_one_call_rolls_files_at_the_target_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cores(monkeypatch, 1)
    data = _data(40_000)
    md = _metadata(
        tmp_path,
        **{
            "write.target-file-size-bytes": "100000",
            "write.parquet.compression-codec": "uncompressed",
        },
    )
    files = list(write_data_files(md, FileIO(), data))
    assert len(files) > 2
    # A file is closed at the first row group that takes it past the target.
    for f in files:
        groups = pq.ParquetFile(f.file_path or "").metadata.num_row_groups
        assert groups >= 1 and (f.file_size_in_bytes or 0) < 100_000 + ROW_GROUP
    assert pa.concat_tables(read_back(f.file_path) for f in files).equals(data)


@pytest.mark.parametrize("cores", [1, 2, 3, 8])
def test_an_unpartitioned_table_is_split_among_the_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    _cores(monkeypatch, cores)
    data = _data(40_000)
    md = _metadata(tmp_path)
    files = list(write_data_files(md, FileIO(), data))
    # One lane per core, each at least a row group's worth.
    assert len(files) == min(cores, data.nbytes // ROW_GROUP)
    # Each file a contiguous run of the input, with its own record count.
    parts = sorted(((read_back(f.file_path), f) for f in files), key=lambda p: p[0]["n"][0].as_py())
    assert pa.concat_tables(part for part, _ in parts).equals(data)
    for part, f in parts:
        assert f.record_count == part.num_rows


def test_small_tables_and_many_partitions_keep_one_file_per_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cores(monkeypatch, 8)
    small = _data(1_000)
    md = _metadata(tmp_path)
    assert small.nbytes < 2 * ROW_GROUP
    assert len(list(write_data_files(md, FileIO(), small))) == 1
    data = _data(40_000)
    partitioned = table_metadata(
        tmp_path / "p",
        _schema(),
        partition=[(1, "bucket[16]", "b")],
        properties={"write.parquet.row-group-size-bytes": str(ROW_GROUP)},
    )
    files = list(write_data_files(partitioned, FileIO(), data))
    assert len(files) == 16
    assert len({str(f.partition) for f in files}) == 16


def test_a_sorted_table_split_among_lanes_keeps_every_file_sorted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cores(monkeypatch, 2)
    order = SortOrder(
        order_id=1, fields=(SortField(1, "identity", SortDirection.DESC, NullOrder.NULLS_LAST),)
    )
    data = _data(40_000)
    shuffled = data.take(pa.array([(i * 7919) % data.num_rows for i in range(data.num_rows)]))
    md = table_metadata(
        tmp_path,
        _schema(),
        properties={"write.parquet.row-group-size-bytes": str(ROW_GROUP)},
        order=order,
    )
    files = list(write_data_files(md, FileIO(), shuffled))
    assert len(files) == 2
    seen: list[int] = []
    for f in files:
        values = read_back(f.file_path)["n"].to_pylist()
        assert values == sorted(values, reverse=True)
        assert f.sort_order_id == 1
        seen += values
    assert sorted(seen) == list(range(data.num_rows))
