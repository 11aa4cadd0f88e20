"""One chat at a time: ChatLocks (a per-chat turn, urgent first, forgotten when idle),
ChatOrderedProcessor (a chat's updates in order, chats side by side) and ChatOutbox (a
per-chat ordered queue of sends, work put aside, a chat forgotten when its queue is
empty)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from telegram import Update

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.delivery import ChatOutbox
from bot.telegram.ordering import ChatLocks, ChatOrderedProcessor
from bot.telegram.shell import GameBot
from tests.helpers.telegram import (
    GROUP,
    OTHER_GROUP,
    button_update,
    eventually,
    message_update,
    person,
    spin,
)

ANN = person(11, "Ann")


class Gate:
    """Work that records when it starts and finishes, and finishes when let go."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._open: dict[str, asyncio.Event] = {}

    def work(self, name: str, *, blocked: bool = False) -> Callable[[], Awaitable[None]]:
        event = self._open.setdefault(name, asyncio.Event())
        if not blocked:
            event.set()

        async def run() -> None:
            self.log.append(f"{name} starts")
            await event.wait()
            self.log.append(f"{name} ends")

        return run

    def let_go(self, name: str) -> None:
        """Let ``name`` finish (at once, if it has not started yet)."""
        self._open.setdefault(name, asyncio.Event()).set()


# -- ChatLocks ----------------------------------------------------------------------------


async def hold(locks: ChatLocks, chat_id: int, gate: Gate, name: str, **turn: bool) -> None:
    async with locks.turn(chat_id, **turn):
        await gate.work(name, blocked=True)()


