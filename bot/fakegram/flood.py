"""Flood control: Telegram's 429 once a group chat got too many messages in a minute.

Off unless ``group_message_limit_per_minute`` is given; the 429s a ``FaultMix`` injects
at random are ``bot.fakegram.faults``'s.
"""

from __future__ import annotations

import math
import time
from collections import deque

from bot.fakegram.params import ApiError

_RATE_WINDOW_SECONDS = 60.0


class FloodControl:
    """Counts the bot's sends per group chat over the last minute, and refuses one over
    ``limit`` with a 429 whose ``retry_after`` is when the oldest send leaves the minute."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._recent_sends: dict[int, deque[float]] = {}

    def check(self, chat_id: int) -> None:
        """Count a send to the chat, or raise the 429 Telegram would answer it with."""
        if self.limit is None or chat_id >= 0:
            return
        recent = self._recent_sends.setdefault(chat_id, deque())
        now = time.monotonic()
        while recent and recent[0] <= now - _RATE_WINDOW_SECONDS:
            recent.popleft()
        if len(recent) >= self.limit:
            retry_after = max(1, math.ceil(recent[0] + _RATE_WINDOW_SECONDS - now))
            raise ApiError(
                429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
            )
        recent.append(now)
