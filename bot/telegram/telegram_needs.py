"""What the shell's collaborators need of python-telegram-bot's objects, as protocols: the
Bot API methods they call (``BotApi``) and the timers they set (``Timers``).

A collaborator is typed by what it calls; python-telegram-bot's ``Bot`` (and the
``ExtBot`` an ``Application`` has) and the loop's timers (``bot.telegram.timers``)
satisfy these, and a test's fake that implements them is checked by mypy against the
same list, as the service's fakes are against ``bot.telegram.service_needs``. The
parameters the shell passes by name are keyword-only here: ``Bot`` takes them in another
order than the shell lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from telegram import (
    BotCommand,
    BotCommandScope,
    ChatMember,
    InlineKeyboardMarkup,
    InputFile,
    Message,
)


class BotApi(Protocol):
    """The Bot API methods the shell calls: sending, editing and deleting its messages,
    answering button presses, asking who is an admin, and publishing its command menus."""

    async def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
        reply_to_message_id: int | None = None,
        allow_sending_without_reply: bool | None = None,
    ) -> Message: ...

    async def send_photo(
        self,
        chat_id: int,
        photo: InputFile,
        *,
        caption: str | None = None,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> Message: ...

    async def send_animation(
        self,
        chat_id: int,
        animation: InputFile,
        *,
        caption: str | None = None,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> Message: ...

    async def edit_message_text(
        self,
        text: str,
        *,
        chat_id: int,
        message_id: int,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> Message | bool: ...

    async def edit_message_reply_markup(
        self, *, chat_id: int, message_id: int, reply_markup: InlineKeyboardMarkup | None = None
    ) -> Message | bool: ...

    async def delete_message(self, chat_id: int, message_id: int) -> bool: ...

    async def answer_callback_query(
        self, callback_query_id: str, text: str | None = None
    ) -> bool: ...

    async def get_chat_member(self, chat_id: int, user_id: int) -> ChatMember: ...

    async def set_my_commands(
        self,
        commands: Sequence[BotCommand],
        *,
        scope: BotCommandScope | None = None,
        language_code: str | None = None,
    ) -> bool: ...


#: What a timer calls, with the job's context (``context.job`` is the timer).
TimerCallback = Callable[[Any], Coroutine[Any, Any, Any]]


class Timer(Protocol):
    """A timer set (a ``Job``): it can be taken off before it fires."""

    def schedule_removal(self) -> None: ...


class Timers(Protocol):
    """Where the shell sets its timers (``bot.telegram.timers.LoopTimers``): once, and
    repeating; delays in seconds."""

    def run_once(
        self,
        callback: TimerCallback,
        when: float,
        *,
        data: object = None,
        name: str | None = None,
    ) -> Timer: ...

    def run_repeating(
        self,
        callback: TimerCallback,
        interval: float,
        *,
        first: float | None = None,
        name: str | None = None,
    ) -> Timer: ...
