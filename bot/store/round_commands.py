"""The hot path: a bid, a bet, a grab or a deadline's advance in two round trips.

One read brings everything the engine needs about one player: the round row (locked on
PostgreSQL), the player's own bet and grab, the round's bet and grab counts, the
player's free chips and the ids of the accounts the command may move chips between,
and whether the update was processed before. The engine decides. One write stores what
changed: the compare-and-set on the round's version, the bet, bid or grab, the ledger
transaction with its postings and balances, and the processed update. On PostgreSQL
the write is one statement (data-modifying CTEs); on SQLite the whole transaction is one
call on the writer's thread (``SqliteWriter``). Statements are built once.

A step this path does not cover raises ``NotOnHotPath`` before anything is written:
settling, dealing cards or voiding a round with bets needs every bet (the engine says
so with ``PartialRound``), an ending round starts the next one, and a posting to an
account the read did not bring (one not created yet) needs the ledger's general path.
The caller then runs the command on the general path, which loads the round whole.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg

from bot.engine.errors import RuleViolation
from bot.engine.round import (
    AccountKind,
    AccountRef,
    Bet,
    BidPlaced,
    Grab,
    PartialRound,
    Phase,
    Round,
    RoundStarted,
    ShoeRef,
    Tally,
    Transition,
    VoidReason,
    available,
    held,
)
from bot.engine.settings import Settings
from bot.store.db import Database
from bot.store.errors import (
    NOT_NEGATIVE,
    TRANSIENT_SQLSTATES,
    TransientDatabaseError,
    sqlite_check_failed,
)
from bot.store.rounds import StaleRound

#: What a command asks of the engine: the round (partial: the player's own bet and grab,
#: and the counts), the player's free chips and the time; the engine's answer.
Decide = Callable[[Round, int, int], Transition]


class NotOnHotPath(Exception):
    """The command needs the general path (see the module's docstring); nothing was
    written."""


class AlreadyProcessed(Exception):
    """The update was applied before (by this worker or another); nothing was written."""


@dataclass(frozen=True, slots=True)
class Located:
    """Which round a command is about: the chat's open round, or a round by id."""

    chat_id: int | None = None
    round_id: int | None = None
    #: A deadline passes over a round another worker holds (PostgreSQL only).
    skip_locked: bool = False


@dataclass(frozen=True, slots=True)
class Applied:
    """What the hot path did: the round before (partial) and the transition it stored."""

    before: Round
    transition: Transition


_OPEN = "('bidding', 'betting', 'grabbing')"
#: Distinct round settings kept parsed (groups rarely change theirs).
_SETTINGS_KEPT = 1024

_READ_COLUMNS = """
SELECT r.id, r.chat_id, r.phase, r.version, r.deadline_ms, r.commitment, r.seed,
       CAST(r.settings AS text) AS settings, r.high_bidder, r.high_bid, r.bid_hold,
       r.dealer_id, r.pool, r.shares,
       r.void_reason, r.shoe_id, r.deal_offset, r.bet_count, r.grab_count,
       (SELECT s.seed FROM shoes AS s WHERE s.id = r.shoe_id) AS shoe_seed,
       b.amount AS bet_amount, b.hold AS bet_hold,
       g.amount AS grab_amount, g.auto AS grab_auto,
       av.id AS available_id, av.balance AS free_chips, hd.id AS held_id,
       bav.id AS bidder_available_id, bhd.id AS bidder_held_id,
       EXISTS (SELECT 1 FROM processed_updates AS p
               WHERE p.bot_id = :bot_id AND p.update_id = :update_id) AS seen
FROM rounds AS r
LEFT JOIN bets AS b ON b.round_id = r.id AND b.user_id = :user_id
LEFT JOIN grabs AS g ON g.round_id = r.id AND g.user_id = :user_id
LEFT JOIN accounts AS av
       ON av.chat_id = r.chat_id AND av.kind = 'available' AND av.user_id = :user_id
LEFT JOIN accounts AS hd
       ON hd.chat_id = r.chat_id AND hd.kind = 'held' AND hd.user_id = :user_id
LEFT JOIN accounts AS bav
       ON bav.chat_id = r.chat_id AND bav.kind = 'available' AND bav.user_id = r.high_bidder
LEFT JOIN accounts AS bhd
       ON bhd.chat_id = r.chat_id AND bhd.kind = 'held' AND bhd.user_id = r.high_bidder
"""


@dataclass(frozen=True, slots=True)
class _Positional:
    """A statement in asyncpg's ``$n`` style, with its parameters' names in order."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, sql: str) -> _Positional:
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


def _read(where: str, lock: str) -> _Positional:
    return _Positional.of(f"{_READ_COLUMNS} WHERE {where} {lock}")


_BY_CHAT = f"r.chat_id = :chat_id AND r.phase IN {_OPEN}"
_BY_ID = "r.id = :round_id"
#: PostgreSQL's read by (by chat, skip locked).
_POSTGRES_READS = {
    (True, False): _read(_BY_CHAT, "FOR UPDATE OF r"),
    (False, False): _read(_BY_ID, "FOR UPDATE OF r"),
    (False, True): _read(_BY_ID, "FOR UPDATE OF r SKIP LOCKED"),
}
#: SQLite's by chat or not: BEGIN IMMEDIATE already made this the only writer.
_SQLITE_READS = {
    True: f"{_READ_COLUMNS} WHERE {_BY_CHAT}",
    False: f"{_READ_COLUMNS} WHERE {_BY_ID}",
}


def _round_values(state: Round) -> dict[str, Any]:
    return {
        "phase": state.phase.value,
        "version": state.version,
        "deadline_ms": state.deadline_ms,
        "high_bidder": state.high_bidder,
        "high_bid": state.high_bid,
        "bid_hold": state.bid_hold,
        "dealer_id": state.dealer_id,
        "pool": state.pool,
        "shares": state.shares,
        "bet_count": state.bet_count,
        "grab_count": state.grab_count,
    }


def _assignments(columns: tuple[str, ...], shares: str) -> str:
    # Only the columns that changed: an index whose columns are not assigned is not
    # touched (SQLite), and the update can stay on the row's page (PostgreSQL).
    return ", ".join(
        f"shares = {shares}" if column == "shares" else f"{column} = :{column}"
        for column in columns
    )


@functools.cache
def _postgres_write(columns: tuple[str, ...]) -> _Positional:
    """The whole write in one statement, for a step that changes ``columns``."""
    return _Positional.of(
        _POSTGRES_WRITE.replace("{set}", _assignments(columns, "CAST(:shares AS json)"))
    )


@functools.cache
def _sqlite_compare_and_set(columns: tuple[str, ...]) -> str:
    return (
        f"UPDATE rounds SET {_assignments(columns, ':shares')}"
        " WHERE id = :round_id AND version = :old_version"
    )


_POSTGRES_WRITE = """
WITH cas AS (
    UPDATE rounds SET {set}
    WHERE id = :round_id AND version = :old_version
    RETURNING id
), gone AS (
    DELETE FROM bets
    WHERE round_id IN (SELECT id FROM cas) AND user_id = ANY(CAST(:gone AS bigint[]))
), placed AS (
    INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms)
    SELECT cas.id, t.user_id, t.amount, t.hold, t.position, :now
    FROM cas, unnest(CAST(:bet_users AS bigint[]), CAST(:bet_amounts AS bigint[]),
                     CAST(:bet_holds AS bigint[]), CAST(:bet_positions AS integer[]))
         AS t(user_id, amount, hold, position)
    ON CONFLICT (round_id, user_id) DO UPDATE
    SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms
), grabbed AS (
    INSERT INTO grabs (round_id, user_id, amount, position, auto)
    SELECT cas.id, t.user_id, t.amount, t.position, false
    FROM cas, unnest(CAST(:grab_users AS bigint[]), CAST(:grab_amounts AS bigint[]),
                     CAST(:grab_positions AS integer[])) AS t(user_id, amount, position)
), bid AS (
    INSERT INTO bids (round_id, user_id, amount, placed_at_ms)
    SELECT cas.id, t.user_id, t.amount, :now
    FROM cas, unnest(CAST(:bid_users AS bigint[]), CAST(:bid_amounts AS bigint[]))
         AS t(user_id, amount)
), tx AS (
    INSERT INTO ledger_transactions (chat_id, kind, round_id, actor_id, memo, created_at_ms)
    SELECT :chat_id, CAST(:tx_kind AS varchar), cas.id, NULL, '', :now
    FROM cas WHERE CAST(:tx_kind AS varchar) IS NOT NULL
    RETURNING id
), legs AS (
    INSERT INTO postings (transaction_id, account_id, amount)
    SELECT tx.id, t.account_id, t.amount
    FROM tx, unnest(CAST(:accounts AS bigint[]), CAST(:amounts AS bigint[]))
         AS t(account_id, amount)
), moved AS (
    UPDATE accounts SET balance = accounts.balance + t.amount
    FROM cas, unnest(CAST(:accounts AS bigint[]), CAST(:amounts AS bigint[]))
         AS t(account_id, amount)
    WHERE accounts.id = t.account_id
), claimed AS (
    INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)
    SELECT :bot_id, CAST(:update_id AS bigint), :now
    FROM cas WHERE CAST(:update_id AS bigint) IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM cas) AS swapped, (SELECT count(*) FROM claimed) AS claimed
