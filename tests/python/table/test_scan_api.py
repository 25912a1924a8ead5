"""The scan API (issue 10): ``table.scan(...)`` picks a snapshot (current, by id, by branch or
tag, as of a time from the snapshot log), is immutable (``filter``, ``select``, ``use_ref``
return new scans; filters combine with AND), takes filters as expressions or text, prunes by
partition and leaves residuals, and hands out FileScanTask / DataFile views whose fields are
what the manifests say.

Tables are written with frazil's manifest writers (tests/python/table/scan_helpers.py).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import StaticTable, _native, transforms
from frazil.errors import FrazilError, NotFoundError, UnknownFieldError, ValidationError
from frazil.expressions import (
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThanOrEqual,
    LessThan,
    parse,
)
from frazil.table.scan import DataScan
from scan_helpers import (
    UNPARTITIONED,
    TableWriter,
    data_file,
    entry,
    long_bytes,
    names,
    paths,
)

T1 = 1_700_000_000_000
T2, T3, T4 = T1 + 60_000, T1 + 120_000, T1 + 180_000
UTC = dt.timezone.utc


def _ms_datetime(ms: int, tz: dt.tzinfo | None = UTC) -> dt.datetime:
    moment = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=ms)
    return moment.astimezone(tz) if tz is not None else moment.replace(tzinfo=None)


def _file(w: TableWriter, name: str, cat: str, day: dt.date, lo: int, hi: int) -> Any:
    return data_file(
        w.path(name),
        {"cat": cat, "ts_day": day},
        lower_bounds={1: long_bytes(lo)},
        upper_bounds={1: long_bytes(hi)},
    )


@pytest.fixture
def history(tmp_path: Path) -> StaticTable:
    """Snapshots 1 (a), 2 (+b), 4 (+d) on main; 3 (+c) on branch ``dev`` off 1; tags ``v1``
    on 1 and ``v2`` on 2. The snapshot log has main's snapshots only."""
    w = TableWriter(tmp_path / "t")
    day = dt.date(2024, 1, 1)
    a = _file(w, "a.parquet", "a", day, 0, 9)
    b = _file(w, "b.parquet", "b", day + dt.timedelta(1), 10, 19)
    c = _file(w, "c.parquet", "c", day + dt.timedelta(2), 20, 29)
    d = _file(w, "d.parquet", "a", day + dt.timedelta(1), 30, 39)
    w.commit(1, T1, [([entry(a)], 0, "data")])
    w.commit(2, T2, [([entry(b)], 0, "data")], parent=1)
    w.commit(3, T3, [([entry(c)], 0, "data")], parent=1)
    w.commit(4, T4, [([entry(d)], 0, "data")], parent=2)
    return w.table(
        current=4,
        refs={"dev": (3, "branch"), "v1": (1, "tag"), "v2": (2, "tag")},
        log=[(1, T1), (2, T2), (4, T4)],
    )


# --- snapshot selection --------------------------------------------------------------------


def test_the_current_snapshot_by_default(history: StaticTable) -> None:
    scan = history.scan()
    assert scan.snapshot() is not None and scan.snapshot().snapshot_id == 4
    assert names(scan) == {"a.parquet", "b.parquet", "d.parquet"}


@pytest.mark.parametrize(
    ("snapshot_id", "expected"),
    [(1, {"a"}), (2, {"a", "b"}), (3, {"a", "c"}), (4, {"a", "b", "d"})],
)
def test_snapshot_id(history: StaticTable, snapshot_id: int, expected: set[str]) -> None:
    scan = history.scan(snapshot_id=snapshot_id)
    assert scan.snapshot().snapshot_id == snapshot_id
    assert names(scan) == {f"{n}.parquet" for n in expected}


@pytest.mark.parametrize(
    ("ref", "snapshot_id", "expected"),
    [
        ("main", 4, {"a", "b", "d"}),
        ("dev", 3, {"a", "c"}),
        ("v1", 1, {"a"}),
        ("v2", 2, {"a", "b"}),
    ],
)
def test_ref_branch_and_tag(
    history: StaticTable, ref: str, snapshot_id: int, expected: set[str]
) -> None:
    for scan in (history.scan(ref=ref), history.scan().use_ref(ref)):
        assert scan.snapshot().snapshot_id == snapshot_id
        assert names(scan) == {f"{n}.parquet" for n in expected}


