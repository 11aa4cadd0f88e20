"""The database's failures at start-up and in migrations, worded for the operator: the
part of the database URL to fix."""

from __future__ import annotations

import errno
import socket
import sqlite3
from pathlib import Path

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from bot.failures import first_line
from bot.store.db import normalize_url
from bot.store.migrate import MigrationFailed

DATABASE_ERRORS = (
    MigrationFailed,
    SQLAlchemyError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    sqlite3.Error,
)


def is_database_failure(chain: list[BaseException]) -> bool:
    """Whether a chain of causes holds a failure of the database."""
    return any(isinstance(cause, DATABASE_ERRORS) for cause in chain)


def password_of(url: str) -> str | None:
    """The password written in a database URL, if any."""
    try:
        return make_url(url).password
    except ArgumentError:
        return None


def explain_database(chain: list[BaseException], database_url: str, setting: str) -> str:
    """The line for a database failure (``chain``: the failure and its causes)."""
    url = make_url(normalize_url(database_url))
    if url.get_backend_name() == "sqlite":
        return _sqlite(chain, url.database or "", setting)
    return _postgres(chain, url, setting)


def _sqlite(chain: list[BaseException], database: str, setting: str) -> str:
    path = Path(database).expanduser().absolute()
    if any(isinstance(cause, FileNotFoundError) for cause in chain):
        return (
            f"cannot create the SQLite database {path}: the directory {path.parent} does not "
            f"exist (create it, or fix {setting})"
        )
    reason = first_line(chain[-1])
    if "readonly" in reason or "read-only" in reason:
        return (
            f"the SQLite database {path} is read-only: let this user write to it and to "
            f"{path.parent}, or fix {setting}"
        )
    if "unable to open database file" in reason:
        return (
            f"cannot open or create the SQLite database {path}: {path.parent} must exist and "
            f"this user must be able to write there (or fix {setting})"
        )
    return f"the SQLite database {path} failed: {reason}"


def _postgres(chain: list[BaseException], url: URL, setting: str) -> str:
    server = f"{url.host or 'localhost'}:{url.port or 5432}"
    for cause in reversed(chain):
        if isinstance(cause, asyncpg.InvalidPasswordError):
            return (
                f'PostgreSQL at {server} refused the password of role "{url.username}": '
                f"fix it in {setting}"
            )
        if isinstance(cause, asyncpg.InvalidAuthorizationSpecificationError):
            return (
                f"PostgreSQL at {server} refused the connection: {first_line(cause)} "
                f"(fix the user in {setting}, or create the role)"
            )
        if isinstance(cause, asyncpg.InvalidCatalogNameError):
            return (
                f'PostgreSQL at {server} has no database "{url.database}": create it '
                f"(createdb {url.database}) or fix the name in {setting}"
            )
        if isinstance(cause, socket.gaierror):
            return (
                f'cannot find the PostgreSQL host "{url.host}" ({cause.strerror}): '
                f"fix the host in {setting}"
            )
        if isinstance(cause, ConnectionRefusedError) or (
            # asyncpg joins the refusals of every address of a host into one OSError.
            isinstance(cause, OSError) and f"[Errno {errno.ECONNREFUSED}]" in str(cause)
        ):
            return (
                f"cannot connect to PostgreSQL at {server}: connection refused (is it running "
                f"and listening there? the host and port are in {setting})"
            )
        if isinstance(cause, TimeoutError):
            return (
                f"PostgreSQL at {server} did not answer in time: check the network, or the "
                f"host and port in {setting}"
            )
        if isinstance(cause, asyncpg.PostgresError):
            return f"PostgreSQL at {server} refused: {first_line(cause)}"
    return f"cannot use PostgreSQL at {server}: {first_line(chain[-1])}"
