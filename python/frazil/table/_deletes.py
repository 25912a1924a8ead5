"""The row-level deletes of one task (spec: "Row-level Deletes", "Delete Formats"), gathered
into one :class:`~frazil._native.PositionDeleteIndex` for its data file: deletion vectors
(Puffin blobs, read by the Rust core) and the rows of Parquet position delete files that name
the data file. Equality deletes are applied by :mod:`frazil.table._equality`.
"""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq

from frazil import _native
from frazil.errors import FrazilError, InvalidDataError
from frazil.io._arrow import open_arrow_file

POSITION_DELETES = 1
EQUALITY_DELETES = 2
# Position delete file columns (spec: "Position Delete Files"; Reserved Field IDs).
FILE_PATH_COLUMN = "file_path"
POS_COLUMN = "pos"


def _read_position_file(delete: Any, data_path: str, raw: _native.RawFileIO) -> Any:
    location = delete.file_path
    try:
        # Writers sort position deletes by (file_path, pos): row-group statistics skip the
        # groups of other data files.
        return pq.read_table(
            open_arrow_file(raw, location),
            columns=[FILE_PATH_COLUMN, POS_COLUMN],
            filters=[(FILE_PATH_COLUMN, "=", data_path)],
            pre_buffer=True,
        )
    except FrazilError:
        raise
    except Exception as error:  # pyarrow raises ArrowInvalid, KeyError, OSError...
        raise InvalidDataError(
            f"{location}: cannot read the position delete file: {error}"
        ) from None


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
        elif file_format == "PARQUET":
            table = _read_position_file(delete, data_path, raw)
            index.add_positions(
                table.column(FILE_PATH_COLUMN), table.column(POS_COLUMN), source=delete.file_path
            )
        else:
            raise InvalidDataError(
                f"{delete.file_path}: reading {file_format} position delete files is not "
                "supported yet"
            )
    return index
