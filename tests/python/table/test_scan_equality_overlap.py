"""Which data files an equality delete applies to (Java's
``DeleteFileIndex.canContainEqDeletesForFile``): a data file whose metrics prove that none of
the deleted keys can occur gets no reference. On a required column only the bounds decide
(the planner then decodes no value or null counts); on an optional column the counts decide
too (an all-null data file cannot hold a non-null deleted key, and nulls match nulls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from frazil import StaticTable
from hypothesis import given, settings
from hypothesis import strategies as st
from scan_helpers import TableWriter, data_file, entry, long_bytes

T1 = 1_700_000_000_000
T2 = T1 + 60_000


def _date_bytes(days: int) -> bytes:
    return days.to_bytes(4, "little", signed=True)


def _table(root: Path, files: list[dict[str, Any]], deletes: list[dict[str, Any]]) -> StaticTable:
    w = TableWriter(root)
    for f in files:
        f["file_path"] = w.path(f["file_path"])
    for d in deletes:
        d["file_path"] = w.path(d["file_path"])
    w.commit(1, T1, [([entry(f) for f in files], 1, "data")])
    w.commit(2, T2, [([entry(d) for d in deletes], 1, "deletes")], 1)
    return w.table()


def _applied(table: StaticTable, **scan: Any) -> dict[str, list[str]]:
    return {
        Path(t.file.file_path).stem: sorted(Path(d.file_path).stem for d in t.delete_files)
        for t in table.scan(**scan).plan_files()
    }


def _bounded(name: str, low: int, high: int, **extra: Any) -> dict[str, Any]:
    return data_file(
        name,
        {},
        lower_bounds={1: long_bytes(low), **extra.pop("lower", {})},
        upper_bounds={1: long_bytes(high), **extra.pop("upper", {})},
        **extra,
    )


@settings(max_examples=40, deadline=None)
@given(
    ranges=st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 30)), min_size=1, max_size=6),
    deleted=st.tuples(st.integers(-60, 60), st.integers(0, 40)),
    row_filter=st.sampled_from([None, "id > -1000"]),
)
def test_required_key_overlap_by_bounds(
    tmp_path_factory: Any,
    ranges: list[tuple[int, int]],
    deleted: tuple[int, int],
    row_filter: str | None,
) -> None:
    # id (field 1) is required: only the bounds decide, with or without a filter (a filter
    # makes the planner decode every metric; without one it decodes the bounds only).
    root = tmp_path_factory.mktemp("t")
    files = [_bounded(f"d{i}.parquet", low, low + width) for i, (low, width) in enumerate(ranges)]
    low, width = deleted
    eq = _bounded("eq.parquet", low, low + width, content=2, equality_ids=[1])
    table = _table(root, files, [eq])
    expected = {
        f"d{i}": ["eq"] if not (lo > low + width or low > lo + w) else []
        for i, (lo, w) in enumerate(ranges)
    }
    scan = {} if row_filter is None else {"row_filter": row_filter}
    assert _applied(table, **scan) == expected


@pytest.mark.parametrize("row_filter", [None, "id > -1000"])
def test_optional_key_overlap_reads_the_counts(tmp_path: Path, row_filter: str | None) -> None:
    # dt (field 6) is optional: an all-null data file cannot hold a deleted non-null key, but
    # a null deleted key matches its nulls; a file without counts may hold anything.
    day = 19_000
    dt_bounds = {"lower": {6: _date_bytes(day)}, "upper": {6: _date_bytes(day + 3)}}
    files = [
        _bounded("all_null", 0, 9, value_counts={6: 10}, null_value_counts={6: 10}),
        _bounded("no_nulls", 0, 9, value_counts={6: 10}, null_value_counts={6: 0}, **dt_bounds),
        _bounded("far", 0, 9, value_counts={6: 10}, null_value_counts={6: 0},
                 lower={6: _date_bytes(day + 100)}, upper={6: _date_bytes(day + 200)}),
        _bounded("unknown", 0, 9),
    ]  # fmt: skip
    non_null = data_file(
        "eq_values.parquet", {}, content=2, equality_ids=[6],
        value_counts={6: 2}, null_value_counts={6: 0},
        lower_bounds={6: _date_bytes(day)}, upper_bounds={6: _date_bytes(day + 1)},
    )  # fmt: skip
    nulls = data_file(
        "eq_nulls.parquet", {}, content=2, equality_ids=[6],
        value_counts={6: 1}, null_value_counts={6: 1},
    )  # fmt: skip
    table = _table(tmp_path, files, [non_null, nulls])
    scan = {} if row_filter is None else {"row_filter": row_filter}
    assert _applied(table, **scan) == {
        "all_null": ["eq_nulls"],
        "no_nulls": ["eq_values"],
        "far": [],
        "unknown": ["eq_nulls", "eq_values"],
    }
