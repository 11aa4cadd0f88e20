"""The hot path's statements, built once: the read of a round for one command and the
write of what the command changed (``bot.store.round_commands`` runs them).

The read brings the round row, the player's own bet and grab, the round's counts, the
player's free chips, the ids of the accounts a bid may move chips between, whether the
update was processed, and whether the table is open. When the step may need every bet
(the last grab, or a deadline of betting or grabbing) it brings them too, with the grabs
and every account of the round's players, as JSON arrays, and what a deal mixes in (the
participants' client seeds at the close of betting, the shoe's fixed ones): still one
statement.

PostgreSQL's write is one statement of data-modifying CTEs, each fed by arrays and
conditioned on the compare-and-set; SQLite has no such CTEs, so its write is several
statements on the writer's thread (one hop all the same). Neither writes a balance: the
database adds each posting to its account's (migration 0021).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.store.models import OPEN_PHASES_SQL


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

# -- the read -----------------------------------------------------------------------------

_READ = """
SELECT r.id, r.chat_id, r.phase, r.version, r.deadline_ms, r.commitment, r.seed,
       CAST(r.settings AS text) AS settings, r.high_bidder, r.high_bid, r.bid_hold,
       r.dealer_id, r.pool, r.shares,
       r.void_reason, r.shoe_id, r.deal_offset, r.bet_count, r.grab_count,
       r.fairness, r.client_seeds,
       (SELECT s.seed FROM shoes AS s WHERE s.id = r.shoe_id) AS shoe_seed,
       CASE WHEN {whole} THEN (SELECT s.client_seeds FROM shoes AS s WHERE s.id = r.shoe_id)
       END AS shoe_client_seeds,
       b.amount AS bet_amount, b.hold AS bet_hold, b.standing AS bet_standing,
       g.amount AS grab_amount, g.auto AS grab_auto,
       av.id AS available_id, av.balance AS free_chips, hd.id AS held_id,
       bav.id AS bidder_available_id, bhd.id AS bidder_held_id,
       EXISTS (SELECT 1 FROM processed_updates AS p
               WHERE p.bot_id = :bot_id AND p.update_id = :update_id) AS seen,
       (SELECT c.is_open FROM chats AS c WHERE c.id = r.chat_id) AS chat_open,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(ab.user_id, ab.amount, ab.hold, ab.position, ab.standing))
           FROM bets AS ab WHERE ab.round_id = r.id), {empty}) END AS all_bets,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(ag.user_id, ag.amount, ag.auto, ag.position))
           FROM grabs AS ag WHERE ag.round_id = r.id), {empty}) END AS all_grabs,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(aa.kind, aa.user_id, aa.id))
           FROM accounts AS aa
           WHERE aa.chat_id = r.chat_id AND (
               aa.kind IN ('house', 'bank') OR aa.user_id = r.dealer_id
               OR aa.user_id IN (SELECT ab.user_id FROM bets AS ab WHERE ab.round_id = r.id))
           ), {empty}) END AS all_accounts,
       CASE WHEN {whole} AND r.phase = 'betting' THEN coalesce((
           SELECT {array}({row}(cs.user_id, cs.seed))
           FROM client_seeds AS cs
           WHERE cs.user_id = r.dealer_id
              OR cs.user_id IN (SELECT ab.user_id FROM bets AS ab WHERE ab.round_id = r.id)
           ), {empty}) END AS player_seeds
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
WHERE {where} {lock}
"""

#: A player's command is located by chat; every bet is read for what may be the last grab.
_BY_CHAT = f"r.chat_id = :chat_id AND r.{OPEN_PHASES_SQL}"
_LAST_GRAB = (
    "r.phase = 'grabbing' AND r.grab_count + 1 >= "
    "r.bet_count + CASE WHEN r.dealer_id IS NULL THEN 0 ELSE 1 END"
)
#: A deadline is located by the round's id; closing betting or grabbing reads every bet.
_BY_ID = "r.id = :round_id"
_CLOSES_BETTING_OR_GRABBING = "r.phase IN ('betting', 'grabbing')"

_POSTGRES_JSON = {"array": "json_agg", "row": "json_build_array", "empty": "CAST('[]' AS json)"}
_SQLITE_JSON = {"array": "json_group_array", "row": "json_array", "empty": "'[]'"}


def _read(json: Mapping[str, str], *, by_chat: bool, lock: str, whole: str | None = None) -> str:
    where, may_need_all = (
        (_BY_CHAT, _LAST_GRAB) if by_chat else (_BY_ID, _CLOSES_BETTING_OR_GRABBING)
    )
    return _READ.format(where=where, whole=whole or may_need_all, lock=lock, **json)


#: PostgreSQL's read by (by chat, skip locked). A command's read locks nothing (the write's
#: compare-and-set is what keeps it right); a deadline's holds the round for its
#: transaction, so that a second worker sweeping the same round passes over it.
POSTGRES_READS = {
    (True, False): Positional.of(_read(_POSTGRES_JSON, by_chat=True, lock="")),
    (False, False): Positional.of(_read(_POSTGRES_JSON, by_chat=False, lock="")),
    (False, True): Positional.of(
        _read(_POSTGRES_JSON, by_chat=False, lock="FOR UPDATE OF r SKIP LOCKED")
    ),
}
#: SQLite's read, by chat or not: BEGIN IMMEDIATE already made this the only writer.
SQLITE_READS = {
    True: _read(_SQLITE_JSON, by_chat=True, lock=""),
    False: _read(_SQLITE_JSON, by_chat=False, lock=""),
}

#: A round whole, by id, locking nothing: what its board or results show.
POSTGRES_WHOLE = Positional.of(_read(_POSTGRES_JSON, by_chat=False, lock="", whole="TRUE"))
SQLITE_WHOLE = _read(_SQLITE_JSON, by_chat=False, lock="", whole="1 = 1")
#: The parameters a read without a player or an update takes.
NOBODY = {"chat_id": None, "user_id": None, "bot_id": 0, "update_id": None}

#: Whether an update was processed, when the read found no round to say so.
SEEN = "SELECT 1 FROM processed_updates WHERE bot_id = :bot_id AND update_id = :update_id"
POSTGRES_SEEN = Positional.of(SEEN)

#: A user the bot has not stored as they are (their first command, or a new name).
TOUCH_USER = (
    "INSERT INTO users (id, username, first_name, last_name, seen_at_ms)"
    " VALUES (:id, :username, :first_name, :last_name, :seen_at_ms)"
    " ON CONFLICT (id) DO UPDATE SET username = excluded.username,"
    " first_name = excluded.first_name, last_name = excluded.last_name,"
    " seen_at_ms = excluded.seen_at_ms"
)
POSTGRES_TOUCH_USER = Positional.of(TOUCH_USER)

# -- the write ----------------------------------------------------------------------------


#: The round's JSON columns: a parameter of JSON text, cast on PostgreSQL.
_JSON_COLUMNS = ("shares", "client_seeds")


def _assignments(columns: tuple[str, ...], cast: bool) -> str:
    # Only the columns that changed: an index whose columns are not assigned is not
    # touched (SQLite), and the update can stay on the row's page (PostgreSQL).
    return ", ".join(
        f"{column} = CAST(:{column} AS json)"
        if cast and column in _JSON_COLUMNS
        else f"{column} = :{column}"
        for column in columns
    )


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
_OUTCOME_ARRAYS = ", ".join(f"CAST(:o_{name} AS {kind}[])" for name, kind in OUTCOME_COLUMNS)

#: The parts of PostgreSQL's write after the compare-and-set (``cas``), by name; a step's
#: statement has only the parts it needs (a bet: its bet, the ledger and the update), so
#: the server plans and runs no empty ones.
_POSTGRES_PARTS = {
    "gone": """gone AS (
    DELETE FROM bets
    WHERE round_id IN (SELECT id FROM cas) AND user_id = ANY(CAST(:gone AS bigint[]))
)""",
    "placed": """placed AS (
    INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms)
    SELECT cas.id, t.user_id, t.amount, t.hold, t.position, :now
    FROM cas, unnest(CAST(:bet_users AS bigint[]), CAST(:bet_amounts AS bigint[]),
                     CAST(:bet_holds AS bigint[]), CAST(:bet_positions AS integer[]))
         AS t(user_id, amount, hold, position)
    ON CONFLICT (round_id, user_id) DO UPDATE
    SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms,
        standing = false
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
    SELECT CAST(:person_id AS bigint), CAST(:person_username AS varchar),
           CAST(:person_first_name AS varchar), CAST(:person_last_name AS varchar),
           CAST(:person_seen_at_ms AS bigint)
    FROM cas
    ON CONFLICT (id) DO UPDATE SET username = excluded.username,
        first_name = excluded.first_name, last_name = excluded.last_name,
        seen_at_ms = excluded.seen_at_ms
)""",
    "update": """claimed AS (
    INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)
    SELECT :bot_id, CAST(:update_id AS bigint), :now FROM cas
    ON CONFLICT DO NOTHING
    RETURNING 1
)""",
}


@functools.cache
def postgres_write(columns: tuple[str, ...], parts: frozenset[str]) -> Positional:
    """The whole write in one statement, for a step that changes the round's ``columns``
    and needs the named ``parts`` (see ``_POSTGRES_PARTS``). It answers whether the
    compare-and-set took (``swapped``), the update was new (``claimed``) and the shoe
    moved (``dealt``)."""
    assignments = _assignments(columns, cast=True)
    ctes = [
        f"cas AS (\n    UPDATE rounds SET {assignments}\n"
        "    WHERE id = :round_id AND version = :old_version\n    RETURNING id\n)"
    ]
    ctes += [part for name, part in _POSTGRES_PARTS.items() if name in parts]
    claimed = "(SELECT count(*) FROM claimed)" if "update" in parts else "0"
    dealt = "(SELECT count(*) FROM dealt)" if "shoe" in parts else "0"
    return Positional.of(
        f"WITH {', '.join(ctes)}\nSELECT (SELECT count(*) FROM cas) AS swapped,"
        f" {claimed} AS claimed, {dealt} AS dealt"
    )


@functools.cache
def sqlite_compare_and_set(columns: tuple[str, ...]) -> str:
    """The round's compare-and-set, for a step that changes ``columns``."""
    return (
        f"UPDATE rounds SET {_assignments(columns, cast=False)}"
        " WHERE id = :round_id AND version = :old_version"
    )


