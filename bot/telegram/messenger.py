"""The shell's Bot API calls: sending, editing and deleting HTML messages and answering
button toasts; what to do when Telegram refuses one, and trying again one that failed on
the way (``bot.telegram.retries``)."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from telegram import InlineKeyboardMarkup, InputFile
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError, TimedOut

from bot.telegram.budget import GROUP_SENDS_PER_MINUTE, Priority, SendBudget, SendRate
from bot.telegram.group_slots import GroupSlots, SharedSends, Slot, Waiting
from bot.telegram.reachability import Reachability
from bot.telegram.retries import (
    MESSAGES,
    TOASTS,
    Delivery,
    DeliveryObserver,
    Retrying,
    Unobserved,
    is_refusal,
    with_retries,
)
from bot.telegram.strays import StrayCopies
from bot.telegram.telegram_needs import BotApi

log = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
#: Telegram's limit on a photo's or an animation's caption (after entities are parsed).
MAX_CAPTION_LENGTH = 1024
#: What an edit counts for against the bot's overall rate, a message sent counting 1:
#: Telegram's limits weigh edits less than new messages, but not nothing. Deleting a
#: message is not counted.
EDIT_COST = 0.5
#: Telegram cuts a toast at 200 characters.
MAX_TOAST_LENGTH = 200
_TAG = re.compile(r"</?[a-z]+[^>]*>")
_T = TypeVar("_T")
#: What a message shows, as a board's composer returns it.
Content = tuple[str, InlineKeyboardMarkup | None]


@dataclass(frozen=True, slots=True)
class Edit:
    """What one message should show from now on."""

    chat_id: int
    message_id: int
    text: str
    markup: InlineKeyboardMarkup | None


def split_message(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Cut text into messages of at most ``limit`` characters, between lines (each line of
    ours closes the tags it opens). A single longer line is cut where it must be."""
    chunks: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                chunks.append(current)
                current = ""
            chunks.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            candidate = line
        current = candidate
    if current or not chunks:
        chunks.append(current)
    return chunks


def plain_text(text: str) -> str:
    """Telegram HTML as plain text (a toast shows no markup)."""
    return html.unescape(_TAG.sub("", text))


