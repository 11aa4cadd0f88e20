"""The console's sessions on the server: started at sign-in, checked on every request,
deleted at sign-out or when an operator ends a user's sessions. A signed cookie alone no
longer signs in, so a copy of one stops working when its session ends.

Expired rows are deleted as each session starts: the table holds at most the sessions
started within one session's lifetime.
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import ConsoleSessionRow


class ConsoleSessions:
    """Live console sessions by id (see the module's docstring)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def start(
        self, session_id: str, *, user_id: int, now_ms: int, expires_at_ms: int
    ) -> None:
        """Record a new session; forget those that have expired."""
        await self._prune(now_ms)
        await self.session.execute(
            insert(ConsoleSessionRow).values(
                session_id=session_id,
                user_id=user_id,
                started_at_ms=now_ms,
                expires_at_ms=expires_at_ms,
            )
        )

    async def is_live(self, session_id: str, *, user_id: int, now_ms: int) -> bool:
        """Whether the session was started for ``user_id``, has not ended and not expired."""
        found = await self.session.scalar(
            select(ConsoleSessionRow.session_id).where(
                ConsoleSessionRow.session_id == session_id,
                ConsoleSessionRow.user_id == user_id,
                ConsoleSessionRow.expires_at_ms > now_ms,
            )
        )
        return found is not None

    async def live_count(self, user_id: int, *, now_ms: int) -> int:
        """How many sessions of ``user_id`` are live."""
        count = await self.session.scalar(
            select(func.count())
            .select_from(ConsoleSessionRow)
            .where(ConsoleSessionRow.user_id == user_id, ConsoleSessionRow.expires_at_ms > now_ms)
        )
        return int(count or 0)

    async def end(self, session_id: str) -> None:
        """End one session (signing out); nothing if it has ended already."""
        await self.session.execute(
            delete(ConsoleSessionRow).where(ConsoleSessionRow.session_id == session_id)
        )

    async def end_all(self, user_id: int, *, now_ms: int) -> int:
        """End every session of ``user_id``; how many were live. Forgets expired ones."""
        result = await self.session.execute(
            delete(ConsoleSessionRow).where(
                ConsoleSessionRow.user_id == user_id, ConsoleSessionRow.expires_at_ms > now_ms
            )
        )
        await self._prune(now_ms)
        return int(getattr(result, "rowcount", 0) or 0)

    async def _prune(self, now_ms: int) -> None:
        await self.session.execute(
            delete(ConsoleSessionRow).where(ConsoleSessionRow.expires_at_ms <= now_ms)
        )
