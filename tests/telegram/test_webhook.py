"""Webhook mode: an update is answered only after it was handled, and only with the secret."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.bootstrap import assemble
from bot.config import ConfigError, load_config
from bot.fakegram.server import FakeTelegram
from bot.service.game import GameService
from bot.telegram.serving import running
from bot.telegram.webhook import SECRET_HEADER, WebhookServer, webhook_paths
from tests.helpers.databases import config_on_fake

OPERATOR = 4242
GROUP = -1001234
SECRET = "s3cret-token"


def _open_command(update_id: int) -> dict[str, object]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 1,
            "date": int(time.time()),
            "chat": {"id": GROUP, "type": "supergroup", "title": "Webhook group"},
            "from": {"id": OPERATOR, "is_bot": False, "first_name": "Op"},
            "text": "/open",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }


@pytest.fixture
async def webhook(tmp_path: Path, sqlite_template: Path) -> AsyncIterator[tuple[str, GameService]]:
    async with FakeTelegram() as fake:
        config = config_on_fake(fake, tmp_path, sqlite_template, operators=frozenset({OPERATOR}))
        assembly = assemble(config, rate_limiter=False)
        application, service = assembly.application, assembly.service
        async with running(application, assembly.game, polling=False):
            server = WebhookServer(
                {"hook": application}, listen="127.0.0.1", port=0, secret_token=SECRET
            )
            await server.start()
            try:
                yield f"http://127.0.0.1:{server.port}/hook", service
            finally:
                await server.stop()
        await assembly.database.dispose()


async def test_an_update_is_handled_before_telegram_gets_its_answer(
    webhook: tuple[str, GameService],
) -> None:
    url, service = webhook
    async with aiohttp.ClientSession() as http:
        response = await http.post(url, json=_open_command(1), headers={SECRET_HEADER: SECRET})
        assert response.status == 200
    assert await service.is_open(GROUP)


async def test_a_request_without_the_secret_is_refused_and_changes_nothing(
    webhook: tuple[str, GameService],
) -> None:
    url, service = webhook
    async with aiohttp.ClientSession() as http:
        wrong = await http.post(url, json=_open_command(2), headers={SECRET_HEADER: "guess"})
        missing = await http.post(url, json=_open_command(3))
        garbage = await http.post(url, data=b"{not json", headers={SECRET_HEADER: SECRET})
        assert await garbage.text() == "not JSON"
    assert (wrong.status, missing.status, garbage.status) == (403, 403, 400)
    assert not await service.is_open(GROUP)


@pytest.mark.parametrize(
    "body",
    [
        [],
        [_open_command(4)],
        "an update",
        4,
        None,
        {"message": _open_command(4)["message"]},
        {**_open_command(4), "update_id": "4"},
        {**_open_command(4), "update_id": True},
        {**_open_command(4), "update_id": 2**70},
        {**_open_command(4), "message": "/open"},
    ],
    ids=[
        "empty list", "list of updates", "string", "number", "null", "no update_id",
        "string id", "boolean id", "id too large", "message not an object",
    ],
)  # fmt: skip
async def test_json_that_is_not_an_update_is_refused_and_changes_nothing(
    webhook: tuple[str, GameService], body: object
) -> None:
    url, service = webhook
    async with aiohttp.ClientSession() as http:
        headers = {SECRET_HEADER: SECRET, "Content-Type": "application/json"}
        response = await http.post(url, data=json.dumps(body), headers=headers)
        assert response.status == 400
        assert await response.text() == "not an update"
        assert not await service.is_open(GROUP)
        # Its update id was not recorded as processed: the real update 4 still counts.
        response = await http.post(url, json=_open_command(4), headers={SECRET_HEADER: SECRET})
        assert response.status == 200
    assert await service.is_open(GROUP)


def test_webhook_mode_is_refused_without_a_secret_token(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[telegram]\nmode = "webhook"\n[telegram.webhook]\npublic_url = "https://bot.example"\n'
    )
    with pytest.raises(ConfigError, match="secret_token"):
        load_config(config, environ={})
    config.write_text(config.read_text() + 'secret_token = "abc"\n')
    assert load_config(config, environ={}).webhook.secret_token == "abc"


def test_one_bot_is_served_at_the_path_and_each_of_several_at_its_own_under_it() -> None:
    assert webhook_paths("telegram", [123]) == ["/telegram"]
    assert webhook_paths("/hook/", [123, 456]) == ["/hook/123", "/hook/456"]