SQLITE_DELETE_BET = "DELETE FROM bets WHERE round_id = :round_id AND user_id = :user_id"
SQLITE_PLACE_BET = (
    "INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms)"
    " VALUES (:round_id, :user_id, :amount, :hold, :position, :now)"
    " ON CONFLICT (round_id, user_id) DO UPDATE"
    " SET amount = excluded.amount, hold = excluded.hold, placed_at_ms = excluded.placed_at_ms,"
    " standing = false"
)
SQLITE_GRAB = (
    "INSERT INTO grabs (round_id, user_id, amount, position, auto)"
    " VALUES (:round_id, :user_id, :amount, :position, :auto)"
)
SQLITE_BID = (
    "INSERT INTO bids (round_id, user_id, amount, placed_at_ms)"
    " VALUES (:round_id, :user_id, :amount, :now)"
)
SQLITE_OUTCOME = (
    f"INSERT INTO outcomes (round_id, {', '.join(name for name, _ in OUTCOME_COLUMNS)})"
    f" VALUES (:round_id, {', '.join(f':{name}' for name, _ in OUTCOME_COLUMNS)})"
)
#: The transaction with its postings as ``legs`` (JSON): SQLite's triggers write the
#: postings from them and add them to the balances (migration 0021).
SQLITE_TRANSACTION = (
    "INSERT INTO ledger_transactions"
    " (chat_id, kind, round_id, actor_id, memo, created_at_ms, legs)"
    " VALUES (:chat_id, :tx_kind, :round_id, NULL, '', :now, :legs)"
)
SQLITE_DEAL = (
    "UPDATE shoes SET dealt = dealt + :shoe_cards,"
    " client_seeds = coalesce(client_seeds, :shoe_client_seeds)"
    " WHERE id = :shoe_id AND dealt = :shoe_offset"
)
SQLITE_NEXT_ROUND = "UPDATE chats SET next_round_at_ms = :next_round_at WHERE id = :chat_id"
SQLITE_CLAIM = (
    "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)"
    " VALUES (:bot_id, :update_id, :now) ON CONFLICT DO NOTHING"
)
