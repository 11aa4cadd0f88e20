"""Card tables through the service: a group switched to a card game, a round brought to
betting with a dealer's bid, bets placed, betting closed, and the group's shoe as stored."""

from __future__ import annotations

from sqlalchemy import select

from bot.engine.round import Phase, Round
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.models import ShoeRow
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, TEST_SETTINGS, fund


async def table(service: GameService, ruleset: str, dealer: str = "bid") -> None:
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "ruleset", ruleset)
    await service.change_setting(GROUP, ADMIN, "dealer", dealer, confirmed=True)


async def betting_with_a_dealer(service: GameService, clock: Clock, pool: int = 50_000) -> Round:
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await fund(service, DEALER, pool)
    await service.bid(GROUP, DEALER, pool)
    clock.advance(TEST_SETTINGS.bid_seconds)
    result = await service.advance(started.round.id)
    assert isinstance(result.round, Round) and result.round.phase is Phase.BETTING
    return result.round


async def place(service: GameService, bets: list[tuple[Person, int]], chips: int = 100_000) -> None:
    for person, amount in bets:
        await fund(service, person, chips)
        await service.bet(GROUP, person, amount)


async def close_betting(service: GameService, clock: Clock, round_id: int) -> tuple[object, ...]:
    clock.advance(TEST_SETTINGS.bet_seconds)
    result = await service.advance(round_id)
    assert result.round is not None
    return result.events


async def shoe_rows(db: Database) -> list[ShoeRow]:
    async with db.transaction() as session:
        return list((await session.scalars(select(ShoeRow).order_by(ShoeRow.id))).all())
