"""Inline buttons: a user's press, queued as a ``callback_query`` update, and the bot's
``answerCallbackQuery`` to it."""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.fakegram.chats import Chats
from bot.fakegram.params import RequestParams, bad_request
from bot.fakegram.updates import UpdateQueue

JsonDict = dict[str, Any]

_FIRST_CALLBACK_QUERY_ID = 4_000_000_000_000_000_001
_MAX_CALLBACK_ANSWER_LENGTH = 200
_QUERY_INVALID = "query is too old and response timeout expired or query ID is invalid"


@dataclass
class _CallbackQuery:
    chat_id: int
    message_id: int
    user_id: int
    data: str
    #: When the press was queued (wall time, s).
    pressed_at: float
    answered: bool = False


class CallbackQueries:
    """The button presses users made and the answers the bot gave them."""

    def __init__(self, chats: Chats, updates: UpdateQueue) -> None:
        self._chats = chats
        self._updates = updates
        self._queries: dict[str, _CallbackQuery] = {}
        self._next_query_id = _FIRST_CALLBACK_QUERY_ID
        self._answers: list[JsonDict] = []

    def press_button(
        self, chat_id: int, message_id: int, user: Mapping[str, Any], data: str
    ) -> JsonDict:
        """Have ``user`` press an inline button of a bot message; returns the update."""
        presser = self._chats.register_user(user)
        chat = self._chats.get(chat_id)
        message = chat.messages.get(message_id) if chat else None
        if chat is None or message is None or not message.sent_by_bot:
            raise ValueError(f"chat {chat_id} has no bot message {message_id}")
        query_id = str(self._next_query_id)
        self._next_query_id += 1
        self._queries[query_id] = _CallbackQuery(
            chat_id=chat_id,
            message_id=message_id,
            user_id=presser["id"],
            data=data,
            pressed_at=time.time(),
        )
        callback_query = {
            "id": query_id,
            "from": presser,
            "message": self._chats.message_json(chat, message),
            "chat_instance": chat.chat_instance,
            "data": data,
        }
        return self._updates.enqueue("callback_query", callback_query)

    @property
    def answers(self) -> list[JsonDict]:
        """Every successful ``answerCallbackQuery``, with the query it answered."""
        return copy.deepcopy(self._answers)

    async def answer_callback_query(self, params: RequestParams) -> bool:
        query_id = params.optional_str("callback_query_id") or ""
        query = self._queries.get(query_id)
        if query is None or query.answered:
            raise bad_request(_QUERY_INVALID)
        text = params.optional_str("text")
        if text is not None and len(text) > _MAX_CALLBACK_ANSWER_LENGTH:
            raise bad_request("MESSAGE_TOO_LONG")
        query.answered = True
        self._answers.append(
            {
                "callback_query_id": query_id,
                "chat_id": query.chat_id,
                "message_id": query.message_id,
                "user_id": query.user_id,
                "data": query.data,
                "text": text,
                "show_alert": params.flag("show_alert"),
                "url": params.optional_str("url"),
                "cache_time": params.optional_int("cache_time") or 0,
                "time": time.time(),
                "pressed_at": query.pressed_at,
            }
        )
        return True
