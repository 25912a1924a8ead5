"""The databases a :class:`~frazil.catalog.sql.SqlCatalog` keeps its pointers in: SQLite through
the standard library, PostgreSQL through psycopg 3.

Statements are written once with ``?`` placeholders and every value goes as a parameter (for
psycopg the placeholders become ``%s``; the statements hold no literal ``%``). A SQLite
connection is opened per operation: they are cheap, and a fresh one is safe across threads and
``fork``. A PostgreSQL connection costs a few milliseconds to open, so idle ones are kept for
the next operation (``pool-size`` of them; see PostgresDatabase).
SQLite waits ``busy-timeout-ms`` for a writer holding the database (concurrent committers
queue rather than fail).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from frazil.errors import (
    AlreadyExistsError,
    FrazilError,
    FrazilIOError,
    InvalidDataError,
    LostConnectionError,
    ValidationError,
)

__all__ = ["Database", "open_database"]

Params = Sequence[Any]


class Database:
    """One database: ``execute`` (returns the rows changed), ``query`` and ``transaction``."""

    dialect = ""

    def __init__(self, description: str) -> None:
        self.description = description

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        raise NotImplementedError  # pragma: no cover

    def _sql(self, sql: str) -> str:
        return sql

    def execute(self, sql: str, params: Params = ()) -> int:
        with self._connection() as conn:
            return self._run(conn, sql, params)

    def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            cursor = self._cursor(conn, sql, params)
            rows: list[tuple[Any, ...]] = list(cursor.fetchall())
            return rows

    def transaction(
        self,
        statements: Sequence[tuple[str, Params]],
        check: Callable[[list[int]], None] | None = None,
    ) -> list[int]:
        """Run ``statements`` in one transaction; the rows each changed. ``check`` sees those
        counts before the commit: when it raises, the transaction is rolled back and its error
        propagates (a multi-table commit whose compare-and-swap missed a row)."""
        raise NotImplementedError  # pragma: no cover

    def _run(self, conn: Any, sql: str, params: Params) -> int:
        count: int = self._cursor(conn, sql, params).rowcount
        return count

    def _cursor(self, conn: Any, sql: str, params: Params) -> Any:
        raise NotImplementedError  # pragma: no cover

    def table_exists(self, name: str) -> bool:
        raise NotImplementedError  # pragma: no cover

    def column_exists(self, table: str, column: str) -> bool:
        raise NotImplementedError  # pragma: no cover


# SQLite databases holding a keeper connection (see SqliteDatabase._keep_open).
_KEEPING: weakref.WeakSet[SqliteDatabase] = weakref.WeakSet()


def _close_keepers_before_fork() -> None:
    # SQLite must not be used across fork: a child would inherit the parent's view of the
    # file's locks with its open connections. Closing the keepers first leaves none open (the
    # operations' own connections are short-lived); parent and child reopen theirs on demand.
    for database in list(_KEEPING):
        database._close_keeper()


# PostgreSQL databases holding idle connections (see PostgresDatabase), and how long a
# connection may sit idle before it is pinged on reuse.
_PING_AFTER_IDLE_S = 5.0
_POOLING: weakref.WeakSet[PostgresDatabase] = weakref.WeakSet()


def _close_idle_before_fork() -> None:
    # A child must not inherit a PostgreSQL connection: closing it there (or its finalizer)
    # would end the parent's session on the shared socket. Connections in use at the fork
    # are the operations' own, as before pooling.
    for database in list(_POOLING):
        database.close_idle()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_close_keepers_before_fork)
    os.register_at_fork(before=_close_idle_before_fork)


# SQLite's primary result codes (sqlite3 names them only from Python 3.11, with the code).
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _sqlite_error(description: str, error: sqlite3.Error) -> FrazilError:
    """The FrazilError for an error of the sqlite3 module, naming the database file: a unique
    key violated (a row that exists already) is AlreadyExistsError, which the catalog turns
    into the already-exists error of what it created; a file that is not a SQLite database
    (SQLITE_NOTADB) or is corrupt (SQLITE_CORRUPT) is InvalidDataError; anything else (locked,
    read-only, disk full, I/O) is FrazilIOError."""
    if isinstance(error, sqlite3.IntegrityError):
        return AlreadyExistsError(f"{description}: {error}")
    code = getattr(error, "sqlite_errorcode", None)  # an extended code: the low byte is primary
    if (code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)) or (
        code is None and type(error) is sqlite3.DatabaseError
    ):
        return InvalidDataError(f"{description}: not a readable SQLite catalog database ({error})")
    return FrazilIOError(f"{description}: {error}")


class SqliteDatabase(Database):
    dialect = "sqlite"

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self._memory_keeper: sqlite3.Connection | None = None
        if path == ":memory:":
            # One in-memory database for every connection of this catalog, kept alive by a
            # connection held open (a plain :memory: database is private to one connection).
            path = f"file:frazil-{uuid.uuid4()}?mode=memory&cache=shared"
            self._memory_keeper = sqlite3.connect(path, uri=True, check_same_thread=False)
            self._uri = True
        else:
            try:
                path = os.path.abspath(path)
            except OSError as error:  # the current directory was deleted
                raise FrazilIOError(
                    f"cannot open the SQLite catalog {path}: the current directory is "
                    f"unavailable ({error.strerror or error})"
                ) from None
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                raise FrazilIOError(
                    f"cannot open the SQLite catalog database {path}: {parent} is not a directory"
                )
            self._uri = False
        super().__init__(f"sqlite:{path}")
        self.path = path
        self._timeout = busy_timeout_ms / 1000
        self._keeper: sqlite3.Connection | None = None
        self._keeper_lock = threading.Lock()
        if self._memory_keeper is None:
            self._use_wal()

    def _keep_open(self) -> None:
        """Hold one idle connection to the database while this catalog lives. In WAL mode the
        last connection of a process to close checkpoints the log into the database and
        deletes it (four more fsyncs), and the next one creates it again (two more): with a
        connection per operation every commit paid for that, about 12 ms of a 20 ms
        check-and-put on a local disk. With a keeper open the log persists and each commit
        syncs it once, checkpointing as SQLite's auto-checkpoint decides. Best effort."""
        if self._keeper is not None or self._memory_keeper is not None:
            return
        with self._keeper_lock:
            if self._keeper is not None:
                return
            try:
                keeper = sqlite3.connect(
                    self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
                )
                # A first read opens the log and its shared-memory index, which stay open.
                keeper.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            except sqlite3.Error:
                return
            self._keeper = keeper
            _KEEPING.add(self)

    def _close_keeper(self) -> None:
        with self._keeper_lock:
            keeper, self._keeper = self._keeper, None
            if keeper is not None:
                keeper.close()

    def _use_wal(self) -> None:
        """Switch the database to WAL journaling (persistent, and understood by every SQLite
        client, Java's sqlite-jdbc included). In the default rollback journal any open read
        cursor blocks every writer, and Java's JdbcCatalog leaves cursors open on its pooled
        connections (unclosed ResultSets of its schema checks), so a frazil commit would wait
        for Java's pool to close; in WAL mode readers never block writers. Best effort: when
        another connection holds the database the mode stays as it is."""
        try:
            conn = sqlite3.connect(self.path, timeout=1.0, isolation_level=None)
        except sqlite3.Error as error:
            raise FrazilIOError(f"cannot open the SQLite catalog {self.path}: {error}") from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            pass
        except sqlite3.Error as error:
            raise _sqlite_error(self.description, error) from None
        finally:
            conn.close()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        self._keep_open()
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
                uri=self._uri,
            )
        except sqlite3.Error as error:
            raise FrazilIOError(f"cannot open the SQLite catalog {self.path}: {error}") from None
        try:
            yield conn
        except sqlite3.Error as error:
            raise _sqlite_error(self.description, error) from None
        finally:
            conn.close()

    def _cursor(self, conn: Any, sql: str, params: Params) -> Any:
        return conn.execute(sql, tuple(params))

    def transaction(
        self,
        statements: Sequence[tuple[str, Params]],
        check: Callable[[list[int]], None] | None = None,
    ) -> list[int]:
        with self._connection() as conn:
            # IMMEDIATE takes the write lock first, so the busy timeout applies (a deferred
            # transaction upgrading to a write fails at once when another writer holds it).
            conn.execute("BEGIN IMMEDIATE")
            try:
                counts = [self._run(conn, sql, params) for sql, params in statements]
                if check is not None:
                    check(counts)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return counts

    def table_exists(self, name: str) -> bool:
        rows = self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return bool(rows)

    def column_exists(self, table: str, column: str) -> bool:
        rows = self.query("SELECT name FROM pragma_table_info(?)", (table,))
        return any(str(r[0]).lower() == column for r in rows)


