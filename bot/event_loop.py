"""The event loop the bot's process runs on: uvloop's.

The bot's process is one event loop (python-telegram-bot, its Bot API connections,
asyncpg, the web server and the timers all run on it), and under load a good part of its
CPU is the loop's own: scheduling callbacks, waking tasks, reading and writing sockets.
uvloop does that work in C, under the same asyncio API (``bench/bench_real_groups.py``
measures the bot's CPU per player action; the README gives the figures).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

_T = TypeVar("_T")


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """Run ``main`` to completion on a new uvloop loop, as ``asyncio.run`` does (Ctrl-C
    the same way: the main task is cancelled, then ``KeyboardInterrupt`` is raised)."""
    return uvloop.run(main)
