"""Timers on the event loop: one-off ones for the rounds' deadlines and the tables'
pauses, repeating ones for the sweep and the forgetting of what went quiet.

A round sets a timer for each deadline, several a round in every group, and takes one off
whenever its window moves. python-telegram-bot's ``JobQueue`` runs each through
APScheduler: a job object, a check of the callback's signature and a wake-up of the
scheduler per timer set, and a hop through its executor per timer fired, several times
what the loop's own ``call_later`` costs (``bench/bench_timers.py``). Written by hand for
that reason, and the few repeating jobs with them, so that the bot needs no scheduler.

A fired timer's callback runs as the application's task (``run``: ``Application.create_task``),
so its failure reaches the error handlers and the application's stop waits for it, as for
a job. A repeating timer is set again once its run ended, for a whole ``interval`` after
the run began (at once if the run took longer): runs never overlap, and one that overran
delays the next instead of piling runs up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from bot.telegram.telegram_needs import TimerCallback

#: Runs a fired timer's coroutine (``Application.create_task``).
RunTask = Callable[[Coroutine[Any, Any, Any]], object]


class LoopTimer:
    """A timer set: its data and name, as a job's; ``schedule_removal`` takes it off
    (nothing once a one-off timer fired; a repeating one is not set again)."""

    __slots__ = ("data", "handle", "name", "owner", "removed")

    def __init__(self, owner: LoopTimers, data: object, name: str | None) -> None:
        self.owner = owner
        self.data = data
        self.name = name
        #: The loop's handle while the timer waits to fire.
        self.handle: asyncio.TimerHandle | None = None
        self.removed = False

    def schedule_removal(self) -> None:
        """Take the timer off: it fires no more."""
        self.removed = True
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.owner.pending.discard(self)


@dataclass(frozen=True, slots=True)
class TimerContext:
    """What a timer's callback is given: the timer, as a job's context holds its job."""

    job: LoopTimer


class LoopTimers:
    """Sets one-off and repeating timers with the loop's ``call_later`` (``Timers``)."""

    def __init__(self, run: RunTask) -> None:
        self.run = run
        #: Timers set and not fired or taken off (a repeating one until taken off).
        self.pending: set[LoopTimer] = set()

    def __len__(self) -> int:
        return len(self.pending)

    def run_once(
        self,
        callback: TimerCallback,
        when: float,
        *,
        data: object = None,
        name: str | None = None,
    ) -> LoopTimer:
        """Call ``callback(TimerContext(timer))`` in ``when`` seconds."""
        timer = LoopTimer(self, data, name)
        loop = asyncio.get_running_loop()
        timer.handle = loop.call_later(max(0.0, when), self._fire, timer, callback)
        self.pending.add(timer)
        return timer

    def run_repeating(
        self,
        callback: TimerCallback,
        interval: float,
        *,
        first: float | None = None,
        name: str | None = None,
    ) -> LoopTimer:
        """Call ``callback(TimerContext(timer))`` in ``first`` seconds (``None``: in
        ``interval``), then ``interval`` seconds after each run began, never two at once."""
        timer = LoopTimer(self, None, name)
        self._set(timer, callback, interval, interval if first is None else first)
        return timer

    def _set(self, timer: LoopTimer, callback: TimerCallback, interval: float, when: float) -> None:
        loop = asyncio.get_running_loop()
        timer.handle = loop.call_later(
            max(0.0, when), self._fire_repeating, timer, callback, interval
        )
        self.pending.add(timer)

    def _fire_repeating(self, timer: LoopTimer, callback: TimerCallback, interval: float) -> None:
        timer.handle = None
        began = asyncio.get_running_loop().time()

        async def run_then_set_again() -> None:
            try:
                await callback(TimerContext(timer))
            finally:
                if not timer.removed:
                    elapsed = asyncio.get_running_loop().time() - began
                    self._set(timer, callback, interval, interval - elapsed)

        self.run(run_then_set_again())

    def _fire(self, timer: LoopTimer, callback: TimerCallback) -> None:
        timer.handle = None
        self.pending.discard(timer)
        self.run(callback(TimerContext(timer)))

    def stop(self) -> None:
        """Take off every timer not fired yet, and the repeating ones (stopping: the next
        start sets them again)."""
        for timer in list(self.pending):
            timer.schedule_removal()
