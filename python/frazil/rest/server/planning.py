"""Server-side scan planning (the OpenAPI's planTableScan, fetchPlanningResult, cancelPlanning
and fetchScanTasks) through frazil's planner (:meth:`frazil.table.Table.scan`).

A plan is made at once and answered ``completed``: its file scan tasks in Java's JSON
(``RESTFileScanTaskParser``: the data file, indices of its delete files, the residual), the
delete files listed once. A plan of more than ``tasks_per_page`` tasks returns the first page
inline and the rest as plan tasks, held in this process for ``ttl_s`` seconds under a plan id
(fetched with ``/tasks``, released with the cancel route). Incremental scans
(``start-snapshot-id``) are refused with 406: frazil's planner has none.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frazil.catalog.rest import protocol as p
from frazil.errors import (
    BadRequestError,
    NoSuchPlanIdError,
    NoSuchPlanTaskError,
    UnsupportedOperationError,
)
from frazil.rest.server._http import NO_CONTENT, Call, Reply, json_reply
from frazil.rest.server.routes import Service

__all__ = ["Planning"]

_METRIC_MAPS = (
    "column-sizes",
    "value-counts",
    "null-value-counts",
    "nan-value-counts",
    "lower-bounds",
    "upper-bounds",
)


def _keep_stats(data_file: Mapping[str, Any], ids: set[int]) -> dict[str, Any]:
    """``data_file`` with its metric maps (``{"keys": [...], "values": [...]}``) cut to the
    columns ``ids`` (the request's ``stats-fields``)."""
    out = dict(data_file)
    for key in _METRIC_MAPS:
        node = out.get(key)
        if isinstance(node, dict):
            pairs = [(k, v) for k, v in zip(node["keys"], node["values"], strict=True) if k in ids]
            if pairs:
                out[key] = {"keys": [k for k, _ in pairs], "values": [v for _, v in pairs]}
            else:
                del out[key]
    return out


@dataclass
class _Plan:
    table: tuple[str, ...]
    first: p.ScanTasks
    pages: dict[str, p.ScanTasks]
    expires: float


class Planning:
    def __init__(
        self,
        service: Service,
        *,
        tasks_per_page: int = 1000,
        ttl_s: float = 600.0,
        max_plans: int = 1000,
    ) -> None:
        if tasks_per_page < 1:
            raise BadRequestError(f"tasks_per_page must be positive, got {tasks_per_page}")
        self.service = service
        self.tasks_per_page = tasks_per_page
        self.ttl_s = ttl_s
        self.max_plans = max_plans
        self._plans: OrderedDict[str, _Plan] = OrderedDict()
        self._lock = threading.Lock()

    def _table(self, call: Call) -> tuple[str, ...]:
        return self.service._table(call)

    def _expire(self, now: float) -> None:
        for plan_id in [i for i, plan in self._plans.items() if plan.expires < now]:
            del self._plans[plan_id]
        while len(self._plans) > self.max_plans:
            self._plans.popitem(last=False)

    def plan(self, call: Call) -> Reply:
        from frazil.expressions import from_json as expression_from_json
        from frazil.table._table import Table
        from frazil.table.scan import DataScan

        ident = self._table(call)
        body = p.read_json(call.body, "plan table scan request") if call.body.strip() else {}
        request = p.PlanTableScanRequest.from_json(body)
        if request.start_snapshot_id is not None or request.end_snapshot_id is not None:
            raise UnsupportedOperationError(
                "incremental scan planning (start-snapshot-id, end-snapshot-id) is not "
                "supported by this server: plan a point-in-time scan"
            )
        metadata, location = self.service.table_metadata(ident)
        table = Table(
            metadata, location, self.service.catalog.properties, ident, catalog=self.service.catalog
        )
        row_filter = None if request.filter is None else expression_from_json(request.filter)
        stats = request.stats_fields or ()
        scan = DataScan(
            table,
            row_filter=row_filter,
            selected_fields=tuple(request.select) if request.select else ("*",),
            case_sensitive=request.case_sensitive,
            snapshot_id=request.snapshot_id,
            options={"include-column-stats": bool(stats)},
            # A point-in-time scan binds to the snapshot's schema only when asked (the
            # OpenAPI's use-snapshot-schema; a branch's head uses the table's).
            _table_schema=request.snapshot_id is not None and not request.use_snapshot_schema,
        )
        ids: set[int] = set()
        schema = scan.schema()
        for name in stats:
            found = schema.find_field(name, request.case_sensitive)
            if found is None:
                raise BadRequestError(f"stats-fields: no column {name!r} in the scan's schema")
            ids.add(found.field_id)
        tasks = []
        for task in scan.plan_files():
            node = json.loads(task.to_json())
            if stats:
                node["data-file"] = _keep_stats(node["data-file"], ids)
            tasks.append(node)
        pages = [
            tasks[i : i + self.tasks_per_page] for i in range(0, len(tasks), self.tasks_per_page)
        ]
        first = p.rest_scan_tasks(pages[0] if pages else [])
        if len(pages) <= 1:
            return json_reply(p.PlanningResult("completed", first).to_json())
        plan_id = secrets.token_urlsafe(16)
        rest = {f"{plan_id}.{n}": p.rest_scan_tasks(page) for n, page in enumerate(pages[1:], 1)}
        first = p.ScanTasks(first.file_scan_tasks, first.delete_files, tuple(rest))
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            self._plans[plan_id] = _Plan(ident, first, rest, now + self.ttl_s)
        return json_reply(p.PlanningResult("completed", first, plan_id).to_json())

    def _plan_of(self, ident: Sequence[str], plan_id: str) -> _Plan:
        with self._lock:
            self._expire(time.monotonic())
            plan = self._plans.get(plan_id)
        if plan is None or plan.table != tuple(ident):
            raise NoSuchPlanIdError(f"plan {plan_id!r} of table {'.'.join(ident)} is unknown")
        return plan

    def fetch(self, call: Call) -> Reply:
        ident = self._table(call)
        self.service.catalog.current_metadata_location(ident)
        plan = self._plan_of(ident, p.decode_string(call.params["plan-id"]))
        return json_reply(p.PlanningResult("completed", plan.first).to_json())

    def cancel(self, call: Call) -> Reply:
        ident = self._table(call)
        self.service.catalog.current_metadata_location(ident)
        plan_id = p.decode_string(call.params["plan-id"])
        with self._lock:
            plan = self._plans.get(plan_id)
            if plan is not None and plan.table == ident:
                del self._plans[plan_id]
        return NO_CONTENT

    def tasks(self, call: Call) -> Reply:
        ident = self._table(call)
        self.service.catalog.current_metadata_location(ident)
        request = p.FetchScanTasksRequest.from_json(
            p.read_json(call.body, "fetch scan tasks request")
        )
        plan_id = request.plan_task.rsplit(".", 1)[0]
        with self._lock:
            self._expire(time.monotonic())
            plan = self._plans.get(plan_id)
            page = (
                None if plan is None or plan.table != ident else plan.pages.get(request.plan_task)
            )
        if page is None:
            raise NoSuchPlanTaskError(f"plan task {request.plan_task!r} is unknown")
        return json_reply(page.to_json())
