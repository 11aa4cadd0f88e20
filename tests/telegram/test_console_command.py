"""``/console``: a signed one-time link in a private chat, a pointer to the private chat in
a group, and a plain answer when the bot serves no console."""

from __future__ import annotations

import html
import re

import pytest

from bot.engine.errors import GameError
from bot.telegram.handlers.console import ConsoleHandlers
from bot.telegram.i18n import translate
from bot.web.console import LinkSigner
from bot.web.signing import LINK_SECONDS
from tests.helpers.telegram import GROUP, message_update, person
from tests.helpers.telegram_shells import GameShell

TOKEN = "123456:console-command-token"
NOW = 1_800_000_000
ANN = person(11, "Ann")


def handlers(public_url: str | None) -> tuple[ConsoleHandlers, GameShell]:
    shell = GameShell()
    console = ConsoleHandlers(
        shell.game.parts, bot_token=TOKEN, public_url=public_url, clock=lambda: NOW
    )
    return console, shell


async def test_console_in_private_sends_a_link_that_signs_in_its_sender_for_five_minutes() -> None:
    console, shell = handlers("https://bot.example.com/")
    await console.private(message_update(ANN.id, ANN, "/console"), None)
    (text,) = await shell.sent()
    found = re.search(r'href="([^"]+)"', text)
    assert found is not None
    url = html.unescape(found[1])
    assert url.startswith("https://bot.example.com/console/login?token=")
    claim = LinkSigner(TOKEN).check(url.partition("token=")[2], NOW)
    assert (claim.user_id, claim.expires_at) == (ANN.id, NOW + LINK_SECONDS)


async def test_each_console_command_gets_a_new_link() -> None:
    console, shell = handlers("https://bot.example.com")
    for _ in range(2):
        await console.private(message_update(ANN.id, ANN, "/console"), None)
    first, second = await shell.sent()
    assert first != second


async def test_console_without_a_console_says_so() -> None:
    console, shell = handlers(None)
    await console.private(message_update(ANN.id, ANN, "/console"), None)
    assert await shell.sent() == [translate("en", "console.off")]


async def test_console_in_a_group_points_to_the_private_chat() -> None:
    console, _ = handlers("https://bot.example.com")
    with pytest.raises(GameError) as refused:
        await console.in_group(message_update(GROUP, ANN, "/console"), None)
    assert refused.value.key == "console_private"
    assert "private chat" in translate("en", "error.console_private")
