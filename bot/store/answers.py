"""Answers kept until Telegram has them (``models.KeptAnswer``): written when an answer
has to wait for its group's share of Telegram's limit, deleted once sent, claimed by
the worker sending it for a while that it renews; once a claim ran out (its worker
died), another worker, or the restarted one, takes the answers over.

The writes go through SQLAlchemy Core in a unit of work, compiled for either dialect,
but for three that are one statement on the hot path's connections (as ``bot.store.due``'s
looks): the sweep's look for answers whose claim ran out, because it runs every few
seconds and finds nothing nearly every time, and keeping the answers and forgetting them
once sent, because while the groups' budgets are tight nearly every answer waits, so is
kept and forgotten (through a unit of work, keeping one cost PostgreSQL's bot several
milliseconds of its event loop: ``bench/bench_real_groups.py --postgres --profile``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import update

from bot.store.db import Database
from bot.store.models import KeptAnswer
from bot.store.statements import Positional

#: Answers taken over at once (the rest at the next look).
TAKE_OVER_AT_MOST = 500

_UNCLAIMED = (
    "SELECT id FROM kept_answers WHERE bot_id = :bot_id AND claimed_until_ms <= :now "
    f"ORDER BY id LIMIT {TAKE_OVER_AT_MOST}"
)
_UNCLAIMED_POSTGRES = Positional.of(_UNCLAIMED)
_KEEP = (
    "INSERT INTO kept_answers "
    "(bot_id, chat_id, name, text, reply_to, created_at_ms, claimed_until_ms) "
    "VALUES (:bot_id, :chat_id, :name, :text, :reply_to, :created_at_ms, :claimed_until_ms) "
    "RETURNING id"
)
_KEEP_POSTGRES = Positional.of(_KEEP)
_FORGET = "DELETE FROM kept_answers WHERE id = :id"
_FORGET_POSTGRES = Positional.of(_FORGET)


@dataclass(frozen=True, slots=True)
class KeptRecord:
    """A kept answer as read back: its id, chat, whom it answers, text, what it replies
    to, and when it was first written."""

    id: int
    chat_id: int
    name: str
    text: str
    reply_to: int
    created_at_ms: int


@dataclass(frozen=True, slots=True)
class NewAnswer:
    """An answer to keep: its chat, whom it answers, its text, what it replies to."""

    chat_id: int
    name: str
    text: str
    reply_to: int


class AnswerRecords:
    """The kept answers of one bot."""

    def __init__(self, db: Database, *, bot_id: int) -> None:
        self.db = db
        self.bot_id = bot_id

    async def keep(self, answers: Sequence[NewAnswer], *, now_ms: int, until_ms: int) -> list[int]:
        """Write ``answers``, claimed until ``until_ms``; their ids, in their order."""
        if not answers:
            return []
        rows = [
            {
                "bot_id": self.bot_id,
                "chat_id": answer.chat_id,
                "name": answer.name,
                "text": answer.text,
                "reply_to": answer.reply_to,
                "created_at_ms": now_ms,
                "claimed_until_ms": until_ms,
            }
            for answer in answers
        ]
        ids: list[int] = await self.db.write_each_returning(_KEEP, _KEEP_POSTGRES, rows)
        return ids

    async def sent(self, ids: Sequence[int]) -> None:
        """Telegram has these answers (or refused them for good): forget them, on the hot
        path's connections (while the groups' budgets are tight, every answer is kept and
        forgotten: through a unit of work, forgetting cost more than sending it)."""
        if ids:
            await self.db.write_each(_FORGET, _FORGET_POSTGRES, [{"id": i} for i in ids])

    async def renew(self, ids: Sequence[int], *, until_ms: int) -> None:
        """Hold these answers until ``until_ms``."""
        if ids:
            statement = (
                update(KeptAnswer)
                .where(KeptAnswer.id.in_(ids))
                .values(claimed_until_ms=until_ms)
                .execution_options(synchronize_session=False)
            )
            async with self.db.transaction() as session:
                await session.execute(statement)

    async def unclaimed(self, now_ms: int) -> list[int]:
        """The ids of the answers whose claim ran out by ``now_ms``, oldest first."""
        params = {"bot_id": self.bot_id, "now": now_ms}
        rows = await self.db.read_all(_UNCLAIMED, _UNCLAIMED_POSTGRES, params)
        return [row_id for (row_id,) in rows]

    async def take_over(
        self, ids: Sequence[int], *, now_ms: int, until_ms: int
    ) -> list[KeptRecord]:
        """Claim those of ``ids`` whose claim still ran out (no other worker took them
        meanwhile) until ``until_ms``; what they are, oldest first."""
        if not ids:
            return []
        statement = (
            update(KeptAnswer)
            .where(KeptAnswer.id.in_(ids), KeptAnswer.claimed_until_ms <= now_ms)
            .values(claimed_until_ms=until_ms)
            .returning(
                KeptAnswer.id,
                KeptAnswer.chat_id,
                KeptAnswer.name,
                KeptAnswer.text,
                KeptAnswer.reply_to,
                KeptAnswer.created_at_ms,
            )
            .execution_options(synchronize_session=False)
        )
        async with self.db.transaction() as session:
            rows = (await session.execute(statement)).all()
        return sorted((KeptRecord(*row) for row in rows), key=lambda record: record.id)
