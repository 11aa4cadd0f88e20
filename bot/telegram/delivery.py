"""Getting messages out without holding up the game.

Handlers and deadlines run under their chat's lock and must not wait on Telegram: what
they have to say goes into the chat's outbox, which a worker sends in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from telegram.error import TelegramError
from telegram.ext import AIORateLimiter

from bot.telegram.observers import ShellObserver, Unobserved
from bot.telegram.outages import OutageLog, database_unavailable_here
from bot.telegram.retries import failure_kind

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[object]]


class ChatOutbox:
    """One queue of outgoing work per chat, each run by its own worker, in order; and
    work that needs no order (a toast), run at once beside them. A chat is here only
    while it has work queued."""

    def __init__(self) -> None:
        self._queues: dict[int, deque[Job]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._aside: set[asyncio.Task[None]] = set()
        #: Work put aside during a hold, started when it ends.
        self._aside_held: list[Job] = []
        self._held = 0
        self._outages = OutageLog(log)

    def __len__(self) -> int:
        return len(self._queues)

    @property
    def depth(self) -> int:
        """Jobs queued in every chat and not yet started (a gauge: how far behind sending
        is); costs a step per chat with work."""
        return sum(len(queue) for queue in self._queues.values())

    @contextmanager
    def held(self) -> Iterator[None]:
        """Run no more work meanwhile (a job already running finishes): what is queued
        waits, and each chat's runs, in order, once the block ends, as does the work put
        aside meanwhile (``bench/bench_restart.py`` counts what start-up asks of the
        database apart from what sending asks)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held:
                for chat_id in self._queues:
                    self._start(chat_id)
                held, self._aside_held = self._aside_held, []
                for job in held:
                    self.put_aside(job)

    def put_aside(self, job: Job) -> None:
        """Run ``job`` now (once a hold ends), in no chat's order (it is awaited by
        ``drain``)."""
        if self._held:
            self._aside_held.append(job)
            return

        async def run() -> None:
            try:
                await job()
            except Exception as error:
                self._failed("sending", error)

        task = asyncio.get_running_loop().create_task(run())
        self._aside.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._aside.discard)

    def _failed(self, what: str, error: Exception) -> None:
        """A job failed: expected (Telegram's, whose tries were logged a line each, or the
        database's) in a line, anything else with its traceback."""
        if isinstance(error, TelegramError):
            log.warning("%s failed: %s", what, error)
        elif database_unavailable_here(error):
            self._outages.unavailable(what, error)
        else:
            log.error("%s failed", what, exc_info=error)

    def put(self, chat_id: int, job: Job) -> None:
        """Queue ``job`` for the chat; it runs after everything queued before it."""
        self._queues.setdefault(chat_id, deque()).append(job)
        if not self._held:
            self._start(chat_id)

    def _start(self, chat_id: int) -> None:
        if chat_id not in self._workers:
            self._workers[chat_id] = asyncio.get_running_loop().create_task(self._work(chat_id))

    async def _work(self, chat_id: int) -> None:
        queue = self._queues[chat_id]
        try:
            while queue and not self._held:
                job = queue.popleft()
                try:
                    await job()
                except Exception as error:
                    self._failed(f"sending to chat {chat_id}", error)
        finally:
            # Nothing runs between the loop's last check and here: the next put() (or the
            # end of a hold) starts a new worker.
            del self._workers[chat_id]
            if not queue:
                del self._queues[chat_id]

    def abandon(self) -> None:
        """Drop every chat's queued work and stop what runs (stopping without sending)."""
        for queue in self._queues.values():
            queue.clear()
        self._aside_held.clear()
        for task in [*self._workers.values(), *self._aside]:
            task.cancel()

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every queue is empty (or ``timeout`` passes)."""
        deadline = time.monotonic() + timeout
        while (self._workers or self._aside) and time.monotonic() < deadline:
            busy = [*self._workers.values(), *self._aside]
            await asyncio.wait(busy, timeout=deadline - time.monotonic())


class ObservedRateLimiter(AIORateLimiter):
    """``AIORateLimiter`` that tells an observer of every request it passes on (each
    attempt, retries too) and of every failure (a ``RetryAfter`` it then waits out too):
    every Bot API call but ``getUpdates`` goes through the rate limiter, which makes it
    the one place to count them by method (the long poll is counted by
    ``bot.telegram.serving.poll``)."""

    def __init__(self, observer: ShellObserver, **limits: Any) -> None:
        super().__init__(**limits)
        self.observer = observer

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        observer = self.observer

        async def observed(
            *call_args: Any, **call_kwargs: Any
        ) -> bool | dict[str, Any] | list[dict[str, Any]]:
            observer.bot_api_called(endpoint)
            try:
                return await callback(*call_args, **call_kwargs)
            except Exception as error:
                observer.bot_api_failed(endpoint, failure_kind(error))
                raise

        return await super().process_request(
            observed, args, kwargs, endpoint, data, rate_limit_args
        )


def retrying_after_flood(observer: ShellObserver | None = None) -> AIORateLimiter:
    """python-telegram-bot's rate limiter doing only what ours do not: waiting out a
    ``RetryAfter`` from Telegram and retrying (never losing the message). The limits
    themselves are the ``Messenger``'s: a sliding window per group and a priority order
    overall (``bot.telegram.budget``); AIORateLimiter's own would add a FIFO leaky bucket
    in front of them, and keep a limiter per group it ever saw. Every request it passes
    on is told to ``observer``."""
    return ObservedRateLimiter(
        observer or Unobserved(), overall_max_rate=0, group_max_rate=0, max_retries=5
    )
