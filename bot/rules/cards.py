"""Playing cards for the five-card games: parsing, packing, and the deal from a seed.

Anyone holding a revealed seed can recompute a deal. The algorithm, version 1:

1. **Card codes.** A card's code is ``(rank - 1) x 4 + suit index``, where the rank is
   A = 1, 2-10 = face value, J = 11, Q = 12, K = 13 and the suit index is spades 0,
   hearts 1, diamonds 2, clubs 3. So A♠ is 0, A♥ 1, A♦ 2, A♣ 3, 2♠ 4 ... K♣ 51.
2. **Canonical order.** ``decks`` decks laid out one after another, each by code: position
   ``p`` (0-based) of the unshuffled cards holds the card with code ``p mod 52``.
3. **Random stream.** Block ``i`` (i = 0, 1, 2, ...) is
   ``HMAC-SHA256(key=seed, msg=b"niuniu/cards/v1" + i as 8 bytes big-endian)``; the stream
   is the concatenation of the blocks.
4. **Unbiased integers.** ``below(n)`` for n >= 1 takes ``ceil(bits(n-1) / 8)`` bytes from
   the stream as a big-endian integer, keeps its low ``bits(n-1)`` bits and retries while
   the result is >= n (rejection sampling). ``below(1)`` is 0 and reads nothing. (This is
   ``bot.rules.split.SeedStream`` with the domain ``b"niuniu/cards/v1"``.)
5. **Shuffle.** A Fisher-Yates shuffle of the ``n = 52 x decks`` cards: ``for i from n-1
   down to 1: j = below(i+1); swap the cards at positions i and j``.
6. **Deal.** ``count`` hands get five cards each, one card at a time, round-robin: hand 0,
   hand 1, ... hand count-1, then hand 0 again, taken from the shuffled order starting at
   position ``offset`` (the cards of a shoe dealt before). Card ``k`` (0-4) of hand ``h``
   is the shuffled card at position ``offset + k x count + h``.
7. **Outcome.** The round engine stores a hand as one int, ``pack(cards)``: the sum of
   ``code_k << (6 x k)`` for the hand's cards k = 0..4 in dealt order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from itertools import combinations

from bot.rules.split import SeedStream

DOMAIN = b"niuniu/cards/v1"
#: Cards in one deck, and in one hand.
DECK_SIZE = 52
HAND_SIZE = 5
_CODE_BITS = 6
_CODE_MASK = (1 << _CODE_BITS) - 1
#: Every packed hand is below this (five 6-bit codes).
OUTCOME_LIMIT = 1 << (_CODE_BITS * HAND_SIZE)


class Suit(StrEnum):
    """The four suits, in code order (spades 0, hearts 1, diamonds 2, clubs 3)."""

    S = "S"
    H = "H"
    D = "D"
    C = "C"

    @property
    def code(self) -> int:
        """The suit's part of a card code: spades 0, hearts 1, diamonds 2, clubs 3."""
        return _SUIT_INDEX[self]

    @property
    def symbol(self) -> str:
        """The suit's symbol: ♠ ♥ ♦ ♣."""
        return _SUIT_SYMBOL[self]

    @property
    def english(self) -> str:
        """The suit's English name: spades, hearts, diamonds, clubs."""
        return _SUIT_ENGLISH[self]


_SUITS = (Suit.S, Suit.H, Suit.D, Suit.C)
_SUIT_INDEX = {suit: index for index, suit in enumerate(_SUITS)}
_SUIT_SYMBOL = {Suit.S: "♠", Suit.H: "♥", Suit.D: "♦", Suit.C: "♣"}
_SUIT_ENGLISH = {Suit.S: "spades", Suit.H: "hearts", Suit.D: "diamonds", Suit.C: "clubs"}
_RANK_NAMES = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


