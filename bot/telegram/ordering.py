"""One chat at a time: a per-chat turn that deadlines take before the chat's waiting
commands, and the update processor that handles each chat's updates in order."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from bot.priority import PriorityTurn
from bot.telegram.views.buttons import ButtonPress


class ChatLocks:
    """One lock per chat, which a deadline takes before the chat's waiting commands (a
    ``PriorityTurn`` of one slot): a command handled after its round's deadline is refused
    whichever goes first, so letting the deadline go ahead changes no outcome, and it no
    longer waits behind a busy chat's queue.

    A chat's lock exists only while someone holds it or waits for it, so the map is as
    large as the number of chats busy at this moment, however many chats ever wrote.
    """

    def __init__(self) -> None:
        self._locks: dict[int, tuple[PriorityTurn, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def turn(self, chat_id: int, *, urgent: bool = False) -> AsyncIterator[None]:
        """Hold the chat's turn while inside (``urgent``: before its waiting commands)."""
        lock, users = self._locks.get(chat_id) or (PriorityTurn(), 0)
        self._locks[chat_id] = (lock, users + 1)
        try:
            async with lock.turn(urgent):
                yield
        finally:
            lock, users = self._locks[chat_id]
            if users == 1:
                del self._locks[chat_id]
            else:
                self._locks[chat_id] = (lock, users - 1)


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Processes updates of different chats concurrently and those of one chat in order,
    but for a Grab button's press, which takes no turn of its chat.

    A grab is one player's step on the round its button names, checked against the round
    as the database holds it, and no grab position is worth more than another
    (docs/rules.md §6; the card games deal when betting closes, §7), so its order among
    the chat's other updates changes nothing anyone is owed. (A bet's order does:
    winners are paid in the order they bet, and a full table refuses the last.) Ten
    players pressing Grab together then go into two writes instead of ten in a row, and
    their toasts come back together (``bench/bench_real_groups.py``): SQLite's one writer
    writes the waiting ones in one transaction (``bot.store.write_batches``), PostgreSQL
    those that came while one was written in one compare-and-set
    (``bot.store.gatherings``)."""

    def __init__(self, locks: ChatLocks, max_concurrent_updates: int = 512) -> None:
        super().__init__(max_concurrent_updates)
        self.locks = locks

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None or _is_grab(update):
            await coroutine
            return
        async with self.locks.turn(chat.id):
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""


def _is_grab(update: object) -> bool:
    """Whether ``update`` is a press of a round's Grab button."""
    query = update.callback_query if isinstance(update, Update) else None
    press = ButtonPress.decode(query.data or "") if query is not None else None
    return press is not None and press.action == "grab"