async def test_a_chat_has_one_holder_at_a_time_in_arrival_order() -> None:
    locks, gate = ChatLocks(), Gate()
    tasks = [asyncio.create_task(hold(locks, GROUP, gate, name)) for name in ("a", "b", "c")]
    await spin()
    assert gate.log == ["a starts"]

    for name in ("a", "b", "c"):
        gate.let_go(name)
    await asyncio.gather(*tasks)

    assert gate.log == ["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]


async def test_urgent_work_goes_before_the_chats_waiting_work() -> None:
    locks, gate = ChatLocks(), Gate()
    first = asyncio.create_task(hold(locks, GROUP, gate, "command"))
    await spin()
    waiting = asyncio.create_task(hold(locks, GROUP, gate, "next command"))
    await spin()
    deadline = asyncio.create_task(hold(locks, GROUP, gate, "deadline", urgent=True))
    await spin()

    for name in ("command", "next command", "deadline"):
        gate.let_go(name)
    await asyncio.gather(first, waiting, deadline)

    starts = [entry for entry in gate.log if entry.endswith("starts")]
    assert starts == ["command starts", "deadline starts", "next command starts"]


async def test_chats_take_their_turns_side_by_side() -> None:
    locks, gate = ChatLocks(), Gate()
    busy = asyncio.create_task(hold(locks, GROUP, gate, "group"))
    await spin()

    async with locks.turn(OTHER_GROUP):  # not held up by GROUP
        assert len(locks) == 2

    gate.let_go("group")
    await busy


async def test_a_chat_is_forgotten_once_nobody_holds_or_waits_for_its_turn() -> None:
    locks, gate = ChatLocks(), Gate()
    tasks = [asyncio.create_task(hold(locks, GROUP, gate, name)) for name in ("a", "b")]
    await spin()
    assert len(locks) == 1  # held and waited for: one entry

    gate.let_go("a")
    await tasks[0]
    assert len(locks) == 1  # still held
    gate.let_go("b")
    await tasks[1]

    assert len(locks) == 0


async def test_a_waiter_that_gives_up_or_a_holder_that_fails_leaves_nothing_behind() -> None:
    locks, gate = ChatLocks(), Gate()
    holder = asyncio.create_task(hold(locks, GROUP, gate, "holder"))
    await spin()
    quitter = asyncio.create_task(hold(locks, GROUP, gate, "quitter"))
    await spin()

    quitter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await quitter
    gate.let_go("holder")
    await holder
    assert len(locks) == 0

    with pytest.raises(RuntimeError):
        async with locks.turn(GROUP):
            raise RuntimeError("handler failed")
    assert len(locks) == 0
    async with locks.turn(GROUP):  # and the turn is free
        pass


# -- ChatOrderedProcessor -----------------------------------------------------------------


async def process(processor: ChatOrderedProcessor, update: object, work: Awaitable[None]) -> None:
    await processor.do_process_update(update, work)


async def test_a_chats_updates_are_handled_one_after_the_other() -> None:
    processor, gate = ChatOrderedProcessor(ChatLocks()), Gate()
    first = asyncio.create_task(
        process(processor, message_update(GROUP, ANN, "/bet 5"), gate.work("first", blocked=True)())
    )
    await spin()
    second = asyncio.create_task(
        process(processor, message_update(GROUP, ANN, "/bet 6"), gate.work("second")())
    )
    await spin()
    assert gate.log == ["first starts"]

    gate.let_go("first")
    await asyncio.gather(first, second)

    assert gate.log == ["first starts", "first ends", "second starts", "second ends"]


async def test_different_chats_and_updates_without_a_chat_are_not_held_up() -> None:
    locks = ChatLocks()
    processor, gate = ChatOrderedProcessor(locks), Gate()
    busy = asyncio.create_task(
        process(processor, message_update(GROUP, ANN, "/bet 5"), gate.work("busy", blocked=True)())
    )
    await spin()

    await process(processor, message_update(OTHER_GROUP, ANN, "/bet 5"), gate.work("other")())
    await process(processor, Update(99), gate.work("no chat")())  # e.g. an inline query
    await process(processor, object(), gate.work("not an update")())

    assert gate.log[1:] == [
        "other starts",
        "other ends",
        "no chat starts",
        "no chat ends",
        "not an update starts",
        "not an update ends",
    ]
    gate.let_go("busy")
    await busy
    assert len(locks) == 0


async def press_during_a_bet(data: str) -> list[str]:
    """What ran when: a message holding its chat's turn, and a press of button ``data``
    that comes meanwhile."""
    processor = ChatOrderedProcessor(ChatLocks())
    gate = Gate()
    busy = asyncio.create_task(
        process(processor, message_update(GROUP, ANN, "/bet 5"), gate.work("bet", blocked=True)())
    )
    await spin()
    press = asyncio.create_task(
        process(processor, button_update(GROUP, ANN, data), gate.work("press")())
    )
    await spin()
    gate.let_go("bet")
    await asyncio.gather(busy, press)
    return gate.log


IN_TURN = ["bet starts", "bet ends", "press starts", "press ends"]


async def test_a_grab_takes_no_turn_of_its_chat() -> None:
    beside = ["bet starts", "press starts", "press ends", "bet ends"]
    assert await press_during_a_bet("7:grab:0") == beside


@pytest.mark.parametrize("data", ["7:bet:500", "7:bid:500", "7:cancel:0", "7:again:0", "junk"])
async def test_a_press_of_any_other_button_waits_for_its_chats_turn(data: str) -> None:
    assert await press_during_a_bet(data) == IN_TURN


# -- ChatOutbox ---------------------------------------------------------------------------


async def test_a_chats_jobs_run_in_order_and_the_chat_is_forgotten_when_they_are_done() -> None:
    outbox, gate = ChatOutbox(), Gate()

    for name in ("a", "b", "c"):
        outbox.put(GROUP, gate.work(name))
    assert len(outbox) == 1
    await outbox.drain(5.0)

    assert gate.log == ["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]
    assert len(outbox) == 0

    outbox.put(GROUP, gate.work("later"))  # a new worker for the chat
    await outbox.drain(5.0)
    assert gate.log[-1] == "later ends"


async def test_a_job_queued_by_a_running_job_of_its_chat_runs_after_it() -> None:
    outbox, gate = ChatOutbox(), Gate()

    async def first() -> None:
        await gate.work("first")()
        outbox.put(GROUP, gate.work("follow-up"))

    outbox.put(GROUP, first)
    await outbox.drain(5.0)

    assert gate.log == ["first starts", "first ends", "follow-up starts", "follow-up ends"]
    assert len(outbox) == 0


async def test_a_chat_waiting_on_telegram_holds_up_no_other_chat() -> None:
    outbox, gate = ChatOutbox(), Gate()
    outbox.put(GROUP, gate.work("slow", blocked=True))
    outbox.put(GROUP, gate.work("after slow"))

    outbox.put(OTHER_GROUP, gate.work("other"))
    await eventually(lambda: "other ends" in gate.log)

    assert "after slow starts" not in gate.log
    gate.let_go("slow")
    await outbox.drain(5.0)
    assert gate.log[-1] == "after slow ends"


async def test_a_failing_job_is_logged_and_the_next_one_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outbox, gate = ChatOutbox(), Gate()

    async def failing() -> None:
        raise RuntimeError("Telegram said no")

    with caplog.at_level(logging.ERROR, logger="bot.telegram.delivery"):
        outbox.put(GROUP, failing)
        outbox.put(GROUP, gate.work("next"))
        outbox.put_aside(failing)
        await outbox.drain(5.0)

    assert gate.log == ["next starts", "next ends"]
    failures = [record for record in caplog.records if record.exc_info]
    assert [str(record.exc_info[1]) for record in failures if record.exc_info] == [
        "Telegram said no",
        "Telegram said no",
    ]
    assert len(outbox) == 0


async def test_work_put_aside_runs_at_once_beside_the_chats_queue_and_drain_waits_for_it() -> None:
    outbox, gate = ChatOutbox(), Gate()
    outbox.put(GROUP, gate.work("message", blocked=True))

    outbox.put_aside(gate.work("toast"))
    await eventually(lambda: "toast ends" in gate.log)
    outbox.put_aside(gate.work("slow toast", blocked=True))
    gate.let_go("message")
    draining = asyncio.create_task(outbox.drain(5.0))
    await spin()
    assert not draining.done()  # the slow toast is still on its way

    gate.let_go("slow toast")
    await draining
    assert "slow toast ends" in gate.log


async def test_drain_gives_up_after_its_timeout() -> None:
    outbox, gate = ChatOutbox(), Gate()
    outbox.put(GROUP, gate.work("stuck", blocked=True))

    await outbox.drain(0.02)

    assert len(outbox) == 1  # still queued: drain does not drop it
    gate.let_go("stuck")
    await outbox.drain(5.0)
    assert len(outbox) == 0


async def test_abandon_drops_what_waits_and_stops_what_runs() -> None:
    outbox = ChatOutbox()
    ran: list[str] = []
    blocked = asyncio.Event()

    async def running() -> None:
        ran.append("running")
        await blocked.wait()
        ran.append("finished")

    async def waiting() -> None:
        ran.append("waiting")

    outbox.put(GROUP, running)
    outbox.put(GROUP, waiting)
    await spin()
    outbox.abandon()
    await spin()
    assert ran == ["running"]
    assert len(outbox) == 0


async def test_a_bot_stopping_drops_what_could_not_go_out_within_the_drain(
    tmp_path: Path,
) -> None:
    database = Database.from_url(f"sqlite+aiosqlite:///{tmp_path / 'unused.db'}")
    game = GameBot(Config(), GameService(database))
    never = asyncio.Event()
    cancelled = asyncio.Event()

    async def waits_for_its_turn() -> None:
        try:
            await never.wait()  # as an edit behind the bot's rate
        except asyncio.CancelledError:
            cancelled.set()
            raise

    game.outbox.put_aside(waits_for_its_turn)
    await game.drain(timeout=0.05)
    await asyncio.wait_for(cancelled.wait(), 1)  # dropped before the database closes
    await database.dispose()
