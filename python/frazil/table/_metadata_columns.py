"""Metadata columns (spec: "Reserved Field IDs"; v3 "Row Lineage"), read on request by name.

``_file``, ``_pos``, ``_spec_id``, ``_partition`` and ``_deleted`` are computed from the task:
``_pos`` is the row's absolute position in its data file (also when row groups are skipped),
``_partition`` the file's partition tuple typed by the table's unified partition type (Java's
``Partitioning.partitionType``: every spec's fields whose source column the schema still has,
by field id, named as the newest spec names them), and ``_deleted`` keeps deleted rows and
flags them instead of dropping them. For v3 tables, ``_row_id`` and
``_last_updated_sequence_number`` are read from the data file where it stores them and
inherited where it does not (a null or a missing column): ``first_row_id + _pos`` and the
file's data sequence number; both are null for a file without ``first_row_id`` (any table
before v3), as Java reads them.

Only these names are metadata columns, and only when the table has no column of that name
(a user column named ``_file`` is data).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import types as t
from frazil.errors import UnknownFieldError, ValidationError
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table._literals import literal, literal_array

_MAX = 2**31 - 1
FILE = "_file"
POS = "_pos"
DELETED = "_deleted"
SPEC_ID = "_spec_id"
PARTITION = "_partition"
ROW_ID = "_row_id"
LAST_UPDATED_SEQUENCE_NUMBER = "_last_updated_sequence_number"

# Field ids as the spec's Reserved Field IDs table and Java's MetadataColumns.
FIELD_IDS = {
    FILE: _MAX - 1,
    POS: _MAX - 2,
    DELETED: _MAX - 3,
    SPEC_ID: _MAX - 4,
    PARTITION: _MAX - 5,
    ROW_ID: _MAX - 107,
    LAST_UPDATED_SEQUENCE_NUMBER: _MAX - 108,
}
ROW_LINEAGE = (ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)
_COMPUTED_TYPES: dict[str, tuple[pa.DataType, bool]] = {
    FILE: (pa.string(), False),
    POS: (pa.int64(), False),
    DELETED: (pa.bool_(), False),
    SPEC_ID: (pa.int32(), False),
    ROW_ID: (pa.int64(), True),
    LAST_UPDATED_SEQUENCE_NUMBER: (pa.int64(), True),
}


def metadata_name(name: str, schema: Schema, case_sensitive: bool = True) -> str | None:
    """The metadata column ``name`` selects (its canonical name), or None: a data column of
    the same name wins, as in Java's engines."""
    canonical = name if case_sensitive else name.lower()
    if canonical not in FIELD_IDS or schema.find_field_id(name, case_sensitive) is not None:
        return None
    return canonical


