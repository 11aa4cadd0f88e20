"""The event loop every entry point runs on: uvloop's.

The bot's process is one event loop (python-telegram-bot, aiohttp, asyncpg and the
scheduler all run on it), and under load a good part of its CPU is the loop's own:
scheduling callbacks, waking tasks, reading and writing sockets. uvloop does that work in
C, under the same asyncio API. Measured with ``python bench/bench_bot.py --groups 300`` on
PostgreSQL: 2.64 ms of the loop's CPU per update on asyncio's loop, 2.22 ms on uvloop.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

_T = TypeVar("_T")


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """Run ``main`` to completion on a new uvloop loop, as ``asyncio.run`` does (the same
    handling of Ctrl-C: the main task is cancelled)."""
    return uvloop.run(main)
