"""Database engines and the unit of work.

SQLite (the embedded default) runs in WAL mode and starts every transaction with
``BEGIN IMMEDIATE``: a transaction that reads and then writes takes the write lock up
front, so two of them never deadlock on the upgrade. PostgreSQL runs READ COMMITTED;
round rows are locked with ``SELECT ... FOR UPDATE`` and updated compare-and-set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///niuniu.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def normalize_url(url: str) -> str:
    """Accept plain ``postgresql://`` and ``sqlite://`` URLs and pick the async drivers."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def _configure_sqlite(engine: AsyncEngine) -> None:
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
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_engine(url: str, **options: Any) -> AsyncEngine:
    """An async engine for ``url`` (SQLite or PostgreSQL), configured as described above."""
    url = normalize_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_async_engine(url, **options)
        _configure_sqlite(engine)
        return engine
    options.setdefault("pool_size", 10)
    options.setdefault("max_overflow", 10)
    return create_async_engine(url, **options)


class Database:
    """An engine plus the session factory; ``transaction()`` is the unit of work."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions = async_sessionmaker(engine, expire_on_commit=False, autoflush=False)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Database:
        """A database for ``url`` (see ``create_engine``)."""
        return cls(create_engine(url, **options))

    @property
    def is_postgres(self) -> bool:
        """True on PostgreSQL (row locks and SKIP LOCKED are available)."""
        return self.engine.dialect.name == "postgresql"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction that commits on success and rolls back on any error."""
        async with self.sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
