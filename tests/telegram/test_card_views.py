"""What a group sees of a card round: the board shows every hand once dealt, the dealer's
last; the results show the cards; a shoe round never shows the shoe's seed."""

from __future__ import annotations

import dataclasses

from bot.engine import round as engine
from bot.engine.round import Phase, Round, RoundSettled
from bot.engine.settings import Settings
from bot.rules._fivecard import FiveCardHand
from bot.rules.cards import format_cards
from bot.service.game import Person
from bot.telegram.views import Views

DEALER, ALICE, BOB = 1, 2, 3
PEOPLE = {1: Person(1, "Dana"), 2: Person(2, "Alice"), 3: Person(3, "<b>Bob</b>")}
SHOE_SEED = b"a secret shoe seed"


def settled(ruleset: str, dealer: str = "bid") -> tuple[Round, RoundSettled]:
    settings = dataclasses.replace(Settings(), ruleset=ruleset, dealer=dealer)
    shoe = engine.ShoeRef(3, SHOE_SEED, 40) if ruleset.startswith("poker") else None
    state = engine.start_round(
        round_id=9, chat_id=-1, settings=settings, seed=b"r" * 32, now_ms=0, bank=90_000, shoe=shoe
    ).round
    if dealer == "bid":
        state = engine.bid(state, DEALER, 50_000, free_chips=10**9, now_ms=1).round
        state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    for user in (ALICE, BOB):
        state = engine.bet(state, user, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    (ended,) = [e for e in transition.events if isinstance(e, RoundSettled)]
    assert transition.round.phase is Phase.SETTLED
    return transition.round, ended


def test_a_dealt_card_board_shows_every_hand_and_the_dealers_last() -> None:
    state, _ = settled("bullbull")
    text, keyboard = Views(state.settings).board(state, PEOPLE, now_ms=state.deadline_ms)
    hands = state.hands()
    lines = text.splitlines()
    alice = next(line for line in lines if "Alice" in line)
    assert format_cards(hands[ALICE].right) in alice and hands[ALICE].english in alice
    assert "&lt;b&gt;Bob&lt;/b&gt;" in text and "<b>Bob</b>" not in text
    assert lines[-1].startswith("Dealer's hand")
    assert format_cards(hands[DEALER].right) in lines[-1]
    assert keyboard is None


def test_card_results_show_the_cards_and_name_the_house() -> None:
    state, ended = settled("bullbull", dealer="house")
    text = Views(state.settings).results(state, ended, PEOPLE)
    dealer = state.dealer_hand()
    assert isinstance(dealer, FiveCardHand)
    assert "Dealer (the house):" in text and format_cards(dealer.right) in text
    assert sum(symbol in text for symbol in "♠♥♦♣") >= 2
    assert state.seed.hex() in text  # a round's own seed is revealed as it ends


def test_a_shoe_round_names_its_cards_of_the_shoe_but_never_the_shoe_seed() -> None:
    state, ended = settled("poker29")
    views = Views(state.settings)
    board, _ = views.board(state, PEOPLE, now_ms=state.deadline_ms)
    results = views.results(state, ended, PEOPLE)
    assert "cards 41–55" in results  # 3 hands of 5 after 40 cards
    for text in (board, results):
        assert SHOE_SEED.hex() not in text
        assert state.seed.hex() not in text  # the round's own seed deals nothing here


def test_chinese_tables_name_card_hands_in_chinese() -> None:
    state, ended = settled("bullbull")
    zh = dataclasses.replace(state, settings=dataclasses.replace(state.settings, language="zh"))
    text = Views(zh.settings).results(zh, ended, PEOPLE)
    assert zh.hands()[ALICE].chinese in text
