"""Position deletes of a merge-on-read change, written and added to its row delta (spec:
"Position Delete Files", "Deletion Vectors" in the Puffin spec, "Row-level Deletes").

On a v2 table the new positions of each data file go to position delete files
(:func:`frazil.table.write.write_position_deletes`). On a v3 table each data file gets one
deletion vector holding every position deleted in it: the new ones, and those its current
deletion vector or position delete files delete (folded in); the vector it replaces, and its
file-scoped position delete files, are removed in the same commit (spec: at most one vector per
data file; a partition-scoped delete file may cover other files and stays: once the data file
has a vector, such files no longer apply to it). Java's ``BaseDVFileWriter`` does the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import _native
from frazil.io import FileIO, raw
from frazil.metadata import TableMetadata
from frazil.table._deletes import is_file_scoped, position_deletes
from frazil.table.write import (
    DeleteTarget,
    write_deletion_vectors,
    write_position_deletes,
)

if TYPE_CHECKING:
    from frazil.manifest import DataFile
    from frazil.table.snapshot.row_delta import RowDelta

__all__ = ["PositionDeltas", "stage_deletes"]


@dataclass
class _Pending:
    task: Any
    target: DeleteTarget
    positions: list[pa.Array] = field(default_factory=list)


class PositionDeltas:
    """The rows a change deletes by position, per data file, until :meth:`add_to` writes
    them."""

    def __init__(self, metadata: TableMetadata, io: FileIO) -> None:
        self.metadata = metadata
        self.io = io
        self._pending: dict[str, _Pending] = {}
        self.deleted_rows = 0

    def add(self, task: Any, positions: pa.Array) -> None:
        """Delete ``positions`` (int64, live rows of ``task``'s data file)."""
        if len(positions) == 0:
            return
        path = str(task.file.file_path)
        pending = self._pending.get(path)
        if pending is None:
            pending = self._pending[path] = _Pending(task, DeleteTarget.of_task(task))
        pending.positions.append(positions)
        self.deleted_rows += len(positions)

    def __bool__(self) -> bool:
        return bool(self._pending)

    @property
    def data_files(self) -> list[str]:
        """The data files rows are deleted from."""
        return list(self._pending)

    @property
    def tasks(self) -> list[Any]:
        """The planned tasks of the data files rows are deleted from."""
        return [item.task for item in self._pending.values()]

    def write(
        self, operation_id: str | None = None, partition_id: int = 0, task_id: int = 0
    ) -> list[tuple[int, DataFile]]:
        """Writes the delete files (anywhere: a Spark executor too, from the tasks' Appendix C
        JSON) and returns each with its spec id: v2 position delete files, or on v3 one
        deletion vector per data file holding its earlier deletes too. A failed write deletes
        what it wrote."""
        if not self._pending:
            return []
        pending = list(self._pending.values())
        if self.metadata.format_version >= 3:
            vectors = []
            for item in pending:
                index = position_deletes(item.task, raw(self.io))
                if index is None:
                    index = _native.PositionDeleteIndex(item.target.file_path)
                for positions in item.positions:
                    index.add_positions(positions)
                vectors.append((item.target, index))
            return write_deletion_vectors(
                self.metadata,
                self.io,
                vectors,
                operation_id=operation_id,
                partition_id=partition_id,
                task_id=task_id,
            )
        return write_position_deletes(
            self.metadata,
            self.io,
            [(item.target, pa.concat_arrays(item.positions)) for item in pending],
            operation_id=operation_id,
            partition_id=partition_id,
            task_id=task_id,
        )

    def add_to(self, delta: RowDelta, operation_id: str | None = None) -> None:
        """Writes the delete files and adds them to ``delta`` (:func:`stage_deletes`)."""
        if not self._pending:
            return
        tasks = self.tasks
        stage_deletes(delta, self.metadata, self.write(operation_id), tasks)


def stage_deletes(
    delta: RowDelta,
    metadata: TableMetadata,
    written: Sequence[tuple[int, DataFile]],
    tasks: Sequence[Any],
) -> None:
    """Adds delete files written (here or elsewhere) for the data files of ``tasks`` to
    ``delta``, owned by it (a failed commit deletes them), with, on v3, the removal of the
    vectors and file-scoped deletes they replace, and the validation that the data files still
    exist when it commits."""
    if metadata.format_version >= 3:
        for task in tasks:
            for delete in task.delete_files:
                if is_file_scoped(delete):
                    delta.remove_deletes(delete)
    for spec_id, file in written:
        delta.add_deletes(file, spec_id, owned=True)
    delta.validate_data_files_exist([str(t.file.file_path) for t in tasks])
