"""A group's share of Telegram's limit on messages a minute, counted in the database
(``bot.store.group_sends``): every worker of the bot, and each after a restart, takes
its sends from the same slots."""

from __future__ import annotations

from collections.abc import Callable

from bot.store.db import Database
from bot.store.group_sends import GroupSendSlots

#: How much later than its slot was taken a send may reach the group before the slot is
#: moved to when it did: a send's round trip.
LATE_MS = 500


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

    async def take(self, chat_id: int) -> tuple[float, int]:
        """Take a send to the group now: 0 and when it was taken (milliseconds), or the
        seconds until one may be taken and 0."""
        now = self.clock()
        wait_ms = await self.slots.take(chat_id, now)
        return (wait_ms / 1000, 0) if wait_ms else (0.0, now)

    async def delivered(self, chat_id: int, taken_ms: int) -> None:
        """The send taken at ``taken_ms`` reached the group now: if that was more than
        ``LATE_MS`` later, its slot counts from now (as Telegram counts it)."""
        now = self.clock()
        if now - taken_ms > LATE_MS:
            await self.slots.retime(chat_id, taken_ms, now)
