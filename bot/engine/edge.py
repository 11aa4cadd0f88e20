"""What the house takes of every stake at a table, and which settings changes an admin must
confirm because of it (``docs/rules.md`` §8).

Pure: the figures come from ``bot.engine.odds`` (exact, one bet against the dealer). The
*house* is the group's side of the table: the platform (rake less rebates, and the dealer's
fees) and, when the house deals, the bank too. Its edge is what it takes per unit staked:

- the house deals: everything the players lose, ``-player``;
- players bid to deal: the platform's share, plus the dealer's fees over the smallest
  round a dealer can settle (one bet of ``min_bet``), since fees are per round, not per bet.

A change that takes the edge below 0 (the table pays out more than it takes in) or above
``HOUSE_EDGE_LIMIT_BPS``, and further that way than it was, must be confirmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.engine.odds import Odds, table_odds
from bot.engine.round import HOUSE_DEALER
from bot.engine.settings import Settings
from bot.engine.settlement import BPS_DENOMINATOR

#: The most of every stake the house may take before a change needs confirming: 20 %
#: (``docs/rules.md`` §8).
HOUSE_EDGE_LIMIT_BPS = 2_000
#: The settings the house's edge depends on; a change of any other never needs confirming.
EDGE_SETTINGS = (
    "ruleset",
    "dealer",
    "loss_pays",
    "rake_bps",
    "rebate_bps",
    "dealer_fee",
    "service_fee",
    "envelope_fee",
    "envelope_mean_share",
    "min_bet",
)


class EdgeAlarm(StrEnum):
    """Why a change must be confirmed."""

    PAYS_OUT = "pays_out"  # the house loses on average: the table bleeds
    TAKES_TOO_MUCH = "takes_too_much"  # the house takes more than the limit


@dataclass(frozen=True, slots=True)
class HouseEdge:
    """A table's odds and what the house takes of each stake (``edge``, per unit staked;
    negative when it pays out)."""

    odds: Odds
    edge: float


@dataclass(frozen=True, slots=True)
class EdgeWarning:
    """A change to confirm: why, and the house's edge before and after it."""

    alarm: EdgeAlarm
    before: HouseEdge
    after: HouseEdge


def house_edge(settings: Settings) -> HouseEdge:
    """The odds of one bet at a table with these settings and the house's edge."""
    odds = table_odds(settings)
    if settings.dealer == HOUSE_DEALER:
        return HouseEdge(odds, -odds.player)
    fees = settings.dealer_fees / settings.min_bet
    return HouseEdge(odds, odds.platform + fees)


def edge_limit() -> float:
    """``HOUSE_EDGE_LIMIT_BPS`` per unit staked."""
    return HOUSE_EDGE_LIMIT_BPS / BPS_DENOMINATOR


def edge_warning(before: Settings, after: Settings) -> EdgeWarning | None:
    """Why changing ``before`` to ``after`` must be confirmed, or None: it takes the house's
    edge below 0 or above the limit, further than it was. Only changes of
    ``EDGE_SETTINGS`` are counted (the card games' first count takes a few seconds)."""
    if all(getattr(before, name) == getattr(after, name) for name in EDGE_SETTINGS):
        return None
    old, new = house_edge(before), house_edge(after)
    if new.edge < 0 and new.edge < old.edge:
        return EdgeWarning(EdgeAlarm.PAYS_OUT, old, new)
    if new.edge > edge_limit() and new.edge > old.edge:
        return EdgeWarning(EdgeAlarm.TAKES_TOO_MUCH, old, new)
    return None
