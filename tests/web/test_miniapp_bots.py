"""The Mini App of a process with two bots (``[telegram] tokens``): a page signs in with
``initData`` signed by either bot, and whether its user is in a group is asked of the bot
that signed it (a bot can ask only of its own groups); ``initData`` of a bot the process
does not serve is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.miniapp_catalogues import MiniAppCatalogues
from bot.web.miniapp import build_miniapp
from bot.web.miniapp.moves import MiniAppBot
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import GROUP, PLAYERS, TEST_SETTINGS
from tests.helpers.miniapp import TOKEN, betting_round
from tests.helpers.signing import init_data
from tests.helpers.telegram_shells import GameShell

SECOND_TOKEN = "654321:second-miniapp-token"
PLAYER = PLAYERS[0]


@dataclass
class Asked:
    """Who was asked whether a user is in a group: (bot, chat, user), in order."""

    service: GameService
    questions: list[tuple[str, int, int]] = field(default_factory=list)

    def of(self, bot: str) -> MiniAppBot:
        """``bot``'s part in the app: its token, this record as its member check, and the
        moves of a shell of its own."""

        async def is_member(chat_id: int, user_id: int) -> bool:
            self.questions.append((bot, chat_id, user_id))
            return True

        token = TOKEN if bot == "first" else SECOND_TOKEN
        return MiniAppBot(token, is_member, GameShell(self.service).game.miniapp_moves)


@dataclass
class TwoBots:
    client: TestClient[web.Request, web.Application]
    service: GameService
    clock: Clock
    asked: Asked

    async def sign_in(self, token: str) -> tuple[int, dict[str, object]]:
        person = {"id": PLAYER.id, "first_name": "Ann"}
        data = init_data(token, self.clock.now_ms // 1000, user=person)
        response = await self.client.post("/miniapp/api/session", json={"initData": data})
        body: dict[str, object] = await response.json()
        return response.status, body


@pytest.fixture
async def two_bots(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[TwoBots]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await betting_round(service, clock, [PLAYER])
    asked = Asked(service)
    root = web.Application()
    bots = [asked.of("first"), asked.of("second")]
    texts = GameShell(service).game.miniapp_rounds
    app = build_miniapp(
        service=service,
        bots=bots,
        round_texts=texts,
        clock=lambda: clock.now_ms / 1000,
        catalogues=MiniAppCatalogues(),
        member_seconds=60.0,
    )
    root.add_subapp("/miniapp/", app)
    client = TestClient(TestServer(root))
    await client.start_server()
    try:
        yield TwoBots(client, service, clock, asked)
    finally:
        await client.close()


@pytest.mark.parametrize(("token", "bot"), [(TOKEN, "first"), (SECOND_TOKEN, "second")])
async def test_a_page_of_either_bot_signs_in_and_that_bot_is_asked_about_the_group(
    two_bots: TwoBots, token: str, bot: str
) -> None:
    status, signed = await two_bots.sign_in(token)
    assert status == 200, signed
    session = str(signed["token"])
    headers = {"Authorization": f"Bearer {session}"}
    response = await two_bots.client.get(
        "/miniapp/api/table", params={"chat": str(GROUP)}, headers=headers
    )
    assert response.status == 200, await response.text()
    body = {"chat": GROUP, "amount": "5"}
    response = await two_bots.client.post("/miniapp/api/bet", json=body, headers=headers)
    assert response.status == 200, await response.text()
    current = await two_bots.service.current_round(GROUP)
    assert current is not None
    assert [(b.user_id, b.amount) for b in current.bets] == [(PLAYER.id, 500)]
    assert two_bots.asked.questions == [(bot, GROUP, PLAYER.id)] * 2


async def test_init_data_of_a_bot_the_process_does_not_serve_is_refused(
    two_bots: TwoBots,
) -> None:
    status, refused = await two_bots.sign_in("777:a-bot-of-someone-else")
    assert status == 401
    assert refused == {
        "error": "Telegram's signature does not match. Open the app from Telegram.",
        "reason": "signature",
    }
    assert two_bots.asked.questions == []
