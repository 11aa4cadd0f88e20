"""Cards: parsing, packing, and the deal from a seed.

``DocumentedDeal`` below is written from the module docstring of ``bot.rules.cards`` only;
that it reproduces ``shuffled`` and ``deal_hands`` exactly is what lets anyone verify a
deal once the seed is revealed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.rules.cards as cards_module
from bot.rules.cards import (
    CARDS,
    Card,
    Suit,
    bull_positions,
    card_value,
    deal_hands,
    deal_packed,
    format_cards,
    pack,
    parse_cards,
    shuffled,
    unpack,
)

QUICK = settings(max_examples=300, deadline=None, derandomize=True, database=None)

# --- an independent implementation of the documented algorithm ------------------------------


class DocumentedDeal:
    """Version 1 of the deal, as the module docstring describes it."""

    DOMAIN = b"niuniu/cards/v1"
    RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    SUITS = ("S", "H", "D", "C")

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.stream = bytearray()
        self.position = 0
        self.blocks = 0

    def take(self, size: int) -> bytes:
        # Step 3: block i = HMAC-SHA256(key=seed, msg=DOMAIN + i as 8 bytes big-endian).
        while len(self.stream) - self.position < size:
            message = self.DOMAIN + self.blocks.to_bytes(8, "big")
            self.stream += hmac.digest(self.seed, message, "sha256")
            self.blocks += 1
        chunk = bytes(self.stream[self.position : self.position + size])
        self.position += size
        return chunk

    def below(self, n: int) -> int:
        # Step 4: ceil(bits(n-1)/8) bytes, big-endian, low bits(n-1) bits, retry while >= n.
        if n == 1:
            return 0
        bits = len(bin(n - 1)) - 2
        while True:
            candidate = int.from_bytes(self.take(-(-bits // 8)), "big") % (1 << bits)
            if candidate < n:
                return candidate

    def shuffle(self, decks: int) -> list[str]:
        # Steps 1-2: position p holds code p mod 52; code = (rank-1)*4 + suit (S H D C).
        order = []
        for p in range(52 * decks):
            code = p % 52
            order.append(self.RANKS[code // 4] + self.SUITS[code % 4])
        # Step 5: for i from n-1 down to 1, swap i with below(i+1).
        for i in reversed(range(1, len(order))):
            j = self.below(i + 1)
            order[i], order[j] = order[j], order[i]
        return order

    def deal(self, decks: int, count: int, offset: int) -> list[list[str]]:
        # Step 6: card k of hand h is at offset + k * count + h.
        order = self.shuffle(decks)
        return [[order[offset + k * count + h] for k in range(5)] for h in range(count)]


def text(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [f"{card.rank_name}{card.suit}" for card in cards]


def test_the_docstring_documents_this_algorithm() -> None:
    doc = cards_module.__doc__ or ""
    for phrase in (
        "HMAC-SHA256",
        'b"niuniu/cards/v1"',
        "8 bytes big-endian",
        "Fisher-Yates",
        "(rank - 1) x 4 + suit",
        "offset + k x count + h",
        "code_k << (6 x k)",
    ):
        assert phrase in doc, phrase


@pytest.mark.parametrize("decks", [1, 2, 6])
def test_documented_algorithm_recomputes_identical_shuffles(decks: int) -> None:
    for i in range(40):
        seed = hashlib.sha256(b"deal" + i.to_bytes(4, "big")).digest()[: 1 + i % 32]
        assert text(shuffled(seed, decks)) == DocumentedDeal(seed).shuffle(decks), seed.hex()


def test_documented_algorithm_recomputes_identical_deals() -> None:
    for i, (decks, count, offset) in enumerate([(1, 2, 0), (1, 10, 0), (1, 3, 37), (6, 31, 156)]):
        seed = bytes([i + 1]) * 32
        dealt = [text(hand) for hand in deal_hands(seed, decks, count, offset)]
        assert dealt == DocumentedDeal(seed).deal(decks, count, offset)


# --- suits and cards ------------------------------------------------------------------------


def test_suits_are_s_h_d_c_with_their_symbols_and_code_order() -> None:
    assert [suit.value for suit in Suit] == ["S", "H", "D", "C"]
    assert [suit.symbol for suit in Suit] == ["♠", "♥", "♦", "♣"]
    assert [suit.code for suit in Suit] == [0, 1, 2, 3]


def test_a_card_prints_as_rank_and_suit_symbol() -> None:
    assert str(Card(13, Suit.S)) == "K♠"
    assert str(Card(10, Suit.D)) == "10♦"
    assert str(Card(1, Suit.H)) == "A♥"
    assert str(Card(11, Suit.C)) == "J♣"


def test_a_card_code_is_rank_minus_one_times_four_plus_suit_index() -> None:
    assert Card(1, Suit.S).code == 0
    assert Card(1, Suit.C).code == 3
    assert Card(2, Suit.S).code == 4
    assert Card(13, Suit.C).code == 51
    assert [card.code for card in CARDS] == list(range(52))
    assert all(Card.from_code(code) == CARDS[code] for code in range(52))


@pytest.mark.parametrize("rank", [0, 14, -1, True, 1.0, "K"])
def test_a_card_rejects_a_rank_outside_1_to_13(rank: object) -> None:
    with pytest.raises(ValueError):
        Card(rank, Suit.S)  # type: ignore[arg-type]


def test_a_card_rejects_an_unknown_suit() -> None:
    with pytest.raises(ValueError):
        Card(5, "X")  # type: ignore[arg-type]
    assert Card(5, "H") == Card(5, Suit.H)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", [-1, 52, 63, True, 3.0])
def test_from_code_rejects_anything_but_0_to_51(code: object) -> None:
    with pytest.raises(ValueError):
        Card.from_code(code)  # type: ignore[arg-type]


# --- parse_cards and format_cards -----------------------------------------------------------


def test_parse_cards_reads_ranks_a_2_to_10_j_q_k_and_suits_s_h_d_c() -> None:
    cards = parse_cards("KS QH 10D 7C AS")
    assert cards == (
        Card(13, Suit.S),
        Card(12, Suit.H),
        Card(10, Suit.D),
        Card(7, Suit.C),
        CARDS[0],
    )
    every = " ".join(f"{rank}{suit}" for rank in DocumentedDeal.RANKS for suit in "SHDC")
    assert parse_cards(every) == CARDS


def test_parse_cards_accepts_lower_case_symbols_and_commas() -> None:
    expected = parse_cards("KS QH 10D 7C AS")
    assert parse_cards("ks qh 10d 7c as") == expected
    assert parse_cards("K♠ Q♥ 10♦ 7♣ A♠") == expected
    assert parse_cards("K♠️,Q♥️, 10♦  7c\tA♠") == expected  # emoji suits from a phone keyboard
    assert parse_cards("  ") == ()


@pytest.mark.parametrize("bad", ["1S", "11H", "KX", "K", "S", "10", "KSS", "T♠", "0D", "K-S", "★"])
def test_parse_cards_rejects_anything_else_naming_the_token(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card") as error:
        parse_cards(f"AS {bad} KD")
    assert repr(bad) in str(error.value)


def test_format_cards_joins_the_cards_with_spaces() -> None:
    assert format_cards(parse_cards("KS QH 3D")) == "K♠ Q♥ 3♦"
    assert format_cards([]) == ""
    assert format_cards(parse_cards(format_cards(CARDS))) == format_cards(CARDS)


# --- pack and unpack ------------------------------------------------------------------------


def test_pack_puts_card_k_in_bits_6k_to_6k_plus_5() -> None:
    a_spades, k_clubs = CARDS[0], CARDS[51]
    assert pack([a_spades] * 5) == 0
    assert pack([k_clubs, a_spades, a_spades, a_spades, a_spades]) == 51
    assert pack([a_spades, a_spades, a_spades, a_spades, k_clubs]) == 51 << 24
    hand = parse_cards("KS QH 10D 7C AS")
    assert pack(hand) == sum(card.code << (6 * k) for k, card in enumerate(hand))


@QUICK
@given(st.lists(st.sampled_from(CARDS), min_size=5, max_size=5))
def test_pack_and_unpack_round_trip(hand: list[Card]) -> None:
    assert unpack(pack(hand)) == tuple(hand)
    assert pack(unpack(pack(hand))) == pack(hand)


@pytest.mark.parametrize("size", [0, 4, 6])
def test_pack_needs_exactly_five_cards(size: int) -> None:
    with pytest.raises(ValueError):
        pack(CARDS[:size])


@pytest.mark.parametrize(
    "outcome", [-1, 1 << 30, 52, 63 << 6, 52 << 24, (1 << 30) - 1, True, 1.0, "0", None]
)
def test_unpack_rejects_anything_but_five_card_codes(outcome: object) -> None:
    with pytest.raises(ValueError):
        unpack(outcome)  # type: ignore[arg-type]


# --- shuffled -------------------------------------------------------------------------------


@pytest.mark.parametrize("decks", [1, 6])
def test_shuffled_is_a_permutation_of_the_decks(decks: int) -> None:
    order = shuffled(b"seed", decks)
    assert len(order) == 52 * decks
    assert Counter(order) == Counter({card: decks for card in CARDS})


def test_shuffled_is_deterministic_per_seed() -> None:
    for i in range(20):
        seed = i.to_bytes(4, "big")
        assert shuffled(seed, 1) == shuffled(seed, 1)
        assert shuffled(seed, 6) == shuffled(seed, 6)


def test_different_seeds_give_different_shuffles() -> None:
    orders = {tuple(shuffled(i.to_bytes(4, "big"), 1)) for i in range(200)}
    assert len(orders) == 200


def test_shuffled_returns_a_fresh_list_each_time() -> None:
    first = shuffled(b"fresh", 1)
    first.reverse()
    assert shuffled(b"fresh", 1) != first


def test_shuffled_mixes_the_deck() -> None:
    # Over 2,000 fixed seeds the ace of spades lands in each quarter of the deck about
    # equally often (within 5 standard errors of 500): not stuck near where it started.
    quarters = Counter(shuffled(i.to_bytes(4, "big"), 1).index(CARDS[0]) // 13 for i in range(2000))
    assert all(abs(quarters[q] - 500) <= 5 * (2000 * 0.25 * 0.75) ** 0.5 for q in range(4))


@pytest.mark.parametrize(("seed", "decks"), [(b"", 1), (b"x", 0), (b"x", -1), (b"x", True)])
def test_shuffled_rejects_an_empty_seed_or_no_decks(seed: bytes, decks: int) -> None:
    with pytest.raises(ValueError):
        shuffled(seed, decks)


# --- deal_hands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decks", "count", "offset"), [(1, 1, 0), (1, 2, 0), (1, 10, 2), (6, 31, 157)]
)
def test_deal_hands_deals_one_card_at_a_time_round_robin_from_offset(
    decks: int, count: int, offset: int
) -> None:
    order = shuffled(b"round robin", decks)
    hands = deal_hands(b"round robin", decks, count, offset)
    assert len(hands) == count
    position = offset
    for k in range(5):
        for h in range(count):
            assert hands[h][k] == order[position]
            position += 1


def test_deal_hands_uses_every_card_at_most_once_per_deck() -> None:
    hands = deal_hands(b"ten", 1, 10)
    dealt = [card for hand in hands for card in hand]
    assert len(dealt) == len(set(dealt)) == 50


def test_deal_hands_raises_when_the_cards_run_out() -> None:
    deal_hands(b"x", 1, 10, offset=2)  # 52 cards exactly
    with pytest.raises(ValueError, match="only 49 of 52 left"):
        deal_hands(b"x", 1, 10, offset=3)
    with pytest.raises(ValueError):
        deal_hands(b"x", 1, 11)
    with pytest.raises(ValueError):
        deal_hands(b"x", 6, 1, offset=308)


@pytest.mark.parametrize(("count", "offset"), [(0, 0), (-1, 0), (1, -1)])
def test_deal_hands_rejects_no_hands_or_a_negative_offset(count: int, offset: int) -> None:
    with pytest.raises(ValueError):
        deal_hands(b"x", 1, count, offset)


def test_deal_packed_packs_each_hand() -> None:
    hands = deal_hands(b"packed", 6, 7, 20)
    assert deal_packed(b"packed", 6, 7, 20) == tuple(pack(hand) for hand in hands)


# --- Niu Niu values -------------------------------------------------------------------------


def test_card_values_are_ace_one_two_to_nine_face_and_ten_are_ten() -> None:
    assert [card_value(Card(rank, Suit.S)) for rank in range(1, 14)] == [
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10,
    ]  # fmt: skip


def test_bull_positions_finds_the_first_three_making_a_multiple_of_ten() -> None:
    assert bull_positions([10, 7, 3, 8, 5]) == (0, 1, 2)
    assert bull_positions([9, 9, 10, 7, 3]) == (2, 3, 4)
    assert bull_positions([1, 2, 3, 4, 6]) == (0, 2, 4)  # 1 + 3 + 6; (0, 1, 2)-(0, 2, 3) fail
    assert bull_positions([1, 1, 1, 1, 1]) is None


def test_the_example_deal_in_docs_rules_md() -> None:
    seed = bytes(range(32))
    assert [format_cards(hand) for hand in deal_hands(seed, 1, 3)] == [
        "3♣ 10♠ A♦ 6♥ 3♠",
        "8♦ K♥ 10♣ 10♥ 9♣",
        "8♥ 6♣ A♣ 4♦ 2♦",
    ]
