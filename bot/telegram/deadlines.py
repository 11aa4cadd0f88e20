"""Deadline timers: one per open round, at its deadline, and one per table waiting for
its next round, at its pause's end (``bot.telegram.timers``).

A timer only says "this round's deadline has come" (or "this table's pause is over");
what happens then is the caller's (``RoundProgress.advance``, ``start_due``). Timers are
a speed-up, not the guarantee: the sweep finds every overdue round and every table due
to start in the database, so a lost timer (a restart) costs at most a sweep interval.
Tables started by the sweep alone would start a sweep interval late, and all at its
tick: every group's phases would then change together, and their boards and results
queue for the bot's rate at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast

from bot.engine.round import Phase, RoundState
from bot.service.game import CommandResult
from bot.telegram.telegram_needs import Timer, Timers

#: What a timer calls: ``apply(round_id, chat_id, by_timer=True)``.
Apply = Callable[..., Awaitable[None]]
#: What a pause's timer calls: ``start(chat_id)``.
Start = Callable[[int], Awaitable[None]]


class DeadlineObserver(Protocol):
    """Told when deadlines are set and applied (the bench's probe; metrics)."""

    def scheduled(self, state: RoundState) -> None:
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
    """Keeps one timer per open round at its current deadline, and one per table at its
    pause's end (bounded by the open rounds and the tables in a pause: a timer is dropped
    when it fires, its round ends, or the table's next start is timed again)."""

    def __init__(self, clock: Callable[[], int], observer: DeadlineObserver | None = None) -> None:
        self.clock = clock
        self.observer = observer
        self._jobs: dict[int, tuple[int, Timer]] = {}
        self._starts: dict[int, Timer] = {}
        self._queue: Timers | None = None
        self._apply: Apply | None = None
        self._start: Start | None = None

    def __len__(self) -> int:
        return len(self._jobs) + len(self._starts)

    def attach(self, queue: Timers, apply: Apply, start: Start | None = None) -> None:
        """Run timers on ``queue``; a round's timer calls ``apply(round_id, chat_id)``, a
        pause's ``start(chat_id)`` (none are set without it)."""
        self._queue, self._apply, self._start = queue, apply, start

    def schedule_start(self, chat_id: int, at_ms: int) -> None:
        """Time the table's next round to start at ``at_ms``, its pause's end."""
        if self._queue is None or self._start is None:
            return
        earlier = self._starts.pop(chat_id, None)
        if earlier is not None:
            earlier.schedule_removal()  # nothing if it fired already
        delay = max(0.0, (at_ms - self.clock()) / 1000)
        self._starts[chat_id] = self._queue.run_once(
            self._fire_start, when=delay, name=f"next round:{chat_id}", data=chat_id
        )

    def schedule(self, state: RoundState) -> None:
        """(Re)schedule the round's timer at its deadline; none once it has ended. Most
        commands leave the deadline as it is, and then so does this."""
        if self._queue is None:
            return
        scheduled = self._jobs.get(state.id)
        if scheduled is not None:
            if state.phase.is_open and scheduled[0] == state.deadline_ms:
                return
            del self._jobs[state.id]
            # A timer that has fired may not have run its call yet (the sweep got to the
            # round first): taking it off then does nothing.
            scheduled[1].schedule_removal()
        if not state.phase.is_open:
            return
        delay = max(0.0, (state.deadline_ms - self.clock()) / 1000)
        job = self._queue.run_once(
            self._fire,
            when=delay,
            name=f"deadline:{state.id}",
            data=(state.id, state.chat_id, state.phase),
        )
        self._jobs[state.id] = (state.deadline_ms, job)
        if self.observer is not None:
            self.observer.scheduled(state)

    async def _fire(self, context: Any) -> None:
        assert context.job is not None and self._apply is not None
        round_id, chat_id, phase = cast(tuple[int, int, Phase], context.job.data)
        if self._jobs.get(round_id, (None, None))[1] is context.job:
            del self._jobs[round_id]
        await self._apply(round_id, chat_id, by_timer=True, phase=phase)

    async def _fire_start(self, context: Any) -> None:
        assert context.job is not None and self._start is not None
        chat_id = cast(int, context.job.data)
        if self._starts.get(chat_id) is context.job:
            del self._starts[chat_id]
        await self._start(chat_id)
