"""The drawing process: pictures are drawn outside the bot's process, one process at a
time, replaced when it dies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool

import pytest

from bot.telegram.drawing import DrawingProcess


def pid_of(_: object) -> int:
    """The drawing process's id (run there)."""
    return os.getpid()


@pytest.fixture
def drawing() -> Iterator[DrawingProcess]:
    process = DrawingProcess()
    yield process
    process.stop()


async def test_pictures_are_drawn_in_one_process_apart_from_the_bots(
    drawing: DrawingProcess,
) -> None:
    first = await drawing.run(pid_of, None)
    assert first != os.getpid()
    assert await drawing.run(pid_of, None) == first  # the same process, kept


async def test_a_drawing_process_that_died_is_replaced_for_the_next_picture(
    drawing: DrawingProcess,
) -> None:
    before = await drawing.run(pid_of, None)
    with pytest.raises(BrokenProcessPool):
        await drawing.run(os._exit, 3)
    after = await drawing.run(pid_of, None)
    assert after not in (before, os.getpid())
