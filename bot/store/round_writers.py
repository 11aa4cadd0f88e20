"""A round step's write in each dialect's statements: the one executor per dialect that
the hot path and the general path both run (``bot.store.statements`` runs them).

Every part is conditioned on the compare-and-set of the round's version. PostgreSQL's
write is one statement of data-modifying CTEs, each fed by arrays, with only the parts
the step needs (a bet: its bet, the ledger and the update), so the server plans and runs
no empty ones. SQLite has no such CTEs: its write is a few statements in the caller's
transaction. Neither writes a balance: the database adds each posting to its account's
(migration 0021).

SQL text, each statement once: the two dialects' writes are different statements (CTEs
over arrays against several ``executemany``), not one written twice, and they run on the
bare drivers, which take text (``bot.store.statements``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.engine.errors import RuleViolation
from bot.engine.round import Round
from bot.store.errors import (
    NOT_NEGATIVE,
    ONE_OPEN_ROUND,
    AlreadyProcessed,
    RoundAlreadyOpen,
    StaleRound,
)
from bot.store.round_writes import JSON_COLUMNS, RoundWrite, describe_start
from bot.store.statements import Params, Statement, run_session


def _chips_changed() -> Exception:
    # A balance would go negative: it changed since the command read it.
    return RuleViolation("chips_changed")


_LEDGER_REFUSALS = {NOT_NEGATIVE: _chips_changed}


def _shoe_taken(shoe_id: int) -> Callable[[], Exception]:
    return lambda: RuntimeError(f"shoe {shoe_id} was dealt from by another round")


#: The outcome rows' columns, each a parameter of arrays (``o_<column>``) on PostgreSQL.
OUTCOME_COLUMNS = (
    ("user_id", "bigint"),
    ("role", "varchar"),
    ("stake", "bigint"),
    ("envelope", "bigint"),
    ("kind", "varchar"),
    ("points", "integer"),
    ("multiplier", "integer"),
    ("result", "varchar"),
    ("gross", "bigint"),
    ("rake", "bigint"),
    ("rebate", "bigint"),
    ("net", "bigint"),
)
_OUTCOME_NAMES = ", ".join(name for name, _ in OUTCOME_COLUMNS)

#: A user the bot has not stored as they are (their first command, or a new name).
TOUCH_USER = (
    "INSERT INTO users (id, username, first_name, last_name, seen_at_ms)"
    " VALUES (:id, :username, :first_name, :last_name, :seen_at_ms)"
    " ON CONFLICT (id) DO UPDATE SET username = excluded.username,"
    " first_name = excluded.first_name, last_name = excluded.last_name,"
    " seen_at_ms = excluded.seen_at_ms"
)
#: An update processed: claimed once, by the write that applies it. SQLite counts the
#: row written; asyncpg can say only by a row returned.
CLAIM = (
    "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)"
    " VALUES (:bot_id, :update_id, :now) ON CONFLICT DO NOTHING"
)
_CLAIMS = {"sqlite": CLAIM, "postgresql": CLAIM + " RETURNING 1"}
_CLEAR_NEXT_ROUND = (
    "UPDATE chats SET next_round_at_ms = NULL WHERE id = :chat_id AND next_round_at_ms IS NOT NULL"
)


def _assignments(columns: tuple[str, ...], cast: bool) -> str:
    # Only the columns that changed: an index whose columns are not assigned is not
    # touched (SQLite), and the update can stay on the row's page (PostgreSQL).
    return ", ".join(
        f"{column} = CAST(:{column} AS json)"
        if cast and column in JSON_COLUMNS
        else f"{column} = :{column}"
        for column in columns
    )


class Envelope:
    """What comes with a command's write besides its step: the updates it claims and the
    players' ``users`` rows it stores (none for a deadline or the general path, which
    claim and store them apart; several for players' steps written together)."""

    __slots__ = ("bot_id", "update_ids", "user_rows")

    def __init__(
        self,
        bot_id: int = 0,
        update_ids: Sequence[int] = (),
        user_rows: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.bot_id = bot_id
        self.update_ids = update_ids
        self.user_rows = user_rows

    @classmethod
    def of(cls, bot_id: int, update_id: int | None, user_row: Mapping[str, Any] | None) -> Envelope:
        """One command's envelope: its update, if any, and its player's row, if any."""
        return cls(
            bot_id,
            () if update_id is None else (update_id,),
            () if user_row is None else (user_row,),
        )


NO_ENVELOPE = Envelope()


# -- SQLite -------------------------------------------------------------------------------


@functools.cache
def _sqlite_compare_and_set(columns: tuple[str, ...]) -> str:
    return (
        f"UPDATE rounds SET {_assignments(columns, cast=False)}"
        " WHERE id = :round_id AND version = :old_version"
    )


_SQLITE_DELETE_BET = "DELETE FROM bets WHERE round_id = :round_id AND user_id = :user_id"
_SQLITE_PLACE_BET = (
    "INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms, standing)"
    " VALUES (:round_id, :user_id, :amount, :hold, :position, :now, :standing)"
    " ON CONFLICT (round_id, user_id) DO UPDATE"
    " SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms,"
    " standing = excluded.standing"
)
_SQLITE_GRAB = (
    "INSERT INTO grabs (round_id, user_id, amount, position, auto)"
    " VALUES (:round_id, :user_id, :amount, :position, :auto)"
)
_SQLITE_BID = (
    "INSERT INTO bids (round_id, user_id, amount, placed_at_ms)"
    " VALUES (:round_id, :user_id, :amount, :now)"
)
_SQLITE_OUTCOME = (
    f"INSERT INTO outcomes (round_id, {_OUTCOME_NAMES})"
    f" VALUES (:round_id, {', '.join(f':{name}' for name, _ in OUTCOME_COLUMNS)})"
)
#: A transaction with its postings as ``legs`` (JSON): the database's triggers write the
#: postings from them and add them to the balances (migration 0021).
_SQLITE_TRANSACTION = (
    "INSERT INTO ledger_transactions"
    " (chat_id, kind, round_id, actor_id, memo, created_at_ms, legs)"
    " VALUES (:chat_id, :kind, :round_id, NULL, '', :now, :legs)"
)
_SQLITE_DEAL = (
    "UPDATE shoes SET dealt = dealt + :shoe_cards,"
    " client_seeds = coalesce(client_seeds, :shoe_client_seeds)"
    " WHERE id = :shoe_id AND dealt = :shoe_offset"
)
_SQLITE_NEXT_ROUND = "UPDATE chats SET next_round_at_ms = :next_round_at WHERE id = :chat_id"


def sqlite_write(write: RoundWrite, envelope: Envelope = NO_ENVELOPE) -> list[Statement]:
    """SQLite's statements of a round step's write."""
    round_id, now = write.round_id, write.now
    statements = [
        Statement(
            _sqlite_compare_and_set(tuple(write.columns)),
            {**write.columns, "round_id": round_id, "old_version": write.old_version},
            expect_one=lambda: StaleRound(round_id),
        )
    ]
    if write.gone:
        statements.append(
            Statement(
                _SQLITE_DELETE_BET, [{"round_id": round_id, "user_id": u} for u in write.gone]
            )
        )
    for sql, rows in (
        (_SQLITE_PLACE_BET, write.placed),
        (_SQLITE_GRAB, write.grabbed),
        (_SQLITE_BID, write.bids),
        (_SQLITE_OUTCOME, write.outcomes),
    ):
        if rows:
            statements.append(
                Statement(sql, [{"round_id": round_id, "now": now, **row} for row in rows])
            )
    if write.transactions:
        rows = [
            {
                "chat_id": write.chat_id,
                "kind": tx.kind,
                "round_id": round_id,
                "now": now,
                "legs": json.dumps(tx.legs),
            }
            for tx in write.transactions
        ]
        statements.append(Statement(_SQLITE_TRANSACTION, rows, refusals=_LEDGER_REFUSALS))
    if write.shoe is not None:
        shoe_id, offset, cards = write.shoe
        statements.append(
            Statement(
                _SQLITE_DEAL,
                {
                    "shoe_id": shoe_id,
                    "shoe_offset": offset,
                    "shoe_cards": cards,
                    "shoe_client_seeds": write.shoe_client_seeds,
                },
                expect_one=_shoe_taken(shoe_id),
            )
        )
    if write.next_round_at is not None:
        statements.append(
            Statement(
                _SQLITE_NEXT_ROUND, {"chat_id": write.chat_id, "next_round_at": write.next_round_at}
            )
        )
    statements += _envelope(envelope, now, "sqlite")
    return statements


def _envelope(envelope: Envelope, now: int, dialect: str) -> list[Statement]:
    statements = [Statement(TOUCH_USER, dict(row)) for row in envelope.user_rows]
    for update_id in envelope.update_ids:
        statements.append(
            Statement(
                _CLAIMS[dialect],
                {"bot_id": envelope.bot_id, "update_id": update_id, "now": now},
                expect_one=functools.partial(AlreadyProcessed, update_id),
            )
        )
    return statements


# -- PostgreSQL ---------------------------------------------------------------------------

_OUTCOME_ARRAYS = ", ".join(f"CAST(:o_{name} AS {kind}[])" for name, kind in OUTCOME_COLUMNS)

#: The parts of PostgreSQL's write after the compare-and-set (``cas``), by name.
_POSTGRES_PARTS = {
    "gone": """gone AS (
    DELETE FROM bets
    WHERE round_id IN (SELECT id FROM cas) AND user_id = ANY(CAST(:gone AS bigint[]))
)""",
    "placed": """placed AS (
    INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms, standing)
    SELECT cas.id, t.user_id, t.amount, t.hold, t.position, :now, t.standing
    FROM cas, unnest(CAST(:bet_users AS bigint[]), CAST(:bet_amounts AS bigint[]),
                     CAST(:bet_holds AS bigint[]), CAST(:bet_positions AS integer[]),
                     CAST(:bet_standings AS boolean[]))
         AS t(user_id, amount, hold, position, standing)
    ON CONFLICT (round_id, user_id) DO UPDATE
    SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms,
        standing = excluded.standing
)""",
    "grabbed": """grabbed AS (
    INSERT INTO grabs (round_id, user_id, amount, position, auto)
    SELECT cas.id, t.user_id, t.amount, t.position, t.auto
    FROM cas, unnest(CAST(:grab_users AS bigint[]), CAST(:grab_amounts AS bigint[]),
                     CAST(:grab_positions AS integer[]), CAST(:grab_autos AS boolean[]))
         AS t(user_id, amount, position, auto)
)""",
    "bids": """bid AS (
    INSERT INTO bids (round_id, user_id, amount, placed_at_ms)
    SELECT cas.id, t.user_id, t.amount, :now
    FROM cas, unnest(CAST(:bid_users AS bigint[]), CAST(:bid_amounts AS bigint[]))
         AS t(user_id, amount)
)""",
    "outcomes": f"""outcome AS (
    INSERT INTO outcomes (round_id, {_OUTCOME_NAMES})
    SELECT cas.id, t.* FROM cas, unnest({_OUTCOME_ARRAYS}) AS t({_OUTCOME_NAMES})
)""",
    # One transaction (a command's): its postings written here, as arrays.
    "ledger": """tx AS (
    INSERT INTO ledger_transactions (chat_id, kind, round_id, actor_id, memo, created_at_ms)
    SELECT :chat_id, CAST(:tx_kind AS varchar), cas.id, NULL, '', :now FROM cas
    RETURNING id
), legs AS (
    INSERT INTO postings (transaction_id, account_id, amount)
    SELECT tx.id, t.account_id, t.amount
    FROM tx, unnest(CAST(:accounts AS bigint[]), CAST(:amounts AS bigint[]))
         AS t(account_id, amount)
)""",
    # Several (standing bets), in order: the database writes each one's postings from its
    # legs (migration 0021).
    "ledger_each": """txs AS (
    INSERT INTO ledger_transactions
        (chat_id, kind, round_id, actor_id, memo, created_at_ms, legs)
    SELECT :chat_id, t.kind, cas.id, NULL, '', :now, CAST(t.legs AS json)
    FROM cas, unnest(CAST(:tx_kinds AS varchar[]), CAST(:tx_legs AS text[]))
         WITH ORDINALITY AS t(kind, legs, n)
    ORDER BY t.n
)""",
    "shoe": """dealt AS (
    UPDATE shoes SET dealt = shoes.dealt + CAST(:shoe_cards AS integer),
        client_seeds = coalesce(shoes.client_seeds, CAST(:shoe_client_seeds AS json))
    FROM cas
    WHERE shoes.id = CAST(:shoe_id AS bigint) AND shoes.dealt = CAST(:shoe_offset AS integer)
    RETURNING 1
)""",
    "next_round": """next_round AS (
    UPDATE chats SET next_round_at_ms = CAST(:next_round_at AS bigint)
    FROM cas WHERE chats.id = :chat_id
)""",
    "user": """person AS (
    INSERT INTO users (id, username, first_name, last_name, seen_at_ms)
    SELECT t.* FROM cas, unnest(CAST(:person_ids AS bigint[]),
        CAST(:person_usernames AS varchar[]), CAST(:person_first_names AS varchar[]),
        CAST(:person_last_names AS varchar[]), CAST(:person_seen_at_ms AS bigint[]))
        AS t(id, username, first_name, last_name, seen_at_ms)
    ON CONFLICT (id) DO UPDATE SET username = excluded.username,
        first_name = excluded.first_name, last_name = excluded.last_name,
        seen_at_ms = excluded.seen_at_ms
)""",
    "update": """claimed AS (
    INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)
    SELECT :bot_id, t.update_id, :now
    FROM cas, unnest(CAST(:update_ids AS bigint[])) AS t(update_id)
    ON CONFLICT DO NOTHING
    RETURNING 1
)""",
}

#: The ``users`` columns of the ``user`` part, each a parameter of arrays.
_PERSON_ARRAYS = (
    ("person_ids", "id"),
    ("person_usernames", "username"),
    ("person_first_names", "first_name"),
    ("person_last_names", "last_name"),
    ("person_seen_at_ms", "seen_at_ms"),
)


@functools.cache
def _postgres_statement(columns: tuple[str, ...], parts: frozenset[str]) -> str:
    """The whole write in one statement, for a step that changes the round's ``columns``
    and needs the named ``parts``. It answers whether the compare-and-set took
    (``swapped``), the update was new (``claimed``) and the shoe moved (``dealt``)."""
    ctes = [
        f"cas AS (\n    UPDATE rounds SET {_assignments(columns, cast=True)}\n"
        "    WHERE id = :round_id AND version = :old_version\n    RETURNING id\n)"
    ]
    ctes += [part for name, part in _POSTGRES_PARTS.items() if name in parts]
    # Every update of the write claimed (players' steps written together claim several).
    claimed = (
        "CAST((SELECT count(*) FROM claimed) = :update_count AS integer)"
        if "update" in parts
        else "1"
    )
    dealt = "(SELECT count(*) FROM dealt)" if "shoe" in parts else "1"
    return (
        f"WITH {', '.join(ctes)}\nSELECT (SELECT count(*) FROM cas) AS swapped,"
        f" {claimed} AS claimed, {dealt} AS dealt"
    )


def postgres_write(write: RoundWrite, envelope: Envelope = NO_ENVELOPE) -> list[Statement]:
    """PostgreSQL's statement of a round step's write (one)."""
    single = len(write.transactions) == 1
    wanted = {
        "gone": bool(write.gone),
        "placed": bool(write.placed),
        "grabbed": bool(write.grabbed),
        "bids": bool(write.bids),
        "outcomes": bool(write.outcomes),
        "ledger": single,
        "ledger_each": len(write.transactions) > 1,
        "shoe": write.shoe is not None,
        "next_round": write.next_round_at is not None,
        "update": bool(envelope.update_ids),
        "user": bool(envelope.user_rows),
    }
    parts = frozenset(name for name, needed in wanted.items() if needed)
    shoe_id, shoe_offset, shoe_cards = write.shoe or (None, None, None)
    params: Params = {
        **write.columns,
        **_arrays(write, parts),
        "round_id": write.round_id,
        "old_version": write.old_version,
        "now": write.now,
        "chat_id": write.chat_id,
        "shoe_id": shoe_id,
        "shoe_offset": shoe_offset,
        "shoe_cards": shoe_cards,
        "shoe_client_seeds": write.shoe_client_seeds,
        "next_round_at": write.next_round_at,
        "bot_id": envelope.bot_id,
        "update_ids": list(envelope.update_ids),
        "update_count": len(envelope.update_ids),
    }
    for name, column in _PERSON_ARRAYS:
        params[name] = [row[column] for row in envelope.user_rows]
    update_ids, round_id = envelope.update_ids, write.round_id
    return [
        Statement(
            _postgres_statement(tuple(write.columns), parts),
            params,
            # In this order: of two writers of one version only one swaps, and an update
            # names one round, so neither later check can fail once the first passed.
            expect_columns=(
                ("swapped", lambda: StaleRound(round_id)),
                ("claimed", lambda: AlreadyProcessed(*update_ids)),
                ("dealt", _shoe_taken(shoe_id or 0)),
            ),
            refusals=_LEDGER_REFUSALS,
        )
    ]


def _arrays(write: RoundWrite, parts: frozenset[str]) -> Params:
    """The write's rows as array parameters, those of the named ``parts`` only."""
    arrays: Params = {}
    if "gone" in parts:
        arrays["gone"] = write.gone
    if "placed" in parts:
        for name, key in (
            ("bet_users", "user_id"),
            ("bet_amounts", "amount"),
            ("bet_holds", "hold"),
            ("bet_positions", "position"),
            ("bet_standings", "standing"),
        ):
            arrays[name] = [bet[key] for bet in write.placed]
    if "grabbed" in parts:
        for name, key in (
            ("grab_users", "user_id"),
            ("grab_amounts", "amount"),
            ("grab_positions", "position"),
            ("grab_autos", "auto"),
        ):
            arrays[name] = [grab[key] for grab in write.grabbed]
    if "bids" in parts:
        arrays["bid_users"] = [bid["user_id"] for bid in write.bids]
        arrays["bid_amounts"] = [bid["amount"] for bid in write.bids]
    if "ledger" in parts:
        (tx,) = write.transactions
        arrays["tx_kind"] = tx.kind
        arrays["accounts"] = [account for account, _ in tx.legs]
        arrays["amounts"] = [amount for _, amount in tx.legs]
    if "ledger_each" in parts:
        arrays["tx_kinds"] = [tx.kind for tx in write.transactions]
        arrays["tx_legs"] = [json.dumps(tx.legs) for tx in write.transactions]
    if "outcomes" in parts:
        for name, _ in OUTCOME_COLUMNS:
            arrays[f"o_{name}"] = [row[name] for row in write.outcomes]
    return arrays


# -- a round's start ----------------------------------------------------------------------


@functools.cache
def _insert_round(columns: tuple[str, ...], cast: bool) -> str:
    values = ", ".join(
        f"CAST(:{column} AS json)" if cast and column in JSON_COLUMNS else f":{column}"
        for column in columns
    )
    return f"INSERT INTO rounds ({', '.join(columns)}) VALUES ({values}) RETURNING id"


def start_write(
    dialect: str, row: Mapping[str, Any], envelope: Envelope = NO_ENVELOPE
) -> list[Statement]:
    """The statements of a round's start (``describe_start``'s row) in ``dialect``: the
    update claimed and the player stored, the round inserted (its id returned) and the
    table's pending start cleared."""
    chat_id, now = row["chat_id"], row["started_at_ms"]
    return [
        *_envelope(envelope, now, dialect),
        Statement(
            _insert_round(tuple(row), cast=dialect == "postgresql"),
            dict(row),
            returns=True,
            refusals={ONE_OPEN_ROUND: lambda: RoundAlreadyOpen(chat_id)},
        ),
        Statement(_CLEAR_NEXT_ROUND, {"chat_id": chat_id}),
    ]


#: Each dialect's write of a round step.
WRITES: Mapping[str, Callable[[RoundWrite, Envelope], list[Statement]]] = {
    "sqlite": sqlite_write,
    "postgresql": postgres_write,
}


class RoundWriter:
    """A unit of work's writes of round steps: its dialect's statements, run in its
    transaction (the general path; the hot path runs the same on the bare drivers)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.dialect = session.bind.dialect.name

    async def write(self, write: RoundWrite) -> None:
        """Write a step; ``StaleRound`` if another writer changed the round since it was
        read, ``RuleViolation("chips_changed")`` if a balance would go negative."""
        await run_session(self.session, WRITES[self.dialect](write, NO_ENVELOPE))

    async def start(self, state: Round, now: int) -> Round:
        """Store a new round; it with its id. ``RoundAlreadyOpen`` if the chat has one."""
        row = describe_start(state, now)
        round_id = await run_session(self.session, start_write(self.dialect, row))
        return dataclasses.replace(state, id=round_id)
