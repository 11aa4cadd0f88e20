"""Whether this bot serves a group, asked of the database and kept a while: with several
bots on one database (``docs/operator.md``, "Several bots") a bot leaves the updates of
another bot's groups to that bot, but for ``/serve``, which moves a group to it."""

from __future__ import annotations

from cachetools import TTLCache

from bot.service.game import GameService

#: The command that moves a group to the bot it is sent to.
SERVE = "serve"
#: Groups whose answer is kept (a group seldom moves; one that does is asked again soon).
GROUPS_KEPT = 100_000
KEPT_SECONDS = 30.0


class ServedGroups:
    """Which groups this bot serves (``GameService.serves``, cached)."""

    def __init__(self, service: GameService, *, kept_seconds: float = KEPT_SECONDS) -> None:
        self.service = service
        self._served: TTLCache[int, bool] = TTLCache(GROUPS_KEPT, kept_seconds)

    async def serves(self, chat_id: int) -> bool:
        """Whether this bot serves the group (bound to it now if no bot was)."""
        served = self._served.get(chat_id)
        if served is None:
            served = self._served[chat_id] = await self.service.serves(chat_id)
        return served

    def moved_here(self, chat_id: int) -> None:
        """The group was moved to this bot (``/serve``)."""
        self._served[chat_id] = True

    def forget_quiet(self) -> None:
        """Forget the answers whose time ran out."""
        self._served.expire()
