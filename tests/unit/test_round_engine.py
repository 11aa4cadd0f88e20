"""The round engine (bot/engine/round.py) on its own: no database, no clock, no randomness.

Every transition's postings balance, every command moves the version on by exactly one,
``verify_*`` refuse with the documented keys, ``Round.holds()`` is what the postings
left in the held accounts, and a deadline cannot fire early.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine import round as engine
from bot.engine.errors import NotDue, RuleViolation
from bot.engine.round import (
    HOUSE,
    AccountKind,
    BetCancelled,
    BetPlaced,
    BidPlaced,
    DealerChosen,
    Grabbed,
    GrabbingStarted,
    Phase,
    Posting,
    RoundSettled,
    RoundStarted,
    RoundVoided,
    VoidReason,
    available,
    held,
)
from bot.engine.settings import Settings
from bot.engine.settlement import Result
from bot.rules import fairness
from bot.rules.cards import deal_packed
from bot.rules.split import commitment, split_envelope
from tests.helpers.engine_rounds import (
    ALICE,
    BOB,
    CAROL,
    DEALER,
    OUTSIDER,
    RICH,
    SETTINGS,
    T0,
    Ledger,
    betting,
    grabbing,
    started,
)
from tests.helpers.game import find_seed

# -- start ----------------------------------------------------------------------------


def test_start_round_opens_bidding_with_the_commitment_of_the_seed() -> None:
    transition = engine.start_round(
        round_id=7, chat_id=-100, settings=SETTINGS, seed=b"\x01" * 32, now_ms=T0
    )
    state = transition.round
    assert state.phase is Phase.BIDDING and state.version == 1
    assert state.deadline_ms == T0 + 18_000
    assert state.commitment == commitment(b"\x01" * 32)
    assert transition.events == (RoundStarted(state.commitment, state.deadline_ms),)
    assert transition.postings == ()
    assert state.holds() == {}


# -- every transition balances and moves the version by one ----------------------------


def test_a_full_round_balances_at_every_step_and_settles_the_whole_pool() -> None:
    state, book = grabbing({ALICE: 500, BOB: 1_000, CAROL: 200})
    for user in (BOB, DEALER, ALICE):
        state = book.apply(state, engine.grab(state, user, state.deadline_ms - 1))
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    state = book.apply(state, transition)
    assert state.phase in (Phase.SETTLED, Phase.VOID)
    assert state.holds() == {}
    # Everything that left a player's available chips came back or went to the house.
    assert sum(book.balances.values()) == 0
    if state.phase is Phase.SETTLED:
        (settled,) = [e for e in transition.events if isinstance(e, RoundSettled)]
        assert book.balances.get(HOUSE, 0) == settled.settlement.platform_net


OTHERS = ["bid", "bet", "grab", "early", "wait"]


def command(usual: str) -> st.SearchStrategy[tuple[str, int, int]]:
    """A command, most often the phase's ``usual`` one."""
    return st.tuples(
        st.sampled_from([usual] * 6 + OTHERS),
        st.sampled_from([DEALER, ALICE, BOB, CAROL]),
        st.sampled_from([0, 50, 100, 200, 500, 1_000, 2_000, 5_000, 6_000, 10_000, 20_000]),
    )


#: The commands sent during each of the three phases; the phase's deadline follows.
phases = st.tuples(*(st.lists(command(usual), max_size=10) for usual in ("bid", "bet", "grab")))


