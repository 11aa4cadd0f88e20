"""How the chat shows a hand of any game (from ``Ruleset.show``), in both languages."""

from __future__ import annotations

from typing import Any

import pytest

from bot.engine.settings import Settings
from bot.rules.cards import CARDS, pack, parse_cards
from bot.rules.hand_view import HandView
from bot.rules.ruleset import RULESETS, get_ruleset
from bot.telegram.i18n import CATALOGUE
from bot.telegram.views import Views

EN, ZH = Views(Settings()), Views(Settings(language="zh"))


def view_of(ruleset: str, outcome: int | str) -> HandView:
    rules = get_ruleset(ruleset)
    packed = pack(parse_cards(outcome)) if isinstance(outcome, str) else outcome
    return rules.show(rules.evaluate(packed))


# --- a hand ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "outcome", "english", "chinese", "dealt"),
    [
        ("envelope68", 342, "9 pt", "9点", "RM3.42"),
        ("envelope68", 88, "Duizi 对子", "对子", "RM0.88"),
        ("bullbull", "10S 9H AD 9C 8S", "Bull 7", "牛七", "10♠ 9♥ A♦ | 9♣ 8♠"),
        ("bullbull", "KS 9H 7D 5C 2S", "No Bull", "没牛", "K♠ 9♥ 7♦ 5♣ 2♠"),
        ("poker29", "10S 7H 3D 9C 9S", "Big Point 8", "大点8", "10♠ 7♥ 3♦ | 9♣ 9♠"),
        ("poker29_vn", "JS QH KD JS QS", "Ultimate Niu-Niu", "至尊牛牛", "J♠ Q♥ K♦ | J♠ Q♠"),
    ],
)
def test_a_hand_is_named_in_the_tables_language_and_shows_its_amount_or_cards(
    ruleset: str, outcome: int | str, english: str, chinese: str, dealt: str
) -> None:
    view = view_of(ruleset, outcome)
    assert (EN.kind(view), ZH.kind(view)) == (english, chinese)
    assert EN.dealt(view) == ZH.dealt(view) == dealt


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_every_kind_key_a_ruleset_gives_has_a_message_in_every_language(name: str) -> None:
    ruleset = get_ruleset(name)
    if ruleset.uses_grabs:
        outcomes: Any = range(1, 1000)
    else:
        outcomes = [pack(CARDS[i : i + 5]) for i in range(0, 50, 5)]
    keys = {ruleset.show(ruleset.evaluate(outcome)).kind_key for outcome in outcomes}
    for messages in CATALOGUE.values():
        assert {f"kind.{key}" for key in keys} <= set(messages)
