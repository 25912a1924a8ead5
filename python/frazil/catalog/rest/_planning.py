"""Server-side scan planning (spec: planTableScan, fetchPlanningResult, fetchScanTasks,
cancelPlanning), opted into with ``scan-planning-mode=server`` (Java's and pyiceberg's
property; a table's load ``config`` may set it for that table).

When a scan's rows are read (``to_arrow``, ``to_batches``, ``count``, ...), the scan is posted
to ``/plan``; a ``submitted`` answer is polled (``rest-scan-planning.poll-timeout-ms``, default
5 minutes, Java's name), plan tasks are fetched through ``/tasks`` until none is left, and a
plan abandoned on an error is cancelled. Each REST file scan task becomes the Appendix C task
JSON frazil's reader takes (:func:`frazil.catalog.rest.protocol.appendix_c_task`) and then the
very :class:`~frazil.table.scan.FileScanTask` local planning makes, so there is one reader and
no second planner. ``plan_files()`` and ``plan_tasks()`` keep planning locally: they expose
sequence numbers and file splits that REST tasks do not carry (writers and maintenance need
them).

When the server does not list ``/plan``, the scan is planned locally, with a warning the first
time (the property asked for something the server cannot do).
"""

from __future__ import annotations

import json
import time
import warnings
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.catalog.rest import protocol as p
from frazil.catalog.rest._http import _int_property
from frazil.errors import FrazilError, InvalidMetadataError, ValidationError

if TYPE_CHECKING:
    from frazil.catalog.rest.catalog import RestCatalog
    from frazil.table.scan import DataScan

__all__ = ["SCAN_PLANNING_MODE", "plan_files"]

SCAN_PLANNING_MODE = "scan-planning-mode"
POLL_TIMEOUT_MS = "rest-scan-planning.poll-timeout-ms"
_POLL_START_S = 0.05
_POLL_MAX_S = 2.0


@dataclass(frozen=True)
class _Where:
    """The table a plan is for, as its routes name it."""

    namespace: tuple[str, ...]
    table: str


def _mode(catalog: RestCatalog, scan: DataScan) -> str:
    # The table's load config overrides the catalog's (Java: LoadTableResponse.config()).
    raw = scan.table.io_properties.get(SCAN_PLANNING_MODE) or catalog.properties.get(
        SCAN_PLANNING_MODE, "client"
    )
    mode = raw.strip().lower()
    if mode not in ("client", "server"):
        raise ValidationError(f"{SCAN_PLANNING_MODE}={raw!r}: expected client or server")
    return mode


def plan_files(catalog: RestCatalog, scan: DataScan) -> Iterator[Any] | None:
    """The scan's tasks planned by the server, or None when the scan is planned locally
    (module docs)."""
    if _mode(catalog, scan) != "server":
        return None
    if p.SUBMIT_TABLE_SCAN_PLAN not in catalog.endpoints:
        if not catalog._warned_planning:
            catalog._warned_planning = True
            from frazil.warnings import FrazilWarning

            warnings.warn(
                f"{SCAN_PLANNING_MODE}=server, but the REST catalog at {catalog.uri} does not "
                f"offer {p.SUBMIT_TABLE_SCAN_PLAN}: scans are planned locally",
                FrazilWarning,
                stacklevel=4,
            )
        return None
    snapshot = scan.snapshot()
    if snapshot is None:
        return iter(())
    return iter(_plan(catalog, scan, snapshot.snapshot_id))


