"""Deadline timers: one job per open round, at its deadline, in the ``JobQueue``.

A timer only says "this round's deadline has come"; what happens then is the caller's
(``RoundProgress.advance``). Timers are a speed-up, not the guarantee: the sweep finds
every overdue round in the database, so a lost timer (a restart) costs at most a sweep
interval.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast

from apscheduler.jobstores.base import JobLookupError  # type: ignore[import-untyped]
from telegram.ext import ContextTypes, Job, JobQueue

from bot.engine.round import Round
from bot.service.game import CommandResult

#: What a timer calls: ``apply(round_id, chat_id, by_timer=True)``.
Apply = Callable[..., Awaitable[None]]


class DeadlineObserver(Protocol):
    """Told when deadlines are set and applied (the bench's probe; metrics)."""

    def scheduled(self, state: Round) -> None:
        """A round's timer was set at its current deadline."""

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        """A round's deadline was looked at (by its timer, else by the sweep): wall-clock
        milliseconds when that began and when the service had applied it, and what it did
        (no events: someone else had applied it already)."""


class Deadlines:
    """Keeps one timer per open round at its current deadline (bounded by the open rounds:
    a timer is dropped when it fires or its round ends)."""

    def __init__(self, clock: Callable[[], int], observer: DeadlineObserver | None = None) -> None:
        self.clock = clock
        self.observer = observer
        self._jobs: dict[int, tuple[int, Job[Any]]] = {}
        self._queue: JobQueue[Any] | None = None
        self._apply: Apply | None = None

    def __len__(self) -> int:
        return len(self._jobs)

    def attach(self, queue: JobQueue[Any], apply: Apply) -> None:
        """Run timers on ``queue``; a timer calls ``apply(round_id, chat_id)``."""
        self._queue, self._apply = queue, apply

    def schedule(self, state: Round) -> None:
        """(Re)schedule the round's timer at its deadline; none once it has ended. Most
        commands leave the deadline as it is, and then so does this."""
        if self._queue is None:
            return
        scheduled = self._jobs.get(state.id)
        if scheduled is not None:
            if state.phase.is_open and scheduled[0] == state.deadline_ms:
                return
            del self._jobs[state.id]
            # A timer that has fired is gone from the scheduler already, though its call
            # may not have run yet (the sweep got to the round first): nothing to remove.
            with contextlib.suppress(JobLookupError):
                scheduled[1].schedule_removal()
        if not state.phase.is_open:
            return
        delay = max(0.0, (state.deadline_ms - self.clock()) / 1000)
        job = self._queue.run_once(
            self._fire, when=delay, name=f"deadline:{state.id}", data=(state.id, state.chat_id)
        )
        self._jobs[state.id] = (state.deadline_ms, job)
        if self.observer is not None:
            self.observer.scheduled(state)

    async def _fire(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.job is not None and self._apply is not None
        round_id, chat_id = cast(tuple[int, int], context.job.data)
        if self._jobs.get(round_id, (None, None))[1] is context.job:
            del self._jobs[round_id]
        await self._apply(round_id, chat_id, by_timer=True)