@settings(max_examples=600, deadline=None)
@given(
    phases=phases,
    seed=st.binary(min_size=32, max_size=32),
    mean=st.sampled_from([2, 5, 50, 500]),
    chips=st.sampled_from([2_000, 20_000, 200_000]),
    ruleset=st.sampled_from(["envelope68", "bullbull", "poker29", "poker29_vn"]),
    dealer=st.sampled_from(["bid", "house"]),
    bank=st.sampled_from([1, 3_000, 100_000]),
    shoe_offset=st.integers(0, 156),
)
def test_random_commands_balance_and_keep_holds_equal_to_held_chips(
    phases: tuple[list[tuple[str, int, int]], ...],
    seed: bytes,
    mean: int,
    chips: int,
    ruleset: str,
    dealer: str,
    bank: int,
    shoe_offset: int,
) -> None:
    """Any commands in any phase, for every game and both kinds of dealer: postings sum
    to zero, the version moves by one, no available balance (nor the bank) goes below
    zero, and held chips equal ``holds()``.

    Each phase's commands are followed by its deadline; ``early`` tries to advance before
    it (refused), ``wait`` lets ``amount`` ms pass (a late command is refused)."""
    settings_ = dataclasses.replace(
        SETTINGS, envelope_mean_share=mean, ruleset=ruleset, dealer=dealer
    )
    book = Ledger()
    for user in (DEALER, ALICE, BOB, CAROL):
        book.balances[available(user)] = chips
    book.balances[engine.BANK] = bank
    book.balances[engine.MINT] = -4 * chips - bank
    shoe = engine.ShoeRef(1, seed[::-1], shoe_offset) if ruleset.startswith("poker") else None
    state = engine.start_round(
        round_id=7, chat_id=-100, settings=settings_, seed=seed, now_ms=T0, bank=bank, shoe=shoe
    ).round
    now = T0
    for phase_commands in phases:
        for name, user, amount in phase_commands:
            if not state.phase.is_open:
                break
            free = book.balances.get(available(user), 0)
            try:
                if name == "bid":
                    transition = engine.bid(state, user, amount, free_chips=free, now_ms=now)
                elif name == "bet":
                    transition = engine.bet(state, user, amount, free_chips=free, now_ms=now)
                elif name == "grab":
                    transition = engine.grab(state, user, now)
                elif name == "early":
                    transition = engine.advance(state, now, player_seeds={})
                else:
                    now += amount
                    continue
            except (RuleViolation, NotDue):
                continue
            state = book.apply(state, transition)
        if state.phase.is_open:
            now = max(now, state.deadline_ms)
            state = book.apply(state, engine.advance(state, now, player_seeds={}))
        assert all(
            amount >= 0
            for ref, amount in book.balances.items()
            if ref.kind in (AccountKind.AVAILABLE, AccountKind.HELD, AccountKind.BANK)
        )
    assert not state.phase.is_open
    assert state.holds() == {}
    assert sum(book.balances.values()) == 0


# -- bidding ----------------------------------------------------------------------------


def test_a_bid_holds_the_bid_plus_the_dealer_fees() -> None:
    state = started()
    transition = engine.bid(state, ALICE, 1_000, free_chips=RICH, now_ms=T0)
    assert set(transition.postings) == {
        Posting(available(ALICE), -1_175),
        Posting(held(ALICE), 1_175),
    }
    assert transition.events == (BidPlaced(ALICE, 1_000, None, 0),)
    assert transition.round.holds() == {ALICE: 1_175}


def test_an_outbid_bidder_is_released_in_the_same_transition() -> None:
    state = started()
    state = engine.bid(state, ALICE, 1_000, free_chips=RICH, now_ms=T0).round
    transition = engine.bid(state, BOB, 2_000, free_chips=RICH, now_ms=T0)
    assert set(transition.postings) == {
        Posting(held(ALICE), -1_175),
        Posting(available(ALICE), 1_175),
        Posting(available(BOB), -2_175),
        Posting(held(BOB), 2_175),
    }
    assert transition.events == (BidPlaced(BOB, 2_000, ALICE, 1_000),)
    assert transition.round.holds() == {BOB: 2_175}


def test_raising_your_own_bid_holds_only_the_difference() -> None:
    state = started()
    state = engine.bid(state, ALICE, 1_000, free_chips=RICH, now_ms=T0).round
    transition = engine.bid(state, ALICE, 3_000, free_chips=RICH, now_ms=T0)
    assert set(transition.postings) == {
        Posting(available(ALICE), -2_000),
        Posting(held(ALICE), 2_000),
    }
    assert transition.events == (BidPlaced(ALICE, 3_000, None, 0),)


@pytest.mark.parametrize(
    ("high", "amount", "minimum"),
    [(None, 999, 1_000), (1_000, 1_999, 2_000), (5_000, 5_500, 6_000)],
)
def test_verify_bid_too_low(high: int | None, amount: int, minimum: int) -> None:
    state = started()
    if high is not None:
        state = engine.bid(state, ALICE, high, free_chips=RICH, now_ms=T0).round
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, BOB, amount, free_chips=RICH, now_ms=T0)
    assert refused.value.key == "bid_too_low"
    assert refused.value.params == {"amount": amount, "minimum": minimum}
    engine.verify_bid(state, BOB, minimum, free_chips=RICH, now_ms=T0)


