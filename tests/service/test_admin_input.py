"""What admins name and set, guarded in the service on SQLite and PostgreSQL: a player
must have a Telegram user id (1 to 2**52; 0 is the bot's own), and a setting set to the
value it has changes nothing and is not audited."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.engine.errors import GameError, RuleViolation
from bot.service.game import MAX_USER_ID, GameService
from bot.service.records import SettingChange
from bot.store.db import Database
from bot.store.models import Account, AuditEntry, Chat, LedgerTransaction, ProcessedUpdate
from tests.helpers.game import ADMIN, GROUP, TEST_SETTINGS, check_all

BAD_USER_IDS = [0, -1, GROUP, MAX_USER_ID + 1, 10**20, 2**63]


@pytest.fixture(autouse=True)
async def _ledger_checked_after_each_test(db: Database) -> AsyncIterator[None]:
    yield
    await check_all(db)


async def _count(db: Database, model: Any) -> int:
    async with db.transaction() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def _everything(db: Database) -> tuple[int, ...]:
    """How many rows every table a refused admin command could write holds."""
    models = (Account, AuditEntry, Chat, LedgerTransaction, ProcessedUpdate)
    return tuple([await _count(db, model) for model in models])


async def _settings_stored(db: Database) -> dict[str, Any]:
    async with db.transaction() as session:
        chat = await session.get(Chat, GROUP)
        return dict(chat.settings) if chat is not None else {}


# -- user ids -------------------------------------------------------------------------------


@pytest.mark.parametrize("user_id", BAD_USER_IDS)
async def test_no_chips_are_credited_or_debited_to_an_id_no_user_has(
    service: GameService, db: Database, user_id: int
) -> None:
    await service.credit(GROUP, ADMIN, 10, 1_000)
    before = await _everything(db)
    for action in (service.credit, service.debit):
        with pytest.raises(RuleViolation) as refused:
            await action(GROUP, ADMIN, user_id, 100, update_id=77)
        assert refused.value.key == "bad_user_id"
        assert refused.value.params == {"who": user_id, "maximum_id": MAX_USER_ID}
    assert await _everything(db) == before


@pytest.mark.parametrize("user_id", BAD_USER_IDS)
async def test_no_statement_is_read_for_an_id_no_user_has(
    service: GameService, user_id: int
) -> None:
    with pytest.raises(RuleViolation) as refused:
        await service.statement(GROUP, user_id)
    assert refused.value.key == "bad_user_id"


async def test_the_largest_telegram_user_id_has_chips_like_any_other(
    service: GameService,
) -> None:
    balance = await service.credit(GROUP, ADMIN, MAX_USER_ID, 1_000)
    assert balance is not None and balance.available == 1_000
    balance = await service.debit(GROUP, ADMIN, MAX_USER_ID, 400)
    assert balance is not None and balance.available == 600
    lines = await service.statement(GROUP, MAX_USER_ID)
    assert [(line.kind, line.change) for line in lines] == [("debit", -400), ("credit", 1_000)]


# -- settings -------------------------------------------------------------------------------


async def test_setting_the_value_a_setting_has_is_not_a_change(
    service: GameService, db: Database
) -> None:
    first = await service.change_setting(GROUP, ADMIN, "rake", "4%", update_id=1)
    again = await service.change_setting(GROUP, ADMIN, "rake", "4.00%", update_id=2)
    assert first == ("rake", "5%", "4%")
    assert again == ("rake", "4%", "4%")
    log = [line for line in await service.audit_log(GROUP) if line.action == "set"]
    assert [line.details for line in log] == [{"setting": "rake", "old": "5%", "new": "4%"}]
    assert await _settings_stored(db) == {"rake_bps": 400}
    # The unchanged /set is still an update handled: a redelivery of it is dropped.
    assert await service.change_setting(GROUP, ADMIN, "rake", "4%", update_id=2) is None


async def test_a_group_the_bot_never_saw_has_the_defaults_and_a_closed_table(
    service: GameService,
) -> None:
    assert await service.settings(GROUP) == TEST_SETTINGS
    assert not await service.is_open(GROUP)
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "rake", "4%")
    await service.change_setting(GROUP, ADMIN, "pictures", "off")
    assert await service.is_open(GROUP)
    changed = dataclasses.replace(TEST_SETTINGS, rake_bps=400, pictures="off")
    assert await service.settings(GROUP) == changed


async def test_a_default_set_again_stays_a_default(service: GameService, db: Database) -> None:
    await service.set_open(GROUP, ADMIN, True)
    for key, value in [("rake", "5%"), ("min_bet", "1"), ("ruleset", "envelope68")]:
        change = await service.change_setting(GROUP, ADMIN, key, value)
        assert isinstance(change, SettingChange) and change.old == change.new, change
    assert [line.action for line in await service.audit_log(GROUP)] == ["open"]
    # Nothing stored: the group keeps following the configured defaults.
    assert await _settings_stored(db) == {}
    assert await service.settings(GROUP) == TEST_SETTINGS


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("1,,2", "quick_bets_empty_item"),
        ("1,2,", "quick_bets_empty_item"),
        (" , ", "quick_bets_empty_item"),
        ("5,5", "quick_bets_duplicate"),
        ("5,٥", "digits"),
    ],
)
async def test_a_malformed_quick_bets_list_is_refused_and_changes_nothing(
    service: GameService, db: Database, value: str, reason: str
) -> None:
    before = await _everything(db)
    with pytest.raises(GameError) as refused:
        await service.change_setting(GROUP, ADMIN, "quick_bets", value)
    assert refused.value.key == f"bad_setting.{reason}"
    assert refused.value.params["name"] == "quick_bets"
    assert await _everything(db) == before
    assert await service.settings(GROUP) == TEST_SETTINGS
