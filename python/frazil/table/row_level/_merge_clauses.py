"""A merge's clauses bound to a table and a source schema, and applied to rows: what the local
merge (:mod:`frazil.table.row_level.merge`) and the Spark one (:mod:`frazil.spark.merge`)
share, so that both decide every row alike.

- :class:`Clause`: one ``when_...`` clause as given (plain data: it pickles, for executors).
- :class:`MergeClauses`: the clauses bound to the combined schema (``target`` and ``source``
  structs) of a table's metadata and a source's Arrow schema; :meth:`MergeClauses.apply` takes
  rows of a target data file (with ``_pos`` and the lineage columns) and, for those a source
  row matched, that row, and gives what changes (rows deleted, new versions, the file's rows
  as copy-on-write writes them, the count of each clause); :meth:`MergeClauses.inserts` gives
  the rows the not-matched clauses insert.
- :class:`KeyStats`: what pruning needs of the source's keys (their range and the default
  spec's partition tuples they fall in), computed over any number of pieces and combined;
  :meth:`MergeClauses.candidates` plans the target files they can touch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import expressions as ex
from frazil.errors import FrazilTypeError, ValidationError
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.snapshots import MAIN_BRANCH
from frazil.table import _metadata_columns as meta
from frazil.table._properties import MERGE_ON_READ
from frazil.table._row_filter import compile_filter
from frazil.table.row_level._changes import (
    assigned_values,
    filter_mask,
    lineage_columns,
    rows_changed,
    storage_type,
    type_kind,
)
from frazil.types import NestedField, StructType

if TYPE_CHECKING:
    from frazil.io import FileIO

__all__ = [
    "KINDS",
    "SOURCE",
    "TARGET",
    "BatchChanges",
    "Clause",
    "KeyStats",
    "MergeClauses",
    "clause_counts",
]

SOURCE = "source"
TARGET = "target"
MATCHED_UPDATE = "matched_update"
MATCHED_DELETE = "matched_delete"
NOT_MATCHED_INSERT = "not_matched_insert"
NOT_MATCHED_BY_SOURCE_DELETE = "not_matched_by_source_delete"
KINDS = (MATCHED_UPDATE, MATCHED_DELETE, NOT_MATCHED_INSERT, NOT_MATCHED_BY_SOURCE_DELETE)


@dataclass(frozen=True)
class Clause:
    """One clause as given: its kind, its condition (None: always), its assignments (column ->
    literal or ``col("source.x")`` / ``col("target.x")``; None: every column by name)."""

    kind: str
    condition: ex.Expression | None
    assignments: Mapping[str, Any] | None

    @classmethod
    def of(cls, kind: str, condition: Any, assignments: Mapping[str, Any] | None) -> Clause:
        if kind not in KINDS:
            raise ValidationError(f"merge: unknown clause kind {kind!r}")
        parsed = None if condition is None else _expression(condition)
        values = None if assignments is None else dict(assignments)
        if values is not None and not values:
            raise ValidationError(f"merge: a {kind.replace('_', ' ')} clause needs assignments")
        return cls(kind, parsed, values)

    def portable(self) -> Clause:
        """The clause with column values as plain references (which pickle)."""
        from frazil.expressions.builder import Column

        if self.assignments is None:
            return self
        values = {
            c: ex.Reference(v.name) if isinstance(v, Column) else v
            for c, v in self.assignments.items()
        }
        return Clause(self.kind, self.condition, values)


def _expression(condition: Any) -> ex.Expression:
    return ex.as_expression(condition, "a merge condition")


@dataclass
class _Bound:
    kind: str
    compiled: Any  # the condition compiled against the combined schema (None: always)
    assignments: dict[str, Any] | None  # by the table's column names


@dataclass
class BatchChanges:
    """What the clauses do to a batch of a target file's rows: each clause's count;
    ``changed``: whether any row is deleted or gets new values; merge-on-read, the positions
    (``_pos``) of the rows removed and the new versions of updated rows (with the row ids they
    keep); copy-on-write, the batch's rows as the new file holds them (every row of the batch,
    changed or not)."""

    counts: list[int]
    changed: bool = False
    removed: pa.Array | None = None
    new: list[tuple[pa.Table, pa.Array | None]] = field(default_factory=list)
    rows: pa.Table | None = None


def clause_counts(kinds: Sequence[str], counts: Sequence[int]) -> dict[str, Any]:
    """The fields of a :class:`~frazil.table.row_level.merge.MergeResult`."""
    pairs = tuple(zip(kinds, counts, strict=True))
    return {
        "rows_updated": sum(c for k, c in pairs if k == MATCHED_UPDATE),
        "rows_deleted": sum(c for k, c in pairs if k.endswith("delete")),
        "rows_inserted": sum(c for k, c in pairs if k == NOT_MATCHED_INSERT),
        "clauses": pairs,
    }


class MergeClauses:
    """The clauses of a merge of a source (its Arrow schema) into a table (its metadata), bound
    and checked; built alike on a driver and in an executor."""

    def __init__(
        self,
        metadata: TableMetadata,
        source_schema: pa.Schema,
        on: Sequence[str],
        clauses: Sequence[Clause],
        *,
        case_sensitive: bool,
        mode: str,
    ) -> None:
        from frazil.table._arrow_schema import schema_from_arrow
        from frazil.table.read import read_task_schema

        self.metadata = metadata
        self.schema = metadata.schema()
        self.merge_on_read = mode == MERGE_ON_READ
        self.case_sensitive = cs = case_sensitive
        self.lineage = lineage_columns(metadata)
        self.arrow = read_task_schema(
            self.schema, metadata_columns=self.lineage, uuid_type="fixed_size_binary"
        )
        self.names = [f.name for f in self.schema.fields]
        self.table_arrow = pa.schema([self.arrow.field(n) for n in self.names])
        self.source_schema = source_schema
        source_names = list(source_schema.names)
        # Key columns: target names as the schema spells them, source columns by name.
        self.keys: list[str] = []
        self.source_keys: list[str] = []
        top = {f.field_id for f in self.schema.fields}
        for name in on:
            field_id = self.schema.find_field_id(name, cs)
            if field_id is None or field_id not in top:
                raise ValidationError(f"merge: join column {name!r} is not a column of the table")
            self.keys.append(self._name_of(field_id))
            self.source_keys.append(_source_column(source_names, name, cs))
        self.combined = combined_schema(self.schema, schema_from_arrow(source_schema))
        self.kinds = [c.kind for c in clauses]
        self.clauses: list[_Bound] = []
        for clause in clauses:
            compiled = None
            if clause.condition is not None:
                try:
                    bound = ex.bind(clause.condition, self.combined, cs)
                except ValidationError as error:
                    raise ValidationError(
                        f"merge condition {clause.condition}: {error} (qualify columns as "
                        "source.<column> or target.<column>)"
                    ) from None
                compiled = compile_filter(bound, self.combined)
            assignments: dict[str, Any] | None = None
            if clause.assignments is not None:
                assignments = {self._target_column(c): v for c, v in clause.assignments.items()}
            elif clause.kind in (MATCHED_UPDATE, NOT_MATCHED_INSERT):
                found = {n: _find(source_names, n, cs) for n in self.names}
                missing = [n for n, s in found.items() if s is None]
                if missing and clause.kind == MATCHED_UPDATE:
                    raise ValidationError(
                        f"merge: update of every column needs them all in the source; it lacks "
                        f"{', '.join(missing)}"
                    )
                assignments = {
                    n: ex.Reference(f"{SOURCE}.{s}") for n, s in found.items() if s is not None
                }
            self.clauses.append(_Bound(clause.kind, compiled, assignments))
        # The source keys must compare with the table's: refused now when their types cannot.
        for target_name, source_name in zip(self.keys, self.source_keys, strict=True):
            source_type = source_schema.field(source_name).type
            _cast(pa.array([], source_type), self.arrow.field(target_name).type, source_name)

    @property
    def by_source(self) -> bool:
        """Whether a clause handles table rows no source row matches (every file is read)."""
        return NOT_MATCHED_BY_SOURCE_DELETE in self.kinds

    @property
    def inserting(self) -> bool:
        return NOT_MATCHED_INSERT in self.kinds

    def _name_of(self, field_id: int) -> str:
        found = self.schema.find_field(field_id)
        assert found is not None
        return found.name

    def _target_column(self, name: str) -> str:
        if not isinstance(name, str):
            raise FrazilTypeError(f"merge: assigned columns are named by strings, got {name!r}")
        plain = name[len(TARGET) + 1 :] if name.startswith(f"{TARGET}.") else name
        field_id = self.schema.find_field_id(plain, self.case_sensitive)
        top = {f.field_id: f for f in self.schema.fields}
        if field_id is None or field_id not in top:
            raise ValidationError(f"merge: {name!r} is not a top-level column of the table")
        return top[field_id].name

    # --- keys and the files they can touch -----------------------------------------------------

    def key_arrays(self, source: pa.Table | pa.RecordBatch) -> list[pa.Array]:
        """The source's key columns in the table's key types (a value that cannot be cast is
        an error naming the column)."""
        return [
            _cast(source.column(s), self.arrow.field(t).type, s)
            for t, s in zip(self.keys, self.source_keys, strict=True)
        ]

    def key_stats(self, key_arrays: Sequence[pa.Array]) -> KeyStats:
        """The :class:`KeyStats` of some source rows' keys (:meth:`key_arrays`)."""
        from frazil import transforms
        from frazil.manifest import manifest_entry_schema

        bounds = []
        for values in key_arrays:
            present = pc.drop_null(values)
            if len(present) and _prunable(values.type):
                low, high = pc.min_max(present).values()
                present = pa.array([low.as_py(), high.as_py()], values.type)
            bounds.append(present[:2] if len(present) else present)
        spec = self.metadata.spec()
        key_ids = {self.schema.find_field_id(k) for k in self.keys}
        fields = [f for f in spec.fields if f.source_id in key_ids and f.transform != "void"]
        if not fields:
            return KeyStats(bounds, None, None)
        # The values as a manifest's partition tuples read (a day is a date, not a number).
        entry = manifest_entry_schema(spec.to_json(), self.schema.to_json())
        partition_type = entry.field("data_file").type.field("partition").type
        columns = []
        for f in fields:
            values = key_arrays[self.keys.index(self._name_of(f.source_id))]
            target = partition_type.field(f.name).type
            columns.append(transforms.apply(f.transform, values).cast(target).to_pylist())
        tuples = set(zip(*columns, strict=True))
        return KeyStats(bounds, (spec.spec_id, tuple(f.name for f in fields)), tuples)

    def prune_filter(self, stats: KeyStats) -> ex.Expression:
        """Each key column within the source keys' range (null keys never match)."""
        terms: list[ex.Expression] = []
        for name, values in zip(self.keys, stats.bounds, strict=True):
            if len(values) == 0:
                return ex.AlwaysFalse()
            if not _prunable(values.type):
                continue
            low, high = pc.min_max(values).values()
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

    def candidates(
        self, io: FileIO, branch: str | None, stats: KeyStats | None
    ) -> tuple[list[Any], ex.Expression]:
        """The planned tasks of the branch head's files the merge reads (every file when a
        clause handles unmatched table rows; else those the keys' range and partitions can
        touch: ``stats`` of every source key), and the filter that chose them (the commit's
        conflict detection filter)."""
        from frazil.table.row_level._touched import touched_files
        from frazil.table.snapshot._files import latest_snapshot

        head = latest_snapshot(self.metadata, branch or MAIN_BRANCH)
        if self.by_source or stats is None:
            prune: ex.Expression = ex.AlwaysTrue()
        else:
            prune = self.prune_filter(stats)
        if isinstance(prune, ex.AlwaysFalse):
            return [], prune
        cs = self.case_sensitive
        tasks = touched_files(self.metadata, io, head, prune, cs, whole_files=False).tasks
        if not self.by_source and stats is not None and stats.spec is not None:
            spec_id, field_names = stats.spec
            wanted = stats.partitions or set()
            tasks = [
                t
                for t in tasks
                if t.spec_id != spec_id
                or tuple((t.file.partition or {}).get(n) for n in field_names) in wanted
            ]
        return tasks, prune

    # --- rows ---------------------------------------------------------------------------------

    def _combined(self, target: pa.RecordBatch | pa.Table, source: pa.Table) -> pa.Table:
        """Rows of (target row, its source row) as two struct columns, for conditions."""
        target_struct = pa.StructArray.from_arrays(
            [_plain(target.column(n)) for n in self.names], names=self.names
        )
        source_struct = pa.StructArray.from_arrays(
            [_plain(c) for c in source.columns], names=source.column_names
        )
        return pa.table({TARGET: target_struct, SOURCE: source_struct})

    def _combined_target_only(self, target: pa.RecordBatch | pa.Table) -> pa.Table:
        n = target.num_rows
        target_struct = pa.StructArray.from_arrays(
            [_plain(target.column(c)) for c in self.names], names=self.names
        )
        source_struct = pa.StructArray.from_arrays(
            [pa.nulls(n, storage_type(f.type)) for f in self.source_schema],
            names=self.source_schema.names,
            mask=pa.array([True] * n),
        )
        return pa.table({TARGET: target_struct, SOURCE: source_struct})

    def _combined_source_only(self, source: pa.Table) -> pa.Table:
        n = source.num_rows
        target_struct = pa.StructArray.from_arrays(
            [pa.nulls(n, storage_type(self.table_arrow.field(c).type)) for c in self.names],
            names=self.names,
            mask=pa.array([True] * n),
        )
        source_struct = pa.StructArray.from_arrays(
            [_plain(c) for c in source.columns], names=source.column_names
        )
        return pa.table({TARGET: target_struct, SOURCE: source_struct})

    def _flat(self, target: pa.RecordBatch | pa.Table | None, source: pa.Table, n: int) -> pa.Table:
        """The columns values may name: ``target.x`` and ``source.x``."""
        columns: dict[str, Any] = {}
        if target is not None:
            for name in self.names:
                columns[f"{TARGET}.{name}"] = target.column(name)
        for name in source.column_names:
            columns[f"{SOURCE}.{name}"] = source.column(name)
        return pa.table(columns) if columns else pa.table({"_": pa.nulls(n)})

    def _choose(
        self, kinds: Sequence[str], rows: Callable[[], pa.Table], n: int
    ) -> list[tuple[int, pa.Array]]:
        """For each clause of ``kinds`` in order (by its index), the rows it handles (the first
        whose condition holds); ``rows`` builds the combined rows, only when a condition needs
        them (an upsert has none)."""
        remaining = pa.array([True] * n, pa.bool_())
        out = []
        combined: pa.Table | None = None
        for index, clause in enumerate(self.clauses):
            if clause.kind not in kinds:
                continue
            if clause.compiled is None:
                hit = remaining
            else:
                combined = rows() if combined is None else combined
                hit = pc.and_(remaining, filter_mask(clause.compiled, combined, self.combined))
            out.append((index, hit))
            remaining = pc.and_(remaining, pc.invert(hit))
        return out

    def _values(self, clause: _Bound, target: Any, source: pa.Table, n: int) -> dict[str, pa.Array]:
        assert clause.assignments is not None
        flat = self._flat(target, source, n)
        return {
            column: assigned_values(
                self.schema, column, value, self.arrow.field(column).type, n, flat
            )
            for column, value in clause.assignments.items()
        }

    def apply(self, batch: pa.RecordBatch, target_rows: pa.Array, source: pa.Table) -> BatchChanges:
        """The clauses on ``batch``, live rows of one target data file (the table's columns
        in :attr:`arrow`'s form, ``_pos``, the lineage columns on v3): ``target_rows`` (indices
        into the batch, ascending) are the rows a source row matched, ``source`` those source
        rows (one for each, in the source's schema)."""
        n = batch.num_rows
        out = BatchChanges([0] * len(self.clauses))
        deleted: list[pa.Array] = []  # positions in the batch
        # Updated rows: (positions in the batch, new versions, the row ids they keep).
        updates: list[tuple[pa.Array, pa.Table, pa.Array | None]] = []
        if len(target_rows):
            matched = batch.take(target_rows)
            kinds = (MATCHED_UPDATE, MATCHED_DELETE)
            combined = partial(self._combined, matched, source)
            for index, hit in self._choose(kinds, combined, len(target_rows)):
                if not hit.true_count:
                    continue
                clause = self.clauses[index]
                rows = pc.indices_nonzero(hit)
                if clause.kind == MATCHED_DELETE:
                    out.counts[index] += len(rows)
                    deleted.append(target_rows.take(rows))
                    continue
                old = matched.take(rows)
                values = self._values(clause, old, source.take(rows), len(rows))
                changed = rows_changed([old.column(c) for c in values], list(values.values()))
                if not changed.true_count:
                    continue
                out.counts[index] += changed.true_count
                keep = pc.indices_nonzero(changed)
                old = old.take(keep)
                new = pa.Table.from_arrays(
                    [values[c].take(keep) if c in values else old.column(c) for c in self.names],
                    schema=self.table_arrow,
                )
                row_ids = old.column(meta.ROW_ID) if self.lineage else None
                updates.append((target_rows.take(rows).take(keep), new, row_ids))
        if self.by_source:
            unmatched = pc.indices_nonzero(pc.invert(_marks(target_rows, n)))
            if len(unmatched):
                combined = partial(self._combined_target_only, batch.take(unmatched))
                for index, hit in self._choose(
                    (NOT_MATCHED_BY_SOURCE_DELETE,), combined, len(unmatched)
                ):
                    if hit.true_count:
                        out.counts[index] += hit.true_count
                        deleted.append(unmatched.filter(hit))
        if not deleted and not updates:
            if not self.merge_on_read:
                out.rows = self._as_written(batch, None, [])
            return out
        out.changed = True
        removed = _marks(pa.concat_arrays(deleted) if deleted else None, n)
        if self.merge_on_read:
            gone = removed
            for rows, new, row_ids in updates:
                gone = pc.or_(gone, _marks(rows, n))
                out.new.append((new, row_ids))
            out.removed = batch.column(meta.POS).filter(gone)
        else:
            out.rows = self._as_written(batch, removed, updates)
        return out

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

    def inserts(self, source: pa.Table) -> tuple[list[pa.Table], list[int]]:
        """The rows the not-matched clauses insert for ``source`` (source rows no table row
        matched, null keys among them), as table columns, and each clause's count."""
        counts = [0] * len(self.clauses)
        n = source.num_rows
        if not self.inserting or n == 0:
            return [], counts
        combined = partial(self._combined_source_only, source)
        tables = []
        for index, hit in self._choose((NOT_MATCHED_INSERT,), combined, n):
            if not hit.true_count:
                continue
            picked = pc.indices_nonzero(hit)
            counts[index] += len(picked)
            values = self._values(self.clauses[index], None, source.take(picked), len(picked))
            tables.append(
                pa.Table.from_arrays(
                    [
                        values[c]
                        if c in values
                        else pa.nulls(len(picked), self.table_arrow.field(c).type)
                        for c in self.names
                    ],
                    schema=self.table_arrow,
                )
            )
        return tables, counts


