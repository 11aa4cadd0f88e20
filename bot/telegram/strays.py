"""Copies of a message whose answer was lost: when a send with buttons timed out,
Telegram may have taken it all the same, and then the try again (or, if the tries gave
up, the board sent anew later) too. The copy's id was never learnt, and it would keep
its buttons after its round ended. A chat's message ids count up, so the copy is one of
the few ids after the newest the bot knew there before (its own, or one it received),
up to the next message of the bot's that went through there: each of those loses its
buttons (an edit of a message that is not the bot's, or has none, is refused,
harmlessly).

Written by hand: the Bot API has no idempotent send, nor a way to look a message up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from cachetools import LRUCache
from telegram.error import TelegramError

from bot.telegram.retries import MESSAGES, Delivery, Retrying, Unobserved, with_retries
from bot.telegram.telegram_needs import BotApi

log = logging.getLogger(__name__)

#: Chats whose newest message id from the bot is remembered.
CHATS_REMEMBERED = 100_000
#: Ids looked at below a message that went through after a lost answer, at most.
IDS_LOOKED_AT = 10


class StrayCopies:
    """Finds and disarms the copies a lost answer may have left (see the module)."""

    def __init__(
        self,
        bot: Callable[[], BotApi],
        turn: Callable[[], Awaitable[None]],
        *,
        retrying: Retrying = MESSAGES,
    ) -> None:
        self._bot = bot
        #: Waits for an edit's turn in the bot's rate.
        self._turn = turn
        #: How long a take-off that fails on the way is tried again (a 502 or a reset
        #: must not leave a copy live); refusals, most of the ids, are not counted.
        self._retrying = retrying
        self._newest: LRUCache[int, int] = LRUCache(CHATS_REMEMBERED)
        #: Chats where a send with buttons lost its answer: the newest id before it.
        self._lost_after: LRUCache[int, int] = LRUCache(CHATS_REMEMBERED)
        self._tasks: set[asyncio.Task[None]] = set()

    def newest(self, chat_id: int) -> int | None:
        """The newest id of a message in the chat, as far as the bot knows (its own, and
        those it received)."""
        return self._newest.get(chat_id)

    def saw(self, chat_id: int, message_id: int) -> None:
        """A message the bot received in the chat: a copy it sends later comes after it."""
        if message_id > self._newest.get(chat_id, 0):
            self._newest[chat_id] = message_id

    def lost(self, chat_id: int, after: int | None) -> None:
        """A send with buttons to the chat lost its answer (a timeout): Telegram may have
        taken it, after ``after``, the newest id known before it (``None``: unknown,
        nothing to go by). The next message that goes through there bounds the copy."""
        if after is not None and after < self._lost_after.get(chat_id, after + 1):
            self._lost_after[chat_id] = after

    def sent(self, chat_id: int, message_id: int) -> None:
        """The bot sent ``message_id`` to the chat; a copy a lost answer may have left
        there, before it, loses its buttons."""
        if message_id > self._newest.get(chat_id, 0):
            self._newest[chat_id] = message_id
        after = self._lost_after.pop(chat_id, None)
        if after is not None:
            self.disarm_between(chat_id, after, message_id)

    def disarm_between(self, chat_id: int, after: int, before: int) -> None:
        """Take the buttons off any copy among the ids between ``after`` (the newest known
        before the send that may have left one) and ``before`` (the next that went
        through), at most ``IDS_LOOKED_AT`` of them, the oldest: the copy came soon after
        ``after``, and the players' messages that came later (many, after an outage) are
        between it and ``before``."""
        if before - after <= 1:
            return
        ids = range(after + 1, min(before, after + 1 + IDS_LOOKED_AT))
        task = asyncio.get_running_loop().create_task(self._disarm(chat_id, ids))
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)

    async def _disarm(self, chat_id: int, ids: range) -> None:
        delivery = Delivery("closing", "editMessageReplyMarkup", chat_id)
        for message_id in ids:

            async def take_off(message_id: int = message_id) -> None:
                await self._turn()
                await self._bot().edit_message_reply_markup(
                    chat_id=chat_id, message_id=message_id, reply_markup=None
                )

            try:
                await with_retries(take_off, delivery, self._retrying, Unobserved())
                log.info("chat %s: took the buttons off a copy, message %s", chat_id, message_id)
            except TelegramError:
                pass  # not the bot's, not a copy, or gone: nothing to take off
            except Exception:  # a bug: said, and the other ids still looked at
                log.exception("chat %s: disarming message %s failed", chat_id, message_id)
