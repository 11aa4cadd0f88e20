"""Telling a group that standing bets stopped: one short message naming each player and
why (free chips short, the table changed game, the table's limits changed)."""

from __future__ import annotations

from bot.engine.autobets import AutobetRun, AutobetStopped, StopReason
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import People
from bot.telegram.replies import Replies
from bot.telegram.views import Views, display_name


class AutobetNotices:
    """Says which standing bets stopped, through the chat's outbox (the caller never
    waits) and the group's reply budget (several at once go out together)."""

    def __init__(self, outbox: ChatOutbox, people: People, replies: Replies) -> None:
        self.outbox = outbox
        self.people = people
        self.replies = replies

    def stopped(self, chat_id: int, run: AutobetRun) -> None:
        """Tell the group about every standing bet this placement stopped (if any)."""
        if not run.stopped:
            return

        async def render() -> None:
            views = Views(run.round.settings)  # the game and limits that stopped them
            people = await self.people.names(s.autobet.user_id for s in run.stopped)
            lines = [
                _line(views, stopped, display_name(stopped.autobet.user_id, people))
                for stopped in run.stopped
            ]
            self.replies.tell(chat_id, "\n".join(lines))

        self.outbox.put(chat_id, render)


def _line(views: Views, stopped: AutobetStopped, name: str) -> str:
    """One stopped standing bet, naming its player (already escaped)."""
    settings = views.settings
    amount = stopped.autobet.amount
    if stopped.reason is StopReason.CHIPS:
        return views.t("autobet.stopped_chips", name=name, amount=amount, needed=stopped.needed)
    if stopped.reason is StopReason.GAME:
        game = views.game(settings.ruleset)
        return views.t("autobet.stopped_game", name=name, amount=amount, game=game)
    return views.t(
        "autobet.stopped_limits",
        name=name,
        amount=amount,
        minimum=settings.min_bet,
        maximum=settings.max_bet,
    )