@pytest.mark.parametrize(
    ("as_of", "snapshot_id"),
    [
        (T1, 1),  # the log entry's own time: inclusive
        (T2 - 1, 1),
        (T2, 2),
        (T3, 2),  # the branch's snapshot is not in the (main) snapshot log
        (T4 - 1, 2),
        (T4, 4),
        (T4 + 10**9, 4),
    ],
)
def test_as_of_milliseconds(history: StaticTable, as_of: int, snapshot_id: int) -> None:
    scan = history.scan(as_of=as_of)
    assert scan.snapshot().snapshot_id == snapshot_id
    assert paths(scan) == paths(history.scan(snapshot_id=snapshot_id))


@pytest.mark.parametrize(
    "tz",
    [UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)), dt.timezone(dt.timedelta(hours=-8))],
)
@pytest.mark.parametrize(("ms", "snapshot_id"), [(T1, 1), (T2 - 1, 1), (T2, 2), (T3, 2), (T4, 4)])
def test_as_of_aware_datetime_is_the_same_instant(
    history: StaticTable, tz: dt.tzinfo, ms: int, snapshot_id: int
) -> None:
    when = _ms_datetime(ms, tz)
    assert history.scan(as_of=when).snapshot().snapshot_id == snapshot_id


@pytest.mark.parametrize(("ms", "snapshot_id"), [(T1, 1), (T2 - 1, 1), (T2, 2), (T4, 4)])
def test_as_of_naive_datetime_is_utc(history: StaticTable, ms: int, snapshot_id: int) -> None:
    """scan.py / _table.timestamp_ms: a naive datetime is taken as UTC."""
    when = _ms_datetime(ms, None)
    assert when.tzinfo is None
    assert history.scan(as_of=when).snapshot().snapshot_id == snapshot_id


