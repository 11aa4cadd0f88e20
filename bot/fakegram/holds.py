"""Held sends: a test's way to kill a bot while it waits for Telegram's answer to a send.

``FakeTelegram.hold_sends`` describes the two stages a send can be held at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.fakegram.changes import Changes

_HOLD_RECHECK_SECONDS = 60.0


@dataclass(frozen=True)
class _SendHold:
    """Which sends are held, and where."""

    pattern: re.Pattern[str]
    delivered_first: bool


class SendHolds:
    """The hold in force, if any, and how many sends wait at it."""

    def __init__(self, changes: Changes) -> None:
        self._changes = changes
        self._hold: _SendHold | None = None
        self.held = 0

    def hold(self, pattern: str, *, delivered_first: bool) -> None:
        """Hold every send whose text (as users see it) matches ``pattern`` from now on."""
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"pattern: {error}") from None
        self._hold = _SendHold(compiled, delivered_first)
        self._changes.bump()

    def release(self) -> None:
        """Let held sends go on, and hold no more."""
        self._hold = None
        self._changes.bump()

    async def wait_at(self, text: str, *, delivered: bool) -> None:
        """Wait while a hold for this send's text and stage is in force."""
        hold = self._hold
        if hold is None or hold.delivered_first != delivered or not hold.pattern.search(text):
            return
        self.held += 1
        self._changes.bump()
        try:
            # A bot killed meanwhile cancels this handler (its connection closed).
            while self._hold is hold and not self._changes.closing:
                await self._changes.wait(_HOLD_RECHECK_SECONDS)
        finally:
            self.held -= 1
            self._changes.bump()
