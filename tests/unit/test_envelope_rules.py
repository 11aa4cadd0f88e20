"""Hands of 68 NiuNiu: one test per rule clause, plus exhaustive checks over all 999 amounts.

The oracle below is written from the rules text (the digits of X.YZ as characters), not
from ``bot.rules.envelope``: it is what the code is checked against.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter

import pytest

from bot.rules.envelope import Hand, HandKind, compare, evaluate
from bot.rules.ruleset import RED_ENVELOPE, get_ruleset

ALL_AMOUNTS = range(1, 1000)

# --- an independent oracle, straight from the rules -----------------------------------------


def digits(amount: int) -> tuple[int, int, int]:
    """X, Y, Z of the amount written as X.YZ, read off its text."""
    text = f"{amount // 100}.{amount % 100:02d}"
    return int(text[0]), int(text[2]), int(text[3])


def oracle_points(amount: int) -> int:
    ones = sum(digits(amount)) % 10
    return 10 if ones == 0 else ones


def oracle_kind(amount: int) -> str:
    x, y, z = digits(amount)
    if x == y == z:
        return "baozi"
    if y == 0 and z == 0:
        return "manniu"
    if (y, z) == (x - 1, x - 2):
        return "fanshun"
    if (y, z) == (x + 1, x + 2):
        return "shunzi"
    if y == z:
        return "duizi"
    if x == 0 and z == 0:
        return "jinniu"
    return "ordinary"


ORACLE_MULTIPLIER = {"baozi": 18, "manniu": 15, "fanshun": 14, "shunzi": 13, "duizi": 12}
ORACLE_MULTIPLIER["jinniu"] = 11
ORACLE_RANK = ["ordinary", "jinniu", "duizi", "shunzi", "fanshun", "manniu", "baozi"]


def oracle_multiplier(amount: int) -> int:
    return ORACLE_MULTIPLIER.get(oracle_kind(amount), oracle_points(amount))


def oracle_key(amount: int) -> tuple[int, int, int, int]:
    """Greater wins: kind, then (two Duizi only) the pair number YZ, then points, then amount."""
    kind = oracle_kind(amount)
    pair = amount % 100 if kind == "duizi" else -1
    return ORACLE_RANK.index(kind), pair, oracle_points(amount), amount


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


def amounts_of(kind: str) -> set[int]:
    return {amount for amount in ALL_AMOUNTS if evaluate(amount).kind == kind}


def cents(text: str) -> int:
    units, _, rest = text.partition(".")
    return int(units) * 100 + int(rest)


# --- points -------------------------------------------------------------------------------


def test_seed_example_rm342_is_9_points() -> None:
    assert evaluate(342).points == 9


def test_points_are_the_ones_digit_of_the_digit_sum() -> None:
    assert evaluate(cents("2.45")).points == 1  # 2 + 4 + 5 = 11 -> 1 (seed: sum 11 is 1 point)
    assert evaluate(cents("4.96")).points == 9  # 4 + 9 + 6 = 19 -> 9 (seed: sum 19 is 9 points)
    for amount in ALL_AMOUNTS:
        if sum(digits(amount)) % 10:
            assert evaluate(amount).points == sum(digits(amount)) % 10, amount


def test_x_may_be_zero_so_cents_alone_are_read_as_0_yz() -> None:
    assert evaluate(cents("0.43")).points == 7
    assert evaluate(cents("0.05")).points == 5


def test_a_ones_digit_of_zero_is_ten_point_niuniu() -> None:
    assert evaluate(cents("1.45")).points == 10  # 1 + 4 + 5 = 10
    assert evaluate(cents("2.99")).points == 10  # 20
    niuniu = [amount for amount in ALL_AMOUNTS if sum(digits(amount)) % 10 == 0]
    assert niuniu
    for amount in niuniu:
        hand = evaluate(amount)
        assert hand.points == 10, amount
        assert hand.is_niuniu, amount


def test_points_are_always_between_1_and_10() -> None:
    assert {evaluate(amount).points for amount in ALL_AMOUNTS} == set(range(1, 11))


def test_points_match_the_oracle_for_every_amount() -> None:
    for amount in ALL_AMOUNTS:
        assert evaluate(amount).points == oracle_points(amount), amount


# --- the six special kinds ----------------------------------------------------------------


def test_baozi_all_three_digits_equal_18x() -> None:
    assert amounts_of("baozi") == {111 * d for d in range(1, 10)}  # 1.11 ... 9.99
    assert {evaluate(a).multiplier for a in amounts_of("baozi")} == {18}


def test_manniu_whole_amount_15x() -> None:
    assert amounts_of("manniu") == {100 * d for d in range(1, 10)}  # 1.00 ... 9.00
    assert {evaluate(a).multiplier for a in amounts_of("manniu")} == {15}


def test_fanshun_digits_decrease_in_sequence_14x() -> None:
    assert evaluate(cents("2.10")).kind == HandKind.FANSHUN  # the seed's example
    expected = {cents(f"{x}.{x - 1}{x - 2}") for x in range(2, 10)}  # 2.10 ... 9.87
    assert amounts_of("fanshun") == expected
    assert {evaluate(a).multiplier for a in expected} == {14}


def test_shunzi_digits_increase_in_sequence_13x() -> None:
    expected = {cents(f"{x}.{x + 1}{x + 2}") for x in range(8)}  # 0.12 ... 7.89
    assert cents("0.12") in expected
    assert amounts_of("shunzi") == expected
    assert {evaluate(a).multiplier for a in expected} == {13}


def test_duizi_last_two_digits_equal_12x() -> None:
    for text in ("0.11", "0.88", "1.66", "9.55"):
        assert evaluate(cents(text)).kind == HandKind.DUIZI, text
        assert evaluate(cents(text)).multiplier == 12, text
    for amount in amounts_of("duizi"):
        _, y, z = digits(amount)
        assert y == z, amount


def test_jinniu_first_and_last_digits_zero_11x() -> None:
    assert amounts_of("jinniu") == {10 * d for d in range(1, 10)}  # 0.10 ... 0.90
    assert {evaluate(a).multiplier for a in amounts_of("jinniu")} == {11}


def test_first_matching_special_kind_wins_highest_first() -> None:
    assert evaluate(cents("1.11")).kind == HandKind.BAOZI  # also a pair 11
    assert evaluate(cents("5.00")).kind == HandKind.MANNIU  # also a pair 00
    assert evaluate(cents("0.12")).kind == HandKind.SHUNZI  # X = 0 counts as a digit


def test_ordinary_multiplier_equals_points() -> None:
    for amount in ALL_AMOUNTS:
        hand = evaluate(amount)
        if hand.kind == HandKind.ORDINARY:
            assert hand.multiplier == hand.points, amount


def test_every_amount_kind_and_multiplier_match_the_oracle() -> None:
    for amount in ALL_AMOUNTS:
        hand = evaluate(amount)
        assert (hand.amount, hand.kind.value, hand.multiplier) == (
            amount,
            oracle_kind(amount),
            oracle_multiplier(amount),
        ), amount


def test_kind_counts_over_all_999_amounts() -> None:
    counts = Counter(evaluate(amount).kind.value for amount in ALL_AMOUNTS)
    assert counts == {
        "ordinary": 875,
        "duizi": 81,
        "baozi": 9,
        "manniu": 9,
        "jinniu": 9,
        "shunzi": 8,
        "fanshun": 8,
    }


def test_one_cent_is_an_ordinary_one_point_hand() -> None:
    hand = evaluate(1)
    assert (hand.kind, hand.points, hand.multiplier) == (HandKind.ORDINARY, 1, 1)


# --- the Hand value -----------------------------------------------------------------------


def test_kind_values_are_exactly_the_stable_identifiers() -> None:
    assert [kind.value for kind in HandKind] == [
        "baozi",
        "manniu",
        "fanshun",
        "shunzi",
        "duizi",
        "jinniu",
        "ordinary",
    ]
    assert all(isinstance(kind, str) for kind in HandKind)
    assert HandKind("duizi") is HandKind.DUIZI


def test_special_kinds_carry_their_chinese_names() -> None:
    assert {kind.value: kind.chinese for kind in HandKind if kind != HandKind.ORDINARY} == {
        "baozi": "豹子",
        "manniu": "满牛",
        "fanshun": "反顺",
        "shunzi": "顺子",
        "duizi": "对子",
        "jinniu": "金牛",
    }


def test_hand_is_immutable() -> None:
    hand = evaluate(342)
    with pytest.raises(dataclasses.FrozenInstanceError):
        hand.points = 10  # type: ignore[misc]
    assert isinstance(hand, Hand)
    assert evaluate(342) == hand


@pytest.mark.parametrize("amount", [0, 1000, -1, -999, 10**9])
def test_evaluate_rejects_amounts_outside_1_to_999_cents(amount: int) -> None:
    with pytest.raises(ValueError):
        evaluate(amount)


@pytest.mark.parametrize("amount", [1.0, 3.42, "342", None])
def test_evaluate_rejects_non_integer_amounts(amount: object) -> None:
    with pytest.raises(ValueError):
        evaluate(amount)  # type: ignore[arg-type]


# --- comparison ---------------------------------------------------------------------------


def test_compare_is_positive_when_a_wins_and_negative_when_b_wins() -> None:
    assert compare(evaluate(cents("9.99")), evaluate(cents("3.42"))) > 0
    assert compare(evaluate(cents("3.42")), evaluate(cents("9.99"))) < 0


def test_special_kinds_rank_baozi_manniu_fanshun_shunzi_duizi_jinniu() -> None:
    # One of each kind, highest kind first, each beating the next.
    ladder = [cents(t) for t in ("4.44", "9.00", "9.87", "7.89", "0.99", "0.90", "3.42")]
    # And exhaustively: every hand of a kind beats every hand of every lower kind.
    kinds = ["baozi", "manniu", "fanshun", "shunzi", "duizi", "jinniu", "ordinary"]
    for high_index, high in enumerate(kinds):
        for low in kinds[high_index + 1 :]:
            for a in amounts_of(high):
                for b in amounts_of(low):
                    assert compare(evaluate(a), evaluate(b)) > 0, (a, b)
    for stronger, weaker in itertools.pairwise(ladder):
        assert compare(evaluate(stronger), evaluate(weaker)) > 0


def test_weakest_special_hand_beats_ten_point_niuniu() -> None:
    weakest_jinniu = evaluate(cents("0.10"))  # Jinniu with 1 point
    best_ordinary = max(
        (evaluate(a) for a in ALL_AMOUNTS if evaluate(a).kind == HandKind.ORDINARY),
        key=lambda hand: (hand.points, hand.amount),
    )
    assert best_ordinary.points == 10
    assert compare(weakest_jinniu, best_ordinary) > 0


def test_ordinary_hands_compare_by_points_5_beats_4() -> None:
    five, four = evaluate(cents("0.14")), evaluate(cents("9.78"))
    assert (five.kind, five.points, four.kind, four.points) == ("ordinary", 5, "ordinary", 4)
    assert compare(five, four) > 0  # even though 0.14 is the smaller amount


def test_ten_point_niuniu_is_the_highest_ordinary_hand() -> None:
    ordinary = [evaluate(a) for a in ALL_AMOUNTS if evaluate(a).kind == HandKind.ORDINARY]
    niuniu = [hand for hand in ordinary if hand.points == 10]
    nine = [hand for hand in ordinary if hand.points == 9]
    for a in niuniu:
        for b in nine:
            assert compare(a, b) > 0, (a.amount, b.amount)


def test_same_kind_higher_points_win() -> None:
    # Two Baozi: 3.33 has 9 points, 9.99 has 7.
    assert compare(evaluate(cents("3.33")), evaluate(cents("9.99"))) > 0
    # Two Manniu: 9.00 (9 points) beats 1.00 (1 point).
    assert compare(evaluate(cents("9.00")), evaluate(cents("1.00"))) > 0


def test_same_kind_and_points_the_larger_amount_wins() -> None:
    assert evaluate(cents("2.50")).points == evaluate(cents("0.43")).points == 7
    assert compare(evaluate(cents("2.50")), evaluate(cents("0.43"))) > 0


def test_equal_amounts_tie() -> None:
    for amount in ALL_AMOUNTS:
        assert compare(evaluate(amount), evaluate(amount)) == 0


def test_seed_example_088_beats_166() -> None:
    assert compare(evaluate(cents("0.88")), evaluate(cents("1.66"))) > 0
    assert compare(evaluate(cents("1.66")), evaluate(cents("0.88"))) < 0


def test_duizi_compare_pair_number_before_points() -> None:
    low_points_high_pair, high_points_low_pair = evaluate(cents("0.22")), evaluate(cents("5.11"))
    assert low_points_high_pair.points == 4
    assert high_points_low_pair.points == 7
    assert compare(low_points_high_pair, high_points_low_pair) > 0


def test_duizi_with_the_same_pair_number_compare_points() -> None:
    assert compare(evaluate(cents("2.66")), evaluate(cents("1.66"))) > 0  # 4 points vs 3
    assert compare(evaluate(cents("1.66")), evaluate(cents("0.66"))) > 0  # 3 points vs 2


def test_one_cent_is_the_weakest_hand_of_all() -> None:
    one_cent = evaluate(1)
    for amount in range(2, 1000):
        assert compare(one_cent, evaluate(amount)) < 0, amount


def test_compare_matches_the_rules_for_every_pair_of_amounts() -> None:
    hands = [evaluate(amount) for amount in ALL_AMOUNTS]
    keys = [oracle_key(amount) for amount in ALL_AMOUNTS]
    for hand_a, key_a in zip(hands, keys, strict=True):
        for hand_b, key_b in zip(hands, keys, strict=True):
            expected = (key_a > key_b) - (key_a < key_b)
            if sign(compare(hand_a, hand_b)) != expected:
                pytest.fail(f"compare({hand_a.amount}, {hand_b.amount}) should be {expected}")


# --- the ruleset seam ---------------------------------------------------------------------


def test_red_envelope_ruleset_is_registered_by_name() -> None:
    assert get_ruleset("envelope68") is RED_ENVELOPE
    # The name earlier versions stored with rounds and settings still reads.
    assert get_ruleset("red_envelope") is RED_ENVELOPE
    with pytest.raises(ValueError):
        get_ruleset("five_card")


def test_ruleset_winner_is_paid_by_own_multiplier_loser_by_dealers() -> None:
    player, dealer = evaluate(cents("0.88")), evaluate(cents("3.42"))
    assert RED_ENVELOPE.win_multiplier(player) == 12
    assert RED_ENVELOPE.loss_multiplier(dealer) == 9


def test_ruleset_largest_loss_is_18x() -> None:
    assert RED_ENVELOPE.largest_loss_multiplier == 18
    assert max(evaluate(amount).multiplier for amount in ALL_AMOUNTS) == 18


def test_ruleset_only_one_cent_redeals_or_is_immune() -> None:
    assert [a for a in ALL_AMOUNTS if RED_ENVELOPE.is_redeal(evaluate(a))] == [1]
    assert [a for a in ALL_AMOUNTS if RED_ENVELOPE.is_immune(evaluate(a))] == [1]
