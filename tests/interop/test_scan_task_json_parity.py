"""File scan tasks against Apache Iceberg Java 1.10.2 (issue 10): task JSON (Appendix C) both
ways, and ``plan_tasks`` against Java's ``TableScanUtil.splitFiles`` / ``planTasks``.

- frazil -> Java: tasks of hypothesis-generated tables (tests/python/table/task_tables.py: every
  primitive type as an identity partition, the other transforms, metrics, split offsets, key
  metadata, delete files of every kind) go to ``ScanTaskParser.fromJson(json, true)``; Java's
  task must have the same path, byte range, spec, record count, size, format, partition,
  delete files and residual (Java re-derives the residual from the partition), and
  ``ScanTaskParser.toJson`` of it must read back in frazil to the same task.
- Java -> frazil: Java plans the scan-parity tables (tests/interop/scan_tables.py: v1, v2, v3,
  every transform, partition evolution, position and equality deletes, deletion vectors,
  branches, tags, time travel) with ``includeColumnStats()``; each task's ``toJson`` must read
  in frazil to the task frazil plans for the same file.
- plan_tasks: Java's tasks, in frazil's plan order, through ``splitFiles`` and ``planTasks``
  must give frazil's combined tasks, on the parity tables and on a table whose Parquet files
  hold many row groups (many split offsets).

Known limits of Java 1.10.2, checked as such rather than hidden:

- ``ContentFileParser`` reads a task's delete files with the task's spec only, so a global
  equality delete (kept in its unpartitioned spec, as the spec says) cannot be read back
  ("Invalid partition specId"), and Java cannot write such a task either (``toJson`` checks
  the delete file's spec id against the data file's).
- ``SingleValueParser`` writes NaN and infinities of float and double as the strings
  "NaN" / "Infinity" and then refuses to read them; frazil writes the same and reads them.
"""

from __future__ import annotations

import json
import math
import random
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import frazil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from java_referee import PlanReferee, Warehouse
from scan_tables import ScanTable, Selection

# The task tables are shared with tests/python/table/test_scan_task_json.py (not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "table"))
import task_tables as tt

NAMESPACE = "scan_task_json"


def _iterate(java_iterable: Any) -> Iterator[Any]:
    iterator = java_iterable.iterator()
    while iterator.hasNext():
        yield iterator.next()


def _java_message(error: BaseException) -> str:
    java_exception = getattr(error, "java_exception", None)
    if java_exception is not None:
        return str(java_exception.toString())
    return f"{type(error).__name__}: {error}"


def _from_json(java: Any, text: str) -> Any:
    return java.org.apache.iceberg.ScanTaskParser.fromJson(text, True)


def _to_json(java: Any, task: Any) -> str:
    return str(java.org.apache.iceberg.ScanTaskParser.toJson(task))


def _without_other_spec_deletes(text: str) -> tuple[str, int]:
    """The task JSON without delete files of another spec than the data file's (which Java
    cannot read), and how many were dropped."""
    task = json.loads(text)
    spec_id = task["data-file"]["spec-id"]
    kept = [d for d in task["delete-files"] if d["spec-id"] == spec_id]
    dropped = len(task["delete-files"]) - len(kept)
    task["delete-files"] = kept
    return json.dumps(task), dropped


def _view(task: Any, delete_column_sizes: bool = True) -> dict[str, Any]:
    view = tt.task_view(task)
    if not delete_column_sizes:
        for d in view["deletes"]:
            d.pop("column_sizes")
    return view


# --- frazil -> Java ------------------------------------------------------------------------


