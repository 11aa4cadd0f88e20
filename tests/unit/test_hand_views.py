"""What each ruleset gives views of its hands (``Ruleset.show``) and of a comparison
(``Ruleset.decide``): one test per kind of hand of every game, one per deciding rule,
and properties over every envelope amount and random card hands."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.rules import bullbull, envelope, poker29
from bot.rules.cards import CARDS, Card, bull_positions, card_value, pack, parse_cards
from bot.rules.hand_view import DecidingRule, Decision, HandView
from bot.rules.ruleset import RED_ENVELOPE, RULESETS, Ruleset, get_ruleset

QUICK = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def cards_hand(ruleset: Ruleset[Any], text: str) -> Any:
    return ruleset.evaluate(pack(parse_cards(text)))


# --- the red-envelope game ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "view"),
    [
        (999, HandView("baozi", "special", "Baozi", "豹子", 7, 18, amount_cents=999)),
        (100, HandView("manniu", "special", "Manniu", "满牛", 1, 15, amount_cents=100)),
        (210, HandView("fanshun", "special", "Fanshun", "反顺", 3, 14, amount_cents=210)),
        (123, HandView("shunzi", "special", "Shunzi", "顺子", 6, 13, amount_cents=123)),
        (88, HandView("duizi", "special", "Duizi", "对子", 6, 12, amount_cents=88)),
        (10, HandView("jinniu", "special", "Jinniu", "金牛", 1, 11, amount_cents=10)),
        (342, HandView("ordinary", "ordinary", "Ordinary", "点数", 9, 9, amount_cents=342)),
    ],
)
def test_envelope_view_shows_the_amount_and_names_a_special_kind_or_the_points(
    amount: int, view: HandView
) -> None:
    assert RED_ENVELOPE.show(RED_ENVELOPE.evaluate(amount)) == view


def test_envelope_views_cover_every_kind_and_agree_with_every_hand() -> None:
    kinds = set()
    for amount in range(envelope.MIN_AMOUNT, envelope.MAX_AMOUNT + 1):
        hand = RED_ENVELOPE.evaluate(amount)
        view = RED_ENVELOPE.show(hand)
        kinds.add(view.kind)
        assert (view.amount_cents, view.points, view.multiplier) == (
            amount,
            hand.points,
            RED_ENVELOPE.win_multiplier(hand),
        )
        assert view.kind_key == (
            "ordinary" if hand.kind is envelope.HandKind.ORDINARY else "special"
        )
        assert (view.cards, view.groups) == (None, ())
    assert kinds == {kind.value for kind in envelope.HandKind}


# --- the card games -------------------------------------------------------------------------

#: Each hand as dealt, and its kind, names, points, multiplier and cards as shown.
BULLBULL_VIEWS = [
    ("AS 2S AH 3C 2D", "five_small", "Five Small", "五小牛", 0, 5, "A♠ 2♠ A♥ 3♣ 2♦"),
    ("KH KD KS KC 2S", "bomb", "Bomb", "炸弹", 0, 5, "K♥ K♦ K♠ | K♣ 2♠"),
    ("JS QH KD JC QS", "five_face", "Five Face Cards", "五花牛", 0, 5, "J♠ Q♥ K♦ | J♣ Q♠"),
    ("KS QH 3D 9C 8S", "niuniu", "Niu Niu", "牛牛", 0, 3, "3♦ 9♣ 8♠ | K♠ Q♥"),
    ("10S 9H AD 9C 8S", "bull", "Bull 7", "牛七", 7, 2, "10♠ 9♥ A♦ | 9♣ 8♠"),
    ("10S 7H 3D 8C 5S", "bull", "Bull 3", "牛三", 3, 1, "10♠ 7♥ 3♦ | 8♣ 5♠"),
    ("KS 9H 7D 5C 2S", "no_bull", "No Bull", "没牛", 0, 1, "K♠ 9♥ 7♦ 5♣ 2♠"),
]
POKER29_VIEWS = [
    ("JS QH KD JS QS", "ultimate", "Ultimate Niu-Niu", "至尊牛牛", 0, 5, "J♠ Q♥ K♦ | J♠ Q♠"),
    ("KS KS 4D 6C 10S", "niuniu", "Niu-Niu", "牛牛", 0, 3, "K♠ K♠ 10♠ | 4♦ 6♣"),
    ("10S 7H 3D 9C 9S", "big_point", "Big Point 8", "大点8", 8, 2, "10♠ 7♥ 3♦ | 9♣ 9♠"),
    ("10S 7H 3D 8C 5S", "small_point", "Small Point 3", "小点3", 3, 1, "10♠ 7♥ 3♦ | 8♣ 5♠"),
    ("KS 9H 7D 5C 2S", "high_card", "High Card", "高牌", 0, 1, "K♠ 9♥ 7♦ 5♣ 2♠"),
]


def expected_card_view(
    dealt: str, kind: str, english: str, chinese: str, points: int, multiplier: int, shown: str
) -> HandView:
    """The view of the hand ``dealt``; ``shown`` writes its groups as "A B C | D E"."""
    return HandView(
        kind,
        "cards",
        english,
        chinese,
        points,
        multiplier,
        cards=tuple(str(card) for card in parse_cards(dealt)),
        groups=tuple(tuple(group.split()) for group in shown.split(" | ")),
    )


@pytest.mark.parametrize("expected", BULLBULL_VIEWS, ids=lambda row: row[0])
def test_bullbull_view_shows_the_bull_first_then_the_rest_or_the_cards_as_dealt(
    expected: tuple[str, str, str, str, int, int, str],
) -> None:
    view = bullbull.BULLBULL.show(cards_hand(bullbull.BULLBULL, expected[0]))
    assert view == expected_card_view(*expected)


@pytest.mark.parametrize("ruleset", [poker29.POKER29, poker29.POKER29_VN], ids=lambda r: r.name)
@pytest.mark.parametrize("expected", POKER29_VIEWS, ids=lambda row: row[0])
def test_poker29_view_shows_the_left_hand_first_then_the_right_or_the_cards_as_dealt(
    ruleset: poker29.Poker29Ruleset, expected: tuple[str, str, str, str, int, int, str]
) -> None:
    assert ruleset.show(cards_hand(ruleset, expected[0])) == expected_card_view(*expected)


def test_the_card_views_above_cover_every_kind_of_every_card_game() -> None:
    assert {row[1] for row in BULLBULL_VIEWS} == {kind.value for kind in bullbull.HandKind}
    assert {row[1] for row in POKER29_VIEWS} == {kind.value for kind in poker29.HandKind}


@QUICK
@given(
    st.sampled_from(["bullbull", "poker29", "poker29_vn"]),
    st.lists(st.sampled_from(CARDS), min_size=5, max_size=5),
)
def test_a_card_view_shows_the_dealt_cards_in_groups_of_a_bull_and_the_rest(
    name: str, dealt: list[Card]
) -> None:
    ruleset = get_ruleset(name)
    hand = ruleset.evaluate(pack(dealt))
    view = ruleset.show(hand)
    assert view.cards == tuple(str(card) for card in dealt)
    assert sorted(card for group in view.groups for card in group) == sorted(view.cards)
    assert (view.kind, view.points, view.multiplier) == (
        hand.kind.value,
        hand.points,
        ruleset.win_multiplier(hand),
    )
    assert view.amount_cents is None
    if len(view.groups) == 2:
        by_text = {str(card): card for card in dealt}
        assert sum(card_value(by_text[card]) for card in view.groups[0]) % 10 == 0
        assert len(view.groups[1]) == 2
    else:  # no three add up to a multiple of 10: the cards as dealt
        assert bull_positions([card_value(card) for card in dealt]) is None
        assert view.groups == (view.cards,)


# --- what decides between two hands ---------------------------------------------------------


def envelope_decision(a: int, b: int) -> Decision:
    return RED_ENVELOPE.decide(RED_ENVELOPE.evaluate(a), RED_ENVELOPE.evaluate(b))


def test_envelope_decide_names_the_rule_that_decides() -> None:
    assert envelope_decision(10, 145) == Decision(1, DecidingRule.KIND, "Jinniu", "Ordinary")
    assert envelope_decision(166, 88) == Decision(-1, DecidingRule.PAIR, "88", "66")
    assert envelope_decision(14, 978) == Decision(1, DecidingRule.POINTS, "5", "4")
    assert envelope_decision(43, 250) == Decision(-1, DecidingRule.AMOUNT)
    assert envelope_decision(342, 342) == Decision(0, DecidingRule.SAME_AMOUNT)


def card_decision(ruleset: Ruleset[Any], a: str, b: str) -> Decision:
    return ruleset.decide(cards_hand(ruleset, a), cards_hand(ruleset, b))


SUITS_BULLBULL = ("spades", "hearts", "clubs", "diamonds")
SUITS_POKER29 = ("spades", "hearts", "diamonds", "clubs")


@pytest.mark.parametrize(
    ("name", "a", "b", "decision"),
    [
        (
            "bullbull",
            "JS QH KD JC QS",
            "KS QD 3D 9C 8S",
            Decision(1, DecidingRule.KIND, "Five Face Cards", "Niu Niu"),
        ),
        (
            "bullbull",
            "10S 7H 3D 8C 5S",
            "10H 9H AD 9C 8S",
            Decision(-1, DecidingRule.POINTS, "7", "3"),
        ),
        ("bullbull", "9S 9H 9D 9C 2D", "KS KH KD KC 2S", Decision(-1, DecidingRule.FOUR, "K", "9")),
        (
            "bullbull",
            "KS QH 3D 9C 8S",
            "JS 9H AD 2C 8D",
            Decision(1, DecidingRule.HIGHEST_CARD, "K♠", "J♠"),
        ),
        (
            "bullbull",
            "10D 7H 3D 8C 5S",
            "10H 7S 3C 8D 5D",
            Decision(-1, DecidingRule.HIGHEST_CARD, "10♥", "10♦", suit_order=SUITS_BULLBULL),
        ),
        (
            "poker29",
            "10S 7H 3D 8C 5S",
            "QS 7D 3H 8D 5H",
            Decision(-1, DecidingRule.CARD_BY_CARD, "Q♠", "10♠", position=0),
        ),
        (
            "poker29",
            "10S 7H 3D 8C 5S",
            "10S 7H 3D 8C 5D",
            Decision(
                1, DecidingRule.CARD_BY_CARD, "5♠", "5♦", position=3, suit_order=SUITS_POKER29
            ),
        ),
        ("poker29", "10S 7H 3D 8C 5S", "8C 5S 10S 3D 7H", Decision(0, DecidingRule.SAME_CARDS)),
        (
            "poker29_vn",
            "10S 7H 3D 8C 5S",
            "QS 7D 3H 8D 5H",
            Decision(0, DecidingRule.SAME_KIND_AND_POINTS),
        ),
        (
            "poker29_vn",
            "10S 7H 3D 9C 9S",
            "10S 7H 3D 8C 5S",
            Decision(1, DecidingRule.KIND, "Big Point", "Small Point"),
        ),
    ],
)
def test_card_decide_names_the_rule_that_decides(
    name: str, a: str, b: str, decision: Decision
) -> None:
    assert card_decision(get_ruleset(name), a, b) == decision


@QUICK
@given(
    st.sampled_from(sorted(RULESETS)),
    st.lists(st.sampled_from(CARDS), min_size=10, max_size=10),
    st.integers(1, 999),
    st.integers(1, 999),
)
def test_decide_agrees_with_compare_and_names_the_same_rule_either_way_round(
    name: str, cards: list[Card], amount_a: int, amount_b: int
) -> None:
    ruleset = get_ruleset(name)
    if ruleset.uses_grabs:
        a, b = ruleset.evaluate(amount_a), ruleset.evaluate(amount_b)
    else:
        a, b = ruleset.evaluate(pack(cards[:5])), ruleset.evaluate(pack(cards[5:]))
    forward, backward = ruleset.decide(a, b), ruleset.decide(b, a)
    assert forward.verdict == ruleset.compare(a, b)
    assert backward.verdict == -forward.verdict
    assert (backward.rule, backward.winner, backward.loser) == (
        forward.rule,
        forward.winner,
        forward.loser,
    )