def test_verify_bid_needs_chips_for_the_bid_and_the_fees() -> None:
    state = started()
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, ALICE, 1_000, free_chips=1_174, now_ms=T0)
    assert refused.value.key == "not_enough_chips"
    assert refused.value.params == {"needed": 1_175, "available": 1_174}
    engine.verify_bid(state, ALICE, 1_000, free_chips=1_175, now_ms=T0)


def test_verify_bid_counts_your_own_hold_when_you_raise() -> None:
    state = engine.bid(started(), ALICE, 1_000, free_chips=1_175, now_ms=T0).round
    engine.verify_bid(state, ALICE, 2_000, free_chips=1_000, now_ms=T0)
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, ALICE, 2_000, free_chips=999, now_ms=T0)
    assert refused.value.key == "not_enough_chips"


def test_verify_bid_outside_bidding_and_after_the_deadline() -> None:
    state = started()
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, ALICE, 1_000, free_chips=RICH, now_ms=state.deadline_ms)
    assert (refused.value.key, refused.value.params) == ("window_closed", {"phase": "bidding"})
    state, _ = betting()
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, ALICE, 20_000, free_chips=RICH, now_ms=state.deadline_ms - 1)
    assert (refused.value.key, refused.value.params) == ("not_bidding", {"phase": "betting"})


def test_the_bidding_deadline_makes_the_highest_bidder_dealer_with_the_bid_as_pool() -> None:
    state = started()
    state = engine.bid(state, ALICE, 1_000, free_chips=RICH, now_ms=T0).round
    state = engine.bid(state, BOB, 4_000, free_chips=RICH, now_ms=T0).round
    transition = engine.advance(state, state.deadline_ms + 5, player_seeds={})
    after = transition.round
    assert after.phase is Phase.BETTING
    assert (after.dealer_id, after.pool) == (BOB, 4_000)
    assert after.deadline_ms == state.deadline_ms + 5 + 40_000
    assert transition.events == (DealerChosen(BOB, 4_000, after.deadline_ms),)
    assert transition.postings == ()
    assert after.holds() == {BOB: 4_175}


def test_no_bid_voids_the_round_at_the_deadline() -> None:
    state = started()
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    assert transition.round.phase is Phase.VOID
    assert transition.round.void_reason is VoidReason.NO_BIDS
    assert transition.events == (RoundVoided(VoidReason.NO_BIDS, state.seed),)
    assert transition.postings == ()


# -- betting ----------------------------------------------------------------------------


def test_a_bet_holds_stake_times_eighteen() -> None:
    state, _ = betting()
    transition = engine.bet(state, ALICE, 500, free_chips=RICH, now_ms=T0 + 20_000)
    assert set(transition.postings) == {
        Posting(available(ALICE), -9_000),
        Posting(held(ALICE), 9_000),
    }
    assert transition.events == (BetPlaced(ALICE, 500, 0),)


def test_changing_a_bet_keeps_its_place_and_moves_only_the_difference() -> None:
    state, _ = betting()
    now = T0 + 20_000
    for user in (ALICE, BOB, CAROL):
        state = engine.bet(state, user, 100, free_chips=RICH, now_ms=now).round
    transition = engine.bet(state, ALICE, 300, free_chips=RICH, now_ms=now)
    assert [b.user_id for b in transition.round.bets] == [ALICE, BOB, CAROL]
    assert transition.round.bet_of(ALICE) == engine.Bet(ALICE, 300, 5_400)
    assert set(transition.postings) == {
        Posting(available(ALICE), -3_600),
        Posting(held(ALICE), 3_600),
    }
    assert transition.events == (BetPlaced(ALICE, 300, 100),)


def test_a_zero_bet_cancels_and_releases_the_hold() -> None:
    state, _ = betting()
    now = T0 + 20_000
    state = engine.bet(state, ALICE, 100, free_chips=RICH, now_ms=now).round
    transition = engine.bet(state, ALICE, 0, free_chips=RICH, now_ms=now)
    assert transition.round.bets == ()
    assert set(transition.postings) == {
        Posting(held(ALICE), -1_800),
        Posting(available(ALICE), 1_800),
    }
    assert transition.events == (BetCancelled(ALICE, 100),)