@dataclass
class KeyStats:
    """What pruning needs of source keys: per key column its smallest and largest non-null
    value (or, for a type not pruned by range, one value: an empty array means every key is
    null, so nothing matches); and the tuples of the default spec's fields whose source is a key
    column (``spec``: its id and those fields' names; None: no such field). Pieces of a source
    are combined with :meth:`merge`."""

    bounds: list[pa.Array]
    spec: tuple[int, tuple[str, ...]] | None
    partitions: set[tuple[Any, ...]] | None

    def merge(self, other: KeyStats) -> KeyStats:
        bounds = []
        for mine, theirs in zip(self.bounds, other.bounds, strict=True):
            both = pa.concat_arrays([mine, theirs.cast(mine.type)])
            if len(both) and _prunable(both.type):
                low, high = pc.min_max(both).values()
                both = pa.array([low.as_py(), high.as_py()], both.type)
            bounds.append(both[:2])
        partitions = None
        if self.partitions is not None or other.partitions is not None:
            partitions = (self.partitions or set()) | (other.partitions or set())
        return KeyStats(bounds, self.spec or other.spec, partitions)


def _prunable(arrow_type: pa.DataType) -> bool:
    """Whether key values of this type prune files by their range."""
    return not (pa.types.is_fixed_size_binary(arrow_type) or pa.types.is_boolean(arrow_type))


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


def _find(names: Sequence[str], name: str, case_sensitive: bool) -> str | None:
    if name in names:
        return name
    if not case_sensitive:
        for column in names:
            if str(column).lower() == name.lower():
                return str(column)
    return None


def _source_column(names: Sequence[str], name: str, case_sensitive: bool) -> str:
    found = _find(names, name, case_sensitive)
    if found is None:
        raise ValidationError(
            f"merge: the source has no join column {name!r} (its columns: {', '.join(names)})"
        )
    return found


def _cast(values: Any, arrow_type: pa.DataType, name: str) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    target = storage_type(arrow_type)
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if values.type == target:
        return values
    if type_kind(values.type) != type_kind(target):
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


def combined_schema(target: Schema, source: Schema) -> Schema:
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
