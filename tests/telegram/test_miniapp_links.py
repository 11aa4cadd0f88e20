"""How the bot opens its Mini App: the group's board links to the Main Mini App with the
group as ``startapp`` (``web_app`` buttons work in private chats only), and ``/table`` in
a private chat answers with a ``web_app`` button for each of the player's groups. Neither
appears unless the app is on with a public address."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import InlineKeyboardMarkup

from bot.config import Config
from bot.config.model import WebConfig
from bot.engine import round as engine
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.board.rendering import BoardRenderer
from bot.telegram.i18n import translate
from bot.telegram.lookups import People
from bot.telegram.miniapp_links import MiniAppLinks
from bot.web.miniapp.start_param import decode_group
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import GROUP, PLAYERS, TEST_SETTINGS, fund, open_table
from tests.helpers.telegram import GROUP as BOARD_GROUP
from tests.helpers.telegram import T0_MS, FakeService, message_update, new_round, person, with_bid
from tests.helpers.telegram_shells import GameShell

APP_URL = "https://bot.example.com/miniapp/"
USERNAME = "niuniu_test_bot"
ON = WebConfig(listen="127.0.0.1:8080", public_url="https://bot.example.com/", miniapp=True)


def renderer(links: MiniAppLinks | None) -> tuple[BoardRenderer, FakeService]:
    service = FakeService()
    return BoardRenderer(service, People(service), lambda: T0_MS, links), service


def url_buttons(markup: InlineKeyboardMarkup | None) -> list[tuple[str, str | None]]:
    assert markup is not None
    return [(b.text, b.url) for row in markup.inline_keyboard for b in row if b.url]


@pytest.mark.parametrize("phase", ["bidding", "betting"])
async def test_an_open_rounds_board_links_to_the_main_mini_app_with_the_group(
    phase: str,
) -> None:
    board, service = renderer(MiniAppLinks(APP_URL, lambda: USERNAME))
    state = new_round(7).round
    if phase == "betting":
        state = engine.advance(
            with_bid(state, 11, 10_000), state.deadline_ms, player_seeds={}
        ).round
    service.put(state)
    markup = (await board.render(7)).markup
    link = f"https://t.me/{USERNAME}?startapp=g{-BOARD_GROUP}"
    assert url_buttons(markup) == [(translate("en", "button.table"), link)]
    assert markup is not None and markup.inline_keyboard[-1][0].url == link  # its own row
    assert decode_group(link.partition("startapp=")[2]) == BOARD_GROUP


@pytest.mark.parametrize(
    "links",
    [None, MiniAppLinks(None, lambda: USERNAME), MiniAppLinks(APP_URL, str)],
    ids=["no links", "app off", "username not known yet"],
)
async def test_no_link_without_the_app_or_before_the_bot_knows_its_name(
    links: MiniAppLinks | None,
) -> None:
    board, service = renderer(links)
    service.put(new_round(7).round)
    markup = (await board.render(7)).markup
    assert url_buttons(markup) == []


def test_the_apps_address_is_given_only_when_on_with_a_public_url() -> None:
    assert ON.miniapp_url == APP_URL
    assert WebConfig(listen="127.0.0.1:8080", miniapp=True).miniapp_url is None
    assert WebConfig(public_url="https://bot.example.com", miniapp=True).miniapp_url is None
    off = WebConfig(listen="127.0.0.1:8080", public_url="https://bot.example.com")
    assert off.miniapp_url is None


@pytest.fixture
async def service(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[GameService]:
    yield GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)


async def test_table_in_private_opens_the_app_for_each_group_the_player_has_chips_in(
    service: GameService,
) -> None:
    player = PLAYERS[0]
    await open_table(service)
    await fund(service, player, 10_000)
    shell = GameShell(service, Config(web=ON))
    sender = person(player.id, player.first_name)
    await shell.game.table.private(message_update(player.id, sender, "/table"), None)
    await shell.game.outbox.drain(5.0)
    (call,) = shell.bot.of("send_message")
    assert call.args["chat_id"] == player.id
    ((_, title, _),) = await service.balances_everywhere(player.id)
    assert call.args["text"] == translate("en", "table.private", groups=title or str(GROUP))
    markup = call.args["reply_markup"]
    (row,) = markup.inline_keyboard
    (button,) = row
    assert button.url is None and button.web_app is not None
    assert button.web_app.url == f"{APP_URL}?chat={GROUP}"


async def test_table_in_private_without_groups_says_where_to_open_it(
    service: GameService,
) -> None:
    shell = GameShell(service, Config(web=ON))
    sender = person(55, "Newcomer")
    await shell.game.table.private(message_update(55, sender, "/table"), None)
    assert await shell.sent() == [translate("en", "table.private_none")]
    assert shell.bot.of("send_message")[0].args["reply_markup"] is None


async def test_table_without_the_app_says_so(service: GameService) -> None:
    shell = GameShell(service)
    sender = person(55, "Newcomer")
    await shell.game.table.private(message_update(55, sender, "/table"), None)
    assert await shell.sent() == [translate("en", "table.off")]
