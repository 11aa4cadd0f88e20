"""Answers that wait for a group's budget: the timer that wakes them is not kept once it
fired (a process answering many busy groups would otherwise keep every timer it set)."""

from __future__ import annotations

import asyncio

from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings
from bot.telegram.messenger import Messenger
from bot.telegram.replies import Replies
from tests.helpers.telegram import FakeBot, FakeService


async def test_an_answer_that_waited_for_a_slot_goes_out_and_its_timer_is_forgotten() -> None:
    now = [0.0]
    bot, outbox = FakeBot(), ChatOutbox()
    messenger = Messenger()
    messenger.attach(bot)
    replies = Replies(
        messenger, outbox, ChatSettings(FakeService()), per_minute=1, clock=lambda: now[0]
    )
    replies.tell(-1, "first")
    await outbox.drain(5)
    now[0] = 59.99  # the group's slot frees in 10 ms
    replies.tell(-1, "second")
    assert bot.texts == ["first"]
    assert replies.sizes()["timers"] == 1
    now[0] = 60.0
    for _ in range(500):
        if len(bot.texts) == 2:
            break
        await asyncio.sleep(0.01)
    await outbox.drain(5)
    assert bot.texts == ["first", "second"]
    assert replies.sizes() == {"waiting": 0, "timers": 0, "budget": 1}
