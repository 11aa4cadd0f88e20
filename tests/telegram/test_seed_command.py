"""``/seed`` in a private chat: answered in the language of the sender's Telegram app, the
seed set through the service (one for every group), and shown back by ``/seed`` alone.
(In a group, tests/e2e/test_card_tables.py sets one and plays a round with it.)"""

from __future__ import annotations

from types import SimpleNamespace

from telegram import User

from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.i18n import translate
from tests.helpers.telegram import message_update
from tests.helpers.telegram_shells import GameShell


async def test_seed_in_private_is_answered_in_the_senders_language(db: Database) -> None:
    shell = GameShell(GameService(db))
    handlers = shell.game.verify
    mei = User(21, "Mei", False, language_code="zh-hans")

    async def send(text: str) -> str:
        args = text.split()[1:]
        await handlers.seed(message_update(mei.id, mei, text), SimpleNamespace(args=args))
        return (await shell.sent())[-1]

    assert await send("/seed") == translate("zh", "seed.none", most=64)
    assert await send("/seed lucky-7") == translate("zh", "seed.set", seed="lucky-7")
    assert await shell.service.client_seed(21) == "lucky-7"
    assert await send("/seed") == translate("zh", "seed.current", seed="lucky-7")
    assert "lucky-7" in shell.bot.texts[-1] and "客户端种子" in shell.bot.texts[-1]
