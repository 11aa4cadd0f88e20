"""The odds of a bet (bot.engine.odds) against brute force: every deal of a reduced deck
settled by ``settle`` itself, every two-share split from the real splitter, and a
simulation that gives the same figures for the same seed."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from fractions import Fraction

import pytest

from bot.engine.odds import (
    STAKE,
    card_gross,
    envelope_pairs,
    exact_card_odds,
    exact_envelope_odds,
    simulated_odds,
    table_odds,
)
from bot.engine.settings import Settings
from bot.engine.settlement import Stake, settle
from bot.rules.cards import Card, pack, parse_cards
from bot.rules.ruleset import RED_ENVELOPE, get_ruleset, table_ruleset
from bot.rules.split import split_envelope

RAKE, REBATE = 500, 70
#: Twelve cards: four aces (a Bomb, Five Small), and pairs of 2, 3, 9 and K.
SMALL_DECK = parse_cards("AS AH AD AC 2S 2H 3S 3H 9S 9H KS KH")
#: Two decks of six cards: identical hands can be dealt; J, Q and K make Ultimate hands.
SMALL_SHOE = parse_cards("AS 9S 10S JS QS KH") * 2


def brute_force(
    name: str, deck: Sequence[Card], *, loss_by_dealer: bool = False
) -> tuple[Fraction, Fraction, Fraction]:
    """Every ordered pair of disjoint hands of ``deck`` settled by ``settle``: the mean
    net of the player, the dealer and the platform per unit staked."""
    ruleset = table_ruleset(name, loss_by_dealer=loss_by_dealer)
    totals = [0, 0, 0]
    pairs = 0
    positions = range(len(deck))
    for first in itertools.combinations(positions, 5):
        rest = [index for index in positions if index not in first]
        for second in itertools.combinations(rest, 5):
            settled = settle(
                dealer_outcome=pack([deck[index] for index in second]),
                pool=10**12,
                stakes=[Stake(1, STAKE, pack([deck[index] for index in first]))],
                rake_bps=RAKE,
                rebate_bps=REBATE,
                dealer_fees=0,
                ruleset=ruleset,
            )
            totals[0] += settled.outcomes[1].net
            totals[1] += settled.dealer_net
            totals[2] += settled.platform_net
            pairs += 1
    return tuple(Fraction(total, pairs * STAKE) for total in totals)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("name", "deck"),
    [("bullbull", SMALL_DECK), ("poker29", SMALL_SHOE), ("poker29_vn", SMALL_SHOE)],
)
def test_the_counted_odds_of_a_card_game_are_those_of_every_deal_of_a_small_deck(
    name: str, deck: Sequence[Card]
) -> None:
    expected = brute_force(name, deck)
    counted = exact_card_odds(get_ruleset(name), rake_bps=RAKE, rebate_bps=REBATE, deck=deck)
    won, lost, _ = card_gross(get_ruleset(name), deck)
    rake, rebate = Fraction(RAKE, 10_000), Fraction(REBATE, 10_000)
    assert won * (1 - rake + rebate) - lost * (1 - rebate) == expected[0]
    assert (counted.player, counted.dealer, counted.platform) == pytest.approx(
        [float(value) for value in expected], abs=1e-12
    )


@pytest.mark.parametrize("name", ["poker29", "poker29_vn"])
def test_counted_odds_where_a_poker_loser_pays_by_the_dealer_are_those_of_every_deal(
    name: str,
) -> None:
    ruleset = table_ruleset(name, loss_by_dealer=True)
    expected = brute_force(name, SMALL_SHOE, loss_by_dealer=True)
    counted = exact_card_odds(ruleset, rake_bps=RAKE, rebate_bps=REBATE, deck=SMALL_SHOE)
    assert (counted.player, counted.dealer, counted.platform) == pytest.approx(
        [float(value) for value in expected], abs=1e-12
    )
    # Paid by the winner's hand either way round: neither side has an edge before the rake.
    won, lost, _ = card_gross(ruleset, SMALL_SHOE)
    assert won == lost
    assert expected != brute_force(name, SMALL_SHOE)


def test_a_poker_table_where_losers_pay_by_the_dealer_is_even_in_the_shoe() -> None:
    even = table_odds(Settings(ruleset="poker29", rake_bps=0, rebate_bps=0, loss_pays="dealer"))
    assert (even.player, even.dealer, even.platform) == (0, 0, 0)
    flat = table_odds(Settings(ruleset="poker29", rake_bps=0, rebate_bps=0))
    assert round(100 * flat.player, 3) == 30.308


def test_the_small_shoe_deals_identical_hands_that_push_in_poker29() -> None:
    _, _, tie = card_gross(get_ruleset("poker29"), SMALL_SHOE)
    assert tie > 0


def test_every_two_share_split_is_one_of_the_counted_splits_and_both_orders_come() -> None:
    pairs = set(envelope_pairs(500))
    assert len(pairs) == 999
    seen = {tuple(split_envelope(bytes([n % 256, n // 256]) * 16, 2, 1000)) for n in range(3000)}
    assert seen <= pairs
    assert any((b, a) in seen for a, b in seen if a != b)


def test_without_rake_and_rebate_neither_side_of_the_envelope_game_has_an_edge() -> None:
    fair = exact_envelope_odds(RED_ENVELOPE, rake_bps=0, rebate_bps=0, mean_share=500)
    assert (fair.player, fair.dealer, fair.platform) == (0, 0, 0)
    taxed = exact_envelope_odds(RED_ENVELOPE, rake_bps=RAKE, rebate_bps=REBATE, mean_share=500)
    assert taxed.player < 0 and taxed.platform > 0
    assert taxed.player + taxed.dealer + taxed.platform == pytest.approx(0, abs=1e-12)


def test_the_simulation_is_the_same_for_the_same_seed_and_agrees_with_the_count() -> None:
    def run(seed: int) -> object:
        return simulated_odds(
            RED_ENVELOPE,
            rake_bps=RAKE,
            rebate_bps=REBATE,
            bettors=1,
            mean_share=500,
            rng=random.Random(seed),
            max_rounds=2_000,
        )

    first, again, other = run(7), run(7), run(8)
    assert first == again
    assert first != other
    exact = exact_envelope_odds(RED_ENVELOPE, rake_bps=RAKE, rebate_bps=REBATE, mean_share=500)
    assert abs(first.player - exact.player) <= 2 * first.half_width  # type: ignore[attr-defined]


def test_the_odds_command_prints_the_exact_figures_and_refuses_a_bad_rate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.cli import main

    assert main(["odds", "--ruleset", "envelope68", "--rake", "0%", "--rebate", "0%"]) == 0
    printed = capsys.readouterr().out
    assert "all 999 equally likely splits" in printed
    assert "player's bet     +0.000 % of the stake  (exact)" in printed
    with pytest.raises(SystemExit) as refused:
        main(["odds", "--ruleset", "envelope68", "--rake", "five"])
    assert refused.value.code == 2
    assert "not a rate" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments",
    ["--ruleset envelope68", "--ruleset poker29", "--ruleset poker29 --loss-pays dealer --rake 5%"],
)
def test_the_odds_pasted_in_the_rules_are_what_the_command_prints(
    arguments: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    from bot.cli import main

    assert main(["odds", *arguments.split()]) == 0
    printed = capsys.readouterr().out
    rules = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    assert f"$ niuniu-bot odds {arguments}\n{printed}" in rules


def test_the_odds_command_takes_loss_pays_for_niu_niu_poker_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.cli import main

    assert main(["odds", "--ruleset", "poker29_vn", "--loss-pays", "dealer"]) == 0
    printed = capsys.readouterr().out
    assert "losers pay by the dealer's pattern" in printed
    assert "player's bet     +0.000 % of the stake" in printed
    assert main(["odds", "--ruleset", "bullbull", "--loss-pays", "dealer"]) == 2
    assert "--loss-pays is for Niu-Niu Poker" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("--share 20", "'20' is not a mean envelope share, which is what an envelope holds"),
        ("--share 0", "0.01 to 9.99"),
        ("--share lots", "e.g. --share 2.50"),
        ("--ruleset bullbull --share 2", "--share is for envelope68"),
    ],
)
def test_a_bad_share_is_told_in_the_players_words_not_the_settings_name(
    arguments: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    code: int | str | None
    try:
        code = main(["odds", *arguments.split()])
    except SystemExit as exit_:  # argparse's refusal
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and said in err
    assert err.count("\n") == 1 and "envelope_mean_share" not in err


def test_the_odds_of_a_new_table_need_no_ruleset(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    assert main(["odds", "--share", "2.5"]) == 0
    assert capsys.readouterr().out.startswith(
        "envelope68: rake 5%, rebate 0.7%, envelope share 2.50"
    )
