"""What the sweep finds due every second: open rounds whose deadline passed and open
tables whose pause is over (``DueLookup``)."""

from __future__ import annotations

from bot.store.chat_bots import served, served_by
from bot.store.db import Database
from bot.store.models import OPEN_PHASES_SQL
from bot.store.statements import Positional

#: Open rounds whose deadline passed, most overdue first: a range of the index on
#: (phase, deadline_ms) for each open phase; of the bot's groups.
_DUE_ROUNDS = (
    f"SELECT id, chat_id FROM rounds WHERE {OPEN_PHASES_SQL} AND deadline_ms <= :now "
    f"AND {served('rounds.chat_id')} ORDER BY deadline_ms"
)
_DUE_ROUNDS_POSTGRES = Positional.of(_DUE_ROUNDS)
#: ``is_open`` bare: SQLite stores booleans as 0 and 1, PostgreSQL would refuse ``= 1``.
_DUE_CHATS = (
    f"SELECT id FROM chats WHERE is_open AND next_round_at_ms <= :now AND {served_by('chats')}"
)
_DUE_CHATS_POSTGRES = Positional.of(_DUE_CHATS)


class DueLookup:
    """The sweep's two looks for what is due: one statement each on a connection of the
    hot path's (SQLite: the reader's thread; PostgreSQL: the bare driver's pool), no
    transaction of SQLAlchemy's around it. Through a unit of work each cost a session,
    several thread hops and the statement's compilation, every second, to find nothing
    nearly every time."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id

    async def rounds(self, now_ms: int) -> list[tuple[int, int]]:
        """Open rounds whose deadline has passed: (round id, chat id), most overdue first."""
        params = {"now": now_ms, "bot_id": self.bot_id}
        rows = await self.db.read_all(_DUE_ROUNDS, _DUE_ROUNDS_POSTGRES, params)
        return [(round_id, chat_id) for round_id, chat_id in rows]

    async def chat_ids(self, now_ms: int) -> list[int]:
        """Open tables whose pause after a settled round is over."""
        params = {"now": now_ms, "bot_id": self.bot_id}
        rows = await self.db.read_all(_DUE_CHATS, _DUE_CHATS_POSTGRES, params)
        return [chat_id for (chat_id,) in rows]
