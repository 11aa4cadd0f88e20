"""``/seed`` in a private chat: answered in the language of the sender's Telegram app, the
seed set through the service (one for every group), and shown back by ``/seed`` alone.
(In a group, tests/e2e/test_card_tables.py sets one and plays a round with it.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from telegram import User

from bot.service.game import Person
from bot.telegram.handlers.base import ShellParts
from bot.telegram.handlers.verify import VerifyHandlers
from bot.telegram.i18n import translate
from tests.helpers.telegram import message_update


class Replies:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def reply(self, update: Any, text: str) -> None:
        self.sent.append(text)


class Seeds:
    """The service's client seeds, in memory."""

    def __init__(self) -> None:
        self.stored: dict[int, str] = {}

    async def client_seed(self, user_id: int) -> str | None:
        return self.stored.get(user_id)

    async def set_client_seed(self, actor: Person, text: str, *, update_id: int) -> str:
        self.stored[actor.id] = text
        return text


async def test_seed_in_private_is_answered_in_the_senders_language() -> None:
    replies, seeds = Replies(), Seeds()
    parts = cast(ShellParts, SimpleNamespace(replies=replies, service=seeds))
    handlers = VerifyHandlers(parts)
    mei = User(21, "Mei", False, language_code="zh-hans")

    async def send(text: str) -> str:
        args = text.split()[1:]
        await handlers.seed(message_update(mei.id, mei, text), SimpleNamespace(args=args))
        return replies.sent[-1]

    assert await send("/seed") == translate("zh", "seed.none", most=64)
    assert await send("/seed lucky-7") == translate("zh", "seed.set", seed="lucky-7")
    assert seeds.stored == {21: "lucky-7"}
    assert await send("/seed") == translate("zh", "seed.current", seed="lucky-7")
    assert "lucky-7" in replies.sent[-1] and "客户端种子" in replies.sent[-1]
