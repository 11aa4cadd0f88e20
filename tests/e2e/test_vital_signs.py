"""The bot's vital signs over real HTTP, as Prometheus and a load balancer meet them: the
bot process started with ``NIUNIU_WEB_LISTEN``, a round played through the fake Telegram,
then /metrics scraped and parsed with prometheus-client's own parser; /healthz and
/readyz; the start-up log and JSON logs; a clean stop on SIGTERM."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from bot.engine.round import Phase, Round, VoidReason
from bot.fakegram.server import FakeTelegram
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    BotProcess,
    eventually,
    grab_all,
    open_table,
    running_bot,
    start_round,
    user,
    write_config,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_000_777
ADMIN = user(701, "Ada", "ada")
DEALER = user(702, "Bao", "bao")
BETTORS = [user(703, "Chen", "chen"), user(704, "Dewi")]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def free_port() -> int:
    """A port nothing listens on now (the bot binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def web_port() -> int:
    return free_port()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def e2e(tmp_path_factory: pytest.TempPathFactory, web_port: int) -> AsyncIterator[E2E]:
    """The bot process with its web server on ``web_port``."""
    folder = tmp_path_factory.mktemp("vitals")
    async with running_bot(folder, env={"NIUNIU_WEB_LISTEN": f"127.0.0.1:{web_port}"}) as session:
        yield session


async def get(url: str) -> tuple[int, str, str]:
    """Status, content type and body of ``GET url``."""
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


async def scrape(port: int) -> Samples:
    """``GET /metrics``, parsed as Prometheus parses it: (name, labels) -> value."""
    status, content_type, text = await get(f"http://127.0.0.1:{port}/metrics")
    assert (status, content_type) == (200, CONTENT_TYPE_LATEST)
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; the series must be in the scrape (a missing one fails the test,
    rather than reading as 0)."""
    key = (name, frozenset(labels.items()))
    assert key in samples, f"{name}{labels} is not in the scrape"
    return samples[key]


def counted(samples: Samples, name: str, **labels: str) -> float:
    """A labelled counter's value; 0 for a series not there (it shows once incremented):
    for a scrape before the test acted, or a count the test expects may be 0."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def series(samples: Samples, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: number for (found, labels), number in samples.items() if found == name}


async def play_round(e2e: E2E) -> Round:
    """The dealer bids, one bettor bets by command and one by a bare number, everyone
    grabs; the round as it ended."""
    state = await start_round(e2e, GROUP, DEALER)
    e2e.say(GROUP, DEALER, "/bid 100")
    state = await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    e2e.say(GROUP, BETTORS[0], "/bet 5")
    e2e.say(GROUP, BETTORS[1], "10")
    await e2e.wait_bets(GROUP, 2)
    state = await e2e.wait_phase(GROUP, Phase.GRABBING, state.id)
    await grab_all(e2e, GROUP, state, [*BETTORS, DEALER])
    return await e2e.wait_ended(state.id)


async def test_healthz_and_readyz_answer_while_the_bot_serves(e2e: E2E, web_port: int) -> None:
    base = f"http://127.0.0.1:{web_port}"
    assert await get(f"{base}/healthz") == (200, "text/plain; charset=utf-8", "ok")
    assert await get(f"{base}/readyz") == (200, "text/plain; charset=utf-8", "ready")


async def test_metrics_count_what_a_round_did(e2e: E2E, web_port: int) -> None:
    before = await scrape(web_port)
    await open_table(e2e, GROUP, ADMIN, [DEALER, *BETTORS])
    played: list[Round] = []
    for _ in range(3):  # the dealer grabbed 0.01: a re-deal; play the new round
        played.append(await play_round(e2e))
        if played[-1].void_reason is not VoidReason.REDEAL:
            break
    ended = played[-1]
    assert ended.phase is Phase.SETTLED, ended
    await e2e.barrier(GROUP, ADMIN)  # every update sent so far has been handled
    sends = len(e2e.sends(GROUP))
    toasts = len(e2e.fake.callback_answers)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - counted(before, name, **labels)

    async def settled_counted() -> Samples | None:
        samples = await scrape(web_port)
        settled = counted(samples, "niuniu_rounds_settled_total", game="envelope68")
        settled_before = counted(before, "niuniu_rounds_settled_total", game="envelope68")
        return samples if settled > settled_before else None

    after = await eventually(settled_counted, what="the settled round counted")

    # Updates by kind: each command by its name, button presses, and texts (the greetings
    # open_table posts, and the bare-number bets).
    rounds = len(played)
    assert delta("niuniu_updates_handled_total", kind="open") == 1
    assert delta("niuniu_updates_handled_total", kind="credit") == 3
    assert delta("niuniu_updates_handled_total", kind="newround") == rounds
    assert delta("niuniu_updates_handled_total", kind="bid") == rounds
    assert delta("niuniu_updates_handled_total", kind="bet") == rounds
    assert delta("niuniu_updates_handled_total", kind="message") == 3 + rounds
    assert delta("niuniu_updates_handled_total", kind="button") >= 3 * rounds
    assert delta("niuniu_command_duration_seconds_count", kind="open") == 1
    assert delta("niuniu_command_duration_seconds_sum", kind="open") > 0

    # Every message and toast the fake Telegram received was counted by its method.
    assert value(after, "niuniu_telegram_requests_total", method="sendMessage") >= sends > 0
    assert value(after, "niuniu_telegram_requests_total", method="answerCallbackQuery") >= toasts
    assert toasts > 0  # the grabs were pressed
    assert value(after, "niuniu_telegram_requests_total", method="getMe") >= 1
    assert value(after, "niuniu_telegram_requests_total", method="getUpdates") >= 1
    assert value(after, "niuniu_telegram_requests_total", method="editMessageText") > 0

    # Each round's bidding and betting windows ended by their deadline, and not a whole
    # window late (lateness in seconds, not some other unit).
    deadlines = delta("niuniu_deadline_lateness_seconds_count")
    assert deadlines >= 2 * rounds
    lateness = delta("niuniu_deadline_lateness_seconds_sum")
    assert lateness < deadlines * FAST_GAME["bid_seconds"], (lateness, deadlines)
    assert delta("niuniu_rounds_settled_total", game="envelope68") == 1
    redeals = counted(after, "niuniu_rounds_voided_total", reason="redeal") - counted(
        before, "niuniu_rounds_voided_total", reason="redeal"
    )
    assert redeals == rounds - 1

    # What the database holds: every open phase of every game; one group plays here, so
    # at most one round is open (the next may have started after the pause), and chips
    # are held only while it is, out of what the players were credited.
    open_rounds = series(after, "niuniu_rounds")
    assert {dict(labels)["phase"] for labels in open_rounds} == {"bidding", "betting", "grabbing"}
    assert frozenset({("phase", "betting"), ("game", "envelope68")}) in open_rounds
    assert sum(open_rounds.values()) in (0, 1), open_rounds
    held = value(after, "niuniu_chips_in_play_cents")
    assert held == 0 or sum(open_rounds.values()) == 1, (held, open_rounds)
    assert held <= CREDIT_CENTS * len([DEALER, *BETTORS])
    # The retries are counted (none need happen), and what waited to be sent goes out.
    assert ("niuniu_database_retries_total", frozenset()) in after

    async def outbox_emptied() -> bool:
        return value(await scrape(web_port), "niuniu_outbox_depth") == 0

    await eventually(outbox_emptied, what="the outbox emptied")


async def test_the_start_up_log_names_the_bot_the_mode_and_the_database_without_its_password(
    postgres_url: str, tmp_path: Path
) -> None:
    """On PostgreSQL with a password in the URL (the test server trusts every login), JSON
    logs; SIGTERM stops the bot and its web server cleanly."""
    database_url = make_url(postgres_url).set(password="hunter2")
    with_password = database_url.render_as_string(hide_password=False)
    port = free_port()
    config = write_config(tmp_path / "niuniu.toml", game=FAST_GAME)
    environment = {"NIUNIU_WEB_LISTEN": f"127.0.0.1:{port}", "NIUNIU_LOG_FORMAT": "json"}
    async with FakeTelegram() as fake:
        bot = BotProcess(fake, config, with_password, tmp_path / "bot.log", environment)
        try:
            await bot.start()
            await eventually(lambda: "serving @" in bot.log(), what="the start-up log")
            assert (await get(f"http://127.0.0.1:{port}/readyz"))[0] == 200
            exit_code = await bot.terminate()
        finally:
            await bot.kill()
        token = fake.token

    assert exit_code == 0, bot.log()
    with pytest.raises(aiohttp.ClientConnectionError):
        await get(f"http://127.0.0.1:{port}/healthz")
    log = bot.log(1_000_000)
    assert "hunter2" not in log
    assert token.partition(":")[2] not in log
    entries = [json.loads(line) for line in log.splitlines() if line and not line.startswith("=")]
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in entries)
    messages = [entry["message"] for entry in entries if entry["level"] == "INFO"]
    hidden = with_password.replace(":hunter2@", ":***@")
    assert f"serving @{fake.bot_username} in polling mode, database {hidden}" in messages
    assert f"web server on 127.0.0.1:{port} (/healthz, /readyz, /metrics)" in messages


