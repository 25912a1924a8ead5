"""``MERGE`` (Spark's ``MERGE INTO``) and pyiceberg's ``upsert``: a source joined to the table
on key columns, each matched pair, each source row without a match and each table row without
one handled by the first clause whose condition holds, committed as one snapshot per
``write.merge.mode`` (see :mod:`frazil.table.row_level._changes` for the modes, validation
and row lineage).

Execution: the source's keys go into a hash index in the Rust core (a duplicate key is an error
naming it); the table's files are pruned to those the keys can touch (by each key column's
bounds and, where a partition field's source is a key column, by the source rows' partitions),
unless a clause handles table rows without a match (then every file is read); each candidate
file's live rows are probed against the index, in parallel. Matched rows whose new values
equal their old ones are left alone (not rewritten, not counted): what pyiceberg's
``rows_updated`` counts.

Conditions use frazil's filter syntax with columns qualified as ``source.x`` and ``target.x``;
assigned values are literals or ``col("source.x")`` / ``col("target.x")``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from frazil import _native
from frazil.errors import FrazilTypeError, ValidationError
from frazil.table import _metadata_columns as meta
from frazil.table.row_level._changes import MERGE_ISOLATION, ChangeSet, mode_of
from frazil.table.row_level._merge_clauses import (
    SOURCE,
    TARGET,
    Clause,
    MergeClauses,
    clause_counts,
)
from frazil.table.row_level._touched import in_parallel, read_rows

if TYPE_CHECKING:
    from frazil.table._table import Table
    from frazil.table.transaction import Transaction

__all__ = [
    "SOURCE",
    "TARGET",
    "MergeBuilder",
    "MergeClauseBuilder",
    "MergeResult",
    "UpsertResult",
]

MERGE_MODE = "write.merge.mode"


@dataclass(frozen=True)
class UpsertResult:
    """pyiceberg's: matched rows whose values changed, and inserted rows."""

    rows_updated: int
    rows_inserted: int


@dataclass(frozen=True)
class MergeResult:
    """Rows each clause handled, in the order the clauses were given, and the totals."""

    rows_updated: int
    rows_deleted: int
    rows_inserted: int
    clauses: tuple[tuple[str, int], ...]


@dataclass
class _FileMerge:
    task: Any
    counts: list[int]
    removed: list[pa.Array] = field(default_factory=list)
    new: list[tuple[pa.Table, pa.Array | None]] = field(default_factory=list)
    rows: list[pa.Table] = field(default_factory=list)
    changed: bool = False


def _source_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data.combine_chunks()
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader) or hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all().combine_chunks()
    raise FrazilTypeError(
        "the merge source must be a pyarrow Table, RecordBatch or RecordBatchReader, or an "
        f"object with __arrow_c_stream__; got {type(data).__name__}"
    )


B = TypeVar("B", bound="MergeClauseBuilder")


