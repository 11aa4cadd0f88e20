"""Timers bench: what a round's deadline timer costs the event loop, set and fired, or set
and taken off, through ``LoopTimers`` and, where APScheduler is installed (the bot no
longer needs it), through python-telegram-bot's ``JobQueue``, which the bot used before.

    python bench/bench_timers.py [--timers 3000]

``--timers`` timers are set at once, due over the next half second, and the loop runs
until every one has fired (each callback a coroutine doing nothing); then as many are set
and taken off before they fire (a window moved). The floor: the loop's own ``call_later``
with a task per timer fired, no bookkeeping. It prints the CPU per timer (the process's
clock: the loop's idle waits cost nothing) and the ratio to the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

from telegram.ext import Application, ApplicationBuilder, JobQueue

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.telegram.telegram_needs import Timers
from bot.telegram.timers import LoopTimers

SPREAD_S = 0.5


class Floor:
    """``call_later`` and a task per timer fired: the least a timer can cost."""

    def run_once(self, callback: Any, when: float, *, data: object = None, name: str = "") -> Any:
        loop = asyncio.get_running_loop()
        return loop.call_later(when, lambda: loop.create_task(callback(None)))


async def fired_cpu(timers: Timers | Floor, count: int) -> float:
    """CPU seconds per timer set and fired."""
    done = asyncio.Event()
    fired = 0

    async def callback(context: object) -> None:
        nonlocal fired
        fired += 1
        if fired == count:
            done.set()

    started = time.process_time()
    for i in range(count):
        timers.run_once(callback, 0.01 + SPREAD_S * i / count, data=i, name=f"deadline:{i}")
    await done.wait()
    return (time.process_time() - started) / count


async def removed_cpu(timers: Timers, count: int) -> float:
    """CPU seconds per timer set and taken off before it fired."""

    async def callback(context: object) -> None:
        raise AssertionError("a timer taken off fired")

    started = time.process_time()
    for i in range(count):
        timers.run_once(callback, 60.0, data=i, name=f"deadline:{i}").schedule_removal()
    return (time.process_time() - started) / count


async def main_async(count: int) -> None:
    tasks: list[asyncio.Task[Any]] = []

    def run(coroutine: Any) -> None:  # as Application.create_task, without its bookkeeping
        tasks.append(asyncio.ensure_future(coroutine))

    rows: list[tuple[str, float, float | None]] = []
    floor = await fired_cpu(Floor(), count)
    rows.append(("floor (call_later + a task)", floor, None))
    loop_timers = LoopTimers(run)
    rows.append(
        ("LoopTimers", await fired_cpu(loop_timers, count), await removed_cpu(loop_timers, count))
    )
    if importlib.util.find_spec("apscheduler") is None:
        print("JobQueue: APScheduler is not installed (pip install apscheduler to compare)")
    else:
        application: Application[Any, Any, Any, Any, Any, Any] = (
            ApplicationBuilder().token("123:BENCH").job_queue(JobQueue()).build()
        )
        queue = application.job_queue
        assert queue is not None
        queue.set_application(application)
        await queue.start()
        fired, removed = await fired_cpu(queue, count), await removed_cpu(queue, count)
        rows.append(("JobQueue (APScheduler)", fired, removed))
        await queue.stop()
    print(f"{count} timers, due over {SPREAD_S} s; CPU per timer")
    for name, fired, removed in rows:
        off = "" if removed is None else f"   set and taken off {removed * 1e6:6.1f} µs"
        print(f"  {name:28} set and fired {fired * 1e6:6.1f} µs  {fired / floor:5.2f}x floor{off}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timers", type=int, default=3000)
    asyncio.run(main_async(parser.parse_args().timers))


if __name__ == "__main__":
    main()
