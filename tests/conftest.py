"""Shared fixtures: databases (SQLite and PostgreSQL), a controllable clock, seeds."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.store.db import Database
from bot.store.migrate import upgrade

POSTGRES_ADMIN_URL = os.environ.get(
    "NIUNIU_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
#: .ci/run sets this so that a missing PostgreSQL fails the run instead of skipping.
REQUIRE_POSTGRES = os.environ.get("NIUNIU_REQUIRE_POSTGRES") == "1"

TABLES = (
    "postings, ledger_transactions, accounts, outcomes, grabs, bets, bids, rounds, "
    "audit_log, processed_updates, users, chats, console_link_uses, client_seeds, "
    "console_sessions, kept_answers, group_sends"
)


class Clock:
    """A clock the tests move by hand (milliseconds since the epoch)."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, seconds: float) -> None:
        self.now_ms += int(seconds * 1000)


class Seeds:
    """Deterministic round seeds: 32 bytes from a counter, or queued seeds first."""

    def __init__(self) -> None:
        self.counter = 0
        self.queued: list[bytes] = []

    def __call__(self) -> bytes:
        if self.queued:
            return self.queued.pop(0)
        self.counter += 1
        return self.counter.to_bytes(32, "big")


async def _admin_execute(sql: str) -> None:
    import asyncpg

    url = POSTGRES_ADMIN_URL.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url, timeout=3)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def _postgres_url_for(database: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(POSTGRES_ADMIN_URL).set(database=database)
    return url.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test session, dropped afterwards."""
    name = f"niuniu_test_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(_admin_execute(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # any failure to connect means "no server here"
        message = f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)
    url = _postgres_url_for(name)
    try:
        upgrade(url)
        yield url
    finally:
        asyncio.run(_admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file that each test copies (migrating once is faster)."""
    path = tmp_path_factory.mktemp("template") / "niuniu.db"
    upgrade(f"sqlite+aiosqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty, migrated database of each kind."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        target = tmp_path / "niuniu.db"
        shutil.copy(template, target)
        return f"sqlite+aiosqlite:///{target}"
    url: str = request.getfixturevalue("postgres_url")
    asyncio.run(_truncate(url))
    return url


async def _truncate(url: str) -> None:
    database = Database.from_url(url)
    try:
        async with database.engine.begin() as connection:
            from sqlalchemy import text

            await connection.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    finally:
        await database.dispose()


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database.from_url(database_url)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def seeds() -> Seeds:
    return Seeds()
