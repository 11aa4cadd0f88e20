"""Property tests (Hypothesis): comparison is a total order, settlement keeps every rule for
any round, splits keep their guarantees for any seed.

Examples are derandomized so the suite is deterministic; failures still shrink.
"""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.settlement import Result, Settlement, Stake, settle
from bot.rules.envelope import compare, evaluate
from bot.rules.split import split_envelope

QUICK = settings(max_examples=300, deadline=None, derandomize=True, database=None)
ROUNDS = settings(max_examples=150, deadline=None, derandomize=True, database=None)

amounts = st.integers(min_value=1, max_value=999)


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


# --- compare ------------------------------------------------------------------------------


@QUICK
@given(amounts, amounts)
def test_compare_is_antisymmetric(a: int, b: int) -> None:
    assert sign(compare(evaluate(a), evaluate(b))) == -sign(compare(evaluate(b), evaluate(a)))


@QUICK
@given(amounts, amounts, amounts)
def test_compare_is_transitive(a: int, b: int, c: int) -> None:
    ha, hb, hc = evaluate(a), evaluate(b), evaluate(c)
    if compare(ha, hb) > 0 and compare(hb, hc) > 0:
        assert compare(ha, hc) > 0
    if compare(ha, hb) >= 0 and compare(hb, hc) >= 0:
        assert compare(ha, hc) >= 0


@QUICK
@given(amounts, amounts)
def test_compare_is_total_tie_exactly_when_amounts_are_equal(a: int, b: int) -> None:
    assert (compare(evaluate(a), evaluate(b)) == 0) == (a == b)


@QUICK
@given(amounts, amounts, amounts)
def test_compare_is_consistent_with_a_sorted_order(a: int, b: int, c: int) -> None:
    # Sorting with compare itself gives an order every pair agrees with.
    hands = sorted([evaluate(a), evaluate(b), evaluate(c)], key=functools.cmp_to_key(compare))
    for i, weaker in enumerate(hands):
        for stronger in hands[i + 1 :]:
            assert compare(stronger, weaker) >= 0


# --- settlement ---------------------------------------------------------------------------


@st.composite
def rounds(draw: st.DrawFn) -> dict[str, object]:
    """Any round: 0-60 stakes, pools 0..10^7, any rates and fees; some re-deals, ties, 0.01s."""
    dealer = 1 if draw(st.integers(0, 9)) == 9 else draw(amounts)
    count = draw(st.integers(min_value=0, max_value=60))
    ids = draw(st.lists(st.integers(), min_size=count, max_size=count, unique=True))
    big = draw(st.booleans())
    stake_amount = st.integers(min_value=1, max_value=10**7 if big else 5_000)
    envelope = st.one_of(amounts, amounts, amounts, amounts, st.just(dealer), st.just(1))
    stakes = [Stake(player, draw(stake_amount), draw(envelope)) for player in ids]
    return {
        "dealer_outcome": dealer,
        "pool": draw(st.one_of(st.integers(0, 10**7), st.integers(0, 20_000))),
        "stakes": stakes,
        "rake_bps": draw(st.one_of(st.integers(0, 10_000), st.sampled_from([0, 500]))),
        "rebate_bps": draw(st.one_of(st.integers(0, 10_000), st.sampled_from([0, 70]))),
        "dealer_fees": draw(st.integers(0, 100_000)),
    }


def settled(round_: dict[str, object]) -> Settlement:
    return settle(**round_)  # type: ignore[arg-type]


@ROUNDS
@given(rounds())
def test_settlement_conserves_money(round_: dict[str, object]) -> None:
    result = settled(round_)
    players = sum(outcome.net for outcome in result.outcomes.values())
    assert players + result.dealer_net + result.platform_net == 0


@ROUNDS
@given(rounds())
def test_dealer_never_pays_out_more_than_the_pool(round_: dict[str, object]) -> None:
    result = settled(round_)
    assert result.dealer_net >= -(round_["pool"] + round_["dealer_fees"])  # type: ignore[operator]


@ROUNDS
@given(rounds())
def test_no_loser_is_charged_more_than_stake_times_18(round_: dict[str, object]) -> None:
    result = settled(round_)
    stakes: list[Stake] = round_["stakes"]  # type: ignore[assignment]
    for stake in stakes:
        outcome = result.outcomes[stake.player_id]
        assert outcome.net >= -stake.amount * 18
        assert outcome.gross <= stake.amount * 18


@ROUNDS
@given(rounds())
def test_outcomes_are_keyed_by_every_player_in_bet_order(round_: dict[str, object]) -> None:
    stakes: list[Stake] = round_["stakes"]  # type: ignore[assignment]
    assert list(settled(round_).outcomes) == [stake.player_id for stake in stakes]


