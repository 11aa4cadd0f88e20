"""The Mini App served over real HTTP for the web tests: a group whose round takes bets,
the app mounted as the web server mounts it, and its live feed read as a page reads it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from bot.service.game import GameService
from bot.telegram.miniapp_catalogues import MiniAppCatalogues
from bot.web.miniapp import build_miniapp
from bot.web.miniapp.moves import MiniAppBot
from tests.helpers.controls import Clock
from tests.helpers.game import DEALER, GROUP, TEST_SETTINGS, fund, open_table
from tests.helpers.telegram_shells import GameShell

TOKEN = "123456:miniapp-test-token"
#: How long a test waits for an event that must come (a bound on failing, not a measure).
EVENT_LIMIT_SECONDS = 10.0


async def betting_round(service: GameService, clock: Clock, players: list[Any]) -> int:
    """Open ``GROUP``'s table, fund ``players`` and the dealer, and bring a round to
    betting (the dealer having bid); its id."""
    await open_table(service)
    for person in (DEALER, *players):
        await fund(service, person, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    return started.round.id


async def serve_miniapp(
    service: GameService, shell: GameShell, clock: Clock, *, member_seconds: float = 60.0
) -> TestClient[web.Request, web.Application]:
    """The Mini App under ``/miniapp/`` of a started test server, the shell's member check
    (its answers kept ``member_seconds``, as the shell is configured) and moves behind it."""
    root = web.Application()
    root.add_subapp(
        "/miniapp/",
        build_miniapp(
            service=service,
            bots=[MiniAppBot(TOKEN, shell.game.members.is_member, shell.game.miniapp_moves)],
            round_texts=shell.game.miniapp_rounds,
            clock=lambda: clock.now_ms / 1000,
            catalogues=MiniAppCatalogues(),
            member_seconds=member_seconds,
        ),
    )
    client = TestClient(TestServer(root))
    await client.start_server()
    return client


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One Server-Sent Event as a page gets it."""

    id: str
    name: str
    data: Any


class FeedReader:
    """A page's live feed: its events read one at a time, comments (keep-alives) and the
    reconnection delay skipped."""

    def __init__(self, response: ClientResponse) -> None:
        self.response = response

    async def next(self, limit: float = EVENT_LIMIT_SECONDS) -> FeedEvent:
        return await asyncio.wait_for(self._next(), limit)

    async def nothing_within(self, seconds: float) -> bool:
        """Whether no event comes within ``seconds`` (the test's own bound)."""
        try:
            await asyncio.wait_for(self._next(), seconds)
        except TimeoutError:
            return True
        return False

    async def until_closed(self, limit: float = EVENT_LIMIT_SECONDS) -> None:
        """Return once the server has ended the feed (whatever it sent before); fail
        (``TimeoutError``) if it is still open after ``limit`` seconds."""
        content = self.response.content

        async def read() -> None:
            while not content.at_eof():
                await content.readuntil(b"\n\n")

        await asyncio.wait_for(read(), limit)

    async def _next(self) -> FeedEvent:
        while True:
            block = (await self.response.content.readuntil(b"\n\n")).decode()
            fields: dict[str, str] = {}
            for line in block.strip("\n").split("\n"):
                name, _, value = line.partition(": ")
                if name:
                    fields[name] = value
            if "data" in fields:
                return FeedEvent(
                    fields.get("id", ""), fields.get("event", ""), json.loads(fields["data"])
                )
