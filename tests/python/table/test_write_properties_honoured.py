"""Table properties that change what is written are honoured or refused, never ignored (issue
22): ``write.format.default`` other than Parquet is refused when a table is created, when the
property is set and before a write; ``write.delete.mode=merge-on-read`` deletes fall back to
copy-on-write with one warning per delete."""

from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import InvalidValueError, UnsupportedOperationError
from frazil.table import SetProperties

SCHEMA = pa.schema([("id", pa.int64()), ("part", pa.string())])


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    c = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    c.create_namespace("db")
    return c


def _rows(ids: list[int], part: str = "a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "part": [part] * len(ids)})


def _data_files(table: object) -> list[str]:
    return sorted(t.file.file_path for t in table.scan().plan_files())  # type: ignore[attr-defined]


# --- write.format.default ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["orc", "ORC", "avro"])
def test_a_format_frazil_cannot_write_is_refused_at_creation(
    catalog: SqlCatalog, value: str
) -> None:
    with pytest.raises(UnsupportedOperationError) as info:
        catalog.create_table("db.t", SCHEMA, properties={"write.format.default": value})
    message = str(info.value)
    assert f"write.format.default={value!r}" in message and "Parquet only" in message
    assert not catalog.table_exists("db.t")


def test_parquet_in_any_case_is_accepted_and_a_typo_refused(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", SCHEMA, properties={"write.format.default": "Parquet"})
    table.append(_rows([1]))
    assert [p.endswith(".parquet") for p in _data_files(table)] == [True]
    with pytest.raises(InvalidValueError, match=r"write.format.default='parqet' must be one of"):
        catalog.create_table("db.u", SCHEMA, properties={"write.format.default": "parqet"})


def test_setting_orc_is_refused(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(UnsupportedOperationError, match=r"write.format.default='orc'"):
        with table.update_properties() as update:
            update.set("write.format.default", "orc")
    with pytest.raises(UnsupportedOperationError, match=r"write.format.default='avro'"):
        with table.transaction() as txn:
            txn.set_properties({"write.format.default": "avro"})
    assert "write.format.default" not in catalog.load_table("db.t").properties


def test_a_table_another_engine_set_to_orc_is_refused_at_write_time(
    catalog: SqlCatalog, tmp_path: Path
) -> None:
    table = catalog.create_table("db.t", SCHEMA, partition_spec=None)
    table.append(_rows([1, 2], "a"))
    table.append(_rows([3], "b"))
    # As Java would (frazil's own API refuses it): the property lands through a raw update.
    catalog.commit_table(table, [], [SetProperties({"write.format.default": "orc"})])
    table = catalog.load_table("db.t")
    before = _data_files(table)
    for write in (
        lambda: table.append(_rows([4])),
        lambda: table.overwrite(_rows([5]), "id = 1"),  # rewrites the file holding 1 and 2
        lambda: table.delete("id = 1"),  # copy-on-write rewrites a file too
    ):
        with pytest.raises(UnsupportedOperationError, match=r"write.format.default='orc'"):
            write()
    assert _data_files(catalog.load_table("db.t")) == before
    assert not [p for p in (tmp_path / "wh").rglob("*.parquet") if str(p) not in str(before)]
    # A delete that writes nothing (a whole file goes) is not a write of data.
    table.delete("id = 3")
    assert table.scan().to_arrow().column("id").to_pylist() == [1, 2]


def test_the_delete_file_format_and_row_level_modes_are_checked(catalog: SqlCatalog) -> None:
    # frazil writes no delete files: any format Java knows is accepted.
    for value in ("orc", "avro", "parquet", "puffin"):
        catalog.create_table(
            f"db.t_{value}", SCHEMA, properties={"write.delete.format.default": value}
        )
    with pytest.raises(InvalidValueError, match=r"write.delete.format.default='csv'"):
        catalog.create_table("db.u", SCHEMA, properties={"write.delete.format.default": "csv"})
    for key in ("write.delete.mode", "write.update.mode", "write.merge.mode"):
        with pytest.raises(InvalidValueError, match=f"{key}='mor' must be one of copy-on-write"):
            catalog.create_table("db.u", SCHEMA, properties={key: "mor"})
        table = catalog.load_table("db.t_orc")
        with pytest.raises(InvalidValueError, match=f"{key}='mor'"):
            with table.update_properties() as update:
                update.set(key, "mor")


# --- write.delete.mode=merge-on-read -----------------------------------------------------------


def _merge_on_read(catalog: SqlCatalog, version: int) -> object:
    table = catalog.create_table(
        f"db.t{version}",
        SCHEMA,
        properties={"write.delete.mode": "merge-on-read", "format-version": str(version)},
    )
    table.append(_rows([1, 2], "a"))
    table.append(_rows([3], "b"))
    return table


def test_a_merge_on_read_delete_writes_delete_files_not_data_files(catalog: SqlCatalog) -> None:
    table = _merge_on_read(catalog, 2)
    before = {t.file.file_path for t in table.scan().plan_files()}  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table.delete("id = 1")  # type: ignore[attr-defined]
    tasks = list(table.scan().plan_files())  # type: ignore[attr-defined]
    assert {t.file.file_path for t in tasks} == before  # no data file rewritten
    (deleted,) = [d for t in tasks for d in t.delete_files]
    assert (deleted.content, deleted.file_format, deleted.record_count) == (1, "PARQUET", 1)
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [2, 3]  # type: ignore[attr-defined]
    # An overwrite by filter is copy-on-write whatever the delete mode, as in Java.
    table.overwrite(_rows([9]), "id = 2")  # type: ignore[attr-defined]
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [3, 9]  # type: ignore[attr-defined]


def test_merge_on_read_is_refused_on_a_v1_table_before_anything_is_written(
    catalog: SqlCatalog,
) -> None:
    table = _merge_on_read(catalog, 1)
    snapshots = len(table.snapshots())  # type: ignore[attr-defined]
    with pytest.raises(UnsupportedOperationError, match=r"write\.delete\.mode=merge-on-read"):
        table.delete("id = 1")  # type: ignore[attr-defined]
    assert len(table.snapshots()) == snapshots  # type: ignore[attr-defined]
