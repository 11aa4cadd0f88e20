"""Updates as python-telegram-bot objects, the two the bot gets most built directly.

python-telegram-bot's ``Update.de_json`` is generic: it inspects each class's parameters
and sets every one of a ``Message``'s hundred or so attributes through a checked
``__setattr__``. Under load that was about a tenth of the bot's CPU
(``bench/bench_real_groups.py``'s profile), nearly all of it for two kinds of update:

- a press of one of the bot's buttons, which the bot reads by its data, its presser,
  and the chat and id of the pressed message;
- a plain text message (``/bet 20``, a bare number), read by its text and entities.

Those are built here with the classes' own constructors from the fields present, the
pressed message as an ``InaccessibleMessage``: python-telegram-bot's class for a message
known by its chat and id alone, which is all the bot reads of a message of its own that a
press brings (``bot.telegram.http.OWN_MESSAGE_FIELDS``). An update with any field not
listed here goes through ``Update.de_json`` whole, so nothing sent is ever dropped.
Written by hand: python-telegram-bot builds only through ``de_json``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from telegram import (
    Bot,
    CallbackQuery,
    Chat,
    InaccessibleMessage,
    Message,
    MessageEntity,
    TelegramObject,
    Update,
    User,
)
from telegram.ext import ExtBot
from telegram.request import BaseRequest

JsonDict = dict[str, Any]
_Built = TypeVar("_Built", bound=TelegramObject)


def _parameters(cls: type[TelegramObject]) -> frozenset[str]:
    """The fields of ``cls`` that its constructor takes by their JSON names."""
    return frozenset(inspect.signature(cls).parameters) - {"api_kwargs"}


#: A user's and a chat's fields are plain values named as their constructor's parameters,
#: which ``de_json`` passes on as they are.
_USER_FIELDS = _parameters(User)
_CHAT_FIELDS = _parameters(Chat)
_ENTITY_FIELDS = frozenset({"type", "offset", "length"})
_MESSAGE_REQUIRED = frozenset({"message_id", "date", "chat", "from", "text"})
_MESSAGE_FIELDS = _MESSAGE_REQUIRED | {"entities"}
_PRESS_REQUIRED = frozenset({"id", "from", "message", "chat_instance"})
_PRESS_FIELDS = _PRESS_REQUIRED | {"data"}
#: Of the pressed message: which it is, where (the rest is the bot's own; see above).
_PRESSED_REQUIRED = frozenset({"message_id", "chat", "date"})
_PRESSED_FIELDS = _PRESSED_REQUIRED | {"from"}


def update_of(data: JsonDict, bot: Bot) -> Update:
    """``data``, an update as Telegram sends it, as python-telegram-bot's ``Update``."""
    # An ExtBot's defaults may set a time zone for dates: only de_json applies them.
    if len(data) == 2 and "update_id" in data and getattr(bot, "defaults", None) is None:
        update_id = data["update_id"]
        if (press := _press(data.get("callback_query"), bot)) is not None:
            return _bound(Update(update_id, callback_query=press), bot)
        if (message := _message(data.get("message"), bot)) is not None:
            return _bound(Update(update_id, message=message), bot)
    return Update.de_json(data, bot)


def _press(data: object, bot: Bot) -> CallbackQuery | None:
    """A press of a button on a message, or None when it carries more than that."""
    if not (isinstance(data, dict) and _PRESS_REQUIRED <= data.keys() <= _PRESS_FIELDS):
        return None
    pressed, presser = data["message"], _user(data["from"], bot)
    if not (isinstance(pressed, dict) and _PRESSED_REQUIRED <= pressed.keys() <= _PRESSED_FIELDS):
        return None
    chat = _chat(pressed["chat"], bot)
    if presser is None or chat is None:
        return None
    message = _bound(InaccessibleMessage(chat, pressed["message_id"]), bot)
    button = data.get("data")
    return _bound(CallbackQuery(data["id"], presser, data["chat_instance"], message, button), bot)


def _message(data: object, bot: Bot) -> Message | None:
    """A plain text message, or None when it carries more than its text and entities."""
    if not (isinstance(data, dict) and _MESSAGE_REQUIRED <= data.keys() <= _MESSAGE_FIELDS):
        return None
    chat, sender = _chat(data["chat"], bot), _user(data["from"], bot)
    entities = _entities(data.get("entities", []), bot)
    if chat is None or sender is None or entities is None or not isinstance(data["date"], int):
        return None
    sent = datetime.fromtimestamp(data["date"], tz=UTC)  # as de_json dates it, with no defaults
    message = Message(
        data["message_id"], sent, chat, from_user=sender, text=data["text"], entities=entities
    )
    return _bound(message, bot)


def _entities(data: object, bot: Bot) -> list[MessageEntity] | None:
    if not isinstance(data, list):
        return None
    entities = []
    for entity in data:
        if not (isinstance(entity, dict) and entity.keys() == _ENTITY_FIELDS):
            return None
        entities.append(_bound(MessageEntity(**entity), bot))
    return entities


def _user(data: object, bot: Bot) -> User | None:
    if not (isinstance(data, dict) and data.keys() <= _USER_FIELDS):
        return None
    return _bound(User(**data), bot)


def _chat(data: object, bot: Bot) -> Chat | None:
    if not (isinstance(data, dict) and data.keys() <= _CHAT_FIELDS):
        return None
    return _bound(Chat(**data), bot)


def _bound(built: _Built, bot: Bot) -> _Built:
    """``built``, its shortcuts (``message.reply_text``…) bound to ``bot`` as
    ``de_json`` binds them."""
    built.set_bot(bot)
    return built


class UpdatesBot(ExtBot[Any]):
    """python-telegram-bot's bot, the updates of its ``getUpdates`` built by ``update_of``
    (the rest of the call is python-telegram-bot's own; its types of a timeout not given
    are private, hence ``Any``)."""

    async def get_updates(
        self,
        offset: int | None = None,
        limit: int | None = None,
        timeout: float | timedelta | None = None,
        allowed_updates: Sequence[str] | None = None,
        *,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
        api_kwargs: JsonDict | None = None,
    ) -> tuple[Update, ...]:
        parameters: JsonDict = {
            "timeout": timeout,
            "offset": offset,
            "limit": limit,
            "allowed_updates": allowed_updates,
        }
        # As python-telegram-bot waits: the long poll's seconds on top of the read timeout.
        given = read_timeout is not BaseRequest.DEFAULT_NONE
        waited = read_timeout if given else self._request[0].read_timeout
        if isinstance(timeout, timedelta):
            timeout = timeout.total_seconds()
        result = await self._post(
            "getUpdates",
            parameters,
            read_timeout=(waited or 0) + (timeout or 0),
            write_timeout=write_timeout,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            api_kwargs=api_kwargs,
        )
        assert isinstance(result, list), result
        return tuple(update_of(update, self) for update in result)
