"""The process pictures are drawn in.

Drawing a round's results and encoding them holds Python's interpreter lock for many
milliseconds (FreeType's text, the PNG's palette): in a thread of the bot's process that
held up every update and deadline meanwhile (``bench/bench_real_groups.py``: with
pictures on, a bet took ten times as long to be recorded and the bot's CPU rose by a
quarter). In a process of its own the bot's event loop keeps its core.

One process, drawing one picture at a time, forked from a server that has Pillow and the
pictures' modules loaded (``forkserver``: not forked from the bot's process, whose threads
a fork would copy mid-step). It starts with the bot (``start``), so the first results do
not wait for it, and again if it died (that picture fails; the caller sends text).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

_T = TypeVar("_T")
_M = TypeVar("_M")

#: Imported once by the server the drawing process is forked from.
PRELOADED = ["bot.pictures.results", "bot.pictures.reveal"]


def _ready() -> None:
    """Nothing: submitted to start the drawing process."""


class DrawingProcess:
    """Runs ``render(model)`` in the drawing process, started on first use."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> ProcessPoolExecutor:
        """Start the drawing process (unless it runs); the pool it belongs to."""
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            # Also keeps the server from importing the bot's ``__main__`` (the default).
            context.set_forkserver_preload(PRELOADED)
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
            self._pool.submit(_ready)
        return self._pool

    async def run(self, render: Callable[[_M], _T], model: _M) -> _T:
        """``render(model)`` in the drawing process; raises ``BrokenProcessPool`` if the
        process died meanwhile (the next call starts a new one)."""
        pool = self.start()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, render, model)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False)
            raise

    def stop(self) -> None:
        """Stop the drawing process (pictures asked for meanwhile are not drawn)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
