"""Players' client seeds (``/seed``) in one unit of work: one per player, for every group."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import ClientSeedRow

#: SQLite and PostgreSQL both read this upsert.
_UPSERT = text(
    "INSERT INTO client_seeds (user_id, seed, updated_at_ms) VALUES (:user_id, :seed, :now)"
    " ON CONFLICT (user_id) DO UPDATE SET seed = excluded.seed,"
    " updated_at_ms = excluded.updated_at_ms"
)


class ClientSeeds:
    """Players' client seeds in one unit of work."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get(self, user_id: int) -> str | None:
        """The player's client seed, if they set one."""
        seed: str | None = await self.session.scalar(
            select(ClientSeedRow.seed).where(ClientSeedRow.user_id == user_id)
        )
        return seed

    async def of(self, user_ids: Iterable[int]) -> dict[int, str]:
        """The client seeds of those of ``user_ids`` who set one, by user."""
        wanted = sorted(set(user_ids))
        if not wanted:
            return {}
        rows = await self.session.execute(
            select(ClientSeedRow.user_id, ClientSeedRow.seed).where(
                ClientSeedRow.user_id.in_(wanted)
            )
        )
        return {user_id: seed for user_id, seed in rows}

    async def set(self, user_id: int, seed: str, now_ms: int) -> None:
        """Set (or replace) the player's client seed, in one statement: two at once (the
        same player in two groups) both succeed, the later one kept."""
        await self.session.execute(_UPSERT, {"user_id": user_id, "seed": seed, "now": now_ms})
