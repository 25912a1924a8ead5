"""Distributed scan planning on Spark (issue 23, "Distributed planning"; Iceberg Java's
``SparkDistributedDataScan`` / ``BaseDistributedDataScan``).

The driver reads the manifest list (decoded once per table by the planner's shared state,
frazil.table._planning) and keeps the manifests whose partition summaries may match. In
distributed mode it makes a DataFrame of those manifests' rows and runs ``mapInArrow`` over it:
each executor decodes its manifests with the Rust decoder, prunes them by partition and metrics
with the scan's filter (bound from the table's schema and spec JSON and the filter JSON shipped
in the closure: plain data only), and sends back the entries it keeps as Arrow IPC, one
message per manifest. The driver builds the delete-file index once and forms the tasks from
those entries in Rust, manifest by manifest, with the planner's own code: the tasks are the
``FileScanTask`` objects, and the ``CombinedScanTask`` groups, that
:meth:`~frazil.table.scan.DataScan.plan_files` and :meth:`~frazil.table.scan.DataScan.plan_tasks`
give, file for file.

Options (the scan's ``options``, else table properties; Java's names and meanings):

- ``read.data-planning-mode``: ``auto`` (default), ``local`` or ``distributed``;
- ``read.delete-planning-mode``: the same for delete manifests.

``auto`` is Java's heuristic: plan locally when the cluster's parallelism
(``spark.sparkContext.defaultParallelism``) is no larger than the local one (the scan's
``threads`` option, else :func:`frazil._threads.threads`), or there are at most twice as many
manifests as local threads, or they hold at most 128 MB per local thread; deletes locally also
when equality deletes may exist (the snapshot's ``total-equality-deletes`` is missing or not
0), and data locally when column stats are loaded (equality deletes may exist, or
``include-column-stats``). ``distributed`` plans on executors unless there is nothing to read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.errors import ValidationError

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.table.scan import CombinedScanTask, DataScan

__all__ = [
    "DATA_PLANNING_MODE",
    "DELETE_PLANNING_MODE",
    "LOCAL_PLANNING_MAX_SLOT_SIZE",
    "Decision",
    "decide",
    "iter_tasks",
    "plan_files",
    "plan_locally",
    "plan_many_files",
    "plan_many_tasks",
    "plan_tasks",
    "planning_mode",
]

DATA_PLANNING_MODE = "read.data-planning-mode"
DELETE_PLANNING_MODE = "read.delete-planning-mode"
MODES = ("auto", "local", "distributed")
# Java's BaseDistributedDataScan.LOCAL_PLANNING_MAX_SLOT_SIZE: manifest bytes one local
# thread is trusted to plan.
LOCAL_PLANNING_MAX_SLOT_SIZE = 128 * 1024 * 1024
TOTAL_EQUALITY_DELETES = "total-equality-deletes"

# The manifest rows executors receive (RawPlanning's manifest tuples, with the request they
# belong to and their position in it).
_MANIFEST_SCHEMA = (
    "request int, position long, path string, length long, spec_id int, deletes boolean, "
    "sequence_number long, min_sequence_number long, added_snapshot_id long, "
    "added_files int, existing_files int, first_row_id long"
)
_ENTRIES_SCHEMA = "request int, position long, entries binary"
# Entries cross from executors as Arrow IPC, compressed: file paths dominate and compress well.
_IPC_COMPRESSION = "lz4"


def planning_mode(scan: DataScan, name: str) -> str:
    """The planning mode ``name`` of ``scan``: its option, else the table property, else
    ``auto``. Case-insensitive, as Java's ``PlanningMode.fromName``."""
    value = scan.options[name] if name in scan.options else scan.table.properties.get(name)
    if value is None:
        return "auto"
    if isinstance(value, str) and value.lower() in MODES:
        return value.lower()
    raise ValidationError(f"option {name!r} must be one of {', '.join(MODES)}, got {value!r}")


