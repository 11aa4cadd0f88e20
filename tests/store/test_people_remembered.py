"""The users a process remembers having stored are bounded: past ``PEOPLE_REMEMBERED`` the
least recently seen are forgotten (and written again when next seen), not kept forever."""

from __future__ import annotations

import pytest

from bot.service import core
from bot.service.game import GameService, Person
from bot.store.db import Database
from tests.helpers.game import TEST_SETTINGS


async def test_people_remembered_stay_within_their_bound(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "PEOPLE_REMEMBERED", 3)
    service = GameService(db, TEST_SETTINGS)
    for user_id in range(1, 6):
        await service.note_people([Person(user_id, f"User {user_id}")])
    assert service.people_remembered == 3
    names = await service.names(list(range(1, 6)))
    assert sorted(names) == [1, 2, 3, 4, 5]  # every one was stored all the same
