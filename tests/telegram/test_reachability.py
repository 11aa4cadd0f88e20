"""Reachability: the calls waiting to be tried again go once Telegram answers after an
outage, and only then (``tests/telegram/test_http.py``: the transport tells it of every
answer and failure)."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from telegram.error import NetworkError, RetryAfter

from bot.telegram.reachability import Reachability
from bot.telegram.retries import Delivery, Retrying, Unobserved, with_retries
from tests.helpers.telegram import SecondsClock

#: A wait no test sits through: a try that comes before it ends was woken.
LONG_WAIT = Retrying(give_up_after=60.0, first_wait=30.0, longest_wait=30.0)
DELIVERY = Delivery("phase", "sendMessage", -1001, 7)


class Outage:
    """A call that fails on the way (telling ``reachability``, as the transport does)
    until ``back`` is set, then goes through; its tries counted."""

    def __init__(self, reachability: Reachability, error: Exception | None = None) -> None:
        self.reachability = reachability
        self.error = error or NetworkError("Bad Gateway")
        self.tries = 0
        self.back = False

    async def __call__(self) -> str:
        self.tries += 1
        if not self.back:
            self.reachability.failed()
            raise self.error
        self.reachability.answered()
        return "sent"


def tried(outage: Outage) -> asyncio.Task[str]:
    return asyncio.create_task(
        with_retries(outage, DELIVERY, LONG_WAIT, Unobserved(), reachability=outage.reachability)
    )


async def waiting(
    error: Exception | None = None,
) -> tuple[SecondsClock, Reachability, Outage, asyncio.Task[str]]:
    """A call that failed (with ``error``) and waits its 30 s to be tried again."""
    clock = SecondsClock()
    reachability = Reachability(outage_seconds=2.0, clock=clock)
    outage = Outage(reachability, error)
    sending = tried(outage)
    await asyncio.sleep(0.05)
    assert outage.tries == 1 and not sending.done()
    return clock, reachability, outage, sending


async def test_a_try_waiting_out_an_outage_goes_once_telegram_answers_again() -> None:
    clock, reachability, outage, sending = await waiting()

    clock.advance(5.0)  # no answer for longer than an outage takes
    outage.back = True
    reachability.answered()  # another call (the poller's) went through

    assert await asyncio.wait_for(sending, timeout=5.0) == "sent"
    assert outage.tries == 2


async def test_while_telegram_answers_other_calls_a_failed_one_waits_its_time() -> None:
    clock, reachability, outage, sending = await waiting()

    clock.advance(1.0)  # an answer came within a second of the last: no outage
    outage.back = True
    reachability.answered()
    await asyncio.sleep(0.2)

    assert outage.tries == 1 and not sending.done()
    sending.cancel()


async def test_a_429s_wait_is_waited_out_even_when_telegram_answers_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 23's retry_after type, no deprecation
    clock, reachability, outage, sending = await waiting(RetryAfter(dt.timedelta(seconds=30)))

    clock.advance(5.0)
    outage.back = True
    reachability.answered()
    await asyncio.sleep(0.2)

    assert outage.tries == 1 and not sending.done()
    sending.cancel()


async def test_every_try_waiting_is_woken_and_a_later_failure_waits_for_the_next_outages_end() -> (
    None
):
    clock = SecondsClock()
    reachability = Reachability(outage_seconds=2.0, clock=clock)
    outages = [Outage(reachability) for _ in range(3)]
    sendings = [tried(outage) for outage in outages]
    await asyncio.sleep(0.05)
    clock.advance(5.0)
    for outage in outages:
        outage.back = True
    reachability.answered()
    assert await asyncio.wait_for(asyncio.gather(*sendings), timeout=5.0) == ["sent"] * 3

    # A new outage: the answer that ended the last one wakes nobody waiting now.
    again = Outage(reachability)
    sending = tried(again)
    await asyncio.sleep(0.05)
    assert not sending.done()
    clock.advance(3.0)
    again.back = True
    reachability.answered()
    assert await asyncio.wait_for(sending, timeout=5.0) == "sent"
