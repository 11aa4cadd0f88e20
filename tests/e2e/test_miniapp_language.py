"""The Mini App speaks the language of the user's Telegram app (issue 24), through the real
bot process and its ``[web]`` listener, in a headless chromium at a phone's width.

A group (in English) has a round taking bets. A player whose app is in Simplified Chinese
(``language_code`` ``zh-hans``) opens the table, then one whose app is in Vietnamese
(``vi``): each page reads, in its user's language, every word it shows (headings, labels,
the phase, the game's name, the buttons and the field's hint), as the catalogues have
them; the group's own messages stay in the group's language.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.engine.round import Phase
from bot.telegram.i18n import CATALOGUES
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    miniapp_environment,
    open_table,
    running_bot,
    start_round,
    user,
)
from tests.helpers.browser import SCREENSHOTS
from tests.helpers.miniapp_browser import open_the_app, wait_text
from tests.helpers.signing import init_data

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_002_451
ADMIN = user(2451, "Ada", "ada")
DEALER = user(2452, "Bao", "bao")
READER_ZH = user(2453, "Chen", "chen")
READER_VI = user(2454, "Linh", "linh")
#: A betting window longer than the test: what the pages show does not depend on time.
GAME = {**FAST_GAME, "bid_seconds": 2, "bet_seconds": 300}

#: What the page shows, read in one go: the text of every element that names a message.
READ_WORDS = """
function text(id) { return document.getElementById(id).innerText; }
return {
  lang: document.documentElement.lang,
  title: document.title,
  phase: text("phase"),
  game: text("game"),
  labels: Array.prototype.map.call(document.querySelectorAll(".label"), function (e) {
    return e.innerText;
  }),
  headings: Array.prototype.filter.call(document.querySelectorAll("h2"), function (e) {
    return e.offsetParent !== null;  // shown: the other tabs' views are hidden
  }).map(function (e) {
    return (e.firstElementChild || e).textContent;  // as written: CSS shows it in capitals
  }),
  tabs: Array.prototype.map.call(document.querySelectorAll("#tabs [data-tab]"), function (e) {
    return e.textContent;
  }),
  bet: text("bet"),
  field: document.getElementById("amount").placeholder,
  no_bets: text("no-bets"),
  standing_open: text("standing-open"),
};
"""


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port``."""
    async with running_bot(tmp_path, game=GAME, env=miniapp_environment(web_port)) as session:
        yield session


def words(language: str, ruleset: str) -> dict[str, Any]:
    """What the page must show in ``language``, from its catalogue."""
    t = CATALOGUES[language].gettext
    return {
        "lang": language,
        "title": t("miniapp.title"),
        "phase": t("miniapp.phase.betting"),
        "game": t(f"game.{ruleset}"),
        "labels": [
            t("miniapp.dealer"),
            t("miniapp.pool"),
            t("miniapp.high_bid"),
            t("miniapp.chips.free"),
            t("miniapp.chips.held"),
            t("miniapp.standing.every_round"),
        ],
        "headings": [
            t("miniapp.bets"),
            t("miniapp.chips"),
            t("miniapp.play.bet_title"),
            t("miniapp.standing.title"),
        ],
        "tabs": [
            t("miniapp.tab_table"),
            t("miniapp.tab_history"),
            t("miniapp.tab_rules"),
            t("miniapp.tab_verify"),
        ],
        "bet": t("miniapp.play.bet"),
        "field": t("miniapp.play.bet_field"),
        "no_bets": t("miniapp.no_bets"),
        "standing_open": t("miniapp.standing.open"),
    }


async def test_the_page_speaks_the_language_of_the_users_app(
    e2e: E2E, web_port: int, browser: Any
) -> None:
    shots = SCREENSHOTS / "miniapp-language"
    shots.mkdir(parents=True, exist_ok=True)
    await open_table(e2e, GROUP, ADMIN, [DEALER, READER_ZH, READER_VI])
    texts = await e2e.texts(GROUP)
    assert texts.language == "en"
    ruleset = (await e2e.service.settings(GROUP)).ruleset
    state = await start_round(e2e, GROUP, DEALER)
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)

    url = f"http://127.0.0.1:{web_port}/miniapp/"
    for reader, code, language in ((READER_ZH, "zh-hans", "zh"), (READER_VI, "vi", "vi")):
        person = {"id": reader["id"], "first_name": reader["first_name"], "language_code": code}
        signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=str(GROUP))
        await asyncio.to_thread(open_the_app, browser, url, signed)
        wanted = words(language, ruleset)
        await asyncio.to_thread(wait_text, browser, "phase", wanted["phase"])
        browser.save_screenshot(str(shots / f"betting-{language}.png"))
        shown = browser.execute_script(READ_WORDS)
        assert shown == wanted
        # Nothing of the English page is left (the words differ in these languages).
        english = words("en", ruleset)
        assert not {shown["bet"], shown["no_bets"], *shown["headings"], *shown["tabs"]} & {
            english["bet"],
            english["no_bets"],
            *english["headings"],
            *english["tabs"],
        }
