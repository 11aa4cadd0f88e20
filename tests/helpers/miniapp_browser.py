"""The Mini App in headless chromium as Telegram's client opens it, at a phone's size, and
the waits its browser tests share (``tests/e2e/test_miniapp_*``). Selenium blocks: a test
runs these in a thread, so that the fake Telegram on its event loop answers the bot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.browser import PAGE_LIMIT_SECONDS

#: A phone's screen: 360 px wide, as the issue asks the page to read well at.
PHONE = {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True}
#: The documented stand-in for ``telegram-web-app.js`` (docs/miniapp.md).
STUB = Path(__file__).resolve().parent / "telegram_web_app_stub.js"


def open_the_app(browser: Any, url: str, signed: str) -> None:
    """Open the page as Telegram's client would, at a phone's size: the stub in place of
    Telegram's script (run before the page's own), and telegram.org blocked, so that the
    real script is not fetched."""
    source = STUB.read_text(encoding="utf-8").replace("__INIT_DATA__", json.dumps(signed))
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*telegram.org*"]})
    browser.get(url)


def wait_text(browser: Any, element_id: str, wanted: str) -> str:
    """Wait until the element's text is ``wanted`` (the page polls every second)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    def shown(_: Any) -> bool:
        return bool(browser.find_element(By.ID, element_id).text == wanted)

    try:
        WebDriverWait(browser, PAGE_LIMIT_SECONDS).until(shown)
    except Exception:
        text = browser.find_element(By.ID, element_id).text
        raise AssertionError(f"#{element_id} shows {text!r}, not {wanted!r}") from None
    return wanted


def wait_until(browser: Any, script: str, check: Any, what: str, *args: Any) -> dict[str, Any]:
    """Run ``script`` until ``check`` holds of what it returns; what it returned then."""
    from selenium.webdriver.support.wait import WebDriverWait

    seen: dict[str, Any] = {}

    def holds(_: Any) -> bool:
        seen.clear()
        seen.update(browser.execute_script(script, *args))
        return bool(check(seen))

    try:
        WebDriverWait(browser, PAGE_LIMIT_SECONDS, poll_frequency=0.05).until(holds)
    except Exception:
        raise AssertionError(f"the page never showed {what}: {seen}") from None
    return dict(seen)


def tap(browser: Any, selector: str) -> None:
    """Tap the element ``selector`` finds, as a finger would."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, selector).click()
