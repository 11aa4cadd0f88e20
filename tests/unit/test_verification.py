"""Verifying a finished round (``bot.engine.verification``): one test per outcome, the
ways a stored round can disagree with its seed, and the deal recomputed from a seed.

``play`` deals by seed derivation 1 unless told otherwise: those are the rounds stored
before client seeds, which must verify exactly as they always did; the tests of
derivation 2 (client seeds mixed in) follow them."""

from __future__ import annotations

import dataclasses

import pytest

from bot.engine import round as engine
from bot.engine.round import Grab, Phase, Round
from bot.engine.settings import Settings
from bot.engine.verification import (
    CardRange,
    DealtHand,
    Derivation,
    Mismatch,
    NothingDealt,
    RevealedShoe,
    ShoeSecret,
    Verified,
    recompute_deal,
    verify_round,
)
from bot.rules import fairness
from bot.rules.cards import deal_hands, pack
from bot.rules.hand_view import HandView
from bot.rules.ruleset import get_ruleset
from bot.rules.split import commitment, split_envelope

DEALER, ALICE, BOB, CARL = 1, 2, 3, 4
SEED = bytes(range(32))
SHOE_SEED = b"the shoe's secret seed"
SHOE_ID, SHOE_OFFSET = 5, 40


def play(
    ruleset: str,
    *,
    dealer: str = "bid",
    grab_order: tuple[int, ...] = (),
    bettors: int = 3,
    derivation: int = fairness.V1,
    client_seeds: dict[int, str] | None = None,
) -> Round:
    """A finished round: ``DEALER`` bids (unless the house deals), ``bettors`` bet, the
    players in ``grab_order`` grab, and the deadline grabs for the rest. By seed
    ``derivation``, with the participants' ``client_seeds`` as betting closes."""
    settings = dataclasses.replace(Settings(), ruleset=ruleset, dealer=dealer)
    uses_shoe = get_ruleset(ruleset).shoe_decks > 0
    shoe = engine.ShoeRef(SHOE_ID, SHOE_SEED, SHOE_OFFSET) if uses_shoe else None
    state = engine.start_round(
        round_id=9,
        chat_id=-1,
        settings=settings,
        seed=SEED,
        now_ms=0,
        bank=10**6,
        shoe=shoe,
        derivation=derivation,
    ).round
    if dealer == "bid":
        state = engine.bid(state, DEALER, 50_000, free_chips=10**9, now_ms=1).round
        state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    for user in (ALICE, BOB, CARL)[:bettors]:
        state = engine.bet(state, user, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    state = engine.advance(state, state.deadline_ms, player_seeds=client_seeds or {}).round
    for user in grab_order:
        state = engine.grab(state, user, state.deadline_ms - 1).round
    if state.phase.is_open:
        state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    assert not state.phase.is_open
    return state


def views_of(ruleset_name: str, outcomes: tuple[int, ...]) -> list[HandView]:
    ruleset = get_ruleset(ruleset_name)
    return [ruleset.show(ruleset.evaluate(outcome)) for outcome in outcomes]


# --- verified -------------------------------------------------------------------------------


def test_an_envelope_round_is_verified_with_each_grab_in_grab_order() -> None:
    state = play("envelope68", grab_order=(BOB, DEALER, ALICE))  # Carl's is grabbed for him
    result = verify_round(state)
    expected_shares = tuple(split_envelope(SEED, 4, 4 * state.settings.envelope_mean_share))
    assert state.shares == expected_shares
    assert result == Verified(
        round_id=9,
        seed=SEED,
        shares=expected_shares,
        hands=tuple(
            DealtHand(user, view)
            for user, view in zip(
                (BOB, DEALER, ALICE, CARL), views_of("envelope68", expected_shares), strict=True
            )
        ),
        cards=None,
    )


def test_an_envelope_round_the_house_deals_ends_with_the_houses_share() -> None:
    state = play("envelope68", dealer="house", grab_order=(CARL, ALICE, BOB))
    result = verify_round(state)
    assert isinstance(result, Verified)
    assert [hand.user_id for hand in result.hands] == [CARL, ALICE, BOB, None]
    assert [hand.view.amount_cents for hand in result.hands] == list(state.shares)


def test_a_card_round_from_its_own_seed_is_verified_bettors_first_the_dealer_last() -> None:
    state = play("bullbull")
    result = verify_round(state)
    dealt = tuple(pack(hand) for hand in deal_hands(SEED, 1, 4))
    assert result == Verified(
        round_id=9,
        seed=SEED,
        shares=dealt,
        hands=tuple(
            DealtHand(user, view)
            for user, view in zip(
                (ALICE, BOB, CARL, DEALER), views_of("bullbull", dealt), strict=True
            )
        ),
        cards=CardRange(decks=1, first=1, last=20),
    )


def test_a_card_round_the_house_deals_names_the_house_last() -> None:
    result = verify_round(play("bullbull", dealer="house", bettors=2))
    assert isinstance(result, Verified)
    assert [hand.user_id for hand in result.hands] == [ALICE, BOB, None]


@pytest.mark.parametrize("ruleset", ["poker29", "poker29_vn"])
def test_a_shoe_round_is_verified_once_the_shoe_is_revealed(ruleset: str) -> None:
    state = play(ruleset, bettors=2)
    result = verify_round(state, RevealedShoe(SHOE_SEED, 6))
    dealt = tuple(pack(hand) for hand in deal_hands(SHOE_SEED, 6, 3, SHOE_OFFSET))
    assert result == Verified(
        round_id=9,
        seed=SHOE_SEED,
        shares=dealt,
        hands=tuple(
            DealtHand(user, view)
            for user, view in zip((ALICE, BOB, DEALER), views_of(ruleset, dealt), strict=True)
        ),
        cards=CardRange(decks=6, first=41, last=55),
    )


# --- the shoe's seed is secret --------------------------------------------------------------


def test_a_shoe_round_whose_shoe_is_in_use_gives_its_hash_and_cards_and_no_seed() -> None:
    state = play("poker29", bettors=2)
    assert verify_round(state) == ShoeSecret(
        round_id=9, shoe_id=SHOE_ID, commitment=commitment(SHOE_SEED), first=41, last=55
    )


def test_a_shoe_round_is_checked_with_the_revealed_seed_not_the_one_the_round_holds() -> None:
    state = play("poker29", bettors=2)
    assert verify_round(state, RevealedShoe(b"another shoe's seed", 6)) == Mismatch(9)


# --- mismatch -------------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull"])
def test_a_tampered_seed_is_a_mismatch(ruleset: str) -> None:
    state = play(ruleset)
    assert isinstance(verify_round(state), Verified)
    assert verify_round(dataclasses.replace(state, seed=b"x" * 32)) == Mismatch(9)


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull"])
def test_stored_shares_the_seed_does_not_deal_are_a_mismatch(ruleset: str) -> None:
    state = play(ruleset)
    first, second, *rest = state.shares
    swapped = dataclasses.replace(state, shares=(second, first, *rest))
    assert first != second
    assert verify_round(swapped) == Mismatch(9)


def test_a_grab_that_does_not_hold_its_share_is_a_mismatch() -> None:
    state = play("envelope68")
    first, *rest = state.grabs
    changed = dataclasses.replace(state, grabs=(Grab(first.user_id, first.amount + 1), *rest))
    assert verify_round(changed) == Mismatch(9)


def test_a_revealed_shoe_of_other_decks_than_the_game_deals_from_is_a_mismatch() -> None:
    state = play("poker29", bettors=2)
    assert verify_round(state, RevealedShoe(SHOE_SEED, 1)) == Mismatch(9)


def test_a_deal_the_seed_cannot_make_is_a_mismatch_not_an_error() -> None:
    state = play("bullbull")
    too_many = dataclasses.replace(state, shares=state.shares * 3)  # 12 hands > one deck
    assert verify_round(too_many) == Mismatch(9)


# --- nothing dealt --------------------------------------------------------------------------


def no_bids(ruleset: str) -> Round:
    settings = dataclasses.replace(Settings(), ruleset=ruleset)
    uses_shoe = get_ruleset(ruleset).shoe_decks > 0
    shoe = engine.ShoeRef(SHOE_ID, SHOE_SEED, 0) if uses_shoe else None
    state = engine.start_round(
        round_id=9,
        chat_id=-1,
        settings=settings,
        seed=SEED,
        now_ms=0,
        shoe=shoe,
        derivation=fairness.V1,
    ).round
    ended = engine.advance(state, state.deadline_ms, player_seeds={}).round
    assert ended.phase is Phase.VOID
    return ended


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull"])
def test_a_round_that_dealt_nothing_reveals_its_own_seed(ruleset: str) -> None:
    assert verify_round(no_bids(ruleset)) == NothingDealt(9, SEED)


def test_a_shoe_round_that_dealt_nothing_reveals_no_seed() -> None:
    assert verify_round(no_bids("poker29")) == NothingDealt(9, None)


# --- refused --------------------------------------------------------------------------------


def test_an_open_round_cannot_be_verified() -> None:
    settings = Settings()
    state = engine.start_round(round_id=9, chat_id=-1, settings=settings, seed=SEED, now_ms=0)
    with pytest.raises(ValueError, match="not finished"):
        verify_round(state.round)


def test_a_shoe_given_for_a_round_without_one_is_refused() -> None:
    with pytest.raises(ValueError, match="not dealt from a shoe"):
        verify_round(play("bullbull"), RevealedShoe(SHOE_SEED, 1))


# --- the deal alone -------------------------------------------------------------------------


@pytest.mark.parametrize(("ruleset", "decks"), [("bullbull", 1), ("poker29", 6)])
def test_recompute_deal_deals_the_cards_of_the_documented_algorithm(
    ruleset: str, decks: int
) -> None:
    deal = recompute_deal(get_ruleset(ruleset), SEED, 3, mean_share=0, offset=decks - 1)
    dealt = tuple(pack(hand) for hand in deal_hands(SEED, decks, 3, decks - 1))
    assert (deal.seed, deal.commitment, deal.outcomes) == (SEED, commitment(SEED), dealt)
    assert list(deal.views) == views_of(ruleset, dealt)
    assert deal.cards == CardRange(decks, decks, decks - 1 + 15)


def test_recompute_deal_of_an_envelope_splits_it_and_deals_no_cards() -> None:
    deal = recompute_deal(get_ruleset("envelope68"), SEED, 5, mean_share=300)
    assert deal.outcomes == tuple(split_envelope(SEED, 5, 1_500))
    assert [view.amount_cents for view in deal.views] == list(deal.outcomes)
    assert deal.cards is None


def test_recompute_deal_refuses_more_cards_than_the_deck_holds() -> None:
    with pytest.raises(ValueError, match="hands need"):
        recompute_deal(get_ruleset("bullbull"), SEED, 11, mean_share=0)


# --- derivation 2: the client seeds mixed in -------------------------------------------------

SEEDS = {ALICE: "alice-lucky-7", DEALER: "dealer.seed", BOB: "b0b"}


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull"])
def test_a_round_deals_from_its_seed_mixed_with_every_participants_client_seed(
    ruleset: str,
) -> None:
    state = play(ruleset, derivation=fairness.V2, client_seeds=SEEDS)
    # Carl set none: he adds nothing. The list is sorted, whoever bet first.
    assert state.client_seeds == ("alice-lucky-7", "b0b", "dealer.seed")
    derivation = Derivation(fairness.V2, fairness.Scope.ROUND, 9, state.client_seeds)
    deal_seed = fairness.deal_seed(
        2, SEED, scope=fairness.Scope.ROUND, scope_id=9, client_seeds=state.client_seeds
    )
    result = verify_round(state)
    assert isinstance(result, Verified)
    assert (result.seed, result.derivation, result.deal_seed) == (SEED, derivation, deal_seed)
    count, mean_share = len(state.shares), state.settings.envelope_mean_share
    recomputed = get_ruleset(ruleset).deal(deal_seed, count, mean_share=mean_share)
    assert state.shares == recomputed
    # The server seed alone deals otherwise: the client seeds took part.
    assert get_ruleset(ruleset).deal(SEED, count, mean_share=mean_share) != recomputed


def test_a_client_seed_left_out_or_changed_is_a_mismatch() -> None:
    state = play("bullbull", derivation=fairness.V2, client_seeds=SEEDS)
    assert isinstance(verify_round(state), Verified)
    for seeds in (state.client_seeds[1:], ("alice-lucky-8", *state.client_seeds[1:])):
        assert verify_round(dataclasses.replace(state, client_seeds=seeds)) == Mismatch(9)
    # Another round's id derives another seed: a reveal replayed for it does not verify.
    assert verify_round(dataclasses.replace(state, id=10)) == Mismatch(10)


def test_a_shoe_round_derives_from_the_shoes_seed_and_id_with_its_first_rounds_seeds() -> None:
    state = play("poker29", bettors=2, derivation=fairness.V2, client_seeds=SEEDS)
    assert state.shoe is not None and state.shoe.client_seeds == state.client_seeds
    result = verify_round(state, RevealedShoe(SHOE_SEED, 6))
    assert isinstance(result, Verified)
    assert result.derivation == Derivation(2, fairness.Scope.SHOE, SHOE_ID, state.client_seeds)
    assert result.deal_seed == fairness.deal_seed(
        2, SHOE_SEED, scope=fairness.Scope.SHOE, scope_id=SHOE_ID, client_seeds=state.client_seeds
    )


def test_a_later_round_of_a_shoe_keeps_the_seeds_its_first_round_fixed() -> None:
    settings = dataclasses.replace(Settings(), ruleset="poker29")
    fixed = ("first-round",)
    shoe = engine.ShoeRef(SHOE_ID, SHOE_SEED, SHOE_OFFSET, fixed)
    state = engine.start_round(
        round_id=9, chat_id=-1, settings=settings, seed=SEED, now_ms=0, shoe=shoe
    ).round
    state = engine.bid(state, DEALER, 50_000, free_chips=10**9, now_ms=1).round
    state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    state = engine.bet(state, ALICE, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    # Whatever the players of this round set, the shoe's order is already fixed.
    state = engine.advance(state, state.deadline_ms, player_seeds=SEEDS).round
    assert state.client_seeds == fixed
    assert isinstance(verify_round(state, RevealedShoe(SHOE_SEED, 6)), Verified)


def test_recompute_deal_by_derivation_2_is_the_deal_of_the_derived_seed() -> None:
    derivation = Derivation(2, fairness.Scope.ROUND, 41, ("x",))
    deal = recompute_deal(get_ruleset("bullbull"), SEED, 3, mean_share=0, derivation=derivation)
    assert deal.deal_seed == derivation.deal_seed(SEED) != SEED
    assert deal.commitment == commitment(SEED)  # the commitment is the server seed's
    assert deal.outcomes == tuple(pack(hand) for hand in deal_hands(deal.deal_seed, 1, 3))
