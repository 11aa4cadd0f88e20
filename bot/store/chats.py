"""Chats in one unit of work: a group's table (open or closed), its settings and when its
next round is due; and the look at one chat that every group's settings take, outside any
unit of work (``ChatLookup``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.chat_bots import MOVE
from bot.store.db import Database, dialect_insert
from bot.store.models import Chat
from bot.store.statements import Positional

#: Longest title kept (the column's size).
TITLE_LENGTH = 256


@dataclass(frozen=True, slots=True)
class ChatRecord:
    """A chat as stored; ``settings`` holds only what its admins changed."""

    id: int
    title: str
    is_open: bool
    settings: dict[str, Any]
    next_round_at_ms: int | None


_COLUMNS = (Chat.id, Chat.title, Chat.is_open, Chat.settings, Chat.next_round_at_ms)


class ChatRepository:
    """Chats in one unit of work."""

    def __init__(self, session: AsyncSession, bot_id: int = 0) -> None:
        self.session = session
        #: A group created here is bound to this bot (``bot.store.chat_bots``).
        self.bot_id = bot_id

    async def get(self, chat_id: int) -> ChatRecord | None:
        """The chat, if the bot has seen it."""
        row = (await self.session.execute(select(*_COLUMNS).where(Chat.id == chat_id))).first()
        return None if row is None else ChatRecord(*row)

    async def get_or_create(self, chat_id: int, now_ms: int) -> ChatRecord:
        """The chat, created (closed, default settings) on its first command."""
        found = await self.get(chat_id)
        if found is not None:
            return found
        # Two first commands in a new chat at once: the second insert is a no-op.
        await self.session.execute(
            dialect_insert(self.session, Chat)
            .values(
                id=chat_id,
                title="",
                is_group=chat_id < 0,
                is_open=False,
                settings={},
                created_at_ms=now_ms,
                bot_id=self.bot_id,
            )
            .on_conflict_do_nothing()
        )
        created = await self.get(chat_id)
        assert created is not None
        return created

    async def bot_of(self, chat_id: int) -> int | None:
        """The bot that serves the chat (``None``: none yet, or no such chat)."""
        found = await self.session.scalar(select(Chat.bot_id).where(Chat.id == chat_id))
        return None if found is None else int(found)

    async def move_here(self, chat_id: int) -> bool:
        """Bind the chat to this bot unless a round's messages are still on their way to
        it (``bot.store.chat_bots.MOVE``): whether it moved."""
        params = {"chat_id": chat_id, "bot_id": self.bot_id}
        moved = await self.session.execute(text(MOVE), params)
        return int(moved.rowcount) == 1  # type: ignore[attr-defined]

    async def change(self, chat_id: int, **values: Any) -> None:
        """Set columns of the chat: ``title``, ``is_open``, ``settings``,
        ``next_round_at_ms``."""
        if "title" in values:
            values["title"] = values["title"][:TITLE_LENGTH]
        await self.session.execute(update(Chat).where(Chat.id == chat_id).values(**values))


#: A chat as ``ChatRecord`` holds it (the settings as text: SQLite stores JSON as text,
#: and asyncpg gives PostgreSQL's ``json`` as text too, so both parse alike).
_CHAT = (
    "SELECT id, title, is_open, CAST(settings AS text) AS settings, next_round_at_ms "
    "FROM chats WHERE id = :chat_id"
)
_CHAT_POSTGRES = Positional.of(_CHAT)


class ChatLookup:
    """The read of a chat that a group's settings take (every render and reply needs
    them, read again when the shell's copy runs out): one round trip on a connection of
    the hot path's (SQLite: the reader's thread; PostgreSQL: the bare driver's pool), no
    transaction of SQLAlchemy's around it. What ``ChatRepository.get`` gives in a unit of
    work."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, chat_id: int) -> ChatRecord | None:
        """The chat, if the bot has seen it."""
        row = await self.db.read_one(_CHAT, _CHAT_POSTGRES, {"chat_id": chat_id})
        if row is None:
            return None
        chat_id, title, is_open, settings, next_round_at_ms = row
        return ChatRecord(chat_id, title, bool(is_open), json.loads(settings), next_round_at_ms)