@pytest.mark.parametrize(
    ("user", "amount", "key", "params"),
    [
        (DEALER, 100, "dealer_cannot_bet", {}),
        (ALICE, 0, "no_bet_to_cancel", {}),
        (ALICE, 99, "bet_too_small", {"amount": 99, "minimum": 100}),
        (ALICE, 5_001, "bet_too_large", {"amount": 5_001, "maximum": 5_000}),
        (BOB, 200, "bet_unchanged", {"amount": 200}),
    ],
)
def test_verify_bet_refusals(user: int, amount: int, key: str, params: dict[str, int]) -> None:
    state, _ = betting()
    now = T0 + 20_000
    state = engine.bet(state, BOB, 200, free_chips=RICH, now_ms=now).round
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bet(state, user, amount, free_chips=RICH, now_ms=now)
    assert (refused.value.key, refused.value.params) == (key, params)


def test_verify_bet_needs_chips_for_eighteen_times_the_stake() -> None:
    state, _ = betting()
    now = T0 + 20_000
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bet(state, ALICE, 1_000, free_chips=17_999, now_ms=now)
    assert refused.value.key == "not_enough_chips_to_bet"
    assert refused.value.params == {"needed": 18_000, "available": 17_999, "multiplier": 18}
    engine.verify_bet(state, ALICE, 1_000, free_chips=18_000, now_ms=now)
    # A change counts the bet's own hold.
    state = engine.bet(state, ALICE, 500, free_chips=9_000, now_ms=now).round
    engine.verify_bet(state, ALICE, 1_000, free_chips=9_000, now_ms=now)


def test_verify_bet_outside_betting_and_after_the_deadline() -> None:
    state, _ = betting()
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bet(state, ALICE, 100, free_chips=RICH, now_ms=state.deadline_ms)
    assert (refused.value.key, refused.value.params) == ("window_closed", {"phase": "betting"})
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bet(started(), ALICE, 100, free_chips=RICH, now_ms=T0)
    assert (refused.value.key, refused.value.params) == ("not_betting", {"phase": "bidding"})


def test_no_bet_voids_and_releases_the_dealer_without_fees() -> None:
    state, _ = betting()
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    assert transition.round.phase is Phase.VOID
    assert transition.events == (RoundVoided(VoidReason.NO_BETS, state.seed),)
    assert set(transition.postings) == {
        Posting(held(DEALER), -10_175),
        Posting(available(DEALER), 10_175),
    }


# -- grabbing ---------------------------------------------------------------------------


def test_the_betting_deadline_splits_the_envelope_from_the_seed() -> None:
    state, _ = betting()
    for user in (ALICE, BOB):
        state = engine.bet(state, user, 100, free_chips=RICH, now_ms=T0 + 20_000).round
    transition = engine.advance(state, state.deadline_ms + 3, player_seeds={})
    state = transition.round
    assert transition.events == (GrabbingStarted(3, 1_500, state.deadline_ms),)
    assert transition.postings == ()
    assert state.phase is Phase.GRABBING
    assert state.participants == (ALICE, BOB, DEALER)
    assert state.shares == tuple(split_envelope(engine.deal_seed_of(state), 3, 1_500))
    assert sum(state.shares) == 3 * SETTINGS.envelope_mean_share


def test_grabs_take_the_next_share_in_turn() -> None:
    state, _ = grabbing({ALICE: 100, BOB: 200})
    now = state.deadline_ms - 1
    first = engine.grab(state, DEALER, now)
    assert first.events == (Grabbed(DEALER, state.shares[0], False),)
    assert first.postings == ()
    second = engine.grab(first.round, BOB, now)
    assert second.events == (Grabbed(BOB, state.shares[1], False),)


@pytest.mark.parametrize(("user", "key"), [(OUTSIDER, "not_in_round"), (ALICE, "already_grabbed")])
def test_verify_grab_refusals(user: int, key: str) -> None:
    state, _ = grabbing({ALICE: 100, BOB: 200})
    now = state.deadline_ms - 1
    state = engine.grab(state, ALICE, now).round
    with pytest.raises(RuleViolation) as refused:
        engine.verify_grab(state, user, now)
    assert refused.value.key == key
    if key == "already_grabbed":
        assert refused.value.params == {"amount": state.shares[0]}


