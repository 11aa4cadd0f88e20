"""Schema migrations (Alembic) run from the bot itself: ``niuniu-bot db upgrade``."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import asyncpg
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from bot.store.db import normalize_url


def migrations_dir() -> Path:
    """The Alembic scripts: packaged inside ``bot`` in a wheel, at the top of a checkout."""
    packaged = Path(__file__).resolve().parent.parent / "_migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic configuration for ``url`` without an ini file."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return config


class MigrationFailed(Exception):
    """The database could not be migrated; the message is the first line of why."""


def redact_url(url: str) -> str:
    """A database URL fit for logs: the password hidden."""
    return make_url(url).render_as_string(hide_password=True)


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at ``url`` up to ``revision`` (blocking; runs its own event loop).

    Raises ``MigrationFailed`` with the first line of the reason (the error it comes from
    is its ``__cause__``): at once for a SQLite file that cannot be opened for writing (a
    missing directory, a place nothing may be created, a read-only file: letting the
    driver fail on it races its worker thread against the closing event loop, which
    prints a traceback on stderr), or when the database refuses. asyncpg's
    errors while connecting (a wrong role, password or database name) reach here unwrapped
    by SQLAlchemy.
    """
    try:
        _upgrade(url, revision)
    except (
        SQLAlchemyError,
        OSError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        sqlite3.Error,
    ) as error:
        reason = str(getattr(error, "orig", None) or error).splitlines()[0]
        raise MigrationFailed(reason) from error


def _upgrade(url: str, revision: str) -> None:
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database).expanduser().absolute()
        if not path.parent.is_dir():
            raise FileNotFoundError(f"unable to open database file: no directory {path.parent}")
        # Open it for writing here, with no thread behind it: if SQLite refuses, the
        # driver's worker thread must not be the one to find out (it races the closing
        # event loop and prints a traceback of its own).
        probe = sqlite3.connect(path)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.rollback()
        finally:
            probe.close()
    command.upgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """``upgrade`` from inside a running event loop (Alembic's env starts its own loop)."""
    await asyncio.to_thread(upgrade, url, revision)
