"""What the group sees: the live round board, its buttons, the results message and the
answer to ``/verify``.

Everything from users is HTML-escaped here; amounts are formatted with the group's
currency. Callback data carries the round id so that a button of an old round can be
told apart and refused.

The views, a job each, share ``Phrasing`` (catalogue messages, amounts, hands, names):
the board and its buttons (``board``), the results (``results``), the answer to
``/verify`` (``verification``); ``buttons`` holds the buttons' callback data.
"""

from __future__ import annotations

from bot.engine.round import HOUSE_DEALER
from bot.money import format_bps
from bot.rules.ruleset import get_ruleset
from bot.telegram.views.board import BOARD_BETS_SHOWN, BoardViews
from bot.telegram.views.buttons import BUTTON_ACTIONS, ButtonPress
from bot.telegram.views.odds import OddsViews
from bot.telegram.views.phrasing import SEEDS_A_LINE, display_name
from bot.telegram.views.results import ResultsViews
from bot.telegram.views.verification import VerificationViews

__all__ = [
    "BOARD_BETS_SHOWN",
    "BUTTON_ACTIONS",
    "SEEDS_A_LINE",
    "ButtonPress",
    "Views",
    "display_name",
]


class Views(BoardViews, ResultsViews, VerificationViews, OddsViews):
    """Renders for one group's language and currency."""

    def rules(self) -> str:
        """The rules of this table, with its limits and fees."""
        settings = self.settings
        game = get_ruleset(settings.ruleset).name
        dealer = self.t(f"rules.dealer.{settings.dealer}")
        rules = self.t(f"rules.{game}", dealer=dealer)
        if settings.played_ruleset() is not get_ruleset(game):
            # Niu-Niu Poker where a loser pays by the dealer's pattern (``loss_pays``).
            largest = settings.played_ruleset().largest_loss_multiplier
            rules += "\n" + self.t("rules.loss_pays_dealer", multiplier=largest)
        return (
            rules
            + "\n\n"
            + self.t(
                "rules.table_house" if settings.dealer == HOUSE_DEALER else "rules.table",
                min_bet=self.money(settings.min_bet),
                max_bet=self.money(settings.max_bet),
                min_bid=self.money(settings.min_bid),
                rake=format_bps(settings.rake_bps),
                rebate=format_bps(settings.rebate_bps),
                fees=self.money(settings.dealer_fees),
            )
        )