def test_verify_grab_outside_grabbing_and_after_the_deadline() -> None:
    state, _ = grabbing({ALICE: 100})
    with pytest.raises(RuleViolation) as refused:
        engine.verify_grab(state, ALICE, state.deadline_ms)
    assert refused.value.key == "window_closed"
    state, _ = betting()
    with pytest.raises(RuleViolation) as refused:
        engine.verify_grab(state, DEALER, T0 + 20_000)
    assert (refused.value.key, refused.value.params) == ("not_grabbing", {"phase": "betting"})


def test_the_grab_deadline_grabs_the_rest_in_bet_order_with_the_dealer_last() -> None:
    state, book = grabbing({ALICE: 100, BOB: 200, CAROL: 300})
    state = book.apply(state, engine.grab(state, BOB, state.deadline_ms - 1))
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    grabs = [e for e in transition.events if isinstance(e, Grabbed)]
    assert grabs == [
        Grabbed(ALICE, state.shares[1], True),
        Grabbed(CAROL, state.shares[2], True),
        Grabbed(DEALER, state.shares[3], True),
    ]
    assert isinstance(transition.events[-1], (RoundSettled, RoundVoided))
    book.apply(state, transition)


def test_the_last_grab_settles_and_reveals_the_seed() -> None:
    seed = find_seed(2, 1_000, lambda s: s[0] != 1 and s[1] != 1)
    state, book = grabbing({ALICE: 100}, seed=seed)
    state = book.apply(state, engine.grab(state, ALICE, state.deadline_ms - 1))
    transition = engine.grab(state, DEALER, state.deadline_ms - 1)
    state = book.apply(state, transition)
    assert state.phase is Phase.SETTLED
    settled = transition.events[-1]
    assert isinstance(settled, RoundSettled) and settled.seed == seed
    assert state.holds() == {}
    # The ledger's balances started at zero: the dealer's bid hold came back with the net.
    assert book.balances[available(DEALER)] == settled.settlement.dealer_net


def test_a_player_on_one_cent_is_immune() -> None:
    # Dealer 0.09 beats the player's 0.01, which is refunded instead of lost.
    seed = find_seed(2, 10, lambda s: s == [1, 9])
    settings_ = dataclasses.replace(SETTINGS, envelope_mean_share=5)
    state, book = grabbing({ALICE: 100}, settings_, seed)
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    settled = transition.events[-1]
    assert isinstance(settled, RoundSettled)
    assert settled.settlement.outcomes[ALICE].result is Result.IMMUNE
    book.apply(state, transition)
    assert book.balances[available(ALICE)] == 0  # started at 0, nothing lost
    assert book.balances[HOUSE] == SETTINGS.dealer_fees


def test_a_dealer_on_one_cent_redeals_and_refunds_everything() -> None:
    seed = find_seed(2, 10, lambda s: s[1] == 1)
    settings_ = dataclasses.replace(SETTINGS, envelope_mean_share=5)
    state, _ = grabbing({ALICE: 100}, settings_, seed, fairness.V1)  # the seed pins the split
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    assert transition.round.phase is Phase.VOID
    assert transition.round.void_reason is VoidReason.REDEAL
    assert transition.events[-1] == RoundVoided(VoidReason.REDEAL, seed)
    assert sum(p.amount for p in transition.postings) == 0
    assert HOUSE not in {p.account for p in transition.postings}
    assert transition.round.holds() == {}


@pytest.mark.parametrize("how", ["last grab", "grab deadline"])
def test_a_redeal_moves_the_version_by_one(how: str) -> None:
    seed = find_seed(2, 10, lambda s: s[1] == 1)
    settings_ = dataclasses.replace(SETTINGS, envelope_mean_share=5)
    state, _ = grabbing({ALICE: 100}, settings_, seed, fairness.V1)
    if how == "last grab":
        state = engine.grab(state, ALICE, state.deadline_ms - 1).round
        transition = engine.grab(state, DEALER, state.deadline_ms - 1)
    else:
        transition = engine.advance(state, state.deadline_ms, player_seeds={})
    assert transition.round.void_reason is VoidReason.REDEAL
    assert transition.round.version == state.version + 1


