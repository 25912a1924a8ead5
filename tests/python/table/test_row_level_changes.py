"""Updates, upserts and merges in both modes (spec: "Row-level Deletes", "Row Lineage"): the
rows afterwards, what each mode writes, the counts, row lineage on v3, and bad input refused
with nothing committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import FrazilError, InvalidValueError, ValidationError
from frazil.expressions import col
from frazil.table import Table

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), False),
        pa.field("cat", pa.string()),
        pa.field("v", pa.float64()),
        pa.field("n", pa.int32()),
    ]
)
MODES = ["copy-on-write", "merge-on-read"]


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    return catalog


def _rows(ids: range | list[int]) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": ["a" if i % 2 else "b" for i in ids],
            "v": pa.array([i / 4 for i in ids], pa.float64()),
            "n": pa.array([i % 7 for i in ids], pa.int32()),
        },
        schema=SCHEMA,
    )


def _table(catalog: SqlCatalog, version: int, mode: str, name: str = "db.t") -> Table:
    props = {
        "format-version": str(version),
        "write.update.mode": mode,
        "write.merge.mode": mode,
        "write.delete.mode": mode,
    }
    table = catalog.create_table(name, SCHEMA, properties=props)
    with table.update_spec() as spec:
        spec.add_field("cat", "identity")
    for start in (0, 100, 200):
        table.append(_rows(range(start, start + 100)))
    return table


def _state(table: Table) -> dict[int, tuple[Any, ...]]:
    rows = table.scan().to_arrow().to_pylist()
    return {r["id"]: (r["cat"], r["v"], r["n"]) for r in rows}


def _expected(ids: range | list[int]) -> dict[int, tuple[Any, ...]]:
    return {r["id"]: (r["cat"], r["v"], r["n"]) for r in _rows(ids).to_pylist()}


def _files(table: Table) -> set[str]:
    return {t.file.file_path for t in table.scan().plan_files()}


def _deletes(table: Table) -> list[Any]:
    return [d for t in table.scan().plan_files() for d in t.delete_files]


# --- update --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_update_sets_literals_and_columns(catalog: SqlCatalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    files = _files(table)
    result = table.update({"v": -1.0, "n": col("n")}, "id < 10 OR id = 150")
    assert result.rows_updated == 11  # n = n changes nothing; v does
    expected = _expected(range(300))
    for i in [*range(10), 150]:
        cat, _, n = expected[i]
        expected[i] = (cat, -1.0, n)
    assert _state(table) == expected
    snapshot = table.current_snapshot()
    assert snapshot is not None and snapshot.operation == "overwrite"
    if mode == "merge-on-read":
        assert files <= _files(table)  # the old files stay, new rows added
        assert _deletes(table)
    else:
        assert not _deletes(table)
        assert len(files - _files(table)) == 3  # three files held the updated rows


@pytest.mark.parametrize("mode", MODES)
def test_rows_an_update_leaves_as_they_were_are_not_rewritten(
    catalog: SqlCatalog, mode: str
) -> None:
    table = _table(catalog, 2, mode)
    snapshots = len(table.snapshots())
    result = table.update({"cat": "a"}, "cat = 'a'")
    assert result.rows_updated == 0
    assert len(table.snapshots()) == snapshots  # nothing changed, nothing committed
    result = table.update({"n": 3}, "id BETWEEN 0 AND 13")  # 0..13: only some n were 3
    assert result.rows_updated == sum(1 for i in range(14) if i % 7 != 3)
    if mode == "merge-on-read":
        assert sum(d.record_count for d in _deletes(table)) == result.rows_updated


@pytest.mark.parametrize("mode", MODES)
def test_v3_row_lineage_through_an_update(catalog: SqlCatalog, mode: str) -> None:
    table = _table(catalog, 3, mode)
    lineage = ("id", "_row_id", "_last_updated_sequence_number")
    before = {r["id"]: r for r in table.scan(selected_fields=lineage).to_arrow().to_pylist()}
    table.update({"v": 0.5}, "id IN (1, 2, 3)")  # 2 changes; 1 and 3 have v 0.25 and 0.75
    table.update({"n": 9}, "id = 5")
    after = {r["id"]: r for r in table.scan(selected_fields=lineage).to_arrow().to_pylist()}
    sequence = table.current_snapshot().sequence_number  # type: ignore[union-attr]
    assert set(after) == set(before)
    for i, row in after.items():
        assert row["_row_id"] == before[i]["_row_id"], i  # every row keeps its id
        if i in (1, 3):
            assert row["_last_updated_sequence_number"] == sequence - 1
        elif i == 5:
            assert row["_last_updated_sequence_number"] == sequence
        else:
            # Unchanged rows keep theirs, also those copy-on-write moved to a new file.
            assert (
                row["_last_updated_sequence_number"] == before[i]["_last_updated_sequence_number"]
            )


def test_update_refuses_bad_assignments_with_nothing_committed(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.r", SCHEMA, properties={"format-version": "2"})
    table.append(_rows(range(10)))
    snapshots = len(table.snapshots())
    with pytest.raises(ValidationError, match="'id' is required and cannot be set to null"):
        table.update({"id": None}, "id = 1")
    with pytest.raises(ValidationError, match="'nope' is not a column"):
        table.update({"nope": 1})
    with pytest.raises(InvalidValueError, match="cannot assign 'x' to column 'n'"):
        table.update({"n": "x"})
    with pytest.raises(InvalidValueError, match="cannot assign 4294967296 to column 'n'"):
        table.update({"n": 2**32})
    with pytest.raises(ValidationError, match="at least one column"):
        table.update({})
    assert len(table.snapshots()) == snapshots
    for error in (ValidationError, InvalidValueError):
        assert issubclass(error, FrazilError)


# --- upsert --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_upsert_updates_changed_rows_and_inserts_new_keys(
    catalog: SqlCatalog, version: int, mode: str
) -> None:
    table = _table(catalog, version, mode)
    source = _rows([5, 6, 150, 1000, 1001])
    source = source.set_column(2, "v", pa.array([5.0, 1.5, 99.0, 1.0, 2.0], pa.float64()))
    # 6 keeps its values (v 1.5 is 6/4): matched but not updated.
    result = table.upsert(source, join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (2, 2)
    expected = _expected(range(300))
    expected[5] = ("a", 5.0, 5)
    expected[150] = ("b", 99.0, 150 % 7)
    expected[1000] = ("b", 1.0, 1000 % 7)
    expected[1001] = ("a", 2.0, 1001 % 7)
    assert _state(table) == expected
    if mode == "merge-on-read":
        assert sum(d.record_count for d in _deletes(table)) == 2


def test_upsert_joins_on_identifier_fields_and_refuses_duplicates(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, "merge-on-read")
    with pytest.raises(ValidationError, match="no identifier fields"):
        table.upsert(_rows([1]))
    with table.update_schema() as update:
        update.set_identifier_fields("id")
    snapshots = len(table.snapshots())
    with pytest.raises(ValidationError, match=r"duplicate key.*5"):
        table.upsert(_rows([5, 7, 5]))
    assert len(table.snapshots()) == snapshots
    result = table.upsert(_rows([1000]))
    assert (result.rows_updated, result.rows_inserted) == (0, 1)


def test_upsert_without_updates_or_inserts(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, "copy-on-write")
    source = _rows([1, 2000]).set_column(2, "v", pa.array([7.0, 7.0], pa.float64()))
    result = table.upsert(source, ["id"], when_matched_update_all=False)
    assert (result.rows_updated, result.rows_inserted) == (0, 1)
    result = table.upsert(source, ["id"], when_not_matched_insert_all=False)
    assert (result.rows_updated, result.rows_inserted) == (1, 0)
    assert _state(table)[1] == ("a", 7.0, 1)
    with pytest.raises(ValidationError, match="nothing to do"):
        table.upsert(
            source, ["id"], when_matched_update_all=False, when_not_matched_insert_all=False
        )


def test_upsert_keys_of_another_type_are_cast_and_null_keys_inserted(catalog: SqlCatalog) -> None:
    table = catalog.create_table(
        "db.k",
        pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())]),
        properties={"format-version": "2", "write.merge.mode": "merge-on-read"},
    )
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["x", "y"]}))
    source = pa.table({"id": pa.array([2, None], pa.int32()), "s": ["Y", "null key"]})
    result = table.upsert(source, ["id"])
    assert (result.rows_updated, result.rows_inserted) == (1, 1)
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: (r["id"] is None, r["id"]))
    assert rows == [{"id": 1, "s": "x"}, {"id": 2, "s": "Y"}, {"id": None, "s": "null key"}]


# --- merge ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_merge_clauses_in_order_with_conditions(catalog: SqlCatalog, mode: str) -> None:
    table = _table(catalog, 3, mode)
    source = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 500, 501], pa.int64()),
            "op": ["delete", "update", "keep", "update", "insert", "skip"],
            "val": pa.array([0.0, 20.0, 30.0, 40.0, 50.0, 51.0], pa.float64()),
        }
    )
    result = (
        table.merge(source, on="id")
        .when_matched_delete(condition="source.op = 'delete'")
        .when_matched_update(set={"v": col("source.val"), "n": 1}, condition="source.op = 'update'")
        .when_not_matched_insert(
            values={"id": col("source.id"), "cat": "new", "v": col("source.val")},
            condition="source.op = 'insert'",
        )
        .when_not_matched_by_source_delete(condition="target.id >= 290")
        .execute()
    )
    assert result.clauses == (
        ("matched_delete", 1),
        ("matched_update", 2),
        ("not_matched_insert", 1),
        ("not_matched_by_source_delete", 10),
    )
    assert (result.rows_updated, result.rows_deleted, result.rows_inserted) == (2, 11, 1)
    expected = _expected([i for i in range(290) if i != 1])
    expected[2] = ("b", 20.0, 1)
    expected[4] = ("b", 40.0, 1)
    expected[500] = ("new", 50.0, None)
    assert _state(table) == expected


def test_merge_refuses_unqualified_or_unknown_columns(catalog: SqlCatalog) -> None:
    table = _table(catalog, 2, "merge-on-read")
    source = _rows([1])
    with pytest.raises(ValidationError, match="qualify columns as source"):
        table.merge(source, on="id").when_matched_delete(condition="v > 0").execute()
    with pytest.raises(ValidationError, match="join column 'nope' is not a column"):
        table.merge(source, on="nope").when_matched_delete().execute()
    with pytest.raises(ValidationError, match="at least one"):
        table.merge(source, on="id").execute()
    missing = source.drop_columns(["v"])
    with pytest.raises(ValidationError, match="lacks v"):
        table.merge(missing, on="id").when_matched_update().execute()


KEYED = pa.schema(
    [
        pa.field("id", pa.int64(), False),
        pa.field("ts", pa.timestamp("us", "UTC")),
        pa.field("d", pa.date32()),
        pa.field("s", pa.string()),
        pa.field("v", pa.int64()),
    ]
)


def _keyed(ids: list[int] | range, v: int) -> pa.Table:
    import datetime as dt

    base = dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": [base + dt.timedelta(hours=13 * i) for i in ids],
            "d": [(base + dt.timedelta(days=3 * i)).date() for i in ids],
            "s": [f"k{i:03d}" for i in ids],
            "v": pa.array([v] * len(ids), pa.int64()),
        },
        schema=KEYED,
    )


@pytest.mark.parametrize(
    ("transform", "column"),
    [
        ("identity", "id"),
        ("bucket[4]", "id"),
        ("truncate[10]", "id"),
        ("year", "ts"),
        ("month", "ts"),
        ("day", "ts"),
        ("hour", "ts"),
        ("identity", "d"),
        ("day", "d"),
        ("truncate[2]", "s"),
    ],
)
def test_upsert_prunes_by_the_partitions_of_key_columns(
    catalog: SqlCatalog, transform: str, column: str
) -> None:
    # The source keys' partition tuples must compare equal to the manifests' (a day is a date
    # there): a wrong comparison would prune every file and insert every key again.
    table = catalog.create_table(
        "db.keyed", KEYED, properties={"format-version": "2", "write.merge.mode": "merge-on-read"}
    )
    with table.update_spec() as spec:
        spec.add_field(column, transform)
    table.append(_keyed(range(50), 0))
    keys = ["id"] if column == "id" else ["id", column]
    result = table.upsert(_keyed([3, 17, 40, 60], 1), join_cols=keys)
    assert (result.rows_updated, result.rows_inserted) == (3, 1)
    rows = sorted((r["id"], r["v"]) for r in table.scan().to_arrow().to_pylist())
    assert rows == sorted([(i, int(i in (3, 17, 40))) for i in range(50)] + [(60, 1)])


@pytest.mark.parametrize("mode", MODES)
def test_upserts_that_cannot_be_written_commit_nothing(catalog: SqlCatalog, mode: str) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), False),
            pa.field("name", pa.string(), False),
            ("v", pa.float64()),
        ]
    )
    table = catalog.create_table(
        "db.bad", schema, properties={"format-version": "2", "write.merge.mode": mode}
    )
    table.append(
        pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"], "v": [1.0, 2.0]})
    )
    snapshots = len(table.snapshots())
    files = {p for p in Path(table.location()).rglob("*") if p.is_file()}
    cases = [
        (
            pa.table({"id": pa.array([1, 9], pa.int64()), "name": ["x", "y"], "v": ["1.5", "2"]}),
            InvalidValueError,
            r"cannot assign column 'source\.v' \(string\) to 'v' \(double\)",
        ),
        (
            pa.table(
                {"id": pa.array([1], pa.int64()), "name": pa.array([None], pa.string()), "v": [1.0]}
            ),
            ValidationError,
            "column 'name' is required",
        ),
        (
            pa.table(
                {"id": pa.array([9], pa.int64()), "name": pa.array([None], pa.string()), "v": [1.0]}
            ),
            ValidationError,
            "column 'name' is required",
        ),
        (
            pa.table({"id": ["1"], "name": ["x"], "v": [1.0]}),
            ValidationError,
            "source column 'id' is string, the table's key column is int64",
        ),
    ]
    for data, error, message in cases:
        with pytest.raises(error, match=message):
            table.upsert(data, join_cols=["id"])
        assert len(table.snapshots()) == snapshots
    # Nothing written is left behind either.
    assert {p for p in Path(table.location()).rglob("*") if p.is_file()} == files


@pytest.mark.parametrize("mode", MODES)
def test_upsert_of_nested_columns_whatever_arrow_names_their_members(
    catalog: SqlCatalog, mode: str
) -> None:
    # Arrow names a list's element "item" (pyarrow) or "element" (Parquet readers): the Iceberg
    # type is the same, so either assigns; a list of another element kind does not.
    def tags(element: str, values: list[list[str]]) -> pa.Array:
        return pa.array(values, pa.list_(pa.field(element, pa.string())))

    schema = pa.schema([pa.field("id", pa.int64(), False), ("tags", pa.list_(pa.string()))])
    table = catalog.create_table(
        "db.nested",
        schema,
        properties={"format-version": "2", "write.merge.mode": mode},
    )
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "tags": [["a"], ["b"]]}))
    for element, row in (("element", ["x", "y"]), ("item", ["z"])):
        source = pa.table({"id": pa.array([1], pa.int64()), "tags": tags(element, [row])})
        assert table.upsert(source, join_cols=["id"]).rows_updated == 1
        got = {r["id"]: r["tags"] for r in table.scan().to_arrow().to_pylist()}
        assert got == {1: row, 2: ["b"]}
    wrong = pa.table(
        {"id": pa.array([1], pa.int64()), "tags": pa.array([[1]], pa.list_(pa.int64()))}
    )
    before = len(table.snapshots())
    with pytest.raises(InvalidValueError, match=r"cannot assign column 'source\.tags'"):
        table.upsert(wrong, join_cols=["id"])
    assert len(table.snapshots()) == before
