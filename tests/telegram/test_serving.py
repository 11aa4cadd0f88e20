"""Polling against the fake Telegram: a backlog fetched 100 at a time, handled
``UPDATES_IN_HAND`` at a time in order, more fetched while earlier ones are still in hand;
an update confirmed only once it and every update before it were handled; none lost or
handled twice."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import time
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import Any

import pytest
from telegram import Update
from telegram.error import RetryAfter
from telegram.ext import Application, MessageHandler, filters

from bot.fakegram import FakeTelegram
from bot.telegram.http import UpdatesRequest
from bot.telegram.ordering import ChatLocks, ChatOrderedProcessor
from bot.telegram.poll_window import UPDATES_IN_HAND, PollWindow
from bot.telegram.serving import HELD_UP_SECONDS, TELEGRAM_MOST_PER_POLL, poll
from tests.helpers.telegram import eventually

ANN = {"id": 11, "first_name": "Ann"}

Note = Callable[[Update, Any], Coroutine[Any, Any, None]]


def application_for(fake: FakeTelegram, note: Note, window: PollWindow | None = None) -> Any:
    builder = (
        Application.builder()
        .token(fake.token)
        .base_url(fake.base_url)
        .concurrent_updates(ChatOrderedProcessor(ChatLocks()))
    )
    if window is not None:
        builder = builder.get_updates_request(UpdatesRequest(window))
    application = builder.build()
    application.add_handler(MessageHandler(filters.ALL, note))
    return application


def noting(slow_one_may_end: asyncio.Event) -> tuple[list[int], Note]:
    """A handler noting each update it handled, which holds ``/slow`` until the event."""
    handled: list[int] = []

    async def note(update: Update, context: Any) -> None:
        assert update.message is not None
        if update.message.text == "/slow":
            await slow_one_may_end.wait()
        handled.append(update.update_id)

    return handled, note


def polls(fake: FakeTelegram) -> list[dict[str, Any]]:
    return [call for call in fake.calls if call["method"] == "getUpdates"]


async def test_a_backlog_is_handled_updates_in_hand_at_a_time_in_order_each_once() -> None:
    backlog = 3 * TELEGRAM_MOST_PER_POLL + 10
    started: list[int] = []
    handled: list[int] = []
    at_once = [0, 0]  # now, most

    async def note(update: Update, context: Any) -> None:
        started.append(update.update_id)
        at_once[0] += 1
        at_once[1] = max(at_once)
        await asyncio.sleep(0.01)
        at_once[0] -= 1
        handled.append(update.update_id)

    async with FakeTelegram() as fake:
        queued = [
            fake.post_message(-1000 - i, ANN, f"/bet {i}")["update_id"] for i in range(backlog)
        ]
        application = application_for(fake, note)
        stop = asyncio.Event()
        async with application:
            polling = asyncio.create_task(poll(application, stop, timeout=0))
            await eventually(lambda: len(handled) == backlog)
            stop.set()
            await polling
        fetched = [call.get("update_ids") or [] for call in polls(fake)]

    assert started == queued  # in the order they came
    assert sorted(handled) == queued  # each once
    assert at_once[1] == UPDATES_IN_HAND
    assert len(fetched[0]) == TELEGRAM_MOST_PER_POLL  # a backlog is fetched 100 at a time
    # More was fetched while some of it was in hand (so it came again, and was dropped).
    assert any(set(earlier) & set(later) for earlier, later in itertools.pairwise(fetched))


async def test_a_slow_update_holds_up_neither_the_next_nor_its_own_confirmation() -> None:
    slow_one_may_end = asyncio.Event()
    handled, note = noting(slow_one_may_end)

    async with FakeTelegram() as fake:
        window = PollWindow(UPDATES_IN_HAND)
        # A slow update, then as many in other chats as an answer holds beside it (the
        # offset stays at the slow one, so every answer brings it again).
        slow = fake.post_message(-1001, ANN, "/slow")["update_id"]
        rest = [
            fake.post_message(-2000 - i, ANN, f"/bet {i}")["update_id"]
            for i in range(TELEGRAM_MOST_PER_POLL - 1)
        ]
        application = application_for(fake, note, window)
        stop = asyncio.Event()
        async with application:
            polling = asyncio.create_task(poll(application, stop, timeout=0, window=window))
            # Everything behind the slow update is handled while it is in hand ...
            await eventually(lambda: len(handled) == len(rest))
            assert handled == rest
            # ... and none of it was confirmed: every request kept the slow one's offset.
            offsets = {call["params"].get("offset") for call in polls(fake)}
            assert offsets <= {None, str(slow)}  # (the form's text)
            assert window.holds(slow)
            slow_one_may_end.set()
            await eventually(lambda: len(handled) == len(rest) + 1)
            stop.set()
            await polling
        # The last request confirmed them all.
        assert polls(fake)[-1]["params"]["offset"] == str(rest[-1] + 1)
    assert sorted(handled) == [slow, *rest]


async def test_an_update_sent_while_a_slow_one_is_in_hand_is_handled_without_it() -> None:
    """Past a backlog the poller waits for what it fetched to be handled, but not for
    longer than ``HELD_UP_SECONDS``: a handler stuck (on Telegram, say) holds up no other
    chat's updates for longer than that."""
    slow_one_may_end = asyncio.Event()
    handled, note = noting(slow_one_may_end)
    async with FakeTelegram() as fake:
        window = PollWindow(UPDATES_IN_HAND)
        slow = fake.post_message(-1001, ANN, "/slow")["update_id"]
        application = application_for(fake, note, window)
        stop = asyncio.Event()
        async with application:
            polling = asyncio.create_task(poll(application, stop, timeout=1, window=window))
            await eventually(lambda: window.holds(slow))
            later = fake.post_message(-1002, ANN, "/bet 5")["update_id"]
            posted = time.monotonic()
            await eventually(lambda: later in handled, within=HELD_UP_SECONDS + 3)
            waited = time.monotonic() - posted
            assert waited < HELD_UP_SECONDS + 1.5, waited
            assert window.holds(slow) and slow not in handled  # still in hand
            slow_one_may_end.set()
            await eventually(lambda: slow in handled)
            stop.set()
            await polling
        assert polls(fake)[-1]["params"]["offset"] == str(later + 1)