# -- deadlines --------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["bidding", "betting", "grabbing"])
def test_advance_before_the_deadline_raises_not_due(phase: str) -> None:
    if phase == "bidding":
        state = started()
    elif phase == "betting":
        state, _ = betting()
    else:
        state, _ = grabbing({ALICE: 100})
    assert state.phase.value == phase
    assert not engine.is_due(state, state.deadline_ms - 1)
    with pytest.raises(NotDue) as early:
        engine.advance(state, state.deadline_ms - 1, player_seeds={})
    assert (early.value.key, early.value.params) == ("not_due", {"deadline_ms": state.deadline_ms})
    assert engine.is_due(state, state.deadline_ms)


def test_advance_and_void_refuse_a_finished_round() -> None:
    state = started()
    state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    assert not engine.is_due(state, state.deadline_ms + 10**9)
    with pytest.raises(NotDue) as closed:
        engine.advance(state, state.deadline_ms + 10**9, player_seeds={})
    assert (closed.value.key, closed.value.params) == ("round_closed", {"phase": "void"})
    with pytest.raises(RuleViolation) as again:
        engine.void(state, VoidReason.ERROR)
    assert again.value.key == "round_closed"


@pytest.mark.parametrize("phase", ["bidding", "betting", "grabbing"])
def test_void_releases_exactly_the_holds(phase: str) -> None:
    if phase == "bidding":
        state = engine.bid(started(), ALICE, 2_000, free_chips=RICH, now_ms=T0).round
    elif phase == "betting":
        state, _ = betting()
        state = engine.bet(state, ALICE, 300, free_chips=RICH, now_ms=T0 + 20_000).round
    else:
        state, _ = grabbing({ALICE: 100, BOB: 200})
        state = engine.grab(state, ALICE, state.deadline_ms - 1).round
    transition = engine.void(state, VoidReason.ERROR)
    released = {
        p.account.user_id: p.amount
        for p in transition.postings
        if p.account.kind is AccountKind.AVAILABLE
    }
    assert released == state.holds()
    assert transition.round.holds() == {}
    assert transition.round.version == state.version + 1
    assert transition.events == (RoundVoided(VoidReason.ERROR, state.seed),)


# -- card games and the house as dealer ------------------------------------------------


def card_settings(ruleset: str, dealer: str = "bid") -> Settings:
    return dataclasses.replace(SETTINGS, ruleset=ruleset, dealer=dealer)


def test_a_card_round_deals_as_betting_closes_and_settles_at_once() -> None:
    state, book = betting(card_settings("bullbull"), seed=b"\x05" * 32)
    for user, amount in ((ALICE, 500), (BOB, 1_000)):
        state = book.apply(state, engine.bet(state, user, amount, free_chips=RICH, now_ms=T0 + 2))
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    state = book.apply(state, transition)
    assert state.phase is Phase.SETTLED
    assert isinstance(transition.events[0], engine.CardsDealt)
    assert transition.events[0] == engine.CardsDealt(3, 15)
    assert isinstance(transition.events[-1], RoundSettled)
    assert state.shares == deal_packed(engine.deal_seed_of(state), 1, 3)
    assert [(g.user_id, g.amount, g.auto) for g in state.grabs] == [
        (ALICE, state.shares[0], True),
        (BOB, state.shares[1], True),
        (DEALER, state.shares[2], True),
    ]
    assert state.holds() == {}


def test_a_card_bet_holds_the_games_largest_loss() -> None:
    for ruleset, multiplier in (("bullbull", 5), ("poker29", 1), ("poker29_vn", 1)):
        shoe = engine.ShoeRef(1, b"shoe", 0) if ruleset != "bullbull" else None
        state = engine.start_round(
            round_id=1,
            chat_id=-1,
            settings=card_settings(ruleset, "house"),
            seed=b"s" * 32,
            now_ms=T0,
            bank=10_000,
            shoe=shoe,
        ).round
        transition = engine.bet(state, ALICE, 1_000, free_chips=RICH, now_ms=T0)
        assert transition.round.holds() == {ALICE: 1_000 * multiplier}, ruleset


def test_bullbull_takes_nine_bets_and_the_tenth_is_table_full() -> None:
    state, book = betting(card_settings("bullbull"))
    for user in range(100, 109):
        state = book.apply(state, engine.bet(state, user, 100, free_chips=RICH, now_ms=T0 + 2))
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bet(state, 109, 100, free_chips=RICH, now_ms=T0 + 2)
    assert (refused.value.key, refused.value.params) == ("table_full", {"seats": 9})
    # A seated player may still change or cancel.
    engine.verify_bet(state, 100, 200, free_chips=RICH, now_ms=T0 + 2)
    engine.verify_bet(state, 100, 0, free_chips=RICH, now_ms=T0 + 2)


