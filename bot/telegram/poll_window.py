"""The updates a long poll holds: fetched, and not yet confirmed to Telegram.

Telegram forgets an update only when a later ``getUpdates`` passes an offset beyond it, and
delivers again every update from the offset on. So a poller that confirms an update only
once it was handled (``bot.telegram.serving``) and still fetches more while some are in
hand gets those it holds again in every answer: the window says which they are, so that
they are neither handled twice nor built into objects again
(``bot.telegram.http.UpdatesRequest``), and which offset confirms every update handled
before the first still in hand. It also hands updates to their handlers a few at a time
(``most_in_hand``), in the order they came. Written by hand: python-telegram-bot's own
poller confirms a batch before its handlers run.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from telegram import Update

log = logging.getLogger(__name__)

#: Updates handled at once at most, in the order they came; the rest of what a
#: ``getUpdates`` brought waits its turn. Handlers interleave on the loop, and a press's
#: toast goes out only once its own handler is through, so among 100 started at once it
#: waited for most of the other 99. 25 at a time brought the toasts back sooner and cost
#: less CPU per update under load (``bench/bench_real_groups.py``).
UPDATES_IN_HAND = 25

#: Handles one update.
Handle = Callable[[Update], Coroutine[Any, Any, None]]


class PollWindow:
    """The updates fetched and not yet confirmed, in the order Telegram sent them: those
    waiting for their turn, and those in hand, each with the task that handles it."""

    def __init__(self, most_in_hand: int) -> None:
        self.most_in_hand = most_in_hand
        #: Each update fetched and not confirmed: its task, or None while it waits.
        self._fetched: dict[int, asyncio.Task[None] | None] = {}
        self._waiting: deque[tuple[Update, Handle]] = deque()
        self._in_hand = 0
        self._offset: int | None = None
        self._changed = asyncio.Event()

    def __len__(self) -> int:
        """Updates fetched and not confirmed yet: each answer brings them again."""
        return len(self._fetched)

    def settled(self) -> bool:
        """Whether every update fetched was handled."""
        return self._in_hand == 0 and not self._waiting

    def running_short(self) -> bool:
        """Whether fewer than a turn's worth of updates (``most_in_hand``) wait for theirs:
        in a backlog, the time to fetch more."""
        return len(self._waiting) < self.most_in_hand

    def holds(self, update_id: object) -> bool:
        """Whether the update was fetched before and not confirmed since."""
        return update_id in self._fetched

    def confirm(self) -> int | None:
        """The offset of the next ``getUpdates``: past every update handled before the
        first not handled yet (``None`` before the first update). Those are forgotten
        here, as Telegram forgets them on that call; a call that fails leaves them to the
        next one, which passes the same offset or a later one."""
        handled = []
        for update_id, task in self._fetched.items():
            if task is None or not task.done():
                self._offset = update_id
                break
            handled.append(update_id)
            self._offset = update_id + 1
        for update_id in handled:
            del self._fetched[update_id]
        return self._offset

    def take(self, updates: Iterable[Update], handle: Handle) -> int:
        """Queue each update not held already for ``handle``, in order, and start as many
        as ``most_in_hand`` allows; how many were new."""
        new = 0
        for update in updates:
            if update.update_id in self._fetched:
                continue
            self._fetched[update.update_id] = None
            self._waiting.append((update, handle))
            new += 1
        self._start()
        return new

    async def until(
        self,
        ready: Callable[[PollWindow], bool],
        stop: asyncio.Event,
        *,
        within: float | None = None,
    ) -> None:
        """Wait until ``ready`` of this window (checked as each update is handled), until
        ``stop`` is set, or ``within`` seconds at most."""
        deadline = None if within is None else asyncio.get_running_loop().time() + within
        while not ready(self) and not stop.is_set():
            left = None if deadline is None else deadline - asyncio.get_running_loop().time()
            if left is not None and left <= 0:
                return
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            stopping = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait(
                    {changed, stopping}, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                changed.cancel()
                stopping.cancel()

    async def handled(self) -> None:
        """Wait until every update fetched was handled."""
        await self.until(PollWindow.settled, asyncio.Event())

    def _start(self) -> None:
        while self._waiting and self._in_hand < self.most_in_hand:
            update, handle = self._waiting.popleft()
            task = asyncio.create_task(handle(update))
            self._fetched[update.update_id] = task
            self._in_hand += 1
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_hand -= 1
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("handling an update failed", exc_info=error)
        self._start()
        self._changed.set()
