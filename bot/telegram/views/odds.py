"""What a bet at a table is worth, as admins read it: the answer to ``/odds``, and the
warning a settings change that moves the house's edge out of bounds gets instead of being
made (``bot.engine.edge``)."""

from __future__ import annotations

import html

from bot.engine.edge import HOUSE_EDGE_LIMIT_BPS, EdgeAlarm, EdgeWarning
from bot.engine.odds import Odds
from bot.engine.settings import Settings
from bot.money import format_bps
from bot.telegram.views.phrasing import Phrasing


def percent(share: float) -> str:
    """A share of the stake as a signed percentage: ``-14.73%``."""
    return f"{100 * share:+.2f}%"


def _unsigned(share: float) -> str:
    return f"{100 * share:.2f}%"


class OddsViews(Phrasing):
    """The odds of a table's bet, and the warning before a change of them."""

    def odds(self, settings: Settings, found: Odds) -> str:
        """The expected return of one bet at a table with ``settings`` (``/odds``)."""
        return "\n".join(
            [
                self.t(
                    "odds.header",
                    game=self.game(settings.ruleset),
                    rake_rate=format_bps(settings.rake_bps),
                    rebate_rate=format_bps(settings.rebate_bps),
                ),
                self.t("odds.player", percent=percent(found.player)),
                self.t("odds.dealer", percent=percent(found.dealer)),
                self.t("odds.house", percent=percent(found.platform)),
                self.t("odds.fees", fees=settings.dealer_fees),
                self.t("odds.exact"),
            ]
        )

    def edge_warning(self, name: str, value: str, settings: Settings, warning: EdgeWarning) -> str:
        """Why ``/set name value`` was not made, the odds it would give the table
        (``settings``), and how to make it anyway."""
        edge = warning.after.edge
        if warning.alarm is EdgeAlarm.PAYS_OUT:
            why = self.t("set.edge_pays_out", percent=_unsigned(-edge))
        else:
            why = self.t(
                "set.edge_takes_too_much",
                percent=_unsigned(edge),
                limit=format_bps(HOUSE_EDGE_LIMIT_BPS),
            )
        how = self.t("set.confirm", name=html.escape(name), value=html.escape(value))
        return "\n\n".join([why, self.odds(settings, warning.after.odds), how])
