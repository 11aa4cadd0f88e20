"""docs/verify.html in a real headless Chromium: it recomputes, from what a round's results
show, the same split or deal as the bot's own Python (``recompute_deal``, which ``/verify``
uses) and as ``niuniu-bot verify``/``deal`` print it, on 100 rounds of every game:
both seed derivations, client seeds in any order, shoes at any offset.

The rounds go to the page in one batch (``execute_async_script``), so the test costs one
page load and one round trip."""

from __future__ import annotations

import contextlib
import hashlib
import io
import random
import re
from pathlib import Path
from typing import Any

import pytest

from bot import cli
from bot.engine.verification import SERVER_SEED_ONLY, Derivation, recompute_deal
from bot.money import format_amount
from bot.rules import fairness
from bot.rules.cards import Card, unpack
from bot.rules.envelope import MAX_AMOUNT
from bot.rules.ruleset import RULESETS, get_ruleset
from tests.helpers.browser import PAGE_LIMIT_SECONDS, screenshot

PAGE = Path(__file__).resolve().parents[2] / "docs" / "verify.html"
ROUNDS_PER_GAME = 100
#: How long the page may take for every round of the batch (not what is tested).
BATCH_LIMIT_SECONDS = 120
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"


def _client_seeds(draw: random.Random) -> list[str]:
    return [
        "".join(draw.choice(_ALPHABET) for _ in range(draw.randint(1, 64)))
        for _ in range(draw.randint(0, 4))
    ]


