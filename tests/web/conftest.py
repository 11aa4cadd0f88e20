"""The console over real HTTP on each database, with a played history
(``tests.helpers.console``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.console import Console, play_history, start_console
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import TEST_SETTINGS


@pytest.fixture
async def console(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[Console]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    history = await play_history(service, clock)
    async for client in start_console(service, clock):
        yield Console(client, service, clock, history, db)