def _finite(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """NaN and infinite float partition values replaced by null (Java cannot read them back;
    see test_non_finite_partition_values)."""
    for spec in specs:
        for key, value in spec["partition"].items():
            if isinstance(value, float) and not math.isfinite(value):
                spec["partition"][key] = None
    return specs


def check_in_java(java: Any, task: Any) -> int:
    """Java reads frazil's task JSON to the same task; returns how many delete files of
    another spec had to be left out for Java."""
    text = task.to_json()
    data_spec = task.spec_id
    other_spec = [d for d in task.delete_files if d.spec_id != data_spec]
    if other_spec:
        with pytest.raises(Exception) as raised:
            _from_json(java, text)
        assert "Invalid partition specId" in _java_message(raised.value), _java_message(
            raised.value
        )
    text, dropped = _without_other_spec_deletes(text)
    assert dropped == len(other_spec)
    expected = tt.file_scan_task_from_json(text)
    try:
        jt = _from_json(java, text)
    except Exception as error:  # pragma: no cover - a failure shows Java's error and the JSON
        pytest.fail(f"Java cannot read frazil's task JSON: {_java_message(error)}\n{text}")
    f = task.file
    assert str(jt.file().location()) == f.file_path
    assert (jt.start(), jt.length()) == (task.start, task.length)
    assert jt.spec().specId() == data_spec
    assert jt.file().recordCount() == f.record_count
    assert jt.file().fileSizeInBytes() == f.file_size_in_bytes
    assert str(jt.file().format().name()) == f.file_format.upper()
    java_deletes = [(str(d.location()), str(d.content().name())) for d in jt.deletes()]
    names = {0: "DATA", 1: "POSITION_DELETES", 2: "EQUALITY_DELETES"}
    assert java_deletes == [
        (d.file_path, names[d.content]) for d in task.delete_files if d.spec_id == data_spec
    ]
    # Java's residual: ResidualEvaluator over the partition, from frazil's residual.
    residual = str(java.org.apache.iceberg.expressions.ExpressionParser.toJson(jt.residual()))
    rebound = dict(json.loads(text), **{"residual-filter": json.loads(residual)})
    assert tt.file_scan_task_from_json(json.dumps(rebound)).residual_json == task.residual_json
    # And everything else through Java's own JSON.
    back = tt.file_scan_task_from_json(_to_json(java, jt))
    assert tt.task_view(back) == tt.task_view(expected)
    return dropped


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    specs=st.lists(tt.files(), min_size=1, max_size=4),
    row_filter=st.sampled_from(tt.FILTERS),
    target=st.integers(100, 20_000),
    stats=st.booleans(),
)
def test_frazil_tasks_read_in_java(
    java: Any, specs: list[dict[str, Any]], row_filter: str | None, target: int, stats: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = tt.write_table(Path(tmp) / "t", _finite(specs))
        options = {"include-column-stats": stats, "read.split.target-size": target}
        scan = table.scan(row_filter=row_filter, options=options)
        tasks = list(scan.plan_files()) + [t for g in scan.plan_tasks() for t in g.tasks]
    for task in tasks:
        check_in_java(java, task)


# Long filters (issue 22): 2,000 terms joined by OR (a key list), by AND, and mixed; frazil
# writes each chain as a balanced tree of Java's binary nodes, which Java parses and evaluates.
LONG_FILTERS = [
    " OR ".join(f"n = {k}" for k in range(2000)),
    " AND ".join(f"n != {k}" for k in range(1000, 3000)),
    " OR ".join(f"i = {k % 50} AND s >= 'k{k}'" for k in range(1000)),
]


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(specs=st.lists(tt.files(), min_size=1, max_size=2), row_filter=st.sampled_from(LONG_FILTERS))
def test_long_filter_residuals_read_in_java(
    java: Any, specs: list[dict[str, Any]], row_filter: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = tt.write_table(Path(tmp) / "t", _finite(specs))
        tasks = list(table.scan(row_filter=row_filter).plan_files())
    for task in tasks:
        check_in_java(java, task)


def test_global_equality_deletes_java_cannot_read(java: Any, tmp_path: Path) -> None:
    """The one thing frazil writes that Java refuses, and why it is Java's limit."""
    spec = {
        "partition": dict.fromkeys(tt.PARTITION_VALUES, None) | {"p_i": 7},
        "records": 5,
        "size": 1000,
        "metrics": {},
        "split_offsets": None,
        "key_metadata": None,
        "sort_order_id": None,
        "format": "PARQUET",
        "deletes": ["eq-global", "pos"],
        "eq_ids": [16],
    }
    [task] = tt.write_table(tmp_path / "t", [spec]).scan().plan_files()
    assert sorted(d.spec_id for d in task.delete_files) == [0, 1]
    assert check_in_java(java, task) == 1


def test_non_finite_partition_values(java: Any, tmp_path: Path) -> None:
    """frazil writes NaN and infinities as Java's SingleValueParser does, reads them back;
    Java refuses its own form."""
    types = java.org.apache.iceberg.types.Types
    parser = java.org.apache.iceberg.SingleValueParser
    base = {
        "partition": dict.fromkeys(tt.PARTITION_VALUES, None),
        "records": 5,
        "size": 1000,
        "metrics": {},
        "split_offsets": None,
        "key_metadata": None,
        "sort_order_id": None,
        "format": "PARQUET",
        "deletes": [],
        "eq_ids": [16],
    }
    for n, (field, value) in enumerate(
        [("p_f", math.nan), ("p_d", math.inf), ("p_d", -math.inf), ("p_f", math.inf)]
    ):
        spec = dict(base, partition=dict(base["partition"], **{field: value}))
        [task] = tt.write_table(tmp_path / f"t{n}", [spec]).scan().plan_files()
        written = json.loads(task.to_json())["data-file"]["partition"]
        field_id = str(1002 if field == "p_f" else 1003)
        java_type = types.FloatType.get() if field == "p_f" else types.DoubleType.get()
        java_form = json.loads(str(parser.toJson(types.DoubleType.get(), value)))
        assert written == {field_id: java_form}
        back = tt.file_scan_task_from_json(task.to_json()).file.partition[field]
        assert tt.comparable(back) == tt.comparable(value)
        with pytest.raises(Exception) as raised:
            parser.fromJson(java_type, json.dumps(java_form))
        assert "Cannot parse" in _java_message(raised.value)
        with pytest.raises(Exception) as raised:
            _from_json(java, task.to_json())
        assert "Cannot parse" in _java_message(raised.value)


# --- Java -> frazil ------------------------------------------------------------------------


def _java_scan(java_table: Any, selection: str) -> Any:
    scan = java_table.newScan()
    if selection.startswith("snapshot:"):
        return scan.useSnapshot(int(selection[9:]))
    if selection.startswith("ref:"):
        return scan.useRef(selection[4:])
    if selection.startswith("asof:"):
        return scan.asOfTime(int(selection[5:]))
    assert selection == "current", selection
    return scan


def _row_group_table(tables: Warehouse) -> ScanTable:
    """Parquet files of many row groups (so many split offsets), position deletes, a second
    partition spec."""
    name = tables.name(NAMESPACE, "row_groups")
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    tables.sql(f"DROP TABLE IF EXISTS {name}")
    tables.sql(
        f"CREATE TABLE {name} (id bigint, cat string, payload string) USING iceberg "
        "PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='2', "
        "'write.parquet.row-group-size-bytes'='4096', "
        "'write.parquet.row-group-check-min-record-count'='10', "
        "'write.parquet.row-group-check-max-record-count'='50', "
        "'write.delete.mode'='merge-on-read')"
    )
    rnd = random.Random(7)
    ddl = "id bigint, cat string, payload string"
    for k in range(3):
        rows = [
            (
                i,
                "abc"[i % 3] if k < 2 else "a",
                "".join(rnd.choices("xyzw0123", k=rnd.randint(5, 80))),
            )
            for i in range(300 * (k + 1))
        ]
        tables.spark.createDataFrame(rows, ddl).coalesce(1).writeTo(name).append()
    tables.sql(f"DELETE FROM {name} WHERE id % 11 = 0")
    tables.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(4, id)")
    rows = [(i, "b", "p" * (i % 50)) for i in range(400)]
    tables.spark.createDataFrame(rows, ddl).coalesce(1).writeTo(name).append()
    location = tables.current_metadata_file(NAMESPACE, "row_groups")
    return ScanTable(
        name="row_groups",
        format_version=2,
        metadata_location=str(location),
        columns=(),
        selections=(Selection("current", "current", {}),),
        filters=(),
        seconds_to_build=0.0,
    )


@pytest.fixture(scope="module")
def parity_tables(scan_tables: dict[str, ScanTable], tables: Warehouse) -> list[ScanTable]:
    return [*scan_tables.values(), _row_group_table(tables)]


def _cases(parity_tables: list[ScanTable]) -> Iterator[tuple[ScanTable, Selection]]:
    for table in parity_tables:
        for selection in table.selections:
            yield table, selection


def test_java_tasks_read_in_frazil(
    java: Any, plan_referee: PlanReferee, parity_tables: list[ScanTable]
) -> None:
    compared = unwritable = 0
    for table, selection in _cases(parity_tables):
        label = f"{table.name} {selection.label}"
        java_table = plan_referee.load(table.metadata_location)
        java_tasks = list(
            _iterate(_java_scan(java_table, selection.java).includeColumnStats().planFiles())
        )
        frazil_table = frazil.StaticTable.from_metadata(table.metadata_location)
        scan = frazil_table.scan(**selection.kwargs, options={"include-column-stats": True})
        mine = {t.file.file_path: t for t in scan.plan_files()}
        assert {str(t.file().location()) for t in java_tasks} == set(mine), label
        for jt in java_tasks:
            path = str(jt.file().location())
            try:
                text = _to_json(java, jt)
            except Exception as error:
                # Java 1.10.2 cannot write a task holding a delete file of another spec.
                assert "Invalid partition spec id" in _java_message(error), (label, path)
                assert any(d.spec_id != mine[path].spec_id for d in mine[path].delete_files)
                unwritable += 1
                continue
            theirs = tt.file_scan_task_from_json(text)
            # Delete files' column sizes: see test_delete_files_keep_their_column_sizes.
            assert _view(theirs, False) == _view(mine[path], False), (label, path)
            compared += 1
    assert compared > 100
    assert unwritable > 0  # the tables do hold global equality deletes


def test_delete_files_keep_their_column_sizes(
    java: Any, plan_referee: PlanReferee, parity_tables: list[ScanTable]
) -> None:
    """Java's DeleteFileIndex keeps every stat of a delete file (``copy()``), so its task JSON
    carries the delete files' column sizes; with include-column-stats frazil's must too."""
    with_sizes = 0
    for table, selection in _cases(parity_tables):
        java_table = plan_referee.load(table.metadata_location)
        theirs = plan_referee.delete_column_sizes(java_table, selection.java)
        with_sizes += sum(bool(s) for deletes in theirs.values() for s in deletes.values())
        frazil_table = frazil.StaticTable.from_metadata(table.metadata_location)
        frazil_scan = frazil_table.scan(**selection.kwargs, options={"include-column-stats": True})
        mine = {
            t.file.file_path: {d.file_path: d.column_sizes for d in t.delete_files}
            for t in frazil_scan.plan_files()
        }
        assert mine == theirs, f"{table.name} {selection.label}"
    assert with_sizes > 10


# --- plan_tasks ----------------------------------------------------------------------------

SPLIT_OPTIONS = [
    (134_217_728, 10, 4_194_304),  # Java's defaults
    (2000, 3, 100),
    (4096, 1, 0),
    (9000, 4, 3000),
    (700, 2, 50),
    (1, 1, 0),
]


def _frazil_groups(scan: Any) -> list[list[tuple[str, int, int]]]:
    return [[(t.file.file_path, t.start, t.length) for t in g.tasks] for g in scan.plan_tasks()]


def merge_contiguous(group: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """TableScanUtil.mergeTasks: a piece directly after the previous piece of the same file
    joins it."""
    out: list[tuple[str, int, int]] = []
    for path, start, length in group:
        if out and out[-1][0] == path and out[-1][1] + out[-1][2] == start:
            out[-1] = (path, out[-1][1], out[-1][2] + length)
        else:
            out.append((path, start, length))
    return out


def _plan_tasks_cases(
    plan_referee: PlanReferee, parity_tables: list[ScanTable]
) -> Iterator[tuple[str, Any, Any, int]]:
    """(label, Java's groups, frazil's groups, Java's pieces before packing) per table and
    options, Java fed its planned tasks in frazil's plan order (Java may plan manifests in
    parallel)."""
    for table in parity_tables:
        java_table = plan_referee.load(table.metadata_location)
        frazil_table = frazil.StaticTable.from_metadata(table.metadata_location)
        order = [t.file.file_path for t in frazil_table.scan(options={"threads": 1}).plan_files()]
        for target, lookback, cost in SPLIT_OPTIONS:
            options = {
                "read.split.target-size": target,
                "read.split.planning-lookback": lookback,
                "read.split.open-file-cost": cost,
            }
            label = f"{table.name} target={target} lookback={lookback} cost={cost}"
            theirs, pieces = plan_referee.plan_tasks(java_table, order, target, lookback, cost)
            yield (label, theirs, _frazil_groups(frazil_table.scan(options=options)), pieces)


def test_plan_tasks_pack_and_combine_as_java(
    java: Any, plan_referee: PlanReferee, parity_tables: list[ScanTable]
) -> None:
    """The same pieces in the same bins, and the same combined tasks: Java's
    BaseCombinedScanTask(List) merges a file's contiguous pieces in a bin into one task
    (TableScanUtil.mergeTasks), and frazil's combined tasks must be those tasks."""
    cases = list(_plan_tasks_cases(plan_referee, parity_tables))
    assert sum(pieces for *_, pieces in cases) > 500
    # Some bins do hold contiguous pieces: Java's tasks are fewer than its pieces.
    assert any(sum(map(len, theirs)) < pieces for _, theirs, _, pieces in cases)
    for label, theirs, mine, _ in cases:
        assert [merge_contiguous(g) for g in mine] == theirs, label
        assert mine == theirs, label
