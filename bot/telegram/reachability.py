"""Whether Telegram answers: after an outage, the calls waiting to be tried again go as
soon as it answers again.

A call that failed on the way waits longer after each failure (``bot.telegram.retries``),
so after an outage of a few seconds each waits up to ``Retrying.longest_wait`` more once
Telegram is back, and the boards, results and answers of every group come that much
late. The transport tells this of every answer and every failure on the way
(``bot.telegram.http``); the first answer after an outage (often the poller's, which
tries every second) wakes every call waiting out a failure. Written by hand: it is a
fact of this bot's own transport, which no library keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

#: How long without any answer, a call having failed, counts as an outage: in a Telegram
#: that fails some calls and answers others nobody is woken, and a call that keeps failing
#: waits as long as it would.
OUTAGE_SECONDS = 2.0


class Reachability:
    """Wakes the calls waiting to be tried again when Telegram answers after an outage
    (see the module)."""

    def __init__(
        self,
        *,
        outage_seconds: float = OUTAGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.outage_seconds = outage_seconds
        self.clock = clock
        self._answered_at = clock()
        self._failing = False
        self._back: asyncio.Event | None = None

    def answered(self) -> None:
        """Telegram answered a call (whatever it said)."""
        now = self.clock()
        if self._failing:
            self._failing = False
            if now - self._answered_at >= self.outage_seconds and self._back is not None:
                self._back.set()
                self._back = None
        self._answered_at = now

    def failed(self) -> None:
        """A call failed on the way (no answer, or a proxy's error page)."""
        self._failing = True

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds``, or until Telegram answers after an outage, if sooner."""
        if self._back is None:
            self._back = asyncio.Event()
        back = self._back
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(back.wait(), seconds)
