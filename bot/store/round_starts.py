"""A round's start on the hot path's connections: one read, the service decides, the
writes.

The read brings what a start depends on: whether the table is open and its settings,
the chat's open round, the bank's balance, whether the house's account exists, the shoe
in use and whether the update was processed. The service's ``DecideStart`` turns that
into the new round (the engine decides; no rule is in SQL) or refuses. The write
(``round_writers.start_write``, as the general path's) claims the update, stores the
player, inserts the round and clears the table's pending start.
On SQLite it is one call on the writer's thread (``WriteBatches``); on PostgreSQL a
transaction through the bare driver.

Through the ORM's unit of work a start took many statements, each a hop to the driver's
thread, and the event loop's CPU with them: where rounds start often, starts were much
of the bot's load. A start this path does not
cover raises ``NotOnHotPath`` before anything is written: a shoe to retire or create (a
card game's first round, or one after its shoe was spent), or the house's account to
create (a table opened before opening created it). The caller then starts the round on
the general path.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.engine.round import Round, Transition
from bot.store.db import Database
from bot.store.errors import (
    AlreadyProcessed,
    TransientDatabaseError,
    transient_postgres_errors,
)
from bot.store.models import OPEN_PHASES_SQL
from bot.store.round_reads import NotOnHotPath
from bot.store.round_writers import Envelope, start_write
from bot.store.round_writes import describe_start
from bot.store.shoes import ShoeRecord
from bot.store.statements import Positional, run_asyncpg, run_sqlite

__all__ = ["DecideStart", "NotOnHotPath", "RoundStarts", "StartRead"]


@dataclass(frozen=True, slots=True)
class StartRead:
    """What a start depends on, as read in its transaction."""

    is_open: bool
    #: Only what the group's admins changed (the service applies its defaults).
    chat_settings: Mapping[str, Any]
    open_round_id: int | None
    bank: int
    house_account: bool
    shoe: ShoeRecord | None


#: The service's decision: the new round's transition (its round's id is 0) from what was
#: read and the time; raises the engine's ``GameError`` or ``NotOnHotPath``.
DecideStart = Callable[[StartRead, int], Transition[Round]]

_READ = f"""
SELECT c.id AS chat_id, c.is_open, CAST(c.settings AS text) AS settings,
       (SELECT r.id FROM rounds AS r
        WHERE r.chat_id = :chat_id AND r.{OPEN_PHASES_SQL}
        LIMIT 1) AS open_round_id,
       (SELECT a.balance FROM accounts AS a
        WHERE a.chat_id = :chat_id AND a.kind = 'bank' AND a.user_id = 0) AS bank,
       EXISTS (SELECT 1 FROM accounts AS a
               WHERE a.chat_id = :chat_id AND a.kind = 'house' AND a.user_id = 0)
           AS house_account,
       EXISTS (SELECT 1 FROM processed_updates AS p
               WHERE p.bot_id = :bot_id AND p.update_id = :update_id) AS seen,
       s.id AS shoe_id, s.decks AS shoe_decks, s.seed AS shoe_seed,
       s.commitment AS shoe_commitment, s.dealt AS shoe_dealt,
       s.fairness AS shoe_fairness, CAST(s.client_seeds AS text) AS shoe_client_seeds
FROM (SELECT 1 AS one) AS one
LEFT JOIN chats AS c ON c.id = :chat_id
LEFT JOIN shoes AS s ON s.chat_id = :chat_id AND s.replaced_at_ms IS NULL
"""
_POSTGRES_READ = Positional.of(_READ)


class RoundStarts:
    """Starts rounds on the hot path (see the module's docstring)."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id

    async def run(
        self,
        chat_id: int,
        decide: DecideStart,
        *,
        clock: Callable[[], int],
        update_id: int | None = None,
        user_row: Mapping[str, Any] | None = None,
    ) -> Transition[Round]:
        """Read, decide, write: the started round's transition, its round with its id.
        ``user_row`` (``users`` columns) is stored in the same transaction. Raises the
        engine's ``GameError`` (nothing is written), ``AlreadyProcessed``,
        ``RoundAlreadyOpen``, ``NotOnHotPath`` or ``TransientDatabaseError``."""
        params = {"chat_id": chat_id, "bot_id": self.bot_id, "update_id": update_id}
        batches = self.db.sqlite_batches
        if batches is not None:
            try:
                return await batches.run(
                    lambda connection: self._run_sqlite(connection, params, decide, clock, user_row)
                )
            except sqlite3.OperationalError as error:  # busy, or the disk
                raise TransientDatabaseError(str(error)) from error
        return await self._run_postgres(params, decide, clock, user_row)

    @staticmethod
    def _decide(
        row: Mapping[str, Any],
        params: Mapping[str, Any],
        decide: DecideStart,
        clock: Callable[[], int],
    ) -> tuple[Transition[Round], int]:
        if row["seen"]:
            raise AlreadyProcessed(params["update_id"])
        shoe = None
        if row["shoe_id"] is not None:
            fixed = row["shoe_client_seeds"]
            shoe = ShoeRecord(
                row["shoe_id"],
                row["chat_id"],
                row["shoe_decks"],
                bytes(row["shoe_seed"]),
                row["shoe_commitment"],
                row["shoe_dealt"],
                None,
                row["shoe_fairness"],
                None if fixed is None else tuple(json.loads(fixed)),
            )
        settings = row["settings"]
        read = StartRead(
            is_open=bool(row["is_open"]),
            chat_settings=json.loads(settings) if settings else {},
            open_round_id=row["open_round_id"],
            bank=row["bank"] or 0,
            house_account=bool(row["house_account"]),
            shoe=shoe,
        )
        # The clock is read once the start has its turn to write.
        now = clock()
        return decide(read, now), now

    # -- SQLite -------------------------------------------------------------------------

    def _run_sqlite(
        self,
        connection: sqlite3.Connection,
        params: dict[str, Any],
        decide: DecideStart,
        clock: Callable[[], int],
        user_row: Mapping[str, Any] | None,
    ) -> Transition[Round]:
        found = connection.execute(_READ, params).fetchone()
        row = dict(zip(found.keys(), found, strict=True))
        transition, now = self._decide(row, params, decide, clock)
        envelope = Envelope.of(self.bot_id, params["update_id"], user_row)
        write = start_write("sqlite", describe_start(transition.round, now), envelope)
        return _with_id(transition, run_sqlite(connection, write))

    # -- PostgreSQL ---------------------------------------------------------------------

    async def _run_postgres(
        self,
        params: dict[str, Any],
        decide: DecideStart,
        clock: Callable[[], int],
        user_row: Mapping[str, Any] | None,
    ) -> Transition[Round]:
        assert self.db.driver_pool is not None
        with transient_postgres_errors():
            async with self.db.driver_pool.connection() as driver, driver.transaction():
                found = await driver.fetchrow(_POSTGRES_READ.sql, *_POSTGRES_READ.arguments(params))
                assert found is not None  # the read selects from one row of its own
                transition, now = self._decide(dict(found), params, decide, clock)
                envelope = Envelope.of(self.bot_id, params["update_id"], user_row)
                row = describe_start(transition.round, now)
                round_id = await run_asyncpg(driver, start_write("postgresql", row, envelope))
                return _with_id(transition, round_id)


def _with_id(transition: Transition[Round], round_id: int | None) -> Transition[Round]:
    assert round_id is not None
    return dataclasses.replace(transition, round=dataclasses.replace(transition.round, id=round_id))
