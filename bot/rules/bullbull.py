"""Niu Niu (Bull Bull): five cards from a fresh 52-card deck, player against dealer
(``docs/rules.md`` §7).

Card values: A = 1, 2-9 their number, 10 J Q K = 10. A *bull* is three cards whose values
add up to a multiple of 10; the other two give the points, the last digit of their sum
(0 is Niu Niu). The kinds, highest first:

* **Five Small** (五小牛): every card worth under 5 (A-4) and the five add up to 10 or less.
* **Bomb** (炸弹): four cards of one rank.
* **Five Face** (五花牛): all five are J, Q or K.
* **Niu Niu** (牛牛): a bull, and the other two add up to a multiple of 10.
* **Bull 9 ... Bull 1** (牛九 ... 牛一): a bull; the points are the other two's last digit.
* **No Bull** (没牛): no three cards add up to a multiple of 10.

The first kind that matches is the hand's. Every bull of a hand leaves the same points
(the five cards' total minus a multiple of 10), so the "best bull" only chooses which
three cards to show: the first three, in dealt order, that make one.

Hands of the same kind (and, for bulls, the same points) are decided by the single highest
card: by rank, K high down to A low, then by suit, spades > hearts > clubs > diamonds. A
Bomb is decided by the rank of its four. Two hands dealt from one deck share no card, so
one of them always wins.

A winner is paid stake x their own hand's multiplier, a loser pays stake x the dealer's:
No Bull and Bull 1-6 1x, Bull 7-9 2x, Niu Niu 3x, Five Small, Bomb and Five Face 5x.
"""

from __future__ import annotations

from collections import Counter
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
from bot.rules.cards import Card, bull_positions
from bot.rules.hand_view import DecidingRule, Decision

#: One deck per round, and at most nine bettors: ten hands use 50 of its 52 cards.
DECKS = 1
MAX_BETTORS = 9


class HandKind(StrEnum):
    """The kinds of hand, highest first. Values are stable identifiers stored in the database."""

    FIVE_SMALL = "five_small"
    BOMB = "bomb"
    FIVE_FACE = "five_face"
    NIUNIU = "niuniu"
    BULL = "bull"
    NO_BULL = "no_bull"

    @property
    def rank(self) -> int:
        """Higher is stronger: Five Small 5, Bomb 4, Five Face 3, Niu Niu 2, Bull 1, No Bull 0."""
        return _KIND_RANK[self]

    @property
    def english(self) -> str:
        """The kind's English name (a bull's points are added by ``Hand.english``)."""
        return _ENGLISH[self]

    @property
    def chinese(self) -> str:
        """The kind's Chinese name (a bull's points are added by ``Hand.chinese``)."""
        return _CHINESE[self]


_KIND_RANK = {
    HandKind.FIVE_SMALL: 5,
    HandKind.BOMB: 4,
    HandKind.FIVE_FACE: 3,
    HandKind.NIUNIU: 2,
    HandKind.BULL: 1,
    HandKind.NO_BULL: 0,
}
_ENGLISH = {
    HandKind.FIVE_SMALL: "Five Small",
    HandKind.BOMB: "Bomb",
    HandKind.FIVE_FACE: "Five Face Cards",
    HandKind.NIUNIU: "Niu Niu",
    HandKind.BULL: "Bull",
    HandKind.NO_BULL: "No Bull",
}
_CHINESE = {
    HandKind.FIVE_SMALL: "五小牛",
    HandKind.BOMB: "炸弹",
    HandKind.FIVE_FACE: "五花牛",
    HandKind.NIUNIU: "牛牛",
    HandKind.BULL: "有牛",
    HandKind.NO_BULL: "没牛",
}
_CHINESE_DIGITS = "零一二三四五六七八九"

#: Multipliers of the kinds other than Bull; a bull pays 2x at 7-9 points, else 1x.
KIND_MULTIPLIERS = {
    HandKind.FIVE_SMALL: 5,
    HandKind.BOMB: 5,
    HandKind.FIVE_FACE: 5,
    HandKind.NIUNIU: 3,
    HandKind.NO_BULL: 1,
}
#: The largest multiplier of any hand: the most a stake can lose, per unit.
LARGEST_MULTIPLIER = 5
#: Suit order for ties: spades > hearts > clubs > diamonds (higher is stronger).
SUIT_ORDER = {"S": 3, "H": 2, "C": 1, "D": 0}
_CARD_KEY = card_keys(SUIT_ORDER)


def card_key(card: Card) -> int:
    """A card's tie-break order, greater is higher: rank x 4 + suit (S 3, H 2, C 1, D 0)."""
    return _CARD_KEY[card.code]


@dataclass(frozen=True, slots=True)
class Hand(FiveCardHand):
    """Five cards and what they make.

    ``points`` are a bull's points 1-9, and 0 for every other kind (Niu Niu, No Bull, Five
    Small, Bomb, Five Face). ``strength`` is ``(kind rank, points, card)`` where ``card`` is
    ``card_key`` of the hand's highest card, or for a Bomb the rank of its four x 4.
    """

    cards: tuple[Card, ...]
    kind: HandKind
    points: int
    strength: tuple[int, int, int]

    @property
    def multiplier(self) -> int:
        """What this hand pays when it wins (and what a loser to it pays), per unit staked."""
        if self.kind is HandKind.BULL:
            return 2 if self.points >= 7 else 1
        return KIND_MULTIPLIERS[self.kind]

    @property
    def bull(self) -> tuple[int, int, int] | None:
        """Positions (in ``cards``) of the three bull cards, or None when there is no bull.

        Shown whatever the kind: a Bomb or Five Face hand may hold a bull too.
        """
        return self._trio

    @property
    def english(self) -> str:
        """The hand's name in English: "Bull 3", "Niu Niu", "Bomb" ..."""
        if self.kind is HandKind.BULL:
            return f"Bull {self.points}"
        return self.kind.english

    @property
    def chinese(self) -> str:
        """The hand's name in Chinese: 牛三, 牛牛, 炸弹 ..."""
        if self.kind is HandKind.BULL:
            return "牛" + _CHINESE_DIGITS[self.points]
        return self.kind.chinese


