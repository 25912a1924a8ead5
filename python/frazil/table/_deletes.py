"""The row-level deletes of one task (spec: "Row-level Deletes", "Delete Formats"), gathered
into one :class:`~frazil._native.PositionDeleteIndex` for its data file: deletion vectors
(Puffin blobs, read by the Rust core) and the rows of Parquet position delete files that name
the data file. Equality deletes are applied by :mod:`frazil.table._equality`.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from frazil import _native
from frazil.errors import InvalidDataError
from frazil.table._formats import POSITION_DELETE_FILE, open_data_file, read_whole
from frazil.table._memo import shared_lru

POSITION_DELETES = 1
EQUALITY_DELETES = 2
# Position delete file columns (spec: "Position Delete Files"; Reserved Field IDs).
FILE_PATH_COLUMN = "file_path"
POS_COLUMN = "pos"
FILE_PATH_ID = 2147483546


def is_file_scoped(delete: Any) -> bool:
    """Whether a position delete file applies to one data file only (Java's
    ``ContentFileUtil.isFileScoped``): a deletion vector or a file naming it in
    ``referenced_data_file``, or whose ``file_path`` lower and upper bounds are equal; never
    an equality delete file."""
    if delete.content != POSITION_DELETES:
        return False
    if str(delete.file_format).upper() == "PUFFIN" or delete.referenced_data_file is not None:
        return True
    lower = (delete.lower_bounds or {}).get(FILE_PATH_ID)
    upper = (delete.upper_bounds or {}).get(FILE_PATH_ID)
    return lower is not None and lower == upper


def read_position_delete_rows(
    location: str, raw: _native.RawFileIO, file_format: str, record_count: int
) -> pa.Table:
    """The ``file_path`` and ``pos`` rows of a position delete file (Parquet, ORC or Avro: Java
    writes delete files in the table's format). Its Parquet page CRCs are always verified and
    its rows checked against its footer and its ``record_count`` (frazil.table._formats): a
    damaged delete file would bring deleted rows back without any error."""
    columns = [FILE_PATH_COLUMN, POS_COLUMN]
    # Paths read dictionary-encoded from Parquet: a file names few data files, many times.
    with open_data_file(
        file_format,
        raw,
        location,
        what=POSITION_DELETE_FILE,
        record_count=record_count,
        verify_checksums=True,
        dictionary_columns=(FILE_PATH_COLUMN,),
    ) as source:
        missing = [c for c in columns if c not in source.schema_arrow.names]
        if missing:
            raise InvalidDataError(
                f"{location}: the {POSITION_DELETE_FILE} has no column {missing[0]!r}"
            )
        batches = list(read_whole(source, columns, whole=True))
        if batches:
            return pa.Table.from_batches(batches)
        return pa.schema([source.schema_arrow.field(c) for c in columns]).empty_table()


@shared_lru(32)
def _positions_by_file(
    location: str, raw: _native.RawFileIO, file_format: str, record_count: int
) -> _native.PositionDeletesByFile:
    """A position delete file's positions by data file, read once: a partition-scoped delete
    file applies to every data file of its partition (cached for the files read next)."""
    table = read_position_delete_rows(location, raw, file_format, record_count)
    return _native.PositionDeletesByFile(
        table.column(FILE_PATH_COLUMN), table.column(POS_COLUMN), location
    )


def position_deletes(task: Any, raw: _native.RawFileIO) -> _native.PositionDeleteIndex | None:
    """The deleted positions of a task's data file, or None when nothing is deleted."""
    deletes = task.delete_files
    if not deletes:
        return None
    data_path = task.file.file_path
    index = None
    for delete in deletes:
        if delete.content == EQUALITY_DELETES:
            continue  # frazil.table._equality
        if delete.content != POSITION_DELETES:
            raise InvalidDataError(
                f"{delete.file_path}: delete file content {delete.content} is not a delete"
            )
        if index is None:
            index = _native.PositionDeleteIndex(data_path)
        file_format = str(delete.file_format).upper()
        if file_format == "PUFFIN":
            if delete.content_offset is None or delete.content_size_in_bytes is None:
                raise InvalidDataError(
                    f"{delete.file_path}: deletion vector for {data_path} has no "
                    "content_offset / content_size_in_bytes"
                )
            index.read_deletion_vector(
                delete.file_path,
                delete.content_offset,
                delete.content_size_in_bytes,
                record_count=delete.record_count,
                referenced_data_file=delete.referenced_data_file,
                io=raw,
            )
        elif file_format in ("PARQUET", "ORC", "AVRO"):
            index.add_position_file(
                _positions_by_file(delete.file_path, raw, file_format, delete.record_count)
            )
        else:
            raise InvalidDataError(
                f"{delete.file_path}: reading {file_format} position delete files is not "
                "supported yet"
            )
    return index
