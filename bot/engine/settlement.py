"""Settling a round: hands, stakes and the dealer's pool become each player's outcome.

Pure arithmetic on integer cents. The invariant that matters most: players' nets +
the dealer's net + the platform's net = 0, and the dealer never pays out more than the
pool plus what the losers paid in.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from bot.rules.ruleset import RED_ENVELOPE, Ruleset

BPS_DENOMINATOR = 10_000


class Result(StrEnum):
    """How a player's stake ended."""

    WIN = "win"
    LOSE = "lose"
    TIE = "tie"
    DRINK = "drink"  # 喝水: a winner the pool could not pay; stake refunded
    IMMUNE = "immune"  # 免死: a loser holding the immune hand; stake refunded
    REFUND = "refund"  # the round was re-dealt


@dataclass(frozen=True, slots=True)
class Stake:
    """A player's bet and the outcome they were dealt (an envelope's cents, or packed cards)."""

    player_id: Hashable
    amount: int
    outcome: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """One player's result. ``net`` is what the player's balance changes by."""

    result: Result
    gross: int
    rake: int
    rebate: int
    net: int


@dataclass(frozen=True, slots=True)
class Settlement:
    """The whole round's result; all amounts in cents."""

    redeal: bool
    outcomes: Mapping[Hashable, Outcome]
    dealer_net: int
    platform_net: int

    @property
    def rake_total(self) -> int:
        """All rake the platform took from players and the dealer's winnings."""
        return sum(outcome.rake for outcome in self.outcomes.values())

    @property
    def rebate_total(self) -> int:
        """All rebates the platform paid."""
        return sum(outcome.rebate for outcome in self.outcomes.values())


_REFUND = Outcome(Result.REFUND, 0, 0, 0, 0)
_TIE = Outcome(Result.TIE, 0, 0, 0, 0)
_IMMUNE = Outcome(Result.IMMUNE, 0, 0, 0, 0)
_DRINK = Outcome(Result.DRINK, 0, 0, 0, 0)


def _share(gross: int, bps: int) -> int:
    return gross * bps // BPS_DENOMINATOR


def settle(
    *,
    dealer_outcome: int,
    pool: int,
    stakes: Sequence[Stake],
    rake_bps: int,
    rebate_bps: int,
    dealer_fees: int,
    ruleset: Ruleset[Any] = RED_ENVELOPE,
) -> Settlement:
    """Settle a round against the dealer's pool.

    ``stakes`` come in the order the bets were placed; each player appears once.

    - A dealer hand that re-deals (0.01): every outcome is ``refund``, nothing is charged.
    - ``dealer_outcome`` and each stake's ``outcome`` are dealt outcomes that the
      ``ruleset`` evaluates (an envelope's cents, or five packed cards).
    - A player who beats the dealer wins stake x the win multiplier; one who loses pays
      stake x the loss multiplier, unless immune (免死: refunded). Equal hands tie.
    - Losers pay first; the platform takes ``rake_bps`` of each loss and the pool gets the
      rest. Winners are then paid from the pool, strongest hand first (equal strength:
      earlier bet first). The first winner who cannot be paid in full, and every winner
      after it, drinks (喝水: stake refunded). A paid winner gives ``rake_bps`` of the win
      to the platform.
    - The platform pays a rebate of ``rebate_bps`` of the gross on every win and loss.
    - The dealer pays ``dealer_fees`` to the platform on every settled round.
    """
    if pool < 0 or dealer_fees < 0:
        raise ValueError("pool and dealer fees cannot be negative")
    if not (0 <= rake_bps <= BPS_DENOMINATOR and 0 <= rebate_bps <= BPS_DENOMINATOR):
        raise ValueError("rake and rebate are basis points between 0 and 10000")
    seen: set[Hashable] = set()
    for stake in stakes:
        if stake.amount <= 0:
            raise ValueError(f"stake of {stake.player_id!r} must be positive, not {stake.amount}")
        if stake.player_id in seen:
            raise ValueError(f"player {stake.player_id!r} has two stakes")
        seen.add(stake.player_id)

    dealer = ruleset.evaluate(dealer_outcome)
    if ruleset.is_redeal(dealer):
        return Settlement(
            redeal=True,
            outcomes=MappingProxyType({stake.player_id: _REFUND for stake in stakes}),
            dealer_net=0,
            platform_net=0,
        )

    outcomes: dict[Hashable, Outcome] = {}
    winners: list[tuple[Stake, Any]] = []
    collected = 0  # what losers paid into the pool, after rake
    platform_net = dealer_fees
    # Looked up once: a round can have thousands of stakes.
    evaluate, compare, is_immune = ruleset.evaluate, ruleset.compare, ruleset.is_immune
    loss_multiplier = ruleset.loss_multiplier(dealer)
    for stake in stakes:
        hand = evaluate(stake.outcome)
        verdict = compare(hand, dealer)
        if verdict > 0:
            winners.append((stake, hand))
        elif verdict == 0:
            outcomes[stake.player_id] = _TIE
        elif is_immune(hand):
            outcomes[stake.player_id] = _IMMUNE
        else:
            gross = stake.amount * loss_multiplier
            rake, rebate = _share(gross, rake_bps), _share(gross, rebate_bps)
            collected += gross - rake
            platform_net += rake - rebate
            outcomes[stake.player_id] = Outcome(Result.LOSE, gross, rake, rebate, rebate - gross)

    payable = pool + collected
    paid = 0
    drinking = False
    # Strongest first; equal strength keeps the bet order (a reversed sort is still stable).
    winners.sort(key=lambda entry: entry[1].strength, reverse=True)
    for stake, hand in winners:
        gross = stake.amount * ruleset.win_multiplier(hand)
        if drinking or gross > payable - paid:
            drinking = True
            outcomes[stake.player_id] = _DRINK
            continue
        paid += gross
        rake, rebate = _share(gross, rake_bps), _share(gross, rebate_bps)
        platform_net += rake - rebate
        outcomes[stake.player_id] = Outcome(Result.WIN, gross, rake, rebate, gross - rake + rebate)

    ordered = {stake.player_id: outcomes[stake.player_id] for stake in stakes}
    return Settlement(
        redeal=False,
        outcomes=MappingProxyType(ordered),
        dealer_net=collected - paid - dealer_fees,
        platform_net=platform_net,
    )
