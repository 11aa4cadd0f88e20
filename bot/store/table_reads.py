"""The reads of a group's table that the Mini App's live feed takes at every change: where
the table stands, the chips of the players watching it and the names it shows.

Each is one statement on the hot path's connections (``Database.read_one``/``read_all``:
SQLite's reader thread, PostgreSQL's bare driver), with no SQLAlchemy session around it:
a busy group is read many times a minute, for everyone watching it at once. A list of
users goes as one JSON array, which both databases unpack (``json_each``,
``jsonb_array_elements_text``), so that the statement is the same for any number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.engine.round import AccountKind
from bot.store.db import Database
from bot.store.ledger import Balance
from bot.store.statements import Positional

_LATEST_ROUND = "SELECT id, version FROM rounds WHERE chat_id = :chat_id ORDER BY id DESC LIMIT 1"
_KINDS = f"('{AccountKind.AVAILABLE.value}', '{AccountKind.HELD.value}')"
_BALANCES = (
    "SELECT user_id, kind, balance FROM accounts WHERE chat_id = :chat_id "
    f"AND kind IN {_KINDS} AND user_id IN ({{users}})"
)
_NAMES = "SELECT id, first_name, username, last_name FROM users WHERE id IN ({users})"
_SQLITE_USERS = "SELECT value FROM json_each(:users)"
_POSTGRES_USERS = "SELECT CAST(jsonb_array_elements_text(CAST(:users AS jsonb)) AS bigint)"

_STATEMENTS = {
    name: (sql.format(users=_SQLITE_USERS), Positional.of(sql.format(users=_POSTGRES_USERS)))
    for name, sql in (("balances", _BALANCES), ("names", _NAMES))
}
_LATEST_ROUND_POSTGRES = Positional.of(_LATEST_ROUND)

#: A user as the users table knows them: id, first name, username, last name.
UserName = tuple[int, str, str | None, str | None]


class TableReads:
    """The live feed's reads of a group, outside any unit of work."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def latest_round(self, chat_id: int) -> tuple[int, int] | None:
        """The id and version of the group's latest round, open or ended, if any."""
        row = await self.db.read_one(_LATEST_ROUND, _LATEST_ROUND_POSTGRES, {"chat_id": chat_id})
        return None if row is None else (int(row[0]), int(row[1]))

    async def balances(self, chat_id: int, user_ids: Sequence[int]) -> dict[int, Balance]:
        """Each player's chips in the group (zero where they have no account)."""
        sqlite, postgres = _STATEMENTS["balances"]
        params = {"chat_id": chat_id, "users": json.dumps(list(user_ids))}
        kinds: dict[int, dict[str, int]] = {user_id: {} for user_id in user_ids}
        for user_id, kind, amount in await self.db.read_all(sqlite, postgres, params):
            kinds[int(user_id)][kind] = int(amount)
        return {
            user_id: Balance(amounts.get("available", 0), amounts.get("held", 0))
            for user_id, amounts in kinds.items()
        }

    async def names(self, user_ids: Sequence[int]) -> list[UserName]:
        """What the bot knows of these users."""
        if not user_ids:
            return []
        sqlite, postgres = _STATEMENTS["names"]
        rows = await self.db.read_all(sqlite, postgres, {"users": json.dumps(list(user_ids))})
        return [(int(row[0]), row[1], row[2], row[3]) for row in rows]
