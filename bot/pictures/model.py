"""What a results picture shows, as text already in the group's language: the renderer
lays it out and draws it, and knows nothing of rounds, rules or languages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    """How a line ended for its owner: the colour of its net."""

    WIN = "win"
    LOSE = "lose"
    EVEN = "even"


@dataclass(frozen=True, slots=True)
class Cards:
    """Five cards as written ("K♠", "10♥"): the three that make the bull (or the left
    hand), ringed in gold, apart from the other two; ``bull`` is empty when no three
    cards do and ``rest`` holds all five as dealt."""

    bull: tuple[str, ...]
    rest: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        """The cards in the order they are shown."""
        return self.bull + self.rest


@dataclass(frozen=True, slots=True)
class Envelope:
    """A red envelope and the amount it held, as shown ("RM 3.42")."""

    amount: str


@dataclass(frozen=True, slots=True)
class Seat:
    """One participant's line: ``name`` (plain text), what they were dealt, the hand's
    name (``kind``), a detail such as the stake and multiplier, the result and the net."""

    name: str
    hand: Cards | Envelope
    kind: str
    detail: str
    result: str
    net: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class ResultsPicture:
    """A round's results: a title, the dealer's line (under ``dealer_label``), every
    player's line in bet order and a few footer lines (totals, how to verify)."""

    title: str
    dealer_label: str
    dealer: Seat
    players: tuple[Seat, ...]
    footer: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DealerReveal:
    """The dealer's cards landing face down and turning over one by one: a caption line
    above them and the cards in the order they turn."""

    caption: str
    cards: Cards
