"""Niu-Niu Poker 2.9: five cards from a 6-deck shoe, player against dealer (seeds 002, 004).

Card values: A = 1, 2-9 their number, 10 J Q K = 10. A hand is divided into a *left* hand
of three cards, whose values should add up to a multiple of 10, and a *right* hand of the
other two, worth the last digit of their sum. The bot divides every hand the best way. The
patterns ("kinds"), highest first:

* **Ultimate Niu-Niu** (至尊牛牛): all five cards are J, Q or K.
* **Niu-Niu** (牛牛): left and right both add up to multiples of 10.
* **Big Point** (大点): left a multiple of 10, right worth 7, 8 or 9.
* **Small Point** (小点): left a multiple of 10, right worth 1-6.
* **High Card** (高牌): no three cards add up to a multiple of 10.

Every left multiple of 10 of a hand leaves the same right points (the five cards' total
minus a multiple of 10), so the best division only chooses which three cards go left: the
first three, in dealt order, that make one (an Ultimate Niu-Niu is divided the same way).

Comparing (``docs/rules.md`` §7): the kinds first, then the right hand's points (9 high).
In the original rules (``poker29``) a tie is then broken card by card: each hand sorted
high to low by rank (K > Q > J > 10 > ... > A) and then suit (spades > hearts > diamonds >
clubs), the first card that differs decides; identical hands (possible with six decks) push. In the
Vietnamese rules (``poker29_vn``) equal kind and points push at once.

A player who wins is paid by their own kind (Ultimate 5x, Niu-Niu 3x, Big Point 2x, Small
Point and High Card 1x); a player who loses loses the stake (1x), or, at a table that sets
``loss_pays dealer``, pays by the dealer's kind as in Bull Bull; a push returns it.

The shoe: six decks (312 cards) shuffled by a seed (``bot.rules.cards``) and dealt from
across rounds, five cards to each hand round-robin (bettors in bet order, the dealer
last). It is reshuffled (a new seed) before a round once more than half of it has been
dealt, so a round always has at least 156 cards: enough for 30 bettors and the dealer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.rules import cards as cards_module
from bot.rules._fivecard import (
    CardRuleset,
    FiveCardHand,
    RankClasses,
    card_keys,
    decide_kind_or_points,
    decide_push,
    new,
    rank_key,
    slot_setters,
    suit_names,
)
from bot.rules.cards import HAND_SIZE, Card, bull_positions
from bot.rules.hand_view import DecidingRule, Decision

#: Decks in the shoe.
SHOE_DECKS = 6
SHOE_SIZE = SHOE_DECKS * cards_module.DECK_SIZE
#: The shoe is reshuffled before a round once more than this many of its cards were dealt.
RESHUFFLE_AFTER = SHOE_SIZE // 2
#: Bettors a round takes at most: with the dealer, 31 hands x 5 = 155 <= 156 cards.
MAX_BETTORS = (SHOE_SIZE - RESHUFFLE_AFTER) // HAND_SIZE - 1


class HandKind(StrEnum):
    """The patterns, highest first. Values are stable identifiers stored in the database."""

    ULTIMATE = "ultimate"
    NIUNIU = "niuniu"
    BIG_POINT = "big_point"
    SMALL_POINT = "small_point"
    HIGH_CARD = "high_card"

    @property
    def rank(self) -> int:
        """Higher is stronger: Ultimate 4, Niu-Niu 3, Big Point 2, Small Point 1, High Card 0."""
        return _KIND_RANK[self]

    @property
    def english(self) -> str:
        """The pattern's English name, as in the rules: "Ultimate Niu-Niu" ..."""
        return _ENGLISH[self]

    @property
    def chinese(self) -> str:
        """The pattern's Chinese name: 至尊牛牛, 牛牛, 大点, 小点, 高牌."""
        return _CHINESE[self]

    @property
    def multiplier(self) -> int:
        """What a player who wins with this pattern is paid, per unit staked."""
        return _MULTIPLIER[self]


