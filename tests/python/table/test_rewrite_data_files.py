"""Compaction (``rewrite_data_files``, ``rewrite_position_delete_files``,
``remove_dangling_deletes``): the rows stay, deletes are applied and leave, row lineage is kept,
and concurrent commits are validated as Java validates them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import CommitFailedError, CommitValidationError, ValidationError
from frazil.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), pa.field("cat", pa.string())])


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    return catalog


def _table(catalog: SqlCatalog, version: int = 2, appends: int = 6, name: str = "db.t") -> Table:
    table = catalog.create_table(
        name,
        SCHEMA,
        properties={
            "format-version": str(version),
            "write.delete.mode": "merge-on-read",
            "commit.retry.min-wait-ms": "1",
        },
    )
    with table.update_spec() as spec:
        spec.add_field("cat", "identity")
    for k in range(appends):
        ids = range(k * 100, k * 100 + 100)
        table.append(
            pa.table(
                {"id": pa.array(ids, pa.int64()), "cat": ["a" if i % 2 else "b" for i in ids]},
                schema=SCHEMA,
            )
        )
    return table


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _deletes(table: Table) -> list[Any]:
    return [d for t in table.scan().plan_files() for d in t.delete_files]


@pytest.mark.parametrize("version", [2, 3])
def test_binpack_applies_every_delete_and_keeps_rows_and_lineage(
    catalog: SqlCatalog, version: int
) -> None:
    table = _table(catalog, version)
    table.delete("id IN (1, 2, 150, 301)")
    table.delete_by_key(pa.table({"id": pa.array([7, 8], pa.int64())}), "id")
    expected = _ids(table)
    lineage = ("id", "_row_id")
    before = table.scan(selected_fields=lineage).to_arrow().to_pylist() if version >= 3 else []
    result = table.maintenance.rewrite_data_files(
        options={"min-input-files": "2", "remove-dangling-deletes": True}
    )
    assert result.rewritten_data_files_count == 12
    assert result.added_data_files_count == 2  # one per partition
    assert result.failed_data_files_count == 0
    assert _ids(table) == expected
    assert not _deletes(table)  # applied, then dropped as dangling
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.operation == "replace"
    if version >= 3:
        after = table.scan(selected_fields=lineage).to_arrow().to_pylist()
        assert sorted(map(tuple, (r.values() for r in after))) == sorted(
            map(tuple, (r.values() for r in before))
        )


def test_sort_strategy_orders_each_group(catalog: SqlCatalog) -> None:
    table = _table(catalog, appends=3)
    table.maintenance.rewrite_data_files(
        "sort", options={"rewrite-all": True}, sort_order="id DESC NULLS LAST"
    )
    for task in table.scan().plan_files():
        ids = table.scan(row_filter=f"cat = '{task.file.partition['cat']}'").to_arrow()
        assert ids.column("id").to_pylist() == sorted(ids.column("id").to_pylist(), reverse=True)
    with pytest.raises(ValidationError, match="without a sort order"):
        table.maintenance.rewrite_data_files("sort")
    with pytest.raises(ValidationError, match="not supported by rewrite_data_files"):
        table.maintenance.rewrite_data_files(options={"no-such-option": "1"})


def test_a_concurrent_append_survives_a_compaction(catalog: SqlCatalog, monkeypatch: Any) -> None:
    table = _table(catalog)
    from frazil.table.maintenance import rewrite_data_files as module

    original = module.rewrite_group

    def rewrite_then_append(*args: Any, **kwargs: Any) -> Any:
        files = original(*args, **kwargs)
        if not getattr(rewrite_then_append, "done", False):
            rewrite_then_append.done = True  # type: ignore[attr-defined]
            other = catalog.load_table("db.t")
            other.append(
                pa.table({"id": pa.array([5000], pa.int64()), "cat": ["a"]}, schema=SCHEMA)
            )
        return files

    monkeypatch.setattr(module, "rewrite_group", rewrite_then_append)
    result = table.maintenance.rewrite_data_files(options={"min-input-files": 2})
    assert result.rewritten_data_files_count == 12
    assert _ids(catalog.load_table("db.t")) == [*range(600), 5000]


@pytest.mark.parametrize("partial", [False, True])
def test_a_concurrent_delete_of_a_rewritten_file_fails_its_group(
    catalog: SqlCatalog, monkeypatch: Any, partial: bool
) -> None:
    table = _table(catalog)
    from frazil.table.maintenance import rewrite_data_files as module

    original = module.rewrite_group

    def rewrite_then_delete(*args: Any, **kwargs: Any) -> Any:
        files = original(*args, **kwargs)
        if not getattr(rewrite_then_delete, "done", False):
            rewrite_then_delete.done = True  # type: ignore[attr-defined]
            catalog.load_table("db.t").delete("id = 1")  # a deletion in partition 'a'
        return files

    monkeypatch.setattr(module, "rewrite_group", rewrite_then_delete)
    location = Path(table.location())
    before = {str(p) for p in (location / "data").rglob("*.parquet")}
    options = {"min-input-files": 2, "max-concurrent-file-group-rewrites": 1}
    if partial:
        options.update({"partial-progress.enabled": True, "partial-progress.max-commits": 2})
        result = table.maintenance.rewrite_data_files(options=options)
        assert result.failed_data_files_count == 6  # partition 'a' failed, 'b' landed
        assert result.rewritten_data_files_count == 6
    else:
        with pytest.raises(CommitValidationError, match="new deletes for data files"):
            table.maintenance.rewrite_data_files(options=options)
    fresh = catalog.load_table("db.t")
    assert _ids(fresh) == [i for i in range(600) if i != 1]
    referenced = {t.file.file_path for t in fresh.scan().plan_files()}
    new = {str(p) for p in (location / "data").rglob("*.parquet") if "deletes" not in p.name}
    assert new - before <= referenced  # the failed group's new files were deleted


def test_too_many_failed_commits_fail_the_rewrite(catalog: SqlCatalog, monkeypatch: Any) -> None:
    table = _table(catalog)
    from frazil.table.maintenance import rewrite_data_files as module

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise CommitValidationError("refused")

    monkeypatch.setattr(module, "_commit", refuse)
    options = {
        "min-input-files": 2,
        "partial-progress.enabled": True,
        "partial-progress.max-commits": 2,
        "partial-progress.max-failed-commits": 1,
    }
    with pytest.raises(CommitFailedError, match="2 rewrite commits failed"):
        table.maintenance.rewrite_data_files(options=options)


@pytest.mark.parametrize("version", [2, 3])
def test_position_delete_rewrite_compacts_and_drops_dangling_rows(
    catalog: SqlCatalog, version: int
) -> None:
    table = catalog.create_table(
        "db.p",
        SCHEMA,
        properties={
            "format-version": "2",
            "write.delete.mode": "merge-on-read",
            "write.delete.granularity": "file",
        },
    )
    table.append(pa.table({"id": pa.array(range(100), pa.int64()), "cat": ["a"] * 100}))
    table.append(pa.table({"id": pa.array(range(100, 200), pa.int64()), "cat": ["a"] * 100}))
    for i in (1, 2, 3, 150):
        table.delete(f"id = {i}")
    # The second file goes: its delete row dangles.
    with table.transaction() as txn:
        txn.set_properties({"write.delete.mode": "copy-on-write"})
    table.delete("id >= 100")
    if version == 3:
        with table.transaction() as txn:
            txn.set_properties({"format-version": "3"})
    result = table.maintenance.rewrite_position_delete_files(options={"rewrite-all": True})
    assert result.added_delete_files_count == 1
    (delete,) = _deletes(table)
    assert delete.record_count == 3  # 1, 2 and 3; 150's row dropped with its file
    assert delete.file_format == ("PUFFIN" if version == 3 else "PARQUET")
    assert _ids(table) == [i for i in range(100) if i not in (1, 2, 3)]


def test_dangling_deletes_follow_the_spec_for_global_equality_deletes(
    catalog: SqlCatalog,
) -> None:
    # An equality delete under the unpartitioned spec applies to the partitioned files too:
    # it is not dangling (Java 1.10.2's action would remove it).
    table = _table(catalog, appends=2)
    table.delete_by_key(pa.table({"id": pa.array([5, 6], pa.int64())}), "id")
    assert any(d.content == 2 for d in _deletes(table))
    assert table.maintenance.remove_dangling_deletes() == []
    assert 5 not in _ids(table) and 6 not in _ids(table)
