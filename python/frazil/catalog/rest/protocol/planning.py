"""The JSON bodies of server-side scan planning (planTableScan, fetchScanTasks)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from frazil import _jsonutil as js
from frazil.catalog.rest.protocol.bodies import _opt_bool
from frazil.catalog.rest.protocol.errors import ErrorModel
from frazil.errors import (
    InvalidMetadataError,
    ValidationError,
)

# --- server-side scan planning --------------------------------------------------------------

PlanStatus = Literal["completed", "submitted", "cancelled", "failed"]
_PLAN_STATUSES = ("completed", "submitted", "cancelled", "failed")


@dataclass(frozen=True)
class PlanTableScanRequest:
    """A scan to plan: a point-in-time scan (``snapshot_id``, default the main branch's
    current snapshot) or an incremental one (``start_snapshot_id`` exclusive to
    ``end_snapshot_id`` inclusive), never both. ``filter`` is the expression JSON as sent
    (Java's ``ExpressionParser``), bound to the table's schema by the planner."""

    snapshot_id: int | None = None
    select: tuple[str, ...] | None = None
    filter: Any = None
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    stats_fields: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        incremental = self.start_snapshot_id is not None or self.end_snapshot_id is not None
        if self.snapshot_id is not None and incremental:
            raise ValidationError(
                "invalid scan: snapshot-id (a point-in-time scan) together with "
                "start-snapshot-id or end-snapshot-id (an incremental scan)"
            )
        if self.start_snapshot_id is not None and self.end_snapshot_id is None:
            raise ValidationError("invalid scan: start-snapshot-id needs end-snapshot-id")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (
            ("snapshot-id", self.snapshot_id),
            ("select", None if self.select is None else list(self.select)),
            ("filter", self.filter),
            ("start-snapshot-id", self.start_snapshot_id),
            ("end-snapshot-id", self.end_snapshot_id),
            ("stats-fields", None if self.stats_fields is None else list(self.stats_fields)),
        ):
            if value is not None:
                out[key] = value
        out["case-sensitive"] = self.case_sensitive
        out["use-snapshot-schema"] = self.use_snapshot_schema
        return out

    @classmethod
    def from_json(cls, node: Any) -> PlanTableScanRequest:
        what = "plan table scan request"
        obj = js.as_object({} if node is None else node, what)

        def names(key: str) -> tuple[str, ...] | None:
            return js.get_str_list(obj, key, what) if obj.get(key) is not None else None

        return cls(
            snapshot_id=js.opt_long(obj, "snapshot-id", what),
            select=names("select"),
            filter=obj.get("filter"),
            case_sensitive=_opt_bool(obj, "case-sensitive", what, True),
            use_snapshot_schema=_opt_bool(obj, "use-snapshot-schema", what, False),
            start_snapshot_id=js.opt_long(obj, "start-snapshot-id", what),
            end_snapshot_id=js.opt_long(obj, "end-snapshot-id", what),
            stats_fields=names("stats-fields"),
        )


@dataclass(frozen=True)
class ScanTasks:
    """File scan tasks (``{"data-file", "delete-file-references", "residual-filter"}``, the
    files in Java's ``ContentFileParser`` JSON), the delete files they reference by index, and
    plan tasks (opaque strings for the ``/tasks`` route)."""

    file_scan_tasks: tuple[Mapping[str, Any], ...] = ()
    delete_files: tuple[Mapping[str, Any], ...] = ()
    plan_tasks: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.delete_files:
            out["delete-files"] = [dict(d) for d in self.delete_files]
        out["file-scan-tasks"] = [dict(t) for t in self.file_scan_tasks]
        if self.plan_tasks:
            out["plan-tasks"] = list(self.plan_tasks)
        return out

    @classmethod
    def from_json(cls, node: Any, what: str = "scan tasks") -> ScanTasks:
        obj = js.as_object(node, what)

        def objects(key: str) -> tuple[Mapping[str, Any], ...]:
            if obj.get(key) is None:
                return ()
            return tuple(js.as_object(i, f"{what} {key}") for i in js.get_list(obj, key, what))

        tasks = objects("file-scan-tasks")
        deletes = objects("delete-files")
        for task in tasks:
            if task.get("data-file") is None:
                raise InvalidMetadataError(f"{what}: a file scan task has no 'data-file'")
            refs = task.get("delete-file-references") or []
            for ref in js.as_list(refs, f"{what} delete-file-references"):
                if type(ref) is not int or not 0 <= ref < len(deletes):
                    raise InvalidMetadataError(
                        f"{what}: delete file reference {ref!r} is not an index of the "
                        f"{len(deletes)} delete files"
                    )
        plan_tasks = js.get_str_list(obj, "plan-tasks", what) if obj.get("plan-tasks") else ()
        return cls(tasks, deletes, plan_tasks)


@dataclass(frozen=True)
class PlanningResult:
    """``PlanTableScanResult`` and ``FetchPlanningResult``: a status, with the tasks when
    completed, a plan id when the server holds state, the error when failed."""

    status: PlanStatus
    tasks: ScanTasks | None = None
    plan_id: str | None = None
    error: ErrorModel | None = None

    def __post_init__(self) -> None:
        if self.status not in _PLAN_STATUSES:
            raise InvalidMetadataError(f"unknown plan status {self.status!r}")
        if (self.tasks is not None) != (self.status == "completed"):
            raise InvalidMetadataError("a planning result has tasks exactly when completed")
        if (self.error is not None) != (self.status == "failed"):
            raise InvalidMetadataError("a planning result has an error exactly when failed")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.plan_id is not None:
            out["plan-id"] = self.plan_id
        if self.tasks is not None:
            out.update(self.tasks.to_json())
        if self.error is not None:
            out.update(self.error.to_json())
        return out

    @classmethod
    def from_json(cls, node: Any) -> PlanningResult:
        what = "planning result"
        obj = js.as_object(node, what)
        status = js.get_str(obj, "status", what)
        if status not in _PLAN_STATUSES:
            raise InvalidMetadataError(f"{what}: unknown status {status!r}")
        tasks = ScanTasks.from_json(obj, what) if status == "completed" else None
        error = ErrorModel.from_json(obj) if status == "failed" else None
        return cls(status, tasks, js.opt_str(obj, "plan-id", what), error)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FetchScanTasksRequest:
    plan_task: str

    def to_json(self) -> dict[str, Any]:
        return {"plan-task": self.plan_task}

    @classmethod
    def from_json(cls, node: Any) -> FetchScanTasksRequest:
        what = "fetch scan tasks request"
        return cls(js.get_str(js.as_object(node, what), "plan-task", what))


def rest_scan_tasks(task_jsons: Iterable[Mapping[str, Any]]) -> ScanTasks:
    """REST file scan tasks of Appendix C task JSON (``FileScanTask.to_json()``, Java's
    ``ScanTaskParser``): each data file with its residual, the delete files listed once and
    referenced by index (Java's ``TableScanResponseParser.serializeScanTasks``)."""
    deletes: list[Mapping[str, Any]] = []
    index: dict[str, int] = {}
    tasks = []
    for task in task_jsons:
        refs = []
        for delete in task.get("delete-files") or ():
            path = delete["file-path"]
            if path not in index:
                index[path] = len(deletes)
                deletes.append(delete)
            refs.append(index[path])
        out: dict[str, Any] = {"data-file": task["data-file"]}
        if refs:
            out["delete-file-references"] = refs
        if task.get("residual-filter") is not None:
            out["residual-filter"] = task["residual-filter"]
        tasks.append(out)
    return ScanTasks(tuple(tasks), tuple(deletes))


def appendix_c_task(
    rest_task: Mapping[str, Any],
    delete_files: Sequence[Mapping[str, Any]],
    schema_json: Mapping[str, Any],
    spec_json: Mapping[str, Any],
) -> dict[str, Any]:
    """The Appendix C task JSON of a REST file scan task (what
    :func:`frazil.table.scan.file_scan_task_from_json` reads): the whole file, its schema and
    spec, its delete files resolved from the response's list."""
    data_file = rest_task["data-file"]
    refs = rest_task.get("delete-file-references") or ()
    return {
        "task-type": "file-scan-task",
        "schema": dict(schema_json),
        "spec": dict(spec_json),
        "data-file": dict(data_file),
        "start": 0,
        "length": data_file["file-size-in-bytes"],
        "delete-files": [dict(delete_files[i]) for i in refs],
        "residual-filter": rest_task.get("residual-filter", True),
    }


def check_metrics_report(node: Any) -> None:
    """A ``ReportMetricsRequest`` is an object with a ``report-type`` of ``scan-report`` or
    ``commit-report`` (its contents are not kept)."""
    what = "report metrics request"
    kind = js.get_str(js.as_object(node, what), "report-type", what)
    if kind not in ("scan-report", "commit-report"):
        raise InvalidMetadataError(f"{what}: unknown report-type {kind!r}")