class PostgresDatabase(Database):
    """PostgreSQL through psycopg 3. Up to ``pool_size`` idle connections are kept and reused
    by the next operation of any thread (opening one on loopback costs about 3 ms, a large
    part of a commit or a catalog lookup: benches/bench_rest.py), each checked idle and
    unbroken before reuse; a connection in a failed state is closed instead. Operations never
    wait for one another: when none is idle a new connection is opened. Not psycopg_pool: its
    worker threads do not survive ``fork``, and catalogs are used in forked processes; the idle
    connections here are closed before a fork instead."""

    dialect = "postgresql"

    def __init__(self, conninfo: str, connect_timeout_s: int, pool_size: int = 4) -> None:
        try:
            import psycopg
        except ImportError:
            raise FrazilError(
                "a postgresql:// catalog needs psycopg 3: pip install 'frazil[postgres]'"
            ) from None
        self._psycopg = psycopg
        # Never show a password in messages.
        shown = conninfo.split("@", 1)[-1] if "@" in conninfo else conninfo
        super().__init__(f"postgresql://{shown.removeprefix('postgresql://')}")
        self._conninfo = conninfo
        self._connect_timeout = connect_timeout_s
        self._pool_size = pool_size
        self._idle: list[tuple[Any, float]] = []
        self._idle_lock = threading.Lock()
        _POOLING.add(self)

    def close_idle(self) -> None:
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def _take(self) -> Any:
        psycopg = self._psycopg
        while True:
            with self._idle_lock:
                conn, since = self._idle.pop() if self._idle else (None, 0.0)
            if conn is None:
                break
            if (
                not conn.closed
                and not conn.broken
                and self._is_idle(conn)
                and self._alive(conn, since)
            ):
                return conn
            conn.close()
        try:
            return psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=self._connect_timeout
            )
        except psycopg.Error as error:
            raise FrazilIOError(f"cannot connect to {self.description}: {error}") from None

    def _alive(self, conn: Any, idle_since: float) -> bool:
        """A connection idle for a while is pinged first: the server may have ended it, and a
        statement failing on a dead connection could not tell whether it ran (a commit's
        outcome would be unknown)."""
        if time.monotonic() - idle_since < _PING_AFTER_IDLE_S:
            return True
        try:
            conn.execute("SELECT 1")
        except self._psycopg.Error:
            return False
        return True

    def _is_idle(self, conn: Any) -> bool:
        return bool(conn.info.transaction_status == self._psycopg.pq.TransactionStatus.IDLE)

    def _give_back(self, conn: Any) -> None:
        if not conn.closed and not conn.broken and self._is_idle(conn):
            with self._idle_lock:
                if len(self._idle) < self._pool_size:
                    self._idle.append((conn, time.monotonic()))
                    return
        conn.close()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        psycopg = self._psycopg
        conn = self._take()
        failed = True
        try:
            yield conn
            failed = False
        except psycopg.errors.UniqueViolation as error:
            raise AlreadyExistsError(f"{self.description}: {error}") from None
        except psycopg.OperationalError as error:
            if conn.closed or conn.broken:
                raise LostConnectionError(f"{self.description}: {error}") from None
            raise FrazilIOError(f"{self.description}: {error}") from None
        except psycopg.Error as error:
            raise FrazilIOError(f"{self.description}: {error}") from None
        finally:
            if failed:
                conn.close()
            else:
                self._give_back(conn)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _cursor(self, conn: Any, sql: str, params: Params) -> Any:
        return conn.execute(self._sql(sql), tuple(params))

    def transaction(
        self,
        statements: Sequence[tuple[str, Params]],
        check: Callable[[list[int]], None] | None = None,
    ) -> list[int]:
        # An exception inside conn.transaction() rolls it back.
        with self._connection() as conn, conn.transaction():
            counts = [self._run(conn, sql, params) for sql, params in statements]
            if check is not None:
                check(counts)
            return counts

    def table_exists(self, name: str) -> bool:
        rows = self.query(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name = ?",
            (name,),
        )
        return bool(rows)

    def column_exists(self, table: str, column: str) -> bool:
        rows = self.query(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? AND column_name = ?",
            (table, column),
        )
        return bool(rows)


