"""Telegram's limits as the bot keeps them: a sliding window per group, and an overall
rate that lets the most urgent message go first."""

from __future__ import annotations

import asyncio

import pytest

from bot.telegram.budget import TIGHT_WINDOW_SECONDS, Priority, SendBudget, SendRate
from tests.helpers.telegram import GROUP, SecondsClock


async def test_waiting_messages_go_most_urgent_first_and_in_arrival_order_within_a_priority() -> (
    None
):
    # A turn each 50 ms: long enough that no turn comes free before the rest queue up,
    # however slowly a busy machine runs this (at 500 a second one did, once).
    rate = SendRate(per_second=20, burst=1)
    order: list[str] = []

    async def send(name: str, priority: Priority) -> None:
        await rate.acquire(priority)
        order.append(name)

    first = asyncio.create_task(send("first edit", Priority.EDIT))  # nothing waits: goes now
    await asyncio.sleep(0)
    queued = [
        ("edit", Priority.EDIT),
        ("answer 1", Priority.ANSWER),
        ("board", Priority.PHASE),
        ("answer 2", Priority.ANSWER),
        ("closing edit", Priority.CLOSING),
        ("results", Priority.RESULTS),
    ]
    tasks = [asyncio.create_task(send(name, priority)) for name, priority in queued]
    await asyncio.gather(first, *tasks)
    assert order == [
        "first edit",
        "results",
        "board",
        "closing edit",
        "answer 1",
        "answer 2",
        "edit",
    ]


async def test_a_message_cancelled_while_waiting_gives_its_turn_to_the_next() -> None:
    rate = SendRate(per_second=200, burst=1)
    await rate.acquire(Priority.ANSWER)  # the next turn is 5 ms away
    order: list[str] = []

    async def send(name: str, priority: Priority) -> None:
        await rate.acquire(priority)
        order.append(name)

    cancelled = asyncio.create_task(send("results", Priority.RESULTS))
    later = asyncio.create_task(send("answer", Priority.ANSWER))
    await asyncio.sleep(0)
    cancelled.cancel()
    await later
    assert order == ["answer"]
    assert rate.waiting == 0


async def test_a_seconds_worth_goes_at_once_and_the_next_waits_for_the_rate() -> None:
    now = [100.0]
    rate = SendRate(per_second=10, clock=lambda: now[0])
    for _ in range(10):
        await asyncio.wait_for(rate.acquire(Priority.PHASE), 0.1)  # no wait at all
    waiting = asyncio.create_task(rate.acquire(Priority.RESULTS))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    now[0] += 0.1  # a tenth of a second drained one message's worth
    await asyncio.wait_for(waiting, 1)
    assert rate.wait_ahead(Priority.RESULTS) == pytest.approx(0.1)  # full again


async def test_turns_are_spaced_by_the_rate() -> None:
    now = [100.0]
    rate = SendRate(per_second=10, burst=1, clock=lambda: now[0])
    await rate.acquire(Priority.ANSWER)
    waiting = asyncio.create_task(rate.acquire(Priority.RESULTS))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the clock has not moved: 0.1 s to go
    now[0] += 0.1
    await asyncio.wait_for(waiting, 1)


async def test_an_edit_counts_for_less_than_a_message_and_the_backlog_says_how_far_behind() -> None:
    now = [100.0]
    rate = SendRate(per_second=10, burst=1, clock=lambda: now[0])
    await rate.acquire(Priority.EDIT, 0.5)
    assert rate.backlog_seconds == pytest.approx(0.05)
    now[0] += 0.05
    await rate.acquire(Priority.ANSWER)
    assert rate.backlog_seconds == pytest.approx(0.1)


