"""The store's tests drive it through ``GameService`` where a round trip is what they
count: the service with ``tests.helpers.game.TEST_SETTINGS`` on each database."""

from __future__ import annotations

import pytest

from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import TEST_SETTINGS


@pytest.fixture
def service(db: Database, clock: Clock, seeds: Seeds) -> GameService:
    return GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
