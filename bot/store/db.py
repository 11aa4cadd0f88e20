"""Database engines and the unit of work.

SQLite (the embedded default) runs in WAL mode and starts every transaction with
``BEGIN IMMEDIATE``: a transaction that reads and then writes takes the write lock up
front, so two of them never deadlock on the upgrade. PostgreSQL runs READ COMMITTED;
round rows are locked with ``SELECT ... FOR UPDATE`` and updated compare-and-set.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///niuniu.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


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


def _configure_sqlite(engine: AsyncEngine, *, begin: str) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so that "begin" below decides.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
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
        _configure_sqlite(engine, begin="BEGIN" if read_only else "BEGIN IMMEDIATE")
        return engine
    options.setdefault("pool_size", 10)
    options.setdefault("max_overflow", 10)
    return create_async_engine(url, **options)


class Database:
    """Engines plus session factories: ``transaction()`` is the unit of work that writes,
    ``reading()`` a read-only snapshot."""

    def __init__(self, engine: AsyncEngine, read_engine: AsyncEngine | None = None) -> None:
        self.engine = engine
        self.read_engine = read_engine or engine
        self.sessions = async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
        self.read_sessions = async_sessionmaker(
            self.read_engine, expire_on_commit=False, autoflush=False
        )
        # SQLite has one writer at a time. Queueing this process's writers here is first
        # come, first served; left to SQLite's busy handler they would poll and back off.
        self._write_turn = asyncio.Lock() if engine.dialect.name == "sqlite" else None

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Database:
        """A database for ``url`` (see ``create_engine``)."""
        engine = create_engine(url, **options)
        if engine.dialect.name != "sqlite":
            return cls(engine)
        return cls(engine, create_engine(url, read_only=True, **options))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction that commits on success and rolls back on any error."""
        if self._write_turn is None:
            async with self.sessions() as session, session.begin():
                yield session
            return
        async with self._write_turn, self.sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only: a consistent snapshot that blocks no writer."""
        async with self.read_sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
