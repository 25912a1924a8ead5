"""Damaged files are errors naming the file, never rows (issue 22, "Corrupt or extreme input").

Each test writes a real file, damages specific bytes and expects an
:class:`~frazil.errors.InvalidDataError` naming it:

- a flipped bit in a Parquet page that carries a CRC (pyarrow writes them when asked, Java's
  parquet-mr and frazil always): data files, position delete files and equality delete files;
- a column chunk's ``num_values`` set to 0 in the footer (the column decodes to nothing, so an
  equality delete file applied to nothing and deleted rows came back), and a manifest
  ``record_count`` that disagrees with the file's footer;
- a compressed page that no longer decompresses, in each kind of file.

Pages are written uncompressed where the test is about the CRC, so that only the CRC can tell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import Schema
from frazil import types as t
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import InvalidDataError, InvalidValueError
from read_helpers import FIELD_ID, DataTable
from scan_helpers import data_file

SCHEMA = Schema(t.required(1, "id", t.LongType()), t.optional(2, "v", t.StringType()))
KEY = Schema(SCHEMA.fields[0])
VERIFY = "read.parquet.page-checksum-verification.enabled"
# Parquet's codec numbers (CompressionCodec in parquet.thrift), by pyarrow's names.
CODECS = {"UNCOMPRESSED": 0, "SNAPPY": 1, "GZIP": 2, "ZSTD": 6}


# --- damaging Parquet files --------------------------------------------------------------------


def _chunk(path: str, column: str, row_group: int = 0) -> tuple[int, int]:
    """(first byte, compressed size) of a column chunk."""
    group = pq.read_metadata(path).row_group(row_group)
    for i in range(group.num_columns):
        chunk = group.column(i)
        if chunk.path_in_schema == column:
            start = chunk.data_page_offset
            if chunk.has_dictionary_page and chunk.dictionary_page_offset:
                start = min(start, chunk.dictionary_page_offset)
            return start, chunk.total_compressed_size
    raise AssertionError(f"{path} has no column {column}")


def flip_last_page_byte(path: str, column: str) -> None:
    """Flips the lowest bit of the last byte of ``column``'s chunk: the last page's payload
    (for PLAIN int64 values, the high byte of the last value)."""
    start, size = _chunk(path, column)
    data = bytearray(Path(path).read_bytes())
    data[start + size - 1] ^= 0x01
    Path(path).write_bytes(bytes(data))


def break_gzip_page(path: str, column: str) -> None:
    """Makes the first gzip member of ``column``'s chunk name an unknown compression method
    (pyarrow: "GZipCodec failed: unknown compression method")."""
    start, size = _chunk(path, column)
    data = bytearray(Path(path).read_bytes())
    at = data.find(b"\x1f\x8b\x08", start, start + size)
    assert at >= 0, "no gzip member in the column chunk"
    data[at + 2] = 0x09
    Path(path).write_bytes(bytes(data))


def _zigzag(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def zero_num_values(path: str, column: str) -> None:
    """Sets ``num_values`` of ``column``'s chunk to 0 in the footer (thrift compact encoding of
    ColumnMetaData: path_in_schema (field 3, a list of one string), codec (4), num_values (5)),
    the same length, so the footer still parses."""
    group = pq.read_metadata(path).row_group(0)
    (chunk,) = [
        group.column(i)
        for i in range(group.num_columns)
        if group.column(i).path_in_schema == column
    ]
    name = column.encode()
    assert chunk.num_values < 64 and len(name) < 128, "one-byte varints only"
    path_in_schema = b"\x19\x18" + bytes([len(name)]) + name
    codec = _zigzag(CODECS[chunk.compression])
    pattern = path_in_schema + b"\x15" + codec + b"\x16" + _zigzag(chunk.num_values)
    data = bytearray(Path(path).read_bytes())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    at = data.find(pattern, footer)
    assert at >= 0 and data.find(pattern, at + 1) < 0, "exactly one column chunk must match"
    data[at + len(pattern) - 1] = 0x00
    Path(path).write_bytes(bytes(data))


# --- files of each kind ------------------------------------------------------------------------


def _data(table: DataTable, count: int = 2, **options: Any) -> dict[str, Any]:
    path = table.write_parquet(
        {"id": list(range(count)), "v": [f"v{i}" for i in range(count)]}, **options
    )
    return table.data(path)


def _position_deletes(
    table: DataTable, deletes: list[tuple[str, int]], **options: Any
) -> dict[str, Any]:
    path = str(table.writer.root / "data" / "position-deletes.parquet")
    schema = pa.schema(
        [
            pa.field("file_path", pa.string(), False, {FIELD_ID: b"2147483546"}),
            pa.field("pos", pa.int64(), False, {FIELD_ID: b"2147483545"}),
        ]
    )
    rows = {"file_path": [p for p, _ in deletes], "pos": [n for _, n in deletes]}
    pq.write_table(pa.table(rows, schema=schema), path, **options)
    size = Path(path).stat().st_size
    return data_file(path, None, records=len(deletes), size=size, content=1)


def _equality_deletes(table: DataTable, ids: list[int], **options: Any) -> dict[str, Any]:
    path = table.write_parquet({"id": ids}, schema=KEY, name="equality-deletes.parquet", **options)
    size = Path(path).stat().st_size
    return data_file(path, None, records=len(ids), size=size, content=2, equality_ids=[1])


def _ids(table: Any, **options: Any) -> list[int]:
    return sorted(table.scan(options=options).to_arrow().column("id").to_pylist())


UNCOMPRESSED_WITH_CRC = {
    "compression": "none",
    "write_page_checksum": True,
    "use_dictionary": False,
}


# --- page CRCs ---------------------------------------------------------------------------------


def test_flipped_bit_in_a_data_page_with_a_crc(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 5, **UNCOMPRESSED_WITH_CRC)
    table.commit([data])
    flip_last_page_byte(data["file_path"], "id")
    loaded = table.table()
    name = Path(data["file_path"]).name
    with pytest.raises(InvalidDataError, match=rf"{name}: cannot read the data file: .*CRC"):
        loaded.scan().to_arrow()
    with pytest.raises(InvalidDataError, match=rf"{name}: .*CRC"):
        list(loaded.scan().to_batches())
    # Switched off, the damaged value is read as it stands: the property does what it says.
    assert _ids(loaded, **{VERIFY: "false"}) == [0, 1, 2, 3, 4 + (1 << 56)]
    with pytest.raises(InvalidValueError, match=VERIFY):
        _ids(loaded, **{VERIFY: "sometimes"})


def test_flipped_bit_in_a_position_delete_file_with_a_crc(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 5)
    table.commit([data])
    deletes = _position_deletes(table, [(data["file_path"], 1)], **UNCOMPRESSED_WITH_CRC)
    table.commit(deletes=[deletes])
    assert _ids(table.table()) == [0, 2, 3, 4]
    flip_last_page_byte(deletes["file_path"], "pos")
    loaded = table.table()
    # Delete files are verified whatever the data-file setting: a damaged position would
    # bring the deleted row back.
    for verify in ("true", "false"):
        with pytest.raises(
            InvalidDataError,
            match=r"position-deletes\.parquet: cannot read the position delete file: .*CRC",
        ):
            _ids(loaded, **{VERIFY: verify})
    with pytest.raises(InvalidDataError, match=r"position-deletes\.parquet: .*CRC"):
        loaded.scan().count()
    with pytest.raises(InvalidDataError, match=r"position-deletes\.parquet: .*CRC"):
        loaded.inspect.position_deletes()


def test_flipped_bit_in_an_equality_delete_file_with_a_crc(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    table.commit([_data(table, 5)])
    deletes = _equality_deletes(table, [1, 3], **UNCOMPRESSED_WITH_CRC)
    table.commit(deletes=[deletes])
    assert _ids(table.table()) == [0, 2, 4]
    flip_last_page_byte(deletes["file_path"], "id")
    with pytest.raises(
        InvalidDataError,
        match=r"equality-deletes\.parquet: cannot read the equality delete file: .*CRC",
    ):
        _ids(table.table(), **{VERIFY: "false"})


@pytest.mark.parametrize("write_checksums", [None, "true", "false"])
def test_frazil_writes_page_checksums(tmp_path: Path, write_checksums: str | None) -> None:
    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    properties = {"write.parquet.compression-codec": "uncompressed"}
    if write_checksums is not None:
        properties["write.parquet.page-checksum.enabled"] = write_checksums
    table = catalog.create_table("db.t", SCHEMA, properties=properties)
    table.append(pa.table({"id": pa.array(range(100), pa.int64()), "v": ["x"] * 100}))
    (task,) = table.scan().plan_files()
    flip_last_page_byte(task.file.file_path, "id")
    if write_checksums == "false":
        # Without CRCs (as pyarrow writes by default) the damage cannot be seen.
        assert _ids(table)[-1] == 99 + (1 << 56)
        return
    with pytest.raises(InvalidDataError, match=rf"{Path(task.file.file_path).name}: .*CRC"):
        table.scan().to_arrow()


def test_copy_on_write_delete_reads_as_the_property_says(tmp_path: Path) -> None:
    catalog = InMemoryCatalog(warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.parquet.compression-codec": "uncompressed"}
    )
    table.append(pa.table({"id": pa.array(range(100), pa.int64()), "v": ["x"] * 100}))
    (task,) = table.scan().plan_files()
    flip_last_page_byte(task.file.file_path, "id")
    # Rewriting the file reads it first: a damaged page is not copied into a new file ...
    with pytest.raises(InvalidDataError, match=rf"{Path(task.file.file_path).name}: .*CRC"):
        table.delete("id = 5")
    # ... unless verification is switched off for the table.
    with table.update_properties() as update:
        update.set(VERIFY, "false")
    table.delete("id = 5")
    ids = _ids(table)
    assert len(ids) == 99 and 5 not in ids and ids[-1] == 99 + (1 << 56)


# --- counts ------------------------------------------------------------------------------------


def test_data_file_column_that_decodes_to_no_values(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table)
    table.commit([data])
    zero_num_values(data["file_path"], "id")
    loaded = table.table()
    name = Path(data["file_path"]).name
    pattern = rf"{name}: row group 0 of the data file decoded to 0 rows, its metadata says 2"
    # Read alone, the column gives no rows: both rows would vanish without an error.
    with pytest.raises(InvalidDataError, match=pattern):
        loaded.scan(selected_fields=("id",)).to_arrow()
    with pytest.raises(InvalidDataError, match=pattern):
        list(loaded.scan().to_batches())


def test_position_delete_file_that_decodes_to_no_rows(tmp_path: Path) -> None:
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 5)
    table.commit([data])
    deletes = _position_deletes(table, [(data["file_path"], 1), (data["file_path"], 3)])
    table.commit(deletes=[deletes])
    for column in ("file_path", "pos"):
        zero_num_values(deletes["file_path"], column)
    with pytest.raises(
        InvalidDataError,
        match=r"position-deletes\.parquet: row group 0 of the position delete file decoded to "
        r"0 rows, its metadata says 2",
    ):
        _ids(table.table())


def test_equality_delete_file_that_decodes_to_no_rows(tmp_path: Path) -> None:
    # The mutation campaign's case: num_values 2 -> 0 made the file apply to nothing, and the
    # two deleted rows came back.
    table = DataTable(tmp_path, SCHEMA)
    table.commit([_data(table, 5)])
    deletes = _equality_deletes(table, [1, 3])
    table.commit(deletes=[deletes])
    zero_num_values(deletes["file_path"], "id")
    with pytest.raises(
        InvalidDataError,
        match=r"equality-deletes\.parquet: row group 0 of the equality delete file decoded to "
        r"0 rows, its metadata says 2",
    ):
        _ids(table.table())


@pytest.mark.parametrize("kind", ["data", "position", "equality"])
def test_record_count_that_disagrees_with_the_file(tmp_path: Path, kind: str) -> None:
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 5)
    if kind == "data":
        data["record_count"] = 4
        table.commit([data])
        damaged = data["file_path"]
    else:
        table.commit([data])
        if kind == "position":
            deletes = _position_deletes(table, [(data["file_path"], 1), (data["file_path"], 3)])
        else:
            deletes = _equality_deletes(table, [1, 3])
        deletes["record_count"] = 3
        table.commit(deletes=[deletes])
        damaged = deletes["file_path"]
    what = {"data": "data file", "position": "position delete file"}.get(
        kind, "equality delete file"
    )
    with pytest.raises(
        InvalidDataError,
        match=rf"{Path(damaged).name}: the {what} holds .* rows by its own metadata, its "
        r"manifest entry says record_count",
    ):
        _ids(table.table())


def test_unknown_record_count_is_not_checked(tmp_path: Path) -> None:
    # Files imported into v1 tables may carry record_count -1 (unknown).
    table = DataTable(tmp_path, SCHEMA, format_version=1)
    data = _data(table, 5)
    data["record_count"] = -1
    table.commit([data])
    assert _ids(table.table()) == [0, 1, 2, 3, 4]


def test_split_files_are_checked_per_row_group(tmp_path: Path) -> None:
    # Tasks of one file each read some row groups: the decoded rows are checked against those
    # groups, the footer against record_count; a correct split file reads whole.
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 60, row_group_size=7, **UNCOMPRESSED_WITH_CRC)
    table.commit([data])
    loaded = table.table()
    scan = loaded.scan(options={"read.split.target-size": 100, "read.split.open-file-cost": 0})
    assert len([task for group in scan.plan_tasks() for task in group.tasks]) > 2
    assert sorted(scan.to_arrow().column("id").to_pylist()) == list(range(60))
    assert sorted(loaded.scan(row_filter="id >= 50").to_arrow().column("id").to_pylist()) == list(
        range(50, 60)
    )


# --- decompression -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["data", "position", "equality"])
def test_page_that_does_not_decompress(tmp_path: Path, kind: str) -> None:
    gzip = {"compression": "gzip", "use_dictionary": False}
    table = DataTable(tmp_path, SCHEMA)
    data = _data(table, 5, **(gzip if kind == "data" else {}))
    table.commit([data])
    if kind == "data":
        damaged, column, what = data["file_path"], "id", "data file"
    elif kind == "position":
        deletes = _position_deletes(table, [(data["file_path"], 1)], **gzip)
        damaged, column, what = deletes["file_path"], "pos", "position delete file"
    else:
        deletes = _equality_deletes(table, [1, 3], **gzip)
        damaged, column, what = deletes["file_path"], "id", "equality delete file"
    if kind != "data":
        table.commit(deletes=[deletes])
    break_gzip_page(damaged, column)
    with pytest.raises(
        InvalidDataError,
        match=rf"{Path(damaged).name}: cannot read the {what}: .*GZipCodec failed: unknown "
        "compression method",
    ):
        _ids(table.table())
