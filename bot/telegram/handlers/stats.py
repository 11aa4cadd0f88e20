"""How players are doing and what a bet is worth: /stats, /top and the admins' /odds."""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Update

from bot.engine.odds import table_odds
from bot.money import format_signed
from bot.service.game import Person
from bot.service.stats import RECENT_DAYS, Leader
from bot.telegram.handlers.base import ShellParts, sender
from bot.telegram.views import Views, display_name


class StatsHandlers:
    """Answers about a player's results, the group's leaders and the table's odds."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts
        self.service = parts.service

    async def stats(self, update: Update, context: Any) -> None:
        """``/stats``: your rounds, net, win rate, best hand and biggest win here."""
        chat_id, person, _ = sender(update)
        self.parts.replies.reply(update, await stats_text(self.parts, chat_id, person))

    async def top(self, update: Update, context: Any) -> None:
        """``/top``: the group's best nets over the last days and of all time."""
        chat_id, _, _ = sender(update)
        leaders = await self.service.leaders(chat_id)
        views = await self.parts.chats.views(chat_id)
        if not leaders.all_time:
            self.parts.replies.reply(update, views.t("top.none"))
            return
        people = await self.parts.people.names(
            leader.user_id for leader in (*leaders.recent, *leaders.all_time)
        )
        lines = [views.t("top.recent", days=RECENT_DAYS)]
        lines += self._lines(views, leaders.recent, people) or [views.t("top.none_recent")]
        lines.append(views.t("top.all_time"))
        lines += self._lines(views, leaders.all_time, people)
        self.parts.replies.reply(update, "\n".join(lines))

    @staticmethod
    def _lines(views: Views, leaders: list[Leader], people: Any) -> list[str]:
        return [
            views.t(
                "top.line",
                rank=rank,
                name=display_name(leader.user_id, people),
                net=format_signed(leader.net, views.currency),
            )
            for rank, leader in enumerate(leaders, start=1)
        ]

    async def odds(self, update: Update, context: Any) -> None:
        """``/odds`` (admins): the expected return of a bet at this table's settings."""
        chat_id, _ = await self.parts.admins.require(update)
        views = await self.parts.chats.views(chat_id)
        self.parts.replies.reply(update, await odds_text(views))


async def stats_text(parts: ShellParts, chat_id: int, person: Person) -> str:
    """The answer to ``/stats`` of ``person`` in a group (the Mini App shows it too)."""
    found = await parts.service.player_stats(chat_id, person.id)
    views = await parts.chats.views(chat_id)
    name = display_name(person.id, {person.id: person})
    if found is None:
        return views.t("stats.none", name=name)
    best = (
        "—"
        if found.best is None
        else views.t(
            "stats.best",
            kind=views.kind(found.best),
            dealt=views.dealt(found.best),
            multiplier=found.best.multiplier,
        )
    )
    return views.t(
        "stats.summary",
        name=name,
        rounds=found.rounds,
        won=found.won,
        rate=found.win_rate_percent,
        net=format_signed(found.net, views.currency),
        biggest=views.money(found.biggest_win),
        best=best,
    )


async def odds_text(views: Views) -> str:
    """The answer to ``/odds`` for the table of ``views``' settings (the Mini App shows it
    too).

    Computed in a worker thread, so the event loop never waits for it; the card games'
    counts (the slow part, up to a few seconds) are cached per game by the odds module,
    so only a process's first ``/odds`` of a card game takes that long."""
    settings = views.settings
    found = await asyncio.to_thread(table_odds, settings)
    return views.odds(settings, found)
