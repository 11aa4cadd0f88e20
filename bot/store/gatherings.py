"""Commands on one key written one write at a time, those that wait written together: the
group commit of players' steps on one round where the database runs writers side by
side (PostgreSQL), as ``bot.store.write_batches`` is SQLite's for its one writer.

Ten players pressing Grab together make ten steps on one round. Written side by side, all
but one would find the round changed and try again; written one after another, each
waits for the one before, and the last toast waits for ten round trips. Gathered, the
first is written alone, at once, and those that came while it was written go in the next
write together: two writes for the ten, each caller told its own outcome.

Written by hand: no library gathers independent callers' commands by key.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

_Job = TypeVar("_Job")
_T = TypeVar("_T")


class Gathering(Generic[_Job, _T]):
    """Per key one write at a time: ``alone`` writes a job that finds none under way, in
    its caller's task; ``together`` writes the jobs that waited meanwhile, in a task of
    its own, and gives each its outcome (an exception escaping it is every job's)."""

    def __init__(
        self,
        alone: Callable[[_Job], Awaitable[_T]],
        together: Callable[[list[_Job]], Awaitable[Sequence[_T | Exception]]],
    ) -> None:
        self.alone = alone
        self.together = together
        #: Per key with a write under way, the jobs waiting for the next.
        self._waiting: dict[Hashable, list[tuple[_Job, asyncio.Future[_T]]]] = {}
        self._writing: set[asyncio.Task[None]] = set()
        #: Writes done, and the jobs they wrote (what gathering saved: the difference).
        self.writes = 0
        self.jobs = 0

    def __len__(self) -> int:
        """Keys with a write under way."""
        return len(self._waiting)

    async def run(self, key: Hashable, job: _Job) -> _T:
        """Write ``job``: alone if no write of ``key`` is under way, else with the jobs that
        wait with it, once that write is done."""
        waiting = self._waiting.get(key)
        if waiting is not None:
            future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
            waiting.append((job, future))
            return await future
        self._waiting[key] = []
        try:
            return await self.alone(job)
        finally:
            self.writes += 1
            self.jobs += 1
            self._write_next(key)

    def _write_next(self, key: Hashable) -> None:
        """The jobs of ``key`` that waited (and whose callers still wait) written next."""
        batch = [(job, future) for job, future in self._waiting.pop(key) if not future.done()]
        if not batch:
            return
        self._waiting[key] = []
        # In a context of its own: nothing of the caller whose write happened to end first.
        task = asyncio.get_running_loop().create_task(
            self._write(key, batch), context=contextvars.Context()
        )
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def _write(self, key: Hashable, batch: list[tuple[_Job, asyncio.Future[_T]]]) -> None:
        outcomes: Sequence[_T | Exception]
        try:
            outcomes = await self.together([job for job, _ in batch])
        except Exception as error:
            outcomes = [error] * len(batch)
        except BaseException:  # the write itself was cancelled: so are its jobs
            for _, future in batch:
                future.cancel()
            raise
        finally:
            self.writes += 1
            self.jobs += len(batch)
            self._write_next(key)
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
