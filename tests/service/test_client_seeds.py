"""Client seeds through the service, on both databases: ``/seed``'s use cases, and the
seeds of a round's participants fixed into its deal as betting closes (seed derivation 2,
``bot.rules.fairness``), for a round dealt afresh and for a shoe."""

from __future__ import annotations

import pytest

from bot.engine.errors import RuleViolation
from bot.engine.round import deal_seed_of
from bot.engine.verification import RevealedShoe, Verified, verify_round
from bot.rules.split import split_envelope
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.models import ShoeRow
from tests.helpers.card_tables import (
    betting_with_a_dealer,
    close_betting,
    place,
    shoe_rows,
    table,
)
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS

P0, P1, P2 = PLAYERS[:3]


async def test_a_client_seed_is_set_replaced_and_refused_when_it_is_not_one(
    service: GameService,
) -> None:
    assert await service.client_seed(P0.id) is None
    assert await service.set_client_seed(P0, " lucky-7 ", update_id=1) == "lucky-7"
    assert await service.set_client_seed(P0, "again", update_id=2) == "again"
    for bad in ("two words", "幸运", "x" * 65, "<b>", ""):
        with pytest.raises(RuleViolation) as refused:
            await service.set_client_seed(P0, bad, update_id=None)
        assert refused.value.key == "bad_client_seed"
    # A repeated update changes nothing.
    assert await service.set_client_seed(P0, "replayed", update_id=2) is None
    assert await service.client_seed(P0.id) == "again"


async def test_an_envelope_deals_from_the_participants_seeds_as_betting_closes(
    service: GameService, clock: Clock
) -> None:
    await service.set_open(GROUP, ADMIN, True)
    await service.set_client_seed(DEALER, "dealer-seed")
    await service.set_client_seed(P0, "first")
    await service.set_client_seed(P2, "never-bets")  # not a participant: left out
    state = await betting_with_a_dealer(service, clock, pool=10_000)
    await place(service, [(P0, 100), (P1, 100)])
    await service.set_client_seed(P0, "changed-in-betting")  # the value at the close counts
    await close_betting(service, clock, state.id)
    dealt = await service.round(state.id)
    assert dealt is not None and dealt.fairness == 2
    assert dealt.client_seeds == ("changed-in-betting", "dealer-seed")
    total = sum(dealt.shares)
    assert list(dealt.shares) == split_envelope(deal_seed_of(dealt), 3, total)
    assert list(dealt.shares) != split_envelope(dealt.seed, 3, total)
    for person in (P0, P1, DEALER):
        await service.grab(GROUP, person)
    ended = await service.round(state.id)
    assert ended is not None and not ended.phase.is_open
    result = verify_round(ended)
    assert isinstance(result, Verified) and result.derivation.client_seeds == dealt.client_seeds


async def test_a_shoe_takes_its_first_rounds_seeds_and_keeps_them(
    service: GameService, clock: Clock, db: Database
) -> None:
    await table(service, "poker29")
    await service.set_client_seed(P0, "first-round")
    first = await betting_with_a_dealer(service, clock)
    await place(service, [(P0, 1_000)])
    await close_betting(service, clock, first.id)
    (shoe,) = await shoe_rows(db)
    assert (shoe.fairness, shoe.client_seeds) == (2, ["first-round"])
    # The next round's players cannot change the shoe's order any more.
    await service.set_client_seed(P1, "second-round")
    clock.advance(60)
    second = await betting_with_a_dealer(service, clock)
    await place(service, [(P1, 1_000)])
    await close_betting(service, clock, second.id)
    stored = await service.round(second.id)
    assert stored is not None and stored.client_seeds == ("first-round",)
    shoe_row: ShoeRow = (await shoe_rows(db))[0]
    result = verify_round(stored, RevealedShoe(bytes(shoe_row.seed), 6))
    assert isinstance(result, Verified) and result.derivation.scope_id == shoe_row.id
