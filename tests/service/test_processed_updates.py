"""Processed updates are keyed by bot and update id and forgotten after a window: a
repeated update changes nothing, but neither a new token on the same database nor
Telegram starting its ids afresh drops a real update."""

from __future__ import annotations

import pytest

from bot.engine.errors import RuleViolation
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.updates import RETENTION_MS
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table

BOT_A = 111
BOT_B = 222


async def _betting_round(service: GameService, clock: Clock) -> int:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    for player in PLAYERS[:3]:
        await fund(service, player, 50_000)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    return started.round.id


async def test_the_same_update_id_of_another_bot_is_not_a_repeat(
    db: Database, clock: Clock, seeds: Seeds
) -> None:
    first = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, bot_id=BOT_A)
    second = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, bot_id=BOT_B)
    round_id = await _betting_round(first, clock)
    placed = await first.bet(GROUP, PLAYERS[0], 500, update_id=7)
    assert placed.events and not placed.duplicate
    # The first bot's Telegram delivers update 7 again: a repeat, nothing changes.
    assert (await first.bet(GROUP, PLAYERS[0], 900, update_id=7)).duplicate
    # A new token on the same database: its update 7 is another update.
    changed = await second.bet(GROUP, PLAYERS[0], 900, update_id=7)
    assert changed.events and not changed.duplicate
    credited = await second.credit(GROUP, ADMIN, PLAYERS[1].id, 100, update_id=8)
    assert credited is not None
    assert await first.credit(GROUP, ADMIN, PLAYERS[1].id, 100, update_id=8) is not None
    state = await first.round(round_id)
    assert state is not None and [(b.user_id, b.amount) for b in state.bets] == [
        (PLAYERS[0].id, 900)
    ]
    assert (await first.balance(GROUP, PLAYERS[1].id)).available == 50_000 + 200


async def test_an_update_id_used_again_after_the_window_is_a_new_update(
    db: Database, clock: Clock, seeds: Seeds
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, bot_id=BOT_A)
    assert await service.credit(GROUP, ADMIN, PLAYERS[0].id, 100, update_id=42) is not None
    clock.advance(RETENTION_MS / 1000 - 1)
    assert await service.forget_old_updates() == 0
    # Within the window the id is still known: a repeat.
    assert await service.credit(GROUP, ADMIN, PLAYERS[0].id, 100, update_id=42) is None
    clock.advance(2)
    assert await service.forget_old_updates() == 1
    # Telegram started its ids afresh (after a week without updates): 42 is new.
    assert await service.credit(GROUP, ADMIN, PLAYERS[0].id, 100, update_id=42) is not None
    assert (await service.balance(GROUP, PLAYERS[0].id)).available == 200
    round_id = await _betting_round(service, clock)
    assert (await service.bet(GROUP, PLAYERS[1], 500, update_id=43)).events
    clock.advance(RETENTION_MS / 1000 + 1)
    assert await service.forget_old_updates() >= 1
    # The round's window has long closed: a new update 43 is refused, not a repeat.
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, PLAYERS[1], 600, update_id=43)
    assert refused.value.key == "window_closed"
    state = await service.round(round_id)
    assert state is not None and [b.amount for b in state.bets] == [500]
