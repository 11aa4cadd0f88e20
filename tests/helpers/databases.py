"""Scratch PostgreSQL databases for tests: the server to ask, creating and emptying them."""

from __future__ import annotations

import os
from pathlib import Path
from shutil import copy
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url

from bot.config import Config
from bot.fakegram.server import FakeTelegram
from bot.store.db import Database
from bot.store.models import Base

POSTGRES_ADMIN_URL = os.environ.get(
    "NIUNIU_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
#: .ci/run sets this so that a missing PostgreSQL fails the run instead of skipping.
REQUIRE_POSTGRES = os.environ.get("NIUNIU_REQUIRE_POSTGRES") == "1"

#: Every table of the schema, from the models themselves so that a new table is emptied
#: between tests without anyone remembering to list it.
TABLES = ", ".join(table.name for table in Base.metadata.sorted_tables)


async def admin_execute(sql: str) -> None:
    """Run ``sql`` on the server's administrative database (CREATE or DROP DATABASE)."""
    import asyncpg

    url = POSTGRES_ADMIN_URL.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url, timeout=3)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def postgres_url_for(database: str) -> str:
    """The URL of ``database`` on the test server."""
    url = make_url(POSTGRES_ADMIN_URL).set(database=database)
    return url.render_as_string(hide_password=False)


async def truncate(url: str) -> None:
    """Empty every table of the database at ``url`` (its schema stays migrated)."""
    database = Database.from_url(url)
    try:
        async with database.engine.begin() as connection:
            await connection.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    finally:
        await database.dispose()


def config_on_fake(
    fake: FakeTelegram, tmp_path: Path, sqlite_template: Path, **settings: Any
) -> Config:
    """A bot's config against ``fake`` on a fresh copy of the migrated SQLite template
    (``tmp_path / "bot.db"``), with ``settings`` besides."""
    copy(sqlite_template, tmp_path / "bot.db")
    return Config(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
        telegram_token=fake.token,
        telegram_base_url=fake.base_url,
        **settings,
    )
