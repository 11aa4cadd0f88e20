"""The round as played (seed 000), through the service, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from bot.engine.errors import RuleViolation
from bot.engine.round import Phase, RoundSettled, RoundVoided, VoidReason, deal_seed_of
from bot.engine.settlement import Result
from bot.rules.split import commitment, split_envelope
from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    PLAYERS,
    check_ledger,
    fund,
    open_table,
)


async def _to_betting(service: GameService, clock: Clock, pool: int = 10_000) -> int:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, pool)
    clock.advance(18)
    result = await service.advance(started.round.id)
    assert result.round is not None and result.round.phase is Phase.BETTING
    return started.round.id


async def test_a_full_round_settles_and_balances(
    service: GameService, db: Database, clock: Clock
) -> None:
    round_id = await _to_betting(service, clock)
    for player in PLAYERS[:4]:
        await fund(service, player, 50_000)
        await service.bet(GROUP, player, 1_000)
    clock.advance(40)
    grabbing = await service.advance(round_id)
    assert grabbing.round is not None and grabbing.round.phase is Phase.GRABBING
    for player in PLAYERS[:4]:
        await service.grab(GROUP, player, round_id=round_id)
    final = await service.grab(GROUP, DEALER, round_id=round_id)
    assert final.round is not None
    settled = [event for event in final.events if isinstance(event, (RoundSettled, RoundVoided))]
    assert len(settled) == 1
    await check_ledger(db)
    if isinstance(settled[0], RoundSettled):
        settlement = settled[0].settlement
        for player in PLAYERS[:4]:
            balance = await service.balance(GROUP, player.id)
            assert balance.held == 0
            assert balance.available == 50_000 + settlement.outcomes[player.id].net
        dealer = await service.balance(GROUP, DEALER.id)
        assert dealer.available == 100_000 + settlement.dealer_net


async def test_the_seed_commitment_is_published_and_the_split_comes_from_the_seed(
    service: GameService, clock: Clock
) -> None:
    round_id = await _to_betting(service, clock)
    await fund(service, PLAYERS[0], 50_000)
    await service.bet(GROUP, PLAYERS[0], 500)
    clock.advance(40)
    result = await service.advance(round_id)
    state = result.round
    assert state is not None
    assert state.commitment == commitment(state.seed)
    assert list(state.shares) == split_envelope(deal_seed_of(state), 2, 1_000)


async def test_outbid_bidder_hold_is_released_at_once(service: GameService, db: Database) -> None:
    await open_table(service)
    await fund(service, DEALER, 50_000)
    await fund(service, PLAYERS[0], 50_000)
    await service.start_round(GROUP, actor=DEALER)
    await service.bid(GROUP, DEALER, 10_000)
    assert (await service.balance(GROUP, DEALER.id)).held == 10_000
    await service.bid(GROUP, PLAYERS[0], 20_000)
    assert (await service.balance(GROUP, DEALER.id)).held == 0
    assert (await service.balance(GROUP, PLAYERS[0].id)).held == 20_000
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, DEALER, 20_500)
    assert refused.value.key == "bid_too_low"
    await check_ledger(db)


async def test_betting_as_the_dealer_is_refused(service: GameService, clock: Clock) -> None:
    await _to_betting(service, clock)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, DEALER, 100)
    assert refused.value.key == "dealer_cannot_bet"


async def test_no_bidder_voids_the_round(service: GameService, clock: Clock) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    clock.advance(18)
    result = await service.advance(started.round.id)
    assert result.events == (RoundVoided(VoidReason.NO_BIDS, started.round.seed),)


async def test_a_duplicate_update_has_one_effect(
    service: GameService, db: Database, clock: Clock
) -> None:
    await _to_betting(service, clock)
    await fund(service, PLAYERS[0], 50_000)
    first = await service.bet(GROUP, PLAYERS[0], 500, update_id=777)
    again = await service.bet(GROUP, PLAYERS[0], 500, update_id=777)
    assert first.events and not first.duplicate
    assert again.duplicate and not again.events
    assert (await service.balance(GROUP, PLAYERS[0].id)).held == 500 * 18
    await check_ledger(db)


async def test_a_duplicate_deadline_changes_nothing(service: GameService, clock: Clock) -> None:
    round_id = await _to_betting(service, clock)
    again = await service.advance(round_id)
    assert again.events == ()
    state = await service.round(round_id)
    assert state is not None and state.phase is Phase.BETTING


async def test_a_timer_set_for_a_phase_the_round_left_applies_no_later_deadline(
    service: GameService, clock: Clock
) -> None:
    round_id = await _to_betting(service, clock)
    clock.advance(40)  # betting's deadline passed too
    late = await service.advance(round_id, Phase.BIDDING)
    assert late.events == ()
    state = await service.round(round_id)
    assert state is not None and state.phase is Phase.BETTING
    closed = await service.advance(round_id, Phase.BETTING)
    assert closed.round is not None and closed.round.phase is not Phase.BETTING


async def test_player_without_enough_chips_is_refused(
    service: GameService, db: Database, clock: Clock
) -> None:
    await _to_betting(service, clock)
    await fund(service, PLAYERS[0], 1_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, PLAYERS[0], 100)
    assert refused.value.key == "not_enough_chips_to_bet"
    assert (await service.balance(GROUP, PLAYERS[0].id)).available == 1_000
    await check_ledger(db)


async def test_settled_round_outcomes_match_settle(service: GameService, clock: Clock) -> None:
    round_id = await _to_betting(service, clock)
    for player in PLAYERS[:3]:
        await fund(service, player, 50_000)
        await service.bet(GROUP, player, 200)
    clock.advance(40)
    await service.advance(round_id)
    clock.advance(20)
    final = await service.advance(round_id)
    ended = final.events[-1]
    if isinstance(ended, RoundSettled):
        lines = await service.results(round_id)
        by_user = {line.user_id: line for line in lines}
        for player in PLAYERS[:3]:
            assert Result(by_user[player.id].result) is ended.settlement.outcomes[player.id].result
        assert by_user[DEALER.id].net == ended.settlement.dealer_net