"""

#: Whether an update was processed, when the read found no round to say so.
_SEEN = "SELECT 1 FROM processed_updates WHERE bot_id = :bot_id AND update_id = :update_id"
_POSTGRES_SEEN = _Positional.of(_SEEN)

#: A user the bot has not stored as they are (their first command, or a new name).
_TOUCH_USER_SQL = (
    "INSERT INTO users (id, username, first_name, last_name, seen_at_ms)"
    " VALUES (:id, :username, :first_name, :last_name, :seen_at_ms)"
    " ON CONFLICT (id) DO UPDATE SET username = excluded.username,"
    " first_name = excluded.first_name, last_name = excluded.last_name,"
    " seen_at_ms = excluded.seen_at_ms"
)

_POSTGRES_TOUCH_USER = _Positional.of(_TOUCH_USER_SQL)

_SQLITE_DELETE_BET = "DELETE FROM bets WHERE round_id = :round_id AND user_id = :user_id"
_SQLITE_PLACE_BET = (
    "INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms)"
    " VALUES (:round_id, :user_id, :amount, :hold, :position, :now)"
    " ON CONFLICT (round_id, user_id) DO UPDATE"
    " SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms"
)
_SQLITE_GRAB = (
    "INSERT INTO grabs (round_id, user_id, amount, position, auto)"
    " VALUES (:round_id, :user_id, :amount, :position, 0)"
)
_SQLITE_BID = (
    "INSERT INTO bids (round_id, user_id, amount, placed_at_ms)"
    " VALUES (:round_id, :user_id, :amount, :now)"
)
_SQLITE_TRANSACTION = (
    "INSERT INTO ledger_transactions (chat_id, kind, round_id, actor_id, memo, created_at_ms)"
    " VALUES (:chat_id, :tx_kind, :round_id, NULL, '', :now) RETURNING id"
)
_SQLITE_POSTING = (
    "INSERT INTO postings (transaction_id, account_id, amount)"
    " VALUES (:transaction_id, :account_id, :amount)"
)
_SQLITE_BALANCE = "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id"
_SQLITE_CLAIM = (
    "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)"
    " VALUES (:bot_id, :update_id, :now) ON CONFLICT DO NOTHING"
)


@dataclass(frozen=True, slots=True)
class _Job:
    """One command: its parameters and what decides."""

    by_chat: bool
    skip_locked: bool
    params: dict[str, Any]
    user_row: Mapping[str, Any] | None
    clock: Callable[[], int]
    decide: Decide


@dataclass(frozen=True, slots=True)
class _Read:
    """The read's answer, turned into what the engine and the write need."""

    round: Round
    free_chips: int
    accounts: Mapping[AccountRef, int]
    seen: bool


