"""Table use cases: chats, people and updates the bot sees, opening and closing a table,
and its settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial

from bot.engine.edge import edge_warning
from bot.engine.errors import GameError
from bot.engine.round import HOUSE
from bot.engine.settings import CARD_TABLE_DEFAULTS, SettingError, Settings, label
from bot.service.core import GroupSettings, StoredPeople, admin_command
from bot.service.records import Person, SettingChange, UnconfirmedChange
from bot.store.chats import TITLE_LENGTH
from bot.store.unit_of_work import Store, UnitOfWork


class TableUseCases:
    """Tables and their settings."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        people: StoredPeople,
        group_settings: GroupSettings,
    ) -> None:
        self.store = store
        self.clock = clock
        self.people = people
        self.group_settings = group_settings

    async def note_people(self, people: Sequence[Person]) -> None:
        """Remember users (so an admin can name them by @username later)."""
        if self.people.all_stored(people):
            return
        async with self.store.writing() as uow:
            await self.people.touch(uow, people, self.clock())

    async def forget_old_updates(self) -> int:
        """Forget processed updates older than the store's window (see
        ``bot.store.updates``); how many went."""
        async with self.store.writing() as uow:
            return await uow.updates.prune(self.clock())

    async def note_chat(self, chat_id: int, title: str) -> None:
        """Create or retitle a chat."""
        now = self.clock()
        async with self.store.writing() as uow:
            chat = await uow.chats.get_or_create(chat_id, now)
            if chat.title != title[:TITLE_LENGTH]:
                await uow.chats.change(chat_id, title=title)

    async def set_open(
        self, chat_id: int, actor: Person, is_open: bool, *, update_id: int | None = None
    ) -> bool | None:
        """Open or close a group's table; returns whether it changed (``None`` for an
        update processed before). A closing table finishes its current round but starts
        no new one."""

        async def body(uow: UnitOfWork, now: int) -> bool:
            await self.people.touch(uow, [actor], now)
            chat = await uow.chats.get_or_create(chat_id, now)
            if chat.is_open == is_open:
                return False
            if is_open:
                await uow.chats.change(chat_id, is_open=True)
                # The house takes the rounds' rake: with its account there, the table's
                # first round starts on the hot path (``bot.store.round_starts``).
                await uow.ledger.account_ids(chat_id, [HOUSE])
            else:
                await uow.chats.change(chat_id, is_open=False, next_round_at_ms=None)
            action = "open" if is_open else "close"
            await uow.audit.append(chat_id, actor.id, action, now, {})
            return True

        return await admin_command(self.store, self.clock, update_id, body)

    async def knows_chat(self, chat_id: int) -> bool:
        """Whether the bot has a record of the group (a table was ever opened or set up
        there): the Mini App asks Telegram about no other group."""
        return await self.store.chat_lookup.get(chat_id) is not None

    async def is_open(self, chat_id: int) -> bool:
        """Whether the group's table is open."""
        chat = await self.store.chat_lookup.get(chat_id)
        return bool(chat and chat.is_open)

    async def settings(self, chat_id: int) -> Settings:
        """The group's settings: its changes over the configured defaults."""
        return self.group_settings.of(await self.store.chat_lookup.get(chat_id))

    async def change_setting(
        self,
        chat_id: int,
        actor: Person,
        key: str,
        value: str,
        *,
        update_id: int | None = None,
        confirmed: bool = False,
    ) -> SettingChange | UnconfirmedChange | None:
        """Change one setting; returns its name as admins type it and the old and new
        value as displayed, or ``None`` for an update processed before. A value the
        setting has already changes nothing and is not audited (then old == new). Raises
        ``GameError("bad_setting.<reason>")`` for a bad key or value, with the
        ``SettingError``'s reason (one of ``ALL_SETTING_REASONS``) and params.

        Unless ``confirmed``, a change that takes the house's edge out of bounds
        (``bot.engine.edge``) is not made: an ``UnconfirmedChange`` says why, and the update
        is not recorded (the admin confirms with another). The odds are counted before the
        write, in a worker thread (a card game's first count takes seconds); the write
        checks that the settings they were counted for are still the group's."""
        checked = None if confirmed else await self.settings(chat_id)
        while True:
            if checked is not None:
                name, changed, _ = self._proposed(checked, key, value)
                warning = await asyncio.to_thread(edge_warning, checked, changed)
                if warning is not None:
                    return UnconfirmedChange(label(name), changed.display(name), changed, warning)
            try:
                return await admin_command(
                    self.store,
                    self.clock,
                    update_id,
                    partial(self._change, chat_id, actor, key, value, checked),
                )
            except _SettingsMoved as moved:
                # Another admin's change came in between: count again (each repeat needs
                # one more change committed meanwhile, so this ends).
                checked = moved.settings

    async def _change(
        self,
        chat_id: int,
        actor: Person,
        key: str,
        value: str,
        checked: Settings | None,
        uow: UnitOfWork,
        now: int,
    ) -> SettingChange:
        await self.people.touch(uow, [actor], now)
        chat = await uow.chats.get_or_create(chat_id, now)
        current = self.group_settings.of(chat)
        if checked is not None and current != checked:
            raise _SettingsMoved(current)
        name, changed, keys = self._proposed(current, key, value)
        old, new = current.display(name), changed.display(name)
        if getattr(changed, name) == getattr(current, name):
            return SettingChange(label(name), old, new)
        stored = changed.to_dict()
        settings = {**chat.settings, **{key: stored[key] for key in keys}}
        await uow.chats.change(chat_id, settings=settings)
        details = {"setting": label(name), "old": old, "new": new}
        await uow.audit.append(chat_id, actor.id, "set", now, details)
        return SettingChange(label(name), old, new)

    def _proposed(self, current: Settings, key: str, value: str) -> tuple[str, Settings, list[str]]:
        """What ``/set key value`` makes of ``current``: the field, the new settings and
        the fields to store (a new game brings its table's rake and bet range)."""
        try:
            name, changed = current.changed(key, value)
        except SettingError as error:
            raise GameError(f"bad_setting.{error.reason}", **error.params) from None
        keys = [name]
        if name == "ruleset" and changed.ruleset != current.ruleset:
            changed = changed.with_table_defaults(self.group_settings.defaults)
            keys += list(CARD_TABLE_DEFAULTS)
        return name, changed, keys


class _SettingsMoved(Exception):
    """The group's settings are not those a change's odds were counted for."""

    def __init__(self, settings: Settings) -> None:
        super().__init__("the group's settings changed meanwhile")
        self.settings = settings
