"""The operator console as people use it (issue 11), through the real bot process with its
``[web]`` listener serving the console, against the fake Telegram, on each database.

In a group, an admin opens the table and credits the players. The admin sends /console to
the bot in a private chat, follows the link the bot answers with in a headless chromium,
signs in, opens the group from the overview and lowers ``max_bet`` with the group's
settings form. Back in the group, in a new round, a player's bet above the new maximum is
refused and one within it is taken; ``/audit`` and the console's audit log name the admin
as the one who changed it. A player of the group, neither its admin nor an operator, signs
in with their own link over plain HTTP and is refused the group's page and its form (403).
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot.engine.round import Phase
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    JsonDict,
    Texts,
    open_table,
    running_bot,
    shown,
    start_round,
    user,
)
from tests.helpers.browser import and_wait, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_001_101
ADMIN = user(1101, "Ada", "ada")
DEALER = user(1102, "Bao", "bao")
PLAYER = user(1103, "Chen", "chen")
#: Sees every group in the console; nobody else in this test is one.
OPERATOR = 1109
#: The betting window outlasts the test's two bets: what they get does not depend on time.
GAME = {**FAST_GAME, "bid_seconds": 3, "bet_seconds": 120}
#: The group's max_bet before and after the admin changes it (as typed and displayed).
MAX_BET_BEFORE, MAX_BET_AFTER = "50.00", "5.00"


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(database_url: str, tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process on ``database_url`` with its console on ``web_port``; no public
    address, so its links point at the listener itself."""
    environment = {"NIUNIU_WEB_LISTEN": f"127.0.0.1:{web_port}", "NIUNIU_WEB_CONSOLE": "true"}
    async with running_bot(
        tmp_path, game=GAME, operators=[OPERATOR], env=environment, database_url=database_url
    ) as session:
        yield session


async def console_link(e2e: E2E, who: JsonDict, console: str) -> str:
    """``who`` sends /console in a private chat with the bot; the link in its answer
    (which is exactly the catalogue's ``console.link`` around it)."""
    update = e2e.fake.post_message(who["id"], who, "/console", chat_type="private")
    reply = await e2e.wait_reply(who["id"], update)
    links = [entity["url"] for entity in reply["entities"] if entity["type"] == "text_link"]
    assert len(links) == 1, reply
    link = str(links[0])
    assert reply["text"] == Texts().html("console.link", url=html.escape(link)), reply
    assert link.startswith(f"{console}/login?token="), link
    return link


def change_max_bet_in_the_browser(browser: Any, link: str, console: str, photo: str) -> list[str]:
    """Follow the sign-in link, sign in, open the group from the overview and save the new
    max_bet in its form, as a person would; the cells of the audit log's newest line. The
    group's page, saved, is photographed as ``photo``.

    Selenium blocks: the test runs this in a thread, so that the fake Telegram (on the
    test's event loop) answers the bot's questions meanwhile (``getChatMember``)."""
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(link)
    and_wait(browser, browser.find_element(By.ID, "sign-in").click)
    assert browser.current_url == f"{console}/"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Overview"
    and_wait(browser, browser.find_element(By.LINK_TEXT, f"E2E {GROUP}").click)
    assert browser.current_url == f"{console}/groups/{GROUP}"
    field = browser.find_element(By.ID, "set-max_bet")
    assert field.get_attribute("value") == MAX_BET_BEFORE
    field.clear()
    field.send_keys(MAX_BET_AFTER)
    and_wait(browser, field.submit)
    assert browser.find_element(By.ID, "saved").text == "Saved max_bet."
    assert browser.find_element(By.ID, "set-max_bet").get_attribute("value") == MAX_BET_AFTER
    screenshot(browser, photo)
    newest = browser.find_element(By.CSS_SELECTOR, "table tbody tr")
    return [cell.text for cell in newest.find_elements(By.TAG_NAME, "td")]


