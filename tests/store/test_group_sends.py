"""A group's share of Telegram's limit, counted in the database on both engines: every
worker takes its sends from the same slots, so two workers together send a group no more
than one may, and a restarted worker counts what it sent before."""

from __future__ import annotations

import asyncio

from bot.service.group_sends import GroupSends
from bot.store.db import Database
from tests.helpers.controls import Clock

GROUP, OTHER_GROUP = -1001, -1002
LIMIT = 5


class Worker:
    """One worker's count: ``take`` says the seconds to wait (0: taken)."""

    def __init__(self, db: Database, clock: Clock, bot_id: int) -> None:
        self.sends = GroupSends(db, clock, bot_id=bot_id, limit=LIMIT, seconds=60.0)

    async def take(self, chat_id: int) -> float:
        wait, taken_ms = await self.sends.take(chat_id)
        assert (wait == 0) == (taken_ms != 0)
        return wait


def worker(db: Database, clock: Clock, *, bot_id: int = 0) -> Worker:
    return Worker(db, clock, bot_id)


async def test_a_group_gets_its_limit_a_minute_whichever_worker_sends(
    db: Database, clock: Clock
) -> None:
    first, second = worker(db, clock), worker(db, clock)
    waits = []
    for number in range(LIMIT):
        clock.advance(1)
        waits.append(await (first if number % 2 else second).take(GROUP))
    assert waits == [0.0] * LIMIT

    # The minute is spent for both: each waits until the oldest send (4 s ago) is a
    # minute old.
    assert await first.take(GROUP) == 56.0
    assert await second.take(GROUP) == 56.0
    assert await first.take(OTHER_GROUP) == 0.0  # another group has its own
    clock.advance(56)
    assert await second.take(GROUP) == 0.0
    assert await first.take(GROUP) == 1.0  # the next oldest was sent a second later


async def test_a_restarted_worker_counts_what_it_sent_before(db: Database, clock: Clock) -> None:
    for _ in range(LIMIT):
        assert await worker(db, clock).take(GROUP) == 0.0

    restarted = worker(db, clock)
    assert await restarted.take(GROUP) == 60.0


async def test_two_workers_taking_at_once_take_no_more_than_the_limit(
    db: Database, clock: Clock
) -> None:
    first, second = worker(db, clock), worker(db, clock)

    waits = await asyncio.gather(*(w.take(GROUP) for _ in range(6) for w in (first, second)))

    assert sorted(waits).count(0.0) == LIMIT


async def test_each_bot_has_its_own_count_in_a_group(db: Database, clock: Clock) -> None:
    for _ in range(LIMIT):
        await worker(db, clock, bot_id=1).take(GROUP)

    assert await worker(db, clock, bot_id=1).take(GROUP) == 60.0
    assert await worker(db, clock, bot_id=2).take(GROUP) == 0.0


async def test_a_send_that_reached_the_group_late_counts_from_then(
    db: Database, clock: Clock
) -> None:
    sends = GroupSends(db, clock, bot_id=0, limit=LIMIT, seconds=60.0)
    _, first = await sends.take(GROUP)
    clock.advance(3)  # it waited for its turn, or was tried again, for 3 s
    await sends.delivered(GROUP, first)
    for _ in range(LIMIT - 1):
        await sends.take(GROUP)

    # Counted from its delivery, the first frees a minute after it reached the group.
    assert (await sends.take(GROUP))[0] == 60.0
