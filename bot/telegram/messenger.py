"""The shell's Bot API calls: sending, editing and deleting HTML messages and answering
button toasts, and what to do when Telegram refuses one."""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from telegram import Bot, InlineKeyboardMarkup, InputFile
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.telegram.budget import GROUP_SENDS_PER_MINUTE, Priority, SendBudget, SendRate

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
    and reported as ``None``/``False``; the caller decides whether it matters.

    Every message sent to a group counts against ``group_sends`` (Telegram's ~20 a
    minute): one that would exceed it waits for a slot, in its chat's outbox, rather than
    being refused by Telegram. Callers that can do without a send (a phase notice, which
    an edit can stand in for) look at the room left first. Every message and edit then
    waits for its turn in ``rate`` (Telegram's ~30 a second for the whole bot), the most
    urgent first: results, phase notices, answers, edits (which count for less).
    """

    def __init__(self, group_sends: SendBudget | None = None, rate: SendRate | None = None) -> None:
        self._bot: Bot | None = None
        # Not ``or``: a budget that counts no chat yet is empty, hence falsy.
        self.group_sends = (
            group_sends if group_sends is not None else SendBudget(GROUP_SENDS_PER_MINUTE)
        )
        self.rate = rate if rate is not None else SendRate()

    def attach(self, bot: Bot) -> None:
        """Use ``bot`` for every call from now on."""
        self._bot = bot

    @property
    def bot(self) -> Bot:
        """The attached ``Bot``."""
        if self._bot is None:
            raise RuntimeError("the messenger has no bot attached yet")
        return self._bot

    async def send(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
        *,
        priority: Priority = Priority.ANSWER,
    ) -> int | None:
        """Send an HTML message, in several if it is too long for one (the buttons go on
        the last); the first message's id, or ``None`` (logged) if Telegram refuses it."""
        chunks = split_message(text)
        first: int | None = None
        for number, chunk in enumerate(chunks, start=1):
            await self._slot(chat_id)
            await self.rate.acquire(priority)
            try:
                sent = await self.bot.send_message(
                    chat_id,
                    chunk,
                    parse_mode=ParseMode.HTML,
                    reply_markup=markup if number == len(chunks) else None,
                    reply_to_message_id=reply_to if number == 1 else None,
                    allow_sending_without_reply=True,
                )
            except (BadRequest, Forbidden) as error:
                log.warning("chat %s refused a message: %s", chat_id, error)
                return first
            first = first or sent.message_id
        return first

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
    ) -> int | None:
        """Upload a picture (``kind`` "photo") or an animation ("animation": a GIF) with an
        HTML caption of at most ``MAX_CAPTION_LENGTH`` characters as users see it (the
        caller keeps it within); its message id, or ``None`` (logged) if refused."""
        await self._slot(chat_id)
        await self.rate.acquire(priority)
        upload = InputFile(data, filename=filename)
        send = self.bot.send_photo if kind == "photo" else self.bot.send_animation
        try:
            sent = await send(
                chat_id,
                upload,
                caption=caption or None,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )
        except (BadRequest, Forbidden) as error:
            log.warning("chat %s refused a %s: %s", chat_id, kind, error)
            return None
        return sent.message_id

    async def _slot(self, chat_id: int) -> None:
        """Wait until a group may be sent one more message, and count it."""
        if chat_id >= 0:  # a private chat: only the overall limit applies
            return
        while (wait := self.group_sends.wait(chat_id)) > 0:
            await asyncio.sleep(wait)
        self.group_sends.take(chat_id)

    async def edit(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        *,
        priority: Priority = Priority.EDIT,
    ) -> bool:
        """Replace a message's text and buttons; whether Telegram shows the new text."""
        await self.rate.acquire(priority, EDIT_COST)
        return await self._edit_now(Edit(chat_id, message_id, text, markup))

    async def edit_on_its_turn(
        self, compose: Callable[[], Awaitable[Edit | None]], *, priority: Priority
    ) -> bool:
        """Edit a message with what ``compose`` says it should show once the edit's turn
        in the bot's rate has come (``None``: nothing to change); whether Telegram shows
        it. An edit that waited behind busier traffic thus shows the latest state, and
        changes made while it waited need no edit of their own."""
        await self.rate.acquire(priority, EDIT_COST)
        edit = await compose()
        return True if edit is None else await self._edit_now(edit)

    async def _edit_now(self, edit: Edit) -> bool:
        chat_id, message_id = edit.chat_id, edit.message_id
        try:
            await self.bot.edit_message_text(
                edit.text,
                chat_id=chat_id,
                message_id=message_id,
                parse_mode=ParseMode.HTML,
                reply_markup=edit.markup,
            )
        except (BadRequest, Forbidden) as error:
            if "not modified" in str(error).lower():
                return True
            log.warning("chat %s: editing message %s: %s", chat_id, message_id, error)
            return False
        return True

    async def delete(self, chat_id: int, message_id: int) -> bool:
        """Delete one of the bot's messages; whether it is gone."""
        try:
            return await self.bot.delete_message(chat_id, message_id)
        except TelegramError as error:
            log.info("chat %s: deleting message %s: %s", chat_id, message_id, error)
            return False

    async def toast(self, query_id: str, text: str) -> None:
        """Answer a button press with a short notice (plain text, at most 200 characters)."""
        try:
            await self.bot.answer_callback_query(query_id, plain_text(text)[:MAX_TOAST_LENGTH])
        except TelegramError as error:
            log.info("callback answer refused: %s", error)
