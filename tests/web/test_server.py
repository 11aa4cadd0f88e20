"""The web server over real HTTP, as a load balancer, Kubernetes or Prometheus meets it:
/healthz, /readyz (the database and the intake of updates), /metrics, the console's
mount point."""

from __future__ import annotations

import asyncio
import errno
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from bot.engine.settings import Settings
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.serving import UpdateIntake
from bot.web.metrics import BotMetrics
from bot.web.server import Readiness, WebListenFailed, WebServer, build_web_app

#: Nothing listens on port 1: connecting is refused at once.
UNREACHABLE_DATABASE = "postgresql+asyncpg://postgres@127.0.0.1:1/niuniu"

Serve = Callable[..., Awaitable[str]]


async def receiving() -> None:
    """A database check that answers."""


def always_receiving() -> str | None:
    return None


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Starts the web server of ``build_web_app(...)`` on a free port; its base URL."""
    servers: list[WebServer] = []

    async def start(
        readiness: Readiness,
        metrics: BotMetrics | None = None,
        console: web.Application | None = None,
    ) -> str:
        app = build_web_app(metrics or BotMetrics(), readiness, console=console)
        server = WebServer(app, host="127.0.0.1", port=0)
        await server.start()
        servers.append(server)
        return f"http://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        await server.stop()


async def get(url: str) -> tuple[int, str, str]:
    """Status, content type and body of ``GET url``."""
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


@pytest.fixture
async def sqlite_database(sqlite_template: Path, tmp_path: Path) -> AsyncIterator[Database]:
    target = tmp_path / "niuniu.db"
    shutil.copy(sqlite_template, target)
    database = Database.from_url(f"sqlite+aiosqlite:///{target}")
    yield database
    await database.dispose()


async def test_healthz_says_ok_whatever_the_database(serve: Serve) -> None:
    database = Database.from_url(UNREACHABLE_DATABASE)
    try:
        readiness = Readiness(
            GameService(database, Settings()).database_refuses_writes, always_receiving
        )
        base = await serve(readiness)
        assert await get(f"{base}/healthz") == (200, "text/plain; charset=utf-8", "ok")
    finally:
        await database.dispose()


async def test_readyz_is_200_when_the_database_answers_and_updates_come_in(
    serve: Serve, sqlite_database: Database
) -> None:
    service = GameService(sqlite_database, Settings())
    base = await serve(Readiness(service.database_refuses_writes, always_receiving))
    assert await get(f"{base}/readyz") == (200, "text/plain; charset=utf-8", "ready")


async def test_readyz_is_503_when_the_database_is_unreachable(serve: Serve) -> None:
    database = Database.from_url(UNREACHABLE_DATABASE)
    try:
        service = GameService(database, Settings())
        base = await serve(Readiness(service.database_refuses_writes, always_receiving))
        status, _, reason = await get(f"{base}/readyz")
    finally:
        await database.dispose()
    assert status == 503
    assert reason.startswith("the database does not answer (")
    assert "127.0.0.1" not in reason and "postgres" not in reason


async def test_readyz_is_503_when_the_database_does_not_answer_in_time(serve: Serve) -> None:
    never = asyncio.Event()

    async def hanging() -> None:
        await never.wait()

    base = await serve(Readiness(hanging, always_receiving, timeout=0.05))
    assert await get(f"{base}/readyz") == (
        503,
        "text/plain; charset=utf-8",
        "the database did not answer within 0.05 s",
    )


async def test_readyz_is_503_with_the_reason_when_no_updates_come_in(
    serve: Serve, sqlite_database: Database
) -> None:
    class Stopped:
        running = False

    class Running:
        running = True

    service = GameService(sqlite_database, Settings())
    for application, reason in [
        (Stopped(), "the bot is not running"),
        (Running(), "no updates come in: not polling, and no webhook set"),
    ]:
        intake = UpdateIntake(application)  # type: ignore[arg-type]
        base = await serve(Readiness(service.database_refuses_writes, intake.not_receiving))
        assert await get(f"{base}/readyz") == (503, "text/plain; charset=utf-8", reason)
    # Telegram was told of the webhook: ready.
    intake = UpdateIntake(Running())  # type: ignore[arg-type]
    intake.webhook_set = True
    base = await serve(Readiness(service.database_refuses_writes, intake.not_receiving))
    assert (await get(f"{base}/readyz"))[0] == 200


async def test_readyz_follows_the_polling_loop(serve: Serve, sqlite_database: Database) -> None:
    class Running:
        running = True

    intake = UpdateIntake(Running())  # type: ignore[arg-type]
    stop = asyncio.Event()

    async def polling() -> None:
        await stop.wait()

    intake.poller = asyncio.create_task(polling())
    service = GameService(sqlite_database, Settings())
    base = await serve(Readiness(service.database_refuses_writes, intake.not_receiving))
    assert (await get(f"{base}/readyz"))[:1] == (200,)
    stop.set()
    await intake.poller
    assert await get(f"{base}/readyz") == (503, "text/plain; charset=utf-8", "polling has stopped")


async def test_metrics_are_prometheus_text_of_the_bots_registry(serve: Serve) -> None:
    metrics = BotMetrics()
    metrics.update_handled("newround", 0.02)
    metrics.bot_api_called("sendMessage")
    base = await serve(Readiness(receiving, always_receiving), metrics)
    status, content_type, text = await get(f"{base}/metrics")
    assert status == 200
    assert content_type == CONTENT_TYPE_LATEST
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    assert samples[("niuniu_updates_handled_total", (("kind", "newround"),))] == 1
    assert samples[("niuniu_telegram_requests_total", (("method", "sendMessage"),))] == 1


async def test_a_console_application_is_mounted_under_console(serve: Serve) -> None:
    async def front_page(request: web.Request) -> web.Response:
        return web.Response(text="the console")

    console = web.Application()
    console.router.add_get("/", front_page)
    base = await serve(Readiness(receiving, always_receiving), console=console)
    assert (await get(f"{base}/console/"))[::2] == (200, "the console")
    assert (await get(f"{base}/healthz"))[::2] == (200, "ok")


async def test_a_port_taken_already_fails_the_start_in_a_way_start_up_can_word(
    serve: Serve,
) -> None:
    base = await serve(Readiness(receiving, always_receiving))
    taken = int(base.rpartition(":")[2])
    second = WebServer(
        build_web_app(BotMetrics(), Readiness(receiving, always_receiving)),
        host="127.0.0.1",
        port=taken,
    )
    with pytest.raises(WebListenFailed) as caught:
        await second.start()
    assert (caught.value.errno, caught.value.strerror) == (
        errno.EADDRINUSE,
        "Address already in use",
    )
    await second.stop()  # nothing to stop: harmless
    assert (await get(f"{base}/healthz"))[0] == 200
