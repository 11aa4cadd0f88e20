"""What an operator is told when ``niuniu-bot run`` or ``niuniu-bot db upgrade`` fails:
one line that names what to fix, instead of a traceback, and never the token.

``explain`` is the one place that maps a failure to that line. It looks through the
chain of causes (SQLAlchemy wraps the driver's error, Alembic's, PTB's wrap httpx's) for
what went wrong, and words it for the part of the configuration to fix: the token, the
Bot API URL, or the database URL's host, port, user, password or name. A failure it does
not know is left to ``unexpected``: the traceback, with every secret blanked.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import sqlite3
import traceback
from collections.abc import Iterator
from pathlib import Path

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from telegram.error import InvalidToken, NetworkError, TelegramError, TimedOut

from bot.config import Config
from bot.store.db import normalize_url
from bot.store.migrate import MigrationFailed

#: Where each setting is, as the lines name it.
TOKEN_SETTING = "NIUNIU_TELEGRAM_TOKEN or [telegram] token"
BASE_URL_SETTING = "NIUNIU_TELEGRAM_BASE_URL or [telegram] base_url"
DATABASE_SETTING = "NIUNIU_DATABASE_URL or [database] url"
REDACTED = "<redacted>"

_DATABASE_ERRORS = (
    MigrationFailed,
    SQLAlchemyError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    sqlite3.Error,
)


def secrets_of(config: Config) -> list[str]:
    """What must never be shown: the token (whole, then its secret part alone, as a URL
    may encode the colon), the webhook's secret, the database password."""
    token = config.telegram_token
    found = [token, token.partition(":")[2], config.webhook.secret_token]
    with contextlib.suppress(ArgumentError):  # load_config lets no such URL through
        found.append(make_url(config.database_url).password or "")
    return [secret for secret in found if secret]


def redact(text: str, config: Config) -> str:
    """``text`` with every secret of ``config`` blanked."""
    for secret in secrets_of(config):
        text = text.replace(secret, REDACTED)
    return text


def _causes(error: BaseException) -> Iterator[BaseException]:
    """``error``, then what caused it, and so on (SQLAlchemy's ``orig`` counts)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        original = getattr(current, "orig", None)
        if current.__cause__ is not None:
            current = current.__cause__
        elif isinstance(original, BaseException):
            current = original
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def explain(error: BaseException, config: Config) -> str | None:
    """The line that tells the operator what to fix, or None for a failure not known here.

    The line never holds a secret of ``config`` (``redact``)."""
    chain = list(_causes(error))
    line: str | None = None
    if any(isinstance(cause, TelegramError) for cause in chain):
        line = _telegram(chain, config.telegram_base_url)
    elif any(isinstance(cause, _DATABASE_ERRORS) for cause in chain):
        line = _database(chain, config.database_url)
    elif config.mode == "webhook" and isinstance(error, OSError):
        line = _listening(error, config)
    return None if line is None else redact(line, config)


def unexpected(error: BaseException, config: Config) -> str:
    """The traceback of a failure ``explain`` does not know, every secret blanked."""
    return redact("".join(traceback.format_exception(error)), config)


def _telegram(chain: list[BaseException], base_url: str) -> str:
    refusals = [cause for cause in chain if isinstance(cause, InvalidToken)]
    if refusals:
        # The innermost one holds Telegram's answer; PTB's outer one holds the token.
        answer = _first_line(refusals[-1])
        line = f"Telegram at {base_url} refused the bot token ({answer}): set {TOKEN_SETTING}"
        if answer == "Not Found":  # a malformed token, or a URL that is no Bot API
            line += f", and check {BASE_URL_SETTING}"
        return line
    if any(isinstance(cause, TimedOut) for cause in chain):
        return (
            f"Telegram at {base_url} did not answer in time: check the network or "
            f"{BASE_URL_SETTING}"
        )
    failure = next((cause for cause in chain if isinstance(cause, NetworkError)), None)
    if failure is not None:
        reason = _os_reason(chain) or _first_line(failure).removeprefix("httpx.")
        return (
            f"cannot reach Telegram at {base_url} ({reason}): check the network or "
            f"{BASE_URL_SETTING}"
        )
    refusal = next(cause for cause in chain if isinstance(cause, TelegramError))
    return f"Telegram at {base_url} refused a request: {_first_line(refusal)}"


def _os_reason(chain: list[BaseException]) -> str | None:
    """The operating system's words for the innermost ``OSError`` of the chain."""
    for cause in reversed(chain):
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
    return None


