"""The chat outbox: each chat's work in order, and work held back (in a chat or aside) while
asked to."""

from __future__ import annotations

import asyncio

from bot.telegram.delivery import ChatOutbox, Job


async def test_work_put_while_held_waits_for_the_end_of_the_block_then_runs_in_order() -> None:
    outbox = ChatOutbox()
    done: list[tuple[int, int]] = []

    def job(chat_id: int, index: int) -> Job:
        async def run() -> None:
            done.append((chat_id, index))

        return run

    with outbox.held():
        for index in range(3):
            outbox.put(-1, job(-1, index))
        outbox.put(-2, job(-2, 0))
        for _ in range(5):
            await asyncio.sleep(0)
        assert done == []
        assert len(outbox) == 2
    await outbox.drain(5)
    assert [index for chat_id, index in done if chat_id == -1] == [0, 1, 2]
    assert (-2, 0) in done
    assert len(outbox) == 0


async def test_a_chat_whose_worker_runs_when_the_hold_begins_stops_after_its_current_job() -> None:
    outbox = ChatOutbox()
    done: list[int] = []
    started, release = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        started.set()
        await release.wait()
        done.append(1)

    async def second() -> None:
        done.append(2)

    outbox.put(-1, first)
    outbox.put(-1, second)
    await started.wait()
    with outbox.held():
        release.set()
        for _ in range(5):
            await asyncio.sleep(0)
        assert done == [1]
        assert len(outbox) == 1
    await outbox.drain(5)
    assert done == [1, 2]
    assert len(outbox) == 0


async def test_work_put_aside_while_held_waits_for_the_end_of_the_block_too() -> None:
    outbox = ChatOutbox()
    done: list[str] = []

    async def edit() -> None:
        done.append("edit")

    with outbox.held():
        outbox.put_aside(edit)
        for _ in range(5):
            await asyncio.sleep(0)
        assert done == []
    await outbox.drain(5)
    assert done == ["edit"]
