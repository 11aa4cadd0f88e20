"""Bets that stay in the box (``docs/rules.md`` §1): each player's standing bet placed for them as
betting opens. Pure.

``place_autobets`` takes a round whose betting window just opened, the group's standing
bets and each player's free chips, and places each as an ordinary bet (``engine.bet``):
one transition per bet, each with its own balanced postings and one version higher, so
that each is a ``/bet`` as the store keeps it (a bet row in bet order, one ledger
transaction; the group's together under one compare-and-set). What cannot be placed is
either skipped for this round (the player deals, already bet, or the table is full) or
stopped for good (their free chips run short for it, the table now plays another game, or
the table's limits no longer allow the amount).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.engine import round as engine
from bot.engine.errors import RuleViolation
from bot.engine.round import Phase, Round, Transition, UserId


@dataclass(frozen=True, slots=True)
class Autobet:
    """A player's standing bet in a group: ``amount`` cents each round of ``ruleset``'s
    game (``once``: for the next round only, the results' "same again")."""

    user_id: UserId
    amount: int
    ruleset: str
    once: bool = False


class StopReason(StrEnum):
    """Why a standing bet was stopped (the group is told)."""

    CHIPS = "chips"
    GAME = "game"
    LIMITS = "limits"


class SkipReason(StrEnum):
    """Why a standing bet sat out one round (it stays)."""

    DEALER = "dealer"
    ALREADY_BET = "already_bet"
    TABLE_FULL = "table_full"


@dataclass(frozen=True, slots=True)
class AutobetPlaced:
    """A standing bet placed: the bet's own transition (its postings one ledger
    transaction)."""

    autobet: Autobet
    transition: Transition[Round]


@dataclass(frozen=True, slots=True)
class AutobetStopped:
    """A standing bet that stopped: ``needed`` is what its hold would have taken."""

    autobet: Autobet
    reason: StopReason
    needed: int = 0


@dataclass(frozen=True, slots=True)
class AutobetSkipped:
    """A standing bet not placed this round; it stays for the next."""

    autobet: Autobet
    reason: SkipReason


@dataclass(frozen=True, slots=True)
class AutobetRun:
    """What placing a group's standing bets did: the round after them, each bet's
    transition in order, and the bets stopped and skipped."""

    round: Round
    placed: tuple[AutobetPlaced, ...] = ()
    stopped: tuple[AutobetStopped, ...] = ()
    skipped: tuple[AutobetSkipped, ...] = ()

    @property
    def considered(self) -> tuple[UserId, ...]:
        """Every player whose standing bet was looked at for this round."""
        return tuple(autobet.user_id for autobet in self.autobets)

    @property
    def autobets(self) -> tuple[Autobet, ...]:
        """Every standing bet looked at: placed, stopped, then skipped."""
        return (
            *(placed.autobet for placed in self.placed),
            *(stopped.autobet for stopped in self.stopped),
            *(skipped.autobet for skipped in self.skipped),
        )


_STOPPED_BY = {
    "not_enough_chips_to_bet": StopReason.CHIPS,
    "bet_too_small": StopReason.LIMITS,
    "bet_too_large": StopReason.LIMITS,
}
_SKIPPED_BY = {"table_full": SkipReason.TABLE_FULL, "bet_unchanged": SkipReason.ALREADY_BET}


def betting_open(state: Round, now_ms: int) -> bool:
    """True while ``state`` takes bets."""
    return state.phase is Phase.BETTING and now_ms < state.deadline_ms


def place_autobets(
    state: Round,
    autobets: Sequence[Autobet],
    free_chips: Mapping[UserId, int],
    now_ms: int,
) -> AutobetRun:
    """Place ``autobets`` (in their order) in a round whose betting is open, as ``/bet``
    would. ``free_chips`` is each player's available balance. A round not taking bets
    places nothing and stops nothing."""
    if not betting_open(state, now_ms):
        return AutobetRun(state)
    placed: list[AutobetPlaced] = []
    stopped: list[AutobetStopped] = []
    skipped: list[AutobetSkipped] = []
    for autobet in autobets:
        user = autobet.user_id
        if autobet.ruleset != state.settings.ruleset:
            stopped.append(AutobetStopped(autobet, StopReason.GAME))
        elif user == state.dealer_id:
            # The dealer of this round does not bet; the standing bet waits for the next.
            skipped.append(AutobetSkipped(autobet, SkipReason.DEALER))
        elif state.bet_of(user) is not None:
            skipped.append(AutobetSkipped(autobet, SkipReason.ALREADY_BET))
        else:
            try:
                transition = engine.bet(
                    state, user, autobet.amount, free_chips=free_chips.get(user, 0), now_ms=now_ms
                )
            except RuleViolation as refusal:
                if refusal.key in _STOPPED_BY:
                    needed = autobet.amount * state.ruleset.largest_loss_multiplier
                    stopped.append(AutobetStopped(autobet, _STOPPED_BY[refusal.key], needed))
                elif refusal.key in _SKIPPED_BY:
                    skipped.append(AutobetSkipped(autobet, _SKIPPED_BY[refusal.key]))
                else:
                    raise
                continue
            transition = _placed_standing(transition, user)
            placed.append(AutobetPlaced(autobet, transition))
            state = transition.round
    return AutobetRun(state, tuple(placed), tuple(stopped), tuple(skipped))


def _placed_standing(transition: Transition[Round], user: UserId) -> Transition[Round]:
    """The transition of a bet placed by a standing bet, its bet marked as such (the board
    shows it)."""
    state = transition.round
    placed = state.bet_of(user)
    assert placed is not None
    standing = state.with_bet(user, dataclasses.replace(placed, standing=True))
    return dataclasses.replace(transition, round=standing)
