"""Who sees what: operators see every group; anyone else the groups they administer,
asked as the bot asks (``is_group_admin``: the bot's ``AdminCheck``, which caches
Telegram's ``getChatMember``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.service.console import ConsoleService

IsGroupAdmin = Callable[[int, int], Awaitable[bool]]


@dataclass(slots=True)
class Viewer:
    """The signed-in user of one request, with what was asked of Telegram for it."""

    user_id: int
    is_operator: bool
    csrf_token: str
    _answers: dict[int, bool] = field(default_factory=dict)


class Access:
    """Decides which groups a viewer may see (see the module's docstring)."""

    def __init__(
        self, console: ConsoleService, operators: frozenset[int], is_group_admin: IsGroupAdmin
    ) -> None:
        self.console = console
        self.operators = operators
        self.is_group_admin = is_group_admin

    async def may_see(self, viewer: Viewer, chat_id: int) -> bool:
        """Whether the viewer is an operator or an admin of the group."""
        if viewer.is_operator:
            return True
        if chat_id not in viewer._answers:
            # Telegram is asked only about the bot's own groups: an id typed in the address
            # must not make the bot spend its requests to Telegram.
            known = bool(await self.console.groups([chat_id]))
            viewer._answers[chat_id] = known and await self.is_group_admin(chat_id, viewer.user_id)
        return viewer._answers[chat_id]

    async def visible_groups(self, viewer: Viewer) -> list[int] | None:
        """The groups the viewer may see; ``None`` for every group (an operator).

        For an admin these are the groups where they have chips or acted as an admin
        (asked of Telegram each): a group where an admin never did either is not listed,
        though its page opens for them."""
        if viewer.is_operator:
            return None
        candidates = await self.console.groups_touched_by(viewer.user_id)
        return [chat_id for chat_id in candidates if await self.may_see(viewer, chat_id)]