def _classify(ranks: Sequence[int]) -> tuple[HandKind, int, int]:
    """Kind, points and (for a Bomb, else 0) the rank of the four, from five ranks."""
    values = [min(rank, 10) for rank in ranks]
    counts = {rank: ranks.count(rank) for rank in ranks}
    if max(values) < 5 and sum(values) <= 10:
        return HandKind.FIVE_SMALL, 0, 0
    fours = [rank for rank, count in counts.items() if count >= 4]
    if fours:
        return HandKind.BOMB, 0, fours[0]
    if min(ranks) >= 11:
        return HandKind.FIVE_FACE, 0, 0
    if bull_positions(values) is None:
        return HandKind.NO_BULL, 0, 0
    points = sum(values) % 10
    if points == 0:
        return HandKind.NIUNIU, 0, 0
    return HandKind.BULL, points, 0


def _entry(ranks: Sequence[int]) -> tuple[HandKind, int, int, int]:
    """What ``evaluate_cards`` needs of a multiset of ranks: kind, points, kind rank and
    the last part of a Bomb's strength (0 for the other kinds)."""
    kind, points, four = _classify(ranks)
    return kind, points, _KIND_RANK[kind], four * 4


_CLASSES = RankClasses(_entry)
_SET_CARDS, _SET_KIND, _SET_POINTS, _SET_STRENGTH = slot_setters(Hand)


def evaluate_cards(cards: Sequence[Card]) -> Hand:
    """The hand five cards make (in dealt order). Raises ``ValueError`` unless five cards."""
    kind, points, kind_rank, four = _CLASSES[rank_key(cards)]
    a, b, c, d, e = cards
    top = four or max(
        _CARD_KEY[a.code],
        _CARD_KEY[b.code],
        _CARD_KEY[c.code],
        _CARD_KEY[d.code],
        _CARD_KEY[e.code],
    )
    hand: Hand = new(Hand)
    _SET_CARDS(hand, (a, b, c, d, e))
    _SET_KIND(hand, kind)
    _SET_POINTS(hand, points)
    _SET_STRENGTH(hand, (kind_rank, points, top))
    return hand


def evaluate(outcome: int) -> Hand:
    """The hand of a packed outcome (``bot.rules.cards.pack``); ``ValueError`` if invalid."""
    return evaluate_cards(cards_module.unpack(outcome))


def compare(a: Hand, b: Hand) -> int:
    """Positive if ``a`` wins, negative if ``b`` wins, 0 if neither (never for two hands
    dealt from one deck): kind, then a bull's points, then the highest card (a Bomb: the
    rank of its four), by rank and then suit (spades > hearts > clubs > diamonds)."""
    key_a, key_b = a.strength, b.strength
    return (key_a > key_b) - (key_a < key_b)


def decide(a: Hand, b: Hand) -> Decision:
    """Why ``compare(a, b)`` comes out as it does: the kinds, a bull's points, the rank of
    two Bombs' fours, or the highest card (by rank, then suit)."""
    verdict = compare(a, b)
    if verdict == 0:
        return decide_push(a, b)
    winner, loser = (a, b) if verdict > 0 else (b, a)
    decided = decide_kind_or_points(verdict, winner, loser)
    if decided is not None:
        return decided
    if winner.kind is HandKind.BOMB:
        return Decision(verdict, DecidingRule.FOUR, _four_of(winner), _four_of(loser))
    top_winner, top_loser = max(winner.cards, key=card_key), max(loser.cards, key=card_key)
    by_suit = top_winner.rank == top_loser.rank
    return Decision(
        verdict,
        DecidingRule.HIGHEST_CARD,
        str(top_winner),
        str(top_loser),
        suit_order=suit_names(SUIT_ORDER) if by_suit else (),
    )


def _four_of(hand: Hand) -> str:
    """The rank (as written) a Bomb holds four of."""
    return Counter(card.rank_name for card in hand.cards).most_common(1)[0][0]


class BullBullRuleset(CardRuleset[Hand]):
    """Niu Niu (Bull Bull), ``docs/rules.md`` §7: a fresh deck each round, payouts
    1x/2x/3x/5x both ways.

    Five cards each, round-robin, bettors in bet order and the dealer last. A winner is
    paid by their own hand's multiplier, a loser pays by the dealer's.
    """

    name = "bullbull"
    largest_loss_multiplier = LARGEST_MULTIPLIER
    max_bettors = MAX_BETTORS
    decks = DECKS
    shoe_decks = 0
    reshuffle_after = 0

    def evaluate(self, outcome: int) -> Hand:
        """The hand of a packed outcome."""
        return evaluate(outcome)

    def compare(self, a: Hand, b: Hand) -> int:
        """See ``bot.rules.bullbull.compare``."""
        return compare(a, b)

    def decide(self, a: Hand, b: Hand) -> Decision:
        """See ``bot.rules.bullbull.decide``."""
        return decide(a, b)

    def loss_multiplier(self, dealer_hand: Hand) -> int:
        """A loser pays by the dealer's multiplier."""
        return dealer_hand.multiplier


BULLBULL = BullBullRuleset()
