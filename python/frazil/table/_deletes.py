"""The row-level deletes of one task (spec: "Row-level Deletes", "Delete Formats"), gathered
into one :class:`~frazil._native.PositionDeleteIndex` for its data file: deletion vectors
(Puffin blobs, read by the Rust core) and the rows of Parquet position delete files that name
the data file. Equality deletes are applied by :mod:`frazil.table._equality`.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from frazil import _native
from frazil.errors import FrazilError, InvalidDataError
from frazil.io._arrow import open_arrow_file
from frazil.table._formats import open_data_file, read_whole
from frazil.table._memo import shared_lru

POSITION_DELETES = 1
EQUALITY_DELETES = 2
# Position delete file columns (spec: "Position Delete Files"; Reserved Field IDs).
FILE_PATH_COLUMN = "file_path"
POS_COLUMN = "pos"


@shared_lru(32)
def _positions_by_file(
    location: str, raw: _native.RawFileIO, file_format: str
) -> _native.PositionDeletesByFile:
    """A position delete file's positions by data file, read once: a partition-scoped delete
    file applies to every data file of its partition (cached for the files read next)."""
    columns = [FILE_PATH_COLUMN, POS_COLUMN]
    try:
        if file_format == "PARQUET":
            # ParquetFile, not pq.read_table: that goes through pyarrow.dataset, which
            # imports pandas. Paths read dictionary-encoded: a file names few data files,
            # many times.
            with pq.ParquetFile(
                open_arrow_file(raw, location), pre_buffer=True, read_dictionary=[FILE_PATH_COLUMN]
            ) as parquet:
                table = parquet.read(columns=columns)
        else:  # ORC and Avro delete files, as Java writes them for tables of those formats
            with open_data_file(file_format, raw, location) as source:
                table = pa.Table.from_batches(
                    list(read_whole(source, columns)),
                    schema=pa.schema([source.schema_arrow.field(c) for c in columns]),
                )
    except FrazilError:
        raise
    except Exception as error:  # pyarrow raises ArrowInvalid, KeyError, OSError...
        raise InvalidDataError(
            f"{location}: cannot read the position delete file: {error}"
        ) from None
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
            index.add_position_file(_positions_by_file(delete.file_path, raw, file_format))
        else:
            raise InvalidDataError(
                f"{delete.file_path}: reading {file_format} position delete files is not "
                "supported yet"
            )
    return index
