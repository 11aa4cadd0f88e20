"""Every Bot API request the rate limiter passes on is told to the shell's observer by
method, each attempt of a retried one too, and every failure by kind."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pytest
from telegram import Bot, Update
from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.ext import Application

from bot.telegram.delivery import retrying_after_flood
from bot.telegram.observers import ShellObserver
from bot.telegram.retries import failure_kind
from bot.telegram.serving import poll

# PTB 22's RetryAfter warns in its constructor that retry_after becomes a timedelta, even
# when given one; the bot never constructs one itself.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")


class Recorder(ShellObserver):
    """A ShellObserver that keeps the Bot API reports."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.failed: list[tuple[str, str]] = []

    def update_handled(self, kind: str, seconds: float) -> None:
        pass

    def round_ended(self, round_id: int, game: str, void_reason: str | None) -> None:
        pass

    def bot_api_called(self, method: str) -> None:
        self.called.append(method)

    def bot_api_failed(self, method: str, kind: str) -> None:
        self.failed.append((method, kind))

    def delivery_retried(self, message: str, failure: str) -> None:
        pass

    def delivery_failed(self, message: str, failure: str) -> None:
        pass


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        # Made in the test: RetryAfter warns when made, and collection is not under the mark.
        (lambda: RetryAfter(timedelta(seconds=3)), "retry_after"),
        (lambda: Conflict("terminated by other getUpdates request"), "conflict"),
        (lambda: Forbidden("bot was blocked by the user"), "forbidden"),
        (lambda: BadRequest("message to edit not found"), "bad_request"),
        (lambda: TimedOut(), "timed_out"),
        (lambda: NetworkError("connection reset"), "network"),
        (lambda: TelegramError("something else"), "other"),
        (lambda: RuntimeError("not Telegram's"), "other"),
    ],
)
def test_each_failure_has_a_short_kind(error: Callable[[], Exception], kind: str) -> None:
    assert failure_kind(error()) == kind


async def test_a_request_is_counted_by_method() -> None:
    observer = Recorder()
    limiter = retrying_after_flood(observer)

    async def send(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"message_id": 1}

    answer = await limiter.process_request(send, (), {}, "sendMessage", {"chat_id": -5}, None)
    assert answer == {"message_id": 1}
    assert observer.called == ["sendMessage"] and observer.failed == []


async def test_a_flood_wait_counts_an_error_and_each_attempt() -> None:
    observer = Recorder()
    limiter = retrying_after_flood(observer)
    attempts: list[int] = []

    async def flooded_once(*args: Any, **kwargs: Any) -> bool:
        attempts.append(1)
        if len(attempts) == 1:
            raise RetryAfter(timedelta(0))  # Telegram's 429: the limiter waits it out and retries
        return True

    assert await limiter.process_request(flooded_once, (), {}, "editMessageText", {}, None)
    assert observer.called == ["editMessageText", "editMessageText"]
    assert observer.failed == [("editMessageText", "retry_after")]


async def test_a_refused_request_counts_its_error_and_still_raises() -> None:
    observer = Recorder()
    limiter = retrying_after_flood(observer)

    async def refused(*args: Any, **kwargs: Any) -> bool:
        raise Forbidden("bot was kicked from the group chat")

    with pytest.raises(Forbidden):
        await limiter.process_request(refused, (), {}, "sendMessage", {"chat_id": -5}, None)
    assert observer.failed == [("sendMessage", "forbidden")]


async def test_without_an_observer_nothing_is_reported() -> None:
    limiter = retrying_after_flood()

    async def send(*args: Any, **kwargs: Any) -> bool:
        return True

    assert await limiter.process_request(send, (), {}, "deleteMessage", {}, None)


class PollingBot(Bot):
    """A ``Bot`` whose long poll Telegram answers with ``answers`` in turn (an exception is
    raised), then stops the poll; removing the webhook always works. Nothing reaches the
    network."""

    def __init__(self, stop: asyncio.Event, answers: list[Sequence[Update] | Exception]) -> None:
        super().__init__("123:TEST")
        with self._unfrozen():
            self.stop = stop
            self.answers = answers

    async def delete_webhook(self, *args: Any, **kwargs: Any) -> bool:
        return True

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        answer = self.answers.pop(0)
        if not self.answers:
            self.stop.set()
        if isinstance(answer, Exception):
            raise answer
        return tuple(answer)


async def test_each_long_poll_is_counted_and_a_conflict_too() -> None:
    observer = Recorder()
    stop = asyncio.Event()
    conflict = Conflict("terminated by other getUpdates request")
    bot = PollingBot(stop, [[], conflict])
    application = Application.builder().bot(bot).build()
    await poll(application, stop, timeout=0, observer=observer)
    assert observer.called == ["getUpdates", "getUpdates"]
    assert observer.failed == [("getUpdates", "conflict")]
