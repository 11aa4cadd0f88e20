"""The HTTP control endpoints, their client, and the standalone server command."""

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup

from bot.fakegram import FakeTelegram, FakeTelegramClient
from tests.fakegram.sample import ALICE, BOB, GROUP_ID

REPO_ROOT = Path(__file__).resolve().parents[2]


async def test_client_drives_a_conversation(fake: FakeTelegram, bot: Bot) -> None:
    async with FakeTelegramClient(fake.root_url) as client:
        posted = await client.post_message(GROUP_ID, ALICE, "/start_round")
        [update] = await bot.get_updates()
        assert update.update_id == posted["update_id"]
        assert update.message is not None and update.message.text == "/start_round"

        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Grab", callback_data="grab")]])
        sent = await bot.send_message(GROUP_ID, "Round 1", reply_markup=keyboard)
        pressed = await client.press_button(GROUP_ID, sent.message_id, BOB, "grab")
        await bot.answer_callback_query(pressed["callback_query"]["id"], text="Got it")
        await client.set_chat_member(GROUP_ID, BOB["id"], "administrator")
        redelivered = await client.redeliver(posted["update_id"])

        assert redelivered["update_id"] == posted["update_id"]
        assert [entry["kind"] for entry in await client.transcript(GROUP_ID)] == ["send"]
        assert (await client.messages(GROUP_ID))[sent.message_id]["plain_text"] == "Round 1"
        assert [answer["text"] for answer in await client.callback_answers()] == ["Got it"]
        assert "answerCallbackQuery" in [call["method"] for call in await client.calls()]
        assert (await bot.get_chat_member(GROUP_ID, BOB["id"])).status == "administrator"


async def test_client_traces_its_requests(fake: FakeTelegram) -> None:
    """A bench times when each press left the client: its trace configs see every request."""
    paths: list[str] = []

    async def headers_sent(
        session: aiohttp.ClientSession,
        context: object,
        params: aiohttp.TraceRequestHeadersSentParams,
    ) -> None:
        paths.append(params.url.path)

    tracing = aiohttp.TraceConfig()
    tracing.on_request_headers_sent.append(headers_sent)
    async with FakeTelegramClient(fake.root_url, trace_configs=[tracing]) as client:
        await client.post_message(GROUP_ID, ALICE, "hi")
        await client.transcript(GROUP_ID)

    assert paths == ["/_fake/message", "/_fake/transcript"]


async def test_client_waits_for_the_transcript(fake: FakeTelegram, bot: Bot) -> None:
    async with FakeTelegramClient(fake.root_url) as client:
        waiting = asyncio.create_task(
            client.wait_for_transcript(
                GROUP_ID,
                lambda transcript: [e for e in transcript if e["plain_text"] == "pong"],
            )
        )
        await bot.send_message(GROUP_ID, "ping?")
        await bot.send_message(GROUP_ID, "pong")

        [entry] = await asyncio.wait_for(waiting, timeout=2)
        assert entry["message_id"] == 2

        with pytest.raises(TimeoutError):
            await client.wait_for_transcript(GROUP_ID, lambda transcript: False, timeout=0.1)


async def test_control_mistakes_are_reported(fake: FakeTelegram) -> None:
    async with FakeTelegramClient(fake.root_url) as client:
        with pytest.raises(ValueError, match="private chat's id is the user's id"):
            await client.post_message(ALICE["id"] + 1, ALICE, "hi", chat_type="private")
        with pytest.raises(ValueError, match="negative ids"):
            await client.post_message(42, ALICE, "hi")
        with pytest.raises(ValueError, match="no update 7"):
            await client.redeliver(7)
        with pytest.raises(ValueError, match="pattern: "):
            await client.hold_sends("(unclosed")

    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{fake.root_url}/_fake/message", json={"chat_id": GROUP_ID}) as response,
    ):
        assert response.status == 400
        assert await response.json() == {"error": "missing field 'user'"}


async def test_private_chats_use_the_user_id(fake: FakeTelegram, bot: Bot) -> None:
    fake.post_message(ALICE["id"], ALICE, "/start", chat_type="private")

    [update] = await bot.get_updates()
    reply = await bot.send_message(ALICE["id"], "welcome")

    assert update.effective_chat is not None
    assert update.effective_chat.type == "private"
    assert update.effective_chat.username == "alice"
    assert reply.chat.first_name == "Alice"


async def test_standalone_server_runs_until_sigterm() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.fakegram", "--port", "0", "--token", "42:CLI",
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        base_url = (await asyncio.wait_for(process.stdout.readline(), timeout=10)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/bot")

        async with Bot("42:CLI", base_url=base_url) as bot:
            assert bot.username == "niuniu_test_bot"
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        exit_code = await asyncio.wait_for(process.wait(), timeout=10)
    assert exit_code == 0
