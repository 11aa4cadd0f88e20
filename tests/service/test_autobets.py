"""Standing bets (seed 001: "your bet stays in the box between rounds") through
``GameService`` on SQLite and PostgreSQL: placed as each round's betting opens, each as an
ordinary bet with its own ledger transaction; skipped for the round's dealer; stopped when
free chips run short or the table changes game; the results' "same again"; and a window
that opened before a restart gets them afterwards. The ledger's invariants are checked in
the database after each test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.engine.autobets import Autobet, SkipReason, StopReason
from bot.engine.errors import GameError
from bot.engine.round import Bet, Phase, Round, RoundOrSeat
from bot.service.game import CommandResult, GameService, Person
from bot.store.db import Database
from tests.helpers.controls import Clock
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    check_all,
    fund,
    round_transactions,
)

ALICE, BOB, CAROL = PLAYERS[:3]
#: Bull Bull holds 5x a bet.
HOLD = 5


@pytest.fixture(autouse=True)
async def _ledger_checked_after_each_test(db: Database) -> AsyncIterator[None]:
    yield
    await check_all(db)


async def bull_bull_table(service: GameService, *funded: Person) -> None:
    """An open Bull Bull table, with 1,000.00 credited to each of ``funded``."""
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "ruleset", "bullbull")
    for person in funded:
        await fund(service, person, 100_000)


async def open_betting(service: GameService, clock: Clock) -> CommandResult:
    """A round started, DEALER's bid, bidding over: what opening betting did."""
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    result = await service.advance(started.round.id)
    assert result.round is not None and result.round.phase is Phase.BETTING
    return result


async def settle(service: GameService, clock: Clock, round_id: int) -> None:
    clock.advance(TEST_SETTINGS.bet_seconds)
    result = await service.advance(round_id)
    assert result.round is not None and result.round.phase is Phase.SETTLED
    clock.advance(TEST_SETTINGS.pause_seconds)


async def a_round_carol_bet_in(service: GameService, clock: Clock) -> Round:
    """A settled Bull Bull round (DEALER dealing) in which CAROL bet 12.00."""
    await bull_bull_table(service, DEALER, CAROL)
    first = await open_betting(service, clock)
    assert isinstance(first.round, Round)
    await service.bet(GROUP, CAROL, 1_200)
    await settle(service, clock, first.round.id)
    return first.round


def bets_held(state: RoundOrSeat | None) -> tuple[Bet, ...]:
    """The bets a command's round holds: every one, or its seat's player's (the hot
    path's)."""
    assert state is not None
    if isinstance(state, Round):
        return state.bets
    return () if state.bet is None else (state.bet,)


def stakes(state: RoundOrSeat) -> dict[int, int]:
    return {bet.user_id: bet.amount for bet in bets_held(state)}


async def test_a_standing_bet_is_placed_as_an_ordinary_bet_each_round_until_chips_run_short(
    service: GameService, db: Database, clock: Clock
) -> None:
    await bull_bull_table(service, DEALER, ALICE)
    await fund(service, BOB, 1_000 * HOLD)
    for person in (ALICE, BOB, DEALER):
        change = await service.set_autobet(GROUP, person, 1_000)
        assert change is not None and change.after == Autobet(person.id, 1_000, "bullbull")

    first = await open_betting(service, clock)
    run = first.autobets
    assert first.round is not None and run is not None
    assert stakes(run.round) == {ALICE.id: 1_000, BOB.id: 1_000}
    # The dealer does not bet this round, and keeps the standing bet for the next.
    assert [(s.autobet.user_id, s.reason) for s in run.skipped] == [(DEALER.id, SkipReason.DEALER)]
    assert await service.autobet(GROUP, DEALER.id) is not None
    # Each bet is its own ledger transaction, as a /bet's is.
    assert await round_transactions(db, first.round.id) == ["bid", "bet", "bet"]
    stored = await service.round(first.round.id)
    assert stored is not None and stakes(stored) == stakes(run.round)
    await settle(service, clock, first.round.id)

    # Bob's free chips no longer cover the hold: his stops, Alice's goes on.
    bob_free = (await service.balance(GROUP, BOB.id)).available
    if bob_free:
        await service.debit(GROUP, ADMIN, BOB.id, bob_free - 1)
    second = await open_betting(service, clock)
    run = second.autobets
    assert run is not None
    assert stakes(run.round) == {ALICE.id: 1_000}
    assert [(s.autobet.user_id, s.reason, s.needed) for s in run.stopped] == [
        (BOB.id, StopReason.CHIPS, 1_000 * HOLD)
    ]
    assert await service.autobet(GROUP, BOB.id) is None
    # Placing again for the same round places nothing twice.
    assert second.round is not None
    assert await service.place_autobets(GROUP, second.round.id) is None
    await settle(service, clock, second.round.id)

    # The table changes game: the standing bets of the old game stop.
    await service.change_setting(GROUP, ADMIN, "ruleset", "poker29")
    third = await open_betting(service, clock)
    run = third.autobets
    assert run is not None and run.placed == ()
    assert {(s.autobet.user_id, s.reason) for s in run.stopped} == {
        (ALICE.id, StopReason.GAME),
        (DEALER.id, StopReason.GAME),
    }
    assert await service.autobet(GROUP, ALICE.id) is None


