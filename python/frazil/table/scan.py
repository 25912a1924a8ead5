"""Scans of a table (spec: "Scan Planning"): which data files a query reads, with their delete
files and residual filters.

Planning runs in Rust with the GIL released: the manifest list is read and pruned by partition
summaries, the delete manifests are indexed, and the data manifests are decoded in parallel and
streamed out as :class:`FileScanTask` objects, lazy views of the decoded manifests. Scans of
one table metadata object share its parsed schema and specs and the decoded manifest lists of
the snapshots they plan (frazil.table._planning; a refresh or commit brings a new metadata
object, so nothing goes stale)::

    scan = table.scan(row_filter="ts >= '2024-01-01T00:00:00+00:00' AND id < 100")
    for task in scan.plan_files():
        task.file.file_path, [d.file_path for d in task.delete_files], task.residual

A snapshot chosen by id, by time or by tag is read with that snapshot's schema: the filter,
the selected columns and the rows use its column names (Java's ``SnapshotUtil.schemaFor``;
Java binds the filter so since apache/iceberg#13301); the current state and a branch use the
table's current schema (:meth:`DataScan.schema`).

Options (``scan(options={...})`` or table properties of the same name):

- ``threads``: manifest decoding threads (default: one per core; 1 decodes on the planner
  thread only);
- ``include-column-stats``: keep files' column metrics in the tasks (default false, as Java's
  scans; metrics are still used for pruning);
- ``read.split.target-size``, ``read.split.planning-lookback``, ``read.split.open-file-cost``:
  how :meth:`DataScan.plan_tasks` splits and packs files, as Java's table scan does;
- ``read.data-planning-mode``, ``read.delete-planning-mode``: ``auto``, ``local`` or
  ``distributed``, read by :mod:`frazil.spark.planning` (the scan's own methods plan locally).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from frazil import _native
from frazil.errors import (
    FrazilError,
    FrazilTypeError,
    NotFoundError,
    UnknownFieldError,
    ValidationError,
)
from frazil.io import raw
from frazil.schema import Schema
from frazil.snapshots import MAIN_BRANCH, Snapshot
from frazil.table._planning import filter_from_text, planning
from frazil.table._table import timestamp_ms

if TYPE_CHECKING:
    from frazil.expressions import Expression
    from frazil.table._table import Table

FileScanTask = _native.FileScanTask
DataFile = _native.DataFile

__all__ = ["CombinedScanTask", "DataFile", "DataScan", "FileScanTask", "file_scan_task_from_json"]

_TRUE_WORDS = ("true", "1", "yes")
# The column a binding or selection error names (frazil.expressions' binder in Rust, and
# frazil.table.read.select_schema).
_UNKNOWN_NAME = re.compile(r"""(?:cannot find column|cannot select) ["']([^"']+)["']""")


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (*_TRUE_WORDS, "false", "0", "no"):
        return value.strip().lower() in _TRUE_WORDS
    raise ValidationError(f"option {name!r} must be a boolean, got {value!r}")


def _as_int(value: Any, name: str, minimum: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValidationError(f"option {name!r} must be an integer, got {value!r}") from None
    if isinstance(value, float) and number != value:
        raise ValidationError(f"option {name!r} must be an integer, got {value!r}")
    if isinstance(value, bool) or number < minimum:
        raise ValidationError(f"option {name!r} must be an integer >= {minimum}, got {value!r}")
    return number


def _describe_ms(ms: int) -> str:
    when = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    return f"{ms} ms ({when.isoformat()})"


def _expression(row_filter: Expression | str | None) -> Expression:
    from frazil import expressions

    if row_filter is None:
        return expressions.AlwaysTrue()
    if isinstance(row_filter, str):
        return filter_from_text(row_filter)[0]
    if isinstance(row_filter, expressions.Expression):
        return row_filter
    raise FrazilTypeError(
        f"row_filter must be a frazil expression or its text form, got {type(row_filter).__name__}"
    )


def _optional_module(name: str, method: str) -> Any:
    """An optional engine's module, or a FrazilError saying how to get it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise FrazilError(
            f"DataScan.{method}() needs the {name!r} package, which is not installed: "
            f"pip install {name}"
        ) from None


