"""The shell tells its observer of every update a handler took, by kind, with how long it
took: one that went well, one that failed unexpectedly (the error handler logs it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.observers import Unobserved
from bot.telegram.shell import GameBot
from tests.helpers.telegram import message_update, person

GROUP = -100_123
#: How long the handler that goes well takes: long beside one that returns at once.
HANDLER_SECONDS = 0.2


class Recorder(Unobserved):
    """A ShellObserver that keeps the updates reported (and ignores the rest)."""

    def __init__(self) -> None:
        self.handled: list[tuple[str, float]] = []

    def update_handled(self, kind: str, seconds: float) -> None:
        self.handled.append((kind, seconds))


async def test_each_update_is_reported_by_kind_whether_its_handler_ends_well_or_not(
    tmp_path: Path,
) -> None:
    observer = Recorder()
    database = Database.from_url(f"sqlite+aiosqlite:///{tmp_path / 'unused.db'}")
    game = GameBot(Config(), GameService(database), observer=observer)
    game.served.moved_here(GROUP)  # the group is this bot's: nothing to ask the database

    async def fine(update: Any, context: Any) -> None:
        await asyncio.sleep(HANDLER_SECONDS)

    async def broken(update: Any, context: Any) -> None:
        raise RuntimeError("a bug")

    update = message_update(GROUP, person(5, "Eko"), "/rules")
    await game._guard(fine, "rules")(update, None)
    with pytest.raises(RuntimeError):
        await game._guard(broken, "message")(update, None)
    await database.dispose()

    assert [kind for kind, _ in observer.handled] == ["rules", "message"]
    # The time reported is the handler's own: at least what it slept (the loop's timer may
    # fire a hair early by another clock), and the failing one's, which returned at once,
    # less than that.
    (_, fine_seconds), (_, broken_seconds) = observer.handled
    assert fine_seconds >= HANDLER_SECONDS * 0.9
    assert broken_seconds < fine_seconds