def split_names(
    names: Sequence[str], schema: Schema, case_sensitive: bool = True
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` split into data column names and metadata column names (each kept once)."""
    data: list[str] = []
    metadata: list[str] = []
    for name in names:
        canonical = metadata_name(name, schema, case_sensitive)
        if canonical is None:
            data.append(name)
        elif canonical not in metadata:
            metadata.append(canonical)
    return tuple(data), tuple(metadata)


def check_names(names: Iterable[str]) -> None:
    for name in names:
        if name not in FIELD_IDS:
            known = ", ".join(FIELD_IDS)
            raise UnknownFieldError(f"{name!r} is not a metadata column (known: {known})")


def unified_partition_type(schema: Schema, specs: Iterable[PartitionSpec]) -> t.StructType:
    """The table's partition type over all its specs (Java's ``Partitioning.partitionType``):
    the fields of every spec whose source column ``schema`` has, sorted by field id, each
    named by the newest spec that has it; a v1 field later made void keeps its real type."""
    by_id: dict[int, tuple[Any, t.NestedField]] = {}
    names: dict[int, str] = {}
    for spec in sorted(specs, key=lambda s: -s.spec_id):
        active = [f for f in spec.fields if schema.find_field(f.source_id) is not None]
        if not active:
            continue
        unknown = [f.name for f in active if not _known_transform(f.transform)]
        if unknown:
            raise ValidationError(
                f"cannot build the table partition type: spec {spec.spec_id} has fields with "
                f"unknown transforms {unknown}"
            )
        spec_type = spec.partition_type(schema)
        types = {f.field_id: f for f in spec_type.fields}
        for f in active:
            struct_field = types[f.field_id]
            existing = by_id.get(f.field_id)
            if existing is None:
                by_id[f.field_id] = (f, struct_field)
                names[f.field_id] = struct_field.name
                continue
            old = existing[0]
            if old.source_id != f.source_id or not _compatible(old.transform, f.transform):
                raise ValidationError(f"conflicting partition fields: {f} and {old}")
            if old.transform == "void" and f.transform != "void":
                by_id[f.field_id] = (f, struct_field)
    return t.StructType(
        tuple(
            t.NestedField(field_id, names[field_id], by_id[field_id][1].field_type, False)
            for field_id in sorted(by_id)
        )
    )


def _known_transform(transform: str) -> bool:
    base = transform.split("[", 1)[0]
    return base in ("identity", "bucket", "truncate", "year", "month", "day", "hour", "void")


def _compatible(a: str, b: str) -> bool:
    # Java: equal transforms, or one of them void (a v1 spec replaces a dropped field by void).
    return a == b or "void" in (a, b)


def arrow_field(name: str, partition_type: pa.DataType | None) -> pa.Field:
    """The Arrow field of metadata column ``name`` (``_partition`` needs the Arrow type of the
    unified partition type)."""
    if name == PARTITION:
        if partition_type is None:  # pragma: no cover - the reader always passes it
            raise ValidationError("_partition needs the table's partition type")
        return pa.field(name, partition_type, True)
    arrow_type, nullable = _COMPUTED_TYPES[name]
    return pa.field(name, arrow_type, nullable)


def lineage_field(name: str) -> t.NestedField:
    """The Iceberg field a data file stores a row lineage column as (optional long)."""
    return t.NestedField(FIELD_IDS[name], name, t.LongType(), False)


@dataclass(frozen=True)
class FileConstants:
    """What the computed metadata columns of one data file hold."""

    location: str
    spec_id: int
    partition: pa.Array | None  # one-row struct of the unified partition type
    first_row_id: int | None
    data_sequence_number: int | None


def partition_row(
    task: Any, spec: PartitionSpec | None, unified: t.StructType, arrow_type: pa.StructType
) -> pa.Array:
    """The file's partition tuple as a one-row struct of the unified type: the fields of the
    file's spec by field id, null for fields of other specs."""
    values: dict[int, Any] = {}
    partition = task.file.partition
    if spec is not None:
        for f in spec.fields:
            if f.name in partition:
                values[f.field_id] = partition[f.name]
    elif partition:
        raise ValidationError(
            f"{task.file.file_path}: _partition needs partition spec {task.spec_id} of the "
            "table (pass specs=)"
        )
    children = []
    for field, arrow_field in zip(unified.fields, arrow_type, strict=True):
        children.append(literal_array(values.get(field.field_id), arrow_field.type))
    if not children:
        return pa.StructArray.from_buffers(arrow_type, 1, [None])
    return pa.StructArray.from_arrays(children, fields=list(arrow_type))


class Positions:
    """Row positions ``start .. start + n`` as int64 arrays, from one shared range (pyarrow
    has no arange; numpy is not a dependency)."""

    def __init__(self) -> None:
        self._base = pa.nulls(0, pa.int64())  # pa.array would import pandas

    def range(self, start: int, length: int) -> pa.Array:
        if len(self._base) < length:
            ones = pa.repeat(literal(1, pa.int64()), length)
            self._base = pc.subtract(pc.cumulative_sum(ones), literal(1, pa.int64()))
        base = self._base.slice(0, length)
        return base if start == 0 else pc.add(base, literal(start, pa.int64()))


def computed(
    name: str,
    constants: FileConstants,
    positions: pa.Array,
    deleted: pa.Array | None,
    stored: pa.Array | None,
) -> pa.Array:
    """Metadata column ``name`` for rows at ``positions`` of a file (``deleted``: their
    delete flags, None when nothing is deleted; ``stored``: a row lineage column as the
    file stores it, None when the file lacks it)."""
    n = len(positions)
    if name == FILE:
        return pa.repeat(literal(constants.location, pa.string()), n)
    if name == POS:
        return positions
    if name == SPEC_ID:
        return pa.repeat(literal(constants.spec_id, pa.int32()), n)
    if name == DELETED:
        return pa.repeat(literal(False, pa.bool_()), n) if deleted is None else deleted
    if name == PARTITION:
        assert constants.partition is not None
        return constants.partition.take(pa.repeat(literal(0, pa.int32()), n))
    if name not in ROW_LINEAGE:  # pragma: no cover - names are checked when the read starts
        raise UnknownFieldError(f"{name!r} is not a metadata column")
    # Row lineage (spec: Row Lineage): a null is inherited from the file's metadata. A file
    # without first_row_id (before v3, or not yet assigned) has no lineage: all null, stored
    # values too, as Java's readers (ParquetValueReaders.rowIds / lastUpdated).
    if constants.first_row_id is None:
        return pa.nulls(n, pa.int64())
    if name == ROW_ID:
        inherited = pc.add(positions, literal(constants.first_row_id, pa.int64()))
    else:
        inherited = pa.repeat(literal(constants.data_sequence_number, pa.int64()), n)
    if stored is None or stored.null_count == n:
        return inherited
    return pc.coalesce(stored, inherited)


def spec_for(task: Any, specs: Mapping[int, PartitionSpec] | None) -> PartitionSpec | None:
    return None if specs is None else specs.get(task.spec_id)
