"""Store bench: how fast ``GameService.bet`` is against one committed row, per database.

    python bench/bench_store.py [--bets N] [--postgres-url URL]

For SQLite (a temporary file) and for PostgreSQL (a fresh database created on the server
of ``--postgres-url`` and dropped afterwards; skipped with a message if unreachable), in
one betting round of one group, ``N`` different players each place one bet with a
distinct ``update_id``, one after another (sequential ``service.bet`` calls, no
concurrency). Beside each bet, on the same database and in the same run, two floors:

- *floor*: one row inserted into ``processed_updates`` and committed through the
  machinery the hot path uses (SQLite: the hot path's write batches, ``WriteBatches``:
  the process's write turn, one call on the writer's thread, and the log's checkpoints
  every few commits; PostgreSQL: BEGIN, INSERT, COMMIT on a connection of the hot
  path's pool, ``DriverPool``);
- *driver floor*: the same row through a connection of the bench's own (``sqlite3`` on a
  thread of its own; ``asyncpg``), no pool and no SQLAlchemy at all;
- on PostgreSQL, *statement floor*: the INSERT alone on that connection, committed by
  itself (one round trip: the least a durable write costs). A player's command on the
  hot path takes no BEGIN or COMMIT either, but two statements, the read and the write.

Bets and floors alternate, so both see the same database, cache and WAL; the driver
floor is measured after them, in a pass of its own (its commits, from another connection,
would empty the page cache of SQLite's writer connection before every bet).

It prints bets per second, the median and 99th percentile of one bet, the same for the
floors, the ratio bet/floor of the medians and of the throughputs with the aim (at most
2x; 3x the least acceptable), the process CPU time per bet, and the median bet of the
first and the last tenth of the round (a bet must not cost more as the round fills:
``--bets 3000`` compares a bet at 3,000 bets with one at the start).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bot.engine.settings import Settings
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.migrate import upgrade_async

FLOOR_SQL = "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms) VALUES (1, :u, :t)"
FLOOR_PG = "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms) VALUES (1, $1, $2)"

_R = TypeVar("_R")

AIM = 2.0
LEAST_ACCEPTABLE = 3.0
CPU_AIM_MS = 2.0
GROUP = -100_1234
ADMIN = Person(1, "Admin")
DEALER = Person(2, "Dealer")
START_MS = 1_800_000_000_000
SETTINGS = Settings(bid_seconds=60, bet_seconds=3_600, min_bid=1_000, bid_increment=1_000)
DEFAULT_POSTGRES_URL = os.environ.get(
    "NIUNIU_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


@dataclass
class Result:
    """Per-operation times in seconds."""

    database: str
    bets: list[float]
    floor: list[float]
    driver_floor: list[float]
    cpu_per_bet: float
    statement_floor: list[float]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def run(url: str, label: str, count: int) -> Result:
    """Migrate ``url``, open a betting round and time ``count`` bets against the floor."""
    await upgrade_async(url)
    db = Database.from_url(url)
    clock_ms = START_MS
    service = GameService(db, SETTINGS, clock=lambda: clock_ms)
    try:
        players = [Person(100_000 + i, f"P{i}") for i in range(count)]
        await service.set_open(GROUP, ADMIN, True)
        await service.credit(GROUP, ADMIN, DEALER.id, 10_000_000)
        for player in players:
            await service.credit(GROUP, ADMIN, player.id, 100_000)
        await service.note_people(players)  # regulars: the bot has seen them before
        started = await service.start_round(GROUP, actor=DEALER)
        assert started.round is not None
        await service.bid(GROUP, DEALER, 1_000_000)
        clock_ms += SETTINGS.bid_seconds * 1000
        await service.advance(started.round.id)

        bets: list[float] = []
        floor: list[float] = []
        driver_floor: list[float] = []
        commit_one_row, commit_with_driver, close_driver, one_statement = await floors(db, url)

        cpu = 0.0
        for i, player in enumerate(players):
            cpu_started = time.process_time()
            bets.append(
                await timed(lambda p=player, u=i: service.bet(GROUP, p, 100, update_id=10**6 + u))
            )
            cpu += time.process_time() - cpu_started
            floor.append(await timed(lambda u=i: commit_one_row(2 * 10**6 + u, clock_ms)))
        # Apart: a commit through another connection makes SQLite's writer connection
        # drop its page cache, and the next bet would read every page it touches again
        # (as no bet that follows another on the writer does).
        for i in range(count):
            driver_floor.append(
                await timed(lambda u=i: commit_with_driver(3 * 10**6 + u, clock_ms))
            )
        statement_floor: list[float] = []
        if one_statement is not None:
            for i in range(count):
                statement_floor.append(
                    await timed(lambda u=i: one_statement(4 * 10**6 + u, clock_ms))
                )
        await close_driver()
        state = await service.round(started.round.id)
        assert state is not None and len(state.bets) == count, "not every bet landed"
        return Result(label, bets, floor, driver_floor, cpu / count, statement_floor)
    finally:
        await db.dispose()


Commit = Callable[[int, int], Awaitable[None]]


async def floors(
    db: Database, url: str
) -> tuple[Commit, Commit, Callable[[], Awaitable[None]], Commit | None]:
    """The floors' operations on ``db`` (see the module's docstring): the store's, the
    driver's, a closer, and PostgreSQL's statement floor."""
    if db.sqlite_batches is not None:
        batches = db.sqlite_batches
        import sqlite3
        from concurrent.futures import ThreadPoolExecutor

        path = make_url(url).database
        assert path is not None
        thread = ThreadPoolExecutor(max_workers=1)
        loop = asyncio.get_running_loop()
        raw = await loop.run_in_executor(
            thread, lambda: sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        )
        await loop.run_in_executor(thread, raw.execute, "PRAGMA synchronous=NORMAL")

        async def stack(update_id: int, now: int) -> None:
            await batches.run(lambda c: c.execute(FLOOR_SQL, {"u": update_id, "t": now}))

        def raw_commit(update_id: int, now: int) -> None:
            raw.execute("BEGIN IMMEDIATE")
            raw.execute(
                "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms)"
                " VALUES (1, ?, ?)",
                (update_id, now),
            )
            raw.execute("COMMIT")

        async def driver(update_id: int, now: int) -> None:
            await loop.run_in_executor(thread, raw_commit, update_id, now)

        async def close() -> None:
            await loop.run_in_executor(thread, raw.close)
            thread.shutdown()

        return stack, driver, close, None

    import asyncpg

    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    connection = await asyncpg.connect(plain)

    async def pooled(update_id: int, now: int) -> None:
        assert db.driver_pool is not None
        async with db.driver_pool.connection() as driver, driver.transaction():
            await driver.execute(FLOOR_PG, update_id, now)

    async def bare(update_id: int, now: int) -> None:
        async with connection.transaction():
            await connection.execute(FLOOR_PG, update_id, now)

    async def statement(update_id: int, now: int) -> None:
        await connection.execute(FLOOR_PG, update_id, now)

    return pooled, bare, connection.close, statement


def report(result: Result) -> None:
    bets, floor = result.bets, result.floor
    bet_median, floor_median = statistics.median(bets), statistics.median(floor)
    ratio = bet_median / floor_median
    throughput_ratio = (len(floor) / sum(floor)) / (len(bets) / sum(bets))
    tenth = max(1, len(bets) // 10)
    verdict = "met" if ratio <= AIM else "acceptable" if ratio <= LEAST_ACCEPTABLE else "NOT met"
    print(f"{result.database}:")
    rows = [
        ("bet", bets, ""),
        ("floor", floor, "(one row committed, the store's machinery)"),
        ("driver floor", result.driver_floor, "(one row committed, the bare driver)"),
    ]
    if result.statement_floor:
        rows.append(("stmt floor", result.statement_floor, "(the INSERT alone, autocommit)"))
    for name, times, note in rows:
        median_ms = statistics.median(times) * 1e3
        p99_ms = percentile(times, 0.99) * 1e3
        print(
            f"  {name:12} {len(times) / sum(times):7.0f} /s   median {median_ms:7.3f} ms"
            f"   p99 {p99_ms:7.3f} ms   {note}"
        )
    print(
        f"  bet/floor: {ratio:.2f}x (medians), {throughput_ratio:.2f}x (throughput); "
        f"aim <= {AIM:.0f}x (least acceptable {LEAST_ACCEPTABLE:.0f}x): {verdict}"
    )
    driver_ratio = bet_median / statistics.median(result.driver_floor)
    print(f"  bet/driver floor: {driver_ratio:.2f}x (medians)")
    if result.statement_floor:
        statement_ratio = bet_median / statistics.median(result.statement_floor)
        print(f"  bet/statement floor: {statement_ratio:.2f}x (medians; the bet is two statements)")
    cpu_ms = result.cpu_per_bet * 1e3
    print(
        f"  CPU per bet (this process): {cpu_ms:.2f} ms; aim <= {CPU_AIM_MS:.0f} ms: "
        f"{'met' if cpu_ms <= CPU_AIM_MS else 'NOT met'}"
    )
    print(
        f"  bet median, first tenth of the round {statistics.median(bets[:tenth]) * 1e3:.3f} ms,"
        f" last tenth {statistics.median(bets[-tenth:]) * 1e3:.3f} ms"
    )


async def sqlite_result(count: int) -> Result:
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        return await run(url, "SQLite (temporary file, WAL)", count)


async def postgres_result(admin_url: str, count: int) -> Result | str:
    """The result on a fresh database, or why PostgreSQL was skipped."""
    return await on_scratch_postgres(
        admin_url, lambda url, label: run(url, f"PostgreSQL ({label})", count)
    )


async def on_scratch_postgres(
    admin_url: str, body: Callable[[str, str], Awaitable[_R]]
) -> _R | str:
    """``body(url, label)`` on a fresh database created on the server of ``admin_url`` and
    dropped afterwards; why PostgreSQL was skipped, if the server is not reachable."""
    import asyncpg

    plain = make_url(admin_url).set(drivername="postgresql")
    name = f"niuniu_bench_{uuid.uuid4().hex[:12]}"
    try:
        admin = await asyncpg.connect(plain.render_as_string(hide_password=False), timeout=3)
    except Exception as error:  # any failure to connect means "no server here"
        return f"PostgreSQL skipped: not reachable at {plain}: {error}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = plain.set(database=name).render_as_string(hide_password=False)
        return await body(url, f"fresh database {name}")
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bets", type=int, default=1_000, help="bets (and floor rows) per run")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES_URL,
        help="a PostgreSQL server URL whose user may create databases "
        f"(default: $NIUNIU_TEST_POSTGRES_URL or {DEFAULT_POSTGRES_URL})",
    )
    args = parser.parse_args(argv)
    if args.bets < 10:
        parser.error("--bets must be at least 10")
    print(
        f"{args.bets} sequential bets by {args.bets} players in one betting round, each with "
        "its own update_id, against the floor on the same database"
    )
    report(await sqlite_result(args.bets))
    outcome = await postgres_result(args.postgres_url, args.bets)
    if isinstance(outcome, str):
        print(outcome)
    else:
        report(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
