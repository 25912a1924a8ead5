"""Scan planning against Apache Iceberg Java 1.10.2 (issue 10, "Evidence": Java parity).

For every table of tests/interop/scan_tables.py (v1, v2, v3; every transform, partition
evolution with void and removed fields; every type; NaN, -0.0, nulls, truncated bounds;
position deletes, equality deletes, deletion vectors; branches, tags, time travel by id and
by timestamp), every snapshot selection and every filter of its battery
(tests/interop/scan_filters.py), frazil must plan the data files and delete files Java's
``TableScan.planFiles()`` plans, except where Java 1.10.2 is wrong:

- uuid bounds: Java orders ``java.util.UUID`` by its two longs, signed, so it prunes files
  whose bounds straddle 0x80.. and keeps files it could prune. frazil orders uuids as
  unsigned bytes (the spec's order); its expected plan is Java's inclusive metrics
  evaluator with that order (:func:`scan_filters.uuid_metrics_might_match`).
- truncate[W] on int and long wraps around near the type's minimum (``v - v % W`` overflows):
  Java writes the row -2147483648 under truncate[10] into partition 2147483646, then
  projects ``i < -2147483639`` to partitions <= -2147483640 and loses it.
- ``NOT (x < c)`` on a float or double column: Java rewrites it to ``x >= c`` (RewriteNot)
  and prunes files whose only matching rows are NaN, which do satisfy ``NOT (x < c)`` (the
  pitfalls: "NOT (x < c) that prunes on bounds alone drops NaN rows"). frazil keeps them:
  its expected plan adds the files holding a NaN row that matches under that reading.
- Java's partition evaluator orders nulls first, so ``dt <= c`` holds for a null ``dt_month``
  partition value (pitfalls: "Java's residual evaluator orders nulls first: do not copy
  that"). Where the metrics evaluator cannot rule a file out for another reason (an IN of
  more than 200 values), Java plans files of that null partition holding no matching row.
  frazil may skip such a file: one under a null partition value of a column the filter
  compares with an ordered comparison, holding no matching row.
- IS NULL and NOT NAN on a field two structs deep: Java's Parquet metrics do not count the
  rows where an enclosing struct is null (value count 3 and null count 0 in a file of 4
  rows), so Java prunes files holding such rows (for NOT NAN, when the counted values are
  all NaN).

For nested nulls frazil must still plan the file: its expected plan is Java's plus the files
Java pruned that hold matching rows. The truncate wrap-around is different: the partition
value Java wrote is itself wrong (the spec's ``v - (((v % W) + W) % W)`` lies below the type's
minimum, so no partition value is right; a wrapped value is not a multiple of W), and frazil
projects filters as the spec says, so it may skip a file filed under a wrapped value; it
must plan every other file Java plans or that holds a matching row, and nothing more.

Ground truth (tests/interop/scan_truth.py) holds every planner to the inclusive rule: a data
file holding a row that matches the filter is planned. Java is checked against it too, so a
row Java loses for any reason other than the two above fails a test.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from java_referee import FileMetrics, JavaPlanError, Plan, PlanReferee
from scan_filters import FieldStats, Filter, uuid_metrics_might_match
from scan_tables import BUILDERS, ScanTable, Selection
from scan_truth import files_with_matches, read_rows

TABLES = list(BUILDERS)

# Columns on which Java 1.10.2 prunes files holding matching rows, and why (module docstring).
NESTED_NULLS = (
    "Java's Parquet metrics count neither a value nor a null for a leaf two structs deep "
    "whose enclosing struct is null (value count < record count, null count 0): IS NULL "
    "prunes on the null count, NOT NAN on NaN count = value count"
)
WRONG_PARTITION_VALUES = {
    "transforms_v1": {"i": "truncate[10] wraps around at the int minimum"},
    "transforms_v2": {"l": "truncate[1000] wraps around at the long minimum"},
}
# The partition directory and width of those truncate fields.
WRAPPED_PARTITIONS = {"transforms_v1": ("i_trunc", 10), "transforms_v2": ("l_trunc_1000", 1000)}
JAVA_LOSES_ROWS = {
    "types_v2": {"st.inner.x": NESTED_NULLS, "st.inner.dt": NESTED_NULLS},
    "java_types": {
        "u": "uuid bounds compared as signed longs",
        "st.su": "uuid bounds compared as signed longs",
    },
    **WRONG_PARTITION_VALUES,
}


def _touches_wrapped_partitions(table: ScanTable, f: Filter) -> bool:
    """The filter touches a column whose partition values Java wrote wrongly."""
    return bool(f.columns & set(WRONG_PARTITION_VALUES.get(table.name, {})))


def _ordered_columns(expr: Any) -> set[str]:
    """Columns under <, <=, > or >= anywhere in a filter (NOT included)."""
    if not isinstance(expr, dict):
        return set()
    if expr["type"] in ("lt", "lt-eq", "gt", "gt-eq"):
        return {expr["term"]}
    return {c for k in ("child", "left", "right") for c in _ordered_columns(expr.get(k))}


def _null_first_extra(ref: Reference, n: int, location: str) -> bool:
    """Java planned the file only because it orders null partition values first."""
    if location in ref.nan_truth[n]:
        return False
    columns = _ordered_columns(ref.filters[n].expr)
    nulls = re.findall(r"/([^/=]+)=null/", location)
    return any(p == c or p.startswith(c + "_") for p in nulls for c in columns)


def _wrapped(table: ScanTable, location: str) -> bool:
    """The data file is filed under a wrapped truncate value (not a multiple of W)."""
    if table.name not in WRAPPED_PARTITIONS:
        return False
    name, width = WRAPPED_PARTITIONS[table.name]
    found = re.search(rf"/{name}=(-?\d+)/", location)
    return found is not None and int(found.group(1)) % width != 0


@dataclass(frozen=True)
class Reference:
    """Java's plans and the ground truth for one table and snapshot selection."""

    selection: Selection
    filters: tuple[Filter, ...]
    java: tuple[Plan, ...]
    unfiltered: Plan  # the plan for "always true" (every live data file)
    truth: tuple[frozenset[str], ...]  # per filter: data files holding a matching row
    # per filter: the same where NaN rows match negated ordered comparisons
    nan_truth: tuple[frozenset[str], ...]
    metrics: Mapping[str, Mapping[str, FileMetrics]]  # uuid column -> file -> metrics