_KIND_RANK = {
    HandKind.ULTIMATE: 4,
    HandKind.NIUNIU: 3,
    HandKind.BIG_POINT: 2,
    HandKind.SMALL_POINT: 1,
    HandKind.HIGH_CARD: 0,
}
_ENGLISH = {
    HandKind.ULTIMATE: "Ultimate Niu-Niu",
    HandKind.NIUNIU: "Niu-Niu",
    HandKind.BIG_POINT: "Big Point",
    HandKind.SMALL_POINT: "Small Point",
    HandKind.HIGH_CARD: "High Card",
}
_CHINESE = {
    HandKind.ULTIMATE: "至尊牛牛",
    HandKind.NIUNIU: "牛牛",
    HandKind.BIG_POINT: "大点",
    HandKind.SMALL_POINT: "小点",
    HandKind.HIGH_CARD: "高牌",
}
_MULTIPLIER = {
    HandKind.ULTIMATE: 5,
    HandKind.NIUNIU: 3,
    HandKind.BIG_POINT: 2,
    HandKind.SMALL_POINT: 1,
    HandKind.HIGH_CARD: 1,
}
#: A loser pays the stake once (unless the table makes the dealer's pattern price a loss).
LOSS_MULTIPLIER = 1
#: The largest pattern multiplier: the most a loss costs when the dealer's pattern prices it.
LARGEST_MULTIPLIER = max(_MULTIPLIER.values())
#: Suit order for the card-by-card tie-break: spades > hearts > diamonds > clubs.
SUIT_ORDER = {"S": 3, "H": 2, "D": 1, "C": 0}
_CARD_KEY = card_keys(SUIT_ORDER)


def card_key(card: Card) -> int:
    """A card's tie-break order, greater is higher: rank x 4 + suit (S 3, H 2, D 1, C 0)."""
    return _CARD_KEY[card.code]


@dataclass(frozen=True, slots=True)
class Hand(FiveCardHand):
    """Five cards and the pattern they make.

    ``points`` are the right hand's points for Big and Small Point (1-9), and 0 for
    Ultimate, Niu-Niu and High Card. ``strength`` is ``(kind rank, points)`` followed, with
    the card-by-card tie-break (``poker29``), by the five ``card_key``\\ s high to low.
    """

    cards: tuple[Card, ...]
    kind: HandKind
    points: int
    strength: tuple[int, ...]

    @property
    def multiplier(self) -> int:
        """What a player who wins with this hand is paid, per unit staked."""
        return _MULTIPLIER[self.kind]

    @property
    def division(self) -> tuple[int, int, int] | None:
        """Positions (in ``cards``) of the left hand, or None for High Card."""
        return self._trio

    @property
    def english(self) -> str:
        """The hand's name in English: "Big Point 8", "Niu-Niu" ..."""
        if self.points:
            return f"{self.kind.english} {self.points}"
        return self.kind.english

    @property
    def chinese(self) -> str:
        """The hand's name in Chinese: 大点8, 牛牛 ..."""
        if self.points:
            return f"{self.kind.chinese}{self.points}"
        return self.kind.chinese


def _classify(ranks: Sequence[int]) -> tuple[HandKind, int]:
    """Pattern and points from five ranks."""
    if min(ranks) >= 11:
        return HandKind.ULTIMATE, 0
    values = [min(rank, 10) for rank in ranks]
    if bull_positions(values) is None:
        return HandKind.HIGH_CARD, 0
    points = sum(values) % 10
    if points == 0:
        return HandKind.NIUNIU, 0
    return (HandKind.BIG_POINT if points >= 7 else HandKind.SMALL_POINT), points


def _entry(ranks: Sequence[int]) -> tuple[HandKind, int, int]:
    """What ``evaluate_cards`` needs of a multiset of ranks: pattern, points and kind rank."""
    kind, points = _classify(ranks)
    return kind, points, _KIND_RANK[kind]


_CLASSES = RankClasses(_entry)
_SET_CARDS, _SET_KIND, _SET_POINTS, _SET_STRENGTH = slot_setters(Hand)


def evaluate_cards(cards: Sequence[Card], *, card_tie_break: bool = True) -> Hand:
    """The hand five cards make (in dealt order); ``card_tie_break=False`` for the
    Vietnamese rules (``poker29_vn``), whose ``strength`` is only (kind, points).
    ``ValueError`` unless five cards."""
    kind, points, kind_rank = _CLASSES[rank_key(cards)]
    a, b, c, d, e = cards
    hand: Hand = new(Hand)
    _SET_CARDS(hand, (a, b, c, d, e))
    _SET_KIND(hand, kind)
    _SET_POINTS(hand, points)
    if card_tie_break:
        ordered = sorted(
            (
                _CARD_KEY[a.code],
                _CARD_KEY[b.code],
                _CARD_KEY[c.code],
                _CARD_KEY[d.code],
                _CARD_KEY[e.code],
            ),
            reverse=True,
        )
        _SET_STRENGTH(hand, (kind_rank, points, *ordered))
    else:
        _SET_STRENGTH(hand, (kind_rank, points))
    return hand


