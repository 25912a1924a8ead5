"""No error of a dependency escapes a catalog call: a failure injected at any call the catalogs
make to sqlite3, psycopg or the operating system (os, shutil) reaches the caller as a
FrazilError, whatever the failure and wherever it strikes in a table's life."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import FrazilError, InternalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# How many injectable calls a scenario makes at most (checked below), so every one is drawn.
SQLITE_REACH, PG_REACH, OS_REACH = 100, 100, 50
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
ROWS = pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=ARROW)


class Fault:
    """Raises ``error()`` at the ``at``-th call it sees (0-based), once."""

    def __init__(self, at: int, error: Callable[[], BaseException]) -> None:
        self.at, self.error, self.calls = at, error, 0

    def tick(self) -> None:
        self.calls += 1
        if self.calls - 1 == self.at:
            raise self.error()


def _scenario(open_catalog: Callable[[], Catalog]) -> None:
    """A table's life: every catalog call a user makes, in order."""
    catalog = open_catalog()
    catalog.create_namespace("db")
    catalog.list_namespaces()
    table = catalog.create_table("db.t", ARROW)
    table.append(ROWS)
    catalog.load_table("db.t").scan().to_arrow()
    catalog.list_tables("db")
    catalog.table_exists("db.t")
    catalog.create_table_if_not_exists("db.t", ARROW)
    catalog.drop_table("db.t", purge=True)
    catalog.drop_namespace("db")


def _run(scenario: Callable[[], None], fault: Fault) -> None:
    try:
        scenario()
    except FrazilError as error:
        assert not isinstance(error, InternalError), error
        assert str(error)
    except BaseException as error:  # the point of the test: name what escaped, with its trace
        raise AssertionError(
            f"{type(error).__module__}.{type(error).__name__} escaped at injected call "
            f"{fault.at}: {error}"
        ) from error


# --- SQLite ----------------------------------------------------------------------------------

SQLITE_ERRORS: list[Callable[[], BaseException]] = [
    lambda: sqlite3.DatabaseError("file is not a database"),
    lambda: sqlite3.OperationalError("disk I/O error"),
    lambda: sqlite3.OperationalError("database is locked"),
    lambda: sqlite3.IntegrityError("UNIQUE constraint failed: iceberg_tables.table_name"),
    lambda: sqlite3.ProgrammingError("Cannot operate on a closed database."),
    lambda: sqlite3.InterfaceError("bad parameter"),
    lambda: sqlite3.DataError("string or blob too big"),
]