@pytest.fixture(scope="module")
def references(
    scan_tables: dict[str, ScanTable], plan_referee: PlanReferee
) -> dict[str, list[Reference]]:
    started = time.monotonic()
    rows_cache: dict[str, list[dict[str, Any]]] = {}
    out: dict[str, list[Reference]] = {}
    java_seconds = 0.0
    for name, table in scan_tables.items():
        java_table = plan_referee.load(table.metadata_location)
        names = {c.field_id: c.name for c in table.columns}
        uuids = [c for c in table.columns if c.type == "uuid"]
        out[name] = []
        for selection in table.selections:
            filters = table.filters_for(selection)
            assert filters[0].expr is True, "the battery starts with always true"
            planning = time.monotonic()
            plans = plan_referee.plan_all(java_table, selection.java, [f.text for f in filters])
            java_seconds += time.monotonic() - planning
            errors = [
                (f.label, p)
                for f, p in zip(filters, plans, strict=True)
                if isinstance(p, JavaPlanError)
            ]
            assert not errors, f"{name} {selection.label}: Java refused filters: {errors[:5]}"
            java = tuple(p for p in plans if not isinstance(p, JavaPlanError))
            for location in java[0]:
                if location not in rows_cache:
                    rows_cache[location] = read_rows(location, names, [c.name for c in uuids])
            rows = {location: rows_cache[location] for location in java[0]}
            truth = files_with_matches(filters, rows, table.types)
            nan_truth = files_with_matches(filters, rows, table.types, keep_nan=True)
            metrics = {
                c.name: plan_referee.file_metrics(java_table, selection.java, c.field_id)
                for c in uuids
            }
            out[name].append(
                Reference(
                    selection,
                    filters,
                    java,
                    java[0],
                    tuple(frozenset(t) for t in truth),
                    tuple(frozenset(t) for t in nan_truth),
                    metrics,
                )
            )
    count = sum(len(r.filters) for refs in out.values() for r in refs)
    sys.stderr.write(
        f"\n[interop] Java planned {count} scans in {java_seconds:.1f}s; ground truth and "
        f"references ready in {time.monotonic() - started:.1f}s\n"
    )
    return out


