"""Which bot serves each group (``chats.bot_id``): several bots (tokens) on one database
each serve their own groups (``docs/operator.md``, "Several bots").

A group is bound to the bot that creates its row or first hears from it (``bind``); a
group with no bot yet (one from before bots were bound, migration 0022) is served by any.
The sweep's reads take only the rounds and tables of their bot's groups (``SERVED``).
An admin moves a group to another bot between rounds (``MOVE``, in the unit of work that
audits it): its chips, ledger and rounds stay the group's. SQL text, as the sweep's other
reads (``bot.store.deliveries``): they run on the bare drivers, which take text.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, exists, or_
from sqlalchemy.orm import InstrumentedAttribute

from bot.store.db import Database
from bot.store.models import OPEN_PHASES_SQL, REPLACED_BOARD_SQL, UNCLOSED_SQL, Chat
from bot.store.statements import Positional


def served_by(chats: str) -> str:
    """A condition (SQL) that the ``chats`` row named ``chats`` is served by ``:bot_id``
    or by no bot yet."""
    return f"({chats}.bot_id = :bot_id OR {chats}.bot_id IS NULL)"


def served(chat_id_column: str) -> str:
    """A condition (SQL) that the chat ``chat_id_column`` names is served by ``:bot_id``
    or by no bot yet."""
    return (
        f"EXISTS (SELECT 1 FROM chats AS served WHERE served.id = {chat_id_column}"
        f" AND {served_by('served')})"
    )


def served_clause(chat_id: InstrumentedAttribute[int], bot_id: int) -> ColumnElement[bool]:
    """``served`` as SQLAlchemy's expression, for the unit of work's queries."""
    return exists().where(Chat.id == chat_id, or_(Chat.bot_id == bot_id, Chat.bot_id.is_(None)))


#: Binds an unbound group; a bound one keeps its bot.
_BIND = "UPDATE chats SET bot_id = :bot_id WHERE id = :chat_id AND bot_id IS NULL"
_BOT_OF = "SELECT bot_id FROM chats WHERE id = :chat_id"
#: Moves a group to ``:bot_id`` while nothing of a round is on its way to the group: its
#: last round ended, its results out, its board's buttons off and no replaced board left
#: to take down (the old bot's messages, which the new bot could not edit).
MOVE = f"""
UPDATE chats SET bot_id = :bot_id
WHERE id = :chat_id AND NOT EXISTS (
    SELECT 1 FROM rounds
    WHERE id = (SELECT max(id) FROM rounds WHERE chat_id = :chat_id)
      AND ({OPEN_PHASES_SQL} OR {UNCLOSED_SQL} OR {REPLACED_BOARD_SQL}
           OR announced_at_ms IS NULL))
"""
_POSTGRES = {statement: Positional.of(statement) for statement in (_BIND, _BOT_OF)}


class ChatBots:
    """Binds and looks up the bot of a group: a statement each on the hot path's
    connections (``Database.write_one``, ``read_one``), no unit of work around it."""

    def __init__(self, db: Database, *, bot_id: int) -> None:
        self.db = db
        self.bot_id = bot_id

    async def bind(self, chat_id: int) -> int | None:
        """The group's bot, this one if the group had none (``None``: the group has no row
        yet, so the bot that creates it will be). A bound group costs one read."""
        params = {"chat_id": chat_id, "bot_id": self.bot_id}
        row = await self.db.read_one(_BOT_OF, _POSTGRES[_BOT_OF], params)
        if row is not None and row[0] is None:
            # Another bot may bind it first: what the row says after is the answer.
            await self.db.write_one(_BIND, _POSTGRES[_BIND], params)
            row = await self.db.read_one(_BOT_OF, _POSTGRES[_BOT_OF], params)
        return None if row is None or row[0] is None else int(row[0])
