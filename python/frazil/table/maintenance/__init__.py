"""Table maintenance: expiring snapshots, removing orphan files, rewriting manifests.

``table.maintenance`` is a :class:`Maintenance`; ``table.expire_snapshots()``,
``table.remove_orphan_files()`` and ``table.rewrite_manifests()`` are shortcuts to it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from frazil.table.maintenance._reachable import FileKind
from frazil.table.maintenance.expire import ExpireSnapshots, ExpireSnapshotsResult
from frazil.table.maintenance.orphans import PrefixMismatchMode, remove_orphan_files
from frazil.table.maintenance.rewrite_manifests import RewriteManifestsResult, rewrite_manifests

if TYPE_CHECKING:
    from frazil.table._table import Table

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