async def test_in_webhook_mode_the_web_server_runs_beside_the_webhook_and_stops_with_it(
    tmp_path: Path,
) -> None:
    """Ready once Telegram was told of the webhook; SIGTERM closes both servers."""
    web_port, hook_port = free_port(), free_port()
    config = write_config(tmp_path / "niuniu.toml", game=FAST_GAME)
    with config.open("a", encoding="utf-8") as file:
        file.write(
            f'[telegram.webhook]\nlisten = "127.0.0.1"\nport = {hook_port}\n'
            'public_url = "https://bot.example"\nsecret_token = "webhook_secret_1"\n'
        )
    environment = {"NIUNIU_MODE": "webhook", "NIUNIU_WEB_LISTEN": f"127.0.0.1:{web_port}"}
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}"

    async def ready() -> bool:
        try:
            return (await get(f"http://127.0.0.1:{web_port}/readyz"))[0] == 200
        except aiohttp.ClientConnectionError:
            return False  # not listening yet

    async with FakeTelegram() as fake:
        bot = BotProcess(fake, config, database_url, tmp_path / "bot.log", environment)
        try:
            await bot.start(ready=ready)
            assert not fake.is_polling
            assert [c["method"] for c in fake.calls].count("setWebhook") == 1
            assert (await get(f"http://127.0.0.1:{web_port}/healthz"))[0] == 200
            exit_code = await bot.terminate()
        finally:
            await bot.kill()

    assert exit_code == 0, bot.log()
    for port in (web_port, hook_port):
        with pytest.raises(aiohttp.ClientConnectionError):
            await get(f"http://127.0.0.1:{port}/healthz")
    assert "serving @niuniu_test_bot in webhook mode, database sqlite+aiosqlite:///" in bot.log()
