"""Players' totals in a group (``/stats``) and its leaders by net (``/top``).

Each read costs the same however long the group's history: a player's totals are one row
of ``player_stats`` (kept by a trigger, migration 0010), the all-time leaders the first
rows of ix_player_stats_chat_id_net read from the top, and the leaders of the last days
the outcomes of the rounds that ended since then, found through
ix_rounds_chat_id_ended_at_ms.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import OutcomeRow, PlayerStats, RoundRow
from bot.store.round_writes import HOUSE_USER_ID


@dataclass(frozen=True, slots=True)
class PlayerTotals:
    """A player's totals in a group (see ``PlayerStats``); amounts in cents."""

    rounds: int
    won: int
    net: int
    biggest_win: int
    best_multiplier: int
    best_outcome: int
    best_ruleset: str


@dataclass(frozen=True, slots=True)
class Leader:
    """A player and their net over a period, in cents."""

    user_id: int
    net: int


class StatsQueries:
    """The reads of ``/stats`` and ``/top`` in one unit of work."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def player(self, chat_id: int, user_id: int) -> PlayerTotals | None:
        """A player's totals in a group, or None before their first settled round."""
        row = (
            await self.session.execute(
                select(
                    PlayerStats.rounds,
                    PlayerStats.won,
                    PlayerStats.net,
                    PlayerStats.biggest_win,
                    PlayerStats.best_multiplier,
                    PlayerStats.best_outcome,
                    PlayerStats.best_ruleset,
                ).where(PlayerStats.chat_id == chat_id, PlayerStats.user_id == user_id)
            )
        ).first()
        return None if row is None else PlayerTotals(*row)

    async def leaders(self, chat_id: int, limit: int) -> list[Leader]:
        """The group's ``limit`` best nets of all time, best first."""
        rows = await self.session.execute(
            select(PlayerStats.user_id, PlayerStats.net)
            .where(PlayerStats.chat_id == chat_id)
            .order_by(PlayerStats.net.desc(), PlayerStats.user_id.desc())
            .limit(limit)
        )
        return [Leader(user_id, net) for user_id, net in rows.tuples()]

    async def leaders_since(self, chat_id: int, since_ms: int, limit: int) -> list[Leader]:
        """The group's ``limit`` best nets over the rounds that ended at ``since_ms`` or
        later, best first."""
        net = func.sum(OutcomeRow.net)
        rows = await self.session.execute(
            select(OutcomeRow.user_id, net)
            .join(RoundRow, RoundRow.id == OutcomeRow.round_id)
            .where(
                RoundRow.chat_id == chat_id,
                RoundRow.ended_at_ms >= since_ms,
                OutcomeRow.user_id != HOUSE_USER_ID,
            )
            .group_by(OutcomeRow.user_id)
            .order_by(net.desc(), OutcomeRow.user_id.desc())
            .limit(limit)
        )
        return [Leader(user_id, int(total)) for user_id, total in rows.tuples()]
