"""Answers to the people who asked: a toast for a button, a reply message for a command,
within the group's share of Telegram's send limit, and never dropped.

A group may receive about 20 messages a minute; the board and the results need some of
them. Replies get ``per_minute`` of those. When more answers come in than that, the ones
waiting are folded into one message (a line per person) sent when the next slot frees,
so everybody gets an answer, a little later and combined.

An answer leaves its queue only once Telegram has it: one whose send failed on the way
(after the messenger's tries) goes back to the front of its group's queue and is tried
again at the next slot, whole or split again, until ``ANSWER_GIVE_UP_SECONDS``. An answer
that waits (or whose send is slow) is kept in the database meanwhile
(``bot.telegram.answers``), so that one that waited when its worker died is sent by
another, or by it once restarted. A toast that cannot reach Telegram while the press is
fresh goes to the chat as an answer.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from collections.abc import Callable
from functools import partial

from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot.engine.errors import GameError
from bot.telegram.answers import Answer, AnswerKeeping, batches, combined
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
#: How long after a failed send a group's answers are tried again (at the soonest).
RETRY_SECONDS = 2.0
#: How long an answer is kept trying: past it, what it answers is long gone.
ANSWER_GIVE_UP_SECONDS = 600.0
#: How long a send of answers may take before they are kept in the database: a send that
#: takes longer is waiting for Telegram (tried again, or behind the bot's rate).
KEEP_SENDING_AFTER_SECONDS = 1.0


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
        retry_seconds: float = RETRY_SECONDS,
        keeping: AnswerKeeping | None = None,
        keep_sending_after: float = KEEP_SENDING_AFTER_SECONDS,
    ) -> None:
        self.messenger = messenger
        self.outbox = outbox
        self.chats = chats
        self.clock = clock
        self.retry_seconds = retry_seconds
        self.keep_sending_after = keep_sending_after
        self.keeping = keeping if keeping is not None else AnswerKeeping(None, clock=clock)
        self.budget = SendBudget(per_minute, clock=clock)
        #: Answers waiting per group; a group is here only while some wait.
        self._waiting: dict[int, list[Answer]] = {}
        #: The timer of each group waiting for a slot (one at a time; gone once it fired).
        self._timers: dict[int, asyncio.TimerHandle] = {}

    def reply(self, update: Update, text: str) -> None:
        """Answer whoever sent ``update``: a toast for a button (in the chat if it cannot
        reach Telegram in time), else a reply."""
        chat, user, query = update.effective_chat, update.effective_user, update.callback_query
        name = html.escape((user.first_name or user.username or str(user.id))[:64]) if user else ""
        if query is not None:
            in_chat = None if chat is None else (chat.id, chat.type == ChatType.PRIVATE, name)
            self.toast(query.id, text, or_in_chat=in_chat)
            return
        # Not asked of a press: its message may be one PTB's effective_message warns of.
        message = update.effective_message
        if message is None or chat is None:
            return
        self._answer_in_chat(chat.id, chat.type == ChatType.PRIVATE, name, text, message.message_id)

    def _answer_in_chat(
        self, chat_id: int, private: bool, name: str, text: str, reply_to: int
    ) -> None:
        if private:
            self.outbox.put(chat_id, partial(self._send, chat_id, text, reply_to or None))
            return
        self._wait(chat_id, Answer(name, text, reply_to, self.clock()))

    def confirm(self, update: Update, text: str) -> None:
        """Confirm a stake to whoever placed it: a toast for a button; a reply if the
        group's budget has a slot now and the bot's overall rate would send it within
        ``CONFIRM_WITHIN_SECONDS`` (a rate busy with other groups' sends but with room
        still answers: ``SendRate.tight`` is for what can be done without, and the player
        asked). Otherwise the board, which lists every bid and bet, is the confirmation:
        one that waited for a slot would come after the phase it confirms had moved on,
        and under the overall rate every group's confirmations would hold up each other's
        answers and boards."""
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
        self.reply(update, await self.error_text(chat.id, error))

    async def error_text(self, chat_id: int, error: GameError) -> str:
        """A refusal as the bot words it in the group, its parameters escaped (HTML)."""
        params = {k: html.escape(v) if isinstance(v, str) else v for k, v in error.params.items()}
        return await self.chats.text(chat_id, f"error.{error.key}", **params)

    def toast(
        self, query_id: str, text: str, *, or_in_chat: tuple[int, bool, str] | None = None
    ) -> None:
        """Answer a button press without holding the chat's turn for the round trip. If
        the toast cannot reach Telegram while it would still take it, the answer goes to
        the chat ``or_in_chat`` (its id, whether it is private, whom it answers) instead;
        one Telegram refused (too old, or answered before) is not repeated there."""

        async def answer() -> None:
            if await self.messenger.toast(query_id, text) or or_in_chat is None:
                return
            chat_id, private, name = or_in_chat
            self._answer_in_chat(chat_id, private, name, text, 0)

        self.outbox.put_aside(answer)

    def tell(self, chat_id: int, text: str) -> None:
        """Say something to the whole group (no one asked; it takes a slot like a reply)."""
        self._wait(chat_id, Answer("", text, 0, self.clock()))

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
        """Queue an answer for the group's next slot; kept in the database unless it goes
        out at once."""
        answers = self._waiting.setdefault(chat_id, [])
        answers.append(answer)
        goes_now = len(answers) == 1 and self.budget.wait(chat_id) <= 0
        if len(answers) == 1:
            self._when_free(chat_id)
        if not goes_now:
            self.keeping.keep(chat_id, answer)

    async def resume_kept(self) -> int:
        """Queue the kept answers no worker holds any more (one died, or this one before
        a restart): they go at their groups' next slots. How many there were."""
        taken = await self.keeping.take_over()
        for chat_id, answer in taken:
            answers = self._waiting.setdefault(chat_id, [])
            answers.append(answer)
            if len(answers) == 1:
                self._when_free(chat_id)
        return len(taken)

    async def keep_claims(self) -> None:
        """Renew this worker's claim on the answers it keeps (now and then)."""
        await self.keeping.renew()

    def _when_free(self, chat_id: int, *, not_before: float = 0.0) -> None:
        """Queue the chat's waiting answers once its budget has a slot (and not before
        ``not_before`` seconds)."""
        delay = max(self.budget.wait(chat_id), not_before)
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
        """Send the chat's waiting answers that fit one message; those left wait for the
        next slot, and the message goes back to the front if it fails on the way."""
        if self.budget.wait(chat_id) > 0:  # another send took the slot meanwhile
            self._when_free(chat_id)
            return
        answers = self._fresh(chat_id, self._waiting.pop(chat_id, []))
        if not answers:
            return
        message, *later = batches(answers)
        self.budget.take(chat_id)
        if later:
            self._put_back(chat_id, [answer for batch in later for answer in batch])
        # A slow send waits for Telegram (its tries): kept meanwhile, as waiting answers are.
        slow = asyncio.get_running_loop().call_later(
            self.keep_sending_after, self._keep_all, chat_id, message
        )
        try:
            if len(message) == 1 and message[0].reply_to:
                await self._send(chat_id, message[0].text, message[0].reply_to)
            else:
                await self.messenger.send(chat_id, combined(message))
        except Exception as error:  # on the way (logged by the messenger's tries), or a bug
            log.warning(
                "chat %s: %d answers kept to be sent again: %s",
                chat_id,
                len(message),
                error,
                exc_info=not isinstance(error, TelegramError),
            )
            self._keep_all(chat_id, message)
            self._put_back(chat_id, message, not_before=self.retry_seconds)
            return
        finally:
            slow.cancel()
        # Sent, or refused for good (logged): either way Telegram answered.
        self.keeping.done(message)

    def _keep_all(self, chat_id: int, answers: list[Answer]) -> None:
        for answer in answers:
            self.keeping.keep(chat_id, answer)

    def _fresh(self, chat_id: int, answers: list[Answer]) -> list[Answer]:
        """The answers still worth sending; those waiting past ``ANSWER_GIVE_UP_SECONDS``
        are dropped (logged and counted)."""
        oldest = self.clock() - ANSWER_GIVE_UP_SECONDS
        fresh = [answer for answer in answers if answer.since >= oldest]
        if len(fresh) < len(answers):
            self.keeping.done([answer for answer in answers if answer.since < oldest])
            dropped = len(answers) - len(fresh)
            log.warning("chat %s: %d answers given up after failing for too long", chat_id, dropped)
            for _ in range(dropped):
                self.messenger.observer.delivery_failed("answer", "too_old")
        return fresh

    def _put_back(self, chat_id: int, answers: list[Answer], *, not_before: float = 0.0) -> None:
        """Put ``answers`` back at the front of the chat's queue (before those that came
        meanwhile), to go at the next slot (not before ``not_before`` seconds)."""
        waiting = self._waiting.get(chat_id)
        if waiting is not None:  # a send of those is already on its way or timed
            waiting[:0] = answers
            return
        self._waiting[chat_id] = list(answers)
        self._when_free(chat_id, not_before=not_before)

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
        """Send what waits now, whatever the budget (before stopping); what does not go
        out stays kept, for the next start."""
        self._stop_timers()
        for chat_id in list(self._waiting):
            for message in batches(self._waiting.pop(chat_id)):
                self.outbox.put(chat_id, partial(self._send_and_forget, chat_id, message))
        await self.outbox.drain(timeout)
        await self.keeping.drain(timeout)

    async def _send_and_forget(self, chat_id: int, message: list[Answer]) -> None:
        await self.messenger.send(chat_id, combined(message))
        self.keeping.done(message)
