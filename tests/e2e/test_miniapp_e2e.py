"""The Mini App as a player uses it (issue 24, its first slice), through the real bot
process with its ``[web]`` listener serving ``/miniapp/``, against the fake Telegram, in
a headless chromium at a phone's width.

In a group, an admin opens the table and credits the players; the dealer starts a round
and bids through the fake Telegram. A player opens the Mini App: the page signs in with
correctly signed ``initData`` (given by the stub that stands in for Telegram's script,
``tests/helpers/telegram_web_app_stub.js``; nothing is fetched from the internet), shows
the round taking bets, and the player bets with a quick amount, then changes it with a
typed one. Each is answered in the page, in the bot's words, and never in the group; the
group's board shows the bet, and the chips the page shows are the ledger's.
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
from bot.money import format_amount
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    JsonDict,
    Texts,
    grab_all,
    miniapp_environment,
    open_table,
    running_bot,
    start_round,
    user,
)
from tests.helpers.browser import PAGE_LIMIT_SECONDS, SCREENSHOTS
from tests.helpers.miniapp_browser import PHONE, open_the_app, wait_text
from tests.helpers.signing import init_data

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_002_401
ADMIN = user(2401, "Ada", "ada")
DEALER = user(2402, "Bao", "bao")
PLAYER = user(2403, "Chen", "chen")
#: The betting window outlasts the page's two bets: what they get does not depend on time.
GAME = {**FAST_GAME, "bid_seconds": 2, "bet_seconds": 120}
#: A small Android phone, the width the page must read well at.


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port``."""
    async with running_bot(tmp_path, game=GAME, env=miniapp_environment(web_port)) as session:
        yield session


def bet_in_the_page(browser: Any, amount: str | None, shots: Path, photo: str) -> dict[str, Any]:
    """Press the first quick bet (``amount`` None) or type ``amount`` and press Bet, as a
    person would; what the page says then (its message, bets and chips). Photographed as
    ``photo``. Selenium blocks: the test runs this in a thread, so that the fake Telegram
    (on the test's event loop) answers the bot meanwhile (``getChatMember``)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    before = browser.find_element(By.ID, "message").text
    if amount is None:
        browser.find_element(By.CSS_SELECTOR, ".quick-bet").click()
    else:
        field = browser.find_element(By.ID, "amount")
        field.clear()
        field.send_keys(amount)
        browser.find_element(By.ID, "bet").click()

    def answered(_: Any) -> bool:
        message = browser.find_element(By.ID, "message")
        classes = (message.get_attribute("class") or "").split()
        return bool(message.text != before and ("ok" in classes or "error" in classes))

    WebDriverWait(browser, PAGE_LIMIT_SECONDS).until(answered)
    # docs/pictures/miniapp-betting.png is this test's "miniapp-betting", copied by hand.
    browser.save_screenshot(str(shots / f"{photo}.png"))
    message = browser.find_element(By.ID, "message")
    return {
        "message": message.text,
        "ok": "ok" in (message.get_attribute("class") or "").split(),
        "bets": [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#bets li")],
        "free": browser.find_element(By.ID, "chips-free").text,
        "held": browser.find_element(By.ID, "chips-held").text,
        "tap_heights": [
            button.size["height"]
            for button in browser.find_elements(By.CSS_SELECTOR, ".quick-bet, #bet")
        ],
        "page_width": browser.execute_script("return document.documentElement.scrollWidth"),
    }


def board_line(e2e: E2E, texts: Texts, stake: int) -> JsonDict | None:
    """The latest board edit showing the player's bet of ``stake``."""
    line = texts.message("board.bet_line", name=PLAYER["first_name"], stake=stake)
    edits = [
        entry
        for entry in e2e.fake.transcript(GROUP)
        if entry["kind"] == "edit" and line in (entry["plain_text"] or "").splitlines()
    ]
    return edits[-1] if edits else None


