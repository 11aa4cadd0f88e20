"""Counting what the bot sends to each group, against Telegram's limit of about 20
messages a minute in a group."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from cachetools import TTLCache

#: Telegram's limit on messages a bot sends to one group a minute.
GROUP_SENDS_PER_MINUTE = 20
#: Groups whose recent sends are counted at once (a group quiet for a minute has none).
GROUPS_COUNTED = 100_000


class SendBudget:
    """Sends per chat within a sliding window: ``take`` one if fewer than ``limit`` went
    out in the last ``seconds``, else say how long until one may. A chat quiet for the
    whole window is forgotten."""

    def __init__(
        self, limit: int, seconds: float = 60.0, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.seconds = seconds
        self.clock = clock
        self._sent: TTLCache[int, deque[float]] = TTLCache(GROUPS_COUNTED, seconds, timer=clock)

    def __len__(self) -> int:
        return len(self._sent)

    def wait(self, chat_id: int) -> float:
        """Seconds until the chat may be sent one more (0: now)."""
        now = self.clock()
        sent = self._sent.get(chat_id)
        if sent is None:
            return 0.0
        while sent and sent[0] <= now - self.seconds:
            sent.popleft()
        return 0.0 if len(sent) < self.limit else sent[0] + self.seconds - now

    def room(self, chat_id: int) -> int:
        """How many more the chat may be sent now."""
        if self.wait(chat_id) > 0:
            return 0
        sent = self._sent.get(chat_id)
        return self.limit - (len(sent) if sent is not None else 0)

    def take(self, chat_id: int) -> None:
        """Count one send to the chat now."""
        sent = self._sent.get(chat_id) or deque()
        sent.append(self.clock())
        self._sent[chat_id] = sent  # (re)set: the entry lives a window past its last send
