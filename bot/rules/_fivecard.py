"""What the five-card games (``bot.rules.bullbull``, ``bot.rules.poker29``) share.

A hand's fields and its three cards that add up to a multiple of 10, the look-up of what
a game makes of a hand's ranks, each card's tie-break order from a suit order, the fast
construction of hands, what a view shows of a hand and the first steps of explaining a
comparison, and the parts of a ruleset that are the same for every card game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any, Generic, Protocol, TypeVar

from bot.rules import cards as cards_module
from bot.rules.cards import HAND_SIZE, Card, Suit, bull_positions, card_value
from bot.rules.hand_view import DecidingRule, Decision, HandView

EntryT = TypeVar("EntryT")


class FiveCardHand:
    """What the games' ``Hand`` dataclasses share: a hand of five ``cards`` (in dealt
    order) divided into the three cards that add up to a multiple of 10 and the rest."""

    __slots__ = ()
    cards: tuple[Card, ...]

    @property
    def _trio(self) -> tuple[int, int, int] | None:
        # The positions of the first three cards whose values add up to a multiple of 10
        # (the bull, or the left hand): every such three leaves the same points.
        return bull_positions([card_value(card) for card in self.cards])

    @property
    def left(self) -> tuple[Card, ...]:
        """The three cards adding up to a multiple of 10 (the bull, or the left hand), in
        dealt order; empty when no three do."""
        trio = self._trio
        return () if trio is None else tuple(self.cards[i] for i in trio)

    @property
    def right(self) -> tuple[Card, ...]:
        """The other cards in dealt order: two, or all five when no three add up to a
        multiple of 10."""
        trio = self._trio or ()
        return tuple(card for i, card in enumerate(self.cards) if i not in trio)


# A frozen dataclass's __init__ sets each field through object.__setattr__, which is most
# of the time evaluating a hand takes. The games build a hand with ``new(Hand)`` and the
# ``slot_setters`` of its fields instead, which set the same slots directly.
new = object.__new__


def slot_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """The setters of the slots of a frozen ``slots=True`` dataclass's fields, in order."""
    return tuple(cls.__dict__[field.name].__set__ for field in fields(cls))


def card_keys(suit_order: Mapping[str, int]) -> tuple[int, ...]:
    """Each card's tie-break order, by code, greater is higher: rank x 4 + its suit's
    ``suit_order`` (0-3)."""
    return tuple(card.rank * 4 + suit_order[card.suit] for card in cards_module.CARDS)


# What a hand is depends only on its multiset of ranks. A multiset is keyed by the sum of
# 1 << (3 x (rank - 1)) over its cards (3 bits count up to 7 of a rank), so the key of five
# cards is five table look-ups added up, whatever their order.
_RANK_BIT = tuple(1 << (3 * (card.rank - 1)) for card in cards_module.CARDS)


class RankClasses(dict[int, EntryT]):
    """What a game makes of each multiset of five ranks (at most 6,188), by ``rank_key``,
    each classified by ``classify`` (given the ranks, low to high) when first looked up."""

    def __init__(self, classify: Callable[[tuple[int, ...]], EntryT]) -> None:
        super().__init__()
        self._classify = classify

    def __missing__(self, key: int) -> EntryT:
        ranks = tuple(rank for rank in range(1, 14) for _ in range(key >> 3 * (rank - 1) & 7))
        entry = self[key] = self._classify(ranks)
        return entry


def rank_key(cards: Sequence[Card]) -> int:
    """The key of the multiset of five cards' ranks, to look up in a ``RankClasses``.
    Raises ``ValueError`` unless given five cards."""
    try:
        a, b, c, d, e = cards
        return (
            _RANK_BIT[a.code] + _RANK_BIT[b.code] + _RANK_BIT[c.code] + _RANK_BIT[d.code]
        ) + _RANK_BIT[e.code]
    except (ValueError, TypeError, AttributeError):
        raise ValueError(f"a hand is {HAND_SIZE} cards, not {cards!r}") from None


def suit_names(suit_order: Mapping[str, int]) -> tuple[str, ...]:
    """The suits of a ``suit_order`` by English name, highest first."""
    highest_first = sorted(suit_order, key=suit_order.__getitem__, reverse=True)
    return tuple(Suit(suit).english for suit in highest_first)


class _NamedKind(Protocol):
    @property
    def value(self) -> str: ...

    @property
    def english(self) -> str: ...


class CardHand(Protocol):
    """What every card game's hand offers its ruleset's ``show`` and ``decide``."""

    @property
    def cards(self) -> tuple[Card, ...]: ...

    @property
    def left(self) -> tuple[Card, ...]: ...

    @property
    def right(self) -> tuple[Card, ...]: ...

    @property
    def kind(self) -> _NamedKind: ...

    @property
    def points(self) -> int: ...

    @property
    def multiplier(self) -> int: ...

    @property
    def english(self) -> str: ...

    @property
    def chinese(self) -> str: ...


HandT = TypeVar("HandT", bound=CardHand)


def show(hand: CardHand) -> HandView:
    """What a view shows of a card hand: its name in the table's language, its cards."""
    cards = tuple(str(card) for card in hand.cards)
    left = hand.left
    groups = (
        (tuple(str(card) for card in left), tuple(str(card) for card in hand.right))
        if left
        else (cards,)
    )
    return HandView(
        kind=hand.kind.value,
        kind_key="cards",
        english=hand.english,
        chinese=hand.chinese,
        points=hand.points,
        multiplier=hand.multiplier,
        cards=cards,
        groups=groups,
    )


def decide_push(a: CardHand, b: CardHand) -> Decision:
    """Why two hands that ``compare`` finds equal push: the same cards, or (for a game
    that does not compare them) the same kind and points."""
    same = sorted(card.code for card in a.cards) == sorted(card.code for card in b.cards)
    return Decision(0, DecidingRule.SAME_CARDS if same else DecidingRule.SAME_KIND_AND_POINTS)


def decide_kind_or_points(verdict: int, winner: CardHand, loser: CardHand) -> Decision | None:
    """The decision when the kinds or the points differ (every card game compares them
    first), else None: the cards decide."""
    if winner.kind is not loser.kind:
        return Decision(verdict, DecidingRule.KIND, winner.kind.english, loser.kind.english)
    if winner.points != loser.points:
        return Decision(verdict, DecidingRule.POINTS, str(winner.points), str(loser.points))
    return None


class CardRuleset(Generic[HandT]):
    """What every card game's ruleset does alike: deal packed hands from ``decks`` decks
    shuffled by the seed, pay a winner by their own hand, and neither re-deal nor spare."""

    uses_grabs = False
    #: Decks each seed shuffles: one for a round's deck, more for a shoe.
    decks: int

    def deal(self, seed: bytes, count: int, *, mean_share: int, offset: int = 0) -> tuple[int, ...]:
        """The packed hands of ``count`` participants from the ``decks`` decks shuffled by
        ``seed`` (``bot.rules.cards``), after the ``offset`` cards dealt before;
        ``mean_share`` is unused. ``ValueError`` when the cards run out."""
        return cards_module.deal_packed(seed, self.decks, count, offset)

    def show(self, hand: HandT) -> HandView:
        """See ``show``."""
        return show(hand)

    def win_multiplier(self, hand: HandT) -> int:
        """A winner is paid by their own hand's multiplier."""
        return hand.multiplier

    def is_redeal(self, dealer: HandT) -> bool:
        """No hand re-deals a round."""
        return False

    def is_immune(self, player: HandT) -> bool:
        """No hand is immune."""
        return False