async def test_a_player_bets_from_the_mini_app_and_the_groups_board_shows_it(
    e2e: E2E, web_port: int, browser: Any, tmp_path: Path
) -> None:
    await open_table(e2e, GROUP, ADMIN, [DEALER, PLAYER])
    texts = await e2e.texts(GROUP)
    currency = (await e2e.service.settings(GROUP)).currency
    state = await start_round(e2e, GROUP, DEALER)
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    # The betting board is in the group (a new message, sent after the phase is written):
    # from here on the group gets nothing for the page's bets.
    await e2e.wait_button(GROUP, f"{state.id}:bet:500")  # the table's first quick bet
    sent_before = len(e2e.sends(GROUP))

    # The player opens the app from the group's link: signed initData naming the group.
    person = {"id": PLAYER["id"], "first_name": PLAYER["first_name"], "username": "chen"}
    signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=str(GROUP))
    url = f"http://127.0.0.1:{web_port}/miniapp/"
    await asyncio.to_thread(open_the_app, browser, url, signed)
    await asyncio.to_thread(wait_text, browser, "phase", "Betting is open")
    await asyncio.to_thread(wait_text, browser, "dealer", DEALER["first_name"])
    browser.save_screenshot(str(tmp_path / "miniapp-betting-open.png"))

    # A quick bet (the table's first, 5.00), answered in the page as /bet is in the group.
    quick = await asyncio.to_thread(bet_in_the_page, browser, None, tmp_path, "miniapp-quick")
    assert quick["ok"], quick
    assert quick["message"] == texts.message("answer.bet_placed", amount=500)
    assert quick["bets"] == [f"{PLAYER['first_name']} (you)\n{format_amount(500, currency)}"]
    assert await e2e.fake.wait_for(lambda: board_line(e2e, texts, 500), timeout=10)

    # A typed amount changes it; the group's board shows the new bet.
    typed = await asyncio.to_thread(bet_in_the_page, browser, "7.50", tmp_path, "miniapp-betting")
    assert typed["ok"], typed
    assert typed["message"] == texts.message("answer.bet_changed", amount=750)
    assert await e2e.fake.wait_for(lambda: board_line(e2e, texts, 750), timeout=10)
    current = await e2e.current_round(GROUP)
    assert current is not None and current.id == state.id
    assert [(bet.user_id, bet.amount) for bet in current.bets] == [(PLAYER["id"], 750)]

    # The chips the page shows are the ledger's: free, and held by the bet.
    balance = await e2e.service.balance(GROUP, PLAYER["id"])
    assert balance.held > 0
    assert typed["free"] == format_amount(balance.available, currency)
    assert typed["held"] == format_amount(balance.held, currency)

    # Answered in the page only: the group got no message for either bet (its board was
    # edited in place).
    assert len(e2e.sends(GROUP)) == sent_before
    # Readable at 360 px: nothing wider than the screen, and buttons big enough to tap.
    assert typed["page_width"] <= PHONE["width"], typed
    assert min(typed["tap_heights"]) >= 44, typed


#: Windows long enough for the page to be looked at in each phase; the grab waits for
#: the grabs, and the next round for longer than the test.
LIVE_GAME = {
    **FAST_GAME,
    "bid_seconds": 4,
    "bet_seconds": 5,
    "grab_seconds": 60,
    "pause_seconds": 600,
}
WATCHER = user(2404, "Dana", "dana")
BETTOR = user(2405, "Emil", "emil")
#: Records every text the page's phase line shows, in order (the test's own eyes: the
#: page is not changed for it).
PHASE_RECORDER = """
window.__phases = [];
document.addEventListener("DOMContentLoaded", function () {
  var phase = document.getElementById("phase");
  new MutationObserver(function () {
    var text = phase.textContent;
    if (window.__phases[window.__phases.length - 1] !== text) window.__phases.push(text);
  }).observe(phase, { childList: true, characterData: true, subtree: true });
});
"""


@pytest_asyncio.fixture(loop_scope="module")
async def live_e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port``, its windows ``LIVE_GAME``'s."""
    async with running_bot(tmp_path, game=LIVE_GAME, env=miniapp_environment(web_port)) as session:
        yield session


#: What the watcher's page shows, read in one go (the page redraws its lists as events
#: come: elements found one by one may be gone by the time they are read).
READ_PAGE = """
function text(id) { return document.getElementById(id).innerText; }
return {
  phase: text("phase"),
  high_bid: text("high-bid"),
  bets: Array.prototype.map.call(document.querySelectorAll("#bets li"), function (li) {
    return li.innerText;
  }),
  grabbed: text("grabbed"),
  free: text("chips-free"),
  phases: window.__phases,
  first_document: window.__firstDocument === true
    && performance.getEntriesByType("navigation").length === 1,
  events: Number(document.body.dataset.events || "0"),
  live: document.body.dataset.live,
};
"""