def _plan(catalog: RestCatalog, scan: DataScan, snapshot_id: int) -> list[Any]:
    from frazil.table.scan import file_scan_task_from_json

    table = scan.table
    ident = table.identifier
    name = ".".join(ident)
    where = _Where(ident[:-1], ident[-1])
    request = p.PlanTableScanRequest(
        snapshot_id=snapshot_id,
        filter=json.loads(scan._planner_filter_json()),
        case_sensitive=scan.case_sensitive,
        use_snapshot_schema=scan._time_travel(),
    )
    what = f"plan a scan of table {name!r}"
    response = catalog._call(
        p.SUBMIT_TABLE_SCAN_PLAN,
        what,
        "plan",
        body=request.to_json(),
        namespace=where.namespace,
        table=where.table,
    )
    result = _result(response.json(), what)
    plan_id = result.plan_id
    try:
        result = _await(catalog, result, what, where)
        assert result.tasks is not None
        schema_json = scan.schema().to_json()
        specs = {spec_id: spec.to_json() for spec_id, spec in table.specs().items()}
        tasks: list[Any] = []
        batches = deque([result.tasks])
        while batches:
            batch = batches.popleft()
            for rest_task in batch.file_scan_tasks:
                spec_id = rest_task["data-file"].get("spec-id")
                spec_json = specs.get(spec_id) if isinstance(spec_id, int) else None
                if spec_json is None:
                    raise InvalidMetadataError(
                        f"{what}: a task's data file names partition spec {spec_id!r}, which "
                        "the table does not have"
                    )
                task = p.appendix_c_task(rest_task, batch.delete_files, schema_json, spec_json)
                tasks.append(file_scan_task_from_json(json.dumps(task)))
            for plan_task in batch.plan_tasks:
                fetched = catalog._call(
                    p.FETCH_TABLE_SCAN_PLAN_TASKS,
                    f"fetch scan tasks of table {name!r}",
                    "plan",
                    body=p.FetchScanTasksRequest(plan_task).to_json(),
                    namespace=where.namespace,
                    table=where.table,
                )
                batches.append(p.ScanTasks.from_json(fetched.json(), "fetch scan tasks response"))
    except BaseException:
        if plan_id is not None:
            _cancel(catalog, plan_id, where, name)
        raise
    return tasks


def _result(node: Any, what: str) -> p.PlanningResult:
    try:
        return p.PlanningResult.from_json(node)
    except InvalidMetadataError as error:
        raise InvalidMetadataError(f"{what}: the server's answer is not valid: {error}") from None


def _await(
    catalog: RestCatalog, result: p.PlanningResult, what: str, where: _Where
) -> p.PlanningResult:
    """``result`` once completed: a submitted plan is polled until it is done."""
    timeout_ms = _int_property(catalog.properties, POLL_TIMEOUT_MS, 300_000, 1)
    deadline = time.monotonic() + timeout_ms / 1000
    wait = _POLL_START_S
    while result.status == "submitted":
        if result.plan_id is None:
            raise InvalidMetadataError(f"{what}: the server submitted the plan without a plan-id")
        if time.monotonic() > deadline:
            raise FrazilError(
                f"{what}: plan {result.plan_id} not completed within {timeout_ms} ms "
                f"({POLL_TIMEOUT_MS})"
            )
        time.sleep(wait)
        wait = min(wait * 2, _POLL_MAX_S)
        response = catalog._call(
            p.FETCH_TABLE_SCAN_PLAN,
            what,
            "plan",
            plan_id=result.plan_id,
            namespace=where.namespace,
            table=where.table,
        )
        result = _result(response.json(), what)
    if result.status == "failed":
        assert result.error is not None
        model = result.error
        raise p.error_from_model(p.ErrorModel(f"{what}: {model.message}", model.type, model.code))
    if result.status == "cancelled":
        raise FrazilError(f"{what}: the server cancelled the plan")
    return result


def _cancel(catalog: RestCatalog, plan_id: str, where: _Where, name: str) -> None:
    """Release the server's plan state, best effort (spec: cancelPlanning)."""
    if p.CANCEL_TABLE_SCAN_PLAN not in catalog.endpoints:
        return
    try:
        catalog._call(
            p.CANCEL_TABLE_SCAN_PLAN,
            f"cancel the scan plan of table {name!r}",
            "plan",
            plan_id=plan_id,
            namespace=where.namespace,
            table=where.table,
        )
    except FrazilError:
        pass  # the server forgets abandoned plans on its own
