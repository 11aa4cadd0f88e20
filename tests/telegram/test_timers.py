"""LoopTimers: a one-off timer fires once, after its delay, through the run function,
with its data; one taken off never fires; taking off a fired one does nothing; stop takes
off all those pending. A repeating timer runs every interval, never two runs at once, one
that overran delaying the next; taken off or stopped, even mid-run, it runs no more.
Through a running ``Application``, a failing timer reaches the error handlers; a bot
abandoned keeps none."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from telegram.ext import ApplicationBuilder

from bot.bootstrap import assemble
from bot.fakegram.server import FakeTelegram
from bot.telegram.serving import running
from bot.telegram.telegram_needs import Timers
from bot.telegram.timers import LoopTimers, TimerContext
from tests.helpers.databases import config_on_fake


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
    timers: Timers = LoopTimers(fired.run)
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


async def test_a_repeating_timer_runs_every_interval_and_no_more_once_taken_off() -> None:
    fired = Fired()
    timers: Timers = LoopTimers(fired.run)
    loop = asyncio.get_running_loop()
    started = loop.time()
    times: list[float] = []

    async def callback(context: TimerContext) -> None:
        times.append(loop.time() - started)

    timer = timers.run_repeating(callback, 0.05, first=0.01, name="sweep")
    await asyncio.sleep(0.13)
    timer.schedule_removal()
    await asyncio.sleep(0.1)
    await asyncio.gather(*fired.tasks)

    assert len(times) == 3  # at 0.01, 0.06 and 0.11 s
    assert times[0] >= 0.01
    assert all(later - earlier >= 0.049 for earlier, later in itertools.pairwise(times))


async def test_a_repeating_run_that_overruns_delays_the_next_and_stop_ends_it_mid_run() -> None:
    fired = Fired()
    timers = LoopTimers(fired.run)
    running = 0
    runs: list[int] = []

    async def slow(context: TimerContext) -> None:
        nonlocal running
        running += 1
        runs.append(running)  # how many ran at once
        await asyncio.sleep(0.05)  # longer than the interval
        running -= 1

    timers.run_repeating(slow, 0.01, first=0.0)
    await asyncio.sleep(0.13)
    assert runs == [1, 1, 1]  # one after another, never two at once
    timers.stop()  # mid-run: that run ends, and none follows
    assert len(timers) == 0
    await asyncio.sleep(0.12)
    await asyncio.gather(*fired.tasks)
    assert runs == [1, 1, 1]


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


async def test_a_bot_abandoned_times_nothing_more(tmp_path: Path, sqlite_template: Path) -> None:
    """``GameBot.abandon`` (a bench ending, its database closed next) takes off the bot's
    timers too: its sweep fired into the closed database before."""
    async with FakeTelegram() as fake:
        assembly = assemble(config_on_fake(fake, tmp_path, sqlite_template), rate_limiter=False)
        timers = assembly.game.timers
        assert timers is not None
        async with running(assembly.application, assembly.game, polling=False):
            assert len(timers) >= 2  # the sweep, and forgetting quiet chats
            assembly.game.abandon()
            assert len(timers) == 0
        await assembly.database.dispose()
