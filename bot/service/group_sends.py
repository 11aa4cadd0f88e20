"""A group's share of Telegram's limit on messages a minute, counted in the database
(``bot.store.group_sends``): every worker of the bot, and each after a restart, takes
its sends from the same slots."""

from __future__ import annotations

from collections.abc import Callable

from bot.store.db import Database
from bot.store.group_sends import GroupSendSlots


class GroupSends:
    """Sends to groups, ``limit`` a group per ``seconds``, shared by the bot's workers."""

    def __init__(
        self,
        db: Database,
        clock: Callable[[], int],
        *,
        bot_id: int,
        limit: int,
        seconds: float,
    ) -> None:
        self.slots = GroupSendSlots(db, bot_id=bot_id, slots=limit, window_ms=round(seconds * 1000))
        self.clock = clock

    async def take(self, chat_id: int) -> float:
        """Take a send to the group now: 0, or the seconds until one may be taken."""
        return await self.slots.take(chat_id, self.clock()) / 1000
