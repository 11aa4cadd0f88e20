"""What the five-card games (``bot.rules.bullbull``, ``bot.rules.poker29``) share.

A hand's fields and its three cards that add up to a multiple of 10, the look-up of what
a game makes of a hand's ranks, each card's tie-break order from a suit order, the fast
construction of hands, and the parts of a ruleset that are the same for every card game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any, Generic, Protocol, TypeVar

from bot.rules import cards as cards_module
from bot.rules.cards import HAND_SIZE, Card, bull_positions, card_value

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


class _Paying(Protocol):
    @property
    def multiplier(self) -> int: ...


HandT = TypeVar("HandT", bound=_Paying)


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

    def win_multiplier(self, hand: HandT) -> int:
        """A winner is paid by their own hand's multiplier."""
        return hand.multiplier

    def is_redeal(self, dealer: HandT) -> bool:
        """No hand re-deals a round."""
        return False

    def is_immune(self, player: HandT) -> bool:
        """No hand is immune."""
        return False