async def test_the_wait_ahead_of_a_message_counts_only_those_that_go_before_it() -> None:
    now = [100.0]
    rate = SendRate(per_second=10, burst=1, clock=lambda: now[0])
    await rate.acquire(Priority.ANSWER)  # the next turn is 0.1 s away
    waiting = [
        asyncio.create_task(rate.acquire(priority, cost))
        for priority, cost in (
            (Priority.EDIT, 0.5),
            (Priority.ANSWER, 1.0),
            (Priority.RESULTS, 1.0),
        )
    ]
    await asyncio.sleep(0.01)

    assert rate.wait_ahead(Priority.RESULTS) == pytest.approx(0.2)
    assert rate.wait_ahead(Priority.PHASE) == pytest.approx(0.2)
    assert rate.wait_ahead(Priority.ANSWER) == pytest.approx(0.3)
    assert rate.wait_ahead(Priority.EDIT) == pytest.approx(0.35)

    now[0] += 0.1
    await asyncio.wait_for(waiting[2], 1)  # the results went first
    assert rate.wait_ahead(Priority.RESULTS) == pytest.approx(0.1)  # only the spacing
    assert rate.wait_ahead(Priority.EDIT) == pytest.approx(0.25)
    for task in waiting:
        task.cancel()


async def test_answers_and_edits_leave_the_last_third_of_the_bucket_to_what_shows_a_deadline() -> (
    None
):
    now = [100.0]
    rate = SendRate(per_second=9, clock=lambda: now[0])
    for _ in range(6):
        await asyncio.wait_for(rate.acquire(Priority.ANSWER), 0.1)
    answer = asyncio.create_task(rate.acquire(Priority.ANSWER))
    await asyncio.sleep(0.01)
    assert not answer.done()  # the last third is kept
    assert rate.wait_ahead(Priority.ANSWER) == pytest.approx(2 / 9)  # its own and the next

    for _ in range(3):  # results and phases go at once, into the kept third
        await asyncio.wait_for(rate.acquire(Priority.RESULTS), 0.1)
    assert not answer.done()
    now[0] += 4 / 9  # the bucket drained to six again, then to five: room for one answer
    await asyncio.wait_for(answer, 1)


def test_a_window_another_worker_spent_has_no_room_until_it_frees() -> None:
    clock = SecondsClock()
    budget = SendBudget(3, 60.0, clock=clock)
    budget.take(GROUP)

    budget.spent_for(GROUP, 5.0)

    assert budget.room(GROUP) == 0
    assert budget.wait(GROUP) == pytest.approx(5.0)
    clock.advance(5.0)
    assert budget.room(GROUP) > 0


async def test_the_rate_is_tight_once_its_recent_turns_used_half_of_it_and_not_after() -> None:
    clock = SecondsClock()
    rate = SendRate(per_second=10, burst=20, clock=clock)
    # Half the rate over the window (2 s): 10 messages' worth, an edit counting half.
    for _ in range(9):
        await rate.acquire(Priority.ANSWER)
    assert not rate.tight
    await rate.acquire(Priority.EDIT, 0.5)
    assert not rate.tight
    await rate.acquire(Priority.EDIT, 0.5)
    assert rate.tight
    clock.advance(TIGHT_WINDOW_SECONDS)  # those turns are no longer recent
    assert not rate.tight


async def test_a_message_waiting_a_moment_for_its_turn_does_not_make_the_rate_tight() -> None:
    clock = SecondsClock()
    rate = SendRate(per_second=10, burst=1, clock=clock)
    await rate.acquire(Priority.RESULTS)
    assert not rate.tight  # one message in the window: not half the rate
    waiting = asyncio.create_task(rate.acquire(Priority.ANSWER))
    await asyncio.sleep(0.01)
    assert rate.waiting == 1
    assert not rate.tight  # one group's burst: its confirmations still go as replies
    assert rate.wait_ahead(Priority.ANSWER) > 0  # what the callers see of the wait
    clock.advance(TIGHT_WINDOW_SECONDS)
    await asyncio.wait_for(waiting, 1)
    assert not rate.tight
