"""A group's slots in Telegram's limit of about twenty messages a minute, as a send takes
one: this process's own count first (what it sent lately, ``SendBudget``), then the
count every worker of the bot shares (``SharedSends``: in the database, across restarts
too). What the shared count says this process's count learns (the minute is spent until
then). A send that reached the group well after its slot was taken (it waited for its
turn, or was tried again) has its slot counted from then, as Telegram counts it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from bot.telegram.budget import SendBudget

log = logging.getLogger(__name__)

#: Told how many seconds a message will wait for its group's slot, before it waits.
Waiting = Callable[[float], Awaitable[None]]


class SharedSends(Protocol):
    """The groups' shares of Telegram's limit as every worker counts them
    (``bot.service.group_sends.GroupSends``)."""

    async def take(self, chat_id: int) -> tuple[float, int]:
        """Take a send to the group now: (0, when it was taken), or (the seconds until
        one may be taken, 0)."""
        ...

    async def delivered(self, chat_id: int, taken_ms: int) -> None:
        """The send taken at ``taken_ms`` reached the group now."""
        ...


@dataclass(frozen=True, slots=True)
class Slot:
    """A send's slot: when this process's count took it (its clock), and when the shared
    count did (milliseconds; 0: it did not)."""

    taken_at: float
    shared_ms: int = 0


#: A private chat's send, which takes no group slot.
NO_SLOT = Slot(0.0)


class GroupSlots:
    """Takes and gives back groups' slots (see the module)."""

    def __init__(self, own: SendBudget, shared: SharedSends | None = None) -> None:
        self.own = own
        self.shared = shared
        self._shared_down = False

    async def take(self, chat_id: int, waiting: Waiting | None = None) -> Slot:
        """Wait until the group may be sent one more message, and take its slot;
        ``waiting`` hears of each wait before it begins."""
        if chat_id >= 0:  # a private chat: only the overall limit applies
            return NO_SLOT
        while True:
            wait = self.own.wait(chat_id)
            shared_ms = 0
            if wait <= 0:
                wait, shared_ms = await self._take_shared(chat_id)
                if wait > 0:
                    self.own.spent_for(chat_id, wait)
            if wait <= 0:
                break
            if waiting is not None:
                await waiting(wait)
            await asyncio.sleep(wait)
        return Slot(self.own.take(chat_id), shared_ms)

    async def delivered(self, chat_id: int, slot: Slot) -> None:
        """The send of ``slot`` reached the group now."""
        if slot is NO_SLOT:
            return
        self.own.retime(chat_id, slot.taken_at)
        if slot.shared_ms and self.shared is not None:
            try:
                await self.shared.delivered(chat_id, slot.shared_ms)
            except Exception as error:  # the database is down: counted from its take
                log.info("chat %s: a send's slot not moved to its delivery: %s", chat_id, error)

    async def _take_shared(self, chat_id: int) -> tuple[float, int]:
        """Take a send from the count every worker shares. Without the database (down),
        this process's own count alone holds."""
        if self.shared is None:
            return 0.0, 0
        try:
            taken = await self.shared.take(chat_id)
        except Exception as error:
            if not self._shared_down:
                log.warning("the groups' shared send count is unavailable: %s", error)
            self._shared_down = True
            return 0.0, 0
        self._shared_down = False
        return taken