# What a scan is made of (DataScan's arguments after the table), as update() takes them.
_SCAN_ARGUMENTS = (
    "row_filter",
    "selected_fields",
    "case_sensitive",
    "snapshot_id",
    "options",
    "limit",
    "ref",
    "as_of",
)


@dataclass(frozen=True)
class CombinedScanTask:
    """File scan tasks read together (Java's ``CombinedScanTask``): pieces of large files split
    at their split offsets, and small files packed up to the target split size."""

    tasks: tuple[Any, ...]

    @property
    def length(self) -> int:
        return sum(t.length for t in self.tasks)


class DataScan:
    """A scan of a table's data files. Immutable: ``filter``, ``select`` and ``use_ref`` return
    new scans."""

    def __init__(
        self,
        table: Table,
        row_filter: Expression | str | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        case_sensitive: bool = True,
        snapshot_id: int | None = None,
        options: Mapping[str, Any] | None = None,
        limit: int | None = None,
        *,
        ref: str | None = None,
        as_of: int | dt.datetime | None = None,
        _table_schema: bool = False,
    ) -> None:
        chosen = [
            name
            for name, v in (("snapshot_id", snapshot_id), ("ref", ref), ("as_of", as_of))
            if v is not None
        ]
        if len(chosen) > 1:
            raise ValidationError(f"give at most one of snapshot_id, ref and as_of, not {chosen}")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise ValidationError(f"limit must be a non-negative integer, got {limit!r}")
        self.table = table
        # The filter's expression JSON for the planner: a text filter's is kept with its parse.
        self._filter_json: str | None = None
        if isinstance(row_filter, str):
            self.row_filter, self._filter_json = filter_from_text(row_filter)
        else:
            self.row_filter = _expression(row_filter)
        self.selected_fields = tuple(selected_fields)
        self.case_sensitive = bool(case_sensitive)
        self.snapshot_id = snapshot_id
        self.ref = ref
        self.as_of = as_of
        self.limit = limit
        self.options: dict[str, Any] = dict(options or {})
        # Writers plan a branch head with the table's current schema, as Java's snapshot
        # producers do (frazil.table.snapshot._rewrite): not a user option.
        self._table_schema = bool(_table_schema)
        self._snapshot = self._resolve_snapshot()

    def _copy(self, **changes: Any) -> DataScan:
        arguments: dict[str, Any] = {
            "row_filter": self.row_filter,
            "selected_fields": self.selected_fields,
            "case_sensitive": self.case_sensitive,
            "snapshot_id": self.snapshot_id,
            "ref": self.ref,
            "as_of": self.as_of,
            "limit": self.limit,
            "options": self.options,
        }
        arguments.update(changes)
        return DataScan(self.table, **arguments, _table_schema=self._table_schema)

    def filter(self, expr: Expression | str) -> DataScan:
        """This scan with ``expr`` ANDed to its filter (pyiceberg's parameter name)."""
        from frazil.expressions import And

        return self._copy(row_filter=And(self.row_filter, _expression(expr)))

    def select(self, *field_names: str) -> DataScan:
        return self._copy(selected_fields=tuple(field_names))

    def update(self, **overrides: Any) -> DataScan:
        """This scan with the given constructor arguments replaced (pyiceberg's
        ``update``): ``scan.update(limit=10)``."""
        unknown = sorted(set(overrides) - set(_SCAN_ARGUMENTS))
        if unknown:
            raise FrazilTypeError(
                f"DataScan.update() got unknown argument(s) {unknown} "
                f"(known: {', '.join(_SCAN_ARGUMENTS)})"
            )
        return self._copy(**overrides)

    def use_ref(self, name: str) -> DataScan:
        """This scan at the head of a branch or at a tag. A scan that already chose a snapshot
        (by id, time or another ref) is refused, as Java's and pyiceberg's ``useRef``: the
        earlier choice is never silently dropped."""
        chosen = [
            f"{what}={value!r}"
            for what, value in (
                ("snapshot_id", self.snapshot_id),
                ("as_of", self.as_of),
                ("ref", self.ref),
            )
            if value is not None
        ]
        if chosen:
            raise ValidationError(
                f"cannot use ref {name!r}: this scan already reads {', '.join(chosen)}"
            )
        return self._copy(ref=name)

    def with_case_sensitive(self, case_sensitive: bool = True) -> DataScan:
        return self._copy(case_sensitive=case_sensitive)

    def _resolve_snapshot(self) -> Snapshot | None:
        table = self.table
        if self.snapshot_id is not None:
            snapshot = table.snapshot_by_id(self.snapshot_id)
            if snapshot is None:
                raise ValidationError(f"table has no snapshot with id {self.snapshot_id}")
            return snapshot
        if self.ref is not None:
            ref = table.metadata.ref(self.ref)
            if ref is None:
                if self.ref == MAIN_BRANCH and table.current_snapshot() is None:
                    return None
                known = ", ".join(sorted(table.metadata.refs)) or "none"
                raise ValidationError(
                    f"table has no branch or tag named {self.ref!r} (known: {known})"
                )
            snapshot = table.snapshot_by_id(ref.snapshot_id)
            if snapshot is None:
                raise ValidationError(
                    f"ref {self.ref!r} points at snapshot {ref.snapshot_id}, which the table "
                    "metadata does not have"
                )
            return snapshot
        if self.as_of is not None:
            snapshot = table.snapshot_as_of_timestamp(self.as_of)
            if snapshot is None:
                first = min((e.timestamp_ms for e in table.history()), default=None)
                raise ValidationError(
                    f"no snapshot was current at {_describe_ms(timestamp_ms(self.as_of))}"
                    + (
                        f": the first snapshot is from {_describe_ms(first)}"
                        if first is not None
                        else ": the table has no snapshot history"
                    )
                )
            return snapshot
        return table.current_snapshot()

    def snapshot(self) -> Snapshot | None:
        """The snapshot this scan reads (None for a table without one)."""
        return self._snapshot

    def _time_travel(self) -> bool:
        """Whether this scan reads with its snapshot's schema: a snapshot chosen by id, by
        time or by tag; the current state and a branch read with the table's current schema
        (Java's ``SnapshotUtil.schemaFor``: a branch's next commit uses the table's schema)."""
        if self._table_schema or self._snapshot is None or self._snapshot.schema_id is None:
            return False
        if self.ref is not None:
            ref = self.table.metadata.ref(self.ref)
            return ref is not None and not ref.is_branch
        return self.snapshot_id is not None or self.as_of is not None

    def schema(self) -> Schema:
        """The schema this scan binds its filter and selects its columns with: the snapshot's
        schema for time travel by id, timestamp or tag; the table's current schema for the
        current state and branches (Java's ``SnapshotUtil.schemaFor``; Java binds the filter
        of such a scan to the snapshot's schema too since apache/iceberg#13301)."""
        metadata = self.table.metadata
        snapshot = self._snapshot
        if self._time_travel():
            assert snapshot is not None and snapshot.schema_id is not None
            schema = metadata.schema_by_id(snapshot.schema_id)
            if schema is None:
                raise ValidationError(
                    f"snapshot {snapshot.snapshot_id} names schema {snapshot.schema_id}, which "
                    "the table metadata does not have"
                )
            return schema
        return metadata.schema()

    def _option(self, name: str) -> Any:
        if name in self.options:
            return self.options[name]
        return self.table.properties.get(name)

    def _int_option(self, name: str, default: int, minimum: int) -> int:
        value = self._option(name)
        return default if value is None else _as_int(value, name, minimum)

    def _raw(self) -> Any:
        # The bound scan (filter bound in Rust, specs parsed) depends only on this immutable
        # scan: built once, shared by plan_files, plan_tasks and plan_arrow.
        cached = self.__dict__.get("_raw_scan")
        if cached is None:
            cached = self._build_raw()
            object.__setattr__(self, "_raw_scan", cached)
        return cached

    def _build_raw(self) -> Any:
        metadata = self.table.metadata
        threads = self._option("threads")
        stats = self._option("include-column-stats")
        # The table's schema and specs are parsed once per metadata object, and the manifest
        # lists its scans read are decoded once (frazil.table._planning).
        shared = planning(metadata)
        filter_json = self._planner_filter_json()
        schema = self.schema()
        try:
            return _native.RawScan(
                shared.native,
                shared.schema_json(schema),
                filter_json,
                schema,
                case_sensitive=self.case_sensitive,
                threads=0 if threads is None else _as_int(threads, "threads", 0),
                include_column_stats=False
                if stats is None
                else _as_bool(stats, "include-column-stats"),
                io=raw(self.table.io),
            )
        except UnknownFieldError as error:
            raise UnknownFieldError(self._unknown_column_message(str(error))) from None

    def _planner_filter_json(self) -> str:
        """The filter's expression JSON as the planner binds it (also on Spark executors,
        frazil.spark.planning)."""
        if self._filter_json is not None:
            return self._filter_json
        return json.dumps(self.row_filter.to_json())

    def _split_options(self) -> tuple[int, int, int]:
        """(target size, lookback, open-file cost) of :meth:`plan_tasks`, checked."""
        # An option set to 0 (or "") is checked, not replaced by the default.
        target = self._int_option("read.split.target-size", 134217728, 1)
        lookback = self._int_option("read.split.planning-lookback", 10, 1)
        cost = self._int_option("read.split.open-file-cost", 4194304, 0)
        return target, lookback, cost

    def _unknown_column_message(self, message: str) -> str:
        """``message`` (a column this scan's schema lacks) with the schema the scan binds to,
        for a time-travel scan: the snapshot's, whose names may differ from today's."""
        match = _UNKNOWN_NAME.search(message)
        if match is None or not self._time_travel():
            return message
        snapshot = self._snapshot
        assert snapshot is not None
        schema = self.schema()
        columns = ", ".join(f.name for f in schema.fields)
        text = (
            f"{message}; this scan reads snapshot {snapshot.snapshot_id} with that snapshot's "
            f"schema {schema.schema_id} ({columns}): a scan by snapshot id, timestamp or tag "
            "binds its filter and columns to the snapshot's schema (a branch to the table's "
            "current schema)"
        )
        name = match.group(1)
        found = self.table.schema().find_field(name, self.case_sensitive)
        if found is not None:
            old_name = schema.find_column_name(found.field_id)
            text += f"; the current schema's {name!r} is field {found.field_id}, " + (
                f"named {old_name!r} in snapshot {snapshot.snapshot_id}"
                if old_name is not None
                else f"which snapshot {snapshot.snapshot_id} does not have"
            )
        return text

    def plan_files(self) -> Iterator[Any]:
        """The data files to read, as :class:`FileScanTask` objects, streamed while manifests
        are decoded."""
        snapshot = self._snapshot
        raw = self._raw()
        if snapshot is None:
            return iter(())
        if snapshot.manifest_list is None:
            raise NotFoundError(
                f"snapshot {snapshot.snapshot_id} has no manifest list (a v1 snapshot with "
                "embedded manifests): frazil does not plan those"
            )
        iterator: Iterator[Any] = raw.plan_files(snapshot.manifest_list)
        return iterator

    def _read_tasks(self) -> Iterator[Any]:
        """The tasks whose rows a read returns: those the table's catalog plans (a REST
        catalog's server-side planning, when configured and offered) or else
        :meth:`plan_files`'. Scans of writers (``_table_schema``) always plan locally: they
        need the sequence numbers of local planning."""
        catalog = self.table.catalog
        if catalog is not None and not self._table_schema:
            planned = catalog._plan_files(self)
            if planned is not None:
                return planned
        return self.plan_files()

    def plan_tasks(self) -> Iterator[CombinedScanTask]:
        """Tasks split at files' split offsets (or at the target size) and packed by the
        open-file cost, as Java's ``planTasks``."""
        target, lookback, cost = self._split_options()
        snapshot = self._snapshot
        raw = self._raw()
        if snapshot is None or snapshot.manifest_list is None:
            if snapshot is not None:
                raise NotFoundError(f"snapshot {snapshot.snapshot_id} has no manifest list")
            return iter(())
        # Options and the manifest list are checked here, not at the first next().
        groups = raw.plan_tasks(snapshot.manifest_list, target, lookback, cost)
        return (CombinedScanTask(tuple(group)) for group in groups)

    def plan_arrow(self) -> pa.Table:
        """The plan as a pyarrow Table: one row per task with its data file and delete files."""
        snapshot = self._snapshot
        raw = self._raw()
        if snapshot is None or snapshot.manifest_list is None:
            return _native.plan_arrow_schema().empty_table()
        table: pa.Table = raw.plan_arrow(snapshot.manifest_list)
        return table

    # --- reading rows (frazil.table.read; issue 11) -------------------------------------------

    def projection(self) -> Schema:
        """The schema of the rows this scan returns: its selected fields of :meth:`schema`."""
        from frazil.table import read

        return read.projected_schema(self)

    def to_batches(self) -> pa.RecordBatchReader:
        """The rows as a stream of record batches, read while consumed (a bounded number of
        files at once: option ``read.files-in-flight``, default the core count)."""
        from frazil.table import read

        return read.scan_batches(self)

    def to_arrow(self) -> pa.Table:
        """The rows as a pyarrow Table of :meth:`projection` (also when empty)."""
        from frazil.table import read

        return read.scan_to_arrow(self)

    def to_arrow_batch_reader(self) -> pa.RecordBatchReader:
        """The rows as a stream of record batches (pyiceberg's name for :meth:`to_batches`)."""
        return self.to_batches()

    def to_pandas(self, **kwargs: Any) -> Any:
        """The rows as a pandas DataFrame (``kwargs`` go to ``pyarrow.Table.to_pandas``;
        pandas is optional: install it to use this). uuid columns hold ``uuid.UUID``, uuids
        inside structs, lists and maps their 16 bytes (pyarrow converts no other way)."""
        # pyarrow imports pandas itself: without it, say how to get it rather than let its
        # ModuleNotFoundError through.
        _optional_module("pandas", "to_pandas")
        from frazil.table import read

        return read.pandas_ready(self.to_arrow()).to_pandas(**kwargs)

    def to_polars(self) -> Any:
        """The rows as a polars DataFrame (polars is optional: install it to use this)."""
        polars = _optional_module("polars", "to_polars")
        return polars.from_arrow(self.to_arrow())

    def to_duckdb(self, table_name: str, connection: Any = None) -> Any:
        """A DuckDB connection (``connection``, or a new in-memory one) in which the scan's
        rows are registered as ``table_name``, streamed while DuckDB reads them (duckdb is
        optional: install it to use this)."""
        duckdb = _optional_module("duckdb", "to_duckdb")
        if connection is None:
            connection = duckdb.connect()
        # The scan itself, not one RecordBatchReader: DuckDB asks for a fresh stream
        # (``__arrow_c_stream__``) at every query, where a reader would be used up by the
        # first query and give later ones no rows at all.
        connection.register(table_name, self)
        return connection

    def count(self) -> int:
        """The number of rows: from the files' record counts when no delete and no residual
        filter applies, else by reading."""
        from frazil.table import read

        return read.scan_count(self)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream protocol: polars, DuckDB and pandas read the scan."""
        return self.to_batches().__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        snapshot = None if self._snapshot is None else self._snapshot.snapshot_id
        return f"DataScan(table={self.table!r}, filter={self.row_filter}, snapshot={snapshot})"


def file_scan_task_from_json(
    text: str, data_sequence_number: int | None = None, file_sequence_number: int | None = None
) -> Any:
    """A :class:`FileScanTask` from its Appendix C JSON text (as :meth:`FileScanTask.to_json`
    or Java's ``ScanTaskParser.toJson`` writes it), e.g. in a Spark executor. The JSON carries
    no sequence numbers; give the data file's (``task.file.data_sequence_number``, ...) where
    they matter: a v3 row's ``_last_updated_sequence_number`` inherits the data one."""
    return _native.file_scan_task_from_json(text, data_sequence_number, file_sequence_number)
