"""Row deltas of new rows and equality deletes by key (Java's ``RowDelta`` with equality delete
files, as Flink's upserts write them; spec: "Equality Delete Files", "Scan Planning").

An equality delete file holds the key columns only (``equality_ids``: their field ids). When
the keys include the source column of every field of the table's default spec, a row's key
fixes its partition, and the deletes are written per partition of that spec (they apply to the
files of their partition only); otherwise they are written under an unpartitioned spec, added
to the table's specs when it has none (a delete file's spec must exist), and apply to every
data file (global deletes). Either way they delete rows written before them: a key deleted and
added again in one delta keeps the new row (the new data file has the delta's sequence number,
which equality deletes do not reach, spec: "Scan Planning")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil.errors import FrazilTypeError, InvalidUpdateError, ValidationError
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table.snapshot._validation import SERIALIZABLE, SNAPSHOT, isolation_level
from frazil.table.snapshot.overwrite import UPDATE_ISOLATION
from frazil.table.snapshot.row_delta import RowDelta
from frazil.types import DoubleType, FloatType, PrimitiveType

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table.transaction import Transaction

__all__ = ["key_field_ids", "stage_row_delta"]


def key_field_ids(
    schema: Schema, key_columns: Sequence[str] | str | None, case_sensitive: bool = True
) -> list[int]:
    """The field ids of ``key_columns`` (default: the schema's identifier fields): top-level
    primitive columns, not float or double (spec: "Float and double columns cannot be used as
    delete columns")."""
    if isinstance(key_columns, str):
        key_columns = [key_columns]
    if key_columns is None:
        if not schema.identifier_field_ids:
            raise ValidationError(
                "no key columns: give key_columns, or set the table's identifier fields "
                "(update_schema().set_identifier_fields(...))"
            )
        ids = list(schema.identifier_field_ids)
    else:
        if not key_columns:
            raise ValidationError("key_columns must name at least one column")
        ids = []
        for name in key_columns:
            if not isinstance(name, str):
                raise FrazilTypeError(f"key columns are column names, got {name!r}")
            field_id = schema.find_field_id(name, case_sensitive)
            if field_id is None:
                raise ValidationError(f"key column {name!r} is not a column of the table")
            ids.append(field_id)
    if len(set(ids)) != len(ids):
        raise ValidationError(f"key columns name a column twice: {key_columns}")
    top = {f.field_id for f in schema.fields}
    for field_id in ids:
        found = schema.find_field(field_id)
        assert found is not None
        if field_id not in top or not isinstance(found.field_type, PrimitiveType):
            raise ValidationError(
                f"key column {found.name!r} must be a top-level primitive column "
                f"(it is {found.field_type})"
            )
        if isinstance(found.field_type, FloatType | DoubleType):
            raise ValidationError(
                f"key column {found.name!r} is a {found.field_type}: float and double columns "
                "cannot be equality delete columns (spec: Equality Delete Files)"
            )
    return ids


def _equality_spec(txn: Transaction, field_ids: Sequence[int]) -> int:
    """The spec the deletes are written under: the default one when every partition source
    column is a key column, else an unpartitioned one (staged into ``txn`` when the table has
    none)."""
    from frazil.table.transaction import BuilderChange
    from frazil.table.updates import AddPartitionSpec

    metadata = txn.staged_metadata
    spec = metadata.spec()
    if spec.is_unpartitioned() or all(
        f.source_id in field_ids for f in spec.fields if f.transform != "void"
    ):
        return spec.spec_id
    for existing in metadata.partition_specs:
        if not existing.fields:
            return existing.spec_id
    txn.add_change(BuilderChange((AddPartitionSpec(PartitionSpec()),), ()))
    for existing in txn.staged_metadata.partition_specs:
        if not existing.fields:
            return existing.spec_id
    raise InvalidUpdateError("the table has no unpartitioned spec after adding one")


def _table(data: Any, what: str) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader) or hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all()
    raise FrazilTypeError(
        f"{what} must be a pyarrow Table, RecordBatch or RecordBatchReader, or an object with "
        f"__arrow_c_stream__; got {type(data).__name__}"
    )


def stage_row_delta(
    txn: Transaction,
    add: Any = None,
    delete_keys: Any = None,
    key_columns: Sequence[str] | str | None = None,
    *,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
    conflict_detection_filter: Expression | str | None = None,
    isolation: str | None = None,
    case_sensitive: bool = True,
) -> RowDelta | None:
    """Stage in ``txn`` one snapshot adding the rows ``add`` and deleting every earlier row
    whose key equals a row of ``delete_keys`` (its ``key_columns``, default the identifier
    fields). Validated as Spark validates a row-level command: against what was committed
    since this call; no delete file that may apply to rows matching
    ``conflict_detection_filter`` (default: every row) added meanwhile, and, under
    serializable ``isolation`` (default: ``write.update.isolation-level``, Java's default
    serializable), no data file that may hold such rows. Returns the staged delta (None when
    there is nothing to commit)."""
    from frazil import expressions
    from frazil.table.snapshot.api import _filter
    from frazil.table.write import write_data_files, write_equality_deletes

    metadata = txn.staged_metadata
    level = isolation_level(
        {UPDATE_ISOLATION: isolation} if isolation is not None else metadata.properties,
        UPDATE_ISOLATION,
    )
    assert level in (SERIALIZABLE, SNAPSHOT)
    keys = None
    field_ids: list[int] = []
    if delete_keys is not None:
        keys = _table(delete_keys, "delete_keys")
        field_ids = key_field_ids(metadata.schema(), key_columns, case_sensitive)
        names = []
        for field_id in field_ids:
            found = metadata.schema().find_field(field_id)
            assert found is not None
            column = _column_named(keys, found.name, case_sensitive)
            names.append(column)
        keys = keys.select(names).rename_columns(
            [metadata.schema().find_field(i).name for i in field_ids]  # type: ignore[union-attr]
        )
    spec_id = _equality_spec(txn, field_ids) if keys is not None and keys.num_rows else None
    metadata = txn.staged_metadata
    io = txn.table.io
    delta = RowDelta(
        metadata,
        io,
        branch=branch,
        snapshot_properties=snapshot_properties,
        case_sensitive=case_sensitive,
    )
    try:
        if keys is not None and keys.num_rows and spec_id is not None:
            for written_spec, file in write_equality_deletes(
                metadata, io, keys, field_ids, spec_id=spec_id
            ):
                delta.add_deletes(file, written_spec, owned=True)
        if add is not None:
            for file in write_data_files(metadata, io, add):
                delta.add_rows(file, owned=True)
        if not delta.changes_anything:
            return None
        row_filter = (
            expressions.AlwaysTrue()
            if conflict_detection_filter is None
            else _filter(conflict_detection_filter)
        )
        delta.conflict_detection_filter(row_filter)
        delta.validate_no_conflicting_delete_files()
        if level == SERIALIZABLE:
            delta.validate_no_conflicting_data_files()
        txn.add_change(delta)
    except BaseException:
        delta.cleanup(False)
        raise
    return delta


def _column_named(keys: pa.Table, name: str, case_sensitive: bool) -> str:
    if name in keys.column_names:
        return name
    if not case_sensitive:
        for column in keys.column_names:
            if str(column).lower() == name.lower():
                return str(column)
    raise ValidationError(
        f"delete_keys has no key column {name!r} (its columns: {', '.join(keys.column_names)})"
    )
