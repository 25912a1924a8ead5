"""Files written by Iceberg Java 1.10.2, damaged a few bytes at a time, are errors naming the
file in frazil, never rows (issue 22, "Corrupt or extreme input").

Java's Parquet writer (parquet-mr) stores a CRC in every page header. The table is written
uncompressed, so that a flipped bit reaches the values and only the CRC can tell:

- a data file (Spark's INSERT): one bit of the ``id`` column's last page;
- a position delete file (Spark's merge-on-read DELETE): one bit of the ``pos`` column's last
  page; checked even with data-file verification switched off, since a damaged position
  brings a deleted row back;
- an equality delete file (Java's ``EqualityDeleteWriter``, which compresses it with gzip here:
  the CRC, checked before decompressing, names the damage): one bit of its page, and, in the
  footer, ``num_values`` of its column set from 2 to 0 (the mutation campaign's case: the file
  decoded to no keys and its two deleted rows came back).

Before the fix: the data file read 1,798 rows with a changed id, the position delete file let a
deleted row back (1,799), the flipped equality delete page escaped as a bare ``OSError``, and
the zeroed ``num_values`` brought both deleted rows back (1,800).

Undamaged, frazil reads the rows Spark reads (the CRCs and counts of Java's files check out).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import frazil
import pyarrow.parquet as pq
import pytest
from frazil.errors import InvalidDataError
from java_referee import Warehouse
from scan_tables import RS, java_row

NAMESPACE = "corrupt_input"
VERIFY = "read.parquet.page-checksum-verification.enabled"
# Parquet's codec numbers (CompressionCodec in parquet.thrift), by pyarrow's names.
CODECS = {"UNCOMPRESSED": 0, "SNAPPY": 1, "GZIP": 2, "ZSTD": 6}


def _chunk(path: str, column: str) -> Any:
    group = pq.read_metadata(path).row_group(0)
    (chunk,) = [
        group.column(i)
        for i in range(group.num_columns)
        if group.column(i).path_in_schema == column
    ]
    return chunk


def _flip_last_page_byte(path: str, column: str) -> None:
    chunk = _chunk(path, column)
    start = chunk.data_page_offset
    if chunk.has_dictionary_page and chunk.dictionary_page_offset:
        start = min(start, chunk.dictionary_page_offset)
    data = bytearray(Path(path).read_bytes())
    data[start + chunk.total_compressed_size - 1] ^= 0x01
    Path(path).write_bytes(bytes(data))


def _zero_num_values(path: str, column: str) -> None:
    """``num_values`` of ``column``'s chunk set to 0 in the footer (thrift compact: after
    path_in_schema (field 3, one string) come codec (4) and num_values (5), small values one
    byte each)."""
    chunk = _chunk(path, column)
    assert 0 < chunk.num_values < 64
    name = column.encode()
    pattern = (
        b"\x19\x18"
        + bytes([len(name)])
        + name
        + b"\x15"
        + bytes([CODECS[chunk.compression] * 2])
        + b"\x16"
        + bytes([chunk.num_values * 2])
    )
    data = bytearray(Path(path).read_bytes())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    at = data.find(pattern, footer)
    assert at >= 0 and data.find(pattern, at + 1) < 0, "exactly one column chunk must match"
    data[at + len(pattern) - 1] = 0x00
    Path(path).write_bytes(bytes(data))


def _rows(table: Any, **options: Any) -> list[tuple[Any, ...]]:
    arrow = table.scan(options=options).to_arrow()
    return sorted(zip(arrow.column("id").to_pylist(), arrow.column("cat").to_pylist(), strict=True))


def _damaged(path: str, damage: Callable[[str, str], None], column: str) -> Callable[[], None]:
    """Damages ``path`` and returns what restores it."""
    original = Path(path).read_bytes()
    damage(path, column)
    assert Path(path).read_bytes() != original
    return lambda: Path(path).write_bytes(original)


def test_damaged_java_files_are_errors_naming_them(tables: Warehouse) -> None:
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    name = tables.name(NAMESPACE, "crc")
    tables.sql(
        f"CREATE TABLE {name} (id bigint, cat string) USING iceberg TBLPROPERTIES ("
        "'format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.parquet.compression-codec'='uncompressed')"
    )
    tables.sql(
        f"INSERT INTO {name} SELECT id, IF(id % 2 = 0, 'a', 'b') FROM range(0, 2000) ORDER BY id"
    )
    tables.sql(f"DELETE FROM {name} WHERE id % 10 = 3")
    java_table = tables.java_table(NAMESPACE, "crc")
    ids = {f.name(): f.fieldId() for f in java_table.schema().columns()}
    keys = RS.join(java_row(ids, {"id": i}, {"id": "long"}) for i in (5, 7))
    tables.java.org.frazil.interop.PlanReferee.addEqualityDeletes(
        java_table, 0, str(ids["id"]), "", keys
    )
    tables.sql(f"REFRESH TABLE {name}")
    expected = sorted((r[0], r[1]) for r in tables.sql(f"SELECT id, cat FROM {name}"))
    assert len(expected) == 2000 - 200 - 2

    metadata = str(tables.current_metadata_file(NAMESPACE, "crc"))
    table = frazil.StaticTable.from_metadata(metadata)
    assert _rows(table) == expected
    tasks = list(table.scan().plan_files())
    data_file = tasks[0].file.file_path
    deletes = {d.content: d.file_path for task in tasks for d in task.delete_files}
    position, equality = deletes[1], deletes[2]
    assert pq.read_metadata(equality).num_rows == 2

    cases = [
        (data_file, _flip_last_page_byte, "id", "data file", "CRC", {}),
        (position, _flip_last_page_byte, "pos", "position delete file", "CRC", {VERIFY: "false"}),
        (equality, _flip_last_page_byte, "id", "equality delete file", "CRC", {VERIFY: "false"}),
        (equality, _zero_num_values, "id", "equality delete file", "decoded to 0 rows", {}),
    ]
    for path, damage, column, what, message, options in cases:
        restore = _damaged(path, damage, column)
        try:
            # A fresh table: delete files read before are cached by the table's FileIO.
            with pytest.raises(InvalidDataError, match=rf"{Path(path).name}: .*{what}.*{message}"):
                _rows(frazil.StaticTable.from_metadata(metadata), **options)
        finally:
            restore()
    assert _rows(frazil.StaticTable.from_metadata(metadata)) == expected
