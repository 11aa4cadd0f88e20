"""Urgent work first: a context flag that marks work as urgent (a deadline's advance, the
sweep) and a turn in which urgent waiters go before ordinary ones. Used by the store
(SQLite's write turn, PostgreSQL's pool) and the shell (each chat's turn)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

_urgent: ContextVar[bool] = ContextVar("niuniu_urgent", default=False)


@contextmanager
def urgent() -> Iterator[None]:
    """Work done inside (a deadline's advance, the sweep) is urgent: it takes its turn to
    write before any waiting command (see ``PriorityTurn``). A context variable, so that
    the flag reaches the store through the service unchanged, and tasks started inside
    inherit it."""
    token = _urgent.set(True)
    try:
        yield
    finally:
        _urgent.reset(token)


def is_urgent() -> bool:
    """Whether the running code is inside ``urgent()``."""
    return _urgent.get()


class PriorityTurn:
    """A turn that at most ``slots`` holders have at once, where waiting urgent work goes
    before waiting ordinary work, first come first served within each; ``reserved`` of
    the slots are for urgent work only (ordinary work never takes the last ones).

    With one slot it is a lock (SQLite's one writer; a chat's turn); with more, a
    semaphore (PostgreSQL's pool). A freed slot is handed to the next waiter directly, so
    nothing that arrives later barges in.

    Written by hand: ``asyncio.Lock`` and ``Semaphore`` wake waiters in arrival order only,
    ``PriorityQueue`` orders items, not waiters that may be cancelled, and no library we
    use (nor ``anyio``'s ``Lock``/``CapacityLimiter``) has priorities. Event-loop only:
    not thread-safe.
    """

    __slots__ = ("_free", "_ordinary", "_reserved", "_urgent")

    def __init__(self, slots: int = 1, *, reserved: int = 0) -> None:
        if slots < 1 or not 0 <= reserved < slots:
            raise ValueError("need slots >= 1 and 0 <= reserved < slots")
        self._free = slots
        self._reserved = reserved
        self._urgent: deque[asyncio.Future[None]] = deque()
        self._ordinary: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        """Waiters (cancelled ones may still be counted until they are skipped)."""
        return len(self._urgent) + len(self._ordinary)

    @property
    def ordinary_waiting(self) -> bool:
        """Whether ordinary work waits for a slot (a cancelled waiter may still count
        until it is skipped)."""
        return bool(self._ordinary)

    def locked(self) -> bool:
        """Whether ordinary work would have to wait."""
        return self._free <= self._reserved or bool(self._urgent or self._ordinary)

    def _wake(self) -> None:
        while self._free > 0:
            if self._urgent:
                queue = self._urgent
            elif self._ordinary and self._free > self._reserved:
                queue = self._ordinary
            else:
                return
            waiter = queue.popleft()
            if waiter.done():  # cancelled while waiting
                continue
            waiter.set_result(None)
            self._free -= 1

    async def acquire(self, urgent: bool = False) -> None:
        """Wait for a slot (before ordinary waiters if ``urgent``)."""
        if (
            not self._urgent
            and (self._free > self._reserved or (urgent and self._free > 0))
            and (urgent or not self._ordinary)
        ):
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        (self._urgent if urgent else self._ordinary).append(waiter)
        self._wake()
        try:
            await waiter
        except asyncio.CancelledError:
            if not waiter.cancelled():  # handed a slot just as it was cancelled
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back (to the next waiter, urgent first)."""
        self._free += 1
        self._wake()

    @asynccontextmanager
    async def turn(self, urgent: bool = False) -> AsyncIterator[None]:
        """Hold a slot while inside."""
        await self.acquire(urgent)
        try:
            yield
        finally:
            self.release()
