"""A round's pictures in the group's language: the models ``bot.pictures`` draws (the
results, the dealer's cards turning) built from a settled round, and drawn off the event
loop, one at a time in the drawing process (``bot.telegram.drawing``)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.engine.round import Round, RoundSettled
from bot.money import format_signed
from bot.pictures.model import Cards, DealerReveal, Envelope, Outcome, ResultsPicture, Seat
from bot.pictures.results import render_results
from bot.pictures.reveal import render_reveal
from bot.rules.hand_view import HandView
from bot.service.game import Person
from bot.telegram.drawing import DrawingProcess
from bot.telegram.messenger import plain_text
from bot.telegram.views import Views

#: ``Settings.pictures`` when a group gets its results as pictures.
PICTURES_ON = "on"
#: The process every picture of this bot is drawn in (started by ``runner.serve``, or
#: on first use).
DRAWING = DrawingProcess()


def cards_of(hand: HandView) -> Cards:
    """A hand of cards as drawn: the bull (or left hand) apart from the other two, or all
    five as dealt when no three cards make one."""
    if len(hand.groups) == 2:
        return Cards(hand.groups[0], hand.groups[1])
    return Cards((), hand.cards or ())


def _outcome(net: int) -> Outcome:
    return Outcome.WIN if net > 0 else Outcome.LOSE if net < 0 else Outcome.EVEN


class RoundPictures:
    """Builds and draws one settled round's pictures for its group."""

    def __init__(self, state: Round, ended: RoundSettled, people: Mapping[int, Person]) -> None:
        self.state = state
        self.ended = ended
        self.people = people
        self.views = Views(state.settings)

    def name(self, user_id: int | None) -> str:
        """A participant's name as drawn (no markup: a picture escapes nothing); the
        house's when ``user_id`` is None."""
        return plain_text(self.views.participant(user_id, self.people))

    def t(self, key: str, **params: object) -> str:
        """A catalogue message in the group's language, as plain text (a picture shows no
        markup)."""
        return plain_text(self.views.t(key, **params))

    def results(self) -> ResultsPicture:
        """The results picture's model."""
        state, views, settlement = self.state, self.views, self.ended.settlement
        ruleset, hands = state.ruleset, state.hands()
        dealer_hand = state.dealer_hand()
        assert dealer_hand is not None
        dealer_view = ruleset.show(dealer_hand)
        dealer = Seat(
            name=self.name(state.dealer_id),
            hand=self._dealt(dealer_view),
            kind=plain_text(views.kind(dealer_view)),
            detail=self.t(
                "picture.pool", pool=state.pool, multiplier=ruleset.loss_multiplier(dealer_hand)
            ),
            result="",
            net=format_signed(settlement.dealer_net, views.currency),
            outcome=_outcome(settlement.dealer_net),
        )
        players = []
        for placed in state.bets:
            view = ruleset.show(hands[placed.user_id])
            outcome = settlement.outcomes[placed.user_id]
            players.append(
                Seat(
                    name=self.name(placed.user_id),
                    hand=self._dealt(view),
                    kind=plain_text(views.kind(view)),
                    detail=self.t("picture.stake", stake=placed.amount, multiplier=view.multiplier),
                    result=self.t(f"result.{outcome.result.value}"),
                    net=format_signed(outcome.net, views.currency),
                    outcome=_outcome(outcome.net),
                )
            )
        fees = 0 if state.house_deals else state.settings.dealer_fees
        return ResultsPicture(
            title=self.t(
                "picture.title", round_id=state.id, game=views.game(state.settings.ruleset)
            ),
            dealer_label=self.t("picture.dealer"),
            dealer=dealer,
            players=tuple(players),
            footer=(
                self.t(
                    "results.totals",
                    rake=settlement.rake_total,
                    rebate=settlement.rebate_total,
                    fees=fees,
                ),
                self.t("picture.verify", round_id=state.id),
            ),
        )

    def _dealt(self, hand: HandView) -> Cards | Envelope:
        if hand.amount_cents is not None:
            return Envelope(self.views.money(hand.amount_cents))
        return cards_of(hand)

    def reveal(self) -> DealerReveal | None:
        """The dealer's cards turning over, on a card table; None for envelopes."""
        dealer_hand = self.state.dealer_hand()
        if dealer_hand is None or self.state.ruleset.uses_grabs:
            return None
        cards = cards_of(self.state.ruleset.show(dealer_hand))
        # The name as the chat shows it (escaped): ``t`` turns the whole caption to plain
        # text, so a name with markup in it reads as typed.
        name = self.views.participant(self.state.dealer_id, self.people)
        return DealerReveal(self.t("picture.reveal", round_id=self.state.id, name=name), cards)

    async def render_results(self) -> bytes:
        """The results as PNG bytes."""
        return await DRAWING.run(render_results, self.results())

    async def render_reveal(self, reveal: DealerReveal) -> bytes:
        """The dealer's cards turning over, as GIF bytes."""
        return await DRAWING.run(render_reveal, reveal)
