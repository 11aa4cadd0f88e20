"""The read of a group's table that the Mini App's live feed takes at every change: its
latest round whole (where the table stands), the chips of the players watching it and
the names the round shows, in one statement.

One statement, not four: the feed reads a group at every change, for everyone watching
it, and on PostgreSQL each statement more is a round trip more and a wait more for one
of the hot path's connections; under load those waits, not the reads, made the feed's
tail (``bench/bench_miniapp_feed.py``). Being one statement, its chips are exactly those
of the round it shows (one snapshot of the database).

SQL text around the hot path's own read of a round (``bot.store.round_sql``, a template
for both dialects), run on the hot path's connections (``Database.read_one``: SQLite's
reader thread, PostgreSQL's bare driver), with no SQLAlchemy session around it. A list
of users goes as one JSON array, which both databases unpack (``json_each``,
``jsonb_array_elements_text``), so that the statement is the same for any number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.round import AccountKind, Round
from bot.engine.settings import Settings
from bot.store import round_sql
from bot.store.db import Database
from bot.store.ledger import Balance
from bot.store.round_reads import parse_read
from bot.store.statements import Positional

_KINDS = f"('{AccountKind.AVAILABLE.value}', '{AccountKind.HELD.value}')"
_TABLE = """
SELECT w.*,
       (SELECT {array}({row}(a.user_id, a.kind, a.balance)) FROM accounts AS a
        WHERE a.chat_id = :chat_id AND a.kind IN {kinds} AND a.user_id IN ({users})
       ) AS viewer_chips,
       (SELECT {array}({row}(u.id, u.first_name, u.username, u.last_name)) FROM users AS u
        WHERE u.id IN (SELECT ab.user_id FROM bets AS ab WHERE ab.round_id = w.id
                       UNION ALL SELECT ag.user_id FROM grabs AS ag WHERE ag.round_id = w.id
                       UNION ALL SELECT w.dealer_id UNION ALL SELECT w.high_bidder)
       ) AS people
FROM (SELECT 1 AS one) AS one LEFT JOIN ({latest}) AS w ON 1 = 1
"""
_SQLITE_TABLE = _TABLE.format(
    array="json_group_array",
    row="json_array",
    kinds=_KINDS,
    users="SELECT value FROM json_each(:users)",
    latest=round_sql.SQLITE_LATEST_WHOLE,
)
_POSTGRES_TABLE = Positional.of(
    _TABLE.format(
        array="json_agg",
        row="json_build_array",
        kinds=_KINDS,
        users="SELECT CAST(jsonb_array_elements_text(CAST(:users AS jsonb)) AS bigint)",
        latest=round_sql.POSTGRES_LATEST_WHOLE_SQL,
    )
)

#: A user as the users table knows them: id, first name, username, last name.
UserName = tuple[int, str, str | None, str | None]


@dataclass(frozen=True, slots=True)
class TableRead:
    """A group's latest round (open or ended; ``None`` if it never had one), the chips of
    the players asked for (zero where they have no account) and the names of the people
    in that round."""

    round: Round | None
    balances: dict[int, Balance]
    names: list[UserName]


def _rows(value: Any) -> list[Any]:
    """A JSON array column: text on both drivers, ``NULL`` for no rows."""
    if value is None:
        return []
    parsed: list[Any] = json.loads(value) if isinstance(value, str) else value
    return parsed


class TableReads:
    """The live feed's read of a group, outside any unit of work."""

    def __init__(self, db: Database, settings_of: Callable[[str], Settings]) -> None:
        self.db = db
        self.settings_of = settings_of

    async def table(self, chat_id: int, user_ids: Sequence[int]) -> TableRead:
        """The group's table with these players' chips, in one statement."""
        params = {**round_sql.NOBODY, "chat_id": chat_id, "users": json.dumps(list(user_ids))}
        row = await self.db.read_one(_SQLITE_TABLE, _POSTGRES_TABLE, params)
        state = None
        if row is not None and row["id"] is not None:
            whole = parse_read(row, None, self.settings_of).round
            assert isinstance(whole, Round)  # the read is by id: whole
            state = whole
        kinds: dict[int, dict[str, int]] = {user_id: {} for user_id in user_ids}
        for user_id, kind, amount in _rows(row["viewer_chips"] if row is not None else None):
            kinds[int(user_id)][kind] = int(amount)
        balances = {
            user_id: Balance(amounts.get("available", 0), amounts.get("held", 0))
            for user_id, amounts in kinds.items()
        }
        names = [
            (int(person[0]), person[1], person[2], person[3])
            for person in _rows(row["people"] if row is not None else None)
        ]
        return TableRead(state, balances, names)
