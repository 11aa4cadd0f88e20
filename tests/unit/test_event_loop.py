"""The bot's process runs on uvloop, and Ctrl-C stops it as it stops ``asyncio.run``:
the main task is cancelled (so it cleans up), then ``KeyboardInterrupt`` is raised."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from bot import event_loop


def test_the_bot_runs_on_uvloop() -> None:
    async def running_loop() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert event_loop.run(running_loop()).startswith("uvloop")


def test_ctrl_c_cancels_the_main_task_then_interrupts() -> None:
    cleaned_up: list[bool] = []

    async def serve() -> None:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cleaned_up.append(True)
            raise

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(serve())
    assert cleaned_up == [True]