def _describe_delete(delete: Any) -> str:
    """A frazil delete file in PlanReferee's form (a deletion vector names its blob)."""
    if delete.content_offset is not None:
        return f"{delete.file_path}#{delete.content_offset}#{delete.content_size_in_bytes}"
    return str(delete.file_path)


@pytest.fixture(scope="module")
def frazil_plans(
    scan_tables: dict[str, ScanTable], references: dict[str, list[Reference]]
) -> dict[str, list[tuple[Plan, ...]]]:
    """frazil's plan for every table, selection and filter of the references."""
    import frazil
    from frazil.expressions import from_json

    started = time.monotonic()
    out: dict[str, list[tuple[Plan, ...]]] = {}
    for name, table in scan_tables.items():
        opened = frazil.StaticTable.from_metadata(table.metadata_location)
        out[name] = []
        for ref in references[name]:
            plans = []
            for f in ref.filters:
                scan = opened.scan(
                    row_filter=from_json(f.text, opened.schema()), **ref.selection.kwargs
                )
                plan: Plan = {}
                for task in scan.plan_files():
                    path = str(task.file.file_path)
                    assert path not in plan, f"{name} {f.label}: {path} planned twice"
                    plan[path] = tuple(sorted(_describe_delete(d) for d in task.delete_files))
                plans.append(plan)
            out[name].append(tuple(plans))
    count = sum(len(p) for plans in out.values() for p in plans)
    sys.stderr.write(
        f"\n[interop] frazil planned {count} scans in {time.monotonic() - started:.1f}s\n"
    )
    return out


def _uuid_columns(table: ScanTable, f: Filter) -> list[str]:
    return sorted(c for c in f.columns if table.types[c] == "uuid")


def expected_files(table: ScanTable, ref: Reference, n: int) -> set[str]:
    """The data files frazil must plan for filter n (module docstring)."""
    f = ref.filters[n]
    uuid_columns = _uuid_columns(table, f)
    if uuid_columns:
        return {
            location
            for location in ref.unfiltered
            if uuid_metrics_might_match(
                f.expr, {c: _stats(ref.metrics[c][location]) for c in uuid_columns}
            )
        }
    return set(ref.java[n]) | ref.nan_truth[n]


def _stats(m: FileMetrics) -> FieldStats:
    return FieldStats(m.record_count, m.value_count, m.null_count, m.lower, m.upper)


def _label(table: ScanTable, ref: Reference, n: int) -> str:
    return f"{table.name} [{ref.selection.label}] {ref.filters[n].label}: {ref.filters[n].text}"


@pytest.mark.parametrize("name", TABLES)
def test_java_plans_are_sensible(
    name: str, scan_tables: dict[str, ScanTable], references: dict[str, list[Reference]]
) -> None:
    """The referee answers: constants plan all or nothing, most filters prune something,
    every plan is a subset of the full one with the same deletes, and the deletes the table
    was written with are attached."""
    table = scan_tables[name]
    for ref in references[name]:
        by_label = {f.label: p for f, p in zip(ref.filters, ref.java, strict=True)}
        assert ref.unfiltered, f"{name} [{ref.selection.label}]: nothing to plan"
        for constant in ("always false", "not true", "true and false"):
            assert by_label[constant] == {}, f"{name}: {constant} planned files"
        pruned = sum(len(p) < len(ref.unfiltered) for p in ref.java)
        empty = sum(not p for p in ref.java)
        assert pruned >= len(ref.java) // 4, f"{name} [{ref.selection.label}]: {pruned} pruned"
        assert empty >= 5, f"{name} [{ref.selection.label}]: only {empty} empty plans"
        for n, plan in enumerate(ref.java):
            for location, deletes in plan.items():
                assert ref.unfiltered.get(location) is not None, _label(table, ref, n)
                assert set(deletes) <= set(ref.unfiltered[location]), _label(table, ref, n)
    current = references[name][0].unfiltered
    attached = {d for ds in current.values() for d in ds}
    if name == "dv_v3":
        assert attached and all(re.fullmatch(r".+\.puffin#\d+#\d+", d) for d in attached), attached
    elif name in ("types_v2", "transforms_v2", "java_types"):
        assert attached, f"{name}: no delete files attached"
    if name in ("transforms_v2", "java_types"):
        equality = {d for d in attached if "/eq-" in d}
        assert equality, f"{name}: no equality deletes attached"
        # the global equality delete applies to data files of several specs
        global_delete = max(equality, key=lambda d: sum(d in ds for ds in current.values()))
        assert sum(global_delete in ds for ds in current.values()) > 2


