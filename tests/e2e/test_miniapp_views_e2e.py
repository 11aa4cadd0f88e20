"""The Mini App's views besides the live table (issue 24), as a player meets them: the
real bot process with its Mini App, the fake Telegram, headless chromium at 360 px.

A player has the app open while a Bull Bull round is played in the group. When the round
settles, the page shows its results as the group gets them: the dealer's cards lie face
down and turn over one by one, then the results picture. The player's History lists the
round with what they won or lost (the ledger's figure), opens its results, and verifies
it: it checks out. The Rules tab says the table's rules and odds. Screenshots are kept
under ``build/screenshots/miniapp-views/``.
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
from bot.money import format_signed
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
from tests.helpers.miniapp_browser import PHONE, open_the_app, tap, wait_text, wait_until
from tests.helpers.signing import init_data

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_002_451
ADMIN = user(2451, "Ada", "ada")
DEALER = user(2452, "Bao", "bao")
PLAYER = user(2453, "Chen", "chen")
OTHER = user(2454, "Dana", "dana")
#: Betting long enough for both bets; the next round later than the test.
GAME = {**FAST_GAME, "bid_seconds": 3, "bet_seconds": 4, "pause_seconds": 600}

#: What the page shows of a round's results in ``arguments[0]`` (a box's id), in one go.
READ_RESULTS = """
var box = document.getElementById(arguments[0]);
var deal = box.querySelector(".deal");
var picture = box.querySelector("img.results-picture");
return {
  turned: deal ? Number(deal.dataset.turned) : -1,
  cards: deal ? deal.querySelectorAll(".pcard").length : 0,
  up: deal ? deal.querySelectorAll(".pcard.up").length : 0,
  faces: deal ? Array.prototype.map.call(deal.querySelectorAll(".pcard .face"), function (f) {
    return f.textContent;
  }) : [],
  caption: deal ? deal.querySelector(".caption").textContent : "",
  revealed: box.dataset.revealed || "",
  picture_width: picture ? picture.naturalWidth : 0,
  picture_shown: picture ? picture.classList.contains("shown") : false,
  card_hidden: box.closest("section").hidden,
};
"""
#: Records how many of the dealer's cards are face up each time one turns on the table's
#: results card (the test's own eyes: the page is not changed for it).
TURN_RECORDER = """
window.__turns = [];
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("results-shown");
  new MutationObserver(function (records) {
    records.forEach(function (record) {
      var deal = record.type === "attributes" ? record.target : null;
      Array.prototype.forEach.call(record.addedNodes || [], function (node) {
        if (node.classList && node.classList.contains("deal")) deal = node;
      });
      if (deal) window.__turns.push(deal.querySelectorAll(".pcard.up").length);
    });
  }).observe(box, { subtree: true, childList: true, attributes: true,
                    attributeFilter: ["data-turned"] });
});
"""
#: The page's width and the heights of the buttons one can tap, in one go.
READ_TAPS = """
var taps = document.querySelectorAll(
  "#tabs button, .history-round, #history-verify, #verify-button");
return {
  tap_heights: Array.prototype.filter.call(taps, function (b) { return b.offsetParent !== null; })
    .map(function (b) { return b.getBoundingClientRect().height; }),
  page_width: document.documentElement.scrollWidth,
};
"""


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port``."""
    async with running_bot(tmp_path, game=GAME, env=miniapp_environment(web_port)) as session:
        yield session


def text_of(browser: Any, element_id: str) -> str:
    return str(browser.execute_script(f"return document.getElementById('{element_id}').innerText"))


def watch_the_cards_turn(browser: Any, shots: Path, round_id: int) -> dict[str, Any]:
    """Wait for the results card: its cards dealt, then all turned with the picture shown;
    photographed on the way (the cards half turned too, if the test looks in time: what
    the page did is recorded by ``TURN_RECORDER``, not caught by looking)."""
    wait_until(
        browser, READ_RESULTS, lambda s: s["cards"] == 5, "the dealer's cards", "results-shown"
    )
    browser.execute_script("document.getElementById('results-card').scrollIntoView()")
    browser.save_screenshot(str(shots / "1-cards-dealt.png"))
    try:
        wait_until(browser, READ_RESULTS, lambda s: 0 < s["up"] < 5, "", "results-shown")
        browser.save_screenshot(str(shots / "2-cards-turning.png"))
    except AssertionError:
        pass  # looked too late: a photograph only
    done = wait_until(
        browser,
        READ_RESULTS,
        lambda s: s["revealed"] == str(round_id) and s["picture_shown"],
        "every card turned and the picture",
        "results-shown",
    )
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(shots / "3-results.png"))
    return {"done": done, "turns": browser.execute_script("return window.__turns")}


