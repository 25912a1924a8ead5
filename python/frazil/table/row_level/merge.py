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
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil import expressions as ex
from frazil.errors import FrazilTypeError, ValidationError
from frazil.schema import Schema
from frazil.snapshots import MAIN_BRANCH
from frazil.table import _metadata_columns as meta
from frazil.table._row_filter import compile_filter
from frazil.table.row_level._changes import (
    MERGE_ISOLATION,
    ChangeSet,
    assigned_values,
    filter_mask,
    mode_of,
    rows_changed,
)
from frazil.table.row_level._changes import (
    type_kind as _kind,
)
from frazil.table.row_level._touched import in_parallel, read_rows, touched_files
from frazil.table.snapshot._files import latest_snapshot
from frazil.types import NestedField, StructType

if TYPE_CHECKING:
    from frazil.table._table import Table
    from frazil.table.transaction import Transaction

__all__ = ["MergeBuilder", "MergeResult", "UpsertResult"]

MERGE_MODE = "write.merge.mode"
SOURCE = "source"
TARGET = "target"


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
class _Clause:
    kind: str  # matched_update, matched_delete, not_matched_insert, not_matched_by_source_delete
    condition: ex.Expression | None
    assignments: dict[str, Any] | None  # column -> value (None: every source column by name)
    count: int = 0
    # The condition bound and compiled against the combined schema (set by the executor).
    compiled: Any = None


@dataclass
class _FileMerge:
    task: Any
    removed: list[pa.Array] = field(default_factory=list)
    new: list[tuple[pa.Table, pa.Array | None]] = field(default_factory=list)
    rows: list[pa.Table] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
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


class MergeBuilder:
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
        self._on = [on] if isinstance(on, str) else list(on)
        if not self._on or not all(isinstance(n, str) for n in self._on):
            raise ValidationError("merge: on= needs one or more column names")
        self._case_sensitive = case_sensitive
        self._branch = branch
        self._snapshot_properties = snapshot_properties
        self._clauses: list[_Clause] = []
        self._done = False

    def _add(
        self, kind: str, condition: Any, assignments: Mapping[str, Any] | None
    ) -> MergeBuilder:
        if self._done:
            raise ValidationError("this merge was already executed")
        parsed = None if condition is None else _expression(condition)
        values = None if assignments is None else dict(assignments)
        if values is not None and not values:
            raise ValidationError(f"merge: a {kind.replace('_', ' ')} clause needs assignments")
        self._clauses.append(_Clause(kind, parsed, values))
        return self

    def when_matched_update(
        self,
        set: Mapping[str, Any] | None = None,
        condition: Any = None,  # Spark's name
    ) -> MergeBuilder:
        """Update matched table rows: ``set`` maps target columns to values (literals,
        ``col("source.x")``, ``col("target.x")``); None assigns every table column from the
        source column of its name (``UPDATE SET *``)."""
        return self._add("matched_update", condition, set)

    def when_matched_delete(self, condition: Any = None) -> MergeBuilder:
        return self._add("matched_delete", condition, None)

    def when_not_matched_insert(
        self, values: Mapping[str, Any] | None = None, condition: Any = None
    ) -> MergeBuilder:
        """Insert source rows without a match: ``values`` maps table columns to values (columns
        left out are null); None inserts every table column from the source column of its name
        (``INSERT *``)."""
        return self._add("not_matched_insert", condition, values)

    def when_not_matched_by_source_delete(self, condition: Any = None) -> MergeBuilder:
        """Delete table rows no source row matches (every file of the table is read)."""
        return self._add("not_matched_by_source_delete", condition, None)

    def execute(self) -> MergeResult:
        """Run the merge as one commit (staged in the transaction it was built in, if any)."""
        if self._done:
            raise ValidationError("this merge was already executed")
        if not self._clauses:
            raise ValidationError("merge: add at least one when_... clause")
        self._done = True
        if self._txn is not None:
            return _Merge(self, self._txn).run()
        with self._table.transaction() as txn:
            result = _Merge(self, txn).run()
        return result