async def test_updates_after_one_still_in_hand_come_again_after_a_crash_and_only_they() -> None:
    handled, note = noting(asyncio.Event())  # the slow one never ends

    async with FakeTelegram() as fake:
        # The slow one in the middle of a backlog: the requests that follow confirm the
        # updates before it, and must not confirm it or any after it.
        lead = [fake.post_message(-1000 - i, ANN, "/bet 1")["update_id"] for i in range(50)]
        slow = fake.post_message(-2000, ANN, "/slow")["update_id"]
        after = [
            fake.post_message(-3000 - i, ANN, "/bet 2")["update_id"]
            for i in range(TELEGRAM_MOST_PER_POLL + 50)
        ]
        application = application_for(fake, note)
        stop = asyncio.Event()
        async with application:
            polling = asyncio.create_task(poll(application, stop, timeout=0))
            # All before it, and the 99 that answers hold beside it, are handled.
            await eventually(lambda: len(handled) == len(lead) + TELEGRAM_MOST_PER_POLL - 1)
            assert any(call["params"].get("offset") == str(slow) for call in polls(fake))
            polling.cancel()  # the process dies with the slow one in hand
        redelivered: list[int] = []

        async def again(update: Update, context: Any) -> None:
            redelivered.append(update.update_id)

        restarted = application_for(fake, again)
        stop = asyncio.Event()
        async with restarted:
            polling = asyncio.create_task(poll(restarted, stop, timeout=0))
            await eventually(lambda: len(redelivered) == 1 + len(after))
            stop.set()
            await polling
    assert sorted(redelivered) == [slow, *after]


def test_the_updates_transport_drops_what_the_window_holds() -> None:
    window = PollWindow(UPDATES_IN_HAND)
    payload = b'{"ok": true, "result": [{"update_id": 7}, {"update_id": 8}, {"update_id": 9}]}'

    async def taken() -> None:
        async def handle(update: Update) -> None:
            await asyncio.sleep(0)

        window.take([Update(7), Update(8)], handle)
        window.confirm()

    asyncio.run(taken())
    answer = UpdatesRequest(window).parse_json_payload(payload)
    assert answer["result"] == [{"update_id": 9}]


async def test_a_429_on_get_updates_is_waited_out_as_long_as_telegram_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 23's retry_after type, no deprecation
    asked: list[float] = []
    stop = asyncio.Event()

    class Bot:
        async def delete_webhook(self, drop_pending_updates: bool) -> bool:
            return True

        async def get_updates(self, **params: Any) -> list[Update]:
            asked.append(time.monotonic())
            if len(asked) == 1:
                raise RetryAfter(dt.timedelta(seconds=0.3))
            stop.set()
            return []

    application = SimpleNamespace(bot=Bot())
    await asyncio.wait_for(poll(application, stop, timeout=0), timeout=10)  # type: ignore[arg-type]

    first, second = asked
    # As long as Telegram asked: not less, and not the 5 s of a refusal.
    assert 0.3 <= second - first < 4
