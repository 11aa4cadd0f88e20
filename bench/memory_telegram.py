"""The benches' in-memory Telegram: a ``BaseRequest`` that answers the Bot API from memory.

``bench_bot.py``, ``bench_caches.py`` and ``bench_restart.py`` build the real bot over it
(``bot.bootstrap.assemble``'s ``request`` and ``get_updates_request``) and feed it updates
shaped by ``message_update``. Not ``bot.fakegram``: that fake keeps every message, call and
transcript and validates each send as Telegram does, work and memory that would be counted
as the bot's in these benches' CPU and memory figures (``bench_caches.py`` counts what
grows with the groups); this one answers each call with next to no work and keeps only
counts.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from telegram.ext import ApplicationBuilder
from telegram.request import BaseRequest, RequestData

TOKEN = "123456:BENCH-not-a-real-token"
BOT_USER: dict[str, Any] = {
    "id": 123456,
    "is_bot": True,
    "first_name": "NiuNiu bench",
    "username": "niuniu_bench_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": True,
    "supports_inline_queries": False,
}


@dataclass
class TelegramStats:
    """What the bot asked of "Telegram", shared by the transports of one application."""

    calls: Counter[str] = field(default_factory=Counter)
    replies: int = 0
    message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


def _chat(chat_id: int) -> dict[str, Any]:
    if chat_id < 0:
        return {"id": chat_id, "type": "supergroup", "title": f"Bench {chat_id}"}
    return {"id": chat_id, "type": "private", "first_name": f"User {chat_id}"}


def _user(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}


class MemoryTelegram(BaseRequest):
    """A ``BaseRequest`` that answers the Bot API methods the bot uses from memory.

    Parameters are JSON-encoded as the HTTP transport would, and answers are JSON bytes
    that PTB parses as usual; only the network is missing.
    """

    def __init__(self, stats: TelegramStats, admins: Container[int] = frozenset()) -> None:
        self.stats = stats
        self.admins = admins

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        params: dict[str, Any] = {}
        if request_data is not None:
            _ = request_data.json_parameters  # what an HTTP transport would encode
            params = request_data.parameters
        self.stats.calls[endpoint] += 1
        result = self._answer(endpoint, params)
        return 200, json.dumps({"ok": True, "result": result}).encode()

    def _answer(self, endpoint: str, params: dict[str, Any]) -> Any:
        now = int(time.time())
        if endpoint == "getMe":
            return BOT_USER
        if endpoint == "getUpdates":
            return []
        if endpoint in ("sendMessage", "sendPhoto", "sendAnimation"):
            chat_id = int(params["chat_id"])
            if "reply_parameters" in params or "reply_to_message_id" in params:
                self.stats.replies += 1
            return {
                "message_id": next(self.stats.message_ids),
                "date": now,
                "chat": _chat(chat_id),
                "from": BOT_USER,
                "text": params.get("text", params.get("caption", "")),
            }
        if endpoint == "editMessageText":
            if "chat_id" not in params:
                return True  # an inline message
            return {
                "message_id": int(params["message_id"]),
                "date": now,
                "edit_date": now,
                "chat": _chat(int(params["chat_id"])),
                "from": BOT_USER,
                "text": params.get("text", ""),
            }
        if endpoint == "getChatMember":
            user_id = int(params["user_id"])
            if user_id in self.admins:
                return {"status": "creator", "user": _user(user_id), "is_anonymous": False}
            return {"status": "member", "user": _user(user_id)}
        # answerCallbackQuery, setMyCommands, deleteWebhook, deleteMessage, ...
        return True


def memory_builder(
    stats: TelegramStats, admins: frozenset[int]
) -> ApplicationBuilder[Any, Any, Any, Any, Any, Any]:
    """``Application.builder()`` with both transports in memory."""
    return (
        ApplicationBuilder()
        .request(MemoryTelegram(stats, admins))
        .get_updates_request(MemoryTelegram(stats, admins))
    )


def message_update(
    update_id: int, message_id: int, chat_id: int, user_id: int, text: str
) -> dict[str, Any]:
    """A Telegram-shaped update of a message from ``user_id`` in ``chat_id``; a leading
    ``/command`` gets its ``bot_command`` entity."""
    message: dict[str, Any] = {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": _chat(chat_id),
        "from": {
            "id": user_id,
            "is_bot": False,
            "first_name": f"Player {user_id}",
            "username": f"p{user_id}",
        },
        "text": text,
    }
    if text.startswith("/"):
        command = text.split()[0]
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    return {"update_id": update_id, "message": message}