class _Connection:
    def __init__(self, real: sqlite3.Connection, fault: Fault) -> None:
        self._real, self._fault = real, fault

    def execute(self, *args: Any) -> Any:
        self._fault.tick()
        return self._real.execute(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@contextmanager
def _faulty_sqlite(fault: Fault) -> Iterator[None]:
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        fault.tick()
        return _Connection(real(*args, **kwargs), fault)

    sqlite3.connect = connect  # type: ignore[assignment]
    try:
        yield
    finally:
        sqlite3.connect = real


@settings(max_examples=60, deadline=None)
@given(at=st.integers(0, SQLITE_REACH), error=st.sampled_from(SQLITE_ERRORS))
def test_sqlite_failures_are_frazil_errors(at: int, error: Callable[[], BaseException]) -> None:
    fault = Fault(at, error)
    with tempfile.TemporaryDirectory() as root:
        uri, warehouse = f"sqlite:///{root}/c.db", f"{root}/wh"
        with _faulty_sqlite(fault):
            _run(lambda: _scenario(lambda: SqlCatalog("c", uri=uri, warehouse=warehouse)), fault)


# --- PostgreSQL ------------------------------------------------------------------------------


def _psycopg_errors() -> list[Callable[[], BaseException]]:
    import psycopg

    return [
        lambda: psycopg.OperationalError("server closed the connection unexpectedly"),
        lambda: psycopg.errors.UniqueViolation("duplicate key value violates unique constraint"),
        lambda: psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
        lambda: psycopg.errors.DiskFull("could not extend file"),
        lambda: psycopg.InterfaceError("the connection is closed"),
        lambda: psycopg.errors.InsufficientPrivilege("permission denied for table"),
    ]


@contextmanager
def _faulty_psycopg(fault: Fault) -> Iterator[None]:
    import psycopg

    real = psycopg.connect

    class Connection:
        def __init__(self, conn: Any) -> None:
            self._real = conn

        def execute(self, *args: Any, **kwargs: Any) -> Any:
            fault.tick()
            return self._real.execute(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

    def connect(*args: Any, **kwargs: Any) -> Any:
        fault.tick()
        return Connection(real(*args, **kwargs))

    psycopg.connect = connect  # type: ignore[assignment]
    try:
        yield
    finally:
        psycopg.connect = real  # type: ignore[assignment]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(at=st.integers(0, PG_REACH), which=st.integers(0, 5))
def test_postgresql_failures_are_frazil_errors(postgres_uri: str, at: int, which: int) -> None:
    fault = Fault(at, _psycopg_errors()[which])
    name = f"f-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as root, _faulty_psycopg(fault):
        _run(
            lambda: _scenario(lambda: SqlCatalog(name, uri=postgres_uri, warehouse=f"{root}/wh")),
            fault,
        )


# --- the file system -------------------------------------------------------------------------

OS_ERRORS: list[Callable[[], BaseException]] = [
    lambda: FileNotFoundError(errno.ENOENT, "No such file or directory", "x"),
    lambda: PermissionError(errno.EACCES, "Permission denied", "x"),
    lambda: NotADirectoryError(errno.ENOTDIR, "Not a directory", "x"),
    lambda: IsADirectoryError(errno.EISDIR, "Is a directory", "x"),
    lambda: FileExistsError(errno.EEXIST, "File exists", "x"),
    lambda: OSError(errno.EIO, "Input/output error", "x"),
    lambda: OSError(errno.ELOOP, "Too many levels of symbolic links", "x"),
    lambda: OSError(errno.ENOTEMPTY, "Directory not empty", "x"),
]
# What the file-system catalog calls on directories (its files go through the FileIO, in Rust).
OS_CALLS = ["listdir", "makedirs", "mkdir", "rmdir", "unlink", "scandir", "lstat", "open", "stat"]


@contextmanager
def _faulty_os(fault: Fault) -> Iterator[None]:
    saved = {name: getattr(os, name) for name in OS_CALLS}

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            fault.tick()
            return real(*args, **kwargs)

        return call

    for name, real in saved.items():
        setattr(os, name, wrap(real))
    try:
        yield
    finally:
        for name, real in saved.items():
            setattr(os, name, real)


@settings(max_examples=60, deadline=None)
@given(at=st.integers(0, OS_REACH), error=st.sampled_from(OS_ERRORS))
def test_file_system_failures_are_frazil_errors(
    at: int, error: Callable[[], BaseException]
) -> None:
    fault = Fault(at, error)
    root = tempfile.mkdtemp()
    try:
        with _faulty_os(fault):
            _run(lambda: _scenario(lambda: FileSystemCatalog("c", warehouse=f"{root}/wh")), fault)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_scenarios_reach_the_injected_calls(tmp_path: Path, postgres_uri: str) -> None:
    """The ranges drawn above cover every call of a scenario (a fault never injected proves
    nothing)."""
    never = Fault(-1, lambda: AssertionError("never"))
    with _faulty_sqlite(never):
        uri = f"sqlite:///{tmp_path / 'c.db'}"
        _scenario(lambda: SqlCatalog("c", uri=uri, warehouse=str(tmp_path / "s")))
    assert 10 < never.calls <= SQLITE_REACH, never.calls
    never = Fault(-1, lambda: AssertionError("never"))
    with _faulty_psycopg(never):
        name = f"r-{uuid.uuid4().hex[:8]}"
        _scenario(lambda: SqlCatalog(name, uri=postgres_uri, warehouse=str(tmp_path / "p")))
    assert 10 < never.calls <= PG_REACH, never.calls
    never = Fault(-1, lambda: AssertionError("never"))
    with _faulty_os(never):
        _scenario(lambda: FileSystemCatalog("c", warehouse=str(tmp_path / "f")))
    assert 10 < never.calls <= OS_REACH, never.calls


@pytest.mark.parametrize("name", ["sqlite3", "psycopg"])
def test_the_catalogs_catch_their_drivers_errors_at_one_place(name: str) -> None:
    # Only the database module talks to the drivers: nothing else can let their errors out.
    package = Path(__file__).parents[3] / "python" / "frazil"
    users = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if f"import {name}" in p.read_text(encoding="utf-8")
    )
    assert users == ["catalog/_sqldb.py"]