@pytest.mark.parametrize("name", TABLES)
def test_java_loses_rows_only_where_known(
    name: str, scan_tables: dict[str, ScanTable], references: dict[str, list[Reference]]
) -> None:
    """Java plans every file holding a matching row, except on the columns of
    JAVA_LOSES_ROWS, and there it really does lose some (so the corrected expectations of
    the frazil test below are exercised)."""
    table = scan_tables[name]
    known = JAVA_LOSES_ROWS.get(name, {})
    unexplained = []
    explained = 0
    for ref in references[name]:
        for n, f in enumerate(ref.filters):
            missed = ref.truth[n] - set(ref.java[n])
            if not missed:
                continue
            if f.columns & set(known):
                explained += 1
            else:
                unexplained.append(f"{_label(table, ref, n)} misses {sorted(missed)}")
    assert not unexplained, "\n".join(unexplained[:20])
    if known:
        assert explained, f"{name}: Java lost no rows on {sorted(known)}; the test data moved"


@pytest.mark.parametrize("name", TABLES)
def test_frazil_plans_what_java_plans(
    name: str,
    scan_tables: dict[str, ScanTable],
    references: dict[str, list[Reference]],
    frazil_plans: dict[str, list[tuple[Plan, ...]]],
) -> None:
    """Data files: Java's, with the corrections of the module docstring. Delete files: Java's
    for each data file Java plans; for a file only frazil (rightly) plans, the deletes Java
    attaches to it in the unfiltered plan (equality deletes may be pruned by the filter)."""
    table = scan_tables[name]
    failures = []
    for ref, plans in zip(references[name], frazil_plans[name], strict=True):
        for n, plan in enumerate(plans):
            expected = expected_files(table, ref, n)
            if _touches_wrapped_partitions(table, ref.filters[n]):
                # Files under a wrapped partition value may be skipped (docstring).
                expected -= {x for x in expected - set(plan) if _wrapped(table, x)}
            # Files Java plans by ordering null partition values first (docstring).
            expected -= {x for x in expected - set(plan) if _null_first_extra(ref, n, x)}
            if set(plan) != expected:
                failures.append(
                    f"{_label(table, ref, n)}\n    missing {sorted(expected - set(plan))}"
                    f"\n    extra {sorted(set(plan) - expected)}"
                )
                continue
            for location, deletes in plan.items():
                java = ref.java[n].get(location)
                full = ref.unfiltered[location]
                if java is not None and deletes != java:
                    failures.append(
                        f"{_label(table, ref, n)}\n    {location}: deletes "
                        f"{list(deletes)}, Java {list(java)}"
                    )
                elif java is None and not set(deletes) <= set(full):
                    failures.append(
                        f"{_label(table, ref, n)}\n    {location}: deletes "
                        f"{list(deletes)}, not among {list(full)}"
                    )
    assert not failures, f"{len(failures)} plans differ:\n" + "\n".join(failures[:15])


@pytest.mark.parametrize("name", TABLES)
def test_frazil_plans_every_file_with_matching_rows(
    name: str,
    scan_tables: dict[str, ScanTable],
    references: dict[str, list[Reference]],
    frazil_plans: dict[str, list[tuple[Plan, ...]]],
) -> None:
    """Inclusive planning never loses a row: every data file holding a matching row (read
    from the file itself) is planned, for every filter and snapshot, except rows whose
    partition values Java wrote wrongly (module docstring)."""
    table = scan_tables[name]
    lost = [
        f"{_label(table, ref, n)} loses {sorted(ref.truth[n] - set(plan))}"
        for ref, plans in zip(references[name], frazil_plans[name], strict=True)
        for n, plan in enumerate(plans)
        if {
            x
            for x in ref.truth[n] - set(plan)
            if not (_touches_wrapped_partitions(table, ref.filters[n]) and _wrapped(table, x))
        }
    ]
    assert not lost, "\n".join(lost[:20])
