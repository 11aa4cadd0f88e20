"""Database errors recognised by the name of the constraint they violate.

PostgreSQL (asyncpg) reports the name as an attribute of its error (the ledger's
triggers raise with the name as their constraint's). SQLite reports it only in its fixed
message format: ``CHECK constraint failed: NAME`` for a check, and ``UNIQUE constraint
failed: TABLE.COLUMN, ...`` for a unique key or index, whose name is then found in the
schema by its table and columns; the ledger's triggers abort with the name alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
from sqlalchemy import Index, PrimaryKeyConstraint, UniqueConstraint
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError

from bot.failures import causes
from bot.store.models import Base

#: A player's or the bank's balance would go below zero.
NOT_NEGATIVE = "ck_accounts_not_negative"
#: A second open round in a chat.
ONE_OPEN_ROUND = "uq_rounds_one_open_per_chat"
#: A ledger transaction whose postings do not sum to zero (migration 0021).
SUM_TO_ZERO = "postings_sum_to_zero"
#: A balance changed (or an account opened) otherwise than by postings.
BALANCE_IS_POSTED = "accounts_balance_is_posted"
#: SQLite: a posting written apart from its transaction's legs, or legs set again.
WITH_TRANSACTION = "postings_written_with_transaction"
#: A posting updated or deleted.
APPEND_ONLY = "postings_append_only"
_LEDGER_TRIGGERS = frozenset({SUM_TO_ZERO, BALANCE_IS_POSTED, WITH_TRANSACTION, APPEND_ONLY})

#: PostgreSQL's serialization failure, deadlock and statement timeout: worth trying again.
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "57014"})


class TransientDatabaseError(Exception):
    """A lost connection, a deadlock or a timeout on a path that talks to the driver
    directly: nothing was written, and the command may be tried again."""


class AlreadyProcessed(Exception):
    """The update was applied before (by this worker or another); nothing was written."""


class StaleRound(Exception):
    """The round changed since it was read (its version moved on): re-read and retry."""


class RoundAlreadyOpen(Exception):
    """The chat has an open round already (the unique index let one start through)."""


@contextmanager
def transient_postgres_errors() -> Iterator[None]:
    """On a path that talks to asyncpg directly: a lost connection, a deadlock or a
    timeout raised as ``TransientDatabaseError`` (worth trying again), any other error
    as it is."""
    try:
        yield
    except asyncpg.PostgresError as error:
        if error.sqlstate in TRANSIENT_SQLSTATES:
            raise TransientDatabaseError(error.sqlstate) from error
        raise
    except (asyncpg.InterfaceError, OSError) as error:
        raise TransientDatabaseError("connection lost") from error


#: SQLSTATE classes of a server that cannot take the work now: a lost connection (08),
#: insufficient resources such as a full disk (53), a server shutting down or starting
#: (57), and a read-only transaction (25006: a standby, or writes turned off).
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53", "57")
_READ_ONLY_SQLSTATE = "25006"


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) says the database cannot be reached or
    refuses writes now (down, unreachable, read-only, its disk full), rather than that
    the work was wrong: nothing was written, and the same command may go through later.
    Not for errors of other services (a caller that talks to them checks those first: a
    refused connection looks the same)."""
    for cause in causes(error):
        if is_transient(cause) or isinstance(cause, OSError | sqlite3.OperationalError):
            return True
        if isinstance(cause, asyncpg.InterfaceError):
            return True
        sqlstate = getattr(cause, "sqlstate", None)
        if isinstance(sqlstate, str) and (
            sqlstate.startswith(_UNAVAILABLE_SQLSTATE_CLASSES) or sqlstate == _READ_ONLY_SQLSTATE
        ):
            return True
    return False


def is_transient(error: BaseException) -> bool:
    """True for a lost connection, a busy database, a deadlock or a timeout: worth trying
    again, not voiding a round for."""
    if isinstance(error, OperationalError | InterfaceError | TransientDatabaseError):
        return True
    if not isinstance(error, DBAPIError):
        return False
    return error.connection_invalidated or (
        getattr(error.orig, "sqlstate", None) in TRANSIENT_SQLSTATES
    )


_SQLITE_CHECK = "CHECK constraint failed: "
_SQLITE_UNIQUE = "UNIQUE constraint failed: "


def _unique_keys() -> dict[tuple[str, frozenset[str]], str]:
    keys: dict[tuple[str, frozenset[str]], str] = {}
    for table in Base.metadata.tables.values():
        for constraint in table.constraints:
            if isinstance(constraint, UniqueConstraint | PrimaryKeyConstraint):
                columns = frozenset(column.name for column in constraint.columns)
                keys[(table.name, columns)] = str(constraint.name)
        for index in table.indexes:
            if isinstance(index, Index) and index.unique:
                columns = frozenset(column.name for column in index.columns)
                keys[(table.name, columns)] = str(index.name)
    return keys


_UNIQUE_KEYS = _unique_keys()


def violated_constraint(error: BaseException) -> str | None:
    """The name of the constraint ``error`` violates, if the database says: ``error`` is
    SQLAlchemy's ``IntegrityError`` or the driver's own (asyncpg's, ``sqlite3``'s)."""
    driver_error = error.orig if isinstance(error, IntegrityError) else error
    for candidate in (driver_error, getattr(driver_error, "__cause__", None)):
        name = getattr(candidate, "constraint_name", None)
        if isinstance(name, str):
            return name
    message = str(driver_error)
    if message in _LEDGER_TRIGGERS:
        return message
    if message.startswith(_SQLITE_CHECK):
        return message.removeprefix(_SQLITE_CHECK).strip()
    if message.startswith(_SQLITE_UNIQUE):
        qualified = [part.strip() for part in message.removeprefix(_SQLITE_UNIQUE).split(",")]
        tables = {part.split(".")[0] for part in qualified}
        columns = frozenset(part.split(".")[-1] for part in qualified)
        if len(tables) == 1:
            return _UNIQUE_KEYS.get((tables.pop(), columns))
    return None
