"""What a view shows of a hand, and what decides between two hands, whatever the game.

Each ruleset turns its own hands into these (``Ruleset.show``, ``Ruleset.decide``), so
that the chat's views and the command line render every game alike and never ask which
game dealt a hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: Every ``HandView.kind_key`` a ruleset gives.
KIND_KEYS = frozenset({"ordinary", "special", "cards"})


@dataclass(frozen=True, slots=True)
class HandView:
    """What to show of one hand.

    ``kind_key`` says how a table names the hand: a view looks up the message
    ``kind.<kind_key>`` and gives it ``points``, ``english``, ``chinese`` and, as ``name``,
    the hand's name in the table's language. The red-envelope game names an ordinary hand
    by its points alone (``"ordinary"``) and a special kind by both its names
    (``"special"``); the card games name a hand in the table's language (``"cards"``).
    """

    #: The kind's stable identifier (the value stored in the database): "duizi", "bull" ...
    kind: str
    kind_key: str
    #: The hand's name: "Bull 3" / "牛三", "Big Point 8" / "大点8", "Duizi" / "对子" ...
    english: str
    chinese: str
    #: The hand's points (what they mean is the game's).
    points: int
    #: What the hand pays when it wins, per unit staked.
    multiplier: int
    #: The envelope's amount in cents; None for a hand of cards.
    amount_cents: int | None = None
    #: The cards as written ("K♠"), in dealt order; None for an envelope.
    cards: tuple[str, ...] | None = None
    #: The cards as shown: the three that add up to a multiple of 10 (the bull, or the left
    #: hand) and the other two, or all five as dealt when no three do; () for an envelope.
    groups: tuple[tuple[str, ...], ...] = ()


class DecidingRule(StrEnum):
    """The rule that tells two hands apart (or makes them equal), as ``compare`` applies it."""

    #: Different kinds: ``winner`` and ``loser`` are the kinds' English names.
    KIND = "kind"
    #: Two red-envelope Duizi: the pair numbers YZ decide ("88" beats "66").
    PAIR = "pair"
    #: Same kind, different points: ``winner`` and ``loser`` are the points.
    POINTS = "points"
    #: Same red-envelope kind and points: the larger amount wins.
    AMOUNT = "amount"
    #: Same kind and points: the single highest card decides (Bull Bull).
    HIGHEST_CARD = "highest_card"
    #: Two Bombs: the rank of the four decides; ``winner`` and ``loser`` are the ranks.
    FOUR = "four"
    #: Same kind and points: the cards, each hand sorted high to low, compared one by one
    #: (Niu-Niu Poker); ``position`` is the first that differs (0 = the highest).
    CARD_BY_CARD = "card_by_card"
    #: A tie: the same amount.
    SAME_AMOUNT = "same_amount"
    #: A push: the same kind, points and cards.
    SAME_CARDS = "same_cards"
    #: A push: the same kind and points, and the game does not compare the cards.
    SAME_KIND_AND_POINTS = "same_kind_and_points"


@dataclass(frozen=True, slots=True)
class Decision:
    """Why ``compare(a, b)`` gives ``verdict``: the rule that decided, and what it compared
    of the winner and of the loser (as text: a kind, points, a card, a rank, a pair)."""

    verdict: int
    rule: DecidingRule
    winner: str = ""
    loser: str = ""
    #: For ``CARD_BY_CARD``: which card decided, 0 being each hand's highest.
    position: int = 0
    #: When two cards of the same rank were told apart by suit: the game's suits, highest
    #: first ("spades", "hearts" ...); empty otherwise.
    suit_order: tuple[str, ...] = ()
