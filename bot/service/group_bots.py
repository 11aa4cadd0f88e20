"""Which bot serves a group, when several bots share the database (``docs/operator.md``,
"Several bots"): a group is bound to the bot that first hears from it, and an admin moves
it to another bot by sending that bot ``/serve``."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.errors import GameError
from bot.service.core import StoredPeople, admin_command
from bot.service.records import Person
from bot.store.unit_of_work import Store, UnitOfWork


class GroupBotUseCases:
    """The bot of each group: bound, looked up, moved."""

    def __init__(self, store: Store, *, clock: Callable[[], int], people: StoredPeople) -> None:
        self.store = store
        self.clock = clock
        self.people = people

    async def serves(self, chat_id: int) -> bool:
        """Whether this bot serves the group: bound to it now if no bot was."""
        bound = await self.store.chat_bots.bind(chat_id)
        return bound is None or bound == self.store.bot_id

    async def serve_here(
        self, chat_id: int, actor: Person, *, update_id: int | None = None
    ) -> bool | None:
        """Move the group to this bot; whether it moved (``False``: it was this bot's
        already; ``None``: an update processed before). Its chips, ledger and rounds stay
        the group's. Raises ``GameError("serve_round_on")`` while a round's messages are
        on their way to the group (the other bot's, which this one could not edit)."""

        async def body(uow: UnitOfWork, now: int) -> bool:
            await self.people.touch(uow, [actor], now)
            await uow.chats.get_or_create(chat_id, now)
            before = await uow.chats.bot_of(chat_id)
            if before == self.store.bot_id:
                return False
            if not await uow.chats.move_here(chat_id):
                raise GameError("serve_round_on")
            details = {"from_bot": before, "to_bot": self.store.bot_id}
            await uow.audit.append(chat_id, actor.id, "serve", now, details)
            return True

        return await admin_command(self.store, self.clock, update_id, body)
