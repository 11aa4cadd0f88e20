"""Every rule of the round as played (seed 000 and the issue), through ``GameService``, on
SQLite and PostgreSQL. Each test is named after the rule it checks; after each one the
ledger's invariants are checked in the database (``check_all``).

Amounts follow ``TEST_SETTINGS``: bids from 10.00 in steps of 10.00, bets 1.00-50.00, a
bet holds 18x its stake, rake 5%, rebate 0.7%, envelope shares of 5.00 on average.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

import bot.engine.round as engine_round
from bot.engine.errors import GameError, RuleViolation
from bot.engine.round import (
    BetCancelled,
    BetPlaced,
    BidPlaced,
    DealerChosen,
    Grabbed,
    GrabbingStarted,
    Phase,
    Round,
    RoundSettled,
    RoundStarted,
    RoundVoided,
    VoidReason,
)
from bot.engine.settings import SettingError
from bot.rules.envelope import compare, evaluate
from bot.rules.ruleset import RedEnvelopeRuleset
from bot.rules.split import commitment, split_envelope
from bot.service.game import GameService, Person
from bot.service.round_steps import RoundSteps
from bot.store import round_writes
from bot.store.db import Database
from bot.store.models import Account, LedgerTransaction, Posting
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
    open_table,
    round_transactions,
)

P0, P1, P2, P3 = PLAYERS[:4]
RAKE_BPS, REBATE_BPS = TEST_SETTINGS.rake_bps, TEST_SETTINGS.rebate_bps


@pytest.fixture
def service(v1_service: GameService) -> GameService:
    """These rules are checked on splits pinned by a queued seed (``find_seed``): rounds
    dealt by seed derivation 1, whose deal seed is the seed itself (``bot.rules.fairness``;
    derivation 2 is tested in tests/unit/test_fairness.py and test_card_tables.py)."""
    return v1_service


@pytest.fixture(autouse=True)
async def _ledger_checked_after_each_test(db: Database) -> AsyncIterator[None]:
    yield
    await check_all(db)


# -- helpers ------------------------------------------------------------------------------


async def start(service: GameService, actor: Person = ADMIN) -> Round:
    """Open the table and start a round (bidding)."""
    await open_table(service)
    result = await service.start_round(GROUP, actor=actor)
    assert isinstance(result.round, Round) and result.round.phase is Phase.BIDDING
    return result.round


async def to_betting(
    service: GameService, clock: Clock, *, pool: int = 10_000, dealer_chips: int = 100_000
) -> Round:
    """A round whose dealer (DEALER) bid ``pool``; betting is open."""
    started = await start(service)
    await fund(service, DEALER, dealer_chips)
    await service.bid(GROUP, DEALER, pool)
    clock.advance(TEST_SETTINGS.bid_seconds)
    result = await service.advance(started.id)
    assert isinstance(result.round, Round) and result.round.phase is Phase.BETTING
    return result.round


async def to_grabbing(
    service: GameService,
    clock: Clock,
    bets: list[tuple[Person, int]],
    *,
    pool: int = 10_000,
    chips: int = 100_000,
) -> Round:
    """A round in grabbing with the given bets (each bettor funded with ``chips``)."""
    state = await to_betting(service, clock, pool=pool)
    for person, amount in bets:
        await fund(service, person, chips)
        await service.bet(GROUP, person, amount)
    clock.advance(TEST_SETTINGS.bet_seconds)
    result = await service.advance(state.id)
    assert isinstance(result.round, Round) and result.round.phase is Phase.GRABBING
    return result.round


async def available_and_held(service: GameService, person: Person) -> tuple[int, int]:
    balance = await service.balance(GROUP, person.id)
    return balance.available, balance.held


async def last_postings(db: Database, kind: str) -> dict[tuple[str, int], int]:
    """The postings of the latest ledger transaction of ``kind``: (account kind, user) ->
    amount."""
    async with db.transaction() as session:
        tx_id = await session.scalar(
            select(LedgerTransaction.id)
            .where(LedgerTransaction.kind == kind)
            .order_by(LedgerTransaction.id.desc())
            .limit(1)
        )
        rows = await session.execute(
            select(Account.kind, Account.user_id, Posting.amount)
            .join(Account, Account.id == Posting.account_id)
            .where(Posting.transaction_id == tx_id)
        )
        return {(account_kind, user): amount for account_kind, user, amount in rows}


async def set_fees(service: GameService) -> int:
    """Dealer fee 1.00, service fee 0.50, envelope fee 0.25: 1.75 in all."""
    await service.change_setting(GROUP, ADMIN, "dealer_fee", "1", confirmed=True)
    await service.change_setting(GROUP, ADMIN, "service_fee", "0.50", confirmed=True)
    await service.change_setting(GROUP, ADMIN, "envelope_fee", "0.25", confirmed=True)
    return 175


def ended(events: tuple[object, ...]) -> RoundSettled | RoundVoided:
    (last,) = [e for e in events if isinstance(e, (RoundSettled, RoundVoided))]
    return last


def share(amount: int, bps: int) -> int:
    return amount * bps // 10_000


# -- bidding ------------------------------------------------------------------------------


async def test_a_bid_is_at_least_the_minimum_bid(service: GameService) -> None:
    await start(service)
    await fund(service, P0, 50_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 999)
    assert refused.value.key == "bid_too_low"
    assert refused.value.params == {"amount": 999, "minimum": 1_000}
    assert await available_and_held(service, P0) == (50_000, 0)
    await service.bid(GROUP, P0, 1_000)
    assert await available_and_held(service, P0) == (49_000, 1_000)


async def test_a_bid_is_at_least_the_highest_bid_plus_the_increment(
    service: GameService,
) -> None:
    await start(service)
    for person in (P0, P1):
        await fund(service, person, 50_000)
    await service.bid(GROUP, P0, 3_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P1, 3_999)
    assert refused.value.key == "bid_too_low"
    assert refused.value.params == {"amount": 3_999, "minimum": 4_000}
    result = await service.bid(GROUP, P1, 4_000)
    assert result.events == (BidPlaced(P1.id, 4_000, P0.id, 3_000),)


async def test_a_bidder_needs_available_chips_for_the_bid_and_the_dealer_fees(
    service: GameService,
) -> None:
    fees = await set_fees(service)
    await start(service)
    await fund(service, P0, 1_000 + fees - 1)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 1_000)
    assert refused.value.key == "not_enough_chips"
    assert refused.value.params == {"needed": 1_000 + fees, "available": 1_000 + fees - 1}
    assert await available_and_held(service, P0) == (1_000 + fees - 1, 0)
    await fund(service, P0, 1)
    await service.bid(GROUP, P0, 1_000)
    assert await available_and_held(service, P0) == (0, 1_000 + fees)


async def test_an_outbid_bidders_hold_is_released_at_once(
    service: GameService, db: Database
) -> None:
    fees = await set_fees(service)
    state = await start(service)
    for person in (P0, P1):
        await fund(service, person, 50_000)
    await service.bid(GROUP, P0, 1_000)
    assert await available_and_held(service, P0) == (50_000 - 1_000 - fees, 1_000 + fees)
    result = await service.bid(GROUP, P1, 2_000)
    assert result.events == (BidPlaced(P1.id, 2_000, P0.id, 1_000),)
    assert await available_and_held(service, P0) == (50_000, 0)
    assert await available_and_held(service, P1) == (50_000 - 2_000 - fees, 2_000 + fees)
    # The release and the new hold are one transaction.
    assert await last_postings(db, "bid") == {
        ("held", P0.id): -(1_000 + fees),
        ("available", P0.id): 1_000 + fees,
        ("available", P1.id): -(2_000 + fees),
        ("held", P1.id): 2_000 + fees,
    }
    assert await round_transactions(db, state.id) == ["bid", "bid"]


async def test_a_bidder_may_raise_their_own_bid_and_the_hold_grows_by_the_difference(
    service: GameService, db: Database
) -> None:
    await start(service)
    await fund(service, P0, 50_000)
    await service.bid(GROUP, P0, 1_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 1_500)
    assert refused.value.key == "bid_too_low"
    result = await service.bid(GROUP, P0, 4_000)
    assert result.events == (BidPlaced(P0.id, 4_000, None, 0),)
    assert await available_and_held(service, P0) == (46_000, 4_000)
    assert await last_postings(db, "bid") == {("available", P0.id): -3_000, ("held", P0.id): 3_000}


async def test_a_raise_may_use_the_chips_of_your_own_hold(service: GameService) -> None:
    await start(service)
    await fund(service, P0, 3_000)
    await service.bid(GROUP, P0, 2_000)
    await service.bid(GROUP, P0, 3_000)
    assert await available_and_held(service, P0) == (0, 3_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 4_000)
    assert refused.value.key == "not_enough_chips"


async def test_the_highest_bidder_at_the_deadline_deals_with_the_bid_as_pool(
    service: GameService, clock: Clock
) -> None:
    state = await start(service)
    for person in (P0, P1):
        await fund(service, person, 50_000)
    await service.bid(GROUP, P0, 1_000)
    await service.bid(GROUP, P1, 2_000)
    await service.bid(GROUP, P0, 5_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    result = await service.advance(state.id)
    after = result.round
    assert after is not None and after.phase is Phase.BETTING
    assert (after.dealer_id, after.pool) == (P0.id, 5_000)
    assert after.deadline_ms == clock() + TEST_SETTINGS.bet_seconds * 1000
    assert result.events == (DealerChosen(P0.id, 5_000, after.deadline_ms),)
    assert await available_and_held(service, P0) == (45_000, 5_000)
    assert await available_and_held(service, P1) == (50_000, 0)


async def test_no_bid_voids_the_round_at_the_deadline(
    service: GameService, clock: Clock, db: Database
) -> None:
    state = await start(service)
    clock.advance(TEST_SETTINGS.bid_seconds - 0.001)
    assert (await service.advance(state.id)).events == ()
    clock.advance(0.001)
    result = await service.advance(state.id)
    assert result.events == (RoundVoided(VoidReason.NO_BIDS, state.seed),)
    assert result.round is not None and result.round.void_reason is VoidReason.NO_BIDS
    assert await round_transactions(db, state.id) == []
    assert await service.current_round(GROUP) is None


async def test_a_bid_after_the_bidding_deadline_is_refused(
    service: GameService, clock: Clock
) -> None:
    await start(service)
    await fund(service, P0, 50_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 1_000)
    assert refused.value.key == "window_closed"
    assert await available_and_held(service, P0) == (50_000, 0)


# -- betting ------------------------------------------------------------------------------


async def test_a_bet_holds_its_stake_times_eighteen(service: GameService, clock: Clock) -> None:
    await to_betting(service, clock)
    await fund(service, P0, 50_000)
    result = await service.bet(GROUP, P0, 1_234)
    assert result.events == (BetPlaced(P0.id, 1_234, 0),)
    assert await available_and_held(service, P0) == (50_000 - 1_234 * 18, 1_234 * 18)


async def test_betting_again_changes_the_bet_and_keeps_its_place_in_bet_order(
    service: GameService, clock: Clock, db: Database
) -> None:
    state = await to_betting(service, clock)
    for person in (P0, P1, P2):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 100)
    result = await service.bet(GROUP, P0, 300)
    assert result.events == (BetPlaced(P0.id, 300, 100),)
    assert await available_and_held(service, P0) == (50_000 - 300 * 18, 300 * 18)
    assert await last_postings(db, "bet") == {
        ("available", P0.id): -200 * 18,
        ("held", P0.id): 200 * 18,
    }
    await service.bet(GROUP, P1, 2_000)
    await service.bet(GROUP, P0, 200)
    stored = await service.round(state.id)
    assert stored is not None
    assert [(bet.user_id, bet.amount) for bet in stored.bets] == [
        (P0.id, 200),
        (P1.id, 2_000),
        (P2.id, 100),
    ]
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, P0, 200)
    assert refused.value.key == "bet_unchanged"


async def test_a_zero_bet_cancels_and_releases_the_hold(service: GameService, clock: Clock) -> None:
    state = await to_betting(service, clock)
    for person in (P0, P1):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 500)
    result = await service.bet(GROUP, P0, 0)
    assert result.events == (BetCancelled(P0.id, 500),)
    assert await available_and_held(service, P0) == (50_000, 0)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, P0, 0)
    assert refused.value.key == "no_bet_to_cancel"
    # A new bet after a cancel takes a new place at the end of the order.
    await service.bet(GROUP, P0, 100)
    stored = await service.round(state.id)
    assert stored is not None
    assert [bet.user_id for bet in stored.bets] == [P1.id, P0.id]


@pytest.mark.parametrize(
    ("amount", "key", "params"),
    [
        (99, "bet_too_small", {"amount": 99, "minimum": 100}),
        (5_001, "bet_too_large", {"amount": 5_001, "maximum": 5_000}),
    ],
)
async def test_a_bet_is_between_min_bet_and_max_bet(
    service: GameService, clock: Clock, amount: int, key: str, params: dict[str, int]
) -> None:
    await to_betting(service, clock)
    await fund(service, P0, 100_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, P0, amount)
    assert (refused.value.key, refused.value.params) == (key, params)
    assert await available_and_held(service, P0) == (100_000, 0)
    await service.bet(GROUP, P0, 100)
    await service.bet(GROUP, P0, 5_000)
    assert await available_and_held(service, P0) == (10_000, 90_000)


async def test_a_player_without_enough_chips_cannot_bet(service: GameService, clock: Clock) -> None:
    await to_betting(service, clock)
    await fund(service, P0, 100 * 18 - 1)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, P0, 100)
    assert refused.value.key == "not_enough_chips_to_bet"
    assert refused.value.params == {"needed": 1_800, "available": 1_799, "multiplier": 18}
    assert await available_and_held(service, P0) == (1_799, 0)
    await fund(service, P0, 1)
    await service.bet(GROUP, P0, 100)
    assert await available_and_held(service, P0) == (0, 1_800)


async def test_the_dealer_cannot_bet(service: GameService, clock: Clock) -> None:
    await to_betting(service, clock)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, DEALER, 100)
    assert refused.value.key == "dealer_cannot_bet"
    assert await available_and_held(service, DEALER) == (90_000, 10_000)


async def test_no_bet_before_betting_opens(service: GameService) -> None:
    await start(service)
    await fund(service, P0, 50_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, P0, 100)
    assert (refused.value.key, refused.value.params) == ("not_betting", {"phase": "bidding"})


async def test_bets_after_the_betting_deadline_are_refused(
    service: GameService, clock: Clock
) -> None:
    state = await to_betting(service, clock)
    await fund(service, P0, 50_000)
    await fund(service, P1, 50_000)
    await service.bet(GROUP, P0, 100)
    clock.advance(TEST_SETTINGS.bet_seconds)  # exactly the deadline, nobody advanced yet
    for person, amount in ((P1, 100), (P0, 200), (P0, 0)):
        with pytest.raises(RuleViolation) as refused:
            await service.bet(GROUP, person, amount)
        assert refused.value.key == "window_closed"
    stored = await service.round(state.id)
    assert stored is not None and stored.phase is Phase.BETTING
    assert [(bet.user_id, bet.amount) for bet in stored.bets] == [(P0.id, 100)]
    assert await available_and_held(service, P1) == (50_000, 0)


async def test_no_bettor_voids_and_releases_the_dealer_without_fees(
    service: GameService, clock: Clock, db: Database
) -> None:
    fees = await set_fees(service)
    state = await to_betting(service, clock)
    assert await available_and_held(service, DEALER) == (100_000 - 10_000 - fees, 10_000 + fees)
    clock.advance(TEST_SETTINGS.bet_seconds)
    result = await service.advance(state.id)
    assert result.events == (RoundVoided(VoidReason.NO_BETS, state.seed),)
    assert await available_and_held(service, DEALER) == (100_000, 0)
    assert await service.house_balance(GROUP) == 0
    assert await round_transactions(db, state.id) == ["bid", "void"]


# -- grabbing -----------------------------------------------------------------------------


async def test_the_envelope_is_split_from_the_seed_one_share_per_bettor_and_the_dealer(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    seed = b"\x42" * 32
    seeds.queued.append(seed)
    state = await to_betting(service, clock)
    for person in (P0, P1, P2):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 100)
    clock.advance(TEST_SETTINGS.bet_seconds)
    result = await service.advance(state.id)
    after = result.round
    assert after is not None and after.phase is Phase.GRABBING
    assert result.events == (GrabbingStarted(4, 2_000, after.deadline_ms),)
    assert after.deadline_ms == clock() + TEST_SETTINGS.grab_seconds * 1000
    assert list(after.shares) == split_envelope(seed, 4, 2_000)
    assert after.seed == seed and after.commitment == commitment(seed)


async def test_a_smaller_mean_share_makes_a_smaller_envelope(
    service: GameService, clock: Clock
) -> None:
    await service.change_setting(GROUP, ADMIN, "envelope_mean_share", "0.05")
    state = await to_grabbing(service, clock, [(P0, 100), (P1, 100)])
    assert sum(state.shares) == 15
    assert list(state.shares) == split_envelope(state.seed, 3, 15)


async def test_each_grab_takes_the_next_share(service: GameService, clock: Clock) -> None:
    state = await to_grabbing(service, clock, [(P0, 100), (P1, 100), (P2, 100)])
    for position, person in enumerate((P2, DEALER, P0)):
        result = await service.grab(GROUP, person, round_id=state.id)
        assert result.events == (Grabbed(person.id, state.shares[position], False),)
    stored = await service.round(state.id)
    assert stored is not None and stored.phase is Phase.GRABBING
    assert [(g.user_id, g.amount) for g in stored.grabs] == [
        (P2.id, state.shares[0]),
        (DEALER.id, state.shares[1]),
        (P0.id, state.shares[2]),
    ]


async def test_a_second_grab_changes_nothing(service: GameService, clock: Clock) -> None:
    state = await to_grabbing(service, clock, [(P0, 100), (P1, 100)])
    await service.grab(GROUP, P0, round_id=state.id)
    before = await service.round(state.id)
    with pytest.raises(RuleViolation) as refused:
        await service.grab(GROUP, P0, round_id=state.id)
    assert refused.value.key == "already_grabbed"
    assert refused.value.params == {"amount": state.shares[0]}
    assert await service.round(state.id) == before


async def test_a_grab_by_someone_not_in_the_round_is_refused(
    service: GameService, clock: Clock
) -> None:
    state = await to_grabbing(service, clock, [(P0, 100)])
    await fund(service, P3, 50_000)
    with pytest.raises(RuleViolation) as refused:
        await service.grab(GROUP, P3, round_id=state.id)
    assert refused.value.key == "not_in_round"
    stored = await service.round(state.id)
    assert stored is not None and stored.grabs == ()


async def test_when_all_have_grabbed_the_round_settles_and_reveals_the_seed(
    service: GameService, clock: Clock, seeds: Seeds, db: Database
) -> None:
    seed = find_seed(3, 1_500, lambda s: 1 not in s)
    seeds.queued.append(seed)
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    (announced,) = started.events
    assert isinstance(announced, RoundStarted) and announced.commitment == commitment(seed)
    await fund(service, DEALER, 100_000)
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    for person in (P0, P1):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 500)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(started.round.id)
    await service.grab(GROUP, P1, round_id=started.round.id)
    await service.grab(GROUP, DEALER, round_id=started.round.id)
    result = await service.grab(GROUP, P0, round_id=started.round.id)
    settled = ended(result.events)
    assert isinstance(settled, RoundSettled) and settled.seed == seed
    assert isinstance(result.round, Round) and result.round.phase is Phase.SETTLED
    assert await round_transactions(db, started.round.id) == ["bid", "bet", "bet", "settle"]
    lines = {line.user_id: line for line in await service.results(started.round.id)}
    assert lines[P1.id].envelope == split_envelope(seed, 3, 1_500)[0]
    assert lines[DEALER.id].envelope == split_envelope(seed, 3, 1_500)[1]
    assert lines[P0.id].envelope == split_envelope(seed, 3, 1_500)[2]
    for person in (P0, P1):
        assert await available_and_held(service, person) == (
            50_000 + settled.settlement.outcomes[person.id].net,
            0,
        )


async def test_the_grab_deadline_grabs_the_rest_in_bet_order_with_the_dealer_last(
    service: GameService, clock: Clock
) -> None:
    state = await to_betting(service, clock)
    for person in (P0, P1, P2, P3):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 100)
    await service.bet(GROUP, P0, 300)  # a change keeps P0 first
    clock.advance(TEST_SETTINGS.bet_seconds)
    grabbing = (await service.advance(state.id)).round
    assert grabbing is not None
    shares = grabbing.shares
    await service.grab(GROUP, P2, round_id=state.id)
    clock.advance(TEST_SETTINGS.grab_seconds - 0.001)
    assert (await service.advance(state.id)).events == ()
    clock.advance(0.001)
    result = await service.advance(state.id)
    grabs = [e for e in result.events if isinstance(e, Grabbed)]
    assert grabs == [
        Grabbed(P0.id, shares[1], True),
        Grabbed(P1.id, shares[2], True),
        Grabbed(P3.id, shares[3], True),
        Grabbed(DEALER.id, shares[4], True),
    ]
    assert isinstance(result.round, Round) and not result.round.phase.is_open
    assert [(g.user_id, g.auto) for g in result.round.grabs] == [
        (P2.id, False),
        (P0.id, True),
        (P1.id, True),
        (P3.id, True),
        (DEALER.id, True),
    ]


async def test_a_grab_after_the_deadline_is_refused(service: GameService, clock: Clock) -> None:
    state = await to_grabbing(service, clock, [(P0, 100)])
    clock.advance(TEST_SETTINGS.grab_seconds)
    with pytest.raises(RuleViolation) as refused:
        await service.grab(GROUP, P0, round_id=state.id)
    assert refused.value.key == "window_closed"


# -- 0.01: re-deal for the dealer, 免死 for a player ----------------------------------------


@pytest.mark.parametrize("how", ["last grab", "grab deadline"])
async def test_a_dealer_on_one_cent_redeals_refunds_all_and_starts_a_new_round(
    service: GameService, clock: Clock, seeds: Seeds, db: Database, how: str
) -> None:
    await set_fees(service)
    await service.change_setting(GROUP, ADMIN, "envelope_mean_share", "0.05")
    # Two shares of 0.10 in all: the player takes the first, the dealer the last, 0.01.
    seed = find_seed(2, 10, lambda s: s[1] == 1)
    seeds.queued.append(seed)
    state = await to_grabbing(service, clock, [(P0, 1_000)], chips=50_000)
    assert state.shares == (9, 1)
    await service.grab(GROUP, P0, round_id=state.id)
    if how == "last grab":
        result = await service.grab(GROUP, DEALER, round_id=state.id)
    else:
        clock.advance(TEST_SETTINGS.grab_seconds)
        result = await service.advance(state.id)
    assert ended(result.events) == RoundVoided(VoidReason.REDEAL, seed)
    assert isinstance(result.round, Round) and result.round.phase is Phase.VOID
    # Everyone refunded, nothing charged, no fee.
    assert await available_and_held(service, P0) == (50_000, 0)
    assert await available_and_held(service, DEALER) == (100_000, 0)
    assert await service.house_balance(GROUP) == 0
    assert await round_transactions(db, state.id) == ["bid", "bet", "void"]
    assert await service.results(state.id) == []
    # A new round started at once.
    assert result.started is not None and result.started.phase is Phase.BIDDING
    assert result.started.id != state.id
    assert result.started.deadline_ms == clock() + TEST_SETTINGS.bid_seconds * 1000
    current = await service.current_round(GROUP)
    assert current is not None and current.id == result.started.id


async def test_a_redeal_on_a_closed_table_starts_no_new_round(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    await service.change_setting(GROUP, ADMIN, "envelope_mean_share", "0.05")
    seeds.queued.append(find_seed(2, 10, lambda s: s[1] == 1))
    state = await to_grabbing(service, clock, [(P0, 100)])
    await service.set_open(GROUP, ADMIN, False)
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    assert ended(result.events).reason is VoidReason.REDEAL  # type: ignore[union-attr]
    assert result.started is None
    assert await service.current_round(GROUP) is None


async def test_a_player_on_one_cent_is_immune_and_a_loss_becomes_a_refund(
    service: GameService, clock: Clock, seeds: Seeds, db: Database
) -> None:
    await service.change_setting(GROUP, ADMIN, "envelope_mean_share", "0.05")
    seed = find_seed(2, 10, lambda s: s[0] == 1)  # player 0.01, dealer 0.09
    seeds.queued.append(seed)
    state = await to_grabbing(service, clock, [(P0, 1_000)], chips=50_000)
    assert compare(evaluate(state.shares[0]), evaluate(state.shares[1])) < 0
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    settled = ended(result.events)
    assert isinstance(settled, RoundSettled)
    lines = {line.user_id: line for line in await service.results(state.id)}
    assert (lines[P0.id].result, lines[P0.id].net, lines[P0.id].rebate) == ("immune", 0, 0)
    assert lines[DEALER.id].net == 0
    assert await available_and_held(service, P0) == (50_000, 0)
    assert await available_and_held(service, DEALER) == (100_000, 0)
    assert await service.house_balance(GROUP) == 0


# -- settlement: 喝水, fees, rake and rebate ---------------------------------------------------


def _drink_split(shares: list[int]) -> bool:
    """P0 and P1 both beat the dealer (last share); the stronger one's 1.00 x multiplier
    fits in a 10.00 pool, both together do not."""
    first, second, dealer = (evaluate(amount) for amount in shares)
    if dealer.amount == 1 or compare(first, dealer) <= 0 or compare(second, dealer) <= 0:
        return False
    strong, weak = (first, second) if compare(first, second) > 0 else (second, first)
    return strong.multiplier <= 10 < strong.multiplier + weak.multiplier


async def test_winners_the_pool_cannot_pay_drink_water_and_get_their_stake_back(
    service: GameService, clock: Clock, seeds: Seeds, db: Database
) -> None:
    seed = find_seed(3, 1_500, _drink_split)
    seeds.queued.append(seed)
    state = await to_grabbing(service, clock, [(P0, 100), (P1, 100)], pool=1_000)
    hands = [evaluate(amount) for amount in state.shares]
    strong, weak = (P0, P1) if compare(hands[0], hands[1]) > 0 else (P1, P0)
    strong_hand = hands[0] if strong is P0 else hands[1]
    for person in (P0, P1, DEALER):
        result = await service.grab(GROUP, person, round_id=state.id)
    assert isinstance(ended(result.events), RoundSettled)
    gross = 100 * strong_hand.multiplier
    rake, rebate = share(gross, RAKE_BPS), share(gross, REBATE_BPS)
    lines = {line.user_id: line for line in await service.results(state.id)}
    assert (lines[strong.id].result, lines[strong.id].gross) == ("win", gross)
    assert lines[strong.id].net == gross - rake + rebate
    assert (lines[weak.id].result, lines[weak.id].net, lines[weak.id].rebate) == ("drink", 0, 0)
    assert lines[DEALER.id].net == -gross
    assert await available_and_held(service, weak) == (100_000, 0)
    assert await available_and_held(service, strong) == (100_000 + gross - rake + rebate, 0)
    assert await available_and_held(service, DEALER) == (100_000 - gross, 0)
    assert await service.house_balance(GROUP) == rake - rebate


def _player_loses(shares: list[int]) -> bool:
    player, dealer = evaluate(shares[0]), evaluate(shares[1])
    return 1 not in shares and compare(player, dealer) < 0


def _player_wins(shares: list[int]) -> bool:
    player, dealer = evaluate(shares[0]), evaluate(shares[1])
    return 1 not in shares and compare(player, dealer) > 0


@pytest.mark.parametrize("player_wins", [False, True], ids=["player loses", "player wins"])
async def test_rake_and_rebate_reach_the_house(
    service: GameService, clock: Clock, seeds: Seeds, db: Database, player_wins: bool
) -> None:
    seed = find_seed(2, 1_000, _player_wins if player_wins else _player_loses)
    seeds.queued.append(seed)
    stake = 1_000
    state = await to_grabbing(service, clock, [(P0, stake)], pool=20_000)
    player, dealer = evaluate(state.shares[0]), evaluate(state.shares[1])
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    assert isinstance(ended(result.events), RoundSettled)
    if player_wins:
        gross = stake * player.multiplier
        rake, rebate = share(gross, RAKE_BPS), share(gross, REBATE_BPS)
        player_net, dealer_net = gross - rake + rebate, -gross
    else:
        gross = stake * dealer.multiplier
        rake, rebate = share(gross, RAKE_BPS), share(gross, REBATE_BPS)
        player_net, dealer_net = rebate - gross, gross - rake
    assert rake > 0 and rebate > 0
    assert await available_and_held(service, P0) == (100_000 + player_net, 0)
    assert await available_and_held(service, DEALER) == (100_000 + dealer_net, 0)
    assert await service.house_balance(GROUP) == rake - rebate
    lines = {line.user_id: line for line in await service.results(state.id)}
    assert (lines[P0.id].gross, lines[P0.id].rake, lines[P0.id].rebate) == (gross, rake, rebate)


async def test_the_dealer_pays_the_fees_only_when_the_round_settles(
    service: GameService, clock: Clock, seeds: Seeds, db: Database
) -> None:
    fees = await set_fees(service)
    seeds.queued.append(find_seed(2, 1_000, _player_loses))
    state = await to_grabbing(service, clock, [(P0, 100)], pool=10_000)
    # Held, not charged, until the round settles.
    assert await available_and_held(service, DEALER) == (100_000 - 10_000 - fees, 10_000 + fees)
    assert await service.house_balance(GROUP) == 0
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    settled = ended(result.events)
    assert isinstance(settled, RoundSettled)
    gross = 100 * evaluate(state.shares[1]).multiplier
    rake, rebate = share(gross, RAKE_BPS), share(gross, REBATE_BPS)
    assert settled.settlement.dealer_net == gross - rake - fees
    assert await available_and_held(service, DEALER) == (100_000 + gross - rake - fees, 0)
    assert await service.house_balance(GROUP) == fees + rake - rebate


# -- stale buttons and the table ------------------------------------------------------------


async def test_a_button_of_an_old_round_is_stale(service: GameService, clock: Clock) -> None:
    old = await start(service)
    await fund(service, P0, 50_000)
    with pytest.raises(RuleViolation) as refused:
        await service.bid(GROUP, P0, 1_000, round_id=old.id + 1)
    assert refused.value.key == "stale_button"
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(old.id)  # no bids: void
    with pytest.raises(RuleViolation) as refused:
        await service.grab(GROUP, P0, round_id=old.id)
    assert refused.value.key == "stale_button"
    with pytest.raises(RuleViolation) as refused:
        await service.grab(GROUP, P0)
    assert refused.value.key == "no_round"
    new = (await service.start_round(GROUP, actor=ADMIN)).round
    assert new is not None and new.id != old.id
    for command in (
        service.grab(GROUP, P0, round_id=old.id),
        service.bid(GROUP, P0, 1_000, round_id=old.id),
        service.bet(GROUP, P0, 100, round_id=old.id),
    ):
        with pytest.raises(RuleViolation) as refused:
            await command
        assert refused.value.key == "stale_button"
    assert await available_and_held(service, P0) == (50_000, 0)
    await service.bid(GROUP, P0, 1_000, round_id=new.id)


async def test_a_closed_table_refuses_to_start_a_round(service: GameService) -> None:
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN)
    assert refused.value.key == "table_closed"
    await open_table(service)
    await service.set_open(GROUP, ADMIN, False)
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN)
    assert refused.value.key == "table_closed"
    assert await service.current_round(GROUP) is None


async def test_only_one_round_runs_at_a_time(service: GameService) -> None:
    state = await start(service)
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN)
    assert (refused.value.key, refused.value.params) == ("round_running", {"round_id": state.id})


async def test_a_closing_table_finishes_its_round_but_starts_no_next_one(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    seeds.queued.append(find_seed(2, 1_000, lambda s: 1 not in s))
    state = await to_grabbing(service, clock, [(P0, 100)])
    assert await service.set_open(GROUP, ADMIN, False) is True
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    assert isinstance(ended(result.events), RoundSettled)
    clock.advance(TEST_SETTINGS.pause_seconds * 10)
    assert await service.sweep() == []
    assert await service.current_round(GROUP) is None


async def test_after_a_settled_round_the_sweep_starts_the_next_after_the_pause(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    seeds.queued.append(find_seed(2, 1_000, lambda s: 1 not in s))
    state = await to_grabbing(service, clock, [(P0, 100)])
    await service.grab(GROUP, P0, round_id=state.id)
    result = await service.grab(GROUP, DEALER, round_id=state.id)
    assert isinstance(ended(result.events), RoundSettled)
    assert result.started is None
    clock.advance(TEST_SETTINGS.pause_seconds - 0.001)
    assert await service.sweep() == []
    assert await service.current_round(GROUP) is None
    clock.advance(0.001)
    (swept,) = await service.sweep()
    assert swept.round is not None and swept.round.phase is Phase.BIDDING
    assert isinstance(swept.events[0], RoundStarted)
    current = await service.current_round(GROUP)
    assert current is not None and current.id == swept.round.id != state.id
    assert await service.sweep() == []


# -- internal errors ----------------------------------------------------------------------------


def _boom(*args: object, **kwargs: object) -> object:
    raise RuntimeError("injected failure")


def _never(*args: object, **kwargs: object) -> object:
    raise AssertionError("the general path ran after the hot path failed")


@pytest.mark.parametrize(
    ("target", "when"),
    [
        ("deal", "betting deadline"),  # the envelope cannot be split
        ("settle", "last grab"),  # settlement fails
        ("settle", "grab deadline"),
        ("write outcomes", "last grab"),  # the database refuses the settled round
    ],
)
async def test_an_internal_error_in_a_transition_voids_with_full_refunds(
    service: GameService,
    clock: Clock,
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    target: str,
    when: str,
) -> None:
    await set_fees(service)
    state = await to_betting(service, clock)
    for person in (P0, P1):
        await fund(service, person, 50_000)
        await service.bet(GROUP, person, 500)
    if when != "betting deadline":
        clock.advance(TEST_SETTINGS.bet_seconds)
        await service.advance(state.id)
        await service.grab(GROUP, P0, round_id=state.id)
        await service.grab(GROUP, P1, round_id=state.id)
    if target == "deal":
        monkeypatch.setattr(RedEnvelopeRuleset, "deal", _boom)
    elif target == "settle":
        monkeypatch.setattr(engine_round, "settle", _boom)
    else:
        # The write fails (both paths write as ``round_writes`` describes): the round is
        # voided, not tried again on the general path, which would hide the failure.
        monkeypatch.setattr(round_writes, "outcome_rows", _boom)
        monkeypatch.setattr(RoundSteps, "_run_whole", _never)
    with caplog.at_level(logging.ERROR, logger="bot.service"):
        if when == "last grab":
            result = await service.grab(GROUP, DEALER, round_id=state.id)
        else:
            clock.advance(60)
            result = await service.advance(state.id)
    assert ended(result.events) == RoundVoided(VoidReason.ERROR, state.seed)
    assert "injected failure" in caplog.text
    for person in (P0, P1):
        assert await available_and_held(service, person) == (50_000, 0)
    assert await available_and_held(service, DEALER) == (100_000, 0)
    assert await service.house_balance(GROUP) == 0
    stored = await service.round(state.id)
    assert stored is not None and stored.void_reason is VoidReason.ERROR
    assert (await round_transactions(db, state.id))[-1] == "void"
    assert "settle" not in await round_transactions(db, state.id)
    assert await service.results(state.id) == []


# -- chips, admins and settings -----------------------------------------------------------------


async def test_credit_and_debit_move_chips_from_and_to_the_mint(
    service: GameService, clock: Clock
) -> None:
    balance = await service.credit(GROUP, ADMIN, P0.id, 10_000)
    assert balance is not None
    assert (balance.available, balance.held) == (10_000, 0)
    balance = await service.debit(GROUP, ADMIN, P0.id, 2_500)
    assert balance is not None
    assert (balance.available, balance.held) == (7_500, 0)
    with pytest.raises(RuleViolation) as refused:
        await service.debit(GROUP, ADMIN, P0.id, 7_501)
    assert refused.value.key == "debit_too_large"
    assert refused.value.params == {"amount": 7_501, "available": 7_500}
    for amount in (0, -5):
        with pytest.raises(RuleViolation) as refused:
            await service.credit(GROUP, ADMIN, P0.id, amount)
        assert refused.value.key == "amount_not_positive"
    balance = await service.debit(GROUP, ADMIN, P0.id, 7_500)
    assert balance is not None
    assert (balance.available, balance.held) == (0, 0)


async def test_a_debit_cannot_take_held_chips(service: GameService, clock: Clock) -> None:
    await to_betting(service, clock)
    await fund(service, P0, 2_000)
    await service.bet(GROUP, P0, 100)
    with pytest.raises(RuleViolation) as refused:
        await service.debit(GROUP, ADMIN, P0.id, 201)
    assert refused.value.key == "debit_too_large"
    await service.debit(GROUP, ADMIN, P0.id, 200)
    assert await available_and_held(service, P0) == (0, 1_800)


async def test_a_repeated_credit_update_credits_once(service: GameService) -> None:
    await service.credit(GROUP, ADMIN, P0.id, 1_000, update_id=5)
    await service.credit(GROUP, ADMIN, P0.id, 1_000, update_id=5)
    assert await available_and_held(service, P0) == (1_000, 0)
    assert len([a for a in await service.audit_log(GROUP) if a.action == "credit"]) == 1


async def test_admin_actions_are_in_the_audit_log_with_their_actor(
    service: GameService, clock: Clock
) -> None:
    other_admin = Person(98, "Other", "other")
    await service.set_open(GROUP, ADMIN, True)
    clock.advance(1)
    await service.credit(GROUP, ADMIN, P0.id, 10_000)
    clock.advance(1)
    await service.debit(GROUP, other_admin, P0.id, 4_000)
    clock.advance(1)
    await service.set_open(GROUP, other_admin, False)
    assert await service.set_open(GROUP, other_admin, False) is False  # no change, no entry
    log = await service.audit_log(GROUP)
    assert [(line.actor_id, line.action, line.details) for line in log] == [
        (other_admin.id, "close", {}),
        (other_admin.id, "debit", {"user_id": P0.id, "amount": 4_000}),
        (ADMIN.id, "credit", {"user_id": P0.id, "amount": 10_000}),
        (ADMIN.id, "open", {}),
    ]
    assert log[0].created_at_ms == clock()
    assert log[0].created_at_ms > log[1].created_at_ms > log[2].created_at_ms


async def test_setting_changes_are_audited_with_old_and_new_values(
    service: GameService,
) -> None:
    assert await service.change_setting(GROUP, ADMIN, "rake", "3%") == ("rake", "5%", "3%")
    assert await service.change_setting(GROUP, ADMIN, "min_bet", "2.5") == (
        "min_bet",
        "1.00",
        "2.50",
    )
    settings = await service.settings(GROUP)
    assert (settings.rake_bps, settings.min_bet) == (300, 250)
    log = await service.audit_log(GROUP)
    assert [(line.actor_id, line.action, line.details) for line in log] == [
        (ADMIN.id, "set", {"setting": "min_bet", "old": "1.00", "new": "2.50"}),
        (ADMIN.id, "set", {"setting": "rake", "old": "5%", "new": "3%"}),
    ]


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("min_bet", "abc", "not_amount"),
        ("max_bet", "0.50", "max_below_min"),
        ("bid_seconds", "0", "out_of_range"),
        ("rake", "200%", "above_100"),
        ("no_such_setting", "1", "unknown_setting"),
    ],
)
async def test_a_bad_setting_is_refused_and_changes_nothing(
    service: GameService, key: str, value: str, reason: str
) -> None:
    with pytest.raises(GameError) as refused:
        await service.change_setting(GROUP, ADMIN, key, value)
    with pytest.raises(SettingError) as why:
        TEST_SETTINGS.changed(key, value)
    assert why.value.reason == reason
    # The shell is told the reason and what it shows, to say it in the group's language.
    assert (refused.value.key, refused.value.params) == (f"bad_setting.{reason}", why.value.params)
    assert await service.settings(GROUP) == TEST_SETTINGS
    assert [line for line in await service.audit_log(GROUP) if line.action == "set"] == []


async def test_a_round_keeps_the_settings_it_started_with(
    service: GameService, clock: Clock
) -> None:
    state = await to_betting(service, clock)
    await service.change_setting(GROUP, ADMIN, "min_bet", "20")
    await fund(service, P0, 50_000)
    await service.bet(GROUP, P0, 100)
    stored = await service.round(state.id)
    assert stored is not None and stored.settings.min_bet == 100


async def test_the_statement_lists_each_change_of_a_players_chips_newest_first(
    service: GameService, clock: Clock, seeds: Seeds
) -> None:
    seeds.queued.append(find_seed(2, 1_000, _player_loses))
    await service.credit(GROUP, ADMIN, P0.id, 50_000)
    state = await to_betting(service, clock)
    await service.bet(GROUP, P0, 200)
    await service.bet(GROUP, P0, 100)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(state.id)
    clock.advance(TEST_SETTINGS.grab_seconds)
    result = await service.advance(state.id)
    settled = ended(result.events)
    assert isinstance(settled, RoundSettled)
    net = settled.settlement.outcomes[P0.id].net
    assert net < 0
    await service.debit(GROUP, ADMIN, P0.id, 1_000)
    lines = await service.statement(GROUP, P0.id)
    assert [(line.kind, line.round_id, line.change) for line in lines] == [
        ("debit", None, -1_000),
        ("settle", state.id, net),
        # The bets only held chips (between the player's own accounts): not listed.
        ("credit", None, 50_000),
    ]
    assert [line.transaction_id for line in lines] == sorted(
        (line.transaction_id for line in lines), reverse=True
    )
    assert lines[-1].memo == f"credit by {ADMIN.id}"
    assert [line.kind for line in await service.statement(GROUP, P0.id, limit=2)] == [
        "debit",
        "settle",
    ]
    assert await service.statement(GROUP, P3.id) == []