def plan_locally(
    mode: str,
    manifest_count: int,
    manifest_bytes: int,
    remote_parallelism: int,
    local_parallelism: int,
) -> bool:
    """Java's ``shouldPlanLocally`` for one kind of manifest."""
    if mode == "local":
        return True
    if mode == "distributed":
        return manifest_count == 0
    if mode != "auto":
        raise ValidationError(f"planning mode must be one of {', '.join(MODES)}, got {mode!r}")
    return (
        remote_parallelism <= local_parallelism
        or manifest_count <= 2 * local_parallelism
        or manifest_bytes <= local_parallelism * LOCAL_PLANNING_MAX_SLOT_SIZE
    )


@dataclass(frozen=True)
class Decision:
    """Where a plan's data manifests and delete manifests are read."""

    data_locally: bool
    deletes_locally: bool


def decide(
    *,
    data_mode: str,
    delete_mode: str,
    data_manifests: Sequence[int],
    delete_manifests: Sequence[int],
    summary: dict[str, str] | None,
    include_column_stats: bool,
    remote_parallelism: int,
    local_parallelism: int,
) -> Decision:
    """Java's ``BaseDistributedDataScan.doPlanFiles`` decision. ``data_manifests`` and
    ``delete_manifests`` are the lengths in bytes of the manifests whose partition summaries
    match; ``summary`` is the snapshot's."""
    may_have_equality_deletes = bool(delete_manifests) and (
        summary is None or summary.get(TOTAL_EQUALITY_DELETES, None) != "0"
    )
    deletes_locally = (delete_mode == "auto" and may_have_equality_deletes) or plan_locally(
        delete_mode,
        len(delete_manifests),
        sum(delete_manifests),
        remote_parallelism,
        local_parallelism,
    )
    load_column_stats = may_have_equality_deletes or include_column_stats
    data_locally = (data_mode == "auto" and load_column_stats) or plan_locally(
        data_mode, len(data_manifests), sum(data_manifests), remote_parallelism, local_parallelism
    )
    return Decision(data_locally, deletes_locally)


def _local_parallelism(scan: DataScan) -> int:
    from frazil._threads import threads
    from frazil.table.scan import _as_int

    value = scan._option("threads")
    count = 0 if value is None else _as_int(value, "threads", 0)
    return count or threads()


def _include_column_stats(scan: DataScan) -> bool:
    from frazil.table.scan import _as_bool

    value = scan._option("include-column-stats")
    return False if value is None else _as_bool(value, "include-column-stats")


def _executor_spec(scan: DataScan) -> dict[str, Any]:
    """What an executor needs to prune manifests as this scan does: plain data only."""
    from frazil.io import resolve
    from frazil.table._planning import planning

    metadata = scan.table.metadata
    shared = planning(metadata)
    return {
        "table_schema": shared.schema_json(metadata.schema()),
        "specs": [json.dumps(spec.to_json()) for spec in metadata.partition_specs],
        "scan_schema": shared.schema_json(scan.schema()),
        "filter": scan._planner_filter_json(),
        "case_sensitive": scan.case_sensitive,
        "io": resolve(scan.table.io).properties,
    }


@dataclass(frozen=True)
class _Request:
    """One scan's manifests of one kind, to prune on executors with ``columns``."""

    spec: dict[str, Any]
    manifests: list[tuple[Any, ...]]
    columns: tuple[list[str], list[int] | None]