@ROUNDS
@given(rounds())
def test_each_result_follows_the_hands(round_: dict[str, object]) -> None:
    result = settled(round_)
    dealer = evaluate(round_["dealer_outcome"])  # type: ignore[arg-type]
    stakes: list[Stake] = round_["stakes"]  # type: ignore[assignment]
    assert result.redeal == (dealer.amount == 1)
    for stake in stakes:
        outcome = result.outcomes[stake.player_id]
        hand = evaluate(stake.outcome)
        verdict = compare(hand, dealer)
        if result.redeal:
            assert outcome.result == Result.REFUND
        elif verdict > 0:
            assert outcome.result in (Result.WIN, Result.DRINK)
        elif verdict == 0:
            assert outcome.result == Result.TIE
        elif stake.outcome == 1:
            assert outcome.result == Result.IMMUNE
        else:
            assert outcome.result == Result.LOSE
        if outcome.result == Result.WIN:
            assert outcome.gross == stake.amount * hand.multiplier
        if outcome.result == Result.LOSE:
            assert outcome.gross == stake.amount * dealer.multiplier


@ROUNDS
@given(rounds())
def test_rake_rebate_and_nets_follow_the_gross(round_: dict[str, object]) -> None:
    result = settled(round_)
    rake_bps: int = round_["rake_bps"]  # type: ignore[assignment]
    rebate_bps: int = round_["rebate_bps"]  # type: ignore[assignment]
    for outcome in result.outcomes.values():
        if outcome.result in (Result.WIN, Result.LOSE):
            assert outcome.rake == outcome.gross * rake_bps // 10_000
            assert outcome.rebate == outcome.gross * rebate_bps // 10_000
            sign_ = 1 if outcome.result == Result.WIN else -1
            rake_paid_by_player = outcome.rake if outcome.result == Result.WIN else 0
            assert outcome.net == sign_ * outcome.gross - rake_paid_by_player + outcome.rebate
        else:  # tie, drink, immune, refund: nothing moves, no rebate
            assert (outcome.gross, outcome.rake, outcome.rebate, outcome.net) == (0, 0, 0, 0)


@ROUNDS
@given(rounds())
def test_dealer_and_platform_nets_add_up(round_: dict[str, object]) -> None:
    result = settled(round_)
    if result.redeal:
        assert (result.dealer_net, result.platform_net) == (0, 0)
        return
    fees: int = round_["dealer_fees"]  # type: ignore[assignment]
    outcomes = list(result.outcomes.values())
    losses = sum(o.gross - o.rake for o in outcomes if o.result == Result.LOSE)
    wins = sum(o.gross for o in outcomes if o.result == Result.WIN)
    assert result.dealer_net == losses - wins - fees
    assert result.platform_net == fees + result.rake_total - result.rebate_total


@ROUNDS
@given(rounds())
def test_drink_only_when_payment_would_exceed_what_is_left(round_: dict[str, object]) -> None:
    result = settled(round_)
    if result.redeal:
        return
    stakes: list[Stake] = round_["stakes"]  # type: ignore[assignment]
    dealer = evaluate(round_["dealer_outcome"])  # type: ignore[arg-type]
    left: int = round_["pool"] + sum(  # type: ignore[operator]
        o.gross - o.rake for o in result.outcomes.values() if o.result == Result.LOSE
    )
    # Players who beat the dealer, strongest hand first, then earlier bet first.
    beaters = [
        (index, stake)
        for index, stake in enumerate(stakes)
        if compare(evaluate(stake.outcome), dealer) > 0
    ]
    beaters.sort(key=lambda entry: entry[0])
    beaters.sort(key=lambda entry: evaluate(entry[1].outcome).strength, reverse=True)
    drinking = False
    for _, stake in beaters:
        outcome = result.outcomes[stake.player_id]
        owed = stake.amount * evaluate(stake.outcome).multiplier
        if drinking:
            assert outcome.result == Result.DRINK
        elif owed > left:
            assert outcome.result == Result.DRINK
            drinking = True
        else:
            assert outcome.result == Result.WIN
            left -= owed


# --- split --------------------------------------------------------------------------------

seeds = st.binary(min_size=1, max_size=48)


@st.composite
def possible_splits(draw: st.DrawFn) -> tuple[bytes, int, int, int]:
    count = draw(st.integers(min_value=1, max_value=120))
    max_share = draw(st.one_of(st.integers(1, 999), st.just(999), st.integers(1, 5)))
    total = draw(st.integers(min_value=count, max_value=count * max_share))
    return draw(seeds), count, total, max_share


@QUICK
@given(possible_splits())
def test_split_sums_to_the_total_within_bounds(case: tuple[bytes, int, int, int]) -> None:
    seed, count, total, max_share = case
    shares = split_envelope(seed, count, total, max_share=max_share)
    assert len(shares) == count
    assert sum(shares) == total
    assert all(1 <= share <= max_share for share in shares)


@QUICK
@given(possible_splits())
def test_split_is_deterministic_per_seed(case: tuple[bytes, int, int, int]) -> None:
    seed, count, total, max_share = case
    first = split_envelope(seed, count, total, max_share=max_share)
    assert split_envelope(bytes(seed), count, total, max_share=max_share) == first


@QUICK
@given(
    seeds,
    st.integers(min_value=-5, max_value=60),
    st.integers(min_value=-10, max_value=70_000),
    st.integers(min_value=1, max_value=999),
)
def test_split_raises_value_error_exactly_when_impossible(
    seed: bytes, count: int, total: int, max_share: int
) -> None:
    impossible = count < 1 or total < count or total > count * max_share
    try:
        split_envelope(seed, count, total, max_share=max_share)
    except ValueError:
        assert impossible
    else:
        assert not impossible