def page_state(browser: Any) -> dict[str, Any]:
    """What the watcher's page shows, and whether it is the document first loaded."""
    state: dict[str, Any] = browser.execute_script(READ_PAGE)
    return state


def wait_for_page(browser: Any, check: Any, what: str) -> dict[str, Any]:
    """Wait until ``check(page_state)`` holds (the page is never reloaded meanwhile)."""
    from selenium.webdriver.support.wait import WebDriverWait

    try:
        WebDriverWait(browser, PAGE_LIMIT_SECONDS).until(lambda _: check(page_state(browser)))
    except Exception:
        raise AssertionError(f"the page never showed {what}: {page_state(browser)}") from None
    return page_state(browser)


async def test_a_player_watches_a_round_others_play_and_the_page_follows_it_live(
    live_e2e: E2E, web_port: int, browser: Any
) -> None:
    e2e = live_e2e
    shots = SCREENSHOTS / "miniapp-live"
    shots.mkdir(parents=True, exist_ok=True)
    await open_table(e2e, GROUP, ADMIN, [DEALER, WATCHER, BETTOR])
    texts = await e2e.texts(GROUP)
    currency = (await e2e.service.settings(GROUP)).currency

    # The watcher opens the app before any round: it will never reload it.
    person = {"id": WATCHER["id"], "first_name": WATCHER["first_name"]}
    signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=str(GROUP))
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PHASE_RECORDER})
    url = f"http://127.0.0.1:{web_port}/miniapp/"
    await asyncio.to_thread(open_the_app, browser, url, signed)
    await asyncio.to_thread(wait_text, browser, "phase", "No round running")
    browser.execute_script("window.__firstDocument = true;")
    browser.save_screenshot(str(shots / "1-no-round.png"))

    def step(check: Any, what: str, shot: str) -> Any:
        async def run() -> dict[str, Any]:
            seen = await asyncio.to_thread(wait_for_page, browser, check, what)
            browser.save_screenshot(str(shots / f"{shot}.png"))
            return seen

        return run()

    # The others play through the fake Telegram; the page follows every step.
    state = await start_round(e2e, GROUP, DEALER)
    await step(lambda s: s["phase"] == "Bidding for dealer", "bidding", "2-bidding")
    await e2e.expect_reply(GROUP, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    high = f"{DEALER['first_name']} · {format_amount(10_000, currency)}"
    await step(lambda s: s["high_bid"] == high, "the dealer's bid", "3-bid")
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    await step(lambda s: s["phase"] == "Betting is open", "betting", "4-betting")
    await e2e.expect_reply(GROUP, BETTOR, "/bet 5", "answer.bet_placed", amount=500)
    line = f"{BETTOR['first_name']}\n{format_amount(500, currency)}"
    await step(lambda s: s["bets"] == [line], "the bet", "5-bet")
    grabbing = await e2e.wait_phase(GROUP, Phase.GRABBING, state.id)
    await step(lambda s: s["phase"] == "Grab!", "the grab", "6-grab")
    await grab_all(e2e, GROUP, grabbing, [BETTOR])
    grabbed = f"Grabbed: {BETTOR['first_name']}"
    await step(lambda s: s["grabbed"] == grabbed, "the first grab", "7-grabbed")
    await grab_all(e2e, GROUP, grabbing, [DEALER])
    await e2e.wait_ended(state.id)
    seen = await step(lambda s: s["phase"] == "No round running", "the round's end", "8-ended")

    # One document all along, fed by the live feed, through every phase in order.
    assert seen["first_document"], seen
    assert seen["live"] == "yes", seen
    assert seen["phases"] == [
        "Signing in…",  # the page's first words, once its texts came
        "No round running",
        "Bidding for dealer",
        "Betting is open",
        "Grab!",
        "No round running",
    ], seen
    # The round's start, bid, bidding's end, bet, grabbing, grab and end: an event each
    # at least (standing bets and deadlines moved may add more), after the first table.
    assert seen["events"] >= 8, seen
    balance = await e2e.service.balance(GROUP, WATCHER["id"])
    assert seen["free"] == format_amount(balance.available, currency)
    assert texts.language == "en"


#: Bidding long enough for the page to bid; the grab waits for the grabs, and the next
#: round for longer than the test.
MOVES_GAME = {
    **FAST_GAME,
    "bid_seconds": 8,
    "bet_seconds": 5,
    "grab_seconds": 60,
    "pause_seconds": 600,
}
BANKER = user(2406, "Fay", "fay")
PUNTER = user(2407, "Gus", "gus")


@pytest_asyncio.fixture(loop_scope="module")
async def moves_e2e(tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its Mini App on ``web_port`` and a public address, so that
    the group's board links to it."""
    environment = {
        **miniapp_environment(web_port),
        "NIUNIU_WEB_PUBLIC_URL": f"http://127.0.0.1:{web_port}",
    }
    async with running_bot(tmp_path, game=MOVES_GAME, env=environment) as session:
        yield session


def table_link(e2e: E2E) -> str | None:
    """The URL of the "open the table" button on the group's board, once it shows one."""
    for state in e2e.fake.messages(GROUP).values():
        for row in (state.get("reply_markup") or {}).get("inline_keyboard", []):
            for button in row:
                if "url" in button:
                    return str(button["url"])
    return None


#: What the page shows after a move, read in one go.
READ_MOVE = """
function text(id) { return document.getElementById(id).innerText; }
var message = document.getElementById(arguments[0]);
var taps = document.querySelectorAll(".quick-bid, .quick-bet, #bet, #grab, #again, #cancel");
return {
  message: message.innerText,
  ok: message.classList.contains("ok"),
  error: message.classList.contains("error"),
  phase: text("phase"),
  high_bid: text("high-bid"),
  grabbed: text("grabbed"),
  free: text("chips-free"),
  held: text("chips-held"),
  standing: text("standing"),
  grab: text("grab"),
  tap_heights: Array.prototype.filter.call(taps, function (b) { return b.offsetParent !== null; })
    .map(function (b) { return b.getBoundingClientRect().height; }),
  page_width: document.documentElement.scrollWidth,
};
"""


def tap(
    browser: Any,
    selector: str,
    shots: Path,
    photo: str,
    typed: str | None = None,
    answer: str = "message",
) -> Any:
    """Type ``typed`` into the field of the form ``selector`` submits (if given), tap
    ``selector`` as a person would, and wait for the page's answer (in ``answer``); what
    the page showed then, photographed as ``photo``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    browser.execute_script(f"document.getElementById('{answer}').textContent = '';")
    button = browser.find_element(By.CSS_SELECTOR, selector)
    if typed is not None:
        field = button.find_element(By.XPATH, "preceding-sibling::input")
        field.clear()
        field.send_keys(typed)
    button.click()
    seen: dict[str, Any] = {}

    def answered(_: Any) -> bool:
        seen.update(browser.execute_script(READ_MOVE, answer))
        return bool(seen["message"] and (seen["ok"] or seen["error"]))

    WebDriverWait(browser, PAGE_LIMIT_SECONDS).until(answered)
    script = f"document.getElementById('{answer}').scrollIntoView({{block: 'center'}});"
    browser.execute_script(script)
    browser.save_screenshot(str(shots / f"{photo}.png"))
    return seen


async def test_a_player_opens_the_app_from_the_board_bids_grabs_and_sees_the_ledgers_chips(
    moves_e2e: E2E, web_port: int, browser: Any
) -> None:
    e2e = moves_e2e
    # docs/pictures/miniapp-bidding.png and miniapp-grab.png are this test's "2-bid" and
    # "3-grab", copied by hand.
    shots = SCREENSHOTS / "miniapp-moves"
    shots.mkdir(parents=True, exist_ok=True)
    await open_table(e2e, GROUP, ADMIN, [BANKER, PUNTER])
    texts = await e2e.texts(GROUP)
    settings = await e2e.service.settings(GROUP)
    currency = settings.currency
    state = await start_round(e2e, GROUP, PUNTER)

    # The group's board links to the bot's Main Mini App, the group as startapp.
    link = await e2e.fake.wait_for(lambda: table_link(e2e), timeout=10)
    assert link == f"https://t.me/{e2e.fake.bot_username}?startapp=g{-GROUP}"
    start_param = link.partition("startapp=")[2]
    person = {"id": BANKER["id"], "first_name": BANKER["first_name"], "username": "fay"}
    signed = init_data(e2e.fake.token, int(time.time()), user=person, start_param=start_param)
    await asyncio.to_thread(open_the_app, browser, f"http://127.0.0.1:{web_port}/miniapp/", signed)
    await asyncio.to_thread(wait_text, browser, "phase", "Bidding for dealer")
    browser.save_screenshot(str(shots / "1-bidding.png"))
    sent_before = len(e2e.sends(GROUP))

    # A bid with the page's first quick bid (the least one may bid), as /bid is.
    bid = await asyncio.to_thread(tap, browser, ".quick-bid", shots, "2-bid")
    assert bid["ok"], bid
    assert bid["message"] == texts.message("answer.bid_placed", amount=settings.min_bid)
    assert (
        bid["high_bid"] == f"{BANKER['first_name']} · {format_amount(settings.min_bid, currency)}"
    )
    assert min(bid["tap_heights"]) >= 44 and bid["page_width"] <= PHONE["width"], bid
    current = await e2e.current_round(GROUP)
    assert current is not None and current.high_bidder == BANKER["id"]

    # Another player bets in the group; then the page grabs, after them, and the round ends.
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    await e2e.expect_reply(GROUP, PUNTER, "/bet 5", "answer.bet_placed", amount=500)
    grabbing = await e2e.wait_phase(GROUP, Phase.GRABBING, state.id)
    await asyncio.to_thread(wait_text, browser, "phase", "Grab!")
    await grab_all(e2e, GROUP, grabbing, [PUNTER])
    await asyncio.to_thread(wait_text, browser, "grabbed", f"Grabbed: {PUNTER['first_name']}")
    browser.save_screenshot(str(shots / "3-grab.png"))
    grab = await asyncio.to_thread(tap, browser, "#grab", shots, "4-grabbed")
    assert grab["ok"], grab
    ended = await e2e.wait_ended(state.id)
    share = {g.user_id: g.amount for g in ended.grabs}[BANKER["id"]]
    assert grab["message"] == texts.message("answer.grabbed", share=share)

    # The page follows the round's end, and its chips are the ledger's.
    await asyncio.to_thread(wait_text, browser, "phase", "No round running")
    balance = await e2e.service.balance(GROUP, BANKER["id"])
    assert balance.held == 0
    free = format_amount(balance.available, currency)
    await asyncio.to_thread(wait_text, browser, "chips-free", free)
    await asyncio.to_thread(wait_text, browser, "chips-held", format_amount(0, currency))
    browser.save_screenshot(str(shots / "5-ended.png"))

    # A standing bet set in the page, as /autobet is.
    await asyncio.to_thread(lambda: browser.find_element("id", "standing-open").click())
    standing = await asyncio.to_thread(
        tap, browser, "#standing-set", shots, "6-standing", "5", "standing-message"
    )
    assert standing["ok"], standing
    assert standing["message"] == texts.message("answer.autobet_on", amount=500)
    assert standing["standing"] == format_amount(500, currency)
    autobet = await e2e.service.autobet(GROUP, BANKER["id"])
    assert autobet is not None and autobet.amount == 500

    # Telegram's back button closes the panel first, then the app.
    browser.execute_script("window.__pressBack();")
    assert browser.execute_script("return document.getElementById('standing-panel').hidden")
    assert "close" not in browser.execute_script("return window.__telegramCalls")
    browser.execute_script("window.__pressBack();")
    calls = browser.execute_script("return window.__telegramCalls")
    assert "BackButton.show" in calls and calls[-1] == "close", calls

    # Every answer was the page's: nothing was said to the group for the page's moves.
    answers = {texts.message("answer.bid_placed", amount=settings.min_bid), grab["message"]}
    said = [entry for entry in e2e.sends(GROUP)[sent_before:] if entry.get("plain_text") in answers]
    assert said == [], said