async def test_autobet_refuses_amounts_a_bet_would_refuse_and_off_stops_it(
    service: GameService, clock: Clock
) -> None:
    await bull_bull_table(service)
    limits = await service.settings(GROUP)
    with pytest.raises(GameError) as refused:
        await service.set_autobet(GROUP, ALICE, limits.max_bet + 1)
    assert refused.value.key == "bet_too_large"
    with pytest.raises(GameError) as refused:
        await service.set_autobet(GROUP, ALICE, limits.min_bet - 1)
    assert refused.value.key == "bet_too_small"
    assert await service.autobet(GROUP, ALICE.id) is None
    await service.set_autobet(GROUP, ALICE, 2_000)
    change = await service.set_autobet(GROUP, ALICE, 0)
    assert change is not None and change.before is not None and change.after is None
    assert await service.autobet(GROUP, ALICE.id) is None


async def test_an_autobet_set_while_betting_is_placed_at_once_and_when_the_house_deals(
    service: GameService, clock: Clock
) -> None:
    await bull_bull_table(service, DEALER, ALICE)
    betting = await open_betting(service, clock)
    change = await service.set_autobet(GROUP, ALICE, 1_500)
    assert change is not None and change.placed is not None
    assert change.placed.round is not None and stakes(change.placed.round) == {ALICE.id: 1_500}
    assert betting.round is not None
    await settle(service, clock, betting.round.id)

    # The house deals: the round opens straight for bets, with the standing bets in it.
    await service.change_setting(GROUP, ADMIN, "dealer", "house")
    await service.fund(GROUP, ADMIN, 100_000)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.autobets is not None
    assert stakes(started.autobets.round) == {ALICE.id: 1_500}


async def test_same_again_bets_the_last_stake_in_the_next_round_and_refuses_old_results(
    service: GameService, clock: Clock
) -> None:
    first = await a_round_carol_bet_in(service, clock)

    with pytest.raises(GameError) as refused:
        await service.same_again(GROUP, ALICE, first.id)
    assert refused.value.key == "again_without_bet"
    again = await service.same_again(GROUP, CAROL, first.id)
    assert again is not None and again.amount == 1_200 and again.placed is None
    second = await open_betting(service, clock)
    assert second.autobets is not None and stakes(second.autobets.round) == {CAROL.id: 1_200}
    # Used up: one round only.
    assert await service.autobet(GROUP, CAROL.id) is None
    assert second.round is not None
    await settle(service, clock, second.round.id)

    # Round 2's results are the latest now: round 1's button is stale, and changes nothing.
    third = await open_betting(service, clock)
    with pytest.raises(GameError) as refused:
        await service.same_again(GROUP, CAROL, first.id)
    assert refused.value.key == "stale_button"
    # While betting is open, "same again" bets at once.
    again = await service.same_again(GROUP, CAROL, second.round.id)
    assert again is not None and again.placed is not None and again.placed.round is not None
    assert stakes(again.placed.round) == {CAROL.id: 1_200}
    assert third.round is not None
    await settle(service, clock, third.round.id)


async def test_a_window_opened_before_a_restart_gets_its_standing_bets_after_it(
    service: GameService, clock: Clock
) -> None:
    await bull_bull_table(service, DEALER, ALICE)
    betting = await open_betting(service, clock)
    assert betting.round is not None
    # Stored, but the process stopped before placing it.
    async with service.store.writing() as uow:
        await uow.autobets.put(GROUP, Autobet(ALICE.id, 1_000, "bullbull"), clock())
    placed = await service.place_due_autobets()
    assert [result.round.id for result in placed if result.round] == [betting.round.id]
    assert placed[0].round is not None and stakes(placed[0].round) == {ALICE.id: 1_000}
    assert await service.place_due_autobets() == []


