"""Planning compaction: which files ``rewrite_data_files`` and
``rewrite_position_delete_files`` rewrite, grouped and ordered as Apache Iceberg Java 1.10.2
plans them (``BinPackRewriteFilePlanner``, Spark's ``SparkShufflingDataRewritePlanner`` for
the sort strategy, ``BinPackRewritePositionDeletePlanner``), which groups each commit takes
(the commit services of Java's ``RewriteDataFilesCommitManager`` and
``RewritePositionDeletesCommitManager``), and the results' counts.

Pure planning, for an executor that rewrites and commits::

    options = RewriteDataFilesOptions.parse({"min-input-files": "2"}, "binpack",
                                            table.properties)
    plan = plan_rewrite_data_files(table, options, row_filter="cat = 'a'")
    for batch in commit_batches(plan, options):
        ...  # rewrite each group of the batch, then commit the batch

:func:`plan_data_file_groups` and :func:`plan_position_delete_groups` take the inputs
themselves (scan tasks; delete files and live data files), for tests and other engines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from frazil.errors import ValidationError
from frazil.expressions import Expression
from frazil.table.maintenance.rewrite_plan._common import (
    FileGroupInfo,
    RewritePlan,
    check_failed_commits,
    commit_batches,
    pack,
)
from frazil.table.maintenance.rewrite_plan._data import (
    RewriteFileGroup,
    is_file_scoped,
    output_spec_id,
    plan_data_file_groups,
)
from frazil.table.maintenance.rewrite_plan._deletes import (
    LiveDataFile,
    PositionDeleteFile,
    RewritePositionDeletesGroup,
    live_data_files,
    live_position_delete_files,
    plan_position_delete_groups,
)
from frazil.table.maintenance.rewrite_plan._options import (
    JobOrder,
    RewriteDataFilesOptions,
    RewritePositionDeleteFilesOptions,
    Strategy,
)
from frazil.table.maintenance.rewrite_plan._results import (
    FileGroupFailureResult,
    FileGroupRewriteResult,
    PositionDeletesGroupRewriteResult,
    RewriteDataFilesResult,
    RewritePositionDeleteFilesResult,
)

if TYPE_CHECKING:
    from frazil.table._table import Table

__all__ = [
    "FileGroupFailureResult",
    "FileGroupInfo",
    "FileGroupRewriteResult",
    "JobOrder",
    "LiveDataFile",
    "PositionDeleteFile",
    "PositionDeletesGroupRewriteResult",
    "RewriteDataFilesOptions",
    "RewriteDataFilesResult",
    "RewriteFileGroup",
    "RewritePlan",
    "RewritePositionDeleteFilesOptions",
    "RewritePositionDeleteFilesResult",
    "RewritePositionDeletesGroup",
    "Strategy",
    "check_failed_commits",
    "commit_batches",
    "is_file_scoped",
    "live_data_files",
    "live_position_delete_files",
    "output_spec_id",
    "pack",
    "plan_data_file_groups",
    "plan_position_delete_groups",
    "plan_rewrite_data_files",
    "plan_rewrite_position_delete_files",
]


def plan_rewrite_data_files(
    table: Table,
    options: RewriteDataFilesOptions | Mapping[str, object] | None = None,
    *,
    strategy: Strategy = "binpack",
    row_filter: Expression | str | None = None,
    case_sensitive: bool = False,
) -> RewritePlan[RewriteFileGroup]:
    """The plan of ``rewrite_data_files`` on ``table``'s current snapshot: options read
    (with the table's properties) and checked first, then the files the filter selects
    planned. Java's action binds the filter case-insensitively unless Spark's
    ``spark.sql.caseSensitive`` is set: so does ``case_sensitive=False``. A table without a
    snapshot has an empty plan (its options are still checked; Java's action does not look at
    them then)."""
    metadata = table.metadata
    if not isinstance(options, RewriteDataFilesOptions):
        options = RewriteDataFilesOptions.parse(options, strategy, metadata.properties)
    elif options.strategy != strategy:
        raise ValidationError(
            f"the options were parsed for the {options.strategy} strategy, not {strategy}"
        )
    specs = metadata.specs_by_id
    # Checks output-spec-id before the scan, as Java's init does.
    output_spec_id(options, specs, metadata.default_spec_id)
    if metadata.current_snapshot() is None:
        return RewritePlan(groups=(), total_group_count=0, partition_group_counts=())
    tasks = table.scan(row_filter=row_filter, case_sensitive=case_sensitive).plan_files()
    return plan_data_file_groups(
        tasks, options, specs=specs, current_spec_id=metadata.default_spec_id
    )


def plan_rewrite_position_delete_files(
    table: Table,
    options: RewritePositionDeleteFilesOptions | Mapping[str, object] | None = None,
    *,
    row_filter: Expression | str | None = None,
    case_sensitive: bool = False,
) -> RewritePlan[RewritePositionDeletesGroup]:
    """The plan of ``rewrite_position_delete_files`` on ``table``'s current snapshot. As
    Java's action, a v3 table whose selected position deletes are all deletion vectors
    already has nothing to rewrite (its plan is empty); with v2 position delete files left,
    the plan rewrites its deletion vectors with them."""
    metadata = table.metadata
    if not isinstance(options, RewritePositionDeleteFilesOptions):
        options = RewritePositionDeleteFilesOptions.parse(options, metadata.properties)
    if metadata.current_snapshot() is None:
        return RewritePlan(groups=(), total_group_count=0, partition_group_counts=())
    deletes = live_position_delete_files(
        metadata, table.io, row_filter=row_filter, case_sensitive=case_sensitive
    )
    if metadata.format_version >= 3 and all(f.file_format.upper() == "PUFFIN" for f in deletes):
        return RewritePlan(groups=(), total_group_count=0, partition_group_counts=())
    return plan_position_delete_groups(
        deletes,
        live_data_files(metadata, table.io),
        options,
        specs=metadata.specs_by_id,
        schema=metadata.schema(),
    )