@dataclass(frozen=True, slots=True)
class Card:
    """A playing card: ``rank`` 1-13 (A = 1, J = 11, Q = 12, K = 13) and ``suit``.

    ``code`` (0-51) is ``(rank - 1) x 4 + suit.code``; cards are equal when rank and suit
    are. Cards have no order of their own: each game ranks suits its own way.
    """

    rank: int
    suit: Suit
    code: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rank = self.rank
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= 13:
            raise ValueError(f"a card's rank is 1-13 (A=1, J=11, Q=12, K=13), not {rank!r}")
        try:
            suit = Suit(self.suit)
        except ValueError:
            raise ValueError(f"a card's suit is one of S H D C, not {self.suit!r}") from None
        object.__setattr__(self, "suit", suit)
        object.__setattr__(self, "code", (rank - 1) * 4 + _SUIT_INDEX[suit])

    @staticmethod
    def from_code(code: int) -> Card:
        """The card with code ``code`` (0-51); ``ValueError`` for anything else."""
        if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < DECK_SIZE:
            raise ValueError(f"a card code is 0-51, not {code!r}")
        return CARDS[code]

    @property
    def rank_name(self) -> str:
        """The rank as written on the card: A, 2-10, J, Q or K."""
        return _RANK_NAMES[self.rank]

    def __str__(self) -> str:
        return f"{_RANK_NAMES[self.rank]}{_SUIT_SYMBOL[self.suit]}"


