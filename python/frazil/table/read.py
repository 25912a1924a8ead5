"""Reading the rows of a scan (issue 11): a reader executes the planner's FileScanTasks, it
never plans again.

:func:`read_task` reads one task on its own (the Spark integration calls it in executors): the
data file's row groups inside the task's byte range (spec: a split owns the row groups whose
midpoint it holds, as parquet-mr's readers), only the columns the projection and the residual
need, chosen by field id; position deletes and deletion vectors applied by absolute row
position; the schema evolved to the projected schema; the residual filter applied.

:func:`scan_batches`, :func:`scan_to_arrow` and :func:`scan_count` serve
:class:`~frazil.table.scan.DataScan`'s ``to_batches``, ``to_arrow`` and ``count``: a bounded
number of files is read at once (scan option ``read.files-in-flight``, default the core count),
in the order the planner gives them.

The rows' Arrow schema (:func:`scan_arrow_schema`) states the Iceberg nullability and gives
uuid columns pyarrow's ``pa.uuid()``, as pyiceberg does; scan option or table property
``read.arrow.uuid-type = fixed_size_binary`` keeps their storage type instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import expressions as ex
from frazil import types as t
from frazil._threads import threads
from frazil.errors import UnknownFieldError, ValidationError
from frazil.io import IOLike, raw
from frazil.name_mapping import NameMapping
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table import _metadata_columns as meta
from frazil.table._arrow_project import (
    FileField,
    file_fields,
    plan_projection,
    required_checks,
)
from frazil.table._arrow_schema import (
    UUID_TYPE_OPTION,
    UUID_TYPES,
    arrow_schema,
    check_uuid_type,
    scan_arrow_schema,
    schema_from_arrow,
)
from frazil.table._deletes import position_deletes
from frazil.table._equality import deleted_mask, equality_deletes
from frazil.table._formats import DATA_FILE, decoding, open_data_file
from frazil.table._literals import with_type
from frazil.table._properties import bool_property
from frazil.table._row_filter import CompiledFilter, compile_filter, filter_columns
from frazil.table._stream import ordered_parallel

if TYPE_CHECKING:
    from frazil.table.scan import DataScan

__all__ = [
    "UUID_TYPES",
    "UUID_TYPE_OPTION",
    "arrow_schema",
    "read_task",
    "read_task_schema",
    "scan_arrow_schema",
    "schema_from_arrow",
    "select_schema",
]

DEFAULT_BATCH_SIZE = 131072
# Streaming (to_batches) bounds what files in flight read ahead of the consumer (see
# frazil.table._stream): the file being consumed at most this many batches ahead ...
BATCHES_AHEAD = 4
# ... and the files behind it while their queued batches stay within this many bytes.
READ_AHEAD_BYTES = 256 << 20
# Row groups read by one Parquet reader call: pyarrow pre-buffers every column chunk of the
# groups of a call, so a call covers consecutive groups up to this many compressed bytes (and
# at least one group), keeping a file's buffered bytes bounded however large the file.
MAX_BYTES_PER_READ = 64 << 20
# Table property (or scan option): verify the CRCs of data files' Parquet pages where the writer
# stored them (parquet-mr, Iceberg Java's writer, does by default). Delete files are always
# verified: a damaged one brings deleted rows back.
PAGE_CHECKSUM_VERIFICATION = "read.parquet.page-checksum-verification.enabled"
VERIFY_CHECKSUMS_DEFAULT = True


# --- projection by name ------------------------------------------------------------------------


def _prune(fields: tuple[t.NestedField, ...], ids: set[int]) -> tuple[t.NestedField, ...]:
    kept = []
    for f in fields:
        if f.field_id in ids:
            kept.append(f)
        else:
            pruned = _prune_type(f.field_type, ids)
            if pruned is not None:
                kept.append(_replace_type(f, pruned))
    return tuple(kept)


def _prune_type(field_type: t.IcebergType, ids: set[int]) -> t.IcebergType | None:
    """``field_type`` with only what ``ids`` select below it (None when nothing), as Java's
    ``PruneColumns``: a selected list element or map value brings all of it; fields selected
    inside a list's element struct or a map's value struct keep only those fields (the map
    keys whole); a map whose key alone is selected is read whole."""
    if isinstance(field_type, t.StructType):
        children = _prune(field_type.fields, ids)
        return t.StructType(children) if children else None
    if isinstance(field_type, t.ListType):
        if field_type.element_id in ids:
            return field_type
        element = _prune_type(field_type.element_type, ids)
        if element is None:
            return None
        return t.ListType(field_type.element_id, element, field_type.element_required)
    if isinstance(field_type, t.MapType):
        if field_type.value_id in ids:
            return field_type
        value = _prune_type(field_type.value_type, ids)
        if value is not None:
            return t.MapType(
                field_type.key_id,
                field_type.key_type,
                field_type.value_id,
                value,
                field_type.value_required,
            )
        if field_type.key_id in ids or _has_any(field_type.key_type, ids):
            return field_type
    return None


def _replace_type(f: t.NestedField, field_type: t.IcebergType) -> t.NestedField:
    return t.NestedField(
        f.field_id, f.name, field_type, f.required, f.doc, f.initial_default, f.write_default
    )


def _has_any(field_type: t.IcebergType, ids: set[int]) -> bool:
    return any(c.field_id in ids or _has_any(c.field_type, ids) for c in field_type.child_fields())


def select_schema(schema: Schema, names: Sequence[str], case_sensitive: bool = True) -> Schema:
    """The schema of the columns ``names`` (Java's ``Schema.select``): ``"*"`` selects all, a
    struct brings all its fields, a nested name (``"location.lat"``, ``"points.element.x"``,
    ``"attrs.value.y"``) brings its parents with only that child, also through lists and map
    values. An unknown name is :class:`UnknownFieldError`."""
    if "*" in names:
        return schema
    ids = set()
    for name in names:
        field_id = schema.find_field_id(name, case_sensitive)
        if field_id is None:
            raise UnknownFieldError(f"cannot select {name!r}: no such column in {schema}")
        ids.add(field_id)
    return Schema(fields=_prune(schema.fields, ids), schema_id=schema.schema_id)


# --- one task ----------------------------------------------------------------------------------


def _runs(groups: list[tuple[int, int, int]], max_bytes: int) -> list[tuple[list[int], int]]:
    """Consecutive row groups read by one reader call (positions stay contiguous within it),
    each call at most ``max_bytes`` compressed unless one group is more."""
    runs: list[tuple[list[int], int]] = []
    run_bytes = 0
    for index, first_row, size in groups:
        if runs and runs[-1][0][-1] == index - 1 and run_bytes + size <= max_bytes:
            runs[-1][0].append(index)
            run_bytes += size
        else:
            runs.append(([index], first_row))
            run_bytes = size
    return runs


def _constants(task: Any, specs: Mapping[int, PartitionSpec] | None) -> dict[int, Any]:
    """Identity partition values by source field id, for columns a data file lacks."""
    partition = task.file.partition
    if not partition:
        return {}
    spec = None if specs is None else specs.get(task.spec_id)
    if spec is None:
        raise ValidationError(
            f"{task.file.file_path}: reading needs partition spec {task.spec_id} of the table "
            "(pass specs=)"
        )
    return {
        f.source_id: partition.get(f.name)
        for f in spec.fields
        if f.transform == "identity" and f.name in partition
    }


def _filter_path(targets: tuple[t.NestedField, ...], field_id: int) -> list[int] | None:
    """Positions from the top-level targets down to ``field_id`` through structs."""
    for i, f in enumerate(targets):
        if f.field_id == field_id:
            return [i]
        if isinstance(f.field_type, t.StructType):
            below = _filter_path(f.field_type.fields, field_id)
            if below is not None:
                return [i, *below]
    return None


def _extra_targets(
    field_ids: Sequence[int],
    projected: Schema,
    table_schema: Schema,
    older: Sequence[Schema],
    location: str,
) -> tuple[tuple[t.NestedField, ...], dict[int, list[int]]]:
    """Top-level fields read only for the filter or equality deletes, and the path of each of
    ``field_ids`` in the projected fields followed by those. A field the projection lacks is
    read with its whole top-level field as the first schema that has it defines it: the scan's
    schema, else the table's others (newest first), which hold a filter column added after an
    older snapshot and an equality field dropped later, also inside a struct."""
    extras: list[t.NestedField] = []
    paths: dict[int, list[int]] = {}
    for field_id in field_ids:
        path = _filter_path(projected.fields, field_id)
        if path is None:
            path = _filter_path(tuple(extras), field_id)
            if path is None:
                for schema in (table_schema, *older):
                    top = _filter_path(schema.fields, field_id)
                    if top is not None:
                        break
                else:
                    raise UnknownFieldError(
                        f"{location}: field id {field_id} is in no schema of the table"
                    )
                source = schema.fields[top[0]]
                # Unique top-level names: a dropped field's name may be reused.
                extras.append(_renamed(source, f"_extra_{len(extras)}"))
                path = [len(extras) - 1, *top[1:]]
            path = [len(projected.fields) + path[0], *path[1:]]
        paths[field_id] = path
    return tuple(extras), paths


def _renamed(f: t.NestedField, name: str) -> t.NestedField:
    return t.NestedField(
        f.field_id, name, f.field_type, False, f.doc, f.initial_default, f.write_default
    )


def _at(arrays: list[pa.Array], path: list[int]) -> pa.Array:
    """A field's values for the filter and equality deletes: null where a parent struct is,
    uuid as its storage (fixed_size_binary(16), which compute functions and the key sets
    take)."""
    values = arrays[path[0]]
    for index in path[1:]:
        values = values.flatten()[index]  # flatten: a null struct makes its fields null
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    return values


def _batch(arrays: list[pa.Array], schema: pa.Schema, num_rows: int) -> pa.RecordBatch:
    if not arrays:  # no columns (count()): a batch that still has its rows
        rows = pa.StructArray.from_buffers(pa.struct([]), num_rows, [None])
        return pa.RecordBatch.from_struct_array(rows)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


@functools.lru_cache(maxsize=4)
def _residual(text: str, filter_schema: Schema) -> tuple[ex.Expression, CompiledFilter]:
    """A task's residual (its JSON text), read with the names and literal types of the schema
    the planner bound the filter to, and compiled. Kept for the next tasks: those of one scan
    mostly share it (all of an unpartitioned table's), and a long filter's (thousands of
    terms) takes a while to read; compiled filters hold no state, so threads share them."""
    residual = ex.from_json(text, filter_schema)
    return residual, compile_filter(residual, filter_schema)


def _partition_types(
    table_schema: Schema, specs: Mapping[int, PartitionSpec] | None, uuid_type: str
) -> tuple[t.StructType, pa.StructType]:
    """The table's unified partition type (``_partition``) and its Arrow type."""
    unified = meta.unified_partition_type(table_schema, () if specs is None else specs.values())
    return unified, pa.struct(list(scan_arrow_schema(Schema(*unified.fields), uuid_type)))


def read_task_schema(
    table_schema: Schema,
    projected_schema: Schema | None = None,
    metadata_columns: Sequence[str] = (),
    specs: Mapping[int, PartitionSpec] | None = None,
    *,
    uuid_type: str = "uuid",
) -> pa.Schema:
    """The Arrow schema of :func:`read_task`'s batches: the projected columns
    (:func:`scan_arrow_schema`: required ones not nullable, uuid as ``uuid_type``), then the
    metadata columns in the order asked."""
    projected = table_schema if projected_schema is None else projected_schema
    meta.check_names(metadata_columns)
    partition_type = (
        _partition_types(table_schema, specs, uuid_type)[1]
        if meta.PARTITION in metadata_columns
        else None
    )
    return pa.schema(
        list(scan_arrow_schema(projected, uuid_type))
        + [meta.arrow_field(name, partition_type) for name in metadata_columns]
    )


def read_task(
    task: Any,
    table_schema: Schema,
    projected_schema: Schema | None = None,
    *,
    specs: Mapping[int, PartitionSpec] | None = None,
    io: IOLike = None,
    name_mapping: NameMapping | None = None,
    apply_residual: bool = True,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    use_threads: bool = True,
    schemas: Sequence[Schema] = (),
    metadata_columns: Sequence[str] = (),
    filter_schema: Schema | None = None,
    whole_row_groups: bool = False,
    verify_checksums: bool = VERIFY_CHECKSUMS_DEFAULT,
    uuid_type: str = "uuid",
) -> Iterator[pa.RecordBatch]:
    """The rows of one :class:`~frazil.table.scan.FileScanTask` as record batches of
    ``projected_schema`` (default ``table_schema``, the schema the scan was planned with),
    followed by ``metadata_columns`` (``_file``, ``_pos``, ``_spec_id``, ``_partition``,
    ``_deleted``, ``_row_id``, ``_last_updated_sequence_number``: see
    :mod:`frazil.table._metadata_columns`; with ``_deleted``, deleted rows are kept and
    flagged). :func:`read_task_schema` gives the batches' schema.

    ``specs`` (the table's partition specs by id) give identity partition values to columns a
    data file lacks and the type of ``_partition``; ``name_mapping`` gives ids to files written
    without them; ``io`` is the table's FileIO (or its properties). ``limit`` stops after that
    many rows. ``schemas`` (the table's other schemas) type equality delete fields dropped from
    ``table_schema``. ``filter_schema`` (default ``table_schema``) is the schema the scan's
    filter was bound to, whose names the task's residual uses: the scan's schema
    (:meth:`~frazil.table.scan.DataScan.schema`: a time-travel scan's snapshot schema).

    ``whole_row_groups``: decode each run of Parquet row groups (at most
    ``MAX_BYTES_PER_READ`` compressed) in one call, for callers that keep every batch anyway
    (``to_arrow``): less CPU, but the run's decoded columns are held at once.

    ``verify_checksums``: check the CRCs of the data file's Parquet pages where its writer
    stored them (table property or scan option ``read.parquet.page-checksum-verification.enabled``);
    delete files are always checked. A file that cannot be decoded, or whose rows disagree with
    its footer or its manifest entry's ``record_count``, is an :class:`InvalidDataError` naming
    it.

    ``uuid_type``: the Arrow type of uuid columns, ``"uuid"`` (pyarrow's ``pa.uuid()``, as
    pyiceberg reads them) or ``"fixed_size_binary"`` (its storage, ``fixed_size_binary(16)``).
    Required columns are not nullable in the batches' schema; a data file holding a null
    where the schema requires a value is refused (:class:`InvalidDataError`)."""
    projected = table_schema if projected_schema is None else projected_schema
    filter_schema = table_schema if filter_schema is None else filter_schema
    metadata_columns = tuple(metadata_columns)
    location = task.file.file_path
    full_schema = read_task_schema(
        table_schema, projected, metadata_columns, specs, uuid_type=uuid_type
    )
    residual, compiled = _residual(task.residual_json if apply_residual else "true", filter_schema)
    if compiled.always is False or limit == 0:
        return
    deletes = position_deletes(task, raw(io))
    equality = equality_deletes(task, raw(io), [table_schema, *schemas])
    needed = [c.field_id for c in compiled.columns] + [i for g in equality for i in g.field_ids]
    extras, paths = _extra_targets(needed, projected, table_schema, schemas, location)
    out_schema = scan_arrow_schema(projected, uuid_type)
    required = required_checks(out_schema)
    extra_schema = arrow_schema(Schema(fields=extras)) if extras else pa.schema([])
    # Row lineage columns a file may store (spec: Row Lineage) are read after the extras.
    lineage = tuple(meta.lineage_field(n) for n in metadata_columns if n in meta.ROW_LINEAGE)
    lineage_at = {f.name: len(projected.fields) + len(extras) + i for i, f in enumerate(lineage)}
    lineage_schema = [meta.arrow_field(f.name, None) for f in lineage]
    keep_deleted = meta.DELETED in metadata_columns
    constants = None
    if metadata_columns:
        partition = None
        if meta.PARTITION in metadata_columns:
            unified, arrow_type = _partition_types(table_schema, specs, uuid_type)
            partition = meta.partition_row(task, meta.spec_for(task, specs), unified, arrow_type)
        constants = meta.FileConstants(
            location,
            task.spec_id,
            partition,
            task.file.first_row_id,
            task.file.data_sequence_number,
        )
    ranges = meta.Positions() if metadata_columns else None
    # Parquet, ORC or Avro: each gives its columns with field ids (see _formats).
    source = open_data_file(
        str(task.file.file_format),
        raw(io),
        location,
        record_count=task.file.record_count,
        verify_checksums=verify_checksums,
    )
    with source:
        fields: tuple[FileField, ...] = file_fields(source.schema_arrow, location, name_mapping)
        projection = plan_projection(
            fields,
            projected.fields + extras + lineage,
            pa.schema(list(out_schema) + list(extra_schema) + lineage_schema),
            location,
            _constants(task, specs),
        )
        groups = source.groups(task.start, task.length)
        if compiled.always is None and groups:
            groups = source.prune(groups, residual, filter_schema, fields)
        produced = 0
        for run, first_row in _runs(groups, MAX_BYTES_PER_READ):
            position = first_row
            # The source names the file in its own errors; this covers what the rows of a
            # damaged file make the projection and the deletes raise.
            with decoding(location, DATA_FILE):
                batches = source.iter_batches(
                    batch_size=batch_size,
                    row_groups=run,
                    columns=list(projection.columns),
                    use_threads=use_threads,
                    whole=whole_row_groups,
                )
                for batch in batches:
                    start, position = position, position + batch.num_rows
                    positions = None
                    flags = None  # rows deleted, when deleted rows are kept (_deleted)
                    if constants is not None and ranges is not None:
                        # Positions stay absolute: a run starts at its first group's row.
                        positions = ranges.range(start, batch.num_rows)
                        if deletes is not None:
                            flags = deletes.deleted_mask(start, batch.num_rows)
                            if not keep_deleted:
                                kept = pc.invert(flags)
                                batch, positions, flags = (
                                    batch.filter(kept),
                                    positions.filter(kept),
                                    None,
                                )
                    elif deletes is not None:
                        batch = deletes.apply(batch, start)
                    if batch.num_rows == 0:
                        continue
                    arrays = projection.apply(batch)
                    num_rows = batch.num_rows
                    mask = None
                    for group in equality:
                        keys = [_at(arrays, paths[i]) for i in group.field_ids]
                        deleted = deleted_mask(group, keys)
                        if keep_deleted:
                            flags = deleted if flags is None else pc.or_(flags, deleted)
                            continue
                        kept = pc.invert(deleted)
                        mask = kept if mask is None else pc.and_(mask, kept)
                    if compiled.always is None:
                        columns = [_at(arrays, paths[c.field_id]) for c in compiled.columns]
                        matches = compiled.evaluate(filter_columns(compiled, columns))
                        mask = matches if mask is None else pc.and_(mask, matches)
                    columns_out = arrays[: len(out_schema)]
                    if constants is not None:
                        assert positions is not None
                        columns_out = columns_out + [
                            meta.computed(
                                name,
                                constants,
                                positions,
                                flags,
                                arrays[lineage_at[name]] if name in lineage_at else None,
                            )
                            for name in metadata_columns
                        ]
                    if mask is not None:
                        columns_out = [a.filter(mask) for a in columns_out]
                        num_rows = mask.true_count
                    for index, check in required:
                        # The schema says no value is null: a file that has one is invalid.
                        check(columns_out[index], location)
                    out = _batch(columns_out, full_schema, num_rows)
                    if out.num_rows == 0:
                        continue
                    if limit is not None and produced + out.num_rows >= limit:
                        yield out.slice(0, limit - produced)
                        return
                    produced += out.num_rows
                    yield out


# --- scans -------------------------------------------------------------------------------------


def uuid_type(scan: DataScan) -> str:
    """The scan's Arrow type for uuid columns: its option ``read.arrow.uuid-type``, else the
    table property of that name, else ``"uuid"`` (pyarrow's ``pa.uuid()``)."""
    if UUID_TYPE_OPTION in scan.options:
        return check_uuid_type(scan.options[UUID_TYPE_OPTION], f"option {UUID_TYPE_OPTION!r}")
    return table_uuid_type(scan.table.properties)


def table_uuid_type(properties: Mapping[str, str]) -> str:
    """The Arrow type for uuid columns a table's properties choose (``read.arrow.uuid-type``,
    default ``"uuid"``): for scans without the option and the metadata tables."""
    value = properties.get(UUID_TYPE_OPTION)
    if value is None:
        return "uuid"
    return check_uuid_type(value, f"table property {UUID_TYPE_OPTION!r}")


def _files_in_flight(scan: DataScan) -> int:
    value = scan.options.get(
        "read.files-in-flight", scan.table.properties.get("read.files-in-flight")
    )
    if value is None:
        return threads()
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = 0
    if count < 1:
        raise ValidationError(
            f"option 'read.files-in-flight' must be an integer >= 1, got {value!r}"
        )
    return count


def verify_checksums(
    properties: Mapping[str, str], options: Mapping[str, Any] | None = None
) -> bool:
    """``read.parquet.page-checksum-verification.enabled``: the scan option, else the table
    property, else the default: on, since it costs about 2.5% more CPU reading Java-written
    data, whose every page has a CRC (benches/bench_read.py's tables, by instruction count)."""
    value = None if options is None else options.get(PAGE_CHECKSUM_VERIFICATION)
    if value is None:
        value = properties.get(PAGE_CHECKSUM_VERIFICATION)
    if isinstance(value, bool):
        return value
    if value is not None and not isinstance(value, str):
        raise ValidationError(
            f"option {PAGE_CHECKSUM_VERIFICATION} must be true or false, got {value!r}"
        )
    return bool_property(
        {} if value is None else {PAGE_CHECKSUM_VERIFICATION: value},
        PAGE_CHECKSUM_VERIFICATION,
        VERIFY_CHECKSUMS_DEFAULT,
    )


def projected_schema(scan: DataScan) -> Schema:
    """The schema of the data columns a scan returns: its selected fields of the scan's
    schema (metadata columns, which no schema holds, are in :func:`metadata_columns`)."""
    schema = scan.schema()
    try:
        names, _ = meta.split_names(scan.selected_fields, schema, scan.case_sensitive)
        if not names and scan.selected_fields:
            return Schema(fields=(), schema_id=schema.schema_id)
        return select_schema(schema, names, scan.case_sensitive)
    except UnknownFieldError as error:
        # A time-travel scan selects from its snapshot's schema: say so.
        raise UnknownFieldError(scan._unknown_column_message(str(error))) from None


def metadata_columns(scan: DataScan) -> tuple[str, ...]:
    """The metadata columns a scan selects, in the order selected (after the data columns)."""
    _, names = meta.split_names(scan.selected_fields, scan.schema(), scan.case_sensitive)
    return names


def scan_schema(scan: DataScan) -> pa.Schema:
    """The Arrow schema of a scan's rows: data columns, then metadata columns."""
    return read_task_schema(
        scan.schema(),
        projected_schema(scan),
        metadata_columns(scan),
        scan.table.specs(),
        uuid_type=uuid_type(scan),
    )


def _reader(
    scan: DataScan, projected: Schema, metadata: tuple[str, ...], whole_row_groups: bool
) -> Callable[[Any], Iterator[pa.RecordBatch]]:
    """Reads one task of ``scan``; the table's specs, name mapping and schemas are looked up
    once per scan, not per file."""
    table = scan.table
    schema = scan.schema()
    options: dict[str, Any] = {
        "specs": table.specs(),
        "io": table.io,
        "name_mapping": table.name_mapping(),
        "limit": scan.limit,
        "schemas": sorted(table.schemas().values(), key=lambda s: -s.schema_id),
        "metadata_columns": metadata,
        # The scan's schema binds its filter too (DataScan._build_raw), so residuals name
        # its columns: read_task's default filter_schema.
        "whole_row_groups": whole_row_groups,
        "verify_checksums": verify_checksums(table.properties, scan.options),
        "uuid_type": uuid_type(scan),
    }
    return lambda task: read_task(task, schema, projected, **options)


def _batches(
    scan: DataScan,
    projected: Schema,
    tasks: Iterable[Any] | None = None,
    metadata: tuple[str, ...] = (),
    budget: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of ``tasks`` (default: the scan's plan) in plan order, at most
    ``read.files-in-flight`` files read at once, stopping at the scan's limit. With a
    ``budget``, the batches read ahead of the consumer stay within it (and ``BATCHES_AHEAD``
    of the file being consumed), so memory stays bounded however large the files."""
    limit = scan.limit
    if limit == 0:
        return
    # Without a budget the caller keeps every batch (to_arrow): row groups are decoded a run
    # at a time, and batch sizes are not needed.
    read = _reader(scan, projected, metadata, whole_row_groups=budget is None)
    planned = scan._read_tasks() if tasks is None else tasks
    sources = (functools.partial(read, task) for task in planned)
    produced = 0
    size_of: Callable[[pa.RecordBatch], int] = (
        (lambda _: 1) if budget is None else (lambda batch: batch.nbytes)
    )
    stream = ordered_parallel(sources, _files_in_flight(scan), BATCHES_AHEAD, budget, size_of)
    for batch in stream:
        if limit is not None and produced + batch.num_rows >= limit:
            yield batch.slice(0, limit - produced)
            return
        produced += batch.num_rows
        yield batch


def scan_batches(scan: DataScan) -> pa.RecordBatchReader:
    """A stream of the scan's rows, read while consumed, with bounded read-ahead."""
    projected = projected_schema(scan)
    # The filter is bound now: a column the scan's schema lacks is refused by to_batches(),
    # not at the first batch read.
    scan._raw()
    batches = _batches(scan, projected, metadata=metadata_columns(scan), budget=READ_AHEAD_BYTES)
    return pa.RecordBatchReader.from_batches(scan_schema(scan), batches)


def scan_to_arrow(scan: DataScan) -> pa.Table:
    """The scan's rows as one table (with the projected schema, also when empty)."""
    projected = projected_schema(scan)
    batches = list(_batches(scan, projected, metadata=metadata_columns(scan)))
    schema = scan_schema(scan)
    if not batches:
        # One empty chunk per column, not none: pyarrow cannot make an empty array of a
        # nested extension type (struct<u: uuid>) when asked to combine zero chunks.
        batches = [pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)]
    return pa.Table.from_batches(batches, schema=schema)


def pandas_ready(table: pa.Table) -> pa.Table:
    """``table`` as pyarrow's pandas conversion takes it: a uuid column (``pa.uuid()``) becomes
    ``uuid.UUID`` values, but pyarrow converts no list of uuids nor of fixed_size_binary, so
    uuid and fixed values inside structs, lists and maps are handed over as bytes."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        target = _pandas_type(field.type, nested=False)
        if target == field.type:
            columns.append(column)
        else:
            chunks = [with_type(chunk, target) for chunk in column.chunks]
            columns.append(pa.chunked_array(chunks, type=target))
    fields = [f.with_type(c.type) for f, c in zip(table.schema, columns, strict=True)]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))


def _pandas_type(arrow_type: pa.DataType, nested: bool) -> pa.DataType:
    if isinstance(arrow_type, pa.BaseExtensionType) or pa.types.is_fixed_size_binary(arrow_type):
        return pa.binary() if nested else arrow_type
    if pa.types.is_struct(arrow_type):
        return pa.struct([f.with_type(_pandas_type(f.type, True)) for f in arrow_type])
    if pa.types.is_list(arrow_type):
        element = arrow_type.value_field
        return pa.list_(element.with_type(_pandas_type(element.type, True)))
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return pa.map_(
            key.with_type(_pandas_type(key.type, True)),
            item.with_type(_pandas_type(item.type, True)),
        )
    return arrow_type


def scan_count(scan: DataScan) -> int:
    """The number of rows the scan returns: a file's record count when no delete file and no
    residual filter applies to it, else the rows read from it."""
    total = 0
    to_read = []
    for task in scan._read_tasks():
        # The residual's JSON, not the expression: a long filter's residual is costly to read.
        if task.delete_files or task.residual_json != "true":
            to_read.append(task)
        else:
            total += task.file.record_count
        if scan.limit is not None and total >= scan.limit:
            return scan.limit
    if to_read:
        empty = Schema(fields=(), schema_id=scan.schema().schema_id)
        total += sum(b.num_rows for b in _batches(scan, empty, to_read))
    return total if scan.limit is None else min(total, scan.limit)
