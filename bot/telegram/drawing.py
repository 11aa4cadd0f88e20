"""The process pictures are drawn in.

Drawing a round's results and encoding them holds Python's interpreter lock for many
milliseconds (FreeType's text, the PNG's palette): in a thread of the bot's process that
held up every update and deadline meanwhile (``bench/bench_real_groups.py`` shows
how much, with pictures on and off). In a process of its own the bot's event loop keeps its core.

One process, drawing one picture at a time, forked from a server that has Pillow and the
pictures' modules loaded (``forkserver``: not forked from the bot's process, whose threads
a fork would copy mid-step). It starts with the bot (``start``), so the first results do
not wait for it, and again if it died (that picture fails; the caller sends text).

It ends with the bot, however the bot ends (SIGKILL included). Left to multiprocessing,
a bot that dies without stopping the pool leaves all three of its processes running:
the drawing process waits for work on a queue whose writing end it holds itself (a
pickled queue carries both ends), so it never sees the bot go; it holds the forkserver's
"alive" pipe open (every client does), so the forkserver waits too; and both hold the
resource tracker's pipe open, so the tracker waits for them. The drawing process
therefore watches the bot itself (``_end_with_the_bot``); once it is gone, the
forkserver and the tracker see their pipes close and end as they are made to.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

_T = TypeVar("_T")
_M = TypeVar("_M")

#: Imported once by the server the drawing process is forked from.
PRELOADED = ["bot.pictures.results", "bot.pictures.reveal", __name__]


#: How much each new timing moves ``DrawingProcess.seconds_each`` (a moving average).
_TIMING_WEIGHT = 0.2


def _ready() -> None:
    """Nothing: submitted to start the drawing process."""


def _timed(render: Callable[[_M], _T], model: _M) -> tuple[_T, float]:
    """In the drawing process: ``render(model)``, and how long it took (wall seconds)."""
    started = time.perf_counter()
    drawn = render(model)
    return drawn, time.perf_counter() - started


def _end_with_the_bot() -> None:
    """In the drawing process, as it starts: end it as soon as the bot's process is gone.

    The bot is this process's parent as multiprocessing sees it (the forkserver is its
    parent as the system sees it), and its sentinel is a pipe whose writing end only the
    bot holds: it reads as closed once the bot has died, however it died, and at once if
    it died before this ran, so no signal or process id can be missed or reused."""
    bot = multiprocessing.parent_process()
    if bot is None:  # not started by multiprocessing: nobody to follow
        return

    def follow() -> None:
        bot.join()
        os._exit(0)  # nothing to flush: a picture under way has nobody to go to

    threading.Thread(target=follow, name="end-with-the-bot", daemon=True).start()


class DrawingProcess:
    """Runs ``render(model)`` in the drawing process, started on first use."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        #: Pictures asked for and not drawn yet (the one being drawn included).
        self.queued = 0
        #: How long a picture takes to draw, as the recent ones took (0 until one did).
        self.seconds_each = 0.0

    @property
    def wait_seconds(self) -> float:
        """How long a picture asked for now would wait for its drawing to start, at a
        guess: every picture before it drawn first, each as long as the recent ones took."""
        return self.queued * self.seconds_each

    def start(self) -> ProcessPoolExecutor:
        """Start the drawing process (unless it runs); the pool it belongs to."""
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            # Also keeps the server from importing the bot's ``__main__`` (the default).
            context.set_forkserver_preload(PRELOADED)
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=context, initializer=_end_with_the_bot
            )
            self._pool.submit(_ready)
        return self._pool

    async def run(self, render: Callable[[_M], _T], model: _M) -> _T:
        """``render(model)`` in the drawing process; raises ``BrokenProcessPool`` if the
        process died meanwhile (the next call starts a new one)."""
        pool = self.start()
        self.queued += 1
        try:
            drawn, seconds = await asyncio.get_running_loop().run_in_executor(
                pool, _timed, render, model
            )
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False)
            raise
        finally:
            self.queued -= 1
        weight = _TIMING_WEIGHT if self.seconds_each else 1.0
        self.seconds_each += weight * (seconds - self.seconds_each)
        return drawn

    def stop(self) -> None:
        """Stop the drawing process (pictures asked for meanwhile are not drawn)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