def _database(chain: list[BaseException], database_url: str) -> str:
    url = make_url(normalize_url(database_url))
    if url.get_backend_name() == "sqlite":
        return _sqlite(chain, url.database or "")
    return _postgres(chain, url)


def _sqlite(chain: list[BaseException], database: str) -> str:
    path = Path(database).expanduser().absolute()
    if any(isinstance(cause, FileNotFoundError) for cause in chain):
        return (
            f"cannot create the SQLite database {path}: the directory {path.parent} does not "
            f"exist (create it, or fix {DATABASE_SETTING})"
        )
    reason = _first_line(chain[-1])
    if "readonly" in reason or "read-only" in reason:
        return (
            f"the SQLite database {path} is read-only: let this user write to it and to "
            f"{path.parent}, or fix {DATABASE_SETTING}"
        )
    if "unable to open database file" in reason:
        return (
            f"cannot open or create the SQLite database {path}: {path.parent} must exist and "
            f"this user must be able to write there (or fix {DATABASE_SETTING})"
        )
    return f"the SQLite database {path} failed: {reason}"


def _postgres(chain: list[BaseException], url: URL) -> str:
    server = f"{url.host or 'localhost'}:{url.port or 5432}"
    for cause in reversed(chain):
        if isinstance(cause, asyncpg.InvalidPasswordError):
            return (
                f'PostgreSQL at {server} refused the password of role "{url.username}": '
                f"fix it in {DATABASE_SETTING}"
            )
        if isinstance(cause, asyncpg.InvalidAuthorizationSpecificationError):
            return (
                f"PostgreSQL at {server} refused the connection: {_first_line(cause)} "
                f"(fix the user in {DATABASE_SETTING}, or create the role)"
            )
        if isinstance(cause, asyncpg.InvalidCatalogNameError):
            return (
                f'PostgreSQL at {server} has no database "{url.database}": create it '
                f"(createdb {url.database}) or fix the name in {DATABASE_SETTING}"
            )
        if isinstance(cause, socket.gaierror):
            return (
                f'cannot find the PostgreSQL host "{url.host}" ({cause.strerror}): '
                f"fix the host in {DATABASE_SETTING}"
            )
        if isinstance(cause, ConnectionRefusedError) or (
            # asyncpg joins the refusals of every address of a host into one OSError.
            isinstance(cause, OSError) and f"[Errno {errno.ECONNREFUSED}]" in str(cause)
        ):
            return (
                f"cannot connect to PostgreSQL at {server}: connection refused (is it running "
                f"and listening there? the host and port are in {DATABASE_SETTING})"
            )
        if isinstance(cause, TimeoutError):
            return (
                f"PostgreSQL at {server} did not answer in time: check the network, or the "
                f"host and port in {DATABASE_SETTING}"
            )
        if isinstance(cause, asyncpg.PostgresError):
            return f"PostgreSQL at {server} refused: {_first_line(cause)}"
    return f"cannot use PostgreSQL at {server}: {_first_line(chain[-1])}"


def _listening(error: OSError, config: Config) -> str | None:
    if error.errno not in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
        return None
    webhook = config.webhook
    return (
        f"cannot listen for Telegram's webhook on {webhook.listen}:{webhook.port} "
        f"({(error.strerror or '').lower()}): fix [telegram.webhook] listen or port"
    )
