"""Table maintenance: expiring snapshots, removing orphan files, rewriting manifests.

``table.maintenance`` is a :class:`Maintenance`; ``table.expire_snapshots()``,
``table.remove_orphan_files()`` and ``table.rewrite_manifests()`` are shortcuts to it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from frazil.table.maintenance._reachable import FileKind
from frazil.table.maintenance.expire import ExpireSnapshots, ExpireSnapshotsResult
from frazil.table.maintenance.orphans import PrefixMismatchMode, remove_orphan_files
from frazil.table.maintenance.rewrite_manifests import RewriteManifestsResult, rewrite_manifests

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.manifest import DataFile
    from frazil.sorting import SortOrder
    from frazil.table._table import Table
    from frazil.table.maintenance.rewrite_plan import (
        RewriteDataFilesResult,
        RewritePositionDeleteFilesResult,
    )

__all__ = [
    "ExpireSnapshots",
    "ExpireSnapshotsResult",
    "FileKind",
    "Maintenance",
    "RewriteManifestsResult",
]


class Maintenance:
    """The maintenance operations of one table."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def expire_snapshots(self) -> ExpireSnapshots:
        """A builder: ``.by_id()``, ``.by_ids()``, ``.older_than()``, ``.retain_last()``,
        ``.delete_with()``, then ``.commit()`` (or ``.dry_run()``)."""
        return ExpireSnapshots(self._table)

    def remove_orphan_files(
        self,
        older_than: int | dt.datetime | None = None,
        dry_run: bool = False,
        location: str | None = None,
        *,
        prefix_mismatch_mode: PrefixMismatchMode = "error",
        delete_with: Callable[[str], None] | None = None,
    ) -> list[str]:
        """See :func:`frazil.table.maintenance.orphans.remove_orphan_files`."""
        return remove_orphan_files(
            self._table,
            older_than,
            dry_run,
            location,
            prefix_mismatch_mode=prefix_mismatch_mode,
            delete_with=delete_with,
        )

    def rewrite_manifests(self) -> RewriteManifestsResult:
        """See :mod:`frazil.table.maintenance.rewrite_manifests`."""
        return rewrite_manifests(self._table)

    def rewrite_data_files(
        self,
        strategy: str = "binpack",
        options: Mapping[str, object] | None = None,
        filter: Expression | str | None = None,  # Java's name
        *,
        sort_order: SortOrder | str | None = None,
        case_sensitive: bool = False,
        progress: bool | None = None,
    ) -> RewriteDataFilesResult:
        """Compact data files, Java's ``rewrite_data_files``: ``binpack`` or ``sort`` (the
        table's sort order, or ``sort_order``: a SortOrder or ``"id DESC NULLS LAST, name"``),
        with Java's option names; every delete applied; see
        :mod:`frazil.table.maintenance.rewrite_data_files`."""
        from frazil.table.maintenance.rewrite_data_files import rewrite_data_files

        return rewrite_data_files(
            self._table,
            strategy,
            options,
            filter,
            sort_order=sort_order,
            case_sensitive=case_sensitive,
            progress=progress,
        )

    def rewrite_position_delete_files(
        self,
        options: Mapping[str, object] | None = None,
        filter: Expression | str | None = None,  # Java's name
        *,
        case_sensitive: bool = False,
        progress: bool | None = None,
    ) -> RewritePositionDeleteFilesResult:
        """Compact position deletes, dropping dangling ones (v3: into deletion vectors), as
        Java's ``rewrite_position_delete_files``; see
        :mod:`frazil.table.maintenance.rewrite_position_deletes`."""
        from frazil.table.maintenance.rewrite_position_deletes import (
            rewrite_position_delete_files,
        )

        return rewrite_position_delete_files(
            self._table, options, filter, case_sensitive=case_sensitive, progress=progress
        )

    def remove_dangling_deletes(self) -> list[DataFile]:
        """Remove the delete files that apply to no live data file (one ``replace``
        snapshot); see :mod:`frazil.table.maintenance.dangling_deletes`."""
        from frazil.table.maintenance.dangling_deletes import remove_dangling_deletes

        return remove_dangling_deletes(self._table)