#: The 52 cards of a deck, indexed by code.
CARDS: tuple[Card, ...] = tuple(Card(code // 4 + 1, _SUITS[code % 4]) for code in range(DECK_SIZE))

_RANK_TOKENS = {name: rank for rank, name in enumerate(_RANK_NAMES) if name}
_SUIT_TOKENS = {"S": Suit.S, "H": Suit.H, "D": Suit.D, "C": Suit.C}
_SUIT_TOKENS.update({symbol: suit for suit, symbol in _SUIT_SYMBOL.items()})
_TOKEN = re.compile(r"(A|[2-9]|10|J|Q|K)([SHDC♠♥♦♣])\uFE0F?", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s,]+")


def parse_card(token: str) -> Card:
    """One card from text such as ``"KS"``, ``"10d"`` or ``"A♠"``.

    The rank is A, 2-10, J, Q or K and the suit S, H, D, C or a symbol ♠ ♥ ♦ ♣ (letters in
    either case). Raises ``ValueError`` naming the token for anything else.
    """
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise ValueError(
            f"not a card: {token!r} (write a rank A 2-10 J Q K, then a suit S H D C or ♠♥♦♣)"
        )
    rank, suit = match.groups()
    return CARDS[(_RANK_TOKENS[rank.upper()] - 1) * 4 + _SUIT_INDEX[_SUIT_TOKENS[suit.upper()]]]


def parse_cards(text: str) -> tuple[Card, ...]:
    """Cards from text separated by spaces or commas: ``"KS QH 10D 7C A♠"``.

    Raises ``ValueError`` naming the first token that is not a card.
    """
    return tuple(parse_card(token) for token in _SEPARATORS.split(text.strip()) if token)


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as text, separated by spaces: ``"K♠ Q♥ 3♦"``."""
    return " ".join(str(card) for card in cards)


def pack(cards: Sequence[Card]) -> int:
    """Five cards as one int (an *outcome*): ``sum(code_k << (6 x k))`` in the given order.

    Raises ``ValueError`` unless given exactly five cards.
    """
    if len(cards) != HAND_SIZE:
        raise ValueError(f"a hand is {HAND_SIZE} cards, not {len(cards)}")
    outcome = 0
    for k, card in enumerate(cards):
        if not isinstance(card, Card):
            raise ValueError(f"not a card: {card!r}")
        outcome |= card.code << (_CODE_BITS * k)
    return outcome


def unpack(outcome: int) -> tuple[Card, ...]:
    """The five cards of a packed hand, in dealt order (the inverse of ``pack``).

    Raises ``ValueError`` for anything that is not an int whose five 6-bit fields are all
    card codes (0-51).
    """
    if isinstance(outcome, bool) or not isinstance(outcome, int):
        raise ValueError(f"a packed hand is an int, not {outcome!r}")
    if not 0 <= outcome < OUTCOME_LIMIT:
        raise ValueError(f"{outcome} is not a packed hand of five cards")
    codes = (
        outcome & _CODE_MASK,
        outcome >> 6 & _CODE_MASK,
        outcome >> 12 & _CODE_MASK,
        outcome >> 18 & _CODE_MASK,
        outcome >> 24,
    )
    if max(codes) >= DECK_SIZE:
        raise ValueError(f"{outcome} is not a packed hand: a card code above 51")
    return (CARDS[codes[0]], CARDS[codes[1]], CARDS[codes[2]], CARDS[codes[3]], CARDS[codes[4]])


@lru_cache(maxsize=64)
def _shuffled_codes(seed: bytes, decks: int) -> tuple[int, ...]:
    # A shoe is dealt from over many rounds: shuffling it once per seed is enough.
    codes = [position % DECK_SIZE for position in range(DECK_SIZE * decks)]
    stream = SeedStream(seed, domain=DOMAIN)
    for i in range(len(codes) - 1, 0, -1):
        j = stream.below(i + 1)
        codes[i], codes[j] = codes[j], codes[i]
    return tuple(codes)


def shuffled(seed: bytes, decks: int) -> list[Card]:
    """The ``decks`` decks shuffled by ``seed`` (steps 1-5 of the module docstring).

    The same seed always gives the same order. Raises ``ValueError`` for an empty seed or
    fewer than one deck.
    """
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"a shuffle needs at least one deck, not {decks!r}")
    if not seed:
        raise ValueError("a seed must not be empty")
    return [CARDS[code] for code in _shuffled_codes(bytes(seed), decks)]


def deal_hands(
    seed: bytes, decks: int, count: int, offset: int = 0
) -> tuple[tuple[Card, ...], ...]:
    """Five cards to each of ``count`` hands, round-robin, from the shuffled ``decks``
    starting at position ``offset`` (step 6 of the module docstring).

    Raises ``ValueError`` when ``count < 1``, ``offset < 0`` or the cards run out.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"a deal needs at least one hand, not {count!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"the offset is a number of cards already dealt, not {offset!r}")
    cards = shuffled(seed, decks)
    needed = HAND_SIZE * count
    if offset + needed > len(cards):
        left = max(0, len(cards) - offset)
        raise ValueError(f"{count} hands need {needed} cards; only {left} of {len(cards)} left")
    return tuple(
        tuple(cards[offset + k * count + hand] for k in range(HAND_SIZE)) for hand in range(count)
    )


def deal_packed(seed: bytes, decks: int, count: int, offset: int = 0) -> tuple[int, ...]:
    """``deal_hands`` with each hand packed into an outcome (``pack``)."""
    return tuple(pack(hand) for hand in deal_hands(seed, decks, count, offset))


# --- Niu Niu values, common to the five-card games -----------------------------------------


def card_value(card: Card) -> int:
    """A card's Niu Niu value: A = 1, 2-9 their number, 10 J Q K = 10."""
    return min(card.rank, 10)


def bull_positions(values: Sequence[int]) -> tuple[int, int, int] | None:
    """The positions of the first three values adding up to a multiple of 10, trying the
    positions in ``itertools.combinations`` order ((0, 1, 2), (0, 1, 3) ... (2, 3, 4)), or
    None when no three do.

    Every such three of five values leaves the same points (the total minus a multiple of
    10), so the first is as good as any.
    """
    for trio in combinations(range(len(values)), 3):
        if (values[trio[0]] + values[trio[1]] + values[trio[2]]) % 10 == 0:
            return trio[0], trio[1], trio[2]
    return None
