"""Database engines and the unit of work.

SQLite (the embedded default) runs in WAL mode and starts every transaction with
``BEGIN IMMEDIATE``: a transaction that reads and then writes takes the write lock up
front, so two of them never deadlock on the upgrade. PostgreSQL runs READ COMMITTED;
round rows are updated compare-and-set on their version, and locked with ``SELECT ...
FOR UPDATE`` by the general path and by deadlines (``bot.store.round_commands``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import asyncpg
from sqlalchemy import Engine, event
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import QueuePool

from bot.failures import causes
from bot.priority import PriorityTurn, is_urgent
from bot.store.models import READINESS_PROBE_ID, ReadinessProbe
from bot.store.statements import Positional
from bot.store.write_batches import WriteBatches

_T = TypeVar("_T")

log = logging.getLogger(__name__)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///niuniu.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000

#: Whether this task holds one of ``Database``'s connection slots (a nested unit of work
#: in the same task passes: waiting for a second slot could wait for itself).
_holding: ContextVar[bool] = ContextVar("niuniu_holding", default=False)
#: Pool connections (PostgreSQL) only urgent work may take: a deadline never waits for a
#: connection behind a flood of commands.
RESERVED_CONNECTIONS = 4
#: Connections of the hot path's own pool (PostgreSQL), besides SQLAlchemy's.
DRIVER_POOL_SIZE = 10


def dialect_insert(session: AsyncSession, table: Any) -> Any:
    """An ``INSERT`` with ``on_conflict_do_nothing``/``_do_update`` for the session's
    database (PostgreSQL's and SQLite's share the syntax)."""
    if session.bind.dialect.name == "postgresql":
        return pg_insert(table)
    return sqlite_insert(table)


def normalize_url(url: str) -> str:
    """Accept plain ``postgresql://`` and ``sqlite://`` URLs and pick the async drivers."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


_SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous=NORMAL",
)


def _configure_sqlite(engine: Engine, *, begin: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so that "begin" below decides.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in _SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)


def create_engine(url: str, *, read_only: bool = False, **options: Any) -> AsyncEngine:
    """An async engine for ``url`` (SQLite or PostgreSQL), configured as described above.

    On SQLite, ``read_only`` engines begin with a plain (deferred) ``BEGIN``: in WAL mode
    a reader sees a snapshot and never waits for the writer.
    """
    url = normalize_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_async_engine(url, **options)
        _configure_sqlite(engine.sync_engine, begin="BEGIN" if read_only else "BEGIN IMMEDIATE")
        return engine
    options.setdefault("pool_size", 10)
    options.setdefault("max_overflow", 10)
    return create_async_engine(url, **options)


