"""The results of both rewrites, with Java's counts (``RewriteDataFiles.Result`` and
``RewritePositionDeleteFiles.Result``): per group, and summed over the groups."""

from __future__ import annotations

from dataclasses import dataclass

from frazil.table.maintenance.rewrite_plan._common import FileGroupInfo
from frazil.table.maintenance.rewrite_plan._data import RewriteFileGroup
from frazil.table.maintenance.rewrite_plan._deletes import RewritePositionDeletesGroup

__all__ = [
    "FileGroupFailureResult",
    "FileGroupRewriteResult",
    "PositionDeletesGroupRewriteResult",
    "RewriteDataFilesResult",
    "RewritePositionDeleteFilesResult",
]


@dataclass(frozen=True)
class FileGroupRewriteResult:
    """A committed group of ``rewrite_data_files`` (Java's ``FileGroupRewriteResult``)."""

    info: FileGroupInfo
    added_data_files_count: int
    rewritten_data_files_count: int
    rewritten_bytes_count: int
    removed_delete_files_count: int

    @classmethod
    def of(cls, group: RewriteFileGroup, added_data_files_count: int) -> FileGroupRewriteResult:
        """The result of ``group`` once it wrote ``added_data_files_count`` files (Java's
        ``asResult``: the group's files and bytes, and its deletion vectors, removed with
        them)."""
        return cls(
            info=group.info,
            added_data_files_count=added_data_files_count,
            rewritten_data_files_count=group.input_file_count,
            rewritten_bytes_count=group.input_bytes,
            removed_delete_files_count=len(group.dangling_dvs),
        )


@dataclass(frozen=True)
class FileGroupFailureResult:
    """A group whose rewrite failed with partial progress on (Java's
    ``FileGroupFailureResult``)."""

    info: FileGroupInfo
    data_files_count: int

    @classmethod
    def of(cls, group: RewriteFileGroup) -> FileGroupFailureResult:
        return cls(info=group.info, data_files_count=group.input_file_count)


@dataclass(frozen=True)
class RewriteDataFilesResult:
    """The result of ``rewrite_data_files``: the committed groups, the failed ones, and the
    delete files ``remove-dangling-deletes`` removed afterwards (Java adds them to
    ``removedDeleteFilesCount``)."""

    rewrite_results: tuple[FileGroupRewriteResult, ...] = ()
    rewrite_failures: tuple[FileGroupFailureResult, ...] = ()
    removed_dangling_delete_files_count: int = 0

    @property
    def added_data_files_count(self) -> int:
        return sum(r.added_data_files_count for r in self.rewrite_results)

    @property
    def rewritten_data_files_count(self) -> int:
        return sum(r.rewritten_data_files_count for r in self.rewrite_results)

    @property
    def rewritten_bytes_count(self) -> int:
        return sum(r.rewritten_bytes_count for r in self.rewrite_results)

    @property
    def failed_data_files_count(self) -> int:
        return sum(r.data_files_count for r in self.rewrite_failures)

    @property
    def removed_delete_files_count(self) -> int:
        return (
            sum(r.removed_delete_files_count for r in self.rewrite_results)
            + self.removed_dangling_delete_files_count
        )


@dataclass(frozen=True)
class PositionDeletesGroupRewriteResult:
    """A committed group of ``rewrite_position_delete_files`` (Java's
    ``RewritePositionDeleteFiles.FileGroupRewriteResult``)."""

    info: FileGroupInfo
    rewritten_delete_files_count: int
    added_delete_files_count: int
    rewritten_bytes_count: int
    added_bytes_count: int

    @classmethod
    def of(
        cls,
        group: RewritePositionDeletesGroup,
        added_delete_files_count: int,
        added_bytes_count: int,
    ) -> PositionDeletesGroupRewriteResult:
        """The result of ``group`` once it wrote ``added_delete_files_count`` files of
        ``added_bytes_count`` bytes (a deletion vector counts its blob's size)."""
        return cls(
            info=group.info,
            rewritten_delete_files_count=group.input_file_count,
            added_delete_files_count=added_delete_files_count,
            rewritten_bytes_count=group.input_bytes,
            added_bytes_count=added_bytes_count,
        )


@dataclass(frozen=True)
class RewritePositionDeleteFilesResult:
    """The result of ``rewrite_position_delete_files``: the committed groups."""

    rewrite_results: tuple[PositionDeletesGroupRewriteResult, ...] = ()

    @property
    def rewritten_delete_files_count(self) -> int:
        return sum(r.rewritten_delete_files_count for r in self.rewrite_results)

    @property
    def added_delete_files_count(self) -> int:
        return sum(r.added_delete_files_count for r in self.rewrite_results)

    @property
    def rewritten_bytes_count(self) -> int:
        return sum(r.rewritten_bytes_count for r in self.rewrite_results)

    @property
    def added_bytes_count(self) -> int:
        return sum(r.added_bytes_count for r in self.rewrite_results)
