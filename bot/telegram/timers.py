"""One-off timers on the event loop, for the rounds' deadlines and the tables' pauses.

A round sets a timer for each deadline, several a round in every group, and takes one off
whenever its window moves. python-telegram-bot's ``JobQueue`` runs each through
APScheduler: a job object, a check of the callback's signature and a wake-up of the
scheduler per timer set, and a hop through its executor per timer fired, several times
what the loop's own ``call_later`` costs (``bench/bench_timers.py``). Written by hand for
that reason; the few repeating jobs (the sweep) stay on the ``JobQueue``.

A fired timer's callback runs as the application's task (``run``: ``Application.create_task``),
so its failure reaches the error handlers and the application's stop waits for it, as for
a job.
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
    (nothing once it fired)."""

    __slots__ = ("data", "handle", "name", "owner")

    def __init__(self, owner: LoopTimers, data: object, name: str | None) -> None:
        self.owner = owner
        self.data = data
        self.name = name
        #: The loop's handle while the timer is pending.
        self.handle: asyncio.TimerHandle | None = None

    def schedule_removal(self) -> None:
        """Take the timer off, unless it has fired already."""
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
            self.owner.pending.discard(self)


@dataclass(frozen=True, slots=True)
class TimerContext:
    """What a timer's callback is given: the timer, as a job's context holds its job."""

    job: LoopTimer


class LoopTimers:
    """Sets one-off timers with the loop's ``call_later`` (``OneShotTimers``)."""

    def __init__(self, run: RunTask) -> None:
        self.run = run
        #: Timers set and not fired or taken off.
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

    def _fire(self, timer: LoopTimer, callback: TimerCallback) -> None:
        timer.handle = None
        self.pending.discard(timer)
        self.run(callback(TimerContext(timer)))

    def stop(self) -> None:
        """Take off every timer not fired yet (stopping: the next start times them again)."""
        for timer in list(self.pending):
            timer.schedule_removal()
