"""Players' stats and a group's leaders: ``/stats`` and ``/top``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.rules.hand_view import HandView
from bot.rules.ruleset import get_ruleset
from bot.store.stats import Leader as Leader
from bot.store.unit_of_work import Store

#: ``/top`` lists this many players, over all time and over the last ``RECENT_DAYS``.
LEADERS = 10
RECENT_DAYS = 7
_DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's settled rounds in a group (as dealer or bettor); amounts in cents.

    ``won`` counts the rounds they came out ahead in; ``best`` is the first hand that paid
    the most (None when the game that dealt it is no longer known)."""

    rounds: int
    won: int
    net: int
    biggest_win: int
    best: HandView | None

    @property
    def win_rate_percent(self) -> int:
        """The share of rounds won, in whole percent (rounded down)."""
        return 100 * self.won // self.rounds if self.rounds else 0


@dataclass(frozen=True, slots=True)
class Leaders:
    """A group's best nets: over the last ``RECENT_DAYS`` days and of all time."""

    recent: list[Leader]
    all_time: list[Leader]


class StatsUseCases:
    """What players ask about their results; nothing here writes."""

    def __init__(self, store: Store, *, clock: Callable[[], int]) -> None:
        self.store = store
        self.clock = clock

    async def player_stats(self, chat_id: int, user_id: int) -> PlayerStats | None:
        """A player's stats in a group, or None before their first settled round there."""
        async with self.store.reading() as uow:
            totals = await uow.stats.player(chat_id, user_id)
        if totals is None:
            return None
        try:
            ruleset = get_ruleset(totals.best_ruleset)
            best: HandView | None = ruleset.show(ruleset.evaluate(totals.best_outcome))
        except ValueError:
            best = None
        return PlayerStats(totals.rounds, totals.won, totals.net, totals.biggest_win, best)

    async def leaders(self, chat_id: int, *, limit: int = LEADERS) -> Leaders:
        """The group's ``limit`` best nets over the last ``RECENT_DAYS`` and all time."""
        since = self.clock() - RECENT_DAYS * _DAY_MS
        async with self.store.reading() as uow:
            recent = await uow.stats.leaders_since(chat_id, since, limit)
            all_time = await uow.stats.leaders(chat_id, limit)
        return Leaders(recent, all_time)