def test_as_of_datetime_below_a_millisecond(history: StaticTable) -> None:
    """Microseconds below the millisecond: just before T2 is still snapshot 1."""
    at_t2 = _ms_datetime(T2)
    assert history.scan(as_of=at_t2 - dt.timedelta(microseconds=1)).snapshot().snapshot_id == 1
    assert history.scan(as_of=at_t2 + dt.timedelta(microseconds=999)).snapshot().snapshot_id == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"snapshot_id": 1, "ref": "v1"},
        {"snapshot_id": 1, "as_of": T2},
        {"ref": "dev", "as_of": T2},
        {"snapshot_id": 1, "ref": "v1", "as_of": T2},
    ],
)
def test_at_most_one_snapshot_selector(history: StaticTable, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as raised:
        history.scan(**kwargs)
    for name in kwargs:
        assert name in str(raised.value)


def test_use_ref_refuses_a_scan_that_chose_a_snapshot(history: StaticTable) -> None:
    # As Java's useRef and pyiceberg's use_ref: an earlier choice is never silently dropped.
    chosen = (history.scan(snapshot_id=2), history.scan(as_of=T2), history.scan(ref="dev"))
    for scan, named in zip(chosen, ("snapshot_id=2", "as_of=", "ref='dev'"), strict=True):
        with pytest.raises(ValidationError, match=f"cannot use ref 'main'.*{named}"):
            scan.use_ref("main")
        assert scan.snapshot().snapshot_id in (2, 3)
    moved = history.scan().use_ref("dev")
    assert moved.snapshot().snapshot_id == 3 and moved.ref == "dev"


def test_a_table_without_snapshots_plans_nothing(tmp_path: Path) -> None:
    table = TableWriter(tmp_path / "t").table()
    assert table.current_snapshot() is None
    for scan in (table.scan(), table.scan(ref="main"), table.scan(row_filter="id < 3")):
        assert scan.snapshot() is None
        assert list(scan.plan_files()) == []
        assert list(scan.plan_tasks()) == []
        arrow = scan.plan_arrow()
        assert arrow.num_rows == 0
        assert arrow.schema == _native.plan_arrow_schema()
    with pytest.raises(ValidationError, match="dev"):
        table.scan(ref="dev")
    with pytest.raises(FrazilError):
        table.scan(as_of=T1)


# --- immutability and filters --------------------------------------------------------------


def test_filter_returns_a_new_scan_and_ands(history: StaticTable) -> None:
    base = history.scan()
    by_cat = base.filter("cat = 'a'")
    assert isinstance(by_cat, DataScan) and by_cat is not base
    assert base.row_filter == AlwaysTrue()
    assert by_cat.row_filter == And(AlwaysTrue(), EqualTo("cat", "a"))
    both = by_cat.filter(LessThan("id", 10))
    assert both.row_filter == And(And(AlwaysTrue(), EqualTo("cat", "a")), LessThan("id", 10))
    assert by_cat.row_filter == And(AlwaysTrue(), EqualTo("cat", "a"))
    assert names(base) == {"a.parquet", "b.parquet", "d.parquet"}
    assert names(by_cat) == {"a.parquet", "d.parquet"}
    assert names(base.filter(LessThan("id", 10))) == {"a.parquet"}
    assert names(both) == {"a.parquet"}
    # AND, not replace: a second filter that alone keeps b and d keeps only d with cat = 'a'.
    assert names(by_cat.filter("id >= 10")) == {"d.parquet"}
    assert names(history.scan(row_filter="id >= 10").filter("cat = 'b'")) == {"b.parquet"}


def test_filter_keeps_everything_else(history: StaticTable) -> None:
    base = history.scan(
        snapshot_id=2,
        selected_fields=("id", "cat"),
        case_sensitive=False,
        limit=5,
        options={"threads": 1},
    )
    for scan in (base.filter("ID < 100"), base.select("id"), base.with_case_sensitive(False)):
        assert scan.snapshot().snapshot_id == 2
        assert scan.case_sensitive is False
        assert scan.limit == 5
        assert scan.options == {"threads": 1}
    assert base.filter("ID < 100").selected_fields == ("id", "cat")


def test_select_returns_a_new_scan(history: StaticTable) -> None:
    base = history.scan()
    picked = base.select("id", "ts")
    assert picked is not base
    assert picked.selected_fields == ("id", "ts")
    assert base.selected_fields == ("*",)
    assert picked.row_filter == base.row_filter
    assert paths(picked) == paths(base)


def test_options_are_copied(history: StaticTable) -> None:
    options = {"threads": 2}
    scan = history.scan(options=options)
    options["threads"] = "nonsense"
    assert scan.options == {"threads": 2}
    assert names(scan) == {"a.parquet", "b.parquet", "d.parquet"}


@pytest.mark.parametrize(
    ("text", "expression", "expected"),
    [
        ("cat = 'a'", EqualTo("cat", "a"), {"a", "d"}),
        ("id < 10", LessThan("id", 10), {"a"}),
        (
            "ts >= '2024-01-02T00:00:00+00:00'",
            GreaterThanOrEqual("ts", dt.datetime(2024, 1, 2, tzinfo=UTC)),
            {"b", "d"},
        ),
        ("cat = 'a' AND id >= 30", And(EqualTo("cat", "a"), GreaterThanOrEqual("id", 30)), {"d"}),
        # d (cat a, ids 30..39) stays: cat has no column metrics, and its partition cannot
        # rule out id < 10 (Java's planner keeps it too); its residual is id < 10.
        ("cat = 'b' OR id < 10", parse("cat = 'b' OR id < 10"), {"a", "b", "d"}),
        ("cat IN ('b', 'c')", parse("cat IN ('b', 'c')"), {"b"}),
        ("cat IS NULL", parse("cat IS NULL"), set()),
    ],
)
def test_string_filters(
    history: StaticTable, text: str, expression: Any, expected: set[str]
) -> None:
    from_text = history.scan(row_filter=text)
    assert from_text.row_filter == parse(text)
    assert names(from_text) == {f"{n}.parquet" for n in expected}
    assert names(history.scan(row_filter=expression)) == {f"{n}.parquet" for n in expected}
    assert names(history.scan().filter(text)) == {f"{n}.parquet" for n in expected}


def test_a_filter_that_is_neither_text_nor_expression(history: StaticTable) -> None:
    with pytest.raises(FrazilError):
        history.scan(row_filter=42)  # type: ignore[arg-type]


def test_case_insensitive(history: StaticTable) -> None:
    with pytest.raises(UnknownFieldError):
        list(history.scan(row_filter="CAT = 'a'").plan_files())
    insensitive = history.scan(row_filter="CAT = 'a' AND Id >= 30", case_sensitive=False)
    assert names(insensitive) == {"d.parquet"}
    toggled = history.scan(row_filter="CAT = 'a'").with_case_sensitive(False)
    assert names(toggled) == {"a.parquet", "d.parquet"}
    [task] = insensitive.plan_files()
    assert json.loads(task.residual_json) == {"type": "gt-eq", "term": "id", "value": 30}


# --- partition pruning and residuals -------------------------------------------------------


@pytest.fixture
def days(tmp_path: Path) -> StaticTable:
    """Files by cat in {a, b} and day 2024-01-01..03 (no column metrics: partitions prune)."""
    w = TableWriter(tmp_path / "t")
    files = [
        data_file(w.path(f"{cat}{n}.parquet"), {"cat": cat, "ts_day": dt.date(2024, 1, n)})
        for cat in "ab"
        for n in (1, 2, 3)
    ]
    w.commit(1, T1, [([entry(f) for f in files], 0, "data")])
    return w.table()


def _residuals(scan: DataScan) -> dict[str, Any]:
    return {Path(t.file.file_path).stem: json.loads(t.residual_json) for t in scan.plan_files()}


def test_identity_partition_guarantees_the_filter(days: StaticTable) -> None:
    planned = _residuals(days.scan(row_filter="cat = 'a'"))
    assert planned == {"a1": True, "a2": True, "a3": True}
    for task in days.scan(row_filter="cat = 'a'").plan_files():
        assert task.residual == AlwaysTrue()


def test_identity_partition_leaves_the_rest(days: StaticTable) -> None:
    planned = _residuals(days.scan(row_filter="cat = 'b' AND id < 5"))
    rest = {"type": "lt", "term": "id", "value": 5}
    assert planned == {"b1": rest, "b2": rest, "b3": rest}
    for task in days.scan(row_filter="cat = 'b' AND id < 5").plan_files():
        assert task.residual == LessThan("id", 5)


def test_day_partition_at_midnight_is_guaranteed(days: StaticTable) -> None:
    planned = _residuals(days.scan(row_filter="ts >= '2024-01-02T00:00:00+00:00'"))
    assert planned == {"a2": True, "a3": True, "b2": True, "b3": True}


def test_day_partition_mid_day_keeps_the_predicate_on_that_day(days: StaticTable) -> None:
    text = "ts >= '2024-01-02T12:00:00+00:00'"
    planned = _residuals(days.scan(row_filter=text))
    kept = {"type": "gt-eq", "term": "ts", "value": "2024-01-02T12:00:00+00:00"}
    assert planned == {"a2": kept, "a3": True, "b2": kept, "b3": True}
    residuals = {
        Path(t.file.file_path).stem: t.residual for t in days.scan(row_filter=text).plan_files()
    }
    assert residuals["a2"] == GreaterThanOrEqual("ts", dt.datetime(2024, 1, 2, 12, tzinfo=UTC))
    assert residuals["a3"] == AlwaysTrue()


def test_day_and_identity_together(days: StaticTable) -> None:
    text = "cat = 'a' AND ts < '2024-01-02T06:00:00+00:00' AND id = 7"
    planned = _residuals(days.scan(row_filter=text))
    before = {"type": "lt", "term": "ts", "value": "2024-01-02T06:00:00+00:00"}
    id_is_7 = {"type": "eq", "term": "id", "value": 7}
    assert planned == {
        "a1": id_is_7,
        "a2": {"type": "and", "left": before, "right": id_is_7},
    }


def test_or_across_partitions(days: StaticTable) -> None:
    planned = _residuals(days.scan(row_filter="cat = 'a' OR ts < '2024-01-02T00:00:00+00:00'"))
    assert planned == {"a1": True, "a2": True, "a3": True, "b1": True}


def test_a_filter_no_partition_matches(days: StaticTable) -> None:
    assert _residuals(days.scan(row_filter="cat = 'z'")) == {}
    assert _residuals(days.scan(row_filter="ts < '2023-12-31T00:00:00+00:00'")) == {}


def test_delete_manifests_are_read_only_when_a_data_manifest_is(tmp_path: Path) -> None:
    """No data manifest left after pruning: the plan is empty without reading the delete
    manifests (the delete manifest here is missing: planning "cat = 'b'" never opens it)."""
    w = TableWriter(tmp_path / "t")
    data = data_file(w.path("a1.parquet"), {"cat": "a", "ts_day": dt.date(2024, 1, 1)})
    deletes = data_file(
        w.path("b-deletes.parquet"), {"cat": "b", "ts_day": dt.date(2024, 1, 1)}, content=1
    )
    w.commit(1, T1, [([entry(data)], 0, "data"), ([entry(deletes)], 0, "deletes")])
    table = w.table()
    (tmp_path / "t" / "metadata" / "m2.avro").unlink()
    assert paths(table.scan(row_filter="cat = 'b'")) == []
    with pytest.raises(NotFoundError, match=r"m2\.avro"):
        paths(table.scan())


def test_a_delete_file_is_one_object_for_every_task_it_applies_to(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t")
    partition = {"cat": "a", "ts_day": dt.date(2024, 1, 1)}
    files = [data_file(w.path(f"a{n}.parquet"), partition) for n in range(3)]
    deletes = data_file(w.path("a-deletes.parquet"), partition, content=1)
    w.commit(1, T1, [([entry(f) for f in files], 0, "data"), ([entry(deletes)], 0, "deletes")])
    tasks = list(w.table().scan().plan_files())
    assert len(tasks) == 3
    shared = tasks[0].delete_files[0]
    assert shared.file_path == w.path("a-deletes.parquet") and shared.content == 1
    assert all(t.delete_files[0] is shared for t in tasks)
    # Another plan makes its own objects, equal in content.
    [again, *_] = w.table().scan().plan_files()
    assert again.delete_files[0] is not shared
    assert again.delete_files[0].file_path == shared.file_path


def test_each_spec_reads_only_its_own_manifests_summaries(tmp_path: Path) -> None:
    """After partition evolution a manifest list holds summaries laid out by several specs:
    a string bound of spec 0's first field where spec 2's first field is an int. Pruning by
    spec 2's field reads spec 2's manifests only (found reading a Java-written table)."""
    by_cat = {
        "spec-id": 0,
        "fields": [{"name": "cat", "transform": "identity", "source-id": 3, "field-id": 1000}],
    }
    by_bucket = {
        "spec-id": 2,
        "fields": [{"name": "id_b", "transform": "bucket[4]", "source-id": 1, "field-id": 1001}],
    }
    w = TableWriter(tmp_path / "t", specs=(by_cat, by_bucket), default_spec_id=2)
    old = data_file(w.path("old.parquet"), {"cat": "abc"})
    w.commit(1, T1, [([entry(old)], 0, "data")])
    new = [data_file(w.path(f"b{b}.parquet"), {"id_b": b}) for b in range(4)]
    w.commit(2, T2, [([entry(f)], 2, "data") for f in new], parent=1)
    table = w.table()
    assert names(table.scan()) == {"old.parquet", *(f"b{b}.parquet" for b in range(4))}
    bucket = transforms.bucket(pa.array([5], pa.int64()), 4).to_pylist()[0]
    assert names(table.scan(row_filter="id = 5")) == {"old.parquet", f"b{bucket}.parquet"}
    assert names(table.scan(row_filter="cat = 'zzz'")) == {f"b{b}.parquet" for b in range(4)}


# --- column stats --------------------------------------------------------------------------

METRICS = {
    "column_sizes": {1: 100, 3: 50},
    "value_counts": {1: 10, 3: 10},
    "null_value_counts": {1: 0, 3: 2},
    "nan_value_counts": {},
    "lower_bounds": {1: long_bytes(-5), 3: b"aa"},
    "upper_bounds": {1: long_bytes(42), 3: b"zz"},
}


@pytest.fixture
def with_metrics(tmp_path: Path) -> TableWriter:
    w = TableWriter(tmp_path / "t")
    f = data_file(w.path("m.parquet"), {"cat": "a", "ts_day": dt.date(2024, 1, 1)}, **METRICS)
    d = data_file(w.path("del.parquet"), {"cat": "a", "ts_day": dt.date(2024, 1, 1)}, content=1)
    d.update(METRICS)
    w.commit(1, T1, [([entry(f)], 0, "data")])
    w.commit(2, T2, [([entry(d)], 0, "deletes")], parent=1)
    return w


def _metrics(file: Any) -> dict[str, Any]:
    return {name: getattr(file, name) for name in METRICS}


@pytest.mark.parametrize("value", [None, False, "false", "FALSE", "0", "no"])
def test_column_stats_off(with_metrics: TableWriter, value: Any) -> None:
    options = {} if value is None else {"include-column-stats": value}
    [task] = with_metrics.table().scan(options=options).plan_files()
    assert _metrics(task.file) == dict.fromkeys(METRICS)
    # Still used for pruning.
    assert list(with_metrics.table().scan(row_filter="id > 42", options=options).plan_files()) == []
    assert "column-sizes" not in json.loads(task.to_json())["data-file"]


@pytest.mark.parametrize("value", [True, "true", "True", "1", "yes"])
def test_column_stats_on(with_metrics: TableWriter, value: Any) -> None:
    [task] = with_metrics.table().scan(options={"include-column-stats": value}).plan_files()
    assert _metrics(task.file) == METRICS
    [delete] = task.delete_files
    # Delete files' column_sizes: test_column_stats_on_keep_delete_file_column_sizes.
    no_sizes = {k: v for k, v in METRICS.items() if k != "column_sizes"}
    assert {k: v for k, v in _metrics(delete).items() if k != "column_sizes"} == no_sizes
    written = json.loads(task.to_json())["data-file"]
    assert written["column-sizes"] == {"keys": [1, 3], "values": [100, 50]}
    assert written["lower-bounds"] == {"keys": [1, 3], "values": ["fbffffffffffffff", "6161"]}


def test_column_stats_on_keep_delete_file_column_sizes(with_metrics: TableWriter) -> None:
    """Java's DeleteFileIndex keeps every stat of a delete file (``copy()``), and its task JSON
    writes them (tests/interop/test_scan_task_json_parity.py checks Java's side)."""
    [task] = with_metrics.table().scan(options={"include-column-stats": True}).plan_files()
    [delete] = task.delete_files
    assert delete.column_sizes == METRICS["column_sizes"]
    assert json.loads(task.to_json())["delete-files"][0]["column-sizes"] == {
        "keys": [1, 3],
        "values": [100, 50],
    }


def test_column_stats_from_table_properties(with_metrics: TableWriter) -> None:
    table = with_metrics.table(properties={"include-column-stats": "true"})
    [task] = table.scan().plan_files()
    assert _metrics(task.file) == METRICS
    # The scan's option wins over the table property.
    [task] = table.scan(options={"include-column-stats": False}).plan_files()
    assert task.file.column_sizes is None


# --- threads -------------------------------------------------------------------------------


@pytest.fixture
def many(tmp_path: Path) -> StaticTable:
    """Six data manifests of 40 files each, position and equality deletes, bounds on id."""
    w = TableWriter(tmp_path / "t")
    manifests = []
    for k in range(6):
        files = [
            data_file(
                w.path(f"m{k}-{n}.parquet"),
                {"cat": "ab"[n % 2], "ts_day": dt.date(2024, 1, 1 + n % 5)},
                records=n + 1,
                size=1000 + 37 * n + k,
                lower_bounds={1: long_bytes(100 * k + n)},
                upper_bounds={1: long_bytes(100 * k + n + 5)},
                split_offsets=[4, 500] if n % 3 == 0 else None,
            )
            for n in range(40)
        ]
        manifests.append(([entry(f) for f in files], 0, "data"))
    w.commit(1, T1, manifests)
    deletes = [
        data_file(
            w.path(f"pos-{n}.parquet"),
            {"cat": "ab"[n % 2], "ts_day": dt.date(2024, 1, 1 + n)},
            content=1,
            size=300 + n,
        )
        for n in range(5)
    ]
    eq = data_file(w.path("eq.parquet"), {}, content=2, equality_ids=[1], size=77)
    w.commit(2, T2, [([entry(d) for d in deletes], 0, "deletes"), ([entry(eq)], 1, "deletes")], 1)
    return w.table()


def _plan_summary(scan: DataScan) -> list[tuple[Any, ...]]:
    return [
        (
            t.file.file_path,
            t.start,
            t.length,
            tuple(d.file_path for d in t.delete_files),
            t.residual_json,
            t.to_json(),
        )
        for t in scan.plan_files()
    ]


def _tasks_summary(scan: DataScan) -> list[list[tuple[str, int, int]]]:
    return [[(t.file.file_path, t.start, t.length) for t in g.tasks] for g in scan.plan_tasks()]


@pytest.mark.parametrize("row_filter", [None, "id < 250", "cat = 'a' AND id >= 120"])
def test_threads_do_not_change_the_plan(many: StaticTable, row_filter: str | None) -> None:
    def scan(threads: Any) -> DataScan:
        return many.scan(
            row_filter=row_filter,
            options={"threads": threads, "read.split.target-size": 2000},
        )

    one = _plan_summary(scan(1))
    assert len(one) > 10
    for threads in (4, "4", 2, 0):
        assert _plan_summary(scan(threads)) == one
        assert _tasks_summary(scan(threads)) == _tasks_summary(scan(1))
        assert scan(threads).plan_arrow().equals(scan(1).plan_arrow())


def test_plan_order_follows_the_manifests(many: StaticTable) -> None:
    """Streamed in manifest-list order, and within a manifest in entry order."""
    planned = [Path(p).stem for p in paths(many.scan(options={"threads": 4}))]
    assert planned == [f"m{k}-{n}" for k in range(6) for n in range(40)]


# --- DataFile fields -----------------------------------------------------------------------


def test_data_file_fields_are_what_was_written(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t")
    day = dt.date(2024, 3, 9)
    first = data_file(
        w.path("x.parquet"),
        {"cat": "x", "ts_day": day},
        records=1234,
        size=56789,
        split_offsets=[4, 1000, 30000],
        key_metadata=b"\x00\xffkey",
        sort_order_id=0,
        **METRICS,
    )
    second = data_file(
        w.path("y.avro"), {"cat": None, "ts_day": None}, records=5, size=77, file_format="AVRO"
    )
    w.commit(1, T1, [([entry(first)], 0, "data")])
    w.commit(
        2,
        T2,
        [([entry(second, sequence_number=1, file_sequence_number=2)], 0, "data")],
        parent=1,
    )
    eq = data_file(
        w.path("eq.parquet"),
        {},
        content=2,
        records=3,
        size=99,
        equality_ids=[1, 3],
        sort_order_id=0,
    )
    pos = data_file(w.path("pos.parquet"), {"cat": "x", "ts_day": day}, content=1, size=55)
    w.commit(3, T3, [([entry(eq)], 1, "deletes"), ([entry(pos)], 0, "deletes")], parent=2)
    table = w.table()
    tasks = {
        Path(t.file.file_path).name: t
        for t in table.scan(options={"include-column-stats": True}).plan_files()
    }
    assert set(tasks) == {"x.parquet", "y.avro"}
    x = tasks["x.parquet"].file
    assert x.file_path == w.path("x.parquet")
    assert x.file_format == "PARQUET"
    assert x.content == 0
    assert x.spec_id == 0 and tasks["x.parquet"].spec_id == 0
    assert x.record_count == 1234
    assert x.file_size_in_bytes == 56789
    assert x.partition == {"cat": "x", "ts_day": day}
    assert x.split_offsets == [4, 1000, 30000]
    assert x.key_metadata == b"\x00\xffkey"
    assert x.sort_order_id == 0
    assert x.equality_ids is None
    assert x.referenced_data_file is None
    assert x.content_offset is None and x.content_size_in_bytes is None
    assert x.first_row_id is None  # v2
    assert x.data_sequence_number == 1 and x.file_sequence_number == 1
    assert x.manifest_path == str(w.meta / "m1.avro")
    assert _metrics(x) == METRICS
    assert tasks["x.parquet"].start == 0 and tasks["x.parquet"].length == 56789

    y = tasks["y.avro"].file
    assert y.file_format == "AVRO"
    assert y.partition == {"cat": None, "ts_day": None}
    assert y.split_offsets is None and y.key_metadata is None and y.sort_order_id is None
    assert y.data_sequence_number == 1 and y.file_sequence_number == 2
    assert y.column_sizes is None and y.lower_bounds is None

    deletes = {Path(d.file_path).name: d for d in tasks["x.parquet"].delete_files}
    assert set(deletes) == {"eq.parquet", "pos.parquet"}
    assert [Path(d.file_path).name for d in tasks["y.avro"].delete_files] == ["eq.parquet"]
    e = deletes["eq.parquet"]
    assert (e.content, e.spec_id, e.record_count, e.file_size_in_bytes) == (2, 1, 3, 99)
    assert e.equality_ids == [1, 3] and e.sort_order_id == 0
    assert e.partition == {}
    assert e.data_sequence_number == 3
    p = deletes["pos.parquet"]
    assert (p.content, p.spec_id, p.file_size_in_bytes) == (1, 0, 55)
    assert p.partition == {"cat": "x", "ts_day": day}
    assert p.equality_ids is None


def test_v3_fields(tmp_path: Path) -> None:
    """Row lineage (first_row_id inherited from the manifest), deletion vectors."""
    w = TableWriter(tmp_path / "t", specs=(UNPARTITIONED,), format_version=3, default_spec_id=1)
    files = [data_file(w.path(f"{n}.parquet"), records=10 * (n + 1)) for n in range(3)]
    w.commit(1, T1, [([entry(f) for f in files], 1, "data")])
    dv = data_file(
        w.path("dv.puffin"),
        content=1,
        file_format="PUFFIN",
        records=2,
        size=500,
        referenced_data_file=w.path("1.parquet"),
        content_offset=4,
        content_size_in_bytes=40,
    )
    w.commit(2, T2, [([entry(dv)], 1, "deletes")], parent=1)
    tasks = {Path(t.file.file_path).stem: t for t in w.table().scan().plan_files()}
    assert {k: t.file.first_row_id for k, t in tasks.items()} == {"0": 0, "1": 10, "2": 30}
    assert tasks["0"].delete_files == [] and tasks["2"].delete_files == []
    [d] = tasks["1"].delete_files
    assert d.file_format == "PUFFIN"
    assert d.referenced_data_file == w.path("1.parquet")
    assert (d.content_offset, d.content_size_in_bytes) == (4, 40)
    assert (d.content, d.record_count, d.file_size_in_bytes) == (1, 2, 500)


def test_partition_values_of_many_types(tmp_path: Path) -> None:
    types = {
        "i": "int",
        "l": "long",
        "f": "float",
        "d": "double",
        "dec": "decimal(9,2)",
        "b": "boolean",
        "dt": "date",
        "t": "time",
        "ts": "timestamp",
        "tz": "timestamptz",
        "s": "string",
        "u": "uuid",
        "bin": "binary",
        "fx": "fixed[3]",
    }
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": n + 1, "name": k, "required": False, "type": v}
            for n, (k, v) in enumerate(types.items())
        ],
    }
    spec = {
        "spec-id": 0,
        "fields": [
            {"name": k, "transform": "identity", "source-id": n + 1, "field-id": 1000 + n}
            for n, k in enumerate(types)
        ],
    }
    u = uuid.UUID("12345678-9abc-def0-1234-56789abcdef0")
    values = {
        "i": -7,
        "l": 2**40,
        "f": 1.5,
        "d": -0.25,
        "dec": Decimal("12.34"),
        "b": True,
        "dt": dt.date(1969, 12, 31),
        "t": dt.time(23, 59, 59, 999999),
        "ts": dt.datetime(2024, 2, 29, 1, 2, 3, 456789),
        "tz": dt.datetime(2001, 1, 1, tzinfo=UTC),
        "s": "héllo",
        "u": u,
        "bin": b"\x00\x01",
        "fx": b"abc",
    }
    w = TableWriter(tmp_path / "t", schema=schema, specs=(spec,))
    written = dict(values, u=u.bytes)
    nulls = dict.fromkeys(values)
    w.commit(
        1,
        T1,
        [
            (
                [
                    entry(data_file(w.path("v.parquet"), written)),
                    entry(data_file(w.path("n.parquet"), nulls)),
                ],
                0,
                "data",
            )
        ],
    )
    tasks = {Path(t.file.file_path).stem: t for t in w.table().scan().plan_files()}
    assert tasks["v"].file.partition == values
    assert tasks["n"].file.partition == nulls
    assert json.loads(tasks["v"].to_json())["data-file"]["partition"] == {
        "1000": -7,
        "1001": 2**40,
        "1002": 1.5,
        "1003": -0.25,
        "1004": "12.34",
        "1005": True,
        "1006": "1969-12-31",
        "1007": "23:59:59.999999",
        "1008": "2024-02-29T01:02:03.456789",
        "1009": "2001-01-01T00:00:00+00:00",
        "1010": "héllo",
        "1011": str(u),
        "1012": "0001",
        "1013": "616263",
    }
    assert json.loads(tasks["n"].to_json())["data-file"]["partition"] == {}


def test_deleted_entries_are_not_planned(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t")
    part = {"cat": "a", "ts_day": dt.date(2024, 1, 1)}
    live = data_file(w.path("live.parquet"), part)
    gone = data_file(w.path("gone.parquet"), part)
    existing = data_file(w.path("existing.parquet"), part)
    w.commit(
        1,
        T1,
        [
            (
                [
                    entry(live),
                    entry(gone, status=2, sequence_number=1, file_sequence_number=1),
                    entry(existing, status=0, sequence_number=1, file_sequence_number=1),
                ],
                0,
                "data",
            )
        ],
    )
    assert names(w.table().scan()) == {"live.parquet", "existing.parquet"}


def test_limit_must_be_a_non_negative_int(history: StaticTable) -> None:
    assert history.scan(limit=0).limit == 0
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValidationError):
            history.scan(limit=bad)  # type: ignore[arg-type]
