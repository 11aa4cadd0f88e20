"""``PriorityTurn``: urgent waiters (deadlines) before ordinary ones (commands), first come
first served within each; reserved slots; cancellation never loses a slot."""

from __future__ import annotations

import asyncio

import pytest

from bot.priority import PriorityTurn, is_urgent, urgent


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_urgent_waiters_go_before_ordinary_ones_in_arrival_order() -> None:
    turn = PriorityTurn()
    order: list[str] = []

    async def holder(name: str, is_urgent: bool) -> None:
        async with turn.turn(is_urgent):
            order.append(name)
            await asyncio.sleep(0)

    await turn.acquire()
    tasks = [
        asyncio.create_task(holder(name, name.startswith("u")))
        for name in ("c1", "u1", "c2", "u2", "c3")
    ]
    await _settle()
    assert turn.waiting == 5
    turn.release()
    await asyncio.gather(*tasks)
    assert order == ["u1", "u2", "c1", "c2", "c3"]
    assert not turn.locked()


async def test_reserved_slots_are_for_urgent_work_only() -> None:
    turn = PriorityTurn(3, reserved=1)
    await turn.acquire()
    await turn.acquire()
    ordinary = asyncio.create_task(turn.acquire())
    await _settle()
    assert not ordinary.done()  # the last slot is reserved
    await asyncio.wait_for(turn.acquire(urgent=True), 1)  # urgent work takes it at once
    turn.release()
    turn.release()
    await asyncio.wait_for(ordinary, 1)


async def test_a_cancelled_waiter_loses_no_slot() -> None:
    turn = PriorityTurn()
    await turn.acquire()
    cancelled = asyncio.create_task(turn.acquire(urgent=True))
    later = asyncio.create_task(turn.acquire())
    await _settle()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    turn.release()
    await asyncio.wait_for(later, 1)
    turn.release()
    assert not turn.locked()
    # Handed the slot and cancelled before it ran: the slot goes on to the next waiter.
    await turn.acquire()
    handed = asyncio.create_task(turn.acquire())
    await _settle()
    turn.release()
    handed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.wait_for(turn.acquire(), 1)


async def test_urgent_is_a_context_flag_inherited_by_tasks() -> None:
    assert not is_urgent()
    with urgent():
        assert is_urgent()
        assert await asyncio.create_task(asyncio.to_thread(is_urgent))
    assert not is_urgent()