def _parse(
    row: Mapping[str, Any], user_id: int | None, settings_of: Callable[[str], Settings]
) -> _Read:
    """The read's row (by column name) as the engine's partial round and the rest."""
    bets: tuple[Bet, ...] = ()
    grabs: tuple[Grab, ...] = ()
    accounts: dict[AccountRef, int] = {}
    if user_id is not None:
        if row["bet_amount"] is not None:
            bets = (Bet(user_id, row["bet_amount"], row["bet_hold"]),)
        if row["grab_amount"] is not None:
            grabs = (Grab(user_id, row["grab_amount"], bool(row["grab_auto"])),)
        if row["available_id"] is not None:
            accounts[available(user_id)] = row["available_id"]
        if row["held_id"] is not None:
            accounts[held(user_id)] = row["held_id"]
    bidder = row["high_bidder"]
    if bidder is not None and bidder != user_id:
        if row["bidder_available_id"] is not None:
            accounts[available(bidder)] = row["bidder_available_id"]
        if row["bidder_held_id"] is not None:
            accounts[held(bidder)] = row["bidder_held_id"]
    shoe = None
    if row["shoe_id"] is not None:
        shoe = ShoeRef(row["shoe_id"], bytes(row["shoe_seed"]), row["deal_offset"])
    shares = row["shares"]
    state = Round(
        id=row["id"],
        chat_id=row["chat_id"],
        phase=Phase(row["phase"]),
        version=row["version"],
        deadline_ms=row["deadline_ms"],
        settings=settings_of(row["settings"]),
        seed=bytes(row["seed"]),
        commitment=row["commitment"],
        high_bidder=bidder,
        high_bid=row["high_bid"],
        bid_hold=row["bid_hold"],
        dealer_id=row["dealer_id"],
        pool=row["pool"],
        bets=bets,
        shares=tuple(json.loads(shares) if isinstance(shares, str) else shares),
        grabs=grabs,
        void_reason=VoidReason(row["void_reason"]) if row["void_reason"] else None,
        shoe=shoe,
        tally=Tally(row["bet_count"], row["grab_count"]),
    )
    return _Read(state, row["free_chips"] or 0, accounts, bool(row["seen"]))


