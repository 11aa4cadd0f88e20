"""The hot path: a bid, a bet, a grab or a deadline in two round trips.

One read brings everything the engine needs (``bot.store.round_sql`` says what); the
engine decides; one write stores what changed, as ``bot.store.round_writes`` describes
the step and ``bot.store.round_writers`` writes it (the general path runs the same
statements), with the processed update and the player's row. On SQLite the whole
transaction is one call on the writer's thread (``SqliteThread``).

On PostgreSQL the two are two statements through the bare driver on a pooled connection,
and a player's command runs them without BEGIN and COMMIT (two round trips, not four):
the read is one statement, so one snapshot; the write is one statement, so atomic, and
every part of it is conditioned on the compare-and-set of the version read. A command
decided on a read that another writer has since overtaken changes nothing and is tried
again (``StaleRound``), as in a transaction. A deadline's advance is such a command too:
a second worker applying the same deadline at once writes nothing (the compare-and-set)
and, tried again, finds it not due. Only a deadline that deals keeps a transaction: its
write is checked against the shoe once the rest of it is written, so it reads the round
again holding it (``FOR UPDATE SKIP LOCKED``: another worker's sweep passes over it) and
writes in a transaction that the shoe's refusal rolls back. Players' grabs on one round
that come while one of them is written are written together next
(``bot.store.gatherings``): one read of the round whole, the engine given each grab in
turn, one compare-and-set write of them all, so ten grabs cost two writes, not ten.

A step this path does not cover raises ``NotOnHotPath`` before anything is written (a
re-deal, which starts the next round at once, or a posting to an account not created
yet); the caller then runs the command on the general path. A step that fails otherwise
(a bug, a row the database refuses) raises ``StepFailed`` naming its round, which the
caller voids: never the general path, where the same bug would be hidden or repeated.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bot.engine.errors import GameError
from bot.engine.round import Round, RoundOrSeat, Transition, merge_postings
from bot.engine.settings import Settings
from bot.store import round_sql as sql
from bot.store.db import Database
from bot.store.errors import (
    AlreadyProcessed,
    StaleRound,
    TransientDatabaseError,
    database_unavailable,
    transient_postgres_errors,
)
from bot.store.gatherings import Gathering
from bot.store.round_reads import NotOnHotPath, RoundRead, StepFailed, StepInput, parse_read
from bot.store.round_writers import Envelope, postgres_write, sqlite_write
from bot.store.round_writes import RoundWrite, UnknownAccount, describe
from bot.store.statements import run_asyncpg, run_sqlite

__all__ = [
    "Applied",
    "Decide",
    "Located",
    "NotOnHotPath",
    "RoundCommands",
    "RoundOnBoard",
    "StepFailed",
]

#: What a command asks of the engine, given what it decides on; the engine's answer.
Decide = Callable[[StepInput], Transition[RoundOrSeat]]

#: Distinct round settings kept parsed (groups rarely change theirs).
_SETTINGS_KEPT = 1024


@dataclass(frozen=True, slots=True)
class Located:
    """Which round a command is about: the chat's open round, or a round by id."""

    chat_id: int | None = None
    round_id: int | None = None
    #: A deadline: one that deals is written holding the round, and passes over a round
    #: another worker holds (PostgreSQL only).
    skip_locked: bool = False


@dataclass(frozen=True, slots=True)
class Applied:
    """What the hot path did: the transition it stored, and when the table's next round
    starts if this ended the round."""

    transition: Transition[RoundOrSeat]
    next_round_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RoundOnBoard:
    """A round as stored, whole, and the message id of its board as recorded in the same
    read (``None``: not posted yet; ``BOARD_REFUSED``: Telegram refused it)."""

    round: Round
    board_message_id: int | None


@dataclass(frozen=True, slots=True)
class _Job:
    """One command: its parameters and what decides."""

    by_chat: bool
    skip_locked: bool
    params: dict[str, Any]
    user_row: Mapping[str, Any] | None
    clock: Callable[[], int]
    decide: Decide


class _DealsHoldingTheRound(NotOnHotPath):
    """A deadline's step deals: to be read again holding the round and written in a
    transaction (``RoundCommands._run_postgres``)."""


@contextmanager
def failing_as_step(round_id: int) -> Iterator[None]:
    """The step of a round the read found: a failure that is not the rules' refusal, a
    race to run again, a case for the general path or the database's unavailability is
    ``StepFailed`` (the caller voids the round: a step that fails would fail again)."""
    try:
        # The driver's lost connections, deadlocks and timeouts as they are told apart
        # outside (``transient_postgres_errors``): tried again, not voided for.
        with transient_postgres_errors():
            yield
    except (GameError, StaleRound, AlreadyProcessed, NotOnHotPath, TransientDatabaseError):
        raise
    except Exception as error:
        if database_unavailable(error):
            raise
        raise StepFailed(round_id) from error


