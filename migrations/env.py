"""Alembic environment: runs migrations over the project's async engine."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.db import DEFAULT_DATABASE_URL, create_engine
from bot.store.models import Base

config = context.config
target_metadata = Base.metadata


#: The key of the PostgreSQL advisory lock that migrations hold (a fixed 64-bit number:
#: "niuniu-m" in ASCII), so that workers starting together migrate one after another.
MIGRATION_LOCK_KEY = 0x6E69_756E_6975_2D6D


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or DEFAULT_DATABASE_URL


def run_migrations_offline() -> None:
    """Emit SQL to stdout instead of running it (``alembic upgrade --sql``)."""
    context.configure(
        url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Taken in the migration's transaction before Alembic reads the revision, and
            # released when it commits (PostgreSQL's DDL is transactional): a worker that
            # waited here finds the schema at head and does nothing, instead of creating
            # the same tables again and crashing.
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
        context.run_migrations()
        if connection.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")


def _sqlite_foreign_keys_off(engine: AsyncEngine) -> None:
    # SQLite's batch migrations rebuild a table (copy, drop, rename); with foreign keys
    # enforced, dropping a table that other rows refer to fails. They are checked at the
    # end of the migration instead (``_run``). The pragma only works outside a transaction,
    # hence on connect (after the engine's own listener turned them on).
    @event.listens_for(engine.sync_engine, "connect")
    def _off(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=OFF")
        cursor.close()


async def run_migrations_online() -> None:
    """Run the migrations on a live connection of the async engine."""
    engine = create_engine(_url())
    if engine.dialect.name == "sqlite":
        _sqlite_foreign_keys_off(engine)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(run_migrations_online())
