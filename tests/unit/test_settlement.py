"""Settlement of a round: one test per clause of the settlement rules, and a worked round.

Amounts are cents. Envelope amounts are written as X.YZ text and converted with ``c()``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bot.engine.settlement import Outcome, Result, Settlement, Stake, settle
from bot.rules.cards import pack, parse_cards
from bot.rules.envelope import Hand
from bot.rules.ruleset import RedEnvelopeRuleset, table_ruleset


def c(text: str) -> int:
    """Cents of an amount written like ``12.50``."""
    units, _, rest = text.partition(".")
    return int(units) * 100 + int(rest or 0)


def run(
    dealer: str,
    stakes: Sequence[tuple[str, str, str]],
    *,
    pool: str = "1000.00",
    rake_bps: int = 0,
    rebate_bps: int = 0,
    fees: str = "0",
) -> Settlement:
    """Settle with stakes given as (player, stake, envelope) text triples."""
    return settle(
        dealer_outcome=c(dealer),
        pool=c(pool),
        stakes=[Stake(player, c(amount), c(envelope)) for player, amount, envelope in stakes],
        rake_bps=rake_bps,
        rebate_bps=rebate_bps,
        dealer_fees=c(fees),
    )


def total_of(settlement: Settlement) -> int:
    players = sum(outcome.net for outcome in settlement.outcomes.values())
    return players + settlement.dealer_net + settlement.platform_net


# --- the worked round (also in docs/rules.md) -------------------------------------------------
#
# Dealer grabs 2.50: ordinary, 2 + 5 + 0 = 7 points, 7x. Pool 100.00, rake 5% (500 bps),
# rebate 0.7% (70 bps), dealer fees 3.00.
#
#  bet  player  stake   envelope  hand                vs 2.50
#   1   alice    5.00   1.66      Duizi 66, 3 pts     wins, 5.00 x 12 = 60.00
#   2   bob     10.00   1.05      ordinary 6 pts      loses, 10.00 x 7 = 70.00
#   3   carol    5.00   0.88      Duizi 88, 6 pts     wins, 5.00 x 12 = 60.00
#   4   dave     8.00   0.01      ordinary 1 pt       loses, but 免死
#   5   erin     5.00   1.23      Shunzi, 6 pts       wins, 5.00 x 13 = 65.00
#   6   frank    3.00   2.50      the dealer's hand   tie
#   7   grace    2.00   0.43      ordinary 7 pts      loses (same points, smaller), 2.00 x 7
#   8   heidi    1.00   3.41      ordinary 8 pts      wins, 1.00 x 8 = 8.00
#
# Losers first.  bob:   gross 7000, rake 7000*500//10000 = 350, pool gets 6650,
#                       rebate 7000*70//10000 = 49 (49.0), net -7000 + 49 = -6951.
#                grace: gross 1400, rake 70, pool gets 1330, rebate 9 (9.8 rounds down),
#                       net -1400 + 9 = -1391.
# Payable: pool 10000 + 6650 + 1330 = 17980.
# Winners strongest first: erin (Shunzi), carol (Duizi 88), alice (Duizi 66), heidi (8 pts).
#   erin:  6500 <= 17980 paid; rake 325, rebate 45 (45.5), net 6500 - 325 + 45 = 6220. Left 11480.
#   carol: 6000 <= 11480 paid; rake 300, rebate 42,        net 6000 - 300 + 42 = 5742. Left 5480.
#   alice: 6000 >  5480  喝水 (drink): refunded, net 0.
#   heidi:  800 <= 5480 but weaker than a winner who drank: 喝水 too, net 0.
# Dealer:   6650 + 1330 - 6500 - 6000 - 300 fees = -4820  (>= -(10000 + 300)).
# Platform: 300 fees + (350 - 49) + (70 - 9) + (325 - 45) + (300 - 42) = 1200.
# Players:  -6951 - 1391 + 6220 + 5742 = 3620.   3620 - 4820 + 1200 = 0.

WORKED_STAKES = [
    ("alice", "5.00", "1.66"),
    ("bob", "10.00", "1.05"),
    ("carol", "5.00", "0.88"),
    ("dave", "8.00", "0.01"),
    ("erin", "5.00", "1.23"),
    ("frank", "3.00", "2.50"),
    ("grace", "2.00", "0.43"),
    ("heidi", "1.00", "3.41"),
]


def worked_round() -> Settlement:
    return run("2.50", WORKED_STAKES, pool="100.00", rake_bps=500, rebate_bps=70, fees="3.00")


def test_worked_round_every_outcome_to_the_cent() -> None:
    outcomes = worked_round().outcomes
    assert dict(outcomes) == {
        "alice": Outcome(Result.DRINK, 0, 0, 0, 0),
        "bob": Outcome(Result.LOSE, 7000, 350, 49, -6951),
        "carol": Outcome(Result.WIN, 6000, 300, 42, 5742),
        "dave": Outcome(Result.IMMUNE, 0, 0, 0, 0),
        "erin": Outcome(Result.WIN, 6500, 325, 45, 6220),
        "frank": Outcome(Result.TIE, 0, 0, 0, 0),
        "grace": Outcome(Result.LOSE, 1400, 70, 9, -1391),
        "heidi": Outcome(Result.DRINK, 0, 0, 0, 0),
    }


def test_worked_round_dealer_and_platform_to_the_cent() -> None:
    settlement = worked_round()
    assert settlement.redeal is False
    assert settlement.dealer_net == -4820
    assert settlement.platform_net == 1200
    assert settlement.rake_total == 350 + 70 + 325 + 300
    assert settlement.rebate_total == 49 + 9 + 45 + 42
    assert total_of(settlement) == 0


# --- one test per clause ------------------------------------------------------------------


def test_dealer_001_redeals_and_charges_nothing() -> None:
    settlement = run(
        "0.01",
        [("a", "10.00", "9.99"), ("b", "5.00", "0.43"), ("c", "1.00", "0.01")],
        pool="50.00",
        rake_bps=500,
        rebate_bps=70,
        fees="3.00",
    )
    assert settlement.redeal is True
    assert set(settlement.outcomes) == {"a", "b", "c"}
    for outcome in settlement.outcomes.values():
        assert outcome == Outcome(Result.REFUND, 0, 0, 0, 0)
    assert settlement.dealer_net == 0
    assert settlement.platform_net == 0


def test_a_round_that_is_not_redealt_says_so() -> None:
    assert run("0.02", [("a", "1.00", "0.03")]).redeal is False


def test_player_who_beats_the_dealer_wins_stake_times_own_multiplier() -> None:
    # 0.88 Duizi (12x) beats the dealer's 9-point 3.42 (9x): paid by the player's 12x.
    outcome = run("3.42", [("p", "10.00", "0.88")]).outcomes["p"]
    assert (outcome.result, outcome.gross, outcome.net) == (Result.WIN, 12000, 12000)


def test_loser_pays_stake_times_dealers_multiplier() -> None:
    # The dealer's Baozi (18x) sets the loss, not the loser's 9-point hand.
    settlement = run("9.99", [("p", "10.00", "3.42")])
    outcome = settlement.outcomes["p"]
    assert (outcome.result, outcome.gross, outcome.net) == (Result.LOSE, 18000, -18000)
    assert settlement.dealer_net == 18000


def test_player_holding_001_is_immune_to_loss() -> None:
    settlement = run(
        "9.99", [("p", "10.00", "0.01")], pool="5.00", rake_bps=500, rebate_bps=70, fees="1.00"
    )
    assert settlement.outcomes["p"] == Outcome(Result.IMMUNE, 0, 0, 0, 0)
    assert settlement.dealer_net == -100  # only the fees
    assert settlement.platform_net == 100


def test_equal_hands_tie_and_nothing_changes_hands() -> None:
    settlement = run("3.42", [("p", "10.00", "3.42")], rake_bps=500, rebate_bps=70)
    assert settlement.outcomes["p"] == Outcome(Result.TIE, 0, 0, 0, 0)
    assert settlement.dealer_net == settlement.platform_net == 0


def test_same_points_different_amounts_do_not_tie() -> None:
    # 0.43 and 2.50 both have 7 points; the larger amount wins, so this is a loss.
    assert run("2.50", [("p", "1.00", "0.43")]).outcomes["p"].result == Result.LOSE


def test_losers_pay_first_so_their_money_can_pay_winners() -> None:
    # Empty pool: the winner (who bet first) is paid only because the loser paid in first.
    settlement = run("3.42", [("winner", "1.00", "0.88"), ("loser", "2.00", "1.05")], pool="0")
    assert settlement.outcomes["loser"] == Outcome(Result.LOSE, 1800, 0, 0, -1800)
    assert settlement.outcomes["winner"] == Outcome(Result.WIN, 1200, 0, 0, 1200)
    assert settlement.dealer_net == 600


def test_rake_on_a_loss_goes_to_the_platform_and_the_rest_to_the_pool() -> None:
    # Dealer 7.77 is Baozi (18x, 1 point). The loser pays 10.00 x 18 = 180.00; at 5% the
    # platform takes 9.00 and the pool (empty before) receives 171.00: exactly enough for a
    # 3.33 Baozi (9 points) winning 9.50 x 18 = 171.00, and one cent short of 9.51 x 18.
    paid = run(
        "7.77", [("loser", "10.00", "3.42"), ("winner", "9.50", "3.33")], pool="0", rake_bps=500
    )
    assert paid.outcomes["loser"] == Outcome(Result.LOSE, 18000, 900, 0, -18000)
    assert paid.outcomes["winner"] == Outcome(Result.WIN, 17100, 855, 0, 17100 - 855)
    assert paid.dealer_net == 0
    assert paid.platform_net == 900 + 855
    unpaid = run(
        "7.77", [("loser", "10.00", "3.42"), ("winner", "9.51", "3.33")], pool="0", rake_bps=500
    )
    assert unpaid.outcomes["winner"].result == Result.DRINK
    assert unpaid.dealer_net == 17100


def test_paid_winner_receives_gross_minus_rake() -> None:
    outcome = run("3.42", [("p", "10.00", "0.88")], rake_bps=500).outcomes["p"]
    assert outcome == Outcome(Result.WIN, 12000, 600, 0, 11400)


def test_rake_and_rebate_are_rounded_down_to_the_cent() -> None:
    # Win 1.00 x 12 = 12.00 = 1200 cents. Rake 333 bps -> 39.96 -> 39; rebate 70 bps -> 8.4 -> 8.
    outcome = run("3.42", [("p", "1.00", "0.88")], rake_bps=333, rebate_bps=70).outcomes["p"]
    assert (outcome.rake, outcome.rebate, outcome.net) == (39, 8, 1200 - 39 + 8)
    # Loss 1.00 x 9 = 900: rake 333 bps -> 29.97 -> 29; rebate 6.3 -> 6.
    outcome = run("3.42", [("p", "1.00", "1.05")], rake_bps=333, rebate_bps=70).outcomes["p"]
    assert (outcome.rake, outcome.rebate, outcome.net) == (29, 6, -900 + 6)


def test_winners_are_paid_strongest_hand_first() -> None:
    # Pool 12.00 pays one 12.00 win. The later bet holds the stronger hand and is paid.
    stakes = [("weaker", "1.00", "1.66"), ("stronger", "1.00", "0.88")]
    settlement = run("3.42", stakes, pool="12.00")
    assert settlement.outcomes["stronger"].result == Result.WIN
    assert settlement.outcomes["weaker"].result == Result.DRINK


def test_equal_strength_winners_are_paid_in_bet_order() -> None:
    settlement = run("3.42", [("first", "1.00", "0.88"), ("second", "1.00", "0.88")], pool="12.00")
    assert settlement.outcomes["first"].result == Result.WIN
    assert settlement.outcomes["second"].result == Result.DRINK


def test_first_unpayable_winner_and_every_weaker_winner_drink() -> None:
    # Dealer 3.42 (9 points), pool 20.00. Strongest first: the Baozi's 18.00 is paid (2.00
    # left); the Duizi's 12.00 cannot be paid, so it drinks, and so does every weaker winner
    # after it -- even "tiny", whose 0.01 x 10 = 0.10 would fit in the 2.00 left.
    settlement = run(
        "3.42",
        [
            ("tiny", "0.01", "1.45"),  # 10-point Niu Niu
            ("duizi", "1.00", "0.88"),
            ("baozi", "1.00", "9.99"),
            ("small", "1.00", "2.35"),  # 10-point Niu Niu
        ],
        pool="20.00",
    )
    results = {player: outcome.result for player, outcome in settlement.outcomes.items()}
    assert results == {
        "tiny": Result.DRINK,
        "duizi": Result.DRINK,
        "baozi": Result.WIN,
        "small": Result.DRINK,
    }
    assert settlement.dealer_net == -1800


def test_drink_refunds_the_stake_and_wins_nothing() -> None:
    outcome = run("3.42", [("p", "10.00", "0.88")], pool="0", rake_bps=500, rebate_bps=70)
    assert outcome.outcomes["p"] == Outcome(Result.DRINK, 0, 0, 0, 0)


def test_a_winner_exactly_equal_to_what_is_left_is_paid() -> None:
    settlement = run("3.42", [("a", "1.00", "0.88"), ("b", "1.00", "1.66")], pool="24.00")
    assert [o.result for o in settlement.outcomes.values()] == [Result.WIN, Result.WIN]
    settlement = run("3.42", [("a", "1.00", "0.88"), ("b", "1.00", "1.66")], pool="23.99")
    assert [o.result for o in settlement.outcomes.values()] == [Result.WIN, Result.DRINK]


def test_rebate_is_paid_on_every_win_and_lose() -> None:
    settlement = run(
        "3.42", [("w", "10.00", "0.88"), ("l", "10.00", "1.05")], rake_bps=500, rebate_bps=70
    )
    assert settlement.outcomes["w"].rebate == 12000 * 70 // 10000
    assert settlement.outcomes["l"].rebate == 9000 * 70 // 10000


def test_no_rebate_on_tie_drink_immune_or_refund() -> None:
    settlement = worked_round()
    for player in ("alice", "dave", "frank", "heidi"):  # drink, immune, tie, drink
        assert settlement.outcomes[player].rebate == 0
    redealt = run("0.01", WORKED_STAKES, rebate_bps=70)
    assert all(outcome.rebate == 0 for outcome in redealt.outcomes.values())


def test_rebate_is_paid_by_the_platform() -> None:
    settlement = run("3.42", [("l", "10.00", "1.05")], rebate_bps=70)
    assert settlement.outcomes["l"].net == -9000 + 63
    assert settlement.dealer_net == 9000
    assert settlement.platform_net == -63


def test_dealer_fees_are_charged_when_a_round_settles() -> None:
    settlement = run("3.42", [("p", "1.00", "3.42")], fees="2.50")
    assert settlement.dealer_net == -250
    assert settlement.platform_net == 250


def test_dealer_fees_are_never_charged_on_a_redeal() -> None:
    settlement = run("0.01", [("p", "1.00", "3.42")], fees="2.50")
    assert settlement.dealer_net == settlement.platform_net == 0


def test_nets_of_players_dealer_and_platform_sum_to_zero() -> None:
    assert total_of(worked_round()) == 0
    assert total_of(run("0.01", WORKED_STAKES, rake_bps=500, rebate_bps=70, fees="3")) == 0


def test_dealer_never_pays_out_more_than_the_pool() -> None:
    settlement = run(
        "0.02", [(f"p{i}", "100.00", "9.99") for i in range(10)], pool="500.00", fees="1.00"
    )
    assert settlement.dealer_net >= -(50000 + 100)
    assert settlement.dealer_net == -100  # 100.00 x 18 never fits: everybody drinks


def test_outcomes_are_keyed_by_every_player_in_bet_order() -> None:
    assert list(worked_round().outcomes) == [player for player, _, _ in WORKED_STAKES]


def test_no_stakes_settle_to_nothing_but_the_fees() -> None:
    settlement = run("3.42", [], fees="1.00")
    assert dict(settlement.outcomes) == {}
    assert (settlement.dealer_net, settlement.platform_net) == (-100, 100)


def test_immune_hand_that_wins_is_paid_at_its_normal_multiplier() -> None:
    # With real envelopes 0.01 can never win (it is the weakest hand). The seed's rule is that
    # an immune hand's win "continues to settle at the normal multiplier"; check it with a
    # ruleset where the immune hand is not the weakest.
    class ImmuneAt5(RedEnvelopeRuleset):
        def is_immune(self, player: Hand) -> bool:
            return player.amount == 5

    settlement = settle(
        dealer_outcome=4,
        pool=10_000,
        stakes=[Stake("p", 100, 5)],
        rake_bps=0,
        rebate_bps=0,
        dealer_fees=0,
        ruleset=ImmuneAt5(),
    )
    assert settlement.outcomes["p"] == Outcome(Result.WIN, 500, 0, 0, 500)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"pool": -1},
        {"dealer_fees": -1},
        {"rake_bps": 10_001},
        {"rebate_bps": -1},
        {"stakes": [Stake("a", 0, 342)]},
        {"stakes": [Stake("a", 100, 342), Stake("a", 100, 88)]},
        {"stakes": [Stake("a", 100, 1000)]},
        {"dealer_outcome": 0},
    ],
)
def test_impossible_inputs_are_refused(kwargs: dict[str, object]) -> None:
    arguments: dict[str, object] = {
        "dealer_outcome": 342,
        "pool": 10_000,
        "stakes": [Stake("a", 100, 88)],
        "rake_bps": 500,
        "rebate_bps": 70,
        "dealer_fees": 0,
    }
    arguments.update(kwargs)
    with pytest.raises(ValueError):
        settle(**arguments)  # type: ignore[arg-type]


# --- Niu-Niu Poker: a loss at 1x, or by the dealer's pattern (``loss_pays dealer``) ----------

POKER_DEALER = "10S JH QD 5C 5S"  # Niu-Niu, 3x
POKER_LOSER = "AS AH 2D 2C 5S"  # High Card, 1x
POKER_WINNER = "JS QH KD JC QS"  # Ultimate Niu-Niu, 5x


def poker(*, loss_by_dealer: bool) -> Settlement:
    def packed(cards: str) -> int:
        return pack(parse_cards(cards))

    return settle(
        dealer_outcome=packed(POKER_DEALER),
        pool=100_000,
        stakes=[
            Stake("loser", 1_000, packed(POKER_LOSER)),
            Stake("winner", 1_000, packed(POKER_WINNER)),
        ],
        rake_bps=500,
        rebate_bps=0,
        dealer_fees=0,
        ruleset=table_ruleset("poker29", loss_by_dealer=loss_by_dealer),
    )


def test_a_niu_niu_poker_loser_pays_the_stake_whatever_the_dealer_holds() -> None:
    settlement = poker(loss_by_dealer=False)
    loser, winner = settlement.outcomes["loser"], settlement.outcomes["winner"]
    assert (loser.result, loser.gross, loser.rake, loser.net) == (Result.LOSE, 1_000, 50, -1_000)
    assert (winner.result, winner.gross, winner.net) == (Result.WIN, 5_000, 4_750)
    assert settlement.dealer_net == 950 - 5_000
    assert total_of(settlement) == 0


def test_with_loss_pays_dealer_a_niu_niu_poker_loser_pays_by_the_dealers_pattern() -> None:
    settlement = poker(loss_by_dealer=True)
    loser, winner = settlement.outcomes["loser"], settlement.outcomes["winner"]
    # The dealer's Niu-Niu (3x) prices the loss, as in Bull Bull; the winner is paid as before.
    assert (loser.result, loser.gross, loser.rake, loser.net) == (Result.LOSE, 3_000, 150, -3_000)
    assert (winner.result, winner.gross, winner.net) == (Result.WIN, 5_000, 4_750)
    assert settlement.dealer_net == 2_850 - 5_000
    assert settlement.platform_net == 150 + 250
    assert total_of(settlement) == 0