def _expression(condition: Any) -> ex.Expression:
    if isinstance(condition, str):
        return ex.parse(condition)
    if isinstance(condition, ex.Expression):
        return condition
    raise FrazilTypeError(
        f"a merge condition is a filter string or expression, got {type(condition).__name__}"
    )


class _Merge:
    """One execution of a :class:`MergeBuilder` in a transaction."""

    def __init__(self, builder: MergeBuilder, txn: Transaction) -> None:
        from frazil.table._arrow_schema import schema_from_arrow
        from frazil.table.read import read_task_schema

        self.builder = builder
        self.txn = txn
        self.metadata = txn.staged_metadata
        self.io = txn.table.io
        self.schema = self.metadata.schema()
        self.mode = mode_of(self.metadata, MERGE_MODE)
        self.changes = ChangeSet(self.metadata, self.io, self.mode)
        self.lineage = self.changes.lineage
        self.arrow = read_task_schema(
            self.schema, metadata_columns=self.lineage, uuid_type="fixed_size_binary"
        )
        self.names = [f.name for f in self.schema.fields]
        self.table_arrow = pa.schema([self.arrow.field(n) for n in self.names])
        cs = builder._case_sensitive
        source = builder._source
        # Key columns: target names as the schema spells them, source columns by name.
        self.keys: list[str] = []
        self.source_keys: list[str] = []
        for name in builder._on:
            field_id = self.schema.find_field_id(name, cs)
            top = {f.field_id for f in self.schema.fields}
            if field_id is None or field_id not in top:
                raise ValidationError(f"merge: join column {name!r} is not a column of the table")
            target_name = self.schema.find_field(field_id).name  # type: ignore[union-attr]
            self.keys.append(target_name)
            self.source_keys.append(_source_column(source, name, cs))
        self.source = source
        source_schema = schema_from_arrow(source.schema)
        self.combined = _combined_schema(self.schema, source_schema)
        for clause in builder._clauses:
            if clause.condition is not None:
                try:
                    bound = ex.bind(clause.condition, self.combined, cs)
                except ValidationError as error:
                    raise ValidationError(
                        f"merge condition {clause.condition}: {error} (qualify columns as "
                        "source.<column> or target.<column>)"
                    ) from None
                clause.compiled = compile_filter(bound, self.combined)
            if clause.assignments is not None:
                clause.assignments = {
                    self._target_column(c): v for c, v in clause.assignments.items()
                }
            elif clause.kind in ("matched_update", "not_matched_insert"):
                missing = [n for n in self.names if _find(source, n, cs) is None]
                if missing and clause.kind == "matched_update":
                    raise ValidationError(
                        f"merge: update of every column needs them all in the source; it lacks "
                        f"{', '.join(missing)}"
                    )
                clause.assignments = {
                    n: ex.Reference(f"{SOURCE}.{_find(source, n, cs)}")
                    for n in self.names
                    if _find(source, n, cs) is not None
                }
        # The source keys in the table's key types.
        key_columns = []
        for target_name, source_name in zip(self.keys, self.source_keys, strict=True):
            key_columns.append(
                _cast(source.column(source_name), self.arrow.field(target_name).type, source_name)
            )
        self.key_arrays = key_columns
        # Named, so that a duplicate key is reported with its column names.
        self.index = _native.KeyIndex(
            pa.record_batch(key_columns, names=self.keys), "the merge source"
        )

    def _name_of(self, field_id: int) -> str:
        found = self.schema.find_field(field_id)
        assert found is not None
        return found.name

    def _target_column(self, name: str) -> str:
        if not isinstance(name, str):
            raise FrazilTypeError(f"merge: assigned columns are named by strings, got {name!r}")
        plain = name[len(TARGET) + 1 :] if name.startswith(f"{TARGET}.") else name
        field_id = self.schema.find_field_id(plain, self.builder._case_sensitive)
        top = {f.field_id: f for f in self.schema.fields}
        if field_id is None or field_id not in top:
            raise ValidationError(f"merge: {name!r} is not a top-level column of the table")
        return top[field_id].name

    # --- which files ------------------------------------------------------------------------

    def _prune_filter(self) -> ex.Expression:
        """Each key column within the source keys' range (null keys never match)."""
        terms: list[ex.Expression] = []
        for name, values in zip(self.keys, self.key_arrays, strict=True):
            present = pc.drop_null(values)
            if len(present) == 0:
                return ex.AlwaysFalse()
            if pa.types.is_fixed_size_binary(values.type) or pa.types.is_boolean(values.type):
                continue
            low, high = pc.min_max(present).values()
            try:
                terms.append(ex.GreaterThanOrEqual(name, low.as_py()))
                terms.append(ex.LessThanOrEqual(name, high.as_py()))
            except Exception:
                continue  # a key type the filter cannot hold a literal of: no pruning by it
        if not terms:
            return ex.AlwaysTrue()
        out = terms[0]
        for term in terms[1:]:
            out = ex.And(out, term)
        return out

    def _partitions(self) -> tuple[Any, set[tuple[Any, ...]]] | None:
        """The default spec's fields whose source is a key column, and the tuples of those
        fields the source rows have: a table file of that spec whose tuple is not among them
        holds no matching row."""
        from frazil import transforms

        spec = self.metadata.spec()
        key_ids = {self.schema.find_field_id(k) for k in self.keys}
        fields = [f for f in spec.fields if f.source_id in key_ids and f.transform != "void"]
        if not fields:
            return None
        from frazil.manifest import manifest_entry_schema

        # The values as a manifest's partition tuples read (a day is a date, not a number).
        entry = manifest_entry_schema(spec.to_json(), self.schema.to_json())
        partition_type = entry.field("data_file").type.field("partition").type
        columns = []
        for f in fields:
            values = self.key_arrays[self.keys.index(self._name_of(f.source_id))]
            target = partition_type.field(f.name).type
            columns.append(transforms.apply(f.transform, values).cast(target).to_pylist())
        return (spec.spec_id, [f.name for f in fields]), set(zip(*columns, strict=True))

    def _candidates(self) -> tuple[list[Any], ex.Expression]:
        cs = self.builder._case_sensitive
        head = latest_snapshot(self.metadata, self.builder._branch or MAIN_BRANCH)
        by_source = any(c.kind == "not_matched_by_source_delete" for c in self.builder._clauses)
        prune = ex.AlwaysTrue() if by_source else self._prune_filter()
        if isinstance(prune, ex.AlwaysFalse):
            return [], prune
        tasks = touched_files(self.metadata, self.io, head, prune, cs, whole_files=False).tasks
        partitions = None if by_source else self._partitions()
        if partitions is not None:
            (spec_id, field_names), wanted = partitions
            tasks = [
                t
                for t in tasks
                if t.spec_id != spec_id
                or tuple((t.file.partition or {}).get(n) for n in field_names) in wanted
            ]
        return tasks, prune

    # --- one file ----------------------------------------------------------------------------

    def _combined(self, target: pa.RecordBatch | pa.Table, source_rows: pa.Array) -> pa.Table:
        """Rows of (target row, its source row) as two struct columns, for conditions."""
        source = self.source.take(source_rows)
        target_struct = pa.StructArray.from_arrays(
            [_plain(target.column(n)) for n in self.names], names=self.names
        )
        source_struct = pa.StructArray.from_arrays(
            [_plain(c) for c in source.columns], names=source.column_names
        )
        return pa.table({TARGET: target_struct, SOURCE: source_struct})

    def _flat(
        self, target: pa.RecordBatch | pa.Table, source_rows: pa.Array | None, n: int
    ) -> pa.Table:
        """The columns values may name: ``target.x`` and ``source.x``."""
        columns: dict[str, Any] = {}
        if target is not None:
            for name in self.names:
                columns[f"{TARGET}.{name}"] = target.column(name)
        source = self.source.take(source_rows) if source_rows is not None else self.source
        for name in source.column_names:
            columns[f"{SOURCE}.{name}"] = source.column(name)
        return pa.table(columns) if columns else pa.table({"_": pa.nulls(n)})

    def _choose(
        self, kinds: Sequence[str], rows: pa.Table, n: int
    ) -> list[tuple[_Clause, pa.Array]]:
        """For each clause of ``kinds`` in order, the rows it handles (the first whose
        condition holds)."""
        remaining = pa.array([True] * n, pa.bool_())
        out = []
        for clause in self.builder._clauses:
            if clause.kind not in kinds:
                continue
            if clause.compiled is None:
                hit = remaining
            else:
                hit = pc.and_(remaining, filter_mask(clause.compiled, rows, self.combined))
            out.append((clause, hit))
            remaining = pc.and_(remaining, pc.invert(hit))
        return out

    def _values(
        self, clause: _Clause, target: Any, source_rows: pa.Array | None, n: int
    ) -> dict[str, pa.Array]:
        assert clause.assignments is not None
        flat = self._flat(target, source_rows, n)
        return {
            column: assigned_values(
                self.schema, column, value, self.arrow.field(column).type, n, flat
            )
            for column, value in clause.assignments.items()
        }

    def one_file(self, task: Any) -> _FileMerge:
        result = _FileMerge(task, counts=[0] * len(self.builder._clauses))
        position = {id(c): i for i, c in enumerate(self.builder._clauses)}
        by_source = any(c.kind == "not_matched_by_source_delete" for c in self.builder._clauses)
        metadata_columns = (meta.POS, *self.lineage)
        batches = read_rows(
            self.metadata, self.io, task, None, metadata_columns, apply_residual=False
        )
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            target_rows, source_rows = self.index.probe([batch.column(k) for k in self.keys])
            deleted: list[pa.Array] = []  # positions in the batch
            # Updated rows: (positions in the batch, new versions, the row ids they keep).
            updates: list[tuple[pa.Array, pa.Table, pa.Array | None]] = []
            if len(target_rows):
                matched = batch.take(target_rows)
                combined = self._combined(matched, source_rows)
                kinds = ("matched_update", "matched_delete")
                for clause, hit in self._choose(kinds, combined, len(target_rows)):
                    if not hit.true_count:
                        continue
                    rows = pc.indices_nonzero(hit)
                    if clause.kind == "matched_delete":
                        result.counts[position[id(clause)]] += len(rows)
                        deleted.append(target_rows.take(rows))
                        continue
                    old = matched.take(rows)
                    values = self._values(clause, old, source_rows.take(rows), len(rows))
                    changed = rows_changed([old.column(c) for c in values], list(values.values()))
                    if not changed.true_count:
                        continue
                    result.counts[position[id(clause)]] += changed.true_count
                    keep = pc.indices_nonzero(changed)
                    old = old.take(keep)
                    new = pa.Table.from_arrays(
                        [
                            values[c].take(keep) if c in values else old.column(c)
                            for c in self.names
                        ],
                        schema=self.table_arrow,
                    )
                    row_ids = old.column(meta.ROW_ID) if self.lineage else None
                    updates.append((target_rows.take(rows).take(keep), new, row_ids))
            if by_source:
                matched_mask = _marks(target_rows, n)
                unmatched = pc.indices_nonzero(pc.invert(matched_mask))
                if len(unmatched):
                    combined = self._combined_target_only(batch.take(unmatched))
                    by_source_kinds = ("not_matched_by_source_delete",)
                    for clause, hit in self._choose(by_source_kinds, combined, len(unmatched)):
                        if hit.true_count:
                            result.counts[position[id(clause)]] += hit.true_count
                            deleted.append(unmatched.filter(hit))
            if not deleted and not updates:
                if not self.changes.merge_on_read:
                    result.rows.append(self._as_written(batch, None, []))
                continue
            result.changed = True
            removed = _marks(pa.concat_arrays(deleted) if deleted else None, n)
            if self.changes.merge_on_read:
                gone = removed
                for rows, new, row_ids in updates:
                    gone = pc.or_(gone, _marks(rows, n))
                    result.new.append((new, row_ids))
                result.removed.append(batch.column(meta.POS).filter(gone))
            else:
                result.rows.append(self._as_written(batch, removed, updates))
        return result

    def _combined_target_only(self, target: pa.Table) -> pa.Table:
        n = target.num_rows
        target_struct = pa.StructArray.from_arrays(
            [_plain(target.column(c)) for c in self.names], names=self.names
        )
        source_struct = pa.StructArray.from_arrays(
            [pa.nulls(n, _plain_type(f.type)) for f in self.source.schema],
            names=self.source.column_names,
            mask=pa.array([True] * n),
        )
        return pa.table({TARGET: target_struct, SOURCE: source_struct})

    def _as_written(
        self,
        batch: pa.RecordBatch,
        removed: pa.Array | None,
        updates: Sequence[tuple[pa.Array, pa.Table, pa.Array | None]],
    ) -> pa.Table:
        """Copy-on-write: the batch's rows as the new file holds them: removed rows dropped,
        updated rows with their new values (and a null sequence number) in place."""
        columns = {n: batch.column(n) for n in self.names}
        seq = batch.column(meta.LAST_UPDATED_SEQUENCE_NUMBER) if self.lineage else None
        if updates:
            for positions, new, _ in updates:
                for name in self.names:
                    columns[name] = _scatter(columns[name], positions, new.column(name))
                if seq is not None:
                    seq = _scatter(seq, positions, pa.nulls(len(positions), pa.int64()))
        out = [columns[n] for n in self.names]
        if self.lineage:
            out.append(batch.column(meta.ROW_ID))
            out.append(seq)
        table = pa.Table.from_arrays(out, schema=self.arrow)
        if removed is not None and removed.true_count:
            table = table.filter(pc.invert(removed))
        return table

    # --- the whole merge ---------------------------------------------------------------------

    def run(self) -> MergeResult:
        clauses = self.builder._clauses
        tasks, prune = self._candidates()
        results = in_parallel(self.one_file, tasks)
        changes = self.changes
        try:
            for result in results:
                for i, count in enumerate(result.counts):
                    clauses[i].count += count
                if not result.changed:
                    continue
                if changes.merge_on_read:
                    for positions in result.removed:
                        changes.remove(result.task, positions)
                    for rows, row_ids in result.new:
                        changes.insert(rows, row_ids)
                else:
                    changes.rewrite(result.task, result.rows)
            self._insert()
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
        counts = tuple((c.kind, c.count) for c in clauses)
        return MergeResult(
            rows_updated=sum(c.count for c in clauses if c.kind == "matched_update"),
            rows_deleted=sum(c.count for c in clauses if c.kind.endswith("delete")),
            rows_inserted=sum(c.count for c in clauses if c.kind == "not_matched_insert"),
            clauses=counts,
        )

    def _insert(self) -> None:
        inserts = [c for c in self.builder._clauses if c.kind == "not_matched_insert"]
        if not inserts:
            return
        rows = self.index.unmatched()
        # Source rows with a null key match nothing: they are not matched.
        if len(rows) == 0:
            return
        n = len(rows)
        source = self.source.take(rows)
        target_struct = pa.StructArray.from_arrays(
            [pa.nulls(n, _plain_type(self.table_arrow.field(c).type)) for c in self.names],
            names=self.names,
            mask=pa.array([True] * n),
        )
        source_struct = pa.StructArray.from_arrays(
            [_plain(c) for c in source.columns], names=source.column_names
        )
        combined = pa.table({TARGET: target_struct, SOURCE: source_struct})
        for clause, hit in self._choose(("not_matched_insert",), combined, n):
            if not hit.true_count:
                continue
            picked = pc.indices_nonzero(hit)
            clause.count += len(picked)
            values = self._values(clause, None, rows.take(picked), len(picked))
            table = pa.Table.from_arrays(
                [
                    values[c]
                    if c in values
                    else pa.nulls(len(picked), self.table_arrow.field(c).type)
                    for c in self.names
                ],
                schema=self.table_arrow,
            )
            self.changes.insert(table)


