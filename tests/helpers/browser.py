"""A real browser against the console: Debian's chromium and chromium-driver, headless,
driven by Selenium, with the console served over a real socket (the fixtures are in
``tests/browser/conftest.py``).

Selenium blocks, so the console runs in an event loop of its own thread (its database,
its service and its aiohttp server all live in that loop); a test reaches them with
``served.run(coroutine)``. Every page a test visits is saved as a screenshot at a
desktop and a phone width under ``build/screenshots/`` (or ``$NIUNIU_SCREENSHOTS``).

Without chromium the tests skip, saying why; with ``NIUNIU_REQUIRE_BROWSER=1`` (set by
``.ci/run``) they fail instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aiohttp import web

from bot.service.game import GameService
from bot.store.db import Database
from bot.web.console import LinkSigner, build_console
from tests.helpers.console import OPERATOR, TOKEN, History, is_admin_of, play_history
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import TEST_SETTINGS

REQUIRE_BROWSER = os.environ.get("NIUNIU_REQUIRE_BROWSER") == "1"
SCREENSHOTS = Path(
    os.environ.get("NIUNIU_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build/screenshots")
)
#: The widths every page is photographed at: a laptop, and a phone (an iPhone 12-15).
WIDTHS = {"desktop": 1280, "phone": 390}
#: How long a page may take to load before a test gives up (not what is tested).
PAGE_LIMIT_SECONDS = 30

_T = TypeVar("_T")


def browser_paths() -> tuple[str, str]:
    """chromium and chromedriver, or skip (fail when the browser is required)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        message = "chromium and chromium-driver are not installed (apt-get install them)"
        if REQUIRE_BROWSER:
            pytest.fail(message)
        pytest.skip(message)
    return chromium, driver


class ServedConsole:
    """The console with a played history, served on 127.0.0.1 from its own thread."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.clock = Clock()
        self.base_url = ""
        self.history: History | None = None

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def start(self) -> None:
        self.thread.start()
        self.run(self._start())

    async def _start(self) -> None:
        self.db = Database.from_url(self.database_url)
        self.service = GameService(self.db, TEST_SETTINGS, clock=self.clock, seed_source=Seeds())
        self.history = await play_history(self.service, self.clock)

        async def is_group_admin(chat_id: int, user_id: int) -> bool:
            return is_admin_of(chat_id, user_id)

        listening = socket.socket()
        listening.bind(("127.0.0.1", 0))
        port = listening.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        root = web.Application()
        root.add_subapp(
            "/console/",
            build_console(
                service=self.service,
                bot_token=TOKEN,
                operators=frozenset({OPERATOR}),
                public_url=self.base_url,
                is_group_admin=is_group_admin,
                clock=lambda: self.clock.now_ms / 1000,
            ),
        )
        self.runner = web.AppRunner(root)
        await self.runner.setup()
        await web.SockSite(self.runner, listening).start()

    def stop(self) -> None:
        async def _stop() -> None:
            await self.runner.cleanup()
            await self.db.dispose()

        self.run(_stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()

    def sign_in_link(self, user_id: int) -> str:
        """The link ``/console`` would send ``user_id``."""
        token = LinkSigner(TOKEN).issue(user_id, self.clock.now_ms // 1000)
        return f"{self.base_url}/console/login?token={token}"


@contextlib.contextmanager
def headless_chromium(downloads: Path) -> Iterator[Any]:
    """A headless chromium driven by Selenium, saving downloads to ``downloads`` (skips,
    or fails, without chromium: see ``browser_paths``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in CI containers
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1280,900",
    ):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    try:
        yield driver
    finally:
        driver.quit()


def and_wait(browser: Any, action: Any) -> None:
    """Click or submit, then wait for the next page: Selenium returns from a click before
    the browser has left the page, and reading it then reads the old one."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    page = browser.find_element(By.TAG_NAME, "html")
    action()

    def left(_: Any) -> bool:
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            # Asked in the middle of the navigation, chromedriver may say this instead of
            # "stale" (seen in CI): the old page is gone either way.
            if "does not belong to the document" in str(error):
                return True
            raise
        return False

    WebDriverWait(browser, PAGE_LIMIT_SECONDS).until(left)


def screenshot(browser: Any, name: str) -> list[Path]:
    """Save the whole current page at each of ``WIDTHS``; the files written."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    saved = []
    for label, width in WIDTHS.items():
        metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        metrics["height"] = min(int(height), 6000)
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        path = SCREENSHOTS / f"{name}-{label}.png"
        browser.save_screenshot(str(path))
        saved.append(path)
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return saved