def evaluate(outcome: int, *, card_tie_break: bool = True) -> Hand:
    """The hand of a packed outcome (``bot.rules.cards.pack``); ``ValueError`` if invalid."""
    return evaluate_cards(cards_module.unpack(outcome), card_tie_break=card_tie_break)


def compare(a: Hand, b: Hand) -> int:
    """Positive if ``a`` wins, negative if ``b`` wins, 0 for a push: kind, then points,
    then (if both hands were evaluated with it) card by card.

    Raises ``ValueError`` for a hand with the card-by-card tie-break against one without.
    """
    key_a, key_b = a.strength, b.strength
    if len(key_a) != len(key_b):
        raise ValueError("cannot compare a poker29 hand with a poker29_vn hand")
    return (key_a > key_b) - (key_a < key_b)


def decide(a: Hand, b: Hand) -> Decision:
    """Why ``compare(a, b)`` comes out as it does: the patterns, the points, or (with the
    card-by-card tie-break) the first card that differs, each hand sorted high to low;
    else a push. Raises ``ValueError`` as ``compare`` does."""
    verdict = compare(a, b)
    if verdict == 0:
        return decide_push(a, b)
    winner, loser = (a, b) if verdict > 0 else (b, a)
    decided = decide_kind_or_points(verdict, winner, loser)
    if decided is not None:
        return decided
    ranked_winner = sorted(winner.cards, key=card_key, reverse=True)
    ranked_loser = sorted(loser.cards, key=card_key, reverse=True)
    for position, (card_w, card_l) in enumerate(zip(ranked_winner, ranked_loser, strict=True)):
        if card_key(card_w) != card_key(card_l):
            by_suit = card_w.rank == card_l.rank
            return Decision(
                verdict,
                DecidingRule.CARD_BY_CARD,
                str(card_w),
                str(card_l),
                position=position,
                suit_order=suit_names(SUIT_ORDER) if by_suit else (),
            )
    raise AssertionError("hands with the same cards cannot differ")  # pragma: no cover


class Poker29Ruleset(CardRuleset[Hand]):
    """Niu-Niu Poker 2.9 from a 6-deck shoe: payouts by the player's pattern, losses 1x.

    ``card_tie_break`` True plays ``poker29`` (equal kind and points go card by card); False
    plays ``poker29_vn`` (they push); ``docs/rules.md`` §7. ``loss_by_dealer`` makes a loser
    pay by the dealer's pattern instead (the table setting ``loss_pays dealer``), so a bet
    holds the largest multiplier.
    """

    max_bettors = MAX_BETTORS
    decks = SHOE_DECKS
    shoe_decks = SHOE_DECKS
    reshuffle_after = RESHUFFLE_AFTER

    def __init__(self, name: str, *, card_tie_break: bool, loss_by_dealer: bool = False) -> None:
        self.name = name
        self.card_tie_break = card_tie_break
        self.loss_by_dealer = loss_by_dealer
        self.largest_loss_multiplier = LARGEST_MULTIPLIER if loss_by_dealer else LOSS_MULTIPLIER

    def evaluate(self, outcome: int) -> Hand:
        """The hand of a packed outcome."""
        return evaluate(outcome, card_tie_break=self.card_tie_break)

    def compare(self, a: Hand, b: Hand) -> int:
        """See ``bot.rules.poker29.compare``."""
        return compare(a, b)

    def decide(self, a: Hand, b: Hand) -> Decision:
        """See ``bot.rules.poker29.decide``."""
        return decide(a, b)

    def loss_multiplier(self, dealer_hand: Hand) -> int:
        """A loser loses the stake whatever the dealer holds, or pays by the dealer's
        pattern where ``loss_by_dealer``."""
        return dealer_hand.multiplier if self.loss_by_dealer else LOSS_MULTIPLIER


POKER29 = Poker29Ruleset("poker29", card_tie_break=True)
POKER29_VN = Poker29Ruleset("poker29_vn", card_tie_break=False)
#: The same games where a loser pays by the dealer's pattern (``loss_pays dealer``).
POKER29_LOSS_BY_DEALER = Poker29Ruleset("poker29", card_tie_break=True, loss_by_dealer=True)
POKER29_VN_LOSS_BY_DEALER = Poker29Ruleset("poker29_vn", card_tie_break=False, loss_by_dealer=True)
