"""Shared fixtures: databases (SQLite and PostgreSQL), a controllable clock, seeds."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.pictures.fonts import missing_fonts
from bot.store.db import Database
from bot.store.migrate import upgrade
from tests.helpers.controls import Clock, Seeds
from tests.helpers.databases import (
    POSTGRES_ADMIN_URL,
    REQUIRE_POSTGRES,
    admin_execute,
    postgres_url_for,
    truncate,
)
from tests.helpers.fonts import missing_fonts_summary


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test session, dropped afterwards."""
    name = f"niuniu_test_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(admin_execute(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # any failure to connect means "no server here"
        message = f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)
    url = postgres_url_for(name)
    try:
        upgrade(url)
        yield url
    finally:
        asyncio.run(admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


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
    asyncio.run(truncate(url))
    return url


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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """End the run saying which fonts the pictures' tests skipped without, and the Debian
    packages to install, once, above the skipped tests' reasons."""
    lines = missing_fonts_summary(missing_fonts())
    if lines:
        terminalreporter.write_sep("=", "fonts missing", yellow=True)
        for line in lines:
            terminalreporter.write_line(line, yellow=True)