class RoundCommands:
    """Runs a round command on the hot path (see the module's docstring)."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id
        self._settings: dict[str, Settings] = {}
        #: Players' joinable steps on one chat's round, written together (PostgreSQL).
        self.joined: Gathering[_Job, Applied | None] = Gathering(
            self._run_postgres, self._postgres_joined
        )

    def settings_of(self, stored: str) -> Settings:
        """A round's settings, parsed once per distinct stored text (every command of a
        round reads the same)."""
        found = self._settings.get(stored)
        if found is None:
            if len(self._settings) >= _SETTINGS_KEPT:
                self._settings.clear()
            found = self._settings[stored] = Settings.from_dict(json.loads(stored))
        return found

    def _read(self, row: Any, job: _Job) -> RoundRead:
        read = parse_read(row, job.params["user_id"], self.settings_of)
        if read.seen:
            raise AlreadyProcessed(job.params["update_id"])
        return read

    def _decide(self, read: RoundRead, job: _Job) -> tuple[Transition[RoundOrSeat], RoundWrite]:
        # The clock is read once the command has its turn to write.
        now = job.clock()
        transition = job.decide(StepInput(read.round, read.free_chips, read.player_seeds, now))
        return transition, self._described(read, transition, now)

    @staticmethod
    def _described(read: RoundRead, transition: Transition[RoundOrSeat], now: int) -> RoundWrite:
        """The write of ``transition`` of the round as read; ``NotOnHotPath`` for a step
        this path does not cover."""
        try:
            write = describe(
                read.round, transition, now, accounts=read.accounts, table_open=read.table_open
            )
        except UnknownAccount as missing:
            raise NotOnHotPath(f"no account {missing} in the read") from None
        if write.redeal:
            raise NotOnHotPath("a re-deal starts the next round at once")
        return write

    async def run(
        self,
        where: Located,
        decide: Decide,
        *,
        clock: Callable[[], int],
        user_id: int | None = None,
        update_id: int | None = None,
        user_row: Mapping[str, Any] | None = None,
        joinable: bool = False,
    ) -> Applied | None:
        """Read, decide, write; ``None`` when there is no such round (or, skipping locked
        rows, another worker holds it). ``user_row`` (``users`` columns) is stored with
        the write, so only if the command changed the round (as on the general path).
        ``joinable``: a player's step by chat that reads nothing of the player's but the
        round (a grab), which PostgreSQL may write together with others of its round
        (``_postgres_joined``). Raises the engine's
        ``GameError`` (nothing is written), ``StaleRound``, ``AlreadyProcessed``,
        ``NotOnHotPath``, ``TransientDatabaseError`` or ``StepFailed``."""
        job = _Job(
            by_chat=where.chat_id is not None,
            skip_locked=where.skip_locked,
            params={
                "chat_id": where.chat_id,
                "round_id": where.round_id,
                "user_id": user_id,
                "bot_id": self.bot_id,
                "update_id": update_id,
            },
            user_row=user_row,
            clock=clock,
            decide=decide,
        )
        batches = self.db.sqlite_batches
        if batches is not None:
            try:
                return await batches.run(lambda connection: self._run_sqlite(connection, job))
            except sqlite3.OperationalError as error:  # busy, or the disk
                raise TransientDatabaseError(str(error)) from error
        if joinable and where.chat_id is not None:
            return await self.joined.run(where.chat_id, job)
        return await self._run_postgres(job)

    async def whole(self, round_id: int) -> Round | None:
        """A round as stored, with every bet and grab, in one read that locks nothing (what
        is shown of it: the general path's load takes three statements)."""
        found = await self.on_board(round_id)
        return None if found is None else found.round

    async def on_board(self, round_id: int) -> RoundOnBoard | None:
        """A round whole, as ``whole`` reads it, with its board's message id: what an edit
        of its board needs, in one statement."""
        params = {**sql.NOBODY, "round_id": round_id}
        row = await self.db.read_one(sql.SQLITE_WHOLE, sql.POSTGRES_WHOLE, params)
        if row is None:
            return None
        whole = parse_read(row, None, self.settings_of).round
        assert isinstance(whole, Round)  # a read by id is whole
        return RoundOnBoard(whole, row["board_message_id"])

    # -- PostgreSQL ---------------------------------------------------------------------

    async def _run_postgres(self, job: _Job) -> Applied | None:
        assert self.db.driver_pool is not None
        with transient_postgres_errors():
            async with self.db.driver_pool.connection() as driver:
                try:
                    return await self._postgres_command(driver, job)
                except _DealsHoldingTheRound:
                    async with driver.transaction():
                        return await self._postgres_command(driver, job, holding=True)

    async def _postgres_command(
        self, driver: Any, job: _Job, *, holding: bool = False
    ) -> Applied | None:
        """The read and the write; ``holding``: in a transaction, the read holding the
        round (a deadline that deals)."""
        update_id = job.params["update_id"]
        read_statement = sql.POSTGRES_READS[(job.by_chat, holding)]
        row = await driver.fetchrow(read_statement.sql, *read_statement.arguments(job.params))
        if row is None:
            seen = sql.POSTGRES_SEEN
            if update_id is not None and await driver.fetchval(
                seen.sql, *seen.arguments(job.params)
            ):
                raise AlreadyProcessed(update_id)  # and the round has ended since
            return None
        read = self._read(row, job)
        with failing_as_step(read.round.id):
            return await self._postgres_step(driver, job, read, holding)

    async def _postgres_step(
        self, driver: Any, job: _Job, read: RoundRead, holding: bool
    ) -> Applied:
        transition, write = self._decide(read, job)
        if write.shoe is not None and not holding:
            # A write outside a transaction could not be undone if the shoe's check
            # failed: a deadline deals in one; a command (none deals today) would go
            # the general path.
            if job.skip_locked:
                raise _DealsHoldingTheRound("a deadline deals")
            raise NotOnHotPath("a deal outside a deadline's transaction")
        envelope = Envelope.of(self.bot_id, job.params["update_id"], job.user_row)
        await run_asyncpg(driver, postgres_write(write, envelope))
        return Applied(transition, write.next_round_at)

    async def _postgres_joined(self, jobs: list[_Job]) -> list[Applied | Exception | None]:
        """Joinable steps of players on one chat's round in two round trips, as one:
        the round read whole, the engine given each step in turn on the round as the step
        before left it, and one compare-and-set write of them all, which claims every
        update and stores every player. Each job's outcome: its ``Applied``, or the
        engine's refusal, or ``AlreadyProcessed``; a failure of the read or the write is
        every stepped job's (tried again, or on the general path, each on its own)."""
        if len(jobs) == 1:
            return [await _outcome(self._run_postgres(jobs[0]))]
        assert self.db.driver_pool is not None
        with transient_postgres_errors():
            async with self.db.driver_pool.connection() as driver:
                read_statement = sql.POSTGRES_JOINED_READ
                params = {
                    **jobs[0].params,
                    "user_id": None,  # the round whole: no one player's seat
                    "update_ids": [job.params["update_id"] for job in jobs],
                }
                row: Any = await driver.fetchrow(
                    read_statement.sql, *read_statement.arguments(params)
                )
                if row is not None:
                    read = parse_read(row, None, self.settings_of)
                    with failing_as_step(read.round.id):
                        return await self._postgres_steps(driver, jobs, read, set(row["seen"]))
        # The round ended meanwhile: each command finds out on its own.
        return [await _outcome(self._run_postgres(job)) for job in jobs]

    async def _postgres_steps(
        self, driver: Any, jobs: list[_Job], read: RoundRead, seen: set[int]
    ) -> list[Applied | Exception | None]:
        now = jobs[0].clock()
        outcomes: list[Applied | Exception | None] = []
        state = read.round
        stepped: list[tuple[int, _Job, Transition[RoundOrSeat]]] = []
        for job in jobs:
            update_id = job.params["update_id"]
            if update_id in seen:
                outcomes.append(AlreadyProcessed(update_id))
                continue
            try:
                step = job.decide(StepInput(state, read.free_chips, read.player_seeds, now))
            except GameError as refusal:
                outcomes.append(refusal)
                continue
            state = step.round
            stepped.append((len(outcomes), job, step))
            outcomes.append(None)
        if not stepped:
            return outcomes
        events = tuple(event for _, _, step in stepped for event in step.events)
        postings = merge_postings(p for _, _, step in stepped for p in step.postings)
        write = self._described(read, Transition(state, events, postings), now)
        if write.shoe is not None:
            raise NotOnHotPath("a deal outside a deadline's transaction")
        envelope = Envelope(
            self.bot_id,
            [
                job.params["update_id"]
                for _, job, _ in stepped
                if job.params["update_id"] is not None
            ],
            [job.user_row for _, job, _ in stepped if job.user_row is not None],
        )
        await run_asyncpg(driver, postgres_write(write, envelope))
        for place, _, step in stepped:
            outcomes[place] = Applied(step)
        last, _, step = stepped[-1]
        outcomes[last] = Applied(step, write.next_round_at)
        return outcomes

    # -- SQLite -------------------------------------------------------------------------

    def _run_sqlite(self, connection: sqlite3.Connection, job: _Job) -> Applied | None:
        update_id = job.params["update_id"]
        row = connection.execute(sql.SQLITE_READS[job.by_chat], job.params).fetchone()
        if row is None:
            if update_id is not None and connection.execute(sql.SEEN, job.params).fetchone():
                raise AlreadyProcessed(update_id)  # and the round has ended since
            return None
        # As a dict: ``sqlite3.Row`` finds a column by name by a case-blind search of them
        # all, and the parsing looks up some forty (a tenth of a bet's Python).
        read = self._read(dict(zip(row.keys(), row, strict=True)), job)
        with failing_as_step(read.round.id):
            transition, write = self._decide(read, job)
            # The player is stored only with a round to write (a refusal stores nobody).
            envelope = Envelope.of(self.bot_id, update_id, job.user_row)
            run_sqlite(connection, sqlite_write(write, envelope))
            return Applied(transition, write.next_round_at)


async def _outcome(command: Awaitable[Applied | None]) -> Applied | Exception | None:
    """What a command gave: its result, or the exception it raised."""
    try:
        return await command
    except Exception as error:
        return error
