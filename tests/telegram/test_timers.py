"""LoopTimers: a one-off timer fires once, after its delay, through the run function,
with its data; one taken off never fires; taking off a fired one does nothing; stop takes
off all those pending. Through a running ``Application``, a failing timer reaches the
error handlers."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from telegram.ext import ApplicationBuilder

from bot.fakegram.server import FakeTelegram
from bot.telegram.telegram_needs import OneShotTimers
from bot.telegram.timers import LoopTimers, TimerContext


class Fired:
    """What timers fired, with their data, as their callbacks ran."""

    def __init__(self) -> None:
        self.data: list[object] = []
        self.tasks: list[asyncio.Task[Any]] = []

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self.tasks.append(task)
        return task

    async def callback(self, context: TimerContext) -> None:
        self.data.append(context.job.data)


async def test_a_timer_fires_once_after_its_delay_with_its_data() -> None:
    fired = Fired()
    timers: OneShotTimers = LoopTimers(fired.run)
    loop = asyncio.get_running_loop()
    started = loop.time()

    timer = timers.run_once(fired.callback, 0.05, data=(7, -100), name="deadline:7")

    await asyncio.sleep(0.02)
    assert fired.data == []
    await asyncio.sleep(0.08)
    await asyncio.gather(*fired.tasks)
    assert fired.data == [(7, -100)]
    assert loop.time() - started >= 0.05
    timer.schedule_removal()  # fired: nothing to take off, no error
    await asyncio.sleep(0.05)
    assert fired.data == [(7, -100)]


async def test_a_timer_taken_off_never_fires_and_stop_takes_off_every_pending_one() -> None:
    fired = Fired()
    timers = LoopTimers(fired.run)
    taken_off = timers.run_once(fired.callback, 0.02, data="taken off")
    timers.run_once(fired.callback, 0.02, data="stopped")
    timers.run_once(fired.callback, 0.02, data="stopped too")
    soon = timers.run_once(fired.callback, 0.0, data="fires")
    assert len(timers) == 4

    taken_off.schedule_removal()
    taken_off.schedule_removal()
    await asyncio.sleep(0.005)
    assert len(timers) == 2  # one taken off, one fired
    timers.stop()
    soon.schedule_removal()

    await asyncio.sleep(0.05)
    await asyncio.gather(*fired.tasks)
    assert fired.data == ["fires"]
    assert len(timers) == 0


async def test_a_failing_timer_reaches_the_applications_error_handlers() -> None:
    errors: list[BaseException | None] = []

    async def on_error(update: object, context: Any) -> None:
        errors.append(context.error)

    async def fails(context: TimerContext) -> None:
        raise RuntimeError(f"deadline {context.job.data} failed")

    async with FakeTelegram() as fake:
        application = ApplicationBuilder().token(fake.token).base_url(fake.base_url).build()
        application.add_error_handler(on_error)
        async with application:
            await application.start()
            timers = LoopTimers(application.create_task)
            timers.run_once(fails, 0.0, data=9)
            await asyncio.sleep(0.05)
            await application.stop()  # waits for the timer's task, as for a job's

    assert [str(error) for error in errors] == ["deadline 9 failed"]
