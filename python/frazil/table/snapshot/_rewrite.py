"""Which files a row filter removes, and copy-on-write of the files it only partly covers
(Java's ``ManifestFilterManager`` decisions with Spark's copy-on-write rewrite; spec: "Scan
Planning" for the evaluators).

For each live data file of the branch head: when the strict partition projection or the strict
metrics evaluator proves that every row matches, the file is removed whole; when the inclusive
ones prove that no row can match, it is left alone; otherwise its live rows (delete files
applied) are read with frazil's reader, the matching ones dropped with the reader's row filter,
and the rest written again with the data writer.

In v3 tables the kept rows are read with their ``_row_id`` and
``_last_updated_sequence_number`` (stored or inherited) and written with them (spec: "Row
Lineage": a row moved to a new file unmodified keeps both), as Spark's copy-on-write does. The
new file still gets a ``first_row_id`` when its manifest is committed, and the snapshot's
``added-rows`` and the table's ``next-row-id`` count its rows, as Java counts them; the stored
values take precedence over that inherited range when read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.schema import Schema
from frazil.snapshots import Snapshot
from frazil.table import _metadata_columns as meta
from frazil.table._properties import DELETE_MODE, row_level_mode
from frazil.table._row_filter import compile_filter, filter_columns
from frazil.table.snapshot._files import (
    CONTENT_DATA,
    entry_files,
    live_entries,
    manifest_rows,
    read_entries,
    spec_of,
)
from frazil.table.snapshot._validation import matching
from frazil.table.write._partition import source_column

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table.snapshot._merging import MergingProducer

__all__ = ["remove_rows", "touched_data_files"]


def touched_data_files(
    metadata: TableMetadata,
    head: Snapshot | None,
    row_filter: Expression,
    case_sensitive: bool,
    io: FileIO,
) -> tuple[list[DataFile], list[DataFile]]:
    """(files every row of which matches, files some row of which may match)."""
    whole: list[DataFile] = []
    partial: list[DataFile] = []
    filter_json = json.dumps(row_filter.to_json())
    for manifest in manifest_rows(head, io):
        if int(manifest.get("content") or 0) != CONTENT_DATA:
            continue
        spec = spec_of(metadata, int(manifest["partition_spec_id"]), "a manifest")
        entries = live_entries(read_entries(manifest, io))
        might, must = matching(
            entries, filter_json, metadata, json.dumps(spec.to_json()), case_sensitive
        )
        for file, may, all_rows in zip(entry_files(entries), might, must, strict=True):
            if all_rows:
                whole.append(file)
            elif may:
                partial.append(file)
    return whole, partial


def _kept_rows(
    batches: Iterator[pa.RecordBatch],
    schema: Schema,
    bound: Expression,
    removed: list[int],
) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` that ``bound`` (the filter bound to ``schema``: values of the
    column types, names as the schema spells them) does not match; ``removed[0]`` counts the
    others."""
    compiled = compile_filter(bound, schema)
    for batch in batches:
        if compiled.always is not None:
            mask = pa.array([compiled.always] * batch.num_rows, pa.bool_())
        else:
            columns = [source_column(batch, schema, c.field_id) for c in compiled.columns]
            mask = compiled.evaluate(filter_columns(compiled, columns))
        removed[0] += int(pc.sum(mask).as_py() or 0)
        yield batch.filter(pc.invert(mask))


def remove_rows(
    producer: MergingProducer,
    head: Snapshot | None,
    row_filter: Expression,
    case_sensitive: bool = True,
) -> None:
    """Stage in ``producer`` the removal of every row of ``head`` matching ``row_filter``:
    whole files deleted, partly matching files rewritten (their new files added and owned by
    the producer, so that a failed commit deletes them)."""
    from frazil.expressions import bind
    from frazil.table._table import Table
    from frazil.table.read import read_task, read_task_schema, verify_checksums
    from frazil.table.scan import DataScan
    from frazil.table.write import write_data_files

    metadata, io = producer.base, producer.io
    # Read first, so that a mode that names nothing is refused even when no file is rewritten.
    row_level_mode(metadata.properties, DELETE_MODE)
    # Bound up front so that a filter on a column the table lacks is refused even when no
    # file would be read (an empty table). The rows are tested with the bound filter, whose
    # literals the binder converted to the column types as a scan's are (5.0 against a long
    # column is 5, a date string a day number); the unbound one holds the user's values.
    bound = bind(row_filter, metadata.schema(), case_sensitive)
    whole, partial = touched_data_files(metadata, head, row_filter, case_sensitive, io)
    for file in whole:
        producer.delete_file(file)
    if not partial or head is None:
        return
    wanted = {f.file_path: f for f in partial}
    table = Table(metadata, io=io)
    schema = metadata.schema()
    lineage = meta.ROW_LINEAGE if metadata.format_version >= 3 else ()
    # The planner gives each file with the delete files that apply to it. Planned without the
    # filter: a planner drops the delete files whose rows cannot match the filter (right for
    # reading matching rows), but the rows kept here are those that do not match, and the
    # deletes of every one of them must apply.
    scan = DataScan(table, snapshot_id=head.snapshot_id, _table_schema=True)
    for task in scan.plan_files():
        found = wanted.get(task.file.file_path)
        if found is None:
            continue
        file = found
        removed = [0]
        batches = read_task(
            task,
            schema,
            specs=metadata.specs_by_id,
            io=io,
            name_mapping=metadata.name_mapping(),
            apply_residual=False,
            schemas=metadata.schemas,
            metadata_columns=lineage,
            verify_checksums=verify_checksums(metadata.properties),
            # The writer's uuid type: the rows go back to it, not to a user.
            uuid_type="fixed_size_binary",
        )
        kept = _kept_rows(batches, schema, bound, removed)
        arrow = read_task_schema(schema, metadata_columns=lineage, uuid_type="fixed_size_binary")
        reader = pa.RecordBatchReader.from_batches(arrow, kept)
        new_files: list[DataFile] = []
        try:
            for new in write_data_files(metadata, io, reader, row_lineage=bool(lineage)):
                new_files.append(new)
        except BaseException:
            for new in new_files:
                _delete_quietly(io, new.file_path)
            raise
        if removed[0] == 0:
            # No row matched after all: the file stays, its copy goes.
            for new in new_files:
                _delete_quietly(io, new.file_path)
            continue
        producer.delete_file(file)
        for new in new_files:
            producer.add_file(new, owned=True)


def _delete_quietly(io: FileIO, location: str | None) -> None:
    if location is None:
        return
    try:
        io.delete(location)
    except Exception:
        pass