async def test_two_workers_placing_the_same_rounds_standing_bets_place_them_once(
    service: GameService, db: Database, clock: Clock
) -> None:
    await bull_bull_table(service)
    await fund(service, DEALER, 100_000)
    for person in (ALICE, BOB):
        await fund(service, person, 100_000)
    opened = await open_betting(service, clock)
    assert opened.round is not None
    async with service.store.writing() as uow:
        for person in (ALICE, BOB):
            await uow.autobets.put(GROUP, Autobet(person.id, 1_000, "bullbull"), clock())
    other = GameService(db, TEST_SETTINGS, clock=clock)  # a second worker
    runs = await asyncio.gather(
        service.place_autobets(GROUP, opened.round.id),
        other.place_autobets(GROUP, opened.round.id),
    )
    placed = [p.autobet.user_id for run in runs if run is not None for p in run.placed]
    assert sorted(placed) == sorted([ALICE.id, BOB.id])
    assert await round_transactions(db, opened.round.id) == ["bid", "bet", "bet"]


async def test_a_same_again_bet_that_sits_out_as_dealer_waits_for_the_next_round(
    service: GameService, clock: Clock
) -> None:
    first = await a_round_carol_bet_in(service, clock)
    await service.same_again(GROUP, CAROL, first.id)

    # CAROL deals the next round: her "same again" sits out, and is kept.
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await service.bid(GROUP, CAROL, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    dealt = await service.advance(started.round.id)
    assert dealt.autobets is not None and not dealt.autobets.placed
    assert [s.reason for s in dealt.autobets.skipped] == [SkipReason.DEALER]
    assert await service.autobet(GROUP, CAROL.id) == Autobet(CAROL.id, 1_200, "bullbull", True)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(started.round.id)  # nobody bet: void
    clock.advance(TEST_SETTINGS.pause_seconds)

    third = await open_betting(service, clock)
    assert third.autobets is not None and stakes(third.autobets.round) == {CAROL.id: 1_200}
    assert await service.autobet(GROUP, CAROL.id) is None
    assert third.round is not None
    await settle(service, clock, third.round.id)


async def test_a_standing_bet_changed_while_being_placed_is_left_as_the_player_set_it(
    service: GameService,
) -> None:
    await bull_bull_table(service)
    await fund(service, CAROL, 100_000)
    await service.set_autobet(GROUP, CAROL, 500)
    read = await service.autobet(GROUP, CAROL.id)
    assert read is not None
    await service.set_autobet(GROUP, CAROL, 700)  # sent while the placing had read 5.00
    async with service.store.writing() as uow:
        await uow.autobets.considered(GROUP, 99, [read])
        await uow.autobets.remove_as_read(GROUP, [read])
    assert await service.autobet(GROUP, CAROL.id) == Autobet(CAROL.id, 700, "bullbull")
    assert await service.store.autobet_lookup.any_due(GROUP, 99)  # not marked considered


async def test_a_standing_bet_is_marked_as_one_until_its_player_changes_it(
    service: GameService, clock: Clock
) -> None:
    await bull_bull_table(service, DEALER, ALICE, BOB)
    await service.set_autobet(GROUP, ALICE, 1_000)
    opened = await open_betting(service, clock)
    assert opened.round is not None
    await service.bet(GROUP, BOB, 700)

    def standing(state: RoundOrSeat | None) -> dict[int, bool]:
        return {bet.user_id: bet.standing for bet in bets_held(state)}

    # As stored, read whole (the board's read) and by the general path's load.
    assert standing(await service.round(opened.round.id)) == {ALICE.id: True, BOB.id: False}
    async with service.store.reading() as uow:
        loaded = await uow.rounds.load(opened.round.id, lock=False)
    assert standing(loaded) == {ALICE.id: True, BOB.id: False}
    # Alice changes it within the window: it is her own bet now.
    changed = await service.bet(GROUP, ALICE, 1_500)
    assert standing(changed.round)[ALICE.id] is False
    assert standing(await service.round(opened.round.id)) == {ALICE.id: False, BOB.id: False}
    await settle(service, clock, opened.round.id)


async def test_same_again_is_refused_once_the_table_plays_another_game(
    service: GameService, clock: Clock
) -> None:
    first = await a_round_carol_bet_in(service, clock)
    await service.change_setting(GROUP, ADMIN, "ruleset", "poker29")
    with pytest.raises(GameError) as refused:
        await service.same_again(GROUP, CAROL, first.id)
    assert refused.value.key == "again_other_game"
    assert await service.autobet(GROUP, CAROL.id) is None
