"""The Mini App's live feed (``GET /miniapp/api/feed``) over real HTTP on each database,
read as a page's ``EventSource`` reads it.

A member gets the table at once, then again as the round changes (a bet placed through
the service, a round step ending betting), each event carrying where the table stands;
a page coming back with ``Last-Event-ID`` gets the table at once only if it changed; the
open round's seed is in no event, and each viewer's chips are their own. A feed is
refused as the other calls are: without a session, or to a non-member. On PostgreSQL, a
bet another worker commits reaches the page through ``LISTEN/NOTIFY``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from telegram import ChatMember

from bot.config import Config
from bot.service.game import GameService
from bot.service.round_changes import RoundKey
from bot.store.db import Database
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, GROUP, PLAYERS, TEST_SETTINGS
from tests.helpers.miniapp import TOKEN, FeedEvent, FeedReader, betting_round, serve_miniapp
from tests.helpers.signing import init_data
from tests.helpers.telegram_shells import GameShell

PLAYER, OTHER = PLAYERS[0], PLAYERS[1]


@dataclass
class Feeds:
    client: TestClient[web.Request, web.Application]
    service: GameService
    shell: GameShell
    clock: Clock
    round_id: int
    opened: list[ClientResponse]

    async def sign_in(self, user_id: int) -> str:
        person = {"id": user_id, "first_name": f"User{user_id}"}
        data = init_data(TOKEN, self.clock.now_ms // 1000, user=person)
        response = await self.client.post("/miniapp/api/session", json={"initData": data})
        assert response.status == 200, await response.text()
        token: str = (await response.json())["token"]
        return token

    async def open(self, token: str, *, last_event_id: str = "", **query: str) -> ClientResponse:
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        params = {"chat": str(GROUP), "token": token, **query}
        response = await self.client.get("/miniapp/api/feed", params=params, headers=headers)
        self.opened.append(response)
        return response

    async def watch(self, user_id: int, **options: str) -> FeedReader:
        response = await self.open(await self.sign_in(user_id), **options)
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"] == "text/event-stream"
        assert response.headers["Cache-Control"] == "no-store"
        return FeedReader(response)


@pytest.fixture
async def feeds(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[Feeds]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    round_id = await betting_round(service, clock, [PLAYER, OTHER])
    shell = GameShell(service)
    client = await serve_miniapp(service, shell, clock)
    opened: list[ClientResponse] = []
    try:
        yield Feeds(client, service, shell, clock, round_id, opened)
    finally:
        for response in opened:
            response.close()
        await client.close()


def key_of(event: FeedEvent) -> RoundKey:
    key = RoundKey.parse(event.id)
    assert key is not None, event.id
    assert event.data["version"] == event.id
    return key


def no_seed(event: FeedEvent, seed_hex: str) -> None:
    shown = repr(event.data)
    assert seed_hex not in shown and "seed" not in shown


async def test_a_member_gets_the_table_at_once_and_again_at_every_change(feeds: Feeds) -> None:
    service = feeds.service
    current = await service.current_round(GROUP)
    assert current is not None
    seed_hex = current.seed.hex()
    mine, theirs = await feeds.watch(PLAYER.id), await feeds.watch(OTHER.id)

    first = await mine.next()
    assert first.name == "table" and key_of(first) == RoundKey(current.id, current.version)
    assert first.data["round"]["phase"] == "betting" and first.data["round"]["bets"] == []
    assert (await theirs.next()).id == first.id

    # Another player bets: both pages get the new table, each with their own chips.
    await service.bet(GROUP, OTHER, 700)
    for_me, for_them = await mine.next(), await theirs.next()
    assert key_of(for_me) > key_of(first) and for_me.id == for_them.id
    assert [(b["cents"], b["mine"]) for b in for_me.data["round"]["bets"]] == [(700, False)]
    assert [(b["cents"], b["mine"]) for b in for_them.data["round"]["bets"]] == [(700, True)]
    assert for_me.data["chips"]["held"]["cents"] == 0
    held = (await service.balance(GROUP, OTHER.id)).held
    assert held > 0 and for_them.data["chips"]["held"]["cents"] == held

    # Betting ends (the deadline): the page sees the grab open.
    feeds.clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(feeds.round_id)
    grabbing = await mine.next()
    assert key_of(grabbing) > key_of(for_me)
    assert grabbing.data["round"]["phase"] == "grabbing"
    for event in (first, for_me, for_them, grabbing):
        no_seed(event, seed_hex)


async def test_a_page_coming_back_gets_the_table_at_once_only_if_it_changed(
    feeds: Feeds,
) -> None:
    feed = await feeds.watch(PLAYER.id)
    seen = await feed.next()
    feeds.opened[-1].close()  # the network drops

    # Back with nothing missed: no event until the next change.
    back = await feeds.watch(PLAYER.id, last_event_id=seen.id)
    assert await back.nothing_within(0.5)
    feeds.opened[-1].close()

    # A bet while the page was away: it gets the table at once on coming back, by the
    # header EventSource sends and by since= alike.
    await feeds.service.bet(GROUP, OTHER, 900)
    for options in ({"last_event_id": seen.id}, {"since": seen.id}):
        caught_up = await (await feeds.watch(PLAYER.id, **options)).next()
        assert key_of(caught_up) > key_of(seen)
        assert [b["cents"] for b in caught_up.data["round"]["bets"]] == [900]


async def test_a_feed_is_refused_without_a_session_and_to_a_non_member(feeds: Feeds) -> None:
    response = await feeds.client.get("/miniapp/api/feed", params={"chat": str(GROUP)})
    assert response.status == 401 and await response.json() == {
        "error": "Not signed in: open the app from Telegram.",
        "reason": "signed_out",
    }
    response = await feeds.open("not-a-token")
    assert response.status == 401
    feeds.shell.bot.statuses[(GROUP, OTHER.id)] = ChatMember.LEFT
    response = await feeds.open(await feeds.sign_in(OTHER.id))
    assert response.status == 403
    assert await response.json() == {
        "error": "You are not in this group, so its table is not shown to you.",
        "reason": "not_member",
    }
    response = await feeds.open(await feeds.sign_in(PLAYER.id), chat="not-a-group")
    assert response.status == 400


# PostgreSQL only: on SQLite one process serves, and changes are told in process.
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_bet_another_worker_commits_reaches_the_page_by_notify(
    feeds: Feeds, database_url: str, seeds: Seeds
) -> None:
    assert feeds.service.round_changes.across_workers
    feed = await feeds.watch(PLAYER.id)
    seen = await feed.next()

    # Another worker: its own connections and service, its notices sent by NOTIFY.
    other_db = Database.from_url(database_url)
    worker = GameService(other_db, TEST_SETTINGS, clock=feeds.clock, seed_source=seeds)
    heard: list[Any] = []
    feeds.service.round_changes.watch(heard.append, lambda: None)
    await worker.round_changes.start()
    try:
        await worker.bet(GROUP, OTHER, 1_200)
        event = await feed.next()
    finally:
        await worker.round_changes.close()
        await other_db.dispose()
    assert key_of(event) > key_of(seen)
    assert [b["cents"] for b in event.data["round"]["bets"]] == [1_200]
    # It came as a notice from the other worker: this one committed nothing.
    assert [change.key for change in heard] == [key_of(event)]


# -- chips changed outside a round (an admin's /credit and /debit) ------------------------


async def test_a_credit_or_debit_reaches_the_players_page_at_once_and_no_one_elses(
    feeds: Feeds,
) -> None:
    mine, theirs = await feeds.watch(PLAYER.id), await feeds.watch(OTHER.id)
    first, their_first = await mine.next(), await theirs.next()
    free = first.data["chips"]["available"]["cents"]

    # Credited between the round's steps: the round is as it was, the chips are not.
    await feeds.service.credit(GROUP, ADMIN, PLAYER.id, 5_000)
    credited = await mine.next()
    assert credited.id == first.id  # the round's key: no round step happened
    assert credited.data["chips"]["available"]["cents"] == free + 5_000
    balance = await feeds.service.balance(GROUP, PLAYER.id)
    assert credited.data["chips"]["available"]["cents"] == balance.available

    await feeds.service.debit(GROUP, ADMIN, PLAYER.id, 2_000)
    debited = await mine.next()
    assert debited.data["chips"]["available"]["cents"] == free + 3_000

    # The other page is told of neither (its chips did not change) but of the next step.
    assert await theirs.nothing_within(0.3)
    await feeds.service.bet(GROUP, OTHER, 700)
    assert key_of(await theirs.next()) > key_of(their_first)


# -- membership while a feed is open ------------------------------------------------------

#: How long the member check keeps an answer in these tests (the shell's admin cache).
SHORT_CACHE_SECONDS = 0.2


@pytest.fixture
async def short_cache_feeds(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[Feeds]:
    """``feeds`` with a member check whose answers last ``SHORT_CACHE_SECONDS``."""
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    round_id = await betting_round(service, clock, [PLAYER, OTHER])
    shell = GameShell(service, Config(admin_cache_seconds=SHORT_CACHE_SECONDS))
    client = await serve_miniapp(service, shell, clock, member_seconds=SHORT_CACHE_SECONDS)
    opened: list[ClientResponse] = []
    try:
        yield Feeds(client, service, shell, clock, round_id, opened)
    finally:
        for response in opened:
            response.close()
        await client.close()


@pytest.mark.parametrize("gone", [ChatMember.LEFT, ChatMember.BANNED])
async def test_a_member_who_leaves_stops_getting_the_groups_events(
    short_cache_feeds: Feeds, gone: str
) -> None:
    feeds = short_cache_feeds
    leaver, stayer = await feeds.watch(PLAYER.id), await feeds.watch(OTHER.id)
    await leaver.next()
    await stayer.next()
    asked = len(feeds.shell.bot.of("get_chat_member"))

    # The player leaves (or is kicked) while the page is open: once the cached answer
    # runs out, the feed asks Telegram again and ends.
    feeds.shell.bot.statuses[(GROUP, PLAYER.id)] = gone
    await leaver.until_closed()
    assert len(feeds.shell.bot.of("get_chat_member")) > asked

    # The group goes on: the member still watching gets its next step, and the one who
    # left cannot open the feed again.
    await feeds.service.bet(GROUP, OTHER, 800)
    assert [b["cents"] for b in (await stayer.next()).data["round"]["bets"]] == [800]
    response = await feeds.open(await feeds.sign_in(PLAYER.id))
    assert response.status == 403
    assert (await response.json())["reason"] == "not_member"


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_credit_another_worker_commits_reaches_the_page_by_notify(
    feeds: Feeds, database_url: str, seeds: Seeds
) -> None:
    feed = await feeds.watch(PLAYER.id)
    seen = await feed.next()
    free = seen.data["chips"]["available"]["cents"]

    other_db = Database.from_url(database_url)
    worker = GameService(other_db, TEST_SETTINGS, clock=feeds.clock, seed_source=seeds)
    heard: list[Any] = []
    feeds.service.round_changes.watch(lambda _: None, lambda: None, heard.append)
    await worker.round_changes.start()
    try:
        await worker.credit(GROUP, ADMIN, PLAYER.id, 4_000)
        event = await feed.next()
    finally:
        await worker.round_changes.close()
        await other_db.dispose()
    assert event.id == seen.id
    assert event.data["chips"]["available"]["cents"] == free + 4_000
    # Heard from the other worker's notice: this one changed no chips itself.
    assert [(change.chat_id, change.user_id) for change in heard] == [(GROUP, PLAYER.id)]
