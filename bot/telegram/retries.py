"""Trying a Bot API call again when it failed on the way: a 5xx, a reset connection, a
timeout, or a 429 that python-telegram-bot's limiter already waited out. A refusal
(``BadRequest``, ``Forbidden``) is Telegram's answer and is final.

A call is tried again after a wait that doubles, for at most ``Retrying.give_up_after``
seconds from its first try; then the failure goes to the caller, who decides what is
lost (an edit: nothing, the next one shows the state) and what is kept to be sent later
(answers, boards, results). Each failure is one log line naming the chat and the round,
and a count by kind of message and kind of failure (``DeliveryObserver``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol, TypeVar

from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.warnings import PTBDeprecationWarning

from bot.telegram.reachability import Reachability

log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Retrying:
    """How long a failed call is tried again: after ``first_wait`` seconds, then twice as
    long each time up to ``longest_wait``, until ``give_up_after`` seconds have passed
    since the first try."""

    give_up_after: float = 30.0
    first_wait: float = 0.5
    longest_wait: float = 8.0

    def wait_before(self, retry: int) -> float:
        """The wait before the ``retry``-th try again (1: the first)."""
        return float(min(self.longest_wait, self.first_wait * 2 ** (retry - 1)))


#: Sends, edits and deletes: long enough to outlast a short outage of Telegram's.
MESSAGES = Retrying()
#: A button's toast: only while Telegram still takes the answer to the press (then the
#: answer goes to the group instead).
TOASTS = Retrying(give_up_after=8.0, first_wait=0.25, longest_wait=2.0)
#: Tried once: what the results do without (the dealer's turning cards).
ONCE = Retrying(give_up_after=0.0)


class DeliveryObserver(Protocol):
    """Told of each failed try of a message's delivery."""

    def delivery_retried(self, message: str, failure: str) -> None:
        """A try of a ``message`` (its kind: ``results``, ``phase``, ``answer``, ``toast``…)
        failed with ``failure`` (``network``, ``timed_out``, ``retry_after``) and is tried
        again."""

    def delivery_failed(self, message: str, failure: str) -> None:
        """The tries of a ``message`` failed for ``give_up_after`` seconds and stopped, or
        Telegram refused it (``bad_request``, ``forbidden``)."""


class Unobserved:
    """Nobody listens."""

    def delivery_retried(self, message: str, failure: str) -> None:
        pass

    def delivery_failed(self, message: str, failure: str) -> None:
        pass


def failure_kind(error: BaseException) -> str:
    """A short name for why a Bot API request failed (``ShellObserver.bot_api_failed``)."""
    # BadRequest and TimedOut are NetworkErrors too: the specific ones first.
    for kind, name in (
        (RetryAfter, "retry_after"),
        (Conflict, "conflict"),
        (Forbidden, "forbidden"),
        (BadRequest, "bad_request"),
        (TimedOut, "timed_out"),
        (NetworkError, "network"),
    ):
        if isinstance(error, kind):
            return name
    return "other"


def is_refusal(error: BaseException) -> bool:
    """Telegram's final answer to a request: trying it again would be refused too."""
    return isinstance(error, BadRequest | Forbidden)


def is_transient(error: BaseException) -> bool:
    """A failure on the way to Telegram or back: the same request may go through later."""
    return isinstance(error, NetworkError | RetryAfter) and not is_refusal(error)


def retry_after_seconds(error: RetryAfter) -> float:
    """The wait a 429 asks for, in seconds (python-telegram-bot gives an int or a
    timedelta, depending on its settings, and warns of the change either way)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a call delivers, for its log lines and counts: the kind of message, the Bot
    API method, the chat and (where there is one) the round."""

    message: str
    method: str
    chat_id: int | None = None
    round_id: int | None = None

    def __str__(self) -> str:
        where = "" if self.chat_id is None else f"chat {self.chat_id}"
        if self.round_id is not None:
            where += f" round {self.round_id}"
        return f"{where}: {self.method} ({self.message})" if where else self.method


async def with_retries(
    call: Callable[[], Awaitable[_T]],
    delivery: Delivery,
    retrying: Retrying,
    observer: DeliveryObserver,
    *,
    clock: Callable[[], float] = time.monotonic,
    reachability: Reachability | None = None,
) -> _T:
    """``call()``, tried again on a transient failure (see the module) until it goes
    through or ``retrying.give_up_after`` passes; the last failure is raised then, as a
    refusal is at once. A wait after a failure on the way ends early when
    ``reachability`` hears Telegram answer again after an outage (a 429's is waited out)."""
    started = clock()
    retry = 0
    while True:
        try:
            return await call()
        except TelegramError as error:
            failure = failure_kind(error)
            if not is_transient(error):
                observer.delivery_failed(delivery.message, failure)
                raise
            retry += 1
            if isinstance(error, RetryAfter):
                wait = retry_after_seconds(error)
            else:
                wait = retrying.wait_before(retry)
            if clock() - started + wait > retrying.give_up_after:
                observer.delivery_failed(delivery.message, failure)
                log.warning(
                    "%s failed (%s: %s); given up after %d tries", delivery, failure, error, retry
                )
                raise
            observer.delivery_retried(delivery.message, failure)
            log.warning(
                "%s failed (%s: %s); trying again in %.1f s", delivery, failure, error, wait
            )
            if reachability is None or isinstance(error, RetryAfter):
                await asyncio.sleep(wait)
            else:
                await reachability.pause(wait)
