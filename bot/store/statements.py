"""Statements written once in ``:name`` style and run on any of the store's connections:
``sqlite3``'s (the writer's thread), asyncpg's (the hot path's pool) or a unit of work's
SQLAlchemy session.

A round step's write (``bot.store.round_writers``) is a list of ``Statement``: each says
what it must have written for the step to stand (one row, or a returned flag) and which
of the database's refusals mean what. The three runners below differ only in how they
hand a statement to their driver.

Written by hand: SQLAlchemy's ``text()`` runs on the session only, and the hot path runs
on the bare drivers (a statement through the ORM's machinery costs several times its
own work there).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

import asyncpg
from sqlalchemy import CursorResult, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.errors import violated_constraint

Params = dict[str, Any]
Refusal = Callable[[], Exception]


@dataclass(frozen=True, slots=True)
class Positional:
    """A statement in asyncpg's ``$n`` style, with its parameters' names in order."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, sql: str) -> Positional:
        """Number the statement's ``:name`` parameters (a name used twice is one)."""
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        return cls(_PARAMETER.sub(number, sql), tuple(names))

    def arguments(self, values: Mapping[str, Any]) -> list[Any]:
        """The values in the statement's order."""
        return [values[name] for name in self.names]


_PARAMETER = re.compile(r"(?<![:\w]):([a-z_]+)")
_positional = functools.lru_cache(maxsize=512)(Positional.of)
_text = functools.lru_cache(maxsize=512)(text)


_NO_REFUSALS: Mapping[str, Refusal] = MappingProxyType({})


class Statement:
    """One statement of a write, with its parameters (a list: once per row).

    A plain class, not a frozen dataclass: a bet builds several, and a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``."""

    __slots__ = ("expect_columns", "expect_one", "params", "refusals", "returns", "sql")

    def __init__(
        self,
        sql: str,
        params: Params | list[Params],
        *,
        expect_one: Refusal | None = None,
        expect_columns: tuple[tuple[str, Refusal], ...] = (),
        refusals: Mapping[str, Refusal] = _NO_REFUSALS,
        returns: bool = False,
    ) -> None:
        self.sql = sql
        self.params = params
        #: Raised unless the statement wrote (or returned) exactly one row.
        self.expect_one = expect_one
        #: For a statement that returns one row: raised, in order, for a column not 1.
        self.expect_columns = expect_columns
        #: What the database's refusal by the named constraint means.
        self.refusals = refusals
        #: The statement returns one value the runner hands back (an inserted row's id).
        self.returns = returns

    @property
    def fetches(self) -> bool:
        """Whether the statement's row is read (else its count of rows written)."""
        return self.returns or bool(self.expect_columns)

    def check(self, row: Any, count: int) -> Any:
        """Raise what the statement's outcome means; its returned value, if any."""
        if self.expect_one is not None and count != 1:
            raise self.expect_one()
        for column, refusal in self.expect_columns:
            if row[column] != 1:
                raise refusal()
        if not self.returns or row is None:
            return None
        return next(iter(row.values())) if isinstance(row, Mapping) else row[0]

    def refused(self, error: Exception) -> Exception | None:
        """What a database error means for this statement, if it is one of its refusals."""
        refusal = self.refusals.get(violated_constraint(error) or "") if self.refusals else None
        return None if refusal is None else refusal()


def run_sqlite(connection: sqlite3.Connection, statements: Sequence[Statement]) -> Any:
    """Run ``statements`` on a ``sqlite3`` connection, in its transaction; the value the
    statement that ``returns`` returned."""
    value = None
    for statement in statements:
        try:
            params = statement.params
            if isinstance(params, list):
                # One row (most steps' bet or transaction): a plain execute costs less.
                if len(params) == 1:
                    cursor = connection.execute(statement.sql, params[0])
                else:
                    cursor = connection.executemany(statement.sql, params)
            else:
                cursor = connection.execute(statement.sql, params)
        except sqlite3.IntegrityError as error:
            refusal = statement.refused(error)
            if refusal is None:
                raise
            raise refusal from None
        if statement.fetches or statement.expect_one is not None:
            # A statement that returns rows has written only once they are read.
            returning = cursor.description is not None
            row = cursor.fetchone() if returning else None
            count = (0 if row is None else 1) if returning else cursor.rowcount
            found = statement.check(row, count)
            value = found if statement.returns else value
    return value


async def run_asyncpg(driver: Any, statements: Sequence[Statement]) -> Any:
    """Run ``statements`` on an asyncpg connection; the value the statement that
    ``returns`` returned. A statement checked for one row says so by returning it."""
    value = None
    for statement in statements:
        positional = _positional(statement.sql)
        try:
            if isinstance(statement.params, list):
                await driver.executemany(
                    positional.sql, [positional.arguments(row) for row in statement.params]
                )
                continue
            arguments = positional.arguments(statement.params)
            if not statement.fetches and statement.expect_one is None:
                await driver.execute(positional.sql, *arguments)
                continue
            row = await driver.fetchrow(positional.sql, *arguments)
        except asyncpg.IntegrityConstraintViolationError as error:
            refusal = statement.refused(error)
            if refusal is None:
                raise
            raise refusal from None
        found = statement.check(row, 0 if row is None else 1)
        value = found if statement.returns else value
    return value


async def run_session(session: AsyncSession, statements: Sequence[Statement]) -> Any:
    """Run ``statements`` in a unit of work's transaction; the value the statement that
    ``returns`` returned."""
    value = None
    for statement in statements:
        try:
            result = cast(
                CursorResult[Any],
                await session.execute(_text(statement.sql), statement.params),
            )
        except IntegrityError as error:
            refusal = statement.refused(error)
            if refusal is None:
                raise
            raise refusal from None
        if statement.fetches or statement.expect_one is not None:
            row = result.mappings().first() if result.returns_rows else None
            count = (1 if row is not None else 0) if result.returns_rows else result.rowcount
            found = statement.check(row, count)
            value = found if statement.returns else value
    return value
