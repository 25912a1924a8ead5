"""What scans of one table metadata share (frazil.table._planning and the planner's manifest
lists): the parsed schema and specs and the decoded manifest lists are kept per metadata
object, so a commit and a refresh plan the new state, a table object that was not refreshed
keeps planning its own, and the caches stay bounded."""

from __future__ import annotations

import gc
import os
import re
from pathlib import Path

import pyarrow as pa
import pytest
from frazil import StaticTable
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import FrazilError, UnknownFieldError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table, _planning
from frazil.types import NestedField, parse_type


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _table(catalog: InMemoryCatalog) -> Table:
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "cat", parse_type("string"), False),
    )
    spec = PartitionSpec(0, (PartitionField(2, 1000, "identity", "cat"),))
    return catalog.create_table("db.t", schema, partition_spec=spec)


def _rows(ids: list[int], cat: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([cat] * len(ids))})


def _files(table: Table, row_filter: str = "true") -> int:
    return sum(1 for _ in table.scan(row_filter=row_filter).plan_files())


def test_commit_and_refresh_plan_the_new_state(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1, 2], "a"))
    stale = catalog.load_table("db.t")
    assert (_files(table), _files(table, "cat = 'b'")) == (1, 0)

    table.append(_rows([3], "b"))  # commits and refreshes `table`
    assert (_files(table), _files(table, "cat = 'b'"), _files(table, "cat = 'a'")) == (2, 1, 1)
    # A table object that was not refreshed keeps planning the state it holds ...
    assert (_files(stale), _files(stale, "cat = 'b'")) == (1, 0)
    # ... until it is refreshed.
    stale.refresh()
    assert (_files(stale), _files(stale, "cat = 'b'")) == (2, 1)


def test_schema_and_spec_evolution_are_planned_after_refresh(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    table.append(_rows([1], "a"))
    old = catalog.load_table("db.t")
    assert _files(old, "id = 1") == 1
    with table.update_schema() as update:
        update.add_column("score", parse_type("int"))
    with table.update_spec() as update:
        update.add_field("id", "bucket[4]", "id_bucket")
    table.append(
        pa.table(
            {"id": pa.array([7], pa.int64()), "cat": ["c"], "score": pa.array([5], pa.int32())}
        )
    )
    # The new column binds on the refreshed table, not on the old one.
    assert _files(table, "score = 5") == 2  # the old file has no stats for score: may match
    with pytest.raises(UnknownFieldError, match="score"):
        _files(old, "score = 5")

    # Each file is planned under its own spec; the old table object knows spec 0 only.
    def specs(t: Table, row_filter: str) -> list[int]:
        return sorted(task.file.spec_id for task in t.scan(row_filter=row_filter).plan_files())

    assert (specs(table, "id = 7"), specs(table, "cat = 'a'"), specs(table, "true")) == (
        [1],
        [0],
        [0, 1],
    )
    assert len(table.metadata.partition_specs) == 2 and len(old.metadata.partition_specs) == 1


def test_a_snapshot_manifest_list_is_read_once_per_table(catalog: InMemoryCatalog) -> None:
    table = _table(catalog)
    lists = []
    for i in range(6):
        table.append(_rows([i], f"c{i}"))
        snapshot = table.current_snapshot()
        assert snapshot is not None and snapshot.manifest_list is not None
        lists.append((snapshot.snapshot_id, snapshot.manifest_list))
    location = table.metadata_location
    assert location is not None
    held = StaticTable.from_metadata(location)
    for snapshot_id, _ in lists:  # every snapshot planned once: the last 4 lists are kept
        held.scan(snapshot_id=snapshot_id).plan_files()
    for _, path in lists:
        os.remove(path)
    # Kept lists plan without their files (Java's BaseSnapshot keeps them the same way) ...
    for i, (snapshot_id, _) in enumerate(lists[2:], start=2):
        assert sum(1 for _ in held.scan(snapshot_id=snapshot_id).plan_files()) == i + 1
    # ... while an evicted one is read again, as is every list for a newly opened table.
    with pytest.raises(FrazilError, match=re.escape(os.path.basename(lists[0][1]))):
        held.scan(snapshot_id=lists[0][0]).plan_files()
    with pytest.raises(FrazilError, match=re.escape(os.path.basename(lists[-1][1]))):
        StaticTable.from_metadata(location).scan().plan_files()


def test_planning_state_is_bounded_and_dropped_with_its_metadata(
    catalog: InMemoryCatalog,
) -> None:
    table = _table(catalog)
    table.append(_rows([1], "a"))
    location = table.metadata_location
    assert location is not None
    tables = [StaticTable.from_metadata(location) for _ in range(_planning.MAX_TABLES + 4)]
    for t in tables:
        assert _files(t) == 1
    assert _planning.cached_tables() <= _planning.MAX_TABLES
    del t, tables
    gc.collect()
    assert _planning.cached_tables() <= 1  # `table` may still hold its own


def test_text_filters_are_parsed_once_and_long_ones_not_kept() -> None:
    short = "id < 5 AND cat = 'a'"
    assert _planning.filter_from_text(short) is _planning.filter_from_text(short)
    many = "id IN (" + ", ".join(str(i) for i in range(2000)) + ")"
    assert len(many) > _planning.MAX_KEPT_FILTER
    first, again = _planning.filter_from_text(many), _planning.filter_from_text(many)
    assert first == again and first[0] is not again[0]
