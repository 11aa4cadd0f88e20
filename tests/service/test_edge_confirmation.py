"""A settings change that moves the house's edge out of bounds (``bot.engine.edge``) is made
only when confirmed, on SQLite and PostgreSQL: unconfirmed, the service answers with the
odds the table would have and writes nothing (no setting, no audit line, no update
recorded); confirmed, it is made as any change."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.engine.edge import EdgeAlarm
from bot.engine.settings import Settings
from bot.service.game import GameService, SettingChange, UnconfirmedChange
from bot.store.db import Database
from bot.store.models import AuditEntry, Chat, ProcessedUpdate
from tests.helpers.game import ADMIN, GROUP, check_all


@pytest.fixture(autouse=True)
async def _ledger_checked_after_each_test(db: Database) -> AsyncIterator[None]:
    yield
    await check_all(db)


async def _stored(db: Database) -> tuple[dict[str, Any], int, int]:
    """The group's stored settings, its audit lines and the updates recorded."""
    async with db.transaction() as session:
        chat = await session.get(Chat, GROUP)
        audit = await session.scalar(select(func.count()).select_from(AuditEntry))
        updates = await session.scalar(select(func.count()).select_from(ProcessedUpdate))
        return (dict(chat.settings) if chat else {}), int(audit or 0), int(updates or 0)


async def poker_table(service: GameService) -> None:
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "ruleset", "poker29")


async def test_the_house_dealing_niu_niu_poker_waits_for_a_confirmation(
    service: GameService, db: Database
) -> None:
    await poker_table(service)
    before = await _stored(db)

    asked = await service.change_setting(GROUP, ADMIN, "dealer", "house", update_id=7)
    assert isinstance(asked, UnconfirmedChange)
    assert (asked.name, asked.value, asked.settings.dealer) == ("dealer", "house", "house")
    assert asked.warning.alarm is EdgeAlarm.PAYS_OUT
    assert round(100 * asked.warning.after.odds.player, 3) == 30.308
    # Nothing written: the setting, the audit log and the update (it may come again).
    assert await _stored(db) == before
    assert (await service.settings(GROUP)).dealer == "bid"

    made = await service.change_setting(
        GROUP, ADMIN, "dealer", "house", update_id=7, confirmed=True
    )
    assert made == SettingChange("dealer", "bid", "house")
    assert (await service.settings(GROUP)).dealer == "house"
    log = [line.details for line in await service.audit_log(GROUP) if line.action == "set"]
    assert log[0] == {"setting": "dealer", "old": "bid", "new": "house"}  # newest first
    # Redelivered, the confirmed update is dropped as any handled update.
    assert (
        await service.change_setting(GROUP, ADMIN, "dealer", "house", update_id=7, confirmed=True)
        is None
    )


async def test_losses_by_the_dealers_pattern_make_the_house_dealt_poker_table_even(
    service: GameService,
) -> None:
    await poker_table(service)
    assert await service.change_setting(GROUP, ADMIN, "loss_pays", "dealer") == (
        "loss_pays",
        "player",
        "dealer",
    )
    assert await service.change_setting(GROUP, ADMIN, "dealer", "house") == (
        "dealer",
        "bid",
        "house",
    )
    # Back to losses at 1x while the house deals: the bank would bleed again.
    asked = await service.change_setting(GROUP, ADMIN, "loss_pays", "player")
    assert isinstance(asked, UnconfirmedChange) and asked.warning.alarm is EdgeAlarm.PAYS_OUT
    assert (await service.settings(GROUP)).loss_pays == "dealer"


async def test_a_rake_past_the_limit_waits_for_a_confirmation_and_a_lower_one_does_not(
    service: GameService, db: Database
) -> None:
    await service.set_open(GROUP, ADMIN, True)
    asked = await service.change_setting(GROUP, ADMIN, "rake", "6%")
    assert isinstance(asked, UnconfirmedChange)
    assert asked.warning.alarm is EdgeAlarm.TAKES_TOO_MUCH
    assert round(100 * asked.warning.after.edge, 3) == 43.376
    assert (await service.settings(GROUP)).rake_bps == 500
    assert await service.change_setting(GROUP, ADMIN, "rake", "4%") == ("rake", "5%", "4%")
    assert await service.change_setting(GROUP, ADMIN, "rake", "6%", confirmed=True) == (
        "rake",
        "4%",
        "6%",
    )


async def test_a_change_counted_on_settings_another_admin_changed_meanwhile_is_counted_again(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The odds are counted before the write: a change made in between (losses back at 1x
    while this admin makes the house deal) is seen by the write, which counts again."""
    await poker_table(service)
    await service.change_setting(GROUP, ADMIN, "loss_pays", "dealer")
    even = await service.settings(GROUP)
    await service.change_setting(GROUP, ADMIN, "loss_pays", "player")
    reads: list[Settings] = []

    async def read_before_the_other_change(chat_id: int) -> Settings:
        reads.append(even)
        return even

    monkeypatch.setattr(service.tables, "settings", read_before_the_other_change)
    asked = await service.change_setting(GROUP, ADMIN, "dealer", "house")
    assert len(reads) == 1
    assert isinstance(asked, UnconfirmedChange)
    assert asked.settings == dataclasses.replace(even, dealer="house", loss_pays="player")
    monkeypatch.undo()
    assert (await service.settings(GROUP)).dealer == "bid"