def _marks(positions: pa.Array | None, n: int) -> pa.Array:
    """A mask of ``n`` rows with those at ``positions`` set."""
    import numpy as np

    marks = np.zeros(n, dtype=bool)
    if positions is not None and len(positions):
        marks[positions.to_numpy(zero_copy_only=False)] = True
    return pa.array(marks, pa.bool_())


def _scatter(values: pa.Array, positions: pa.Array, new: pa.Array) -> pa.Array:
    """``values`` with ``new[i]`` at ``positions[i]``."""
    import numpy as np

    n = len(values)
    index = np.arange(n, dtype=np.int64)
    index[positions.to_numpy(zero_copy_only=False)] = n + np.arange(len(new), dtype=np.int64)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(new, pa.ChunkedArray):
        new = new.combine_chunks()
    both = pa.concat_arrays([values, new.cast(values.type)])
    return both.take(pa.array(index))


def _plain(values: Any) -> pa.Array:
    """An array without extension types (conditions compare storage values)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values.type, pa.BaseExtensionType):
        return values.storage
    return values


def _plain_type(arrow_type: pa.DataType) -> pa.DataType:
    return arrow_type.storage_type if isinstance(arrow_type, pa.BaseExtensionType) else arrow_type


def _find(source: pa.Table, name: str, case_sensitive: bool) -> str | None:
    if name in source.column_names:
        return name
    if not case_sensitive:
        for column in source.column_names:
            if str(column).lower() == name.lower():
                return str(column)
    return None


def _source_column(source: pa.Table, name: str, case_sensitive: bool) -> str:
    found = _find(source, name, case_sensitive)
    if found is None:
        raise ValidationError(
            f"merge: the source has no join column {name!r} (its columns: "
            f"{', '.join(source.column_names)})"
        )
    return found


def _cast(values: Any, arrow_type: pa.DataType, name: str) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    target = _plain_type(arrow_type)
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if values.type == target:
        return values
    if _kind(values.type) != _kind(target):
        # A key of another kind (a string for a number) is a mistake, not a cast.
        raise ValidationError(
            f"merge: source column {name!r} is {values.type}, the table's key column is "
            f"{target}: give the source the table's type"
        )
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
        raise ValidationError(
            f"merge: source column {name!r} ({values.type}) cannot be compared with the table's "
            f"{target} column: {error}"
        ) from None


def _combined_schema(target: Schema, source: Schema) -> Schema:
    """A schema of two structs, ``target`` (the table's columns, their ids kept) and
    ``source`` (the source's columns, ids after them), that conditions bind to."""
    last = target.highest_field_id()
    counter = iter(range(last + 3, 1 << 31))

    def fresh(f: NestedField) -> NestedField:
        return NestedField(next(counter), f.name, _renumber(f.field_type, counter), False)

    target_fields = tuple(
        NestedField(f.field_id, f.name, f.field_type, False) for f in target.fields
    )
    source_fields = tuple(fresh(f) for f in source.fields)
    return Schema(
        NestedField(last + 1, TARGET, StructType(target_fields), False),
        NestedField(last + 2, SOURCE, StructType(source_fields), False),
    )


def _renumber(field_type: Any, counter: Any) -> Any:
    from frazil.types import ListType, MapType

    if isinstance(field_type, StructType):
        return StructType(
            tuple(
                NestedField(next(counter), f.name, _renumber(f.field_type, counter), f.required)
                for f in field_type.fields
            )
        )
    if isinstance(field_type, ListType):
        return ListType(
            next(counter), _renumber(field_type.element_type, counter), field_type.element_required
        )
    if isinstance(field_type, MapType):
        return MapType(
            next(counter),
            _renumber(field_type.key_type, counter),
            next(counter),
            _renumber(field_type.value_type, counter),
            field_type.value_required,
        )
    return field_type


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
