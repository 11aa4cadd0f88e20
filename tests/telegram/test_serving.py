"""Polling against the fake Telegram: updates come in batches of at most
``UPDATES_PER_POLL``, each handled whole before the next poll confirms it, none lost or
handled twice."""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Update
from telegram.ext import Application, MessageHandler, filters

from bot.fakegram import FakeTelegram
from bot.telegram.serving import UPDATES_PER_POLL, poll

ANN = {"id": 11, "first_name": "Ann"}


async def test_a_backlog_is_fetched_in_batches_of_at_most_updates_per_poll() -> None:
    backlog = 2 * UPDATES_PER_POLL + 10
    handled: list[int] = []

    async def note(update: Update, context: Any) -> None:
        handled.append(update.update_id)

    async with FakeTelegram() as fake:
        queued = [fake.post_message(-1001, ANN, f"/bet {i}")["update_id"] for i in range(backlog)]
        application = Application.builder().token(fake.token).base_url(fake.base_url).build()
        application.add_handler(MessageHandler(filters.ALL, note))
        stop = asyncio.Event()
        async with application:
            polling = asyncio.create_task(poll(application, stop, timeout=0))
            for _ in range(500):
                if len(handled) == backlog:
                    break
                await asyncio.sleep(0.01)
            stop.set()
            await polling
        batches = [
            call["update_ids"]
            for call in fake.calls
            if call["method"] == "getUpdates" and call.get("update_ids")
        ]

    assert sorted(handled) == queued  # each once
    assert [len(batch) for batch in batches] == [UPDATES_PER_POLL, UPDATES_PER_POLL, 10]