def test_a_shoe_round_deals_from_the_shoe_at_its_offset_and_commits_to_the_shoe() -> None:
    shoe = engine.ShoeRef(4, b"the shoe's seed", 77)
    state = engine.start_round(
        round_id=1,
        chat_id=-1,
        settings=card_settings("poker29"),
        seed=b"r" * 32,
        now_ms=T0,
        shoe=shoe,
    ).round
    assert state.commitment == commitment(b"the shoe's seed") and state.shoe == shoe
    book = Ledger()
    state = book.apply(state, engine.bid(state, DEALER, 5_000, free_chips=RICH, now_ms=T0))
    state = book.apply(state, engine.advance(state, state.deadline_ms, player_seeds={}))
    state = book.apply(state, engine.bet(state, ALICE, 100, free_chips=RICH, now_ms=T0 + 1))
    state = book.apply(state, engine.advance(state, state.deadline_ms, player_seeds={}))
    assert state.shares == deal_packed(engine.deal_seed_of(state), 6, 2, 77)
    with pytest.raises(ValueError):
        engine.start_round(
            round_id=1, chat_id=-1, settings=card_settings("poker29"), seed=b"r" * 32, now_ms=T0
        )
    # A game without a shoe ignores one: it deals from, and commits to, its own seed.
    fresh = engine.start_round(
        round_id=1,
        chat_id=-1,
        settings=card_settings("bullbull"),
        seed=b"r" * 32,
        now_ms=T0,
        shoe=shoe,
    ).round
    assert fresh.shoe is None and fresh.commitment == commitment(b"r" * 32)


def test_when_the_house_deals_the_round_opens_for_bets_with_the_bank_as_pool() -> None:
    transition = engine.start_round(
        round_id=1,
        chat_id=-1,
        settings=card_settings("envelope68", "house"),
        seed=b"h" * 32,
        now_ms=T0,
        bank=12_345,
    )
    state = transition.round
    assert (state.phase, state.pool, state.dealer_id) == (Phase.BETTING, 12_345, None)
    assert state.deadline_ms == T0 + SETTINGS.bet_seconds * 1000
    with pytest.raises(RuleViolation) as refused:
        engine.verify_bid(state, ALICE, 5_000, free_chips=RICH, now_ms=T0)
    assert refused.value.key == "not_bidding"
    # The house grabs nothing itself: its share is the one left after every player's.
    book = Ledger()
    state = book.apply(state, engine.bet(state, ALICE, 100, free_chips=RICH, now_ms=T0))
    state = book.apply(state, engine.advance(state, state.deadline_ms, player_seeds={}))
    assert state.phase is Phase.GRABBING and state.participants == (ALICE,)
    transition = engine.grab(state, ALICE, state.deadline_ms - 1)
    state = book.apply(state, transition)
    assert not state.phase.is_open
    assert state.dealer_outcome() == state.shares[1]
    if state.phase is Phase.SETTLED:
        (settled,) = [e for e in transition.events if isinstance(e, RoundSettled)]
        # The bank's result, and no dealer fees (the house does not pay itself).
        assert book.balances[engine.BANK] == settled.settlement.dealer_net
        assert book.balances.get(HOUSE, 0) == settled.settlement.platform_net


# -- client seeds (seed derivation 2) ----------------------------------------------------


def test_the_deal_takes_every_participants_client_seed_whoever_bet_first() -> None:
    seeds = {ALICE: "alice", BOB: "bob", DEALER: "dealer", CAROL: "not-playing"}
    dealt = []
    for order in ((ALICE, BOB), (BOB, ALICE)):
        state, book = betting()
        for user in order:
            state = book.apply(state, engine.bet(state, user, 100, free_chips=RICH, now_ms=T0 + 9))
        dealt.append(
            book.apply(state, engine.advance(state, state.deadline_ms, player_seeds=seeds))
        )
    first, second = dealt
    assert first.client_seeds == second.client_seeds == ("alice", "bob", "dealer")
    assert engine.deal_seed_of(first) == engine.deal_seed_of(second)
    assert first.shares == second.shares  # the same split; grabs take it in turn
