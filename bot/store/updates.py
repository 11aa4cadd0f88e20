"""Processed Telegram updates in one unit of work: recorded in the transaction of their
effect, keyed by bot and update id, and pruned after a window."""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.db import dialect_insert
from bot.store.errors import AlreadyProcessed
from bot.store.models import ProcessedUpdate

#: How long an update id is remembered. Telegram redelivers an unconfirmed update for up to
#: 24 hours and starts its ids afresh after a week without updates: a record must outlive
#: the first and be gone before the second.
RETENTION_MS = 2 * 24 * 3_600_000


class ProcessedUpdates:
    """The updates a bot has applied."""

    def __init__(self, session: AsyncSession, bot_id: int) -> None:
        self.session = session
        self.bot_id = bot_id

    async def claim(self, update_id: int | None, now_ms: int) -> None:
        """Record the update as processed; raises ``AlreadyProcessed`` if it was (the
        caller's transaction must then be rolled back). ``None`` (no update) records
        nothing."""
        if update_id is None:
            return
        inserted = await self.session.execute(
            dialect_insert(self.session, ProcessedUpdate)
            .values(bot_id=self.bot_id, update_id=update_id, processed_at_ms=now_ms)
            .on_conflict_do_nothing()
        )
        if not inserted.rowcount:  # type: ignore[attr-defined]
            raise AlreadyProcessed(update_id)

    async def prune(self, now_ms: int, retention_ms: int = RETENTION_MS) -> int:
        """Forget updates processed more than ``retention_ms`` ago (every bot's); how many."""
        pruned = await self.session.execute(
            delete(ProcessedUpdate).where(ProcessedUpdate.processed_at_ms < now_ms - retention_ms)
        )
        return int(pruned.rowcount)  # type: ignore[attr-defined]
