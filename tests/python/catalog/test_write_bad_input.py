"""Bad input to writes: each refusal is a FrazilError naming what was wrong, and nothing
half-written is left visible (the table's metadata location is unchanged and no new file is
left under its location)."""

from __future__ import annotations

import datetime as dt
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import FrazilError, NoSuchTableError
from frazil.table import Table

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("ts", pa.timestamp("us")),
    ]
)
ROWS = pa.table(
    {"id": [1, 2], "name": ["a", "b"], "ts": [dt.datetime(2024, 1, 1)] * 2}, schema=SCHEMA
)


@pytest.fixture(params=["sqlite", "filesystem"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    warehouse = str(tmp_path / "wh")
    cat: Catalog
    if request.param == "sqlite":
        cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=warehouse)
    else:
        cat = FileSystemCatalog("c", warehouse=warehouse)
    cat.create_namespace("db")
    return cat


def _files(root: str | Path) -> set[Path]:
    return {p for p in Path(root).rglob("*") if p.is_file()}


def _unchanged(catalog: Catalog, table: Table, attempt: Callable[[], object]) -> FrazilError:
    """Runs ``attempt``, which must fail; checks that it left nothing behind."""
    location, files = table.metadata_location, _files(table.location())
    with pytest.raises(FrazilError) as raised:
        attempt()
    assert catalog.load_table(table.identifier).metadata_location == location
    assert _files(table.location()) == files
    return raised.value


def test_arrow_schema_mismatch_lists_every_mismatch(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", SCHEMA)
    table.append(ROWS)
    bad = pa.table(
        {
            "id": pa.array(["1"], pa.string()),  # wrong type
            "ts": pa.array([1.5], pa.float64()),  # wrong type
            "extra": pa.array([1], pa.int32()),  # not in the table
        }
    )
    error = _unchanged(catalog, table, lambda: table.append(bad))
    lines = str(error).splitlines()
    assert "3 problem" in lines[0]
    assert sorted(line.strip() for line in lines[1:]) == [
        "extra: not a column of the table schema",
        "id: Arrow type string cannot be written as long",
        "ts: Arrow type double cannot be written as timestamp",
    ]
    nullable_id = pa.table({"id": pa.array([None, 3], pa.int64())})
    error = _unchanged(catalog, table, lambda: table.overwrite(nullable_id))
    assert "id: 1 null value(s) in required long" in str(error)
    assert sorted(catalog.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_filter_on_a_missing_column(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", SCHEMA)
    # refused on an empty table too, where no file would be read
    error = _unchanged(catalog, table, lambda: table.delete("nope = 1"))
    assert "nope" in str(error)
    table.append(ROWS)
    error = _unchanged(catalog, table, lambda: table.delete("nope = 1"))
    assert "nope" in str(error)
    error = _unchanged(catalog, table, lambda: table.overwrite(ROWS, "missing_col > 3"))
    assert "missing_col" in str(error)


@pytest.mark.parametrize("purge", [False, True])
def test_append_to_a_table_dropped_in_between(catalog: Catalog, purge: bool) -> None:
    table = catalog.create_table("db.t", SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    table.append(ROWS)
    stale = catalog.load_table("db.t")
    catalog.drop_table("db.t", purge=purge)
    files = _files(table.location())
    with pytest.raises(NoSuchTableError, match=r"db\.t"):
        stale.append(ROWS)
    assert _files(table.location()) == files  # the append's data file and manifests are gone
    assert not catalog.table_exists("db.t")


def test_sql_catalog_uri_that_does_not_connect(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    uri = f"postgresql://127.0.0.1:{port}/x"
    started = time.monotonic()
    with pytest.raises(FrazilError, match=f"cannot connect to {uri}"):
        catalog = SqlCatalog("c", uri=uri, warehouse=str(tmp_path))
        catalog.create_table("db.t", SCHEMA)
    assert time.monotonic() - started < 30
    assert not list(tmp_path.iterdir())


def test_identifiers_with_traversal_or_quotes(catalog: Catalog, tmp_path: Path) -> None:
    before = _files(tmp_path)
    for bad in (("db", "../t"), ("..", "t"), ("db", "t/../../x")):
        with pytest.raises(FrazilError, match=r"\.\."):
            catalog.create_table(bad, SCHEMA)
    assert _files(tmp_path) == before
    assert not (tmp_path / "t").exists() and not (tmp_path / "x").exists()
    # A quote is stored harmlessly: SQL parameters, a legal file name.
    quoted = catalog.create_table(("db", "o'brien\""), SCHEMA)
    quoted.append(ROWS)
    again = catalog.load_table(("db", "o'brien\""))
    assert again.scan().to_arrow().num_rows == 2
    assert Path(again.location()).resolve().is_relative_to((tmp_path / "wh").resolve())
    assert ("db", "o'brien\"") in catalog.list_tables("db")
