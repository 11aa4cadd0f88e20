"""Answers to the people who asked: a toast for a button, a reply message for a command,
within the group's share of Telegram's send limit, and never dropped.

A group may receive about 20 messages a minute; the board and the results need some of
them. Replies get ``per_minute`` of those. When more answers come in than that, the ones
waiting are folded into one message (a line per person) sent when the next slot frees,
so everybody gets an answer, a little later and combined.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from telegram import Update
from telegram.constants import ChatType

from bot.engine.errors import GameError
from bot.telegram.budget import Priority, SendBudget
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings
from bot.telegram.messenger import Messenger

log = logging.getLogger(__name__)

#: Replies a group may get per minute; the rest of Telegram's ~20 a minute stays free for
#: boards and results.
REPLIES_PER_MINUTE = 10
#: How far behind the bot's overall rate may be for a stake to be confirmed by a reply.
CONFIRM_WITHIN_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer waiting for its chat's next send: to whom (as shown), in reply to what."""

    name: str
    text: str
    reply_to: int


def combined(answers: list[Answer]) -> str:
    """Several answers as one message: a line each, led by whom it answers."""
    return "\n".join(f"<b>{a.name}</b>: {a.text}" if a.name else a.text for a in answers)


class Replies:
    """Replies and toasts. In a group, answers wait for a slot of the group's budget and
    go out together when several wait; in a private chat, at once; a button's answer is
    its toast, which costs the group nothing."""

    def __init__(
        self,
        messenger: Messenger,
        outbox: ChatOutbox,
        chats: ChatSettings,
        *,
        per_minute: int = REPLIES_PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.messenger = messenger
        self.outbox = outbox
        self.chats = chats
        self.budget = SendBudget(per_minute, clock=clock)
        #: Answers waiting per group; a group is here only while some wait.
        self._waiting: dict[int, list[Answer]] = {}
        #: The timer of each group waiting for a slot (one at a time; gone once it fired).
        self._timers: dict[int, asyncio.TimerHandle] = {}

    def reply(self, update: Update, text: str) -> None:
        """Answer whoever sent ``update``: a toast for a button, else a reply."""
        if update.callback_query is not None:
            self.toast(update.callback_query.id, text)
            return
        message, chat, user = update.effective_message, update.effective_chat, update.effective_user
        if message is None or chat is None:
            return
        if chat.type == ChatType.PRIVATE:
            self.outbox.put(chat.id, partial(self._send, chat.id, text, message.message_id))
            return
        name = html.escape((user.first_name or user.username or str(user.id))[:64]) if user else ""
        self._wait(chat.id, Answer(name, text, message.message_id))

    def confirm(self, update: Update, text: str) -> None:
        """Confirm a stake to whoever placed it: a toast for a button; a reply if the
        group's budget has a slot now and the bot's overall rate would send it within
        ``CONFIRM_WITHIN_SECONDS``. Otherwise the board, which lists every bid and bet, is
        the confirmation: one that waited for a slot would come after the phase it
        confirms had moved on, and under the overall rate every group's confirmations
        would hold up each other's answers and boards."""
        if self.will_confirm(update):
            self.reply(update, text)

    def will_confirm(self, update: Update) -> bool:
        """Whether ``confirm`` would send its text now (see there): under load a group's
        stakes mostly go unconfirmed, and their text need not be written."""
        chat = update.effective_chat
        in_group = update.callback_query is None and chat is not None
        if in_group and chat is not None and chat.type != ChatType.PRIVATE:
            slot_free = chat.id not in self._waiting and self.budget.wait(chat.id) <= 0
            on_time = self.messenger.rate.wait_ahead(Priority.ANSWER) <= CONFIRM_WITHIN_SECONDS
            return slot_free and on_time
        return True

    async def reply_error(self, update: Update, error: GameError) -> None:
        """Explain a refused command in the group's language."""
        chat = update.effective_chat
        if chat is None:
            return
        params = {k: html.escape(v) if isinstance(v, str) else v for k, v in error.params.items()}
        self.reply(update, await self.chats.text(chat.id, f"error.{error.key}", **params))

    def toast(self, query_id: str, text: str) -> None:
        """Answer a button press without holding the chat's turn for the round trip."""
        self.outbox.put_aside(partial(self.messenger.toast, query_id, text))

    def tell(self, chat_id: int, text: str) -> None:
        """Say something to the whole group (no one asked; it takes a slot like a reply)."""
        self._wait(chat_id, Answer("", text, 0))

    def tell_error(self, chat_id: int, error: GameError) -> None:
        """Tell the group why something it expected (a round starting) did not happen."""

        async def render() -> None:
            text = await self.chats.text(chat_id, f"error.{error.key}", **error.params)
            self.tell(chat_id, text)

        self.outbox.put(chat_id, render)

    def sizes(self) -> dict[str, int]:
        """Entries kept now: groups with answers waiting, timers set for them, and groups
        whose recent sends the budget counts."""
        return {
            "waiting": len(self._waiting),
            "timers": len(self._timers),
            "budget": len(self.budget),
        }

    @property
    def waiting(self) -> int:
        """Answers not sent yet, in every group."""
        return sum(len(answers) for answers in self._waiting.values())

    def _wait(self, chat_id: int, answer: Answer) -> None:
        answers = self._waiting.setdefault(chat_id, [])
        answers.append(answer)
        if len(answers) == 1:
            self._when_free(chat_id)

    def _when_free(self, chat_id: int) -> None:
        """Queue the chat's waiting answers once its budget has a slot."""
        delay = self.budget.wait(chat_id)
        if delay <= 0:
            # Beside the chat's queue: answers wait their turn behind every more urgent
            # message of the bot, and the chat's board and results must not wait behind them.
            self.outbox.put_aside(partial(self._send_waiting, chat_id))
            return
        earlier = self._timers.pop(chat_id, None)
        if earlier is not None:
            earlier.cancel()
        loop = asyncio.get_running_loop()
        self._timers[chat_id] = loop.call_later(delay, self._timer_fired, chat_id)

    def _timer_fired(self, chat_id: int) -> None:
        self._timers.pop(chat_id, None)
        self._when_free(chat_id)

    async def _send_waiting(self, chat_id: int) -> None:
        if self.budget.wait(chat_id) > 0:  # another send took the slot meanwhile
            self._when_free(chat_id)
            return
        answers = self._waiting.pop(chat_id, [])
        if not answers:
            return
        self.budget.take(chat_id)
        if len(answers) == 1:
            only = answers[0]
            await self._send(chat_id, only.text, only.reply_to or None)
            return
        await self.messenger.send(chat_id, combined(answers))

    async def _send(self, chat_id: int, text: str, reply_to: int | None) -> None:
        await self.messenger.send(chat_id, text, reply_to=reply_to)

    def _stop_timers(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def abandon(self) -> None:
        """Drop the answers waiting for a slot (stopping without sending them)."""
        self._stop_timers()
        self._waiting.clear()

    async def drain(self, timeout: float) -> None:
        """Send what waits now, whatever the budget (before stopping)."""
        self._stop_timers()
        for chat_id in list(self._waiting):
            text = combined(self._waiting.pop(chat_id))
            self.outbox.put(chat_id, partial(self.messenger.send, chat_id, text))
        await self.outbox.drain(timeout)
