"""The floor of a player action's CPU: the least work the bot could do for one press,
done here in a bare loop and timed by this process's CPU clock.

A press at its physical minimum is three things:

1. its update's JSON decoded (a Grab press as ``getUpdates`` carries it, with the board
   it was pressed on: ``bench_http.board_message``);
2. one row committed to the database: on SQLite a plain ``sqlite3`` INSERT and COMMIT
   (WAL, ``synchronous=NORMAL``, as the bot's connections) in this thread; on PostgreSQL
   one asyncpg INSERT outside a transaction, so one round trip;
3. one Bot API call over HTTP/1.1 on a bare asyncio stream kept alive (``getMe`` to the
   fake, which changes nothing there): the request written, the answer's head and body
   read. No HTTP library, no Telegram objects.

``bench_real_groups.py`` divides the bot's CPU per action by this, measured in the same
run on the same machine: the ratio means the same on a fast machine and a slow one. A
shared machine's speed drifts from minute to minute, so the floor is the best of
``REPEATS`` timings.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench_http import board_message, read_answer

#: Actions timed (after as many again to warm the connections and caches).
ACTIONS = 2000
#: Timings of ``ACTIONS`` each; the floor is the fastest.
REPEATS = 3


def press_update() -> bytes:
    """One Grab press as ``getUpdates`` carries it."""
    press = {
        "update_id": 1000,
        "callback_query": {
            "id": "5000",
            "from": {"id": 100, "is_bot": False, "first_name": "Player 1"},
            "message": board_message(7),
            "chat_instance": "42",
            "data": "123:grab:0",
        },
    }
    return json.dumps(press).encode()


class _SqliteRow:
    """A row committed on a plain ``sqlite3`` connection."""

    def __init__(self, path: Path) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA synchronous=NORMAL")
        self.connection.execute("CREATE TABLE floor_rows (id INTEGER PRIMARY KEY, value TEXT)")

    async def write(self, value: str) -> None:
        self.connection.execute("BEGIN")
        self.connection.execute("INSERT INTO floor_rows (value) VALUES (?)", (value,))
        self.connection.execute("COMMIT")

    async def close(self) -> None:
        self.connection.close()


class _PostgresRow:
    """A row inserted by asyncpg, one round trip."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    @classmethod
    async def open(cls, url: str) -> _PostgresRow:
        import asyncpg

        connection = await asyncpg.connect(url)
        await connection.execute(
            "CREATE TEMPORARY TABLE floor_rows (id BIGSERIAL PRIMARY KEY, value TEXT)"
        )
        return cls(connection)

    async def write(self, value: str) -> None:
        await self.connection.execute("INSERT INTO floor_rows (value) VALUES ($1)", value)

    async def close(self) -> None:
        await self.connection.close()


async def action_floor(
    bot_api_url: str, token: str, database_url: str | None, work: Path, actions: int = ACTIONS
) -> float:
    """CPU seconds per action at the floor (see the module's docstring). ``bot_api_url``:
    the fake's Bot API base (``http://host:port/bot``); ``database_url``: a plain
    ``postgresql://`` URL, or None for SQLite (a file in ``work``)."""
    update = press_update()
    row = (
        _SqliteRow(work / "floor.db")
        if database_url is None
        else await _PostgresRow.open(database_url)
    )
    parts = urlsplit(bot_api_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = (
        f"POST {parts.path}{token}/getMe HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Length: 0\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection(host, port)

    async def act() -> None:
        decoded = json.loads(update)
        await row.write(decoded["callback_query"]["data"])
        writer.write(request)
        await read_answer(reader)

    try:
        for _ in range(actions):
            await act()
        timings = []
        for _ in range(REPEATS):
            started = time.process_time()
            for _ in range(actions):
                await act()
            timings.append((time.process_time() - started) / actions)
        return min(timings)
    finally:
        writer.close()
        await row.close()
