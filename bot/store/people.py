"""Users and the admin audit log in one unit of work."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.db import dialect_insert
from bot.store.models import AuditEntry, User


class UserRepository:
    """Users the bot has seen."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def store(self, user_id: int, columns: dict[str, Any]) -> None:
        """Create or update a user (``username``, ``first_name``, ``last_name``,
        ``seen_at_ms``); two first commands of a new user at once both go through."""
        statement = dialect_insert(self.session, User).values(id=user_id, **columns)
        await self.session.execute(
            statement.on_conflict_do_update(index_elements=[User.id], set_=columns)
        )


class AuditLog:
    """Admin actions: who, what, and the details."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def append(
        self, chat_id: int, actor_id: int, action: str, now_ms: int, details: dict[str, Any]
    ) -> None:
        """Record an admin action."""
        self.session.add(
            AuditEntry(
                chat_id=chat_id,
                actor_id=actor_id,
                action=action,
                details=details,
                created_at_ms=now_ms,
            )
        )