class MergeClauseBuilder:
    """The clauses of a ``MERGE``, for an engine that runs them (:class:`MergeBuilder` here,
    :class:`frazil.spark.merging.SparkMergeBuilder` on Spark). Clauses of a kind are tried in
    the order given; the first whose condition holds handles the row."""

    def __init__(
        self,
        on: str | Sequence[str],
        *,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        self._on = [on] if isinstance(on, str) else list(on)
        if not self._on or not all(isinstance(n, str) for n in self._on):
            raise ValidationError("merge: on= needs one or more column names")
        self._case_sensitive = case_sensitive
        self._branch = branch
        self._snapshot_properties = snapshot_properties
        self._clauses: list[Clause] = []
        self._done = False

    def _add(self: B, kind: str, condition: Any, assignments: Mapping[str, Any] | None) -> B:
        if self._done:
            raise ValidationError("this merge was already executed")
        self._clauses.append(Clause.of(kind, condition, assignments))
        return self

    def when_matched_update(
        self: B,
        set: Mapping[str, Any] | None = None,
        condition: Any = None,  # Spark's name
    ) -> B:
        """Update matched table rows: ``set`` maps target columns to values (literals,
        ``col("source.x")``, ``col("target.x")``); None assigns every table column from the
        source column of its name (``UPDATE SET *``)."""
        return self._add("matched_update", condition, set)

    def when_matched_delete(self: B, condition: Any = None) -> B:
        return self._add("matched_delete", condition, None)

    def when_not_matched_insert(
        self: B, values: Mapping[str, Any] | None = None, condition: Any = None
    ) -> B:
        """Insert source rows without a match: ``values`` maps table columns to values (columns
        left out are null); None inserts every table column from the source column of its name
        (``INSERT *``)."""
        return self._add("not_matched_insert", condition, values)

    def when_not_matched_by_source_delete(self: B, condition: Any = None) -> B:
        """Delete table rows no source row matches (every file of the table is read)."""
        return self._add("not_matched_by_source_delete", condition, None)

    def _start(self) -> None:
        """Marks the merge executed (once, with at least one clause)."""
        if self._done:
            raise ValidationError("this merge was already executed")
        if not self._clauses:
            raise ValidationError("merge: add at least one when_... clause")
        self._done = True

    def execute(self) -> MergeResult:
        raise NotImplementedError


class MergeBuilder(MergeClauseBuilder):
    """``table.merge(source, on=...)``: add clauses, then :meth:`execute`. Clauses of a kind
    are tried in the order given; the first whose condition holds handles the row."""

    def __init__(
        self,
        table: Table,
        source: Any,
        on: str | Sequence[str],
        *,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        transaction: Transaction | None = None,
    ) -> None:
        self._table = table
        self._txn = transaction
        self._source = _source_table(source)
        super().__init__(
            on,
            case_sensitive=case_sensitive,
            branch=branch,
            snapshot_properties=snapshot_properties,
        )

    def execute(self) -> MergeResult:
        """Run the merge as one commit (staged in the transaction it was built in, if any)."""
        self._start()
        if self._txn is not None:
            return _Merge(self, self._txn).run()
        with self._table.transaction() as txn:
            result = _Merge(self, txn).run()
        return result


class _Merge:
    """One execution of a :class:`MergeBuilder` in a transaction: the source's keys in a hash
    index (a duplicate key is an error naming it), the candidate files probed against it in
    parallel, every batch decided by the shared :class:`MergeClauses`."""

    def __init__(self, builder: MergeBuilder, txn: Transaction) -> None:
        self.builder = builder
        self.txn = txn
        self.metadata = txn.staged_metadata
        self.io = txn.table.io
        mode = mode_of(self.metadata, MERGE_MODE)
        self.changes = ChangeSet(self.metadata, self.io, mode)
        self.source = builder._source
        self.clauses = MergeClauses(
            self.metadata,
            self.source.schema,
            builder._on,
            builder._clauses,
            case_sensitive=builder._case_sensitive,
            mode=mode,
        )
        self.key_arrays = self.clauses.key_arrays(self.source)
        # Named, so that a duplicate key is reported with its column names.
        self.index = _native.KeyIndex(
            pa.record_batch(self.key_arrays, names=self.clauses.keys), "the merge source"
        )

    def one_file(self, task: Any) -> _FileMerge:
        clauses = self.clauses
        result = _FileMerge(task, [0] * len(clauses.clauses))
        metadata_columns = (meta.POS, *clauses.lineage)
        batches = read_rows(
            self.metadata, self.io, task, None, metadata_columns, apply_residual=False
        )
        for batch in batches:
            if batch.num_rows == 0:
                continue
            target_rows, source_rows = self.index.probe([batch.column(k) for k in clauses.keys])
            out = clauses.apply(batch, target_rows, self.source.take(source_rows))
            result.counts = [a + b for a, b in zip(result.counts, out.counts, strict=True)]
            result.changed = result.changed or out.changed
            if out.removed is not None:
                result.removed.append(out.removed)
            result.new.extend(out.new)
            if out.rows is not None:
                result.rows.append(out.rows)
        return result

    def run(self) -> MergeResult:
        clauses = self.clauses
        stats = None if clauses.by_source else clauses.key_stats(self.key_arrays)
        tasks, prune = clauses.candidates(self.io, self.builder._branch, stats)
        results = in_parallel(self.one_file, tasks)
        changes = self.changes
        counts = [0] * len(clauses.clauses)
        try:
            for result in results:
                counts = [a + b for a, b in zip(counts, result.counts, strict=True)]
                if not result.changed:
                    continue
                if changes.merge_on_read:
                    for positions in result.removed:
                        changes.remove(result.task, positions)
                    for rows, row_ids in result.new:
                        changes.insert(rows, row_ids)
                else:
                    changes.rewrite(result.task.file.file_path, result.rows)
            if clauses.inserting:
                # Source rows with a null key match nothing: they are not matched.
                inserted, inserts = clauses.inserts(self.source.take(self.index.unmatched()))
                counts = [a + b for a, b in zip(counts, inserts, strict=True)]
                for table in inserted:
                    changes.insert(table)
        except BaseException:
            changes.discard()
            raise
        changes.stage(
            self.txn,
            command="merge",
            conflict_filter=prune,
            isolation_property=MERGE_ISOLATION,
            branch=self.builder._branch,
            snapshot_properties=self.builder._snapshot_properties,
            case_sensitive=self.builder._case_sensitive,
        )
        return MergeResult(**clause_counts(clauses.kinds, counts))


def upsert(
    table: Table,
    data: Any,
    join_cols: Sequence[str] | None = None,
    when_matched_update_all: bool = True,
    when_not_matched_insert_all: bool = True,
    case_sensitive: bool = True,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    transaction: Transaction | None = None,
) -> UpsertResult:
    """pyiceberg's ``upsert``: rows of ``data`` whose ``join_cols`` (default: the identifier
    fields) match a table row replace it when their values differ; the others are inserted."""
    schema = (transaction.staged_metadata if transaction is not None else table.metadata).schema()
    if join_cols is None:
        if not schema.identifier_field_ids:
            raise ValidationError(
                "upsert: the table has no identifier fields; give join_cols, or set them "
                "(update_schema().set_identifier_fields(...))"
            )
        join_cols = [schema.find_field(i).name for i in schema.identifier_field_ids]  # type: ignore[union-attr]
    if not when_matched_update_all and not when_not_matched_insert_all:
        raise ValidationError("upsert: with neither updates nor inserts there is nothing to do")
    builder = MergeBuilder(
        table,
        data,
        list(join_cols),
        case_sensitive=case_sensitive,
        branch=branch,
        snapshot_properties=snapshot_properties,
        transaction=transaction,
    )
    if when_matched_update_all:
        builder.when_matched_update()
    if when_not_matched_insert_all:
        builder.when_not_matched_insert()
    result = builder.execute()
    return UpsertResult(result.rows_updated, result.rows_inserted)