def _pruner(
    requests: list[tuple[dict[str, Any], list[str], list[int] | None]],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The executors' side of mapInArrow: manifest rows in (each naming its request: a scan's
    spec and columns), kept entries out."""

    def prune(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        from frazil import _native
        from frazil.io import FileIO, raw

        scans: dict[int, Any] = {}

        def scan_of(request: int) -> Any:
            if request not in scans:
                spec = requests[request][0]
                table = _native.RawTable(spec["table_schema"], spec["specs"])
                scans[request] = _native.RawScan(
                    table,
                    spec["scan_schema"],
                    spec["filter"],
                    None,
                    case_sensitive=spec["case_sensitive"],
                    threads=1,
                    io=raw(FileIO(spec["io"])),
                )
            return scans[request]

        options = pa.ipc.IpcWriteOptions(compression=_IPC_COMPRESSION)
        out_schema = pa.schema(
            [("request", pa.int32()), ("position", pa.int64()), ("entries", pa.binary())]
        )
        for batch in batches:
            for row in batch.to_pylist():
                manifest = (
                    row["path"],
                    row["length"],
                    row["spec_id"],
                    row["deletes"],
                    row["sequence_number"],
                    row["min_sequence_number"],
                    row["added_snapshot_id"],
                    row["added_files"],
                    row["existing_files"],
                    row["first_row_id"],
                )
                _, columns, metric_keys = requests[row["request"]]
                entries = scan_of(row["request"]).prune_manifest(manifest, columns, metric_keys)
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, entries.schema, options=options) as writer:
                    writer.write_batch(entries)
                message = sink.getvalue()
                # One binary value over the IPC buffer, not a copy of it.
                offsets = pa.array([0, message.size], pa.int32()).buffers()[1]
                blob = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, message])
                yield pa.record_batch(
                    [
                        pa.array([row["request"]], pa.int32()),
                        pa.array([row["position"]], pa.int64()),
                        blob,
                    ],
                    schema=out_schema,
                )

    return prune


def _prune_on_executors(spark: Any, requests: list[_Request]) -> list[list[Any]]:
    """Each request's manifests' kept entries (Arrow IPC buffers, by position in its
    ``manifests``), from one Spark job for all the requests."""
    out: list[list[Any]] = [[None] * len(r.manifests) for r in requests]
    rows = [
        (n, position, *manifest)
        for n, request in enumerate(requests)
        for position, manifest in enumerate(request.manifests)
    ]
    if not rows:
        return out
    slices = max(1, min(len(rows), spark.sparkContext.defaultParallelism))
    frame = spark.createDataFrame(spark.sparkContext.parallelize(rows, slices), _MANIFEST_SCHEMA)
    pruner = _pruner([(r.spec, *r.columns) for r in requests])
    kept = frame.mapInArrow(pruner, _ENTRIES_SCHEMA)
    # Spark 3.5 collects Arrow batches through a private method; 4.x also has toArrow().
    if hasattr(kept, "_collect_as_arrow"):
        batches = kept._collect_as_arrow()
    else:
        batches = kept.toArrow().to_batches()
    for batch in batches:
        numbers = batch.column(0).to_pylist()
        positions = batch.column(1).to_pylist()
        blobs = batch.column(2)
        for i, (n, position) in enumerate(zip(numbers, positions, strict=True)):
            if out[n][position] is not None:
                path = requests[n].manifests[position][0]
                raise ValidationError(f"executors returned the entries of manifest {path} twice")
            out[n][position] = blobs[i].as_buffer()
    for n, blobs_of in enumerate(out):
        missing = [requests[n].manifests[p][0] for p, blob in enumerate(blobs_of) if blob is None]
        if missing:
            raise ValidationError(f"executors returned no entries for manifests {missing[:5]}")
    return out


def _read_entries(blob: Any) -> pa.RecordBatch:
    import pyarrow as pa

    batch: pa.RecordBatch = pa.ipc.open_stream(blob).read_next_batch()
    return batch


def _decoded(blobs: list[Any]) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Each manifest's entries in plan order, decoded when the plan reaches it and then
    dropped, so the driver holds the compressed buffers and one manifest at a time."""
    for position in range(len(blobs)):
        blob, blobs[position] = blobs[position], None
        yield position, _read_entries(blob)


def _layout(spark: Any, scan: DataScan) -> tuple[Any, Decision] | None:
    """The native plan of ``scan`` laid out, with where each kind of manifest is planned; None
    to plan with the scan itself (nothing to plan, or everything planned locally)."""
    # Bad option values are refused before anything is read.
    data_mode = planning_mode(scan, DATA_PLANNING_MODE)
    delete_mode = planning_mode(scan, DELETE_PLANNING_MODE)
    snapshot = scan.snapshot()
    if snapshot is None or snapshot.manifest_list is None:
        return None  # the scan's own methods answer (or refuse) these
    planning = scan._raw().planning(snapshot.manifest_list)
    decision = decide(
        data_mode=data_mode,
        delete_mode=delete_mode,
        data_manifests=[m[1] for m in planning.data_manifests()],
        delete_manifests=[m[1] for m in planning.matching_delete_manifests()],
        summary=None if snapshot.summary is None else dict(snapshot.summary),
        include_column_stats=_include_column_stats(scan),
        remote_parallelism=spark.sparkContext.defaultParallelism,
        local_parallelism=_local_parallelism(scan),
    )
    if decision.data_locally and decision.deletes_locally:
        return None
    return planning, decision


