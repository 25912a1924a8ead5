"""Which schema a scan binds its filter and columns to (issue 22): a snapshot chosen by id, by
time (``as_of``) or by tag is read with that snapshot's schema, the filter included (Java's
``SnapshotUtil.schemaFor``; Java's scans bind the filter so since apache/iceberg#13301); the
current state and a branch are read with the table's current schema.

Every way of reading a scan agrees: ``plan_files``, ``plan_tasks``, ``plan_arrow``, ``count``,
``to_arrow``, ``to_batches``, ``to_arrow_batch_reader`` and scans derived by ``filter`` and
``select``. A writer (copy-on-write delete) still plans the branch head with the current
schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import UnknownFieldError
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.scan import DataScan
from frazil.types import NestedField, parse_type
from hypothesis import given, settings
from hypothesis import strategies as st

NAMES = ["alice", "bob", "carol", "alice", None]


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    cat = InMemoryCatalog(warehouse=str(tmp_path))
    cat.create_namespace("db")
    return cat


def _append(table: Table, ids: list[int], column: str, names: list[str | None]) -> int:
    table.append(pa.table({"id": pa.array(ids, pa.int64()), column: pa.array(names, pa.string())}))
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def _evolved(catalog: InMemoryCatalog) -> tuple[Table, int]:
    """The issue's table: ``name`` written, then renamed to ``full_name``, dropped and added
    again (a new field id), and rows written with the new column. Tag ``before`` and branch
    ``side`` point at the first snapshot."""
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "name", parse_type("string"), False),
    )
    table = catalog.create_table("db.t", schema)
    old = _append(table, list(range(len(NAMES))), "name", NAMES)
    with table.manage_snapshots() as refs:
        refs.create_tag("before", old)
        refs.create_branch("side", old)
    with table.update_schema() as update:
        update.rename_column("name", "full_name")
    with table.update_schema() as update:
        update.delete_column("full_name")
    with table.update_schema() as update:
        update.add_column("full_name", parse_type("string"))
    _append(table, [10, 11], "full_name", ["alice", "zed"])
    return table, old


def _ids(scan: DataScan) -> list[int]:
    return sorted(scan.to_arrow().column("id").to_pylist())


def _every_read(scan: DataScan) -> dict[str, Any]:
    """What each way of reading ``scan`` says about its rows."""
    planned = list(scan.plan_files())
    return {
        "to_arrow": _ids(scan),
        "to_batches": sorted(
            i for b in scan.to_batches() for i in b.column(0).to_pylist() if i is not None
        ),
        "count": scan.count(),
        "plan_files": len(planned),
        "plan_tasks": sum(len(group.tasks) for group in scan.plan_tasks()),
        "plan_arrow": scan.plan_arrow().num_rows,
    }


def test_old_name_at_old_snapshot_reads_its_rows(catalog: InMemoryCatalog) -> None:
    table, old = _evolved(catalog)
    alice = [i for i, n in enumerate(NAMES) if n == "alice"]
    selections: list[dict[str, Any]] = [
        {"snapshot_id": old},
        {"ref": "before"},
        {"as_of": table.snapshot_by_id(old).timestamp_ms},  # type: ignore[union-attr]
    ]
    for selection in selections:
        scan = table.scan(row_filter="name = 'alice'", **selection)
        assert scan.schema().find_field("name") is not None
        got = _every_read(scan)
        assert got == {
            "to_arrow": alice,
            "to_batches": alice,
            "count": len(alice),
            "plan_files": 1,
            "plan_tasks": 1,
            "plan_arrow": 1,
        }, selection
        arrow = scan.to_arrow()
        assert arrow.column_names == ["id", "name"]
        assert set(arrow.column("name").to_pylist()) == {"alice"}
        # A filter added later and a selection bind to the same schema.
        derived = table.scan(**selection).filter("name = 'alice'").select("name")
        assert derived.to_arrow().column("name").to_pylist() == ["alice"] * len(alice)
        assert derived.count() == len(alice)
        # An expression rather than text, and IN / NOT NULL on the old column.
        assert table.scan(row_filter="name IN ('bob', 'carol')", **selection).count() == 2
        assert table.scan(row_filter="name IS NULL", **selection).count() == 1
    # use_ref on a tag reads as ref= does.
    assert _ids(table.scan().use_ref("before").filter("name = 'alice'")) == alice


def test_new_name_at_old_snapshot_is_an_error_naming_column_and_snapshot(
    catalog: InMemoryCatalog,
) -> None:
    table, old = _evolved(catalog)
    for selection in ({"snapshot_id": old}, {"ref": "before"}):
        scan = table.scan(row_filter="full_name = 'alice'", **selection)
        readers = [
            scan.plan_files,
            scan.plan_tasks,
            scan.plan_arrow,
            scan.count,
            scan.to_arrow,
            scan.to_batches,
        ]
        for read in readers:
            with pytest.raises(UnknownFieldError) as raised:
                read()
            message = str(raised.value)
            assert "full_name" in message and str(old) in message
            assert "which snapshot" in message and "does not have" in message
        with pytest.raises(UnknownFieldError, match=rf"full_name.*snapshot {old}"):
            table.scan(selected_fields=("full_name",), **selection).to_arrow()


def test_pure_rename_names_the_old_column(catalog: InMemoryCatalog) -> None:
    schema = Schema(NestedField(1, "id", parse_type("long"), False))
    table = catalog.create_table("db.r", schema)
    with table.update_schema() as update:
        update.add_column("name", parse_type("string"))
    old = _append(table, [1, 2], "name", ["a", "b"])
    with table.update_schema() as update:
        update.rename_column("name", "label")
    with pytest.raises(UnknownFieldError, match="'label' is field 2, named 'name' in snapshot"):
        table.scan(snapshot_id=old, row_filter="label = 'a'").count()
    assert table.scan(snapshot_id=old, row_filter="name = 'a'").count() == 1
    # The current state reads with the current schema: the new name.
    assert table.scan(row_filter="label = 'a'").count() == 1
    with pytest.raises(UnknownFieldError) as raised:
        table.scan(row_filter="name = 'a'").count()
    assert "snapshot" not in str(raised.value)


def test_branch_reads_with_the_current_schema(catalog: InMemoryCatalog) -> None:
    table, _ = _evolved(catalog)
    for scan in (table.scan(ref="side"), table.scan().use_ref("side")):
        assert scan.schema() == table.schema()
        # The branch's rows predate field 3: it reads null, and no row matches.
        rows = scan.to_arrow()
        assert rows.column_names == ["id", "full_name"]
        assert rows.column("full_name").null_count == len(NAMES)
        filtered = scan.filter("full_name = 'alice'")
        assert filtered.count() == 0 and filtered.to_arrow().num_rows == 0
        with pytest.raises(UnknownFieldError) as raised:
            scan.filter("name = 'alice'").count()
        assert "snapshot" not in str(raised.value)  # not a time-travel scan


def test_current_snapshot_by_id_uses_its_own_schema(catalog: InMemoryCatalog) -> None:
    """A schema change after the last commit: the current state reads with the new schema,
    the same snapshot chosen by id with the one it was written with."""
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "name", parse_type("string"), False),
    )
    table = catalog.create_table("db.c", schema)
    head = _append(table, [1, 2], "name", ["a", "b"])
    with table.update_schema() as update:
        update.rename_column("name", "label")
    assert table.scan(row_filter="label = 'b'").to_arrow().column_names == ["id", "label"]
    by_id = table.scan(snapshot_id=head, row_filter="name = 'b'")
    assert by_id.to_arrow().to_pylist() == [{"id": 2, "name": "b"}]


def test_promoted_partition_column_prunes_at_the_old_snapshot(
    catalog: InMemoryCatalog,
) -> None:
    """An identity partition on an int column promoted to long since: the old snapshot's
    filter is bound as int, its partition values decode and prune as int."""
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "qty", parse_type("int"), False),
    )
    table = catalog.create_table("db.p", schema)
    with table.update_spec() as update:
        update.add_identity("qty")
    table.append(
        pa.table({"id": pa.array([1, 2, 3], pa.int64()), "qty": pa.array([1, 2, 1], pa.int32())})
    )
    old = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    with table.update_schema() as update:
        update.update_column("qty", "long")
    table.append(pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([1], pa.int64())}))
    scan = table.scan(snapshot_id=old, row_filter="qty = 1")
    assert scan.schema().find_field("qty").field_type == parse_type("int")  # type: ignore[union-attr]
    assert len(list(scan.plan_files())) == 1  # qty = 2's file pruned by its partition
    assert _ids(scan) == [1, 3] and scan.count() == 2
    assert scan.to_arrow().schema.field("qty").type == pa.int32()
    assert _ids(table.scan(row_filter="qty = 1")) == [1, 3, 4]


def test_spec_of_a_later_column_at_an_old_snapshot(catalog: InMemoryCatalog) -> None:
    """A partition spec made after the snapshot on a column added after it: the old snapshot
    still plans and reads (its manifests use the old spec)."""
    table, old = _evolved(catalog)
    with table.update_spec() as update:
        update.add_identity("full_name")
    _append(table, [20], "full_name", ["x"])
    scan = table.scan(snapshot_id=old, row_filter="name = 'bob' OR id > 3")
    assert _ids(scan) == [1, 4]
    assert _ids(table.scan(row_filter="full_name = 'x'")) == [20]


def test_delete_binds_to_the_current_schema(catalog: InMemoryCatalog) -> None:
    """A copy-on-write delete on a head written before a rename: the delete's filter uses
    today's names (a writer's schema is the table's, not the head snapshot's)."""
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "name", parse_type("string"), False),
    )
    table = catalog.create_table("db.d", schema)
    old = _append(table, [1, 2, 3], "name", ["a", "b", "a"])
    with table.update_schema() as update:
        update.rename_column("name", "label")
    table.delete("label = 'a' AND id > 1")
    assert _ids(table.scan()) == [1, 2]
    assert _ids(table.scan(snapshot_id=old)) == [1, 2, 3]


@settings(max_examples=12)
@given(
    value=st.sampled_from(["alice", "bob", "carol", "nobody"]),
    op=st.sampled_from(["=", "!=", "<", ">=", "STARTS WITH"]),
)
def test_old_name_filters_match_the_rows(value: str, op: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        catalog = InMemoryCatalog(warehouse=root)
        catalog.create_namespace("db")
        table, old = _evolved(catalog)
        text = f"name {op} '{value}'"
        got = table.scan(snapshot_id=old, row_filter=text).to_arrow().to_pylist()
        keep = {
            "=": lambda n: n == value,
            "!=": lambda n: n != value,
            "<": lambda n: n < value,
            ">=": lambda n: n >= value,
            "STARTS WITH": lambda n: n.startswith(value),
        }[op]
        expected = [
            {"id": i, "name": n}
            for i, n in enumerate(NAMES)
            # != keeps NULL (Java's Evaluator), the other comparisons never match it.
            if (n is None and op == "!=") or (n is not None and keep(n))
        ]
        assert sorted(got, key=lambda r: r["id"]) == expected
        assert table.scan(snapshot_id=old, row_filter=text).count() == len(expected)
