"""The fake's change counter: every change bumps it and wakes whoever waits for one.

Long polls, held sends, ``FakeTelegram.wait_for`` and the ``/_fake/wait`` control
endpoint all wait here instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")


class _Signal:
    """A broadcast wake-up that sync code can fire: waiters re-check their condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), timeout)


class Changes:
    """A version that every change of the fake's state bumps, and the server's closing flag
    (waiters give up once it is set)."""

    def __init__(self) -> None:
        self.version = 0
        self.closing = False
        self._signal = _Signal()

    def bump(self) -> None:
        """Note a change and wake every waiter."""
        self.version += 1
        self._signal.fire()

    async def wait(self, timeout: float) -> None:
        """Wait for the next change, at most ``timeout`` seconds."""
        await self._signal.wait(timeout)

    async def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait until ``version`` is outdated, ``timeout`` passes or the server closes;
        returns the current version."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.version == version and not self.closing:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self._signal.wait(remaining)
        return self.version

    async def wait_until(
        self, predicate: Callable[[], _T], timeout: float, describe: Callable[[], str]
    ) -> _T:
        """``predicate()``'s first truthy value, re-checked after every change; a
        ``TimeoutError`` (with ``describe()``) if it stays falsy for ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout} s; {describe()}")
            await self._signal.wait(remaining)