def _plan_many(spark: Any, scans: Sequence[DataScan], tasks: bool) -> list[Iterator[Any]]:
    """The plans of ``scans`` (FileScanTasks, or CombinedScanTasks when ``tasks``), streamed;
    what is distributed runs in at most two Spark jobs for all of them: deletes, then data."""
    from frazil import _native
    from frazil.table.scan import CombinedScanTask

    splits = [scan._split_options() if tasks else None for scan in scans]
    laid_out = [_layout(spark, scan) for scan in scans]
    # Delete files first: the data manifests' columns depend on the delete index.
    remote: list[tuple[Any, _Request]] = []
    for scan, started in zip(scans, laid_out, strict=True):
        if started is None:
            continue
        planning, decision = started
        deletes = planning.delete_manifests()
        if decision.deletes_locally or not deletes:
            planning.index_deletes_locally()
        else:
            columns = _native.planning_delete_columns()
            remote.append((planning, _Request(_executor_spec(scan), deletes, columns)))
    kept = _prune_on_executors(spark, [request for _, request in remote])
    for (planning, _), blobs in zip(remote, kept, strict=True):
        planning.index_deletes([(p, _read_entries(blob)) for p, blob in enumerate(blobs)])
    # Then the data manifests.
    requests: dict[int, _Request] = {}
    for n, (scan, started) in enumerate(zip(scans, laid_out, strict=True)):
        if started is None:
            continue
        planning, decision = started
        data = planning.data_manifests()
        if not decision.data_locally and data:
            requests[n] = _Request(_executor_spec(scan), data, planning.data_columns())
    entries = dict(zip(requests, _prune_on_executors(spark, list(requests.values())), strict=True))
    out: list[Iterator[Any]] = []
    for n, (scan, started) in enumerate(zip(scans, laid_out, strict=True)):
        if started is None:
            out.append(scan.plan_tasks() if tasks else scan.plan_files())
            continue
        planning = started[0]
        feed = _decoded(entries[n]) if n in entries else None
        split = splits[n]
        if split is None:
            out.append(planning.plan_files(feed))
        else:
            groups = planning.plan_tasks(feed, *split)
            out.append(CombinedScanTask(tuple(group)) for group in groups)
    return out


def plan_files(spark: Any, scan: DataScan) -> Iterator[Any]:
    """The scan's :class:`~frazil.table.scan.FileScanTask` objects, as
    :meth:`DataScan.plan_files` yields them, planned locally or on ``spark``'s executors per
    the planning modes (module docstring)."""
    return _plan_many(spark, [scan], tasks=False)[0]


def iter_tasks(spark: Any, scan: DataScan) -> Iterator[CombinedScanTask]:
    """:func:`plan_tasks` as a stream: tasks are formed while taken, so a consumer that does
    not keep them holds one manifest's entries at a time (plus the compressed entries)."""
    return _plan_many(spark, [scan], tasks=True)[0]


def plan_tasks(spark: Any, scan: DataScan) -> list[CombinedScanTask]:
    """The scan's combined tasks, as :meth:`DataScan.plan_tasks` gives them (files split and
    packed as Java's ``planTasks``), planned locally or on ``spark``'s executors per the
    planning modes (module docstring)."""
    return list(iter_tasks(spark, scan))


def plan_many_files(spark: Any, scans: Sequence[DataScan]) -> list[list[Any]]:
    """:func:`plan_files` of several scans (of one table or several), with what is
    distributed in at most two Spark jobs for all of them (deletes, then data)."""
    return [list(files) for files in _plan_many(spark, scans, tasks=False)]


def plan_many_tasks(spark: Any, scans: Sequence[DataScan]) -> list[list[CombinedScanTask]]:
    """:func:`plan_tasks` of several scans, in at most two Spark jobs for all of them."""
    return [list(groups) for groups in _plan_many(spark, scans, tasks=True)]
