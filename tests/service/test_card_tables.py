"""Card tables and the house as dealer (issue 5), through ``GameService`` on SQLite and
PostgreSQL: the deal comes from the round's seed (Bull Bull) or the group's shoe (Niu-Niu
Poker), card rounds settle as betting closes, and the bank deals when ``dealer house``.
After each test the ledger's invariants are checked in the database (``check_all``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.engine.errors import GameError, RuleViolation
from bot.engine.round import (
    CardsDealt,
    Grabbed,
    GrabbingStarted,
    Phase,
    RoundSettled,
    RoundStarted,
    RoundVoided,
    deal_seed_of,
)
from bot.engine.settlement import Result, Stake, settle
from bot.rules.cards import deal_packed
from bot.rules.ruleset import get_ruleset
from bot.rules.split import commitment, split_envelope
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.models import Chat, ShoeRow
from tests.helpers.card_tables import betting_with_a_dealer, close_betting, place, shoe_rows, table
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    check_all,
    find_seed,
    fund,
)

SECONDS = TEST_SETTINGS.bet_seconds


@pytest.fixture(autouse=True)
async def _ledger_checked_after_each_test(db: Database) -> AsyncIterator[None]:
    yield
    await check_all(db)


async def available(service: GameService, person: Person) -> int:
    return (await service.balance(GROUP, person.id)).available


# -- settings ------------------------------------------------------------------------------


async def test_switching_to_a_card_game_applies_its_table_defaults(service: GameService) -> None:
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "dealer_fee", "2", confirmed=True)
    await service.change_setting(GROUP, ADMIN, "ruleset", "bullbull")
    settings = await service.settings(GROUP)
    assert (settings.ruleset, settings.rake_bps, settings.rebate_bps) == ("bullbull", 0, 0)
    assert settings.dealer_fees == 0  # seed 001: no commission
    assert (settings.min_bet, settings.max_bet) == (100, 50_000)
    await service.change_setting(GROUP, ADMIN, "rake", "2%")
    assert (await service.settings(GROUP)).rake_bps == 200
    # Back to the envelope game: the group's own defaults return.
    await service.change_setting(GROUP, ADMIN, "ruleset", "envelope68", confirmed=True)
    settings = await service.settings(GROUP)
    assert (settings.rake_bps, settings.rebate_bps) == (
        TEST_SETTINGS.rake_bps,
        TEST_SETTINGS.rebate_bps,
    )
    assert (settings.min_bet, settings.max_bet) == (TEST_SETTINGS.min_bet, TEST_SETTINGS.max_bet)


async def test_an_unknown_ruleset_or_dealer_is_refused(service: GameService) -> None:
    with pytest.raises(GameError) as refused:
        await service.change_setting(GROUP, ADMIN, "ruleset", "blackjack")
    assert refused.value.key == "bad_setting.not_one_of"
    assert refused.value.params["name"] == "ruleset"
    assert "envelope68" in refused.value.params["choices"].split(", ")
    with pytest.raises(GameError) as refused:
        await service.change_setting(GROUP, ADMIN, "dealer", "robot")
    assert refused.value.key == "bad_setting.not_one_of"
    assert refused.value.params == {"name": "dealer", "choices": "bid, house"}
    assert (await service.settings(GROUP)).ruleset == "envelope68"


# -- bullbull --------------------------------------------------------------------------------


async def test_bullbull_deals_from_the_rounds_seed_and_settles_as_betting_closes(
    service: GameService, clock: Clock
) -> None:
    await table(service, "bullbull")
    state = await betting_with_a_dealer(service, clock)
    bets = [(PLAYERS[0], 1_000), (PLAYERS[1], 2_000), (PLAYERS[2], 500)]
    await place(service, bets, chips=100_000)
    dealer_before = await available(service, DEALER)
    events = await close_betting(service, clock, state.id)
    assert events[0] == CardsDealt(4, 20)
    assert not any(isinstance(e, (GrabbingStarted, Grabbed)) for e in events)
    (settled,) = [e for e in events if isinstance(e, RoundSettled)]
    dealt = await service.round(state.id)
    assert dealt is not None and dealt.fairness == 2
    hands = deal_packed(deal_seed_of(dealt), 1, 4)
    expected = settle(
        dealer_outcome=hands[3],
        pool=50_000,
        stakes=[Stake(p.id, amount, hand) for (p, amount), hand in zip(bets, hands, strict=False)],
        rake_bps=0,
        rebate_bps=0,
        dealer_fees=0,
        ruleset=get_ruleset("bullbull"),
    )
    assert settled.settlement == expected
    stored = await service.round(state.id)
    assert stored is not None and stored.phase is Phase.SETTLED
    assert stored.shares == hands
    for person, _ in bets:
        assert await available(service, person) == 100_000 + expected.outcomes[person.id].net
    # The dealer's pool and fees were held: all of it comes back with the dealer's net.
    assert await available(service, DEALER) - dealer_before == 50_000 + expected.dealer_net


async def test_bullbull_a_bet_holds_five_times_the_stake(
    service: GameService, clock: Clock
) -> None:
    await table(service, "bullbull")
    await betting_with_a_dealer(service, clock)
    await fund(service, PLAYERS[0], 4_999)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, PLAYERS[0], 1_000)
    assert refused.value.key == "not_enough_chips_to_bet"
    assert refused.value.params["multiplier"] == 5
    await fund(service, PLAYERS[0], 1)
    await service.bet(GROUP, PLAYERS[0], 1_000)
    assert (await service.balance(GROUP, PLAYERS[0].id)).held == 5_000


async def test_bullbull_the_tenth_bet_gets_table_full(service: GameService, clock: Clock) -> None:
    await table(service, "bullbull")
    await betting_with_a_dealer(service, clock)
    extra = [Person(200 + i, f"Extra{i}") for i in range(10)]
    await place(service, [(person, 100) for person in extra[:9]])
    await fund(service, extra[9], 10_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, extra[9], 100)
    assert (refused.value.key, refused.value.params) == ("table_full", {"seats": 9})
    assert (await service.balance(GROUP, extra[9].id)).held == 0
    # A seated player can still change their bet.
    await service.bet(GROUP, extra[0], 200)


# -- poker29 and its shoe --------------------------------------------------------------------


async def test_poker29_deals_from_the_groups_shoe_across_rounds(
    service: GameService, clock: Clock, db: Database, seeds: Seeds
) -> None:
    await table(service, "poker29")
    first = await betting_with_a_dealer(service, clock)
    (shoe,) = await shoe_rows(db)
    assert first.commitment == commitment(bytes(shoe.seed)) == shoe.commitment
    assert first.shoe is not None and first.shoe.offset == 0
    await place(service, [(PLAYERS[0], 1_000), (PLAYERS[1], 1_000)])
    events = await close_betting(service, clock, first.id)
    assert events[0] == CardsDealt(3, 15)
    stored = await service.round(first.id)
    assert stored is not None
    # The shoe's order derives from its seed and its first round's client seeds.
    assert stored.shares == deal_packed(deal_seed_of(stored), 6, 3, 0)
    (shoe,) = await shoe_rows(db)
    assert shoe.dealt == 15
    # The next round goes on from card 15 of the same shoe.
    clock.advance(TEST_SETTINGS.pause_seconds)
    second = await betting_with_a_dealer(service, clock)
    assert second.shoe is not None and (second.shoe.id, second.shoe.offset) == (shoe.id, 15)
    await place(service, [(PLAYERS[2], 1_000)])
    await close_betting(service, clock, second.id)
    stored = await service.round(second.id)
    assert stored is not None and stored.shares == deal_packed(deal_seed_of(stored), 6, 2, 15)
    (shoe,) = await shoe_rows(db)
    assert shoe.dealt == 25


async def test_poker29_shoe_is_replaced_once_more_than_half_is_dealt_and_its_seed_revealed(
    service: GameService, clock: Clock, db: Database
) -> None:
    await table(service, "poker29")
    first = await betting_with_a_dealer(service, clock)
    assert first.shoe is not None
    # Pretend 157 of the 312 cards are gone: more than half.
    async with db.transaction() as session:
        row = await session.get(ShoeRow, first.shoe.id)
        assert row is not None
        row.dealt = 157
    clock.advance(SECONDS)
    voided = await service.advance(first.id)  # no bets: void, nothing dealt
    assert any(isinstance(e, RoundVoided) for e in voided.events)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    (event,) = [e for e in started.events if isinstance(e, RoundStarted)]
    old, new = await shoe_rows(db)
    assert event.retired_shoe is not None
    assert (event.retired_shoe.id, event.retired_shoe.seed) == (old.id, bytes(old.seed))
    assert old.replaced_at_ms is not None and new.replaced_at_ms is None
    assert started.round.shoe is not None and started.round.shoe.id == new.id
    assert started.round.commitment == new.commitment != old.commitment


async def test_poker29_a_losing_player_loses_the_stake_once_and_a_push_returns_it(
    service: GameService, clock: Clock
) -> None:
    await table(service, "poker29")
    state = await betting_with_a_dealer(service, clock)
    bets = [(person, 1_000) for person in PLAYERS[:8]]
    await place(service, bets, chips=1_000)  # the hold is 1x: the stake itself
    events = await close_betting(service, clock, state.id)
    (settled,) = [e for e in events if isinstance(e, RoundSettled)]
    for person, amount in bets:
        outcome = settled.settlement.outcomes[person.id]
        assert outcome.result in (Result.WIN, Result.LOSE, Result.TIE, Result.DRINK)
        if outcome.result is Result.LOSE:
            assert outcome.net == -amount
        if outcome.result in (Result.TIE, Result.DRINK):
            assert outcome.net == 0
        assert await available(service, person) == 1_000 + outcome.net


# -- the house deals --------------------------------------------------------------------------


async def test_fund_moves_chips_from_the_mint_to_the_bank(service: GameService) -> None:
    assert await service.fund(GROUP, ADMIN, 20_000) == 20_000
    assert await service.fund(GROUP, ADMIN, 5_000, update_id=7) == 25_000
    assert await service.fund(GROUP, ADMIN, 5_000, update_id=7) is None  # a retried update
    assert await service.bank_balance(GROUP) == 25_000
    with pytest.raises(RuleViolation):
        await service.fund(GROUP, ADMIN, 0)


async def test_with_the_house_dealing_an_empty_bank_cannot_start_a_round(
    service: GameService,
) -> None:
    await table(service, "bullbull", dealer="house")
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN)
    assert refused.value.key == "bank_empty"
    assert await service.current_round(GROUP) is None


@pytest.mark.parametrize("ruleset", ["bullbull", "poker29_vn"])
async def test_with_the_house_dealing_bidding_is_skipped_and_the_bank_is_the_pool(
    service: GameService, clock: Clock, ruleset: str
) -> None:
    await table(service, ruleset, dealer="house")
    await service.fund(GROUP, ADMIN, 30_000)
    started = await service.start_round(GROUP, actor=ADMIN)
    state = started.round
    assert state is not None and state.phase is Phase.BETTING
    assert (state.pool, state.dealer_id) == (30_000, None)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, DEALER, 10_000)
    assert refused.value.key == "not_bidding"
    bets = [(PLAYERS[0], 2_000), (PLAYERS[1], 3_000), (PLAYERS[2], 1_000)]
    await place(service, bets)
    events = await close_betting(service, clock, state.id)
    (settled,) = [e for e in events if isinstance(e, RoundSettled)]
    stored = await service.round(state.id)
    assert stored is not None and stored.phase is Phase.SETTLED
    assert len(stored.shares) == 4 and stored.dealer_outcome() == stored.shares[3]
    expected = settle(
        dealer_outcome=stored.shares[3],
        pool=30_000,
        stakes=[Stake(p.id, a, s) for (p, a), s in zip(bets, stored.shares, strict=False)],
        rake_bps=0,
        rebate_bps=0,
        dealer_fees=0,
        ruleset=get_ruleset(ruleset),
    )
    assert settled.settlement == expected
    assert await service.bank_balance(GROUP) == 30_000 + expected.dealer_net
    lines = await service.results(state.id)
    assert [line.role for line in lines] == ["player", "player", "player", "house"]
    assert lines[-1].net == expected.dealer_net


async def test_with_the_house_dealing_the_envelope_game_gives_the_house_the_last_share(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "dealer", "house")
    await service.fund(GROUP, ADMIN, 30_000)
    # Dealer fees are a bidder's cost: the house does not pay them to itself.
    await service.change_setting(GROUP, ADMIN, "dealer_fee", "1")
    seeds.queued.append((7).to_bytes(32, "big"))
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None and started.round.phase is Phase.BETTING
    await place(service, [(PLAYERS[0], 100), (PLAYERS[1], 200)])
    events = await close_betting(service, clock, started.round.id)
    assert any(isinstance(e, GrabbingStarted) for e in events)
    dealt = await service.round(started.round.id)
    assert dealt is not None
    shares = split_envelope(deal_seed_of(dealt), 3, 3 * 500, max_share=999)
    await service.grab(GROUP, PLAYERS[1])
    result = await service.grab(GROUP, PLAYERS[0])
    (settled,) = [e for e in result.events if isinstance(e, RoundSettled | RoundVoided)]
    if isinstance(settled, RoundVoided):  # the house's last share was 0.01: re-dealt
        assert shares[2] == 1
        return
    expected = settle(
        dealer_outcome=shares[2],
        pool=30_000,
        stakes=[Stake(PLAYERS[0].id, 100, shares[1]), Stake(PLAYERS[1].id, 200, shares[0])],
        rake_bps=TEST_SETTINGS.rake_bps,
        rebate_bps=TEST_SETTINGS.rebate_bps,
        dealer_fees=0,
    )
    assert settled.settlement == expected
    assert await service.bank_balance(GROUP) == 30_000 + expected.dealer_net


async def test_a_round_due_to_start_with_an_empty_bank_says_why_and_stops_waiting(
    service: GameService, clock: Clock, db: Database
) -> None:
    await table(service, "bullbull", dealer="house")
    async with db.transaction() as session:
        chat = await session.get(Chat, GROUP)
        assert chat is not None
        chat.next_round_at_ms = clock.now_ms
    assert await service.due_chat_ids() == [GROUP]
    result = await service.start_due_round(GROUP)
    assert result.round is None
    assert result.refused is not None and result.refused.key == "bank_empty"
    assert await service.due_chat_ids() == []


async def test_a_redeal_that_cannot_start_for_an_empty_bank_says_why(
    v1_service: GameService, clock: Clock, seeds: Seeds
) -> None:
    service = v1_service  # a queued seed pins the dealer's 0.01
    await service.set_open(GROUP, ADMIN, True)
    await service.change_setting(GROUP, ADMIN, "envelope_mean_share", "0.05")
    seeds.queued.append(find_seed(2, 10, lambda shares: shares[1] == 1))  # the dealer's 0.01
    state = await betting_with_a_dealer(service, clock, pool=1_000)
    await place(service, [(PLAYERS[0], 100)])
    clock.advance(SECONDS)
    await service.advance(state.id)
    # The next round is the house's, and its bank is empty.
    await service.change_setting(GROUP, ADMIN, "dealer", "house")
    await service.grab(GROUP, PLAYERS[0])
    result = await service.grab(GROUP, DEALER)
    assert any(isinstance(e, RoundVoided) for e in result.events)
    assert result.started is None
    assert result.refused is not None and result.refused.key == "bank_empty"
    assert await service.current_round(GROUP) is None


async def test_a_table_that_leaves_niu_niu_poker_retires_its_shoe_and_reveals_the_seed(
    service: GameService, clock: Clock, db: Database
) -> None:
    await table(service, "poker29")
    first = await betting_with_a_dealer(service, clock)
    await place(service, [(PLAYERS[0], 1_000)])
    await close_betting(service, clock, first.id)
    await service.change_setting(GROUP, ADMIN, "ruleset", "bullbull")
    clock.advance(TEST_SETTINGS.pause_seconds)
    started = await service.start_round(GROUP, actor=ADMIN)
    (event,) = [e for e in started.events if isinstance(e, RoundStarted)]
    (shoe,) = await shoe_rows(db)
    assert shoe.replaced_at_ms is not None
    assert event.retired_shoe is not None and event.retired_shoe.seed == bytes(shoe.seed)
    assert started.round is not None and started.round.shoe is None
    # Back at Niu-Niu Poker later: a fresh shoe.
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)  # nobody bid: void
    await service.change_setting(GROUP, ADMIN, "ruleset", "poker29")
    again = await service.start_round(GROUP, actor=ADMIN)
    assert again.round is not None and again.round.shoe is not None
    assert again.round.shoe.id != shoe.id and again.round.shoe.offset == 0
    assert all(e.retired_shoe is None for e in again.events if isinstance(e, RoundStarted))


async def test_a_card_round_whose_betting_closed_while_stopped_is_dealt_once_on_recovery(
    service: GameService, clock: Clock, db: Database, seeds: Seeds
) -> None:
    await table(service, "poker29", dealer="house")
    await service.fund(GROUP, ADMIN, 50_000)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await place(service, [(PLAYERS[0], 1_000), (PLAYERS[1], 2_000)])
    # The process stops; betting closes while nobody runs; a new process recovers.
    clock.advance(SECONDS + 60)
    restarted = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    results, still_open = await restarted.recover()
    settled = [e for r in results for e in r.events if isinstance(e, RoundSettled)]
    assert len(settled) == 1 and still_open == []
    assert (await restarted.recover()) == ([], [])
    (shoe,) = await shoe_rows(db)
    assert shoe.dealt == 15
