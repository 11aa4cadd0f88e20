"""Processes bench: aggregate bets per second of 1 and of 2 processes on one PostgreSQL.

    python bench/bench_processes.py [--groups 50] [--players 20] [--repeat 2]
                                    [--postgres-url URL]

On a fresh database (created on the server of ``--postgres-url`` and dropped afterwards),
each worker process opens ``--groups`` tables of its own (distinct chats), credits
``--players`` bettors and brings a round to betting through ``GameService``; once every
worker is ready they start together: every table in its own task, its bettors betting one
after another ``--repeat`` times (changing their bet), all tables at once (a closed loop,
the store-level half of ``bench_bot.py``'s load). Run once with 1 worker and once with 2
(different groups, same database). It prints, per run, the aggregate bets per second (all
bets over the longest worker's wall time), each worker's rate, the median and p99 of a
bet, and the process CPU per bet; then 2 processes against 1: on 2 cores we expect little
gain, and no loss beyond 10% ("no loss" is the aim, checked here, not asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import DEFAULT_POSTGRES_URL

from bot.engine.settings import Settings
from bot.service.game import GameService, Person, wall_clock_ms
from bot.store import ledger
from bot.store.db import Database
from bot.store.migrate import upgrade_async

SETTINGS = Settings(bid_seconds=60, bet_seconds=3_600, min_bid=1_000, bid_increment=1_000)
ADMIN = Person(1, "Admin")
CREDIT = 10_000_000
LOSS_LIMIT = 0.10


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] if ordered else float("nan")


async def worker(args: argparse.Namespace) -> int:
    """One process: set up its tables, say "ready", wait for "go", bet, print JSON."""
    from bot.engine.round import MINT, Posting, available

    db = Database.from_url(args.url)
    offset = {"ms": 0}
    service = GameService(db, SETTINGS, clock=lambda: wall_clock_ms() + offset["ms"])
    base = 3_000_000_000_000 + args.run * 1_000_000 + args.index * 10_000
    chats = [-(base + g) for g in range(args.groups)]
    people = {
        chat: [Person(base + g * 100 + p, f"P{p}") for p in range(args.players + 1)]
        for g, chat in enumerate(chats)
    }
    try:
        for chat in chats:
            await service.set_open(chat, ADMIN, True)
            async with db.transaction() as session:
                await ledger.Ledger(session).post(
                    chat_id=chat,
                    kind="credit",
                    postings=[Posting(MINT, -CREDIT * len(people[chat]))]
                    + [Posting(available(person.id), CREDIT) for person in people[chat]],
                    now_ms=wall_clock_ms(),
                    actor_id=ADMIN.id,
                    memo="bench credit",
                )
            await service.note_people(people[chat])
        round_ids = []
        for chat in chats:
            dealer = people[chat][0]
            started = await service.start_round(chat, actor=dealer)
            assert started.round is not None
            round_ids.append(started.round.id)
            await service.bid(chat, dealer, 1_000_000)
        offset["ms"] += SETTINGS.bid_seconds * 1000 + 1
        for round_id in round_ids:
            await service.advance(round_id)
        update_ids = iter(range(base * 1000, base * 1000 + 10**6))
        latencies: list[float] = []

        async def table(chat: int) -> None:
            for repeat in range(args.repeat):
                for person in people[chat][1:]:
                    started = time.perf_counter()
                    await service.bet(chat, person, 100 + repeat * 100, update_id=next(update_ids))
                    latencies.append(time.perf_counter() - started)

        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(table(chat) for chat in chats))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            json.dumps({"bets": len(latencies), "wall": wall, "cpu": cpu, "latency": latencies}),
            flush=True,
        )
    finally:
        await db.dispose()
    return 0


async def run_workers(url: str, count: int, args: argparse.Namespace, run: int) -> dict[str, Any]:
    """Start ``count`` workers, let them bet together, collect what they measured."""
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--worker",
            "--url",
            url,
            "--index",
            str(index),
            "--run",
            str(run),
            "--groups",
            str(args.groups),
            "--players",
            str(args.players),
            "--repeat",
            str(args.repeat),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for index in range(count)
    ]
    for process in processes:
        assert process.stdout is not None
        line = await process.stdout.readline()
        if line.strip() != b"ready":
            raise SystemExit(f"a worker failed during setup: {line!r}")
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        await process.stdin.drain()
    results = []
    for process in processes:
        assert process.stdout is not None
        results.append(json.loads(await process.stdout.readline()))
        await process.wait()
    bets = sum(r["bets"] for r in results)
    wall = max(r["wall"] for r in results)
    latencies = [value for r in results for value in r["latency"]]
    return {
        "bets": bets,
        "rate": bets / wall,
        "rates": [r["bets"] / r["wall"] for r in results],
        "cpu_per_bet": sum(r["cpu"] for r in results) / bets,
        "p50": statistics.median(latencies),
        "p99": percentile(latencies, 0.99),
    }


async def main_async(args: argparse.Namespace) -> int:
    import asyncpg

    plain = make_url(args.postgres_url).set(drivername="postgresql")
    name = f"niuniu_bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(plain.render_as_string(hide_password=False), timeout=3)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = plain.set(database=name).render_as_string(hide_password=False)
        await upgrade_async(url)
        print(
            f"niuniu-bot processes bench: PostgreSQL (fresh database {name}); per process "
            f"{args.groups} tables x {args.players} bettors x {args.repeat} bets, all "
            f"tables at once; {os.cpu_count()} cores",
            flush=True,
        )
        measured = {}
        for run, count in enumerate((1, 2), start=1):
            found = measured[count] = await run_workers(url, count, args, run)
            print(
                f"  {count} process{'es' if count > 1 else ''}: {found['bets']:6d} bets, "
                f"{found['rate']:7.1f} bets/s aggregate (each: "
                + ", ".join(f"{rate:.1f}" for rate in found["rates"])
                + f"); bet median {found['p50'] * 1000:.2f} ms, p99 {found['p99'] * 1000:.2f}"
                f" ms; CPU per bet {found['cpu_per_bet'] * 1000:.2f} ms",
                flush=True,
            )
        change = measured[2]["rate"] / measured[1]["rate"] - 1
        verdict = "within" if change >= -LOSS_LIMIT else "BEYOND"
        print(
            f"  => 2 processes vs 1: {change * 100:+.1f}% aggregate bets/s ({verdict} the "
            f"{LOSS_LIMIT * 100:.0f}% loss limit); CPU per bet "
            f"{measured[2]['cpu_per_bet'] / measured[1]['cpu_per_bet']:.2f}x",
            flush=True,
        )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=50, help="tables per process")
    parser.add_argument("--players", type=int, default=20, help="bettors per table")
    parser.add_argument("--repeat", type=int, default=2, help="bets per bettor")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.groups < 1 or args.players < 1 or args.repeat < 1 or args.groups > 99:
        parser.error("need 1 <= --groups <= 99, --players >= 1, --repeat >= 1")
    return asyncio.run(worker(args) if args.worker else main_async(args))


if __name__ == "__main__":
    sys.exit(main())
