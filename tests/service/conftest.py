"""The use cases under test: ``GameService`` with the group defaults of
``tests.helpers.game.TEST_SETTINGS`` on each database, with the test's clock and seeds."""

from __future__ import annotations

import pytest

from bot.rules import fairness
from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import TEST_SETTINGS


@pytest.fixture
def service(db: Database, clock: Clock, seeds: Seeds) -> GameService:
    return GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)


@pytest.fixture
def v1_service(db: Database, clock: Clock, seeds: Seeds) -> GameService:
    """The service dealing by seed derivation 1 (as rounds did before client seeds): a
    queued seed alone pins the deal, as ``tests.helpers.game.find_seed`` finds one."""
    return GameService(
        db, TEST_SETTINGS, clock=clock, seed_source=seeds, seed_derivation=fairness.V1
    )
