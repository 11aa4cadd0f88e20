"""Restart bench: the bot's start-up over many open rounds, many of them overdue.

    python bench/bench_restart.py [--rounds 1000] [--overdue 0.5] [--concurrency 8]
                                  [--database-url URL]

Opens ``--rounds`` tables and starts a round in each through the service; the first
``--overdue`` share of them started two minutes ago, so their bidding deadline has
passed, the others just now. Then the bot is built by its composition root
(``bot.bootstrap.assemble``, with ``memory_telegram.py``'s in-memory Telegram: no network, no
patching) and started as on a restart. It prints:

1. the SQL statements ``GameBot.start`` issues to load and reschedule the open rounds
   once the overdue ones are advanced (less the looks of its catch-up, which finds
   nothing due then): they must not grow with the number of rounds;
2. the wall time to advance the overdue rounds: ``RoundProgress.catch_up``, the call
   start-up makes, here made by the bench just before ``GameBot.start`` so that it is
   timed on its own (side by side, at most ``--concurrency`` at once, the
   ``sweep_concurrency`` of ``game.progress``; ``--concurrency 1`` is one after another),
   and the statements that took through SQLAlchemy and the hot path's reads (its commands'
   own statements, through the bare driver or the SQLite writer, are not counted);
3. how many rounds were rescheduled (``len(game.deadlines)``) and how many remain open.

The floor, in the same run, as many at once as the catch-up: as many other overdue rounds
(started afterwards the same way) advanced by ``GameService.advance`` alone, without the
shell (no chat turn, board or timer), from a database that, like the bot's, has read
once before; and one row committed per round through SQLAlchemy (``bench_bot.py``'s
``bench_commit``: a transaction inserting one ``processed_updates`` row, from a database
not used before). The catch-up's time per round is printed against both.

Boards and results that start-up queues are held in the bot's outbox
(``ChatOutbox.held``) while it is measured, so that their statements are not counted,
and sent afterwards. A temporary SQLite file is used unless ``--database-url`` names
another database (a scratch one: the bench leaves its tables and rounds there).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_bot import ADMIN, bench_commit
from memory_telegram import TOKEN, MemoryTelegram, TelegramStats
from sqlalchemy import event

from bot.bootstrap import assemble
from bot.config import Config
from bot.engine.settings import Settings
from bot.service.game import GameService, wall_clock_ms
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.telegram.progress import SWEEP_CONCURRENCY

SETUP_CONCURRENCY = 8
OVERDUE_BY_MS = 120_000


class StatementCounter:
    """Counts the statements SQLAlchemy sends, on every engine of a ``Database``, and the
    reads of the hot path's connections (``Database.read_one`` and ``read_all``: the
    looks for what is due and what is undelivered go there)."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        for engine in {database.engine, database.read_engine}:
            event.listen(engine.sync_engine, "before_cursor_execute", self._seen)
        read = database._read

        async def counted_read(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await read(*args, **kwargs)

        database._read = counted_read  # type: ignore[method-assign]

    def _seen(self, *args: Any, **kwargs: Any) -> None:
        self.count += 1


async def populate(url: str, rounds: int, overdue: int, run: int) -> list[int]:
    """Open ``rounds`` tables and start a round in each; the first ``overdue`` started
    long enough ago that their deadline has passed. The rounds' ids."""
    database = Database.from_url(url)
    offset = {"ms": 0}
    service = GameService(database, Settings(), clock=lambda: wall_clock_ms() + offset["ms"])
    chats = [-(2_000_000_000_000 + run * 100_000 + index) for index in range(rounds)]
    limit = asyncio.Semaphore(SETUP_CONCURRENCY)
    round_ids: list[int] = []

    async def open_table(chat_id: int) -> None:
        async with limit:
            await service.set_open(chat_id, ADMIN, True)

    try:
        await asyncio.gather(*(open_table(chat_id) for chat_id in chats))
        # Started one at a time: the clock is shared.
        for index, chat_id in enumerate(chats):
            offset["ms"] = -OVERDUE_BY_MS if index < overdue else 0
            started = await service.start_round(chat_id)
            assert started.round is not None
            round_ids.append(started.round.id)
    finally:
        await database.dispose()
    return round_ids


async def advance_alone(url: str, round_ids: list[int], concurrency: int) -> float:
    """The floor: advance ``round_ids`` through the service alone, at most ``concurrency``
    at once (as the catch-up does, without its shell); the wall time."""
    database = Database.from_url(url)
    service = GameService(database, Settings())
    bound = asyncio.Semaphore(concurrency)

    async def advance(round_id: int) -> None:
        async with bound:
            result = await service.advance(round_id)
            assert result.events, f"round {round_id} was not due"

    try:
        # As warm as the bot's catch-up: the bench looked at the due rounds before it.
        await service.due_rounds()
        started = time.perf_counter()
        await asyncio.gather(*(advance(round_id) for round_id in round_ids))
        return time.perf_counter() - started
    finally:
        await database.dispose()


async def restart(url: str, concurrency: int) -> dict[str, Any]:
    """Start the bot over the database, measuring as the module's docstring says."""
    database = Database.from_url(url)
    config = Config(
        database_url=url,
        telegram_token=TOKEN,
        operators=frozenset({ADMIN.id}),
        sweep_seconds=3600.0,  # no sweep during the measurement
    )
    stats = TelegramStats()
    assembly = assemble(
        config,
        database=database,
        request=MemoryTelegram(stats, config.operators),
        get_updates_request=MemoryTelegram(stats, config.operators),
        rate_limiter=False,
    )
    application, game, service = assembly.application, assembly.game, assembly.service
    game.progress.sweep_concurrency = concurrency
    counter = StatementCounter(database)
    measured: dict[str, Any] = {}
    try:
        async with application:
            await application.start()
            try:
                with game.outbox.held():
                    measured["due"] = len(await service.due_rounds())
                    before, started = counter.count, time.perf_counter()
                    await game.progress.catch_up()
                    measured["catch_up_s"] = time.perf_counter() - started
                    measured["catch_up_statements"] = counter.count - before

                    before, started = counter.count, time.perf_counter()
                    await game.start(application)
                    measured["start_s"] = time.perf_counter() - started
                    measured["statements"] = counter.count - before
                    measured["scheduled"] = len(game.deadlines)

                    # What the catch-up inside GameBot.start cost, nothing being due.
                    before = counter.count
                    await game.progress.catch_up()
                    measured["empty_catch_up_statements"] = counter.count - before
                    measured["open_after"] = len(await service.open_rounds())
                    measured["held_chats"] = len(game.outbox)
                sent_before = stats.calls["sendMessage"]
                await game.drain(60)
                measured["sent_after"] = stats.calls["sendMessage"] - sent_before
            finally:
                game.board.cancel_edits()
                await application.stop()
    finally:
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
        run = int(time.time()) % 10_000
        await populate(url, args.rounds, overdue, run)
        print(f"setup: {time.perf_counter() - clock:.1f} s", flush=True)
        measured = await restart(url, args.concurrency)
        due = measured["due"]
        if due != overdue:
            print(f"note: {due} rounds were due at the restart, not {overdue}", flush=True)
        load_statements = measured["statements"] - measured["empty_catch_up_statements"]
        print(
            f"1. load and reschedule: {load_statements} SQL statements for "
            f"{measured['scheduled']} rescheduled rounds (constant: must not grow with them; "
            f"GameBot.start issued {measured['statements']}, of which "
            f"{measured['empty_catch_up_statements']} for its catch-up, nothing being due)",
            flush=True,
        )
        rate = due / measured["catch_up_s"] if measured["catch_up_s"] else 0.0
        print(
            f"2. advance the {due} overdue rounds, at most {args.concurrency} at "
            f"once: {measured['catch_up_s']:.2f} s ({rate:.0f} rounds/s; "
            f"{measured['catch_up_statements']} statements: SQLAlchemy's and the hot path's reads)",
            flush=True,
        )
        if due:
            per_round = measured["catch_up_s"] / due
            floor_ids = await populate(url, due, due, (run + 5_000) % 10_000)
            alone = await advance_alone(url, floor_ids, args.concurrency)
            commits, _ = await bench_commit(
                url, args.concurrency, math.ceil(due / args.concurrency), 0
            )
            print(
                f"   floor, {args.concurrency} at once: {due} other overdue rounds advanced by "
                f"GameService.advance alone {alone:.2f} s ({alone / due * 1000:.2f} ms per "
                f"round); {commits.count} rows committed one per transaction "
                f"{commits.wall:.2f} s ({commits.wall / commits.count * 1000:.2f} ms per row). "
                f"The catch-up: {per_round * 1000:.2f} ms per round, "
                f"{per_round / (alone / due):.2f}x the service alone, "
                f"{per_round / (commits.wall / commits.count):.2f}x a commit",
                flush=True,
            )
        print(
            f"3. start-up after the catch-up {measured['start_s']:.2f} s (in all "
            f"{measured['catch_up_s'] + measured['start_s']:.2f} s); "
            f"{measured['scheduled']} rounds rescheduled, {measured['open_after']} open after "
            f"it; {measured['held_chats']} chats' boards and results held meanwhile, "
            f"{measured['sent_after']} messages sent once released",
            flush=True,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--overdue", type=float, default=0.5, help="share overdue (0..1)")
    parser.add_argument("--concurrency", type=int, default=SWEEP_CONCURRENCY)
    parser.add_argument("--database-url", default="", help="default: a temporary SQLite file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or not 0 <= args.overdue <= 1 or args.concurrency < 1:
        parser.error("need --rounds >= 1, 0 <= --overdue <= 1, --concurrency >= 1")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
