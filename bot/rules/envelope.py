"""Hands of the red-envelope game (68 NiuNiu): an envelope amount becomes a hand.

An amount of 0.01-9.99 is read as three digits X.YZ (X may be 0). The digits give the
points and, for some patterns, a special kind that outranks every ordinary hand. All
amounts are integer cents (1..999).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from bot.rules.hand_view import DecidingRule, Decision, HandView

MIN_AMOUNT = 1
MAX_AMOUNT = 999


class HandKind(StrEnum):
    """The kinds of hand, highest first. Values are stable identifiers stored in the database."""

    BAOZI = "baozi"
    MANNIU = "manniu"
    FANSHUN = "fanshun"
    SHUNZI = "shunzi"
    DUIZI = "duizi"
    JINNIU = "jinniu"
    ORDINARY = "ordinary"

    @property
    def rank(self) -> int:
        """Higher is stronger: Baozi 6 ... Jinniu 1, ordinary 0."""
        return _RANK[self]

    @property
    def chinese(self) -> str:
        """The kind's name as players write it (豹子, 满牛, ...)."""
        return _CHINESE[self]

    @property
    def english(self) -> str:
        """The kind's romanised name for English text."""
        return "Ordinary" if self is HandKind.ORDINARY else self.value.capitalize()


_RANK = {
    HandKind.BAOZI: 6,
    HandKind.MANNIU: 5,
    HandKind.FANSHUN: 4,
    HandKind.SHUNZI: 3,
    HandKind.DUIZI: 2,
    HandKind.JINNIU: 1,
    HandKind.ORDINARY: 0,
}
_CHINESE = {
    HandKind.BAOZI: "豹子",
    HandKind.MANNIU: "满牛",
    HandKind.FANSHUN: "反顺",
    HandKind.SHUNZI: "顺子",
    HandKind.DUIZI: "对子",
    HandKind.JINNIU: "金牛",
    HandKind.ORDINARY: "点数",
}
#: Multipliers of the special kinds; an ordinary hand's multiplier is its points.
SPECIAL_MULTIPLIERS = {
    HandKind.BAOZI: 18,
    HandKind.MANNIU: 15,
    HandKind.FANSHUN: 14,
    HandKind.SHUNZI: 13,
    HandKind.DUIZI: 12,
    HandKind.JINNIU: 11,
}
#: The largest multiplier any hand can have (Baozi): the most a stake can lose, per unit.
LARGEST_MULTIPLIER = max(SPECIAL_MULTIPLIERS.values())


@dataclass(frozen=True, slots=True)
class Hand:
    """One envelope's hand: its amount (cents), kind, points (1-10) and multiplier."""

    amount: int
    kind: HandKind
    points: int
    multiplier: int
    #: A key that orders hands exactly as ``compare`` does (greater is stronger): kind
    #: first; two Duizi then by their pair number YZ; then points; then amount. Different
    #: amounts always give different keys, so only equal amounts tie. (A field, not a
    #: property: settling a round reads it for every stake, several times.)
    strength: tuple[int, int, int, int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        pair = self.amount % 100 if self.kind is HandKind.DUIZI else 0
        object.__setattr__(self, "strength", (self.kind.rank, pair, self.points, self.amount))

    @property
    def is_niuniu(self) -> bool:
        """True when the points are 10 (the digit sum ends in 0)."""
        return self.points == 10


def points_of(amount: int) -> int:
    """Points of an amount: the ones digit of its digit sum, where 0 counts as 10 (Niu Niu)."""
    x, y, z = amount // 100, amount // 10 % 10, amount % 10
    return (x + y + z) % 10 or 10


def kind_of(amount: int) -> HandKind:
    """The kind of an amount: the first special pattern that matches, highest first."""
    x, y, z = amount // 100, amount // 10 % 10, amount % 10
    if x == y == z:
        return HandKind.BAOZI
    if y == 0 and z == 0:
        return HandKind.MANNIU
    if y == x - 1 and z == x - 2:
        return HandKind.FANSHUN
    if y == x + 1 and z == x + 2:
        return HandKind.SHUNZI
    if y == z:
        return HandKind.DUIZI
    if x == 0 and z == 0:
        return HandKind.JINNIU
    return HandKind.ORDINARY


def evaluate(amount: int) -> Hand:
    """The hand of an envelope of ``amount`` cents (1..999, i.e. 0.01-9.99).

    Raises ``ValueError`` for any other amount (including non-integers).
    """
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise ValueError(f"an envelope amount is an int number of cents, not {amount!r}")
    if not MIN_AMOUNT <= amount <= MAX_AMOUNT:
        raise ValueError(f"an envelope holds 0.01-9.99 (1-999 cents), not {amount} cents")
    return _HANDS[amount]


def _build(amount: int) -> Hand:
    kind = kind_of(amount)
    points = points_of(amount)
    multiplier = SPECIAL_MULTIPLIERS.get(kind, points)
    return Hand(amount=amount, kind=kind, points=points, multiplier=multiplier)


# There are only 999 hands; building them once makes ``evaluate`` a lookup.
_HANDS: dict[int, Hand] = {amount: _build(amount) for amount in range(MIN_AMOUNT, MAX_AMOUNT + 1)}


def compare(a: Hand, b: Hand) -> int:
    """Compare two hands: positive if ``a`` wins, negative if ``b`` wins, 0 for a tie.

    Kind first (Baozi > Manniu > Fanshun > Shunzi > Duizi > Jinniu > ordinary); within a
    kind, points (10 highest) and then the larger amount; two Duizi compare their pair
    number YZ before points. Only equal amounts tie.
    """
    key_a, key_b = a.strength, b.strength
    return (key_a > key_b) - (key_a < key_b)


def decide(a: Hand, b: Hand) -> Decision:
    """Why ``compare(a, b)`` comes out as it does: the kinds, two Duizi's pair numbers, the
    points, or the amounts (only equal amounts tie)."""
    verdict = compare(a, b)
    if verdict == 0:
        return Decision(0, DecidingRule.SAME_AMOUNT)
    winner, loser = (a, b) if verdict > 0 else (b, a)
    if winner.kind is not loser.kind:
        return Decision(verdict, DecidingRule.KIND, winner.kind.english, loser.kind.english)
    if winner.kind is HandKind.DUIZI and winner.amount % 100 != loser.amount % 100:
        pairs = f"{winner.amount % 100:02d}", f"{loser.amount % 100:02d}"
        return Decision(verdict, DecidingRule.PAIR, *pairs)
    if winner.points != loser.points:
        return Decision(verdict, DecidingRule.POINTS, str(winner.points), str(loser.points))
    return Decision(verdict, DecidingRule.AMOUNT)


def show(hand: Hand) -> HandView:
    """What a view shows of an envelope's hand: its amount, and an ordinary hand named by
    its points, a special kind by its English and Chinese names."""
    kind = hand.kind
    return HandView(
        kind=kind.value,
        kind_key="ordinary" if kind is HandKind.ORDINARY else "special",
        english=kind.english,
        chinese=kind.chinese,
        points=hand.points,
        multiplier=hand.multiplier,
        amount_cents=hand.amount,
    )
