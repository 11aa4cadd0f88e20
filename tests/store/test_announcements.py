"""A round's results survive a restart: ended rounds whose results did not go out are
found again, with what ended them rebuilt from the database."""

from __future__ import annotations

from bot.engine.round import RoundSettled, RoundVoided, VoidReason
from bot.service.game import GameService
from tests.conftest import Clock
from tests.store.helpers import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table


async def _settle_a_round(service: GameService, clock: Clock) -> tuple[int, RoundSettled]:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    for player in PLAYERS[:3]:
        await fund(service, player, 50_000)
        await service.bet(GROUP, player, 700)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(started.round.id)
    clock.advance(TEST_SETTINGS.grab_seconds)
    result = await service.advance(started.round.id)
    ended = result.events[-1]
    assert isinstance(ended, RoundSettled), "the fixed test seed settles this round"
    return started.round.id, ended


async def test_a_settled_round_not_announced_is_found_with_its_settlement(
    service: GameService, clock: Clock
) -> None:
    round_id, ended = await _settle_a_round(service, clock)
    [(state, rebuilt)] = await service.unannounced()
    assert state.id == round_id
    assert isinstance(rebuilt, RoundSettled)
    assert rebuilt.seed == ended.seed
    assert dict(rebuilt.settlement.outcomes) == dict(ended.settlement.outcomes)
    assert list(rebuilt.settlement.outcomes) == list(ended.settlement.outcomes)
    assert rebuilt.settlement.dealer_net == ended.settlement.dealer_net
    assert rebuilt.settlement.platform_net == ended.settlement.platform_net


async def test_an_announced_round_is_not_announced_again(
    service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    assert await service.claim_announcement(round_id)
    assert not await service.claim_announcement(round_id)  # once, whoever asks
    assert await service.unannounced() == []


async def test_a_void_round_is_found_with_its_reason(service: GameService, clock: Clock) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    [(state, rebuilt)] = await service.unannounced()
    assert rebuilt == RoundVoided(VoidReason.NO_BIDS, state.seed)


async def test_rounds_that_ended_long_ago_are_left_alone(
    service: GameService, clock: Clock
) -> None:
    await _settle_a_round(service, clock)
    clock.advance(2 * 3600)
    assert await service.unannounced() == []