@dataclass(frozen=True, slots=True)
class _Write:
    """What a transition changes, as the write's parameters."""

    round: dict[str, Any]
    gone: list[int]
    placed: list[dict[str, Any]]
    grabbed: list[dict[str, Any]]
    bids: list[dict[str, Any]]
    tx_kind: str | None
    legs: list[tuple[int, int]]


#: The ledger transaction's kind by the event that moved chips.
_TRANSACTION_KIND = {"BidPlaced": "bid", "BetPlaced": "bet", "BetCancelled": "bet_cancel"}


def _changes(read: _Read, transition: Transition) -> _Write:
    """The write of a transition the hot path covers; ``NotOnHotPath`` for any other."""
    before, after = read.round, transition.round
    if not after.phase.is_open or any(isinstance(e, RoundStarted) for e in transition.events):
        raise NotOnHotPath("the round ends or starts")
    legs = []
    for posting in transition.postings:
        account = read.accounts.get(posting.account)
        if account is None or posting.account.kind not in (AccountKind.AVAILABLE, AccountKind.HELD):
            raise NotOnHotPath(f"no account {posting.account} in the read")
        legs.append((account, posting.amount))
    legs.sort()  # a fixed order of row locks
    old = {bet.user_id: bet for bet in before.bets}
    new = {bet.user_id: bet for bet in after.bets}
    placed = [
        {"user_id": user, "amount": bet.amount, "hold": bet.hold, "position": after.version}
        for user, bet in new.items()
        if old.get(user) != bet
    ]
    grabbed = [
        {"user_id": grab.user_id, "amount": grab.amount, "position": before.grab_count + i}
        for i, grab in enumerate(after.grabs[len(before.grabs) :])
    ]
    bids = [
        {"user_id": event.user_id, "amount": event.amount}
        for event in transition.events
        if isinstance(event, BidPlaced)
    ]
    kind = next(
        (
            _TRANSACTION_KIND[type(e).__name__]
            for e in transition.events
            if type(e).__name__ in _TRANSACTION_KIND
        ),
        "round",
    )
    old_values, new_values = _round_values(before), _round_values(after)
    changed = {column: value for column, value in new_values.items() if old_values[column] != value}
    if "shares" in changed:
        changed["shares"] = json.dumps(list(after.shares))
    return _Write(
        round=changed,
        gone=[user for user in old if user not in new],
        placed=placed,
        grabbed=grabbed,
        bids=bids,
        tx_kind=kind if legs else None,
        legs=legs,
    )


