"""The live feed's read of a group's table (``GameService.table_snapshot``) on each
database, and what it tells about the rounds written (``round_changes``): where the table
stands follows every step and never runs ahead of what it shows; an ended round is shown
as none, past its last version; each viewer's chips are the ledger's, zero for a
stranger."""

from __future__ import annotations

from bot.engine.round import Phase
from bot.service.game import Balance, GameService
from bot.service.round_changes import NO_ROUND, RoundChange, RoundKey
from bot.store.db import Database
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import (
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    fund,
    open_table,
    play_envelope_round,
)

PLAYER, STRANGER = PLAYERS[0], PLAYERS[5]


async def test_a_snapshot_follows_the_round_and_every_step_is_told(
    db: Database, clock: Clock, seeds: Seeds
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    told: list[RoundChange] = []
    service.round_changes.watch(told.append, lambda: None)
    await open_table(service)
    for person in (DEALER, PLAYER):
        await fund(service, person, 100_000)

    empty = await service.table_snapshot(GROUP, [PLAYER.id])
    assert empty.key == NO_ROUND and empty.round is None
    assert empty.settings.quick_bets == TEST_SETTINGS.quick_bets
    assert empty.balances == {PLAYER.id: Balance(100_000, 0)}

    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    await service.bet(GROUP, PLAYER, 500)
    current = await service.current_round(GROUP)
    assert current is not None and current.phase is Phase.BETTING
    snapshot = await service.table_snapshot(GROUP, [PLAYER.id, STRANGER.id, PLAYER.id])
    assert snapshot.key == RoundKey(current.id, current.version)
    assert snapshot.round == current
    assert snapshot.balances[STRANGER.id] == Balance(0, 0)
    assert snapshot.balances[PLAYER.id] == await service.balance(GROUP, PLAYER.id)
    assert {person.first_name for person in snapshot.people.values()} == {
        DEALER.first_name,
        PLAYER.first_name,
    }
    # Each step told as it was written: start, bid, betting opened, bet.
    assert [change.key for change in told] == [
        RoundKey(current.id, version) for version in range(1, current.version + 1)
    ]
    assert {change.chat_id for change in told} == {GROUP}

    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(current.id)
    await service.grab(GROUP, PLAYER, round_id=current.id)
    ended = await service.grab(GROUP, DEALER, round_id=current.id)
    assert ended.round is not None and not ended.round.phase.is_open
    after = await service.table_snapshot(GROUP, [PLAYER.id])
    assert after.round is None
    assert after.key == RoundKey(current.id, ended.round.version) > snapshot.key
    assert told[-1].key == after.key
    assert after.balances[PLAYER.id] == await service.balance(GROUP, PLAYER.id)

    # The next round comes after the last one ended.
    await play_envelope_round(service, clock, [(PLAYER, 500)], bid=10_000)
    assert (await service.table_snapshot(GROUP, [])).key.round_id > current.id
