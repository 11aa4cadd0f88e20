"""Sign-in attempts per client address: at most ``limit`` in any ``window`` seconds.

In memory, per process: it slows a guesser down (links and widget data are signed, so
guessing is hopeless anyway) without a table written on every attempt. Bounded: the least
recently seen addresses are forgotten first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from cachetools import LRUCache

#: Addresses remembered at once.
ADDRESSES_REMEMBERED = 10_000


class AttemptLimiter:
    """Counts attempts per address in a sliding window (see the module's docstring)."""

    def __init__(self, clock: Callable[[], float], *, limit: int = 10, window: float = 60.0):
        self.clock = clock
        self.limit = limit
        self.window = window
        self._attempts: LRUCache[str, deque[float]] = LRUCache(ADDRESSES_REMEMBERED)

    def allow(self, address: str) -> bool:
        """Count an attempt from ``address``; ``False`` once it has had ``limit`` in the
        window (a refused attempt is not counted)."""
        now = self.clock()
        times = self._attempts.get(address)
        if times is None:
            times = deque()
            self._attempts[address] = times
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True
