"""Updates by filter: ``table.update(set={"col": value}, where=filter)`` (Spark's ``UPDATE``),
per ``write.update.mode`` (copy-on-write by default, as Java) in one snapshot; see
:mod:`frazil.table.row_level._changes` for how each mode writes and validates, and for row
lineage. A row the assignments leave as it was is not changed (not rewritten, its lineage
kept)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import expressions as ex
from frazil.errors import FrazilTypeError, ValidationError
from frazil.snapshots import MAIN_BRANCH
from frazil.table import _metadata_columns as meta
from frazil.table._properties import UPDATE_MODE
from frazil.table._row_filter import compile_filter
from frazil.table.row_level._changes import (
    ChangeSet,
    assigned_values,
    filter_mask,
    mode_of,
    rows_changed,
)
from frazil.table.row_level._touched import in_parallel, read_rows, touched_files
from frazil.table.snapshot._files import latest_snapshot
from frazil.table.snapshot.overwrite import UPDATE_ISOLATION

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.schema import Schema
    from frazil.table.transaction import Transaction

__all__ = ["UpdateResult", "stage_update"]


@dataclass
class _FileUpdate:
    """One file's part of an update: copy-on-write, its rows as they will be (``rows``);
    merge-on-read, the positions of its changed rows and their new versions (with the row ids
    they keep)."""

    task: Any
    updated: int = 0
    rows: list[pa.Table] = field(default_factory=list)
    removed: list[pa.Array] = field(default_factory=list)
    new: list[tuple[pa.Table, pa.Array | None]] = field(default_factory=list)


@dataclass(frozen=True)
class UpdateResult:
    """What an update changed: ``rows_updated`` rows got new values (rows the filter matched
    whose values were already those are not counted)."""

    rows_updated: int


def _assignments(
    schema: Schema, set_values: Mapping[str, Any], case_sensitive: bool
) -> dict[str, Any]:
    """``set_values`` by the schema's column names; each a top-level column."""
    if not isinstance(set_values, Mapping) or not set_values:
        raise ValidationError("update needs set={column: value, ...} with at least one column")
    out: dict[str, Any] = {}
    top = {f.field_id: f for f in schema.fields}
    for name, value in set_values.items():
        if not isinstance(name, str):
            raise FrazilTypeError(f"update: columns are named by strings, got {name!r}")
        field_id = schema.find_field_id(name, case_sensitive)
        if field_id is None:
            raise ValidationError(f"update: {name!r} is not a column of the table")
        if field_id not in top:
            raise ValidationError(
                f"update: {name!r} is a nested field; assign its top-level column (a struct) "
                "instead"
            )
        found = top[field_id]
        if value is None and found.required:
            raise ValidationError(
                f"update: column {found.name!r} is required and cannot be set to null"
            )
        out[found.name] = value
    return out


def stage_update(
    txn: Transaction,
    set_values: Mapping[str, Any],
    where: Expression | str | None = None,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    case_sensitive: bool = True,
) -> UpdateResult:
    """Stage in ``txn`` the update of the rows matching ``where`` (default: every row)."""
    from frazil.table.read import read_task_schema
    from frazil.table.snapshot.api import _filter

    metadata, io = txn.staged_metadata, txn.table.io
    schema = metadata.schema()
    mode = mode_of(metadata, UPDATE_MODE)
    row_filter = _filter(where)
    assignments = _assignments(schema, set_values, case_sensitive)
    bound = ex.bind(row_filter, schema, case_sensitive)
    compiled = compile_filter(bound, schema)
    changes = ChangeSet(metadata, io, mode)
    lineage = changes.lineage
    arrow = read_task_schema(schema, metadata_columns=lineage, uuid_type="fixed_size_binary")
    names = [f.name for f in schema.fields]
    # Check the values once against the columns' types (before any file is read).
    for column, value in assignments.items():
        assigned_values(schema, column, value, arrow.field(column).type, 1, arrow.empty_table())
    head = latest_snapshot(metadata, branch or MAIN_BRANCH)
    touched = touched_files(metadata, io, head, row_filter, case_sensitive, whole_files=False)
    table_schema = pa.schema([arrow.field(n) for n in names])

    def one_file(task: Any) -> _FileUpdate:
        columns = (meta.POS, *lineage)
        # Every live row is read (the task carries every delete of the file); the filter is
        # tested here.
        read = read_rows(metadata, io, task, None, columns, apply_residual=False)
        result = _FileUpdate(task)
        for batch in read:
            if batch.num_rows == 0:
                continue
            values = {
                column: assigned_values(
                    schema, column, value, arrow.field(column).type, batch.num_rows, batch
                )
                for column, value in assignments.items()
            }
            changed = rows_changed([batch.column(c) for c in values], list(values.values()))
            changed = pc.and_(filter_mask(compiled, batch, schema), changed)
            count = changed.true_count
            result.updated += count
            if changes.merge_on_read:
                if count:
                    picked = batch.filter(changed)
                    new = [
                        values[n].filter(changed) if n in values else picked.column(n)
                        for n in names
                    ]
                    row_ids = picked.column(meta.ROW_ID) if lineage else None
                    result.removed.append(picked.column(meta.POS))
                    result.new.append((pa.Table.from_arrays(new, schema=table_schema), row_ids))
                continue
            out = [
                pc.if_else(changed, values[n], batch.column(n)) if n in values else batch.column(n)
                for n in names
            ]
            if lineage:
                out.append(batch.column(meta.ROW_ID))
                seq = batch.column(meta.LAST_UPDATED_SEQUENCE_NUMBER)
                out.append(pc.if_else(changed, pa.nulls(batch.num_rows, pa.int64()), seq))
            result.rows.append(pa.Table.from_arrays(out, schema=arrow))
        return result

    results = in_parallel(one_file, touched.tasks)
    total = 0
    try:
        for result in results:
            if not result.updated:
                continue
            total += result.updated
            if changes.merge_on_read:
                for positions in result.removed:
                    changes.remove(result.task, positions)
                for rows, row_ids in result.new:
                    changes.insert(rows, row_ids)
            else:
                changes.rewrite(result.task.file.file_path, result.rows)
    except BaseException:
        changes.discard()
        raise
    changes.stage(
        txn,
        command="update",
        conflict_filter=row_filter,
        isolation_property=UPDATE_ISOLATION,
        branch=branch,
        snapshot_properties=snapshot_properties,
        case_sensitive=case_sensitive,
    )
    return UpdateResult(total)