async def sign_in_over_http(client: aiohttp.ClientSession, link: str, console: str) -> None:
    """Open the link's page and press its button: POST the form's fields (the link's
    token, and the form's own, which the page's cookie must match)."""
    async with client.get(link) as response:
        assert response.status == 200
        page = await response.text()
    form = re.search(r'<form method="post" action="/console/login">(.*?)</form>', page, re.S)
    assert form is not None, page
    fields = {
        name: html.unescape(value)
        for name, value in re.findall(r'name="(\w+)" value="([^"]+)"', form[1])
    }
    assert set(fields) == {"token", "form"}, page
    async with client.post(f"{console}/login", data=fields) as response:
        assert response.status == 200, await response.text()  # redirected to the overview
        assert str(response.url) == f"{console}/"


async def test_a_max_bet_lowered_in_the_console_is_what_the_group_then_plays_by(
    e2e: E2E, web_port: int, browser: Any
) -> None:
    console = f"http://127.0.0.1:{web_port}/console"
    await open_table(e2e, GROUP, ADMIN, [DEALER, PLAYER])
    texts = await e2e.texts(GROUP)
    assert (await e2e.service.settings(GROUP)).display("max_bet") == MAX_BET_BEFORE

    # The admin asks for a link in private and changes max_bet in the browser.
    link = await console_link(e2e, ADMIN, console)
    database = "sqlite" if e2e.database_url.startswith("sqlite") else "postgres"
    photo = f"e2e-group-max-bet-saved-{database}"
    newest = await asyncio.to_thread(change_max_bet_in_the_browser, browser, link, console, photo)
    change = f"set: max_bet {MAX_BET_BEFORE} → {MAX_BET_AFTER}"
    assert newest[1:] == [ADMIN["first_name"], change], newest
    assert (await e2e.service.settings(GROUP)).max_bet == 500

    # The group's next round takes it: a bet above it is refused, one within it taken.
    state = await start_round(e2e, GROUP, DEALER)
    assert state.settings.max_bet == 500
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    await e2e.expect_reply(GROUP, PLAYER, "/bet 10", "error.bet_too_large", maximum=500)
    await e2e.expect_reply(GROUP, PLAYER, "/bet 5", "answer.bet_placed", amount=500)
    current = await e2e.current_round(GROUP)
    assert current is not None and current.id == state.id
    assert [(bet.user_id, bet.amount) for bet in current.bets] == [(PLAYER["id"], 500)]

    # The group's audit log says who changed it.
    audit = (await e2e.ask(GROUP, ADMIN, "/audit")).splitlines()
    assert audit[0] == texts.message("audit.header"), audit
    details = f"setting=max_bet, old={MAX_BET_BEFORE}, new={MAX_BET_AFTER}"
    changed = texts.message(
        "audit.line", who=shown(ADMIN), action="set", details=html.escape(details)
    )
    assert audit.count(changed) == 1, (changed, audit)

    # A player of the group, neither its admin nor an operator, signs in with their own
    # link and is refused the group: its page and its settings form.
    link = await console_link(e2e, PLAYER, console)
    # unsafe: the jar keeps cookies of an address given by IP, as a browser does.
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as client:
        await sign_in_over_http(client, link, console)
        async with client.get(f"{console}/") as response:
            assert response.status == 200
            overview = await response.text()
        assert f"E2E {GROUP}" not in overview
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', overview)
        assert found is not None, overview
        async with client.get(f"{console}/groups/{GROUP}") as response:
            refused = await response.text()
            assert response.status == 403, refused
        assert "<h1>Not your group</h1>" in refused
        assert f"E2E {GROUP}" not in refused and "max_bet" not in refused
        form = {"csrf": found[1], "key": "max_bet", "value": "1000"}
        async with client.post(f"{console}/groups/{GROUP}/settings", data=form) as response:
            assert response.status == 403, await response.text()
    assert (await e2e.service.settings(GROUP)).max_bet == 500
