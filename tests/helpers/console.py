"""The console over real HTTP (aiohttp's test server and client), and the history the
tests play first: two settled rounds and an open one in the admin's group, a settled round
in a group the admin does not administer."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientResponse, CookieJar, web
from aiohttp.test_utils import TestClient, TestServer

from bot.engine.round import Phase
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.web.console import LinkSigner, build_console
from bot.web.console.limits import IPNetwork
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, PLAYERS, fund, play_envelope_round

TOKEN = "123456:console-test-token"
GROUP = -1001
OTHER = -2002
OPERATOR = 7
#: A player whose name is HTML: pages must show it escaped.
EVE = Person(31, "<b>Eve</b>", "eve")


@dataclass
class History:
    """What the played history left: round ids by what they are."""

    settled: list[int]
    open_round: int
    other_round: int


async def play_round(
    service: GameService, clock: Clock, chat_id: int, players: list[Person]
) -> int:
    """A whole round: the dealer bids 100.00, each player bets 10.00, everyone grabs."""
    bets = [(player, 1_000) for player in players]
    final = await play_envelope_round(service, clock, bets, bid=10_000, chat_id=chat_id)
    assert final.round is not None and not final.round.phase.is_open
    clock.advance(60)
    return final.round.id


async def play_history(service: GameService, clock: Clock) -> History:
    players = [*PLAYERS[:3], EVE]
    await service.note_people([ADMIN, DEALER, *players])
    for chat_id, title in ((GROUP, "Lucky <Table>"), (OTHER, "Other group")):
        await service.note_chat(chat_id, title)
        await service.set_open(chat_id, ADMIN, True)
        for person in (DEALER, *players):
            await fund(service, person, 100_000, chat_id=chat_id)
    settled = [await play_round(service, clock, GROUP, players) for _ in range(2)]
    other = await play_round(service, clock, OTHER, players[:2])
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None and started.round.phase is Phase.BIDDING
    return History(settled, started.round.id, other)


def is_admin_of(chat_id: int, user_id: int) -> bool:
    """The fake Telegram's answer: ADMIN administers GROUP only."""
    return (chat_id, user_id) == (GROUP, ADMIN.id)


async def post_link(
    client: TestClient[web.Request, web.Application], token: str, **options: Any
) -> ClientResponse:
    """Open a sign-in link's page, then press its button, as a browser does (the form's
    cookie comes from the page)."""
    page = await (await client.get("/console/login", params={"token": token})).text()
    found = re.search(r'name="form" value="([^"]+)"', page)
    assert found is not None, page
    return await client.post("/console/login", data={"token": token, "form": found[1]}, **options)


@dataclass
class Console:
    """A running console and a client with its own cookies."""

    client: TestClient[web.Request, web.Application]
    service: GameService
    clock: Clock
    history: History
    db: Database

    async def sign_in(self, user_id: int) -> None:
        token = LinkSigner(TOKEN).issue(user_id, self.clock.now_ms // 1000)
        response = await post_link(self.client, token)
        assert response.status == 200, await response.text()  # followed to the overview
        assert str(response.url).endswith("/console/")

    async def csrf(self, path: str = "/console/") -> str:
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', await self.text(path))
        assert found is not None
        return found[1]

    async def text(self, path: str, status: int = 200) -> str:
        response = await self.client.get(path)
        body = await response.text()
        assert response.status == status, body
        return body


async def start_console(
    service: GameService,
    clock: Clock,
    *,
    public_url: str = "http://console.test",
    trusted_proxies: tuple[IPNetwork, ...] = (),
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async def is_group_admin(chat_id: int, user_id: int) -> bool:
        return is_admin_of(chat_id, user_id)

    root = web.Application()
    root.add_subapp(
        "/console/",
        build_console(
            service=service,
            bot_token=TOKEN,
            operators=frozenset({OPERATOR}),
            public_url=public_url,
            is_group_admin=is_group_admin,
            clock=lambda: clock.now_ms / 1000,
            bot_username="niuniu_test_bot",
            trusted_proxies=trusted_proxies,
        ),
    )
    client = TestClient(TestServer(root), cookie_jar=CookieJar(unsafe=True))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()
