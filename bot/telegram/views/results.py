"""The results message that closes a round, and its "same again" button."""

from __future__ import annotations

from collections.abc import Mapping

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.engine.round import Round, RoundSettled, RoundVoided
from bot.money import format_signed
from bot.service.game import Person
from bot.telegram.views.buttons import ButtonPress
from bot.telegram.views.phrasing import Phrasing, display_name


class ResultsViews(Phrasing):
    """The results of a round: every participant's line, or why it ended."""

    def results_keyboard(
        self, state: Round, ended: RoundSettled | RoundVoided
    ) -> InlineKeyboardMarkup | None:
        """The results message's buttons, whatever form the message takes (text, or a
        picture's caption): "same again" for a settled round with bets, which bets each
        presser's stake of this round again (``again`` carries this round's id, so a
        press on older results is refused)."""
        if not isinstance(ended, RoundSettled) or not state.bets:
            return None
        again = InlineKeyboardButton(
            self.t("button.same_again"), callback_data=ButtonPress(state.id, "again").encode()
        )
        return InlineKeyboardMarkup([[again]])

    def results(
        self, state: Round, ended: RoundSettled | RoundVoided, people: Mapping[int, Person]
    ) -> str:
        """The one message that closes a round: every participant's line, or why it ended."""
        if isinstance(ended, RoundVoided):
            text = self.t(f"results.void.{ended.reason.value}", round_id=state.id)
            if state.shoe is not None:  # nothing was dealt; the shoe's seed stays secret
                return text
            # A round dealt and then voided (a re-deal) lists its client seeds too: with
            # the seed they are what recomputes its split.
            dealt = self._client_seeds(state.fairness, state.client_seeds) if state.shares else []
            seed_line = self.t("results.seed", seed=ended.seed.hex(), round_id=state.id)
            return "\n".join([text, *dealt, seed_line])
        ruleset = state.ruleset
        hands = state.hands()
        settlement = ended.settlement
        lines = [self.t("results.title", round_id=state.id, game=self.game(state.settings.ruleset))]
        dealer = state.dealer_hand()
        assert dealer is not None
        dealer_view = ruleset.show(dealer)
        lines.append(
            self.t(
                "results.dealer",
                name=self.participant(state.dealer_id, people),
                envelope=self.dealt(dealer_view),
                kind=self.kind(dealer_view),
                # What a loser pays against it (Niu-Niu Poker: always 1x).
                multiplier=ruleset.loss_multiplier(dealer),
                net=format_signed(settlement.dealer_net, self.currency),
            )
        )
        for placed in state.bets:
            hand = ruleset.show(hands[placed.user_id])
            outcome = settlement.outcomes[placed.user_id]
            lines.append(
                self.t(
                    "results.player",
                    name=display_name(placed.user_id, people),
                    envelope=self.dealt(hand),
                    kind=self.kind(hand),
                    multiplier=hand.multiplier,
                    result=self.t(f"result.{outcome.result.value}"),
                    net=format_signed(outcome.net, self.currency),
                )
            )
        lines.append(
            self.t(
                "results.totals",
                rake=settlement.rake_total,
                rebate=settlement.rebate_total,
                fees=0 if state.house_deals else state.settings.dealer_fees,
            )
        )
        # The client seeds, then where the seed is (the line that says how to check).
        lines += self._client_seeds(state.fairness, state.client_seeds)
        if state.shoe is not None:
            first, last = state.cards_dealt()
            lines.append(self.t("results.shoe", shoe_id=state.shoe.id, first=first, last=last))
        else:
            lines.append(self.t("results.seed", seed=ended.seed.hex(), round_id=state.id))
        return "\n".join(lines)