def rounds_of(game: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``ROUNDS_PER_GAME`` rounds of ``game``: what the results show (the page's input)
    and what the Python code recomputes from it."""
    ruleset = get_ruleset(game)
    draw = random.Random(f"verify-page/{game}")
    rounds = []
    for number in range(ROUNDS_PER_GAME):
        seed = hashlib.sha256(f"{game}/{number}".encode()).digest()
        version = fairness.V1 if number % 4 == 0 else fairness.V2
        scope_id = draw.randint(1, 10**12)
        seeds = _client_seeds(draw) if version == fairness.V2 else []
        shown: dict[str, Any] = {
            "game": game,
            "version": str(version),
            "seed": seed.hex(),
            "scopeId": str(scope_id),
            # As the results list them (sorted); the page sorts again, so shuffle some.
            "clientSeeds": ", ".join(draw.sample(seeds, len(seeds))),
        }
        derivation = SERVER_SEED_ONLY
        if version == fairness.V2:
            scope = fairness.Scope.SHOE if ruleset.shoe_decks else fairness.Scope.ROUND
            derivation = Derivation(version, scope, scope_id, fairness.canonical_seeds(seeds))
        offset, mean_share = 0, 0
        if ruleset.decks:
            count = draw.randint(2, (ruleset.max_bettors or 0) + 1)
            if ruleset.shoe_decks:
                offset = draw.randint(0, ruleset.reshuffle_after)
            shown.update(hands=str(count), offset=str(offset))
        else:
            count = draw.randint(2, 31)
            mean_share = draw.choice([1, 5, 50, 300, 500, 999, 2_000])
            total = count * min(mean_share, MAX_AMOUNT)
            shown.update(count=str(count), total=str(total), maxShare=str(MAX_AMOUNT))
        deal = recompute_deal(
            ruleset, seed, count, mean_share=mean_share, offset=offset, derivation=derivation
        )
        expected: dict[str, Any] = {
            "commitment": deal.commitment,
            "dealSeed": deal.deal_seed.hex(),
            "clientSeeds": list(derivation.client_seeds),
        }
        if deal.cards is None:
            expected["shares"] = list(deal.outcomes)
        else:
            expected["hands"] = [[card.code for card in unpack(o)] for o in deal.outcomes]
            expected["first"], expected["last"] = deal.cards.first, deal.cards.last
        rounds.append((shown, expected))
    return rounds


@pytest.fixture(scope="module")
def page(browser: Any) -> Any:
    browser.set_script_timeout(BATCH_LIMIT_SECONDS)
    browser.get(PAGE.as_uri())
    assert browser.execute_script("return window.isSecureContext && !!crypto.subtle")
    return browser


def test_the_page_recomputes_100_rounds_of_every_game_as_the_python_code_does(page: Any) -> None:
    cases = [case for game in RULESETS for case in rounds_of(game)]
    assert len(cases) == ROUNDS_PER_GAME * len(RULESETS) and len(RULESETS) == 4
    results = page.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.niuniu.recomputeAll(arguments[0]).then(done, (e) => done([String(e)]));",
        [shown for shown, _ in cases],
    )
    assert len(results) == len(cases)
    for (shown, expected), got in zip(cases, results, strict=True):
        assert got == expected, shown
        assert shows_the_same(cli_output(shown), got), shown


def cli_output(shown: dict[str, Any]) -> str:
    """What ``niuniu-bot verify`` or ``deal`` prints for a round that shows ``shown``
    (run in this process: the same ``main`` as the installed command)."""
    argv = ["--seed", shown["seed"]]
    if shown["version"] == str(fairness.V2):
        scope = "--shoe" if get_ruleset(shown["game"]).shoe_decks else "--round"
        argv += [scope, shown["scopeId"]]
        if shown["clientSeeds"]:
            # With "=": a client seed may begin with "-", as an option does.
            argv += [f"--client-seeds={shown['clientSeeds']}"]
    if "hands" in shown:
        argv = ["deal", "--ruleset", shown["game"], "--hands", shown["hands"], *argv]
        argv += ["--offset", shown["offset"]]
    else:
        total = format_amount(int(shown["total"]))
        argv = ["verify", "--count", shown["count"], "--total", total, *argv]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(argv) == 0, argv
    return printed.getvalue()


def shows_the_same(printed: str, got: dict[str, Any]) -> bool:
    """Whether the CLI's report names the page's deal seed (derivation 2) and, in order,
    its shares or each hand's cards as dealt."""
    lines = printed.splitlines()
    if got["clientSeeds"] and f"): {got['dealSeed']}" not in printed:
        return False
    if "shares" in got:
        shares = [line.split(". ", 1)[1] for line in lines if re.match(r"\s+\d+\. ", line)]
        return shares == [format_amount(share) for share in got["shares"]]
    dealt = [line.split(": ", 1)[1].split("  =  ")[0] for line in lines if "  =  " in line]
    return dealt == [" ".join(str(Card.from_code(code)) for code in hand) for hand in got["hands"]]


def test_the_page_refuses_what_no_round_shows(page: Any) -> None:
    bad = [
        {"game": "bullbull", "version": "2", "seed": "zz", "scopeId": "1", "hands": "3"},
        {"game": "bullbull", "version": "2", "seed": "00", "scopeId": "1", "hands": "3",
         "clientSeeds": "has|bar"},
        {"game": "bullbull", "version": "1", "seed": "00", "scopeId": "1", "hands": "11"},
        {"game": "envelope68", "version": "2", "seed": "00", "scopeId": "1", "count": "3",
         "total": "2", "maxShare": "999"},
    ]  # fmt: skip
    results = page.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.niuniu.recomputeAll(arguments[0]).then(done);",
        bad,
    )
    assert [sorted(result) for result in results] == [["error"]] * len(bad)


def test_a_person_recomputes_a_deal_in_the_form(page: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from selenium.webdriver.support.wait import WebDriverWait

    seed = bytes(range(32))
    derivation = Derivation(2, fairness.Scope.ROUND, 42, ("alice-7", "bob"))
    deal = recompute_deal(get_ruleset("bullbull"), seed, 3, mean_share=0, derivation=derivation)
    Select(page.find_element(By.ID, "game")).select_by_value("bullbull")
    for field, value in (
        ("seed", seed.hex()),
        ("scope-id", "42"),
        ("client-seeds", "bob, alice-7"),
    ):
        box = page.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    page.find_element(By.ID, "go").click()
    WebDriverWait(page, PAGE_LIMIT_SECONDS).until(
        lambda _: page.find_elements(By.CSS_SELECTOR, "#result td.cards")
    )
    text = page.find_element(By.ID, "result").text
    assert deal.deal_seed.hex() in text and "alice-7, bob" in text
    for view in deal.views:
        assert view.cards is not None and " ".join(view.cards) in text
    screenshot(page, "verify-page")
