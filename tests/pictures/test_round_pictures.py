"""What the shell asks the pictures to draw of a settled round (bot/telegram/pictures.py):
every bettor in bet order after the dealer, their cards as the rules show them (the bull
apart) or their envelope, names as typed (a picture escapes nothing), the group's
language, and a net coloured by its sign."""

from __future__ import annotations

import dataclasses

from bot.money import format_signed
from bot.pictures.model import Cards, Envelope, Outcome
from bot.service.game import Person
from bot.telegram.pictures import RoundPictures
from bot.telegram.views import Views
from tests.helpers.picture_samples import settled_round


def test_a_card_round_shows_every_hand_with_the_bull_apart_in_the_groups_language() -> None:
    state, ended = settled_round("bullbull", 4, "zh")
    people = {1: Person(1, "<b>Ann</b> & 陈"), 2: Person(2, "", "bob")}
    picture = RoundPictures(state, ended, people).results()
    views = Views(state.settings)
    assert picture.title.startswith("第 42 局结果")
    assert picture.dealer_label == "庄家"
    assert [seat.name for seat in picture.players] == [
        "<b>Ann</b> & 陈",
        "@bob",
        "user 3",
        "user 4",
    ]
    hands = state.hands()
    for placed, seat in zip(state.bets, picture.players, strict=True):
        view = state.ruleset.show(hands[placed.user_id])
        assert isinstance(seat.hand, Cards)
        assert seat.hand.all == tuple(card for group in view.groups for card in group)
        assert len(seat.hand.bull) == (3 if len(view.groups) == 2 else 0)
        assert seat.kind == views.kind(view)
        net = ended.settlement.outcomes[placed.user_id].net
        assert seat.net == format_signed(net, "RM")
        assert seat.outcome is (
            Outcome.WIN if net > 0 else Outcome.LOSE if net < 0 else Outcome.EVEN
        )
    reveal = RoundPictures(state, ended, people).reveal()
    assert reveal is not None and isinstance(picture.dealer.hand, Cards)
    assert reveal.cards == picture.dealer.hand


def test_an_envelope_round_shows_the_amounts_and_has_no_cards_to_turn() -> None:
    state, ended = settled_round("envelope68", 3)
    pictures = RoundPictures(state, ended, {})
    picture = pictures.results()
    shares = {grab.user_id: grab.amount for grab in state.grabs}
    assert [seat.hand for seat in picture.players] == [
        Envelope(Views(state.settings).money(shares[bet.user_id])) for bet in state.bets
    ]
    assert pictures.reveal() is None


def test_the_dealers_name_reads_as_typed_in_the_turning_cards_caption() -> None:
    state, ended = settled_round("bullbull", 2)
    dealt_by_eve = dataclasses.replace(state, dealer_id=99)
    reveal = RoundPictures(dealt_by_eve, ended, {99: Person(99, "<b>Eve</b> & co")}).reveal()
    assert reveal is not None and "<b>Eve</b> & co" in reveal.caption