_ACCEPTED_URIS = (
    "sqlite:////absolute/path.db, sqlite:///relative/path.db, sqlite:///:memory:, "
    "jdbc:sqlite:<path>, postgresql://[user[:password]@]host[:port]/database "
    "(also postgresql+psycopg://, jdbc:postgresql://)"
)


def open_database(uri: str, properties: dict[str, str]) -> Database:
    """The database of ``uri``: ``sqlite:///<path>`` (SQLAlchemy's form, as pyiceberg users
    write it: ``sqlite:////abs/path.db``, ``sqlite:///relative.db``, ``sqlite:///:memory:``)
    or ``jdbc:sqlite:<path>`` (Java's) for SQLite; ``postgresql://...`` (also
    ``postgresql+psycopg://``, ``jdbc:postgresql://``) for PostgreSQL. Anything else is
    refused, a plain path included: a typo such as ``sqlite:rel.db`` would otherwise become a
    new, empty database file of that name."""

    def number(key: str, default: int) -> int:
        text = properties.get(key, str(default))
        try:
            return int(text)
        except ValueError:
            raise ValidationError(
                f"catalog property {key} must be an integer, got {text!r}"
            ) from None

    def refuse(why: str) -> ValidationError:
        return ValidationError(f"catalog uri {uri!r} {why}; the accepted forms: {_ACCEPTED_URIS}")

    lowered = uri.lower()
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "jdbc:postgresql://"):
        if lowered.startswith(prefix):
            uri = "postgresql://" + uri[len(prefix) :]
            lowered = uri.lower()
    if lowered.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(
            uri, number("connect-timeout-s", 10), pool_size=number("pool-size", 4)
        )
    if lowered.startswith("sqlite://"):
        rest = uri[len("sqlite://") :]
        if not rest.startswith("/"):
            raise refuse("names a host, not a path (sqlite:///<path> has three slashes)")
        path = unquote(rest[1:]) or ":memory:"
    elif lowered.startswith("jdbc:sqlite:"):
        # sqlite-jdbc's forms: a path, or nothing / :memory: for an in-memory database.
        path = uri[len("jdbc:sqlite:") :] or ":memory:"
        if path.lower().startswith("file:"):
            raise refuse("uses an SQLite URI filename, which frazil does not read")
    elif lowered.startswith("sqlite:"):
        raise refuse("is not a URL: sqlite: is followed by ///<path>")
    elif "://" in uri:
        raise refuse("has a scheme frazil's SQL catalog does not support")
    else:
        raise refuse("is not a URI (a plain path is not accepted: write sqlite:///<path>)")
    return SqliteDatabase(path, number("busy-timeout-ms", 30_000))