class RoundCommands:
    """Runs a round command on the hot path (see the module's docstring)."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id
        self._settings: dict[str, Settings] = {}

    def settings_of(self, stored: str) -> Settings:
        """A round's settings, parsed once per distinct stored text (every command of a
        round reads the same)."""
        found = self._settings.get(stored)
        if found is None:
            if len(self._settings) >= _SETTINGS_KEPT:
                self._settings.clear()
            found = self._settings[stored] = Settings.from_dict(json.loads(stored))
        return found

    def _params(self, where: Located, user_id: int | None, update_id: int | None) -> dict[str, Any]:
        return {
            "chat_id": where.chat_id,
            "round_id": where.round_id,
            "user_id": user_id,
            "bot_id": self.bot_id,
            "update_id": update_id,
        }

    def _decide(self, row: Any, job: _Job) -> tuple[_Read, Transition, _Write, int]:
        read = _parse(row, job.params["user_id"], self.settings_of)
        if read.seen:
            raise AlreadyProcessed(job.params["update_id"])
        # The clock is read once the command has its turn to write.
        now = job.clock()
        try:
            transition = job.decide(read.round, read.free_chips, now)
        except PartialRound:
            raise NotOnHotPath("the step needs every bet") from None
        return read, transition, _changes(read, transition), now

    async def run(
        self,
        where: Located,
        decide: Decide,
        *,
        clock: Callable[[], int],
        user_id: int | None = None,
        update_id: int | None = None,
        user_row: Mapping[str, Any] | None = None,
    ) -> Applied | None:
        """Read, decide, write; ``None`` when there is no such round (or, skipping locked
        rows, another worker holds it). ``user_row`` (``users`` columns) is stored in the
        same transaction. Raises the engine's ``GameError`` (nothing is written),
        ``StaleRound``, ``AlreadyProcessed`` or ``NotOnHotPath``."""
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
        writer = self.db.sqlite_writer
        if writer is not None:
            async with self.db.write_turn():
                try:
                    return await writer.run(lambda connection: self._run_sqlite(connection, job))
                except sqlite3.OperationalError as error:  # busy, or the disk
                    raise TransientDatabaseError(str(error)) from error
        return await self._run_postgres(job)

    async def _run_postgres(self, job: _Job) -> Applied | None:
        # The pool's connection, used through the bare driver: SQLAlchemy's work per
        # statement would cost more than the round trip.
        async with self.db.connection_turn(), self.db.engine.connect() as pooled:
            driver = (await pooled.get_raw_connection()).driver_connection
            assert driver is not None
            try:
                async with driver.transaction():
                    return await self._postgres_transaction(driver, job)
            except asyncpg.PostgresError as error:
                if error.sqlstate in TRANSIENT_SQLSTATES:
                    raise TransientDatabaseError(error.sqlstate) from error
                raise
            except (asyncpg.InterfaceError, OSError) as error:
                await pooled.invalidate()
                raise TransientDatabaseError("connection lost") from error

    async def _postgres_transaction(self, driver: Any, job: _Job) -> Applied | None:
        update_id = job.params["update_id"]
        if job.user_row is not None:
            await driver.execute(
                _POSTGRES_TOUCH_USER.sql, *_POSTGRES_TOUCH_USER.arguments(job.user_row)
            )
        read_statement = _POSTGRES_READS[(job.by_chat, job.skip_locked)]
        row = await driver.fetchrow(read_statement.sql, *read_statement.arguments(job.params))
        if row is None:
            if update_id is not None and await driver.fetchval(
                _POSTGRES_SEEN.sql, *_POSTGRES_SEEN.arguments(job.params)
            ):
                raise AlreadyProcessed(update_id)  # and the round has ended since
            return None
        read, transition, write, now = self._decide(row, job)
        before = read.round
        parameters = {
            **write.round,
            "round_id": before.id,
            "old_version": before.version,
            "now": now,
            "chat_id": before.chat_id,
            "gone": write.gone,
            "bet_users": [bet["user_id"] for bet in write.placed],
            "bet_amounts": [bet["amount"] for bet in write.placed],
            "bet_holds": [bet["hold"] for bet in write.placed],
            "bet_positions": [bet["position"] for bet in write.placed],
            "grab_users": [grab["user_id"] for grab in write.grabbed],
            "grab_amounts": [grab["amount"] for grab in write.grabbed],
            "grab_positions": [grab["position"] for grab in write.grabbed],
            "bid_users": [bid["user_id"] for bid in write.bids],
            "bid_amounts": [bid["amount"] for bid in write.bids],
            "tx_kind": write.tx_kind,
            "accounts": [account for account, _ in write.legs],
            "amounts": [amount for _, amount in write.legs],
            "bot_id": self.bot_id,
            "update_id": update_id,
        }
        try:
            statement = _postgres_write(tuple(write.round))
            result = await driver.fetchrow(statement.sql, *statement.arguments(parameters))
        except asyncpg.CheckViolationError as error:
            if error.constraint_name == NOT_NEGATIVE:
                raise RuleViolation("chips_changed") from None
            raise
        if result["swapped"] != 1:
            raise StaleRound(before.id)
        if update_id is not None and result["claimed"] != 1:
            raise AlreadyProcessed(update_id)  # another worker, at this very moment
        return Applied(before, transition)

    def _run_sqlite(self, connection: sqlite3.Connection, job: _Job) -> Applied | None:
        update_id = job.params["update_id"]
        if job.user_row is not None:
            connection.execute(_TOUCH_USER_SQL, job.user_row)
        row = connection.execute(_SQLITE_READS[job.by_chat], job.params).fetchone()
        if row is None:
            if update_id is not None and connection.execute(_SEEN, job.params).fetchone():
                raise AlreadyProcessed(update_id)  # and the round has ended since
            return None
        read, transition, write, now = self._decide(row, job)
        before = read.round
        round_id = before.id
        compare_and_set = _sqlite_compare_and_set(tuple(write.round))
        cas_values = {**write.round, "round_id": round_id, "old_version": before.version}
        if connection.execute(compare_and_set, cas_values).rowcount != 1:
            raise StaleRound(round_id)
        for user in write.gone:
            connection.execute(_SQLITE_DELETE_BET, {"round_id": round_id, "user_id": user})
        if write.placed:
            connection.executemany(
                _SQLITE_PLACE_BET,
                [{"round_id": round_id, "now": now, **bet} for bet in write.placed],
            )
        if write.grabbed:
            connection.executemany(
                _SQLITE_GRAB, [{"round_id": round_id, **grab} for grab in write.grabbed]
            )
        if write.bids:
            connection.executemany(
                _SQLITE_BID, [{"round_id": round_id, "now": now, **bid} for bid in write.bids]
            )
        if write.tx_kind is not None:
            transaction_id = connection.execute(
                _SQLITE_TRANSACTION,
                {
                    "chat_id": before.chat_id,
                    "tx_kind": write.tx_kind,
                    "round_id": round_id,
                    "now": now,
                },
            ).fetchone()[0]
            connection.executemany(
                _SQLITE_POSTING,
                [
                    {"transaction_id": transaction_id, "account_id": account, "amount": amount}
                    for account, amount in write.legs
                ],
            )
            try:
                connection.executemany(
                    _SQLITE_BALANCE,
                    [{"account_id": account, "amount": amount} for account, amount in write.legs],
                )
            except sqlite3.IntegrityError as error:
                if sqlite_check_failed(error) == NOT_NEGATIVE:
                    raise RuleViolation("chips_changed") from None
                raise
        if update_id is not None:
            claimed = connection.execute(
                _SQLITE_CLAIM, {"bot_id": self.bot_id, "update_id": update_id, "now": now}
            )
            if claimed.rowcount != 1:
                raise AlreadyProcessed(update_id)
        return Applied(before, transition)
