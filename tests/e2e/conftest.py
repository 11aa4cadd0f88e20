"""Fixtures of the end-to-end tests: the bot process against the fake Telegram server.

Modules share one bot process (module scope: each test module runs on one event loop,
``pytestmark = pytest.mark.asyncio(loop_scope="module")``); tests of a module keep apart
by playing in different groups. A failing test shows the end of the bot's log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from tests.e2e.harness import E2E, FAST_GAME, running_bot
from tests.e2e.soak import scratch_database
from tests.helpers.browser import headless_chromium
from tests.helpers.databases import POSTGRES_ADMIN_URL, REQUIRE_POSTGRES
from tests.helpers.ports import free_port


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    session = getattr(item, "funcargs", {}).get("e2e")
    if report.failed and isinstance(session, E2E):
        report.sections.append((f"bot log ({session.bot.log_path})", session.bot.log(20_000)))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def e2e(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[E2E]:
    """The bot process of this module (its game settings: the module's ``GAME``; its
    replies a minute per group: ``REPLIES_PER_MINUTE``, else the harness's)."""
    game = getattr(request.module, "GAME", FAST_GAME)
    replies = getattr(request.module, "REPLIES_PER_MINUTE", None)
    folder = tmp_path_factory.mktemp("e2e")
    async with running_bot(folder, game=game, replies_per_minute=replies) as session:
        yield session


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless chromium (the test skips without it, or fails where it is required)."""
    with headless_chromium(tmp_path_factory.mktemp("downloads")) as driver:
        yield driver


@pytest.fixture
def web_port() -> int:
    """A free port for the bot's web server (the console, the Mini App)."""
    return free_port()


@pytest.fixture
async def soak_database_url() -> AsyncIterator[str]:
    """A PostgreSQL database of a soak's own, migrated, dropped afterwards."""
    try:
        await (await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=3)).close()
    except Exception as error:  # any failure to connect means "no server here"
        message = f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)
    async with scratch_database(POSTGRES_ADMIN_URL) as url:
        yield url
