"""Server-side scan planning: /plan's tasks are frazil's local plan (the same data files, each
with the same delete files and residual), plan tasks page a large plan, /tasks fetches them,
cancel releases them; the REST task JSON reads back into frazil's FileScanTask."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.rest import protocol as p
from frazil.expressions import as_expression, from_json
from frazil.table.scan import file_scan_task_from_json
from rest_helpers import error_of

PLAN = "/v1/namespaces/db/tables/t/plan"


@pytest.fixture
def filled(catalog: Catalog) -> Catalog:
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        pa.schema([("id", pa.int64()), ("part", pa.string())]),
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    with table.update_spec() as spec:
        spec.add_field("part")
    table = catalog.load_table("db.t")
    for batch in range(3):
        ids = list(range(batch * 10, batch * 10 + 10))
        table.append(pa.table({"id": ids, "part": [f"p{i % 3}" for i in ids]}))
        table = catalog.load_table("db.t")
    table.delete("id = 4 OR id = 15")
    return catalog


def _local(catalog: Catalog, expression: Any = None) -> dict[str, tuple[str, ...]]:
    scan = catalog.load_table("db.t").scan(row_filter=expression)
    return {
        t.file.file_path: tuple(sorted(d.file_path for d in t.delete_files))
        for t in scan.plan_files()
    }


def _remote(result: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    deletes = result.get("delete-files", [])
    return {
        task["data-file"]["file-path"]: tuple(
            sorted(deletes[i]["file-path"] for i in task.get("delete-file-references", []))
        )
        for task in result["file-scan-tasks"]
    }


def test_plan_equals_local_planning(filled: Catalog, client: Any) -> None:
    whole = client.post(PLAN, json={})
    assert whole.status_code == 200, whole.text
    result = whole.json()
    assert result["status"] == "completed" and "plan-id" not in result
    local = _local(filled)
    assert _remote(result) == local
    assert any(local.values()), "the table has position deletes"
    # Every delete file listed is referenced, once.
    referenced = {i for t in result["file-scan-tasks"] for i in t.get("delete-file-references", [])}
    assert referenced == set(range(len(result.get("delete-files", []))))
    # A filter prunes as the local planner does (partition p1 only).
    expression = as_expression("part = 'p1'")
    filtered = client.post(PLAN, json={"filter": expression.to_json()}).json()
    assert _remote(filtered) == _local(filled, expression)
    assert 0 < len(filtered["file-scan-tasks"]) < len(result["file-scan-tasks"])
    # Body-less requests plan the current snapshot; an older snapshot by id.
    assert _remote(client.post(PLAN).json()) == local
    table = filled.load_table("db.t")
    first = table.metadata.snapshots[0].snapshot_id
    old = client.post(PLAN, json={"snapshot-id": first, "use-snapshot-schema": True}).json()
    assert len(old["file-scan-tasks"]) == len(list(table.scan(snapshot_id=first).plan_files()))


def test_rest_tasks_read_back_as_frazil_tasks(filled: Catalog, client: Any) -> None:
    result = p.PlanningResult.from_json(client.post(PLAN, json={}).json())
    assert result.tasks is not None
    table = filled.load_table("db.t")
    local = {t.file.file_path: t for t in table.scan().plan_files()}
    schema = table.metadata.schema().to_json()
    for rest_task in result.tasks.file_scan_tasks:
        spec_id = rest_task["data-file"]["spec-id"]
        spec = next(s for s in table.metadata.partition_specs if s.spec_id == spec_id)
        node = p.appendix_c_task(rest_task, result.tasks.delete_files, schema, spec.to_json())
        task = file_scan_task_from_json(p.dumps(node))
        mine = local[task.file.file_path]
        assert task.file.record_count == mine.file.record_count
        assert task.file.partition == mine.file.partition
        assert sorted(d.file_path for d in task.delete_files) == sorted(
            d.file_path for d in mine.delete_files
        )
        assert from_json(rest_task["residual-filter"]) is not None


def test_plan_tasks_page_a_large_plan(filled: Catalog, make_client: Any) -> None:
    client = make_client(filled, plan_tasks_per_page=2)
    result = client.post(PLAN, json={}).json()
    assert result["status"] == "completed"
    plan_id = result["plan-id"]
    tasks = list(result["file-scan-tasks"])
    remote = _remote(result)
    assert len(tasks) == 2 and result["plan-tasks"]
    for plan_task in result["plan-tasks"]:
        page = client.post("/v1/namespaces/db/tables/t/tasks", json={"plan-task": plan_task})
        assert page.status_code == 200, page.text
        remote.update(_remote(page.json()))
    assert remote == _local(filled)
    fetched = client.get(f"{PLAN}/{plan_id}").json()
    assert fetched["plan-tasks"] == result["plan-tasks"]
    assert client.delete(f"{PLAN}/{plan_id}").status_code == 204
    error_of(client.get(f"{PLAN}/{plan_id}"), 404, "NoSuchPlanIdException")
    gone = client.post(
        "/v1/namespaces/db/tables/t/tasks", json={"plan-task": result["plan-tasks"][0]}
    )
    error_of(gone, 404, "NoSuchPlanTaskException")


def test_stats_fields_keep_only_those_columns(filled: Catalog, client: Any) -> None:
    plain = client.post(PLAN, json={}).json()["file-scan-tasks"][0]["data-file"]
    assert "lower-bounds" not in plain
    with_stats = client.post(PLAN, json={"stats-fields": ["id"]}).json()
    data_file = with_stats["file-scan-tasks"][0]["data-file"]
    assert data_file["lower-bounds"]["keys"] == [1]
    assert data_file["value-counts"]["keys"] == [1]
    error_of(client.post(PLAN, json={"stats-fields": ["nope"]}), 400)


def test_bad_plans(filled: Catalog, client: Any) -> None:
    error_of(client.post(PLAN, json={"start-snapshot-id": 1, "end-snapshot-id": 2}), 406)
    error_of(client.post(PLAN, json={"snapshot-id": 1, "end-snapshot-id": 2}), 400)
    error_of(client.post(PLAN, json={"start-snapshot-id": 1}), 400)
    error_of(client.post(PLAN, json={"filter": {"type": "frobnicate"}}), 400)
    error_of(client.post(PLAN, json={"filter": as_expression("nope = 1").to_json()}), 400)
    error_of(client.post(PLAN, json={"snapshot-id": 12345}), 400)
    error_of(client.post("/v1/namespaces/db/tables/nope/plan", json={}), 404)
    error_of(client.post("/v1/namespaces/db/tables/t/tasks", json={"plan-task": "x.1"}), 404)
    error_of(client.post("/v1/namespaces/db/tables/t/tasks", json={}), 400)
