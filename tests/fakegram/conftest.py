"""Fixtures: a running fake Telegram server and a python-telegram-bot ``Bot`` pointed at it."""

from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from bot.fakegram import FakeTelegram


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(fake.token, base_url=fake.base_url) as ptb_bot:
        yield ptb_bot
