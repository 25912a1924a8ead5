"""Data file formats for the reader: Parquet, ORC and Avro files opened as one kind of source.

Each source gives the file's Arrow schema with the Iceberg field ids as ``PARQUET:field_id``
field metadata (so that :mod:`frazil.table._arrow_project` plans the projection, evolution and
defaults once for every format), the units of the file a task's byte range owns with the
position of their first row (positions stay absolute for position deletes), and record batches
of the chosen top-level columns:

- Parquet through pyarrow's reader: row groups, owned by the split holding their midpoint (as
  parquet-mr), pruned by the residual from their statistics.
- ORC through pyarrow's ORC reader: stripes, owned by the split holding their first byte (as
  the ORC reader Java uses). pyarrow exposes ORC type attributes as field metadata, so the ids
  come from Java's ``iceberg.id`` attributes; the other attributes tell Iceberg types ORC lacks
  (``iceberg.binary-type`` UUID and FIXED with ``iceberg.length``, ``iceberg.long-type`` TIME),
  which the columns are cast to.
- Avro through frazil's own decoder (``frazil._native.open_avro_data_file``): blocks, owned by
  the split holding their preceding sync marker (as Avro's Java reader); ids from the writer
  schema's ``field-id``, ``element-id``, ``key-id`` and ``value-id``.

A file that cannot be decoded is an :class:`~frazil.errors.InvalidDataError` naming it, raised
here for data, position delete and equality delete files alike (:func:`decoding`). Damage that
decodes without an error is caught where checking is free: Parquet page CRCs (written by
parquet-mr, Iceberg Java's writer, by default; verified for delete files always, for data files
unless ``verify_checksums`` is off), the rows each read decodes against the row counts of the
file's own footer, and the footer's row count against the manifest's ``record_count``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from frazil import _native
from frazil import expressions as ex
from frazil.errors import FrazilError, InvalidDataError
from frazil.io._arrow import open_arrow_file
from frazil.schema import Schema
from frazil.table._arrow_project import FIELD_ID_KEY, FileField
from frazil.table._row_groups import row_group_filter

__all__ = ["DATA_FILE", "DataSource", "decoding", "open_data_file", "read_whole"]

# What a file is, in error messages.
DATA_FILE = "data file"
POSITION_DELETE_FILE = "position delete file"
EQUALITY_DELETE_FILE = "equality delete file"

# (unit: row group, stripe or 0 for Avro, position of its first row, its compressed bytes)
Group = tuple[int, int, int]


class DataSource(Protocol):
    """One open data file."""

    @property
    def num_rows(self) -> int:
        """The rows the file's own metadata says it holds."""
        ...

    @property
    def schema_arrow(self) -> pa.Schema:
        """Top-level columns with ``PARQUET:field_id`` metadata where the file has ids."""
        ...

    def groups(self, start: int, length: int) -> list[Group]:
        """(unit, position of its first row, compressed bytes) for the units the byte range
        owns."""
        ...

    def prune(
        self,
        groups: list[Group],
        residual: ex.Expression,
        table_schema: Schema,
        fields: tuple[FileField, ...],
    ) -> list[Group]:
        """The groups whose rows might match ``residual``."""
        ...

    def iter_batches(
        self,
        batch_size: int,
        row_groups: list[int],
        columns: list[str],
        use_threads: bool,
        whole: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of ``columns`` of consecutive units ``row_groups``. ``whole``: decode the
        units at once rather than batch by batch (less CPU, more memory)."""
        ...

    def __enter__(self) -> DataSource: ...

    def __exit__(self, *exc: object) -> None: ...


@contextmanager
def decoding(location: str, what: str = DATA_FILE) -> Iterator[None]:
    """Turns what pyarrow (or the file's bytes) raise while a file is opened or decoded into
    the one error for it: :class:`InvalidDataError` naming the file and saying what it is.
    Errors that already are frazil's (storage errors among them) pass unchanged."""
    try:
        yield
    except FrazilError:
        raise
    except (pa.ArrowException, OSError) as error:
        # OSError: pyarrow's codecs ("GZipCodec failed"), page CRCs and truncated reads.
        raise InvalidDataError(f"{location}: cannot read the {what}: {error}") from None


def open_data_file(
    file_format: str,
    io: Any,
    location: str,
    *,
    what: str = DATA_FILE,
    record_count: int | None = None,
    verify_checksums: bool = True,
    dictionary_columns: Sequence[str] = (),
) -> DataSource:
    """The file at ``location`` as a source of its ``file_format``; ``what`` it is (a data,
    position delete or equality delete file) names it in errors.

    ``record_count`` (the manifest's; negative means unknown, as in files imported with -1)
    must equal the rows of the file's footer. ``verify_checksums``: check Parquet page CRCs
    where the writer stored them. ``dictionary_columns`` are read dictionary-encoded
    (Parquet)."""
    kind = file_format.upper()
    source: DataSource
    if kind == "PARQUET":
        source = _Parquet(io, location, what, verify_checksums, dictionary_columns)
    elif kind == "ORC":
        source = _Orc(io, location, what)
    elif kind == "AVRO":
        source = _Avro(io, location)
    else:
        raise InvalidDataError(f"{location}: cannot read {what}s of format {file_format!r}")
    if record_count is not None and record_count >= 0:
        with decoding(location, what):
            rows = source.num_rows
        if rows != record_count:
            source.__exit__(None, None, None)
            raise InvalidDataError(
                f"{location}: the {what} holds {rows} rows by its own metadata, its manifest "
                f"entry says record_count {record_count}: the file or the manifest is damaged"
            )
    return source


def read_whole(
    source: DataSource, columns: list[str], batch_size: int = 131072, whole: bool = False
) -> Iterator[pa.RecordBatch]:
    """Every row of ``columns`` of an open source (a delete file, read whole)."""
    groups = source.groups(0, 1 << 62)
    return source.iter_batches(batch_size, [g[0] for g in groups], columns, True, whole)


def _counted(
    batches: Iterator[pa.RecordBatch], expected: int, location: str, what: str, units: str
) -> Iterator[pa.RecordBatch]:
    """``batches``, checked to hold the ``expected`` rows the file's metadata gives ``units``
    (a damaged column chunk header can make a column decode to fewer values, silently)."""
    rows = 0
    with decoding(location, what):
        for batch in batches:
            rows += batch.num_rows
            yield batch
    if rows != expected:
        raise InvalidDataError(
            f"{location}: {units} of the {what} decoded to {rows} rows, its metadata says "
            f"{expected}: the file is damaged"
        )


# --- Parquet -----------------------------------------------------------------------------------


class _Parquet:
    def __init__(
        self,
        io: Any,
        location: str,
        what: str,
        verify_checksums: bool,
        dictionary_columns: Sequence[str],
    ) -> None:
        self._location = location
        self._what = what
        with decoding(location, what):
            self._file = pq.ParquetFile(
                open_arrow_file(io, location),
                pre_buffer=True,
                coerce_int96_timestamp_unit="us",
                # Pages without a CRC are read unchecked (pyarrow's rule).
                page_checksum_verification=verify_checksums,
                read_dictionary=list(dictionary_columns) or None,
            )

    @property
    def num_rows(self) -> int:
        return int(self._file.metadata.num_rows)

    @property
    def schema_arrow(self) -> pa.Schema:
        return self._file.schema_arrow

    def groups(self, start: int, length: int) -> list[Group]:
        """Row groups whose midpoint (first column chunk's start plus half the compressed
        size) lies in the range."""
        metadata = self._file.metadata
        owned = []
        first_row = 0
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            if group.num_columns:
                chunk = group.column(0)
                offset = chunk.data_page_offset
                dictionary = chunk.dictionary_page_offset
                if chunk.has_dictionary_page and dictionary is not None and 0 < dictionary < offset:
                    offset = dictionary
                size = sum(group.column(c).total_compressed_size for c in range(group.num_columns))
                if start <= offset + size // 2 < start + length:
                    owned.append((index, first_row, size))
            first_row += group.num_rows
        return owned

    def prune(
        self,
        groups: list[Group],
        residual: ex.Expression,
        table_schema: Schema,
        fields: tuple[FileField, ...],
    ) -> list[Group]:
        metadata = self._file.metadata
        might_match = row_group_filter(residual, table_schema, fields, metadata)
        return [g for g in groups if might_match(metadata.row_group(g[0]))]

    def iter_batches(
        self,
        batch_size: int,
        row_groups: list[int],
        columns: list[str],
        use_threads: bool,
        whole: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        metadata = self._file.metadata
        expected = sum(metadata.row_group(i).num_rows for i in row_groups)
        units = f"row group {row_groups[0]}" if len(row_groups) == 1 else f"row groups {row_groups}"
        if whole:
            # Decoding the row groups in one call keeps pyarrow's threads on whole column
            # chunks: about a tenth less CPU than batch by batch (benches/bench_read.py).
            with decoding(self._location, self._what):
                table = self._file.read_row_groups(
                    row_groups, columns=columns, use_threads=use_threads
                )
            batches = iter(table.to_batches(max_chunksize=batch_size))
        else:
            batches = self._file.iter_batches(
                batch_size=batch_size,
                row_groups=row_groups,
                columns=columns,
                use_threads=use_threads,
            )
        return _counted(batches, expected, self._location, self._what, units)

    def __enter__(self) -> _Parquet:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def _slices(batch: pa.RecordBatch, batch_size: int) -> Iterator[pa.RecordBatch]:
    for offset in range(0, batch.num_rows, batch_size):
        yield batch.slice(offset, batch_size)


# --- ORC ---------------------------------------------------------------------------------------

ORC_ID = b"iceberg.id"
ORC_BINARY_TYPE = b"iceberg.binary-type"
ORC_LENGTH = b"iceberg.length"
ORC_LONG_TYPE = b"iceberg.long-type"


def _orc_field(field: pa.Field) -> pa.Field:
    """``field`` typed as the Iceberg type its ORC attributes name, its id moved to
    ``PARQUET:field_id``."""
    metadata = field.metadata or {}
    arrow_type = field.type
    if pa.types.is_struct(arrow_type):
        arrow_type = pa.struct(
            [_orc_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)]
        )
    elif pa.types.is_map(arrow_type):
        arrow_type = pa.map_(_orc_field(arrow_type.key_field), _orc_field(arrow_type.item_field))
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = pa.list_(_orc_field(arrow_type.value_field))
    elif pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        binary_type = metadata.get(ORC_BINARY_TYPE)
        if binary_type == b"UUID":
            arrow_type = pa.binary(16)
        elif binary_type == b"FIXED" and metadata.get(ORC_LENGTH, b"").isdigit():
            arrow_type = pa.binary(int(metadata[ORC_LENGTH]))
    elif pa.types.is_int64(arrow_type) and metadata.get(ORC_LONG_TYPE) == b"TIME":
        arrow_type = pa.time64("us")
    kept = {FIELD_ID_KEY: metadata[ORC_ID]} if ORC_ID in metadata else None
    return pa.field(field.name, arrow_type, field.nullable, metadata=kept)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise InvalidDataError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _messages(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message: varints as ints, length-delimited fields
    as bytes; fixed-width fields skipped."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, value
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise InvalidDataError("truncated message")
            yield number, data[pos : pos + size]
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise InvalidDataError(f"unsupported protobuf wire type {wire}")


def orc_stripes(file_tail: bytes) -> list[tuple[int, int, int]]:
    """(offset, number of rows, bytes) of each stripe, from the serialized ORC ``FileTail`` (its
    ``footer``'s ``stripes``: ORC's orc_proto.proto). pyarrow exposes neither."""
    stripes = []
    for number, footer in _messages(file_tail):
        if number != 2 or not isinstance(footer, bytes):
            continue
        for field, stripe in _messages(footer):
            if field != 3 or not isinstance(stripe, bytes):
                continue
            info = {n: v for n, v in _messages(stripe) if isinstance(v, int)}
            size = info.get(2, 0) + info.get(3, 0) + info.get(4, 0)
            stripes.append((info.get(1, 0), info.get(5, 0), size))
    return stripes


class _Orc:
    def __init__(self, io: Any, location: str, what: str) -> None:
        self._location = location
        self._what = what
        with decoding(location, what):
            self._file = orc.ORCFile(open_arrow_file(io, location))
            schema = self._file.schema
        self._schema = pa.schema([_orc_field(schema.field(i)) for i in range(len(schema))])
        self._stripe_rows: list[int] = []

    @property
    def num_rows(self) -> int:
        return int(self._file.nrows)

    @property
    def schema_arrow(self) -> pa.Schema:
        return self._schema

    def groups(self, start: int, length: int) -> list[Group]:
        try:
            stripes = orc_stripes(self._file.reader.serialized_file_tail())
        except ValueError as error:
            raise InvalidDataError(f"{self._location}: corrupt ORC footer: {error}") from None
        if len(stripes) != self._file.nstripes:
            raise InvalidDataError(
                f"{self._location}: ORC footer lists {len(stripes)} stripes, the reader "
                f"{self._file.nstripes}"
            )
        self._stripe_rows = [rows for _, rows, _ in stripes]
        owned = []
        first_row = 0
        for index, (offset, rows, size) in enumerate(stripes):
            if start <= offset < start + length:
                owned.append((index, first_row, size))
            first_row += rows
        return owned

    def prune(
        self,
        groups: list[Group],
        residual: ex.Expression,
        table_schema: Schema,
        fields: tuple[FileField, ...],
    ) -> list[Group]:
        return groups  # no stripe statistics pruning: the residual filters the rows

    def _cast(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` (columns as pyarrow reads them, in the file's order) with the Iceberg
        types of their attributes."""
        target = pa.schema([self._schema.field(name) for name in batch.schema.names])
        if [f.type for f in target] == batch.schema.types:
            return batch
        try:
            return batch.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise InvalidDataError(
                f"{self._location}: ORC columns do not fit their Iceberg type attributes: {error}"
            ) from None

    def iter_batches(
        self,
        batch_size: int,
        row_groups: list[int],
        columns: list[str],
        use_threads: bool,
        whole: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        for index in row_groups:
            if not columns and index < len(self._stripe_rows):
                # pyarrow reads a stripe without columns as no rows: the rows are the
                # footer's (count(), or only columns the file lacks).
                rows = self._stripe_rows[index]
                empty = pa.StructArray.from_buffers(pa.struct([]), rows, [None])
                yield from _slices(pa.RecordBatch.from_struct_array(empty), batch_size)
                continue
            with decoding(self._location, self._what):
                stripe = self._file.read_stripe(index, columns=columns)
            if index < len(self._stripe_rows) and stripe.num_rows != self._stripe_rows[index]:
                raise InvalidDataError(
                    f"{self._location}: stripe {index} of the {self._what} decoded to "
                    f"{stripe.num_rows} rows, its footer says {self._stripe_rows[index]}: the "
                    "file is damaged"
                )
            yield from _slices(self._cast(stripe), batch_size)

    def __enter__(self) -> _Orc:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


# --- Avro --------------------------------------------------------------------------------------


class _Avro:
    def __init__(self, io: Any, location: str) -> None:
        # The Rust decoder's errors name the file already; it reads each block by its count.
        self._file = _native.open_avro_data_file(location, io)
        self._schema: pa.Schema = self._file.schema
        self._range = (0, 0)

    @property
    def num_rows(self) -> int:
        # Block headers only (the whole file is in memory): a count of every block's records.
        return int(self._file.rows_in(0, 1 << 62)[1])

    @property
    def schema_arrow(self) -> pa.Schema:
        return self._schema

    def groups(self, start: int, length: int) -> list[Group]:
        first_row, rows = self._file.rows_in(start, length)
        self._range = (start, length)
        return [(0, first_row, self._file.size)] if rows else []

    def prune(
        self,
        groups: list[Group],
        residual: ex.Expression,
        table_schema: Schema,
        fields: tuple[FileField, ...],
    ) -> list[Group]:
        return groups

    def iter_batches(
        self,
        batch_size: int,
        row_groups: list[int],
        columns: list[str],
        use_threads: bool,
        whole: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        ids = [int(self._schema.field(name).metadata[FIELD_ID_KEY]) for name in columns]
        start, length = self._range
        _, batch = self._file.read(start, length, ids)
        yield from _slices(batch, batch_size)

    def __enter__(self) -> _Avro:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
