"""A console sign-in link sent for real (``/console`` through the bot to the fake Telegram)
leaves no working token in the log at DEBUG, where python-telegram-bot logs each Bot API
call's parameters and answer, as text and as JSON."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.bootstrap import assemble
from bot.config import WebConfig
from bot.fakegram.server import FakeTelegram
from bot.telegram.runner import configure_logging
from bot.telegram.serving import running
from bot.telegram.webhook import SECRET_HEADER, WebhookServer
from bot.web.signing import SIGNED_TOKEN
from tests.helpers.databases import config_on_fake

USER = 4343
SECRET = "s3cret-token"


@pytest.fixture
def root_logging() -> Iterator[None]:
    """Put the root logger back as it was (configure_logging replaces its handlers)."""
    root, driver = logging.getLogger(), logging.getLogger("aiosqlite")
    handlers, level, driver_level = root.handlers[:], root.level, driver.level
    # aiosqlite's thread logs each operation at DEBUG, the last one after the test's
    # capture has closed: not what this test is about.
    driver.setLevel(logging.INFO)
    yield
    root.handlers[:], root.level = handlers, level
    driver.setLevel(driver_level)


def _console_command() -> dict[str, object]:
    return {
        "update_id": 1,
        "message": {
            "message_id": 1,
            "date": int(time.time()),
            "chat": {"id": USER, "type": "private", "first_name": "Op"},
            "from": {"id": USER, "is_bot": False, "first_name": "Op"},
            "text": "/console",
            "entities": [{"type": "bot_command", "offset": 0, "length": 8}],
        },
    }


async def _send_a_link(tmp_path: Path, sqlite_template: Path, log_format: str) -> str:
    """Run the bot, have it answer ``/console`` with DEBUG logs on; the link it sent."""
    async with FakeTelegram() as fake:
        web = WebConfig(host="127.0.0.1", port=1, public_url="https://bot.example", console=True)
        config = config_on_fake(fake, tmp_path, sqlite_template, web=web)
        configure_logging("DEBUG", [fake.token], log_format)
        assembly = assemble(config, rate_limiter=False)
        application = assembly.application
        async with running(application, assembly.game, polling=False):
            server = WebhookServer(
                {"hook": application}, listen="127.0.0.1", port=0, secret_token=SECRET
            )
            await server.start()
            try:
                async with aiohttp.ClientSession() as http:
                    response = await http.post(
                        f"http://127.0.0.1:{server.port}/hook",
                        json=_console_command(),
                        headers={SECRET_HEADER: SECRET},
                    )
                    assert response.status == 200
                sent = await fake.wait_for(lambda: fake.transcript(USER))
            finally:
                await server.stop()
        await assembly.database.dispose()
    found = SIGNED_TOKEN.search(sent[0]["text"])
    assert found is not None, sent
    return found[0]


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_a_sign_in_link_sent_for_real_is_blanked_in_debug_logs(
    tmp_path: Path,
    sqlite_template: Path,
    capsys: pytest.CaptureFixture[str],
    root_logging: None,
    log_format: str,
) -> None:
    token = await _send_a_link(tmp_path, sqlite_template, log_format)
    logged = capsys.readouterr().err
    if log_format == "json":
        lines = [json.loads(line) for line in logged.splitlines()]
        logged = "\n".join(str(line["message"]) for line in lines)
    # The call that sent the link is logged, the token blanked (its answer comes back cut
    # to the message's id and chat: bot.telegram.http).
    calls = [
        line for line in logged.splitlines() if "Calling Bot API endpoint `sendMessage`" in line
    ]
    assert calls and all("/console/login?token=<redacted>" in line for line in calls)
    assert token not in logged
    assert token.rpartition(".")[2] not in logged  # not even its signature
    assert not re.search(r"token=(?!<redacted>)", logged.partition("/console/login?")[2])
