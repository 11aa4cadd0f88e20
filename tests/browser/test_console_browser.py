"""The console in a real browser: sign in with a one-time link, read the overview, check a
round's verification, change a setting, export a CSV, and be refused a group one does not
administer. Every page visited is photographed (see ``conftest``)."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from tests.helpers.browser import ServedConsole, and_wait, screenshot
from tests.helpers.console import GROUP, OTHER
from tests.helpers.game import ADMIN

#: How long a download may take before the test gives up (not what is tested).
DOWNLOAD_LIMIT_SECONDS = 30


def sign_in(browser: Any, served: ServedConsole, user_id: int = ADMIN.id) -> None:
    browser.delete_all_cookies()
    browser.get(served.sign_in_link(user_id))
    screenshot(browser, "login-link")
    and_wait(browser, browser.find_element(By.ID, "sign-in").click)
    assert browser.current_url == f"{served.base_url}/console/"


def test_an_admin_signs_in_with_a_link_and_sees_the_overview(
    browser: Any, served: ServedConsole
) -> None:
    browser.delete_all_cookies()
    browser.get(f"{served.base_url}/console/")
    assert browser.current_url == f"{served.base_url}/console/login"
    screenshot(browser, "login")
    sign_in(browser, served)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Overview"
    assert "Lucky <Table>" in browser.find_element(By.TAG_NAME, "main").text
    assert "Other group" not in browser.page_source
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart rect")
    screenshot(browser, "overview")


def test_a_used_link_does_not_sign_in_again(browser: Any, served: ServedConsole) -> None:
    link = served.sign_in_link(ADMIN.id)
    for _ in range(2):
        browser.delete_all_cookies()
        browser.get(link)
        and_wait(browser, browser.find_element(By.ID, "sign-in").click)
    shown = browser.find_element(By.TAG_NAME, "main").text
    assert "used already" in shown, shown
    screenshot(browser, "link-used")


def test_a_rounds_verification_matches(browser: Any, served: ServedConsole) -> None:
    assert served.history is not None
    sign_in(browser, served)
    and_wait(browser, browser.find_element(By.LINK_TEXT, "Rounds").click)
    screenshot(browser, "rounds")
    round_id = served.history.settled[0]
    and_wait(browser, browser.find_element(By.LINK_TEXT, str(round_id)).click)
    assert browser.find_element(By.ID, "verification").text.startswith("Verified")
    state = served.run(served.service.round(round_id))
    assert state is not None and state.seed.hex() in browser.page_source
    screenshot(browser, "round")
    browser.get(f"{served.base_url}/console/rounds/{served.history.open_round}")
    assert browser.find_element(By.ID, "verification").text.startswith("Not revealed yet")
    screenshot(browser, "round-open")


def test_a_setting_changed_in_the_browser_is_saved(browser: Any, served: ServedConsole) -> None:
    sign_in(browser, served)
    and_wait(browser, browser.find_element(By.PARTIAL_LINK_TEXT, "Lucky").click)
    screenshot(browser, "group")
    field = browser.find_element(By.ID, "set-max_bet")
    field.clear()
    field.send_keys("40")
    and_wait(browser, field.submit)
    assert browser.find_element(By.ID, "saved").text == "Saved max_bet."
    assert served.run(served.service.settings(GROUP)).max_bet == 4_000
    assert "max_bet 50.00 → 40.00" in browser.find_element(By.TAG_NAME, "main").text
    screenshot(browser, "group-saved")
    field = browser.find_element(By.ID, "set-rake")
    field.clear()
    field.send_keys("120%")
    and_wait(browser, field.submit)
    assert "above 100%" in browser.find_element(By.ID, "error").text
    screenshot(browser, "group-refused-value")


def test_a_rake_past_the_limit_is_saved_only_with_the_anyway_button(
    browser: Any, served: ServedConsole
) -> None:
    sign_in(browser, served)
    browser.get(f"{served.base_url}/console/groups/{GROUP}")
    before = served.run(served.service.settings(GROUP)).rake_bps
    field = browser.find_element(By.ID, "set-rake")
    field.clear()
    field.send_keys("9%")
    and_wait(browser, field.submit)
    warning = browser.find_element(By.ID, "edge-warning").text
    assert "Not saved yet." in warning and "more than 20%" in warning, warning
    assert "House edge (rake less rebates)" in warning
    assert served.run(served.service.settings(GROUP)).rake_bps == before
    screenshot(browser, "group-edge-warning")
    and_wait(browser, browser.find_element(By.ID, "confirm-change").click)
    assert browser.find_element(By.ID, "saved").text == "Saved rake."
    assert not browser.find_elements(By.ID, "edge-warning")
    assert served.run(served.service.settings(GROUP)).rake_bps == 900
    screenshot(browser, "group-edge-confirmed")
    field = browser.find_element(By.ID, "set-rake")  # back as it was, for the other tests
    field.clear()
    field.send_keys(f"{before // 100}%")
    and_wait(browser, field.submit)
    assert served.run(served.service.settings(GROUP)).rake_bps == before


def test_a_csv_export_downloads(browser: Any, served: ServedConsole, downloads: Path) -> None:
    sign_in(browser, served)
    browser.get(f"{served.base_url}/console/groups/{GROUP}")
    browser.find_element(By.ID, "ledger-csv").click()
    path = downloads / f"ledger-{GROUP}.csv"
    give_up = time.monotonic() + DOWNLOAD_LIMIT_SECONDS
    while not path.exists() and time.monotonic() < give_up:
        time.sleep(0.1)
    assert path.exists(), "the ledger CSV did not download"
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert rows and {row["kind"] for row in rows} >= {"credit", "settle"}
    assert sum(int(row["amount"].replace(".", "")) for row in rows) == 0


def test_a_group_one_does_not_administer_is_refused(browser: Any, served: ServedConsole) -> None:
    sign_in(browser, served)
    browser.get(f"{served.base_url}/console/groups/{OTHER}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not your group"
    assert "Other group" not in browser.page_source
    screenshot(browser, "group-refused")


def test_a_player_page(browser: Any, served: ServedConsole) -> None:
    assert served.history is not None
    sign_in(browser, served)
    browser.get(f"{served.base_url}/console/rounds/{served.history.settled[0]}")
    and_wait(browser, browser.find_element(By.LINK_TEXT, "Player0").click)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Player0"
    assert "Statement in Lucky <Table>" in browser.find_element(By.TAG_NAME, "main").text
    screenshot(browser, "player")
