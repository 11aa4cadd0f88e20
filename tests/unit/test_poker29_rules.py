"""Niu-Niu Poker 2.9 (seed 002, ``poker29``) and its Vietnamese rules (seed 004,
``poker29_vn``): one test per rule clause, the shoe, exhaustive counts over one deck, and
properties of ``compare``.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from math import comb, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.rules import poker29
from bot.rules.cards import CARDS, Card, Suit, deal_hands, pack, parse_cards, shuffled, unpack
from bot.rules.poker29 import (
    MAX_BETTORS,
    POKER29,
    POKER29_VN,
    RESHUFFLE_AFTER,
    Hand,
    HandKind,
    Poker29Ruleset,
    card_key,
    compare,
    evaluate,
    evaluate_cards,
)
from bot.rules.ruleset import LOSS_BY_DEALER, get_ruleset, table_ruleset

QUICK = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def hand(text: str) -> Hand:
    return evaluate_cards(parse_cards(text))


def vn(text: str) -> Hand:
    return evaluate_cards(parse_cards(text), card_tie_break=False)


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


# --- values and the division ----------------------------------------------------------------


def test_poker29_faces_are_ten_aces_one_others_their_face_value() -> None:
    assert hand("KS QH JD 10C 9S").points == 9  # K+Q+J = 30, 10+9 = 19
    assert hand("AS 9H KD 2C 3S").points == 5  # A+9+K = 20, 2+3 = 5
    assert hand("JS 4H 6D AC AS").points == 2  # J+4+6 = 20, A+A = 2


def test_poker29_right_hand_is_worth_the_last_digit_of_its_sum() -> None:
    # The rules' own examples: 3 and 4 are worth 7; 7 and 8 are worth 5 (15).
    assert hand("KS QH JD 3C 4S").points == 7
    assert hand("KS QH JD 7C 8S").points == 5


def test_poker29_the_bot_picks_the_best_division() -> None:
    cards = parse_cards("9S 8H 3D AC 5S")  # only 9 8 3 make a multiple of 10; A+5 = 6
    for order in itertools.permutations(cards):
        best = evaluate_cards(order)
        assert (best.kind, best.points) == (HandKind.SMALL_POINT, 6)
        assert sorted(card.rank for card in best.left) == [3, 8, 9]
        assert sorted(card.rank for card in best.right) == [1, 5]


def test_poker29_left_is_three_cards_right_the_other_two_in_dealt_order() -> None:
    divided = hand("8C 10S 6S 7H 3D")
    assert divided.left == parse_cards("10S 7H 3D")
    assert divided.right == parse_cards("8C 6S")
    assert divided.division == (1, 3, 4)
    assert (divided.kind, divided.points) == (HandKind.SMALL_POINT, 4)


# --- patterns -------------------------------------------------------------------------------


def test_poker29_ultimate_niuniu_is_all_five_face_cards() -> None:
    ultimate = hand("JS QH KD JC QS")
    assert ultimate.kind is HandKind.ULTIMATE
    assert ultimate.points == 0
    assert (ultimate.english, ultimate.chinese) == ("Ultimate Niu-Niu", "至尊牛牛")
    assert hand("KS KH KD KC QS").kind is HandKind.ULTIMATE  # four of a kind is no pattern
    assert hand("10S QH KD JC QS").kind is HandKind.NIUNIU  # a 10 is not a face card


def test_poker29_niuniu_is_left_and_right_both_multiples_of_ten() -> None:
    niuniu = hand("2S 3H 5D 4C 6S")  # 2+3+5 = 10, 4+6 = 10
    assert (niuniu.kind, niuniu.points) == (HandKind.NIUNIU, 0)
    assert (niuniu.english, niuniu.chinese) == ("Niu-Niu", "牛牛")
    assert hand("KS 3H 7D JC QS").kind is HandKind.NIUNIU  # K+3+7 = 20, J+Q = 20


def test_poker29_big_point_is_a_left_multiple_of_ten_and_right_7_to_9() -> None:
    for rank, points in (("7", 7), ("8", 8), ("9", 9)):
        big = hand(f"KS QH JD 10C {rank}S")
        assert (big.kind, big.points) == (HandKind.BIG_POINT, points)
    assert (hand("KS QH JD 10C 8S").english, hand("KS QH JD 10C 8S").chinese) == (
        "Big Point 8",
        "大点8",
    )


def test_poker29_small_point_is_a_left_multiple_of_ten_and_right_1_to_6() -> None:
    for rank, points in (("A", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5), ("6", 6)):
        small = hand(f"KS QH JD 10C {rank}S")
        assert (small.kind, small.points) == (HandKind.SMALL_POINT, points)
    assert hand("KS QH JD 10C 3S").english == "Small Point 3"


def test_poker29_high_card_is_no_left_multiple_of_ten() -> None:
    high = hand("AS AH 2D 2C 5S")
    assert (high.kind, high.points) == (HandKind.HIGH_CARD, 0)
    assert high.left == ()
    assert high.right == high.cards
    assert (high.english, high.chinese) == ("High Card", "高牌")
    assert hand("KS QH 8D 3C 5S").kind is HandKind.HIGH_CARD


# --- comparing ------------------------------------------------------------------------------


def test_poker29_patterns_compare_first_ultimate_niuniu_big_small_high() -> None:
    ladder = [
        hand("JS JH JD QC QS"),  # the weakest Ultimate Niu-Niu ...
        hand("10S QH KD KC KS"),  # ... beats the strongest Niu-Niu
        hand("KS QH JD 10C 7C"),  # Big Point 7
        hand("KS QH JD 10C 6S"),  # Small Point 6
        hand("KS QH 8D 3C 5S"),  # High Card
    ]
    assert [h.kind for h in ladder] == list(HandKind)
    for stronger, weaker in itertools.pairwise(ladder):
        assert compare(stronger, weaker) > 0
    assert [kind.rank for kind in HandKind] == [4, 3, 2, 1, 0]


def test_poker29_same_pattern_compares_the_right_hands_points() -> None:
    points = [hand(f"2S 3H 5D 10C {rank}H") for rank in "98765432A"]
    assert [h.points for h in points] == [9, 8, 7, 6, 5, 4, 3, 2, 1]
    for stronger, weaker in itertools.pairwise(points):
        assert compare(stronger, weaker) > 0
    # Points beat cards: a Big Point 8 of low cards beats a Big Point 7 of kings.
    assert compare(hand("2S 3H 5D 4C 4D"), hand("KS KH KD 3C 4C")) > 0


def test_poker29_then_card_by_card_highest_first_by_rank() -> None:
    # Both Big Point 9; sorted high to low, the first card that differs decides.
    assert compare(hand("KC QH JD 10C 9S"), hand("QS QH JD 10C 9S")) > 0  # K♣ over Q♠
    assert compare(hand("KS QH JD 10C 9S"), hand("KS JH JD 10C 9S")) > 0  # then Q over J
    assert compare(hand("KS QH JD 10C 9S"), hand("KS QH 10D 10C 9S")) > 0  # then J over 10
    assert compare(hand("KS 9H AD 9C AS"), hand("KS 9H AD 9C AH")) > 0  # A♠ over A♥


def test_poker29_rank_order_k_q_j_10_down_to_ace() -> None:
    keys = [card_key(Card(rank, Suit.S)) for rank in (13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == 13
    # Ace is low: two High Cards that differ only in their last card, 2 against A.
    assert compare(hand("KS QH 7D 5C 2S"), hand("KS QH 7D 5C AS")) > 0


def test_poker29_suit_order_spades_hearts_diamonds_clubs() -> None:
    by_suit = [hand(f"K{suit} QH JD 10C 9S") for suit in "SHDC"]
    for stronger, weaker in itertools.pairwise(by_suit):
        assert compare(stronger, weaker) > 0
    assert compare(hand("KD QH JD 10C 9S"), hand("KC QH JD 10C 9S")) > 0  # diamonds > clubs
    assert poker29.SUIT_ORDER == {"S": 3, "H": 2, "D": 1, "C": 0}


def test_poker29_identical_hands_push() -> None:
    # Six decks: the same five cards can be dealt twice, in any order.
    a, b = hand("KS QH JD 10C 9S"), hand("9S 10C JD QH KS")
    assert compare(a, b) == 0 and a.strength == b.strength
    assert compare(hand("AS AS AS AS AS"), hand("AS AS AS AS AS")) == 0


def test_poker29_multipliers_by_the_players_pattern() -> None:
    assert hand("JS QH KD JC QS").multiplier == 5
    assert hand("2S 3H 5D 4C 6S").multiplier == 3
    assert hand("KS QH JD 10C 8S").multiplier == 2
    assert hand("KS QH JD 10C 3S").multiplier == 1
    assert hand("AS AH 2D 2C 5S").multiplier == 1
    assert [kind.multiplier for kind in HandKind] == [5, 3, 2, 1, 1]


@pytest.mark.parametrize("ruleset", [POKER29, POKER29_VN], ids=lambda r: r.name)
def test_poker29_winner_paid_by_their_pattern_loser_pays_the_stake(
    ruleset: Poker29Ruleset,
) -> None:
    ultimate = ruleset.evaluate(pack(parse_cards("JS QH KD JC QS")))
    high = ruleset.evaluate(pack(parse_cards("AS AH 2D 2C 5S")))
    assert ruleset.win_multiplier(ultimate) == 5
    assert ruleset.win_multiplier(high) == 1
    assert ruleset.loss_multiplier(ultimate) == 1  # whatever the dealer holds
    assert ruleset.loss_multiplier(high) == 1
    assert ruleset.largest_loss_multiplier == 1
    assert not ruleset.is_redeal(high) and not ruleset.is_immune(high)


@pytest.mark.parametrize("name", ["poker29", "poker29_vn"])
def test_poker29_where_losers_pay_by_the_dealer_a_loss_costs_the_dealers_pattern(
    name: str,
) -> None:
    ruleset = table_ruleset(name, loss_by_dealer=True)
    assert ruleset is LOSS_BY_DEALER[name] and ruleset is not get_ruleset(name)
    assert ruleset.name == name  # the same game: rounds, shoes and stats keep its name
    ultimate = ruleset.evaluate(pack(parse_cards("JS QH KD JC QS")))
    niuniu = ruleset.evaluate(pack(parse_cards("10S JH QD 5C 5S")))
    high = ruleset.evaluate(pack(parse_cards("AS AH 2D 2C 5S")))
    assert [ruleset.loss_multiplier(hand) for hand in (ultimate, niuniu, high)] == [5, 3, 1]
    assert ruleset.win_multiplier(ultimate) == 5
    # A bet holds the largest loss.
    assert ruleset.largest_loss_multiplier == 5
    assert table_ruleset(name, loss_by_dealer=False) is get_ruleset(name)


def test_games_that_charge_a_loss_by_the_dealer_have_no_other_variant() -> None:
    for name in ("bullbull", "envelope68"):
        assert table_ruleset(name, loss_by_dealer=True) is get_ruleset(name)


# --- the shoe and the deal ------------------------------------------------------------------


def test_poker29_deals_from_a_six_deck_shoe_reshuffled_after_half() -> None:
    assert POKER29.shoe_decks == POKER29_VN.shoe_decks == 6
    assert poker29.SHOE_SIZE == 312
    # "Shuffling after half of the 6-deck cards played": more than 156 dealt.
    assert RESHUFFLE_AFTER == POKER29.reshuffle_after == POKER29_VN.reshuffle_after == 156


def test_poker29_a_round_never_runs_out_of_cards_thirty_bettors_and_the_dealer() -> None:
    assert MAX_BETTORS == POKER29.max_bettors == POKER29_VN.max_bettors == 30
    seed = b"shoe"
    for dealt in range(RESHUFFLE_AFTER + 1):  # every offset a round can start at
        assert len(POKER29.deal(seed, MAX_BETTORS + 1, mean_share=0, offset=dealt)) == 31
    with pytest.raises(ValueError):
        POKER29.deal(seed, MAX_BETTORS + 1, mean_share=0, offset=RESHUFFLE_AFTER + 2)


def test_poker29_five_cards_each_alternating_starting_with_the_player() -> None:
    seed, offset = b"alternate", 40
    order = shuffled(seed, 6)
    dealt = [unpack(outcome) for outcome in POKER29.deal(seed, 3, mean_share=9, offset=offset)]
    # Player (bettor 1), bettor 2, dealer; then again, five times.
    assert [dealt[h][k] for k in range(5) for h in range(3)] == order[offset : offset + 15]
    assert POKER29.deal(seed, 3, mean_share=0, offset=offset) == tuple(
        pack(h) for h in deal_hands(seed, 6, 3, offset)
    )
    assert POKER29_VN.deal(seed, 3, mean_share=0, offset=offset) == POKER29.deal(
        seed, 3, mean_share=0, offset=offset
    )


def test_poker29_rulesets_are_registered() -> None:
    assert get_ruleset("poker29") is POKER29
    assert get_ruleset("poker29_vn") is POKER29_VN
    assert (POKER29.name, POKER29_VN.name) == ("poker29", "poker29_vn")
    assert not POKER29.uses_grabs and not POKER29_VN.uses_grabs


def test_poker29_evaluate_reads_a_packed_outcome() -> None:
    cards = parse_cards("KS QH JD 10C 9S")
    assert POKER29.evaluate(pack(cards)) == evaluate(pack(cards)) == evaluate_cards(cards)
    assert POKER29_VN.evaluate(pack(cards)) == evaluate_cards(cards, card_tie_break=False)
    with pytest.raises(ValueError):
        POKER29.evaluate(-1)
    with pytest.raises(ValueError):
        evaluate_cards(CARDS[:4])


def test_poker29_evaluated_hands_equal_hands_built_field_by_field() -> None:
    built = hand("KS QH JD 10C 9S")
    keys = tuple(sorted((card_key(card) for card in built.cards), reverse=True))
    assert built == Hand(built.cards, HandKind.BIG_POINT, 9, (2, 9, *keys))
    assert not hasattr(built, "__dict__")  # slots only, like the cards


# --- poker29_vn (seed 004) ------------------------------------------------------------------


def test_poker29_vn_equal_pattern_and_points_push_without_a_card_tie_break() -> None:
    kings, queens = "KS QH JD 10C 9S", "QS QH JD 10C 9S"
    assert compare(hand(kings), hand(queens)) > 0  # seed 002: card by card
    assert compare(vn(kings), vn(queens)) == 0  # seed 004: a push
    assert POKER29_VN.compare(POKER29_VN.evaluate(pack(parse_cards(kings))), vn(queens)) == 0
    assert vn(kings).strength == (HandKind.BIG_POINT.rank, 9)


def test_poker29_vn_patterns_and_points_still_decide() -> None:
    assert compare(vn("JS JH JD QC QS"), vn("10S QH KD KC KS")) > 0
    assert compare(vn("2S 3H 5D 4C 4D"), vn("KS KH KD 3C 4C")) > 0  # Big 8 over Big 7
    assert compare(vn("KS QH 8D 3C 5S"), vn("AS AH 2D 2C 5S")) == 0  # two High Cards push


def test_poker29_and_vn_hands_do_not_compare() -> None:
    with pytest.raises(ValueError):
        compare(hand("KS QH JD 10C 9S"), vn("KS QH JD 10C 9S"))


# --- exhaustive counts over one deck ----------------------------------------------------------

#: Hands of each pattern (by points) among all C(52, 5) = 2,598,960 hands of one deck.
EXPECTED_COUNTS = {
    "ultimate": 792,
    "niuniu": 191_016,
    "big_point 9": 171_304,
    "big_point 8": 168_096,
    "big_point 7": 171_304,
    "small_point 6": 168_096,
    "small_point 5": 177_424,
    "small_point 4": 168_096,
    "small_point 3": 171_304,
    "small_point 2": 168_096,
    "small_point 1": 171_304,
    "high_card": 872_128,
}


def oracle_pattern(ranks: tuple[int, ...]) -> str:
    """The pattern of five ranks, straight from the rules text (seed 002)."""
    if all(rank >= 11 for rank in ranks):
        return "ultimate"
    values = [10 if rank >= 10 else rank for rank in ranks]
    best = "high_card"
    best_score = -1
    for left in itertools.combinations(range(5), 3):
        if sum(values[i] for i in left) % 10:
            continue
        right = sum(values[i] for i in range(5) if i not in left) % 10
        name, score = (
            ("niuniu", 10)
            if right == 0
            else (f"{'big' if right > 6 else 'small'}_point {right}", right)
        )
        if score > best_score:
            best, best_score = name, score
    return best


def module_pattern(h: Hand) -> str:
    return f"{h.kind.value} {h.points}" if h.points else h.kind.value


def test_poker29_exhaustive_counts_literals_add_up_to_every_hand() -> None:
    assert sum(EXPECTED_COUNTS.values()) == comb(52, 5)


def test_poker29_exhaustive_counts_match_an_independent_count_by_rank_multisets() -> None:
    counts: Counter[str] = Counter()
    for ranks in itertools.combinations_with_replacement(range(1, 14), 5):
        held = Counter(ranks)
        if max(held.values()) <= 4:
            counts[oracle_pattern(ranks)] += prod(comb(4, n) for n in held.values())
    assert dict(counts) == EXPECTED_COUNTS


def test_poker29_exhaustive_counts_match_the_module_by_rank_multisets() -> None:
    # The module over one hand of each multiset of ranks, weighted, plus every suit and
    # order of a sample of multisets (the pattern must not depend on them).
    counts: Counter[str] = Counter()
    for i, ranks in enumerate(itertools.combinations_with_replacement(range(1, 14), 5)):
        held = Counter(ranks)
        if max(held.values()) > 4:
            continue
        suits = {rank: iter("SHDC") for rank in held}
        cards = [Card(rank, Suit(next(suits[rank]))) for rank in ranks]
        pattern = module_pattern(evaluate_cards(cards))
        counts[pattern] += prod(comb(4, n) for n in held.values())
        if i % 97 == 0:
            for order in itertools.permutations(cards):
                assert module_pattern(evaluate_cards(order)) == pattern
    assert dict(counts) == EXPECTED_COUNTS


# --- properties of compare ------------------------------------------------------------------

# Six decks: any five cards, repeats allowed. Few ranks make ties on pattern and points.
any_five = st.lists(st.sampled_from(CARDS), min_size=5, max_size=5)
few_ranks = st.lists(
    st.sampled_from([card for card in CARDS if card.rank in (1, 9, 10, 13)]), min_size=5, max_size=5
)
five_cards = st.one_of(any_five, few_ranks)
poker29_hands = five_cards.map(evaluate_cards)
vn_hands = five_cards.map(lambda cards: evaluate_cards(cards, card_tie_break=False))


@QUICK
@given(st.one_of(st.tuples(poker29_hands, poker29_hands), st.tuples(vn_hands, vn_hands)))
def test_poker29_compare_is_antisymmetric(pair: tuple[Hand, Hand]) -> None:
    a, b = pair
    assert sign(compare(a, b)) == -sign(compare(b, a))


@QUICK
@given(
    st.one_of(
        st.tuples(poker29_hands, poker29_hands, poker29_hands),
        st.tuples(vn_hands, vn_hands, vn_hands),
    )
)
def test_poker29_compare_is_transitive(trio: tuple[Hand, Hand, Hand]) -> None:
    a, b, c = trio
    if compare(a, b) > 0 and compare(b, c) > 0:
        assert compare(a, c) > 0
    if compare(a, b) >= 0 and compare(b, c) >= 0:
        assert compare(a, c) >= 0
    if compare(a, b) == 0 and compare(b, c) == 0:
        assert compare(a, c) == 0
    ordered = sorted([a, b, c], key=functools.cmp_to_key(compare))
    for weaker, stronger in itertools.pairwise(ordered):
        assert compare(stronger, weaker) >= 0


@QUICK
@given(st.one_of(st.tuples(poker29_hands, poker29_hands), st.tuples(vn_hands, vn_hands)))
def test_poker29_compare_is_consistent_with_strength(pair: tuple[Hand, Hand]) -> None:
    a, b = pair
    assert sign(compare(a, b)) == sign((a.strength > b.strength) - (a.strength < b.strength))
    assert a.strength[:2] == (a.kind.rank, a.points)


@QUICK
@given(five_cards, five_cards)
def test_poker29_compare_follows_the_rules_text(x: list[Card], y: list[Card]) -> None:
    a, b = evaluate_cards(x), evaluate_cards(y)
    order = {"S": 3, "H": 2, "D": 1, "C": 0}

    def cards_high_to_low(cards: list[Card]) -> list[tuple[int, int]]:
        return sorted(((card.rank, order[card.suit]) for card in cards), reverse=True)

    pattern = (a.kind.rank, a.points), (b.kind.rank, b.points)
    if pattern[0] != pattern[1]:
        expected = sign((pattern[0] > pattern[1]) - (pattern[0] < pattern[1]))
        assert sign(compare(a, b)) == expected
        vn_a, vn_b = (evaluate_cards(z, card_tie_break=False) for z in (x, y))
        assert sign(compare(vn_a, vn_b)) == expected
    else:
        ha, hb = cards_high_to_low(x), cards_high_to_low(y)
        assert sign(compare(a, b)) == sign((ha > hb) - (ha < hb))
        vn_a, vn_b = (evaluate_cards(z, card_tie_break=False) for z in (x, y))
        assert compare(vn_a, vn_b) == 0
