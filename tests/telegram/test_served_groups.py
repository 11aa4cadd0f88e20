"""Two bots on one database, each a shell of its own (``GameBot``): a group's updates are
handled by the bot that serves it only; another bot answers a button of that group with a
toast saying so and leaves its messages alone, but for ``/serve``, which moves it."""

from __future__ import annotations

from typing import Any

from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.group_bots import SERVE, ServedGroups
from bot.telegram.i18n import translate
from tests.helpers.game import ADMIN, open_table
from tests.helpers.telegram import button_update, message_update, person
from tests.helpers.telegram_shells import GameShell

BOT_A, BOT_B = 111, 222
GROUP = -100_777


async def test_only_the_bot_that_serves_a_group_handles_its_updates(db: Database) -> None:
    a = GameShell(GameService(db, bot_id=BOT_A))
    b = GameShell(GameService(db, bot_id=BOT_B))
    await open_table(a.service, GROUP)  # A creates the group's row: the group is A's
    shells = {BOT_A: a, BOT_B: b}
    handled: list[tuple[int, str]] = []

    async def run(bot_id: int, kind: str, update: Any) -> None:
        async def handle(update: Any, context: Any) -> None:
            handled.append((bot_id, kind))

        await shells[bot_id].game._guard(handle, kind)(update, None)

    eko = person(5, "Eko")
    rules = message_update(GROUP, eko, "/rules")
    for bot_id in (BOT_A, BOT_B):
        await run(bot_id, "rules", rules)
        await run(bot_id, "button", button_update(GROUP, eko, "grab:1"))
    assert handled == [(BOT_A, "rules"), (BOT_A, "button")]
    # B's answer to the button: a toast that another bot serves the group; no message.
    await b.sent()
    toasts = [call.args["text"] for call in b.bot.of("answer_callback_query")]
    assert toasts == [translate("en", "serve.other_bot")]
    assert b.bot.texts == []

    # /serve reaches B's handler; once the group moved to B, B handles the group's
    # updates and A, asking again (its answer kept a while ran out), leaves them.
    await run(BOT_B, SERVE, message_update(GROUP, eko, "/serve"))
    assert handled[-1] == (BOT_B, SERVE)
    assert await b.service.serve_here(GROUP, ADMIN) is True
    b.game.served.moved_here(GROUP)
    a.game.served = ServedGroups(a.service)
    await run(BOT_A, "rules", rules)
    await run(BOT_B, "rules", rules)
    assert handled[3:] == [(BOT_B, "rules")]


async def test_a_private_chat_is_every_bots(db: Database) -> None:
    b = GameShell(GameService(db, bot_id=BOT_B))
    handled: list[str] = []

    async def handle(update: Any, context: Any) -> None:
        handled.append("seed")

    eko = person(5, "Eko")
    await b.game._guard(handle, "seed")(message_update(eko.id, eko, "/seed"), None)
    assert handled == ["seed"]