async def test_a_settled_rounds_results_history_and_verify_in_the_app(
    e2e: E2E, web_port: int, browser: Any
) -> None:
    # docs/pictures/miniapp-results.png, -history.png, -verify.png and -rules.png are this
    # test's "3-results", "4-history", "6-verify" and "7-rules", copied by hand.
    shots = SCREENSHOTS / "miniapp-views"
    shots.mkdir(parents=True, exist_ok=True)
    await open_table(e2e, GROUP, ADMIN, [DEALER, PLAYER, OTHER], settings={"ruleset": "bullbull"})
    currency = (await e2e.service.settings(GROUP)).currency

    # The player has the app open as the round is played in the group.
    person = {"id": PLAYER["id"], "first_name": PLAYER["first_name"], "username": "chen"}
    signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=str(GROUP))
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TURN_RECORDER})
    await asyncio.to_thread(open_the_app, browser, f"http://127.0.0.1:{web_port}/miniapp/", signed)
    await asyncio.to_thread(wait_text, browser, "phase", "No round running")
    state = await start_round(e2e, GROUP, DEALER)
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    await e2e.expect_reply(GROUP, PLAYER, "/bet 5", "answer.bet_placed", amount=500)
    await e2e.expect_reply(GROUP, OTHER, "/bet 10", "answer.bet_placed", amount=1_000)
    ended = await e2e.wait_ended(state.id)
    assert ended.phase is Phase.SETTLED

    # The results, as the group gets them: the dealer's cards turn over, then the picture.
    seen = await asyncio.to_thread(watch_the_cards_turn, browser, shots, state.id)
    dealer_hand = ended.dealer_hand()
    assert dealer_hand is not None
    view = ended.ruleset.show(dealer_hand)
    # Dealt face down, then turned over one at a time.
    assert seen["turns"] == [0, 1, 2, 3, 4, 5], seen
    done = seen["done"]
    assert done["up"] == 5 and done["turned"] == 5 and not done["card_hidden"], done
    assert sorted(done["faces"]) == sorted(view.cards or ()), done
    assert DEALER["first_name"] in done["caption"] and f"#{state.id}" in done["caption"]
    assert done["picture_width"] > 300, done  # the PNG decoded
    taps = browser.execute_script(READ_TAPS)
    assert taps["page_width"] <= PHONE["width"] and min(taps["tap_heights"]) >= 44, taps

    # History: the round, with what the player won or lost (the ledger's figure).
    results = await e2e.service.results(state.id)
    mine = next(line for line in results if line.user_id == PLAYER["id"])
    await asyncio.to_thread(tap, browser, '#tabs [data-tab="history"]')
    line = await asyncio.to_thread(
        wait_until,
        browser,
        "return {lines: Array.prototype.map.call("
        "document.querySelectorAll('#history .history-round'), function (b) {"
        " return b.innerText; }), stats: document.getElementById('stats-text').innerText};",
        lambda s: len(s["lines"]) == 1 and "Rounds:" in s["stats"],
        "the history",
    )
    assert line["lines"][0].startswith(f"#{state.id}"), line
    assert line["lines"][0].endswith(format_signed(mine.net, currency)), line
    assert format_signed(mine.net, currency) in line["stats"], line
    browser.save_screenshot(str(shots / "4-history.png"))
    taps = browser.execute_script(READ_TAPS)
    assert taps["page_width"] <= PHONE["width"] and min(taps["tap_heights"]) >= 44, taps

    # The round's results from the history, then /verify of it: it checks out.
    await asyncio.to_thread(tap, browser, "#history .history-round")
    await asyncio.to_thread(
        wait_until,
        browser,
        READ_RESULTS,
        lambda s: s["revealed"] == str(state.id),
        "the round's results from the history",
        "history-round-shown",
    )
    browser.save_screenshot(str(shots / "5-history-round.png"))
    await asyncio.to_thread(tap, browser, "#history-verify")
    verdict = f"✅ Round #{state.id} checks out"
    await asyncio.to_thread(wait_text, browser, "verify-verdict", verdict)
    checked = text_of(browser, "verify-text")
    assert ended.seed.hex() in checked and "matches the published hash" in checked, checked
    browser.save_screenshot(str(shots / "6-verify.png"))

    # The table's rules and odds.
    await asyncio.to_thread(tap, browser, '#tabs [data-tab="rules"]')
    await asyncio.to_thread(
        wait_until,
        browser,
        "return {odds: document.getElementById('odds-text').innerText,"
        " rules: document.getElementById('rules-text').innerText};",
        lambda s: s["odds"].startswith("Odds of one bet") and s["rules"].startswith("Bull Bull"),
        "the rules and odds",
    )
    browser.save_screenshot(str(shots / "7-rules.png"))
    taps = browser.execute_script(READ_TAPS)
    assert taps["page_width"] <= PHONE["width"], taps

    # Telegram's back button goes back to the table, which still shows the results.
    browser.execute_script("window.__pressBack();")
    assert browser.execute_script("return document.body.dataset.view") == "table"
    assert not browser.execute_script("return document.getElementById('results-card').hidden")
    assert "close" not in browser.execute_script("return window.__telegramCalls")
