"""Each game's results in the Mini App, as a player meets them: the real bot process with
its Mini App, the fake Telegram, headless chromium at 360 px. For every game (68 NiuNiu,
Bull Bull, Niu-Niu Poker and its push variant) a player has the app open while a round
is played in the group: a dealer bids, two players bet. When the round settles, the page
shows its results as the group gets them: the picture, and at a card table the dealer's
five cards, all turned over. Screenshots are kept under
``build/screenshots/miniapp-games/``; ``docs/pictures/miniapp-<game>.png`` are copied
from them by hand and shown in the README.
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
from bot.engine.settings import Settings
from bot.rules.ruleset import get_ruleset
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
from tests.helpers.miniapp_browser import PHONE, open_the_app, wait_text, wait_until
from tests.helpers.signing import init_data

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_002_461
ADMIN = user(2461, "Ada", "ada")
DEALER = user(2462, "Bao", "bao")
PLAYER = user(2463, "Chen", "chen")
OTHER = user(2464, "Dana", "dana")
#: Betting long enough for both bets; the next round later than the test.
GAME = {**FAST_GAME, "bid_seconds": 3, "bet_seconds": 4, "pause_seconds": 600}
GAMES = ("envelope68", "bullbull", "poker29", "poker29_vn")

#: What the table's results card shows, in one go.
READ_RESULTS = """
var box = document.getElementById("results-shown");
var deal = box.querySelector(".deal");
var picture = box.querySelector("img.results-picture");
return {
  cards: deal ? deal.querySelectorAll(".pcard").length : 0,
  up: deal ? deal.querySelectorAll(".pcard.up").length : 0,
  revealed: box.dataset.revealed || "",
  picture_width: picture ? picture.naturalWidth : 0,
  picture_shown: picture ? picture.classList.contains("shown") : false,
  title: document.getElementById("results-title").innerText,
  page_width: document.documentElement.scrollWidth,
};
"""


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port``."""
    async with running_bot(tmp_path, game=GAME, env=miniapp_environment(web_port)) as session:
        yield session


@pytest.mark.parametrize("game", GAMES)
async def test_each_games_results_appear_in_the_app(
    e2e: E2E, web_port: int, browser: Any, game: str
) -> None:
    shots = SCREENSHOTS / "miniapp-games"
    shots.mkdir(parents=True, exist_ok=True)
    chosen = {} if game == Settings().ruleset else {"ruleset": game}  # a new table's is kept
    await open_table(e2e, GROUP, ADMIN, [DEALER, PLAYER, OTHER], settings=chosen)
    person = {"id": PLAYER["id"], "first_name": PLAYER["first_name"]}
    signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=str(GROUP))
    await asyncio.to_thread(open_the_app, browser, f"http://127.0.0.1:{web_port}/miniapp/", signed)
    await asyncio.to_thread(wait_text, browser, "phase", "No round running")

    state = await start_round(e2e, GROUP, DEALER)
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    await e2e.expect_reply(GROUP, PLAYER, "/bet 5", "answer.bet_placed", amount=500)
    await e2e.expect_reply(GROUP, OTHER, "/bet 10", "answer.bet_placed", amount=1_000)
    ended = await e2e.wait_ended(state.id)
    assert ended.phase is Phase.SETTLED

    shown = await asyncio.to_thread(
        wait_until,
        browser,
        READ_RESULTS,
        lambda s: s["revealed"] == str(state.id) and s["picture_shown"],
        f"round {state.id}'s results",
    )
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(shots / f"{game}.png"))
    assert f"#{state.id}" in shown["title"], shown
    assert shown["picture_width"] > 300, shown  # the PNG decoded
    assert shown["page_width"] <= PHONE["width"], shown
    # A card table turns the dealer's five cards over; the red envelopes have none.
    dealt = 0 if get_ruleset(game).uses_grabs else 5
    assert (shown["cards"], shown["up"]) == (dealt, dealt), shown
