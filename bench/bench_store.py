"""Store bench: how fast ``GameService.bet`` is against one committed row, per database.

    python bench/bench_store.py [--bets N] [--postgres-url URL]

For SQLite (a temporary file) and for PostgreSQL (a fresh database created on the server
of ``--postgres-url`` and dropped afterwards; skipped with a message if unreachable), in
one betting round of one group, ``N`` different players each place one bet with a
distinct ``update_id``, one after another (sequential ``service.bet`` calls, no
concurrency). Beside each bet, on the same database and in the same run, the floor: one
row inserted into ``processed_updates`` and committed through the same
``Database.transaction()``. Bets and floor operations alternate, so both see the same
database, cache and WAL.

It prints bets per second, the median and 99th percentile of one bet, the same for the
floor, and the ratio bet/floor of the medians and of the throughputs, with the aim (at
most 3x) and whether it is met. It also prints the median bet of the first and the last
tenth of the round: each bet reads the round's earlier bets, so a bet costs more as the
round fills.
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

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.engine.settings import Settings
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.store.models import ProcessedUpdate

AIM = 3.0
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

        async def commit_one_row(update_id: int) -> None:
            async with db.transaction() as session:
                session.add(ProcessedUpdate(update_id=update_id, processed_at_ms=clock_ms))

        for i, player in enumerate(players):
            bets.append(
                await timed(lambda p=player, u=i: service.bet(GROUP, p, 100, update_id=10**6 + u))
            )
            floor.append(await timed(lambda u=i: commit_one_row(2 * 10**6 + u)))
        state = await service.round(started.round.id)
        assert state is not None and len(state.bets) == count, "not every bet landed"
        return Result(label, bets, floor)
    finally:
        await db.dispose()


def report(result: Result) -> None:
    bets, floor = result.bets, result.floor
    bet_median, floor_median = statistics.median(bets), statistics.median(floor)
    ratio = bet_median / floor_median
    throughput_ratio = (len(floor) / sum(floor)) / (len(bets) / sum(bets))
    tenth = max(1, len(bets) // 10)
    met = ratio <= AIM
    print(f"{result.database}:")
    print(
        f"  bet    {len(bets) / sum(bets):8.0f} /s   median {bet_median * 1e3:7.3f} ms   "
        f"p99 {percentile(bets, 0.99) * 1e3:7.3f} ms"
    )
    print(
        f"  floor  {len(floor) / sum(floor):8.0f} /s   median {floor_median * 1e3:7.3f} ms   "
        f"p99 {percentile(floor, 0.99) * 1e3:7.3f} ms   (one row inserted and committed)"
    )
    print(
        f"  bet/floor: {ratio:.1f}x (medians), {throughput_ratio:.1f}x (throughput); "
        f"aim <= {AIM:.0f}x: {'met' if met else 'NOT met'}"
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
        return await run(url, f"PostgreSQL (fresh database {name})", count)
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