class SqliteThread:
    """One SQLite connection in a thread of its own, on which a whole transaction runs as
    one call: a command's reads and writes cost one hop to the thread, not one per
    statement as through the async driver. The writer's transactions begin ``IMMEDIATE``
    (it takes the write lock up front); a reader's plainly (in WAL mode, a snapshot that
    never waits for the writer).

    Written by hand because no library runs a synchronous transaction body on the
    driver's thread (``AsyncConnection.run_sync`` still hops once per statement). The
    body gets the standard library's ``sqlite3`` connection (named ``:param`` style,
    rows by column name): on this path SQLAlchemy's per-statement work would cost more
    than SQLite's own.
    """

    def __init__(self, path: str, *, begin: str = "BEGIN IMMEDIATE") -> None:
        self.path = path
        self.begin = begin
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.row_factory = sqlite3.Row
        for pragma in _SQLITE_PRAGMAS:
            connection.execute(pragma)
        return connection

    def _connected(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    def _in_transaction(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        connection = self._connected()
        connection.execute(self.begin)
        try:
            result = body(connection)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:  # the body failed, or COMMIT did
                connection.execute("ROLLBACK")
            raise
        return result

    async def run(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``body(connection)`` in a transaction on the thread; it commits if ``body``
        returns and rolls back if it raises."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._in_transaction, body)

    async def run_bare(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work(connection)`` on the thread, outside any transaction: ``work``
        begins and ends its own (``bot.store.write_batches``)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, lambda: work(self._connected()))

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def dispose(self) -> None:
        """Close the connection and stop the thread."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._close)
        self._thread.shutdown(wait=True)


#: Seconds a connection of the hot path's pool may stay idle and still be used (asyncpg's
#: own pool closes one after 300 s idle).
IDLE_CONNECTION_SECONDS = 300.0

#: The hot path's statements are few, fixed in shape and found by key (a round, a player,
#: an update), so a plan made once for any parameters serves them all. Left to choose,
#: the server may plan a statement again at each execution (whenever its estimate of the
#: shared plan looks worse), and for these reads planning costs more than running.
_GENERIC_PLANS = {"plan_cache_mode": "force_generic_plan"}

#: asyncpg learns an array type (a round's bets come as arrays of ids, flags and names)
#: from the server at its first use on a connection, in a catalog query that takes some
#: ms on a new server process. A connection of the pool asks for all of these at once
#: when it opens, so that no player's command pays for it (``DriverPool.fill``).
_ARRAY_TYPES = (
    "SELECT NULL::int8[], NULL::int4[], NULL::int2[], NULL::bool[], NULL::varchar[], NULL::text[]"
)


class DriverPool:
    """The hot path's connections to PostgreSQL: bare asyncpg connections, at most
    ``size`` open, leased one at a time (``async with pool.connection() as driver``).
    Leases take a slot first, urgent ones (deadlines) before waiting commands, the last
    few slots for urgent work only (``PriorityTurn``); a freed connection goes to the
    next lease as it is.

    Written by hand, not asyncpg's pool: a lease of that pool costs as much of the event
    loop's CPU as a statement (its proxy object, and a task to shield every release),
    and the hot path leases once for every command.
    Nothing is reset at release: the hot path leaves no session state behind (no SET,
    LISTEN or advisory lock; its transactions close in their block). A connection that
    may be mid-statement (its lease ended by a cancellation, a timeout or a broken
    connection) is closed at once rather than reused.
    """

    def __init__(self, dsn: str, size: int) -> None:
        self._dsn = dsn
        self._size = size
        self._turn = PriorityTurn(size, reserved=min(RESERVED_CONNECTIONS, (size - 1) // 2))
        #: Idle connections, each with when it was given back (``time.monotonic``).
        self._idle: list[tuple[asyncpg.Connection, float]] = []
        self._closed = False

    def connection(self) -> _Lease:
        """A connection while inside (after a slot: see the class)."""
        return _Lease(self)

    async def _acquire(self) -> asyncpg.Connection:
        if self._closed:
            raise asyncpg.InterfaceError("the driver pool is closed")
        await self._turn.acquire(is_urgent())
        try:
            if self._closed:  # while this lease waited for its slot
                raise asyncpg.InterfaceError("the driver pool is closed")
            connection = self._reusable() or await self._open()
        except BaseException:
            self._turn.release()
            raise
        return connection

    async def _open(self) -> asyncpg.Connection:
        connection = await asyncpg.connect(self._dsn, server_settings=_GENERIC_PLANS)
        try:
            await connection.prepare(_ARRAY_TYPES)
        except BaseException:
            connection.terminate()
            raise
        return connection

    async def fill(self) -> None:
        """Open every connection not open yet (at start-up): those a burst of commands
        would otherwise open in its midst, a server process each. A failure is logged
        and left to the leases, which open connections as they need them."""
        missing = self._size - len(self._idle)
        opened = await asyncio.gather(
            *(self._open() for _ in range(missing)), return_exceptions=True
        )
        failures = [each for each in opened if isinstance(each, BaseException)]
        for each in opened:
            if isinstance(each, asyncpg.Connection):
                self._idle.append((each, time.monotonic()))
        if failures:
            log.warning("opening the database's connections failed: %s", failures[0])

    def _reusable(self) -> asyncpg.Connection | None:
        while self._idle:
            connection, since = self._idle.pop()
            if connection.is_closed():  # the server closed it meanwhile
                continue
            if time.monotonic() - since > IDLE_CONNECTION_SECONDS:
                # A firewall or NAT may have dropped it without a word: a statement on it
                # would wait for TCP to give up, for minutes.
                connection.terminate()
                continue
            return connection
        return None

    def _release(self, connection: asyncpg.Connection, error: BaseException | None) -> None:
        try:
            if self._closed or not _reusable_after(connection, error):
                connection.terminate()
            else:
                self._idle.append((connection, time.monotonic()))
        finally:
            self._turn.release()

    async def close(self) -> None:
        """Close the idle connections, all at once (a connection that does not close in
        time is cut); a leased one is closed when its lease ends."""
        self._closed = True
        idle, self._idle = [connection for connection, _ in self._idle], []
        await asyncio.gather(
            *(connection.close(timeout=5) for connection in idle), return_exceptions=True
        )
        for connection in idle:
            if not connection.is_closed():
                connection.terminate()


def _reusable_after(connection: asyncpg.Connection, error: BaseException | None) -> bool:
    """Whether a lease that ended with ``error`` (``None``: none) left its connection idle
    and reusable. A server's error, or one raised by the caller between statements, leaves
    it idle; a cancellation, a timeout or a broken connection may leave a statement in
    flight."""
    if connection.is_closed() or connection.is_in_transaction():
        return False
    if error is None:
        return True
    return isinstance(error, Exception) and not isinstance(
        error,
        asyncpg.InterfaceError
        | asyncpg.PostgresConnectionError
        | asyncpg.InternalClientError
        | OSError
        | TimeoutError,
    )


class _Lease:
    """One lease of a ``DriverPool`` connection, as an async context manager (a class, not
    a generator: the hot path enters one for every command)."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: DriverPool) -> None:
        self._pool = pool
        self._connection: asyncpg.Connection | None = None

    async def __aenter__(self) -> asyncpg.Connection:
        self._connection = await self._pool._acquire()
        return self._connection

    async def __aexit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        if self._connection is not None:
            self._pool._release(self._connection, error)
            self._connection = None


#: Commits of the hot path's SQLite writer between two checkpoints of the write-ahead
#: log (a bet writes about 14 pages; SQLite's own checkpoint comes at 1,000).
CHECKPOINT_EVERY_COMMITS = 32


class WalCheckpoints:
    """Checkpoints SQLite's write-ahead log on a connection and a thread of its own, every
    ``every`` commits of the hot path's writer, so that no command pays for one: left to
    SQLite, the commit that takes the log past its limit copies it into the database
    file itself, and the command behind that commit waits for the copy.
    PASSIVE: it copies what no reader still needs and waits for neither the writer nor
    the readers. SQLite's own checkpoint stays as the safety net (the general path's
    commits are not counted here).

    Written by hand: no library runs SQLite's checkpoints beside a writer."""

    def __init__(self, path: str, *, every: int = CHECKPOINT_EVERY_COMMITS) -> None:
        self.every = every
        self.path = path
        self._connection = SqliteThread(path)
        self._commits = 0
        self._running: asyncio.Future[None] | None = None

    def committed(self) -> None:
        """Count one commit of the writer; start a checkpoint when ``every`` have come and
        none runs."""
        self._commits += 1
        if self._commits < self.every or (self._running is not None and not self._running.done()):
            return
        self._commits = 0
        self._running = asyncio.ensure_future(self._connection.run_bare(_checkpoint))
        self._running.add_done_callback(self._finished)

    def _finished(self, checkpoint: asyncio.Future[None]) -> None:
        # Nobody awaits a checkpoint: its failure is retrieved and said here, once, or
        # asyncio would report it without context when the task is collected.
        if checkpoint.cancelled() or (error := checkpoint.exception()) is None:
            return
        log.warning(
            "checkpoint of the write-ahead log of %s failed (SQLite's own checkpoint "
            "stays): %s: %s",
            self.path,
            type(error).__name__,
            error,
        )

    async def dispose(self) -> None:
        """Let a running checkpoint finish, then close the connection."""
        if self._running is not None:
            with contextlib.suppress(Exception):
                await self._running
        await self._connection.dispose()


def _checkpoint(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _probe_write(session: AsyncSession, now_ms: int) -> Any:
    """The probe's write: its row inserted, or updated if it is there (an update of no
    row would write nothing, and pass on a full disk)."""
    row = {"id": READINESS_PROBE_ID, "probed_at_ms": now_ms}
    upsert = dialect_insert(session, ReadinessProbe).values(row)
    return upsert.on_conflict_do_update(
        index_elements=["id"], set_={"probed_at_ms": upsert.excluded.probed_at_ms}
    )


def _refusal(error: DBAPIError) -> str:
    """The driver's name for why a write was refused: SQLite's result code
    (``SQLITE_FULL``), asyncpg's error class (``ReadOnlySQLTransactionError``)."""
    chain = list(causes(error))
    for cause in reversed(chain):
        if isinstance(cause, sqlite3.Error) and cause.sqlite_errorname:
            return cause.sqlite_errorname
        if isinstance(cause, asyncpg.PostgresError):
            return type(cause).__name__
    return type(chain[-1]).__name__


class Database:
    """Engines plus session factories: ``transaction()`` is the unit of work that writes,
    ``reading()`` a read-only snapshot; on SQLite, ``sqlite_writer`` runs a whole
    transaction in one call on its own thread (the hot path's unit of work), and
    ``sqlite_reader`` a snapshot read (a round for its board)."""

    def __init__(self, engine: AsyncEngine, read_engine: AsyncEngine | None = None) -> None:
        self.engine = engine
        self.read_engine = read_engine or engine
        self.dialect = engine.dialect.name
        path = engine.url.database or ""
        sqlite = self.dialect == "sqlite"
        self.sqlite_writer = SqliteThread(path) if sqlite else None
        self.sqlite_reader = SqliteThread(path, begin="BEGIN") if sqlite else None
        self.sqlite_checkpoints = WalCheckpoints(path) if sqlite else None
        # SQLite has one writer at a time. Queueing this process's writers here is first
        # come, first served (urgent work first: a deadline never waits behind a flood of
        # commands); left to SQLite's busy handler they would poll and back off.
        self._write_turn = PriorityTurn() if sqlite else None
        #: The hot path's SQLite transactions, written together when they queue up.
        self.sqlite_batches = (
            WriteBatches(self._on_writer_thread, self._write_turn, self.sqlite_writer.begin)
            if self.sqlite_writer is not None and self._write_turn is not None
            else None
        )
        self.driver_pool = (
            None
            if sqlite
            else DriverPool(
                engine.url.set(drivername="postgresql").render_as_string(hide_password=False),
                DRIVER_POOL_SIZE,
            )
        )
        self.sessions = async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
        self.read_sessions = async_sessionmaker(
            self.read_engine, expire_on_commit=False, autoflush=False
        )
        # PostgreSQL: units of work take a slot before a pooled connection, at most as many
        # as the pool holds, the last few for urgent work only. Waiting here, commands wait
        # in order and behind deadlines; waiting in the pool they would time out (30 s)
        # in a flood, and a deadline would queue behind all of them.
        self._connections: PriorityTurn | None = None
        pool = engine.pool
        if self.dialect != "sqlite" and isinstance(pool, QueuePool):
            size = pool.size() + max(0, pool._max_overflow)
            self._connections = PriorityTurn(
                size, reserved=min(RESERVED_CONNECTIONS, max(0, size - 1) // 2)
            )

    async def _on_writer_thread(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        assert self.sqlite_writer is not None and self.sqlite_checkpoints is not None
        try:
            return await self.sqlite_writer.run_bare(work)
        finally:
            self.sqlite_checkpoints.committed()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Database:
        """A database for ``url`` (see ``create_engine``)."""
        engine = create_engine(url, **options)
        if engine.dialect.name != "sqlite":
            return cls(engine)
        return cls(engine, create_engine(url, read_only=True, **options))

    async def write_one(self, sqlite: str, postgres: Positional, params: dict[str, Any]) -> int:
        """Run one statement that writes, on the hot path's connections, committed alone
        (SQLite: in the writer's batches, whose body runs in a savepoint; PostgreSQL: on
        the bare driver's pool, outside a transaction): ``sqlite`` or ``postgres``, the
        same statement in each one's dialect; the rows it changed."""
        batches = self.sqlite_batches
        if batches is not None:
            changed: int = await batches.run(
                lambda connection: connection.execute(sqlite, params).rowcount
            )
            return changed
        assert self.driver_pool is not None
        async with self.driver_pool.connection() as driver:
            # The status is the command tag: "UPDATE <rows>", "INSERT 0 <rows>".
            status: str = await driver.execute(postgres.sql, *postgres.arguments(params))
        return int(status.rsplit(" ", 1)[1])

    async def write_returning(
        self, sqlite: str, postgres: Positional, params: dict[str, Any]
    ) -> list[Any]:
        """Run one statement that writes and returns rows (``RETURNING``), committed alone
        as ``write_one`` runs one; the rows it returned."""
        batches = self.sqlite_batches
        if batches is not None:
            rows: list[Any] = await batches.run(
                lambda connection: connection.execute(sqlite, params).fetchall()
            )
            return rows
        assert self.driver_pool is not None
        async with self.driver_pool.connection() as driver:
            return list(await driver.fetch(postgres.sql, *postgres.arguments(params)))

    async def write_each(
        self, sqlite: str, postgres: Positional, rows: Sequence[dict[str, Any]]
    ) -> None:
        """Run one statement that writes once for each of ``rows``, committed together on
        the hot path's connections, as ``write_one`` runs one (asyncpg's ``executemany``
        is atomic)."""
        batches = self.sqlite_batches
        if batches is not None:
            await batches.run(lambda connection: connection.executemany(sqlite, rows))
            return
        assert self.driver_pool is not None
        async with self.driver_pool.connection() as driver:
            await driver.executemany(postgres.sql, [postgres.arguments(row) for row in rows])

    async def write_each_returning(
        self, sqlite: str, postgres: Positional, rows: Sequence[dict[str, Any]]
    ) -> list[Any]:
        """Run one statement that writes a row and returns one value of it (``RETURNING
        id``) once for each of ``rows``, committed together on the hot path's connections
        as ``write_each`` runs one; the values, in the order of ``rows``."""
        batches = self.sqlite_batches
        if batches is not None:
            values: list[Any] = await batches.run(
                lambda connection: [connection.execute(sqlite, row).fetchone()[0] for row in rows]
            )
            return values
        assert self.driver_pool is not None
        async with self.driver_pool.connection() as driver, driver.transaction():
            return [await driver.fetchval(postgres.sql, *postgres.arguments(row)) for row in rows]

    async def read_one(self, sqlite: str, postgres: Positional, params: dict[str, Any]) -> Any:
        """The first row of one read on the hot path's connections (SQLite: the reader's
        thread; PostgreSQL: the bare driver's pool), no transaction of SQLAlchemy's
        around it: ``sqlite`` or ``postgres``, the same read in each one's dialect; the
        row by name or position, ``None`` if there is none."""
        return await self._read(sqlite, postgres, params, every_row=False)

    async def read_all(
        self, sqlite: str, postgres: Positional, params: dict[str, Any]
    ) -> list[Any]:
        """Every row of one read, as ``read_one`` reads (in the statement's order)."""
        rows: list[Any] = await self._read(sqlite, postgres, params, every_row=True)
        return rows

    async def _read(
        self, sqlite: str, postgres: Positional, params: dict[str, Any], *, every_row: bool
    ) -> Any:
        if self.sqlite_reader is not None:

            def fetch(connection: sqlite3.Connection) -> Any:
                cursor = connection.execute(sqlite, params)
                return cursor.fetchall() if every_row else cursor.fetchone()

            return await self.sqlite_reader.run(fetch)
        assert self.driver_pool is not None
        arguments = postgres.arguments(params)
        async with self.driver_pool.connection() as driver:
            if every_row:
                return await driver.fetch(postgres.sql, *arguments)
            return await driver.fetchrow(postgres.sql, *arguments)

    @asynccontextmanager
    async def connection_turn(self) -> AsyncIterator[None]:
        """A slot for one pooled connection (PostgreSQL; see ``__init__``), urgent work
        first; a no-op on SQLite and inside another slot of the same task."""
        if self._connections is None or _holding.get():
            yield
            return
        async with self._connections.turn(is_urgent()):
            token = _holding.set(True)
            try:
                yield
            finally:
                _holding.reset(token)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction that commits on success and rolls back on any error."""
        if self._write_turn is None:
            async with self.connection_turn(), self.sessions() as session, session.begin():
                yield session
            return
        async with (
            self._write_turn.turn(is_urgent()),
            self.sessions() as session,
            session.begin(),
        ):
            yield session

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only: a consistent snapshot that blocks no writer."""
        async with self.connection_turn(), self.read_sessions() as session, session.begin():
            yield session

    async def write_refused(self, now_ms: int) -> str | None:
        """The readiness probe: update ``readiness_probe``'s one row in a transaction of
        the general path, as any write waits its turn. Why the database refused the write
        (``_refusal``), None if it took it; raises what stops it from answering at all (no
        connection, or one lost meanwhile)."""
        connected = False
        try:
            async with self.transaction() as session:
                await session.connection()
                connected = True
                # SQLite writes its log at the commit: a full disk fails there, not here.
                await session.execute(_probe_write(session, now_ms))
        except DBAPIError as error:
            if not connected or error.connection_invalidated:
                raise
            return _refusal(error)
        return None

    @asynccontextmanager
    async def write_turn(self) -> AsyncIterator[None]:
        """This process's turn to write on SQLite (one writer at a time); a no-op on
        PostgreSQL, where rows are locked instead."""
        if self._write_turn is None:
            yield
            return
        async with self._write_turn.turn(is_urgent()):
            yield

    async def open_connections(self) -> None:
        """Open the hot path's connections now (PostgreSQL's; at start-up), not in the
        midst of the first burst of commands."""
        if self.driver_pool is not None:
            await self.driver_pool.fill()

    async def dispose(self) -> None:
        """Close every pooled connection."""
        if self.sqlite_checkpoints is not None:
            await self.sqlite_checkpoints.dispose()
        for thread in (self.sqlite_writer, self.sqlite_reader):
            if thread is not None:
                await thread.dispose()
        if self.driver_pool is not None:
            await self.driver_pool.close()
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()


def backend_of(url: str) -> str | None:
    """The kind of database a URL names (``sqlite``, ``postgresql``…), None if it is no
    database URL."""
    try:
        return make_url(url).get_backend_name()
    except ArgumentError:
        return None