class Messenger:
    """Sends, edits and deletes the bot's messages and answers toasts, through one
    ``Bot`` (attached once the ``Application`` exists). A refusal by Telegram is logged
    and reported as ``None``/``False``; the caller decides whether it matters. A failure
    on the way (a 5xx, a reset, a timeout) is tried again for a while (``retrying``), and
    then reaches the caller, which keeps what must not be lost to send it later.

    Every message sent to a group counts against its slots (Telegram's ~20 a minute:
    ``group_sends``, this process's count, and ``shared_sends``, every worker's;
    ``bot.telegram.group_slots``): one that would exceed them waits for a slot, in its
    chat's outbox, rather than being refused by Telegram. Callers that can do without a
    send (a phase notice, which an edit can stand in for) look at the room left first.
    Every message and edit then waits for its turn in ``rate`` (Telegram's ~30 a second
    for the whole bot), the most
    urgent first: results, phase notices, answers, edits (which count for less); each try
    again waits its turn too.
    """

    def __init__(
        self,
        group_sends: SendBudget | None = None,
        rate: SendRate | None = None,
        *,
        observer: DeliveryObserver | None = None,
        retrying: Retrying = MESSAGES,
        toast_retrying: Retrying = TOASTS,
        shared_sends: SharedSends | None = None,
        reachability: Reachability | None = None,
    ) -> None:
        self._bot: BotApi | None = None
        #: Told by the transport whether Telegram answers: wakes the tries waiting.
        self.reachability = reachability if reachability is not None else Reachability()
        # Not ``or``: a budget that counts no chat yet is empty, hence falsy.
        self.group_sends = (
            group_sends if group_sends is not None else SendBudget(GROUP_SENDS_PER_MINUTE)
        )
        self.rate = rate if rate is not None else SendRate()
        self.observer: DeliveryObserver = observer or Unobserved()
        self.retrying = retrying
        self.toast_retrying = toast_retrying
        #: Each group's slots in Telegram's limit, this process's and every worker's.
        self.slots = GroupSlots(self.group_sends, shared_sends)
        #: Copies a lost answer may have left with live buttons (``bot.telegram.strays``).
        self.strays = StrayCopies(
            lambda: self.bot,
            lambda: self.rate.acquire(Priority.EDIT, EDIT_COST),
            retrying=retrying,
        )

    def attach(self, bot: BotApi) -> None:
        """Use ``bot`` for every call from now on."""
        self._bot = bot

    @property
    def bot(self) -> BotApi:
        """The attached ``Bot``."""
        if self._bot is None:
            raise RuntimeError("the messenger has no bot attached yet")
        return self._bot

    async def _tried(
        self, call: Callable[[], Awaitable[_T]], delivery: Delivery, retrying: Retrying | None
    ) -> _T:
        return await with_retries(
            call,
            delivery,
            retrying or self.retrying,
            self.observer,
            reachability=self.reachability,
        )

    async def send(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
        *,
        priority: Priority = Priority.ANSWER,
        round_id: int | None = None,
    ) -> int | None:
        """Send an HTML message, in several if it is too long for one (the buttons go on
        the last); the first message's id, or ``None`` (logged) if Telegram refuses it.
        A part that fails on the way is tried again; one that still fails raises."""
        chunks = split_message(text)
        first: int | None = None
        for number, chunk in enumerate(chunks, start=1):
            slot = await self.slots.take(chat_id)

            async def attempt(chunk: str = chunk, number: int = number) -> int:
                await self.rate.acquire(priority)
                sent = await self.bot.send_message(
                    chat_id,
                    chunk,
                    parse_mode=ParseMode.HTML,
                    reply_markup=markup if number == len(chunks) else None,
                    reply_to_message_id=reply_to if number == 1 else None,
                    allow_sending_without_reply=True,
                )
                return sent.message_id

            delivery = Delivery(priority.name.lower(), "sendMessage", chat_id, round_id)
            try:
                message_id = await self._tried(attempt, delivery, None)
            except (BadRequest, Forbidden) as error:
                log.warning("chat %s refused a message: %s", chat_id, error)
                return first
            first = first or message_id
            await self._went_out(chat_id, message_id, slot)
        return first

    async def send_composed(
        self,
        chat_id: int,
        compose: Callable[[], Awaitable[Content | None]],
        *,
        priority: Priority,
        round_id: int | None = None,
        waiting: Waiting | None = None,
    ) -> int | None:
        """Send the message ``compose`` says once the chat's slot and the message's turn
        in the bot's rate have come, composed again before each try again: a board shows
        the round as it is when it goes out, not as it was when it was queued. ``None``
        from ``compose``: nothing to send (its phase is over). ``waiting`` hears how long
        the message will wait for the group's slot, before each wait. The message's id,
        or ``None`` if nothing was sent or Telegram refused it (logged)."""
        slot = await self.slots.take(chat_id, waiting)
        newest_before = self.strays.newest(chat_id)

        async def attempt() -> int | None:
            await self.rate.acquire(priority)
            content = await compose()
            if content is None:
                return None
            text, markup = content
            try:
                sent = await self.bot.send_message(
                    chat_id, text, parse_mode=ParseMode.HTML, reply_markup=markup
                )
            except TimedOut:  # Telegram may have it all the same, buttons and all
                self.strays.lost(chat_id, newest_before)
                raise
            return sent.message_id

        delivery = Delivery(priority.name.lower(), "sendMessage", chat_id, round_id)
        try:
            message_id = await self._tried(attempt, delivery, None)
        except (BadRequest, Forbidden) as error:
            log.warning("chat %s refused a message: %s", chat_id, error)
            return None
        if message_id is not None:
            await self._went_out(chat_id, message_id, slot)
        return message_id

    async def send_media(
        self,
        chat_id: int,
        kind: Literal["photo", "animation"],
        data: bytes,
        filename: str,
        caption: str = "",
        markup: InlineKeyboardMarkup | None = None,
        *,
        priority: Priority = Priority.ANSWER,
        round_id: int | None = None,
        retrying: Retrying | None = None,
    ) -> int | None:
        """Upload a picture (``kind`` "photo") or an animation ("animation": a GIF) with an
        HTML caption of at most ``MAX_CAPTION_LENGTH`` characters as users see it (the
        caller keeps it within); its message id, or ``None`` if it did not go out for any
        reason (refused, or failing on the way for as long as ``retrying`` allows; logged):
        a picture is a nicety, and the caller sends text instead."""
        slot = await self.slots.take(chat_id)
        send = self.bot.send_photo if kind == "photo" else self.bot.send_animation

        async def attempt() -> int:
            await self.rate.acquire(priority)
            upload = InputFile(data, filename=filename)
            sent = await send(
                chat_id,
                upload,
                caption=caption or None,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )
            return sent.message_id

        method = "sendPhoto" if kind == "photo" else "sendAnimation"
        delivery = Delivery(priority.name.lower(), method, chat_id, round_id)
        try:
            message_id = await self._tried(attempt, delivery, retrying)
        except TelegramError as error:
            log.warning("chat %s: the %s did not go out: %s", chat_id, kind, error)
            return None
        await self._went_out(chat_id, message_id, slot)
        return message_id

    async def _went_out(self, chat_id: int, message_id: int, slot: Slot) -> None:
        """Telegram took a message: a copy a lost answer left before it loses its
        buttons, and its group slot counts from now."""
        self.strays.sent(chat_id, message_id)
        await self.slots.delivered(chat_id, slot)

    async def edit(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        *,
        priority: Priority = Priority.EDIT,
        round_id: int | None = None,
    ) -> bool:
        """Replace a message's text and buttons; whether Telegram shows the new text."""

        async def compose() -> Edit:
            return Edit(chat_id, message_id, text, markup)

        return await self.edit_on_its_turn(compose, priority=priority, round_id=round_id)

    async def edit_on_its_turn(
        self,
        compose: Callable[[], Awaitable[Edit | None]],
        *,
        priority: Priority,
        round_id: int | None = None,
    ) -> bool:
        """Edit a message with what ``compose`` says it should show once the edit's turn
        in the bot's rate has come (``None``: nothing to change); whether Telegram shows
        it. An edit that waited behind busier traffic thus shows the latest state, and
        changes made while it waited need no edit of their own; one tried again is
        composed again. An edit still failing on the way after its tries raises."""

        async def attempt() -> bool:
            await self.rate.acquire(priority, EDIT_COST)
            edit = await compose()
            return True if edit is None else await self._edit_now(edit)

        delivery = Delivery(priority.name.lower(), "editMessageText", None, round_id)
        try:
            return await self._tried(attempt, delivery, None)
        except (BadRequest, Forbidden) as error:
            log.warning("round %s: editing its board: %s", round_id, error)
            return False

    async def _edit_now(self, edit: Edit) -> bool:
        try:
            await self.bot.edit_message_text(
                edit.text,
                chat_id=edit.chat_id,
                message_id=edit.message_id,
                parse_mode=ParseMode.HTML,
                reply_markup=edit.markup,
            )
        except BadRequest as error:
            if "not modified" in str(error).lower():
                return True
            raise
        return True

    async def take_down(
        self, chat_id: int, message_id: int, *, round_id: int | None = None
    ) -> bool:
        """Delete one of the bot's messages or, where Telegram will not (too old to delete,
        or its answer lost), take its buttons off; whether that is settled: done, or
        refused for good (the message is gone). False: Telegram could not be reached for
        as long as a message is tried, and the message may still show its buttons."""

        async def delete() -> bool:
            return await self.bot.delete_message(chat_id, message_id)

        try:
            await self._tried(delete, Delivery("delete", "deleteMessage", chat_id, round_id), None)
            return True
        except TelegramError as error:
            log.info("chat %s: deleting message %s: %s", chat_id, message_id, error)

        async def disarm() -> None:
            await self.rate.acquire(Priority.CLOSING, EDIT_COST)
            try:
                await self.bot.edit_message_reply_markup(
                    chat_id=chat_id, message_id=message_id, reply_markup=None
                )
            except BadRequest as error:
                if "not modified" not in str(error).lower():
                    raise

        delivery = Delivery("closing", "editMessageReplyMarkup", chat_id, round_id)
        try:
            await self._tried(disarm, delivery, None)
            return True
        except TelegramError as error:
            log.info("chat %s: taking the buttons off message %s: %s", chat_id, message_id, error)
            return is_refusal(error)

    async def toast(self, query_id: str, text: str) -> bool:
        """Answer a button press with a short notice (plain text, at most 200 characters),
        tried again while Telegram still takes it (``toast_retrying``); whether Telegram
        answered (took it, or refused it: too old, or answered before, as after a restart
        that got the press again), False if it never reached Telegram."""

        async def attempt() -> bool:
            return await self.bot.answer_callback_query(
                query_id, plain_text(text)[:MAX_TOAST_LENGTH]
            )

        delivery = Delivery("toast", "answerCallbackQuery")
        try:
            await self._tried(attempt, delivery, self.toast_retrying)
        except TelegramError as error:
            refused = is_refusal(error)
            log.log(logging.INFO if refused else logging.WARNING, "callback answer: %s", error)
            return refused
        return True
