"""Restart bench: the bot's start-up over many open rounds, many of them overdue.

    python bench/bench_restart.py [--rounds 1000] [--overdue 0.5] [--database-url URL]

Opens ``--rounds`` tables and starts a round in each through the service; the first
``--overdue`` share of them started two minutes ago, so their bidding deadline has
passed, the others just now. Then the real ``Application`` (in-memory Telegram, as in
``bench_bot.py``) is started and ``GameBot.start`` runs as on a restart. It prints:

1. the SQL statements issued to load and reschedule the open rounds (everything
   ``GameBot.start`` asks of the database except advancing the overdue ones): they must
   not grow with the number of rounds;
2. the wall time to advance the overdue rounds (``GameBot.catch_up``: side by side, at
   most ``--concurrency`` at once; ``--concurrency 1`` is one after another, as
   ``GameService.recover`` does), and the statements that took through SQLAlchemy (the
   hot path's own, through the bare driver or the SQLite writer, are not counted);
3. how many rounds were rescheduled and how many remain open.

Boards and results that start-up queues are held back while it is measured (they go to
Telegram afterwards), so that their statements are not counted. A temporary SQLite file is
used unless ``--database-url`` names another database (a scratch one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_bot import ADMIN, TOKEN, TelegramStats, build_bench_application
from sqlalchemy import event

from bot.config import Config
from bot.engine.settings import Settings
from bot.service.game import GameService, wall_clock_ms
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.telegram import app as app_module

SETUP_CONCURRENCY = 8
OVERDUE_BY_MS = 120_000


class StatementCounter:
    """Counts the statements SQLAlchemy sends, on every engine of a ``Database``."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        for engine in {database.engine, database.read_engine}:
            event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, *args: Any, **kwargs: Any) -> None:
        self.count += 1


async def populate(url: str, rounds: int, overdue: int, run: int) -> list[int]:
    """Open ``rounds`` tables and start a round in each; the first ``overdue`` started
    long enough ago that their deadline has passed."""
    database = Database.from_url(url)
    offset = {"ms": 0}
    service = GameService(database, Settings(), clock=lambda: wall_clock_ms() + offset["ms"])
    chats = [-(2_000_000_000_000 + run * 100_000 + index) for index in range(rounds)]
    limit = asyncio.Semaphore(SETUP_CONCURRENCY)

    async def open_table(chat_id: int) -> None:
        async with limit:
            await service.set_open(chat_id, ADMIN, True)

    try:
        await asyncio.gather(*(open_table(chat_id) for chat_id in chats))
        # Started one at a time: the clock is shared.
        offset["ms"] = -OVERDUE_BY_MS
        for chat_id in chats[:overdue]:
            await service.start_round(chat_id)
        offset["ms"] = 0
        for chat_id in chats[overdue:]:
            await service.start_round(chat_id)
    finally:
        await database.dispose()
    return chats


async def restart(url: str, concurrency: int) -> dict[str, Any]:
    """Start the bot over the database, measuring as the module's docstring says."""
    database = Database.from_url(url)
    config = Config(
        database_url=url,
        telegram_token=TOKEN,
        operators=frozenset({ADMIN.id}),
        sweep_seconds=3600.0,  # no sweep during the measurement
    )
    service = GameService(database, config.game)
    stats = TelegramStats()
    application, game = build_bench_application(config, service, stats)
    counter = StatementCounter(database)
    held: list[tuple[int, Any]] = []
    put = game.outbox.put
    game.outbox.put = lambda chat_id, job: held.append((chat_id, job))  # type: ignore[method-assign]
    catch_up = game.catch_up
    measured: dict[str, Any] = {}

    async def timed_catch_up() -> None:
        before = counter.count
        due = len(await service.due_rounds())
        measured["bench_statements"] = counter.count - before  # the bench's own look
        before, started = counter.count, time.perf_counter()
        await catch_up()
        measured["catch_up_s"] = time.perf_counter() - started
        measured["catch_up_statements"] = counter.count - before
        measured["due"] = due

    game.catch_up = timed_catch_up  # type: ignore[method-assign]
    app_module.SWEEP_CONCURRENCY, saved = concurrency, app_module.SWEEP_CONCURRENCY
    try:
        async with application:
            await application.start()
            try:
                before, started = counter.count, time.perf_counter()
                await game.start(application)
                measured["start_s"] = time.perf_counter() - started
                measured["statements"] = counter.count - before
                measured["scheduled"] = len(game._deadline_jobs)
                measured["open_after"] = len(await service.open_rounds())
                measured["held"] = len(held)
                game.outbox.put = put  # type: ignore[method-assign]
                for chat_id, job in held:
                    put(chat_id, job)
                await game.drain(30)
            finally:
                await application.stop()
    finally:
        app_module.SWEEP_CONCURRENCY = saved
        await database.dispose()
    return measured


async def main_async(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        if args.database_url:
            url, kind = args.database_url, "given database"
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="niuniu-restart-"))
            url, kind = f"sqlite+aiosqlite:///{Path(folder) / 'restart.db'}", "temporary SQLite"
        await upgrade_async(url)
        probe = Database.from_url(url)
        dialect = probe.dialect
        await probe.dispose()
        overdue = round(args.rounds * args.overdue)
        print(
            f"niuniu-bot restart bench: {args.rounds} open rounds, {overdue} overdue; "
            f"{dialect} ({kind}); Python {sys.version.split()[0]}",
            flush=True,
        )
        clock = time.perf_counter()
        await populate(url, args.rounds, overdue, int(time.time()) % 10_000)
        print(f"setup: {time.perf_counter() - clock:.1f} s", flush=True)
        measured = await restart(url, args.concurrency)
        load_statements = (
            measured["statements"] - measured["catch_up_statements"] - measured["bench_statements"]
        )
        print(
            f"1. load and reschedule: {load_statements} SQL statements for "
            f"{measured['scheduled']} rescheduled rounds (constant: must not grow with them)",
            flush=True,
        )
        rate = measured["due"] / measured["catch_up_s"] if measured["catch_up_s"] else 0.0
        print(
            f"2. advance the {measured['due']} overdue rounds, at most {args.concurrency} at "
            f"once: {measured['catch_up_s']:.2f} s ({rate:.0f} rounds/s; "
            f"{measured['catch_up_statements']} statements through SQLAlchemy)",
            flush=True,
        )
        print(
            f"3. start-up in all {measured['start_s']:.2f} s; {measured['open_after']} rounds "
            f"open after it; {measured['held']} boards and results queued meanwhile",
            flush=True,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--overdue", type=float, default=0.5, help="share overdue (0..1)")
    parser.add_argument("--concurrency", type=int, default=app_module.SWEEP_CONCURRENCY)
    parser.add_argument("--database-url", default="", help="default: a temporary SQLite file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or not 0 <= args.overdue <= 1 or args.concurrency < 1:
        parser.error("need --rounds >= 1, 0 <= --overdue <= 1, --concurrency >= 1")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
