"""Pool bench: what a lease of a PostgreSQL connection costs the event loop.

    python bench/bench_pool.py [--leases N] [--postgres-url URL]

The hot path leases a connection for every command, so a lease must cost far less than
the statements it carries. It prints the event loop's CPU per lease (``process_time``,
one lease after another, nothing run on the connection) of the hot path's pool
(``DriverPool``) and of asyncpg's own pool (``asyncpg.create_pool``, as the hot path
used it before), against two floors in the same run: a lease that is only a list's pop
and append (the least a pool can do), and one ``SELECT 1`` on a bare connection (what
a lease is worth next to a statement).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg
from bench_store import DEFAULT_POSTGRES_URL

from bot.store.db import DriverPool


async def cpu_per_call(call: Callable[[], Awaitable[object]], count: int) -> float:
    """The process's CPU per call, in microseconds, after a warm-up."""
    for _ in range(100):
        await call()
    started = time.process_time()
    for _ in range(count):
        await call()
    return (time.process_time() - started) / count * 1e6


async def main_async(url: str, leases: int) -> None:
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    ours = DriverPool(dsn, 10)
    theirs = await asyncpg.create_pool(dsn, min_size=1, max_size=10)
    bare = await asyncpg.connect(dsn)
    idle = [bare]
    try:

        async def lease_ours() -> None:
            async with ours.connection():
                pass

        async def lease_theirs() -> None:
            async with theirs.acquire():
                pass

        async def lease_floor() -> None:
            connection = idle.pop()
            idle.append(connection)

        async def statement() -> None:
            await bare.fetchval("SELECT 1")

        rows = [
            ("DriverPool (the hot path's)", lease_ours),
            ("asyncpg's pool", lease_theirs),
            ("floor: a list's pop and append", lease_floor),
            ("a statement: SELECT 1", statement),
        ]
        print(f"CPU of the event loop per lease, {leases} leases one after another:")
        results = {name: await cpu_per_call(call, leases) for name, call in rows}
        floor = results["floor: a list's pop and append"]
        for name, micros in results.items():
            print(f"  {name:<32} {micros:8.2f} us   {micros / floor:7.1f}x the floor")
    finally:
        await ours.close()
        await theirs.close()
        await bare.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leases", type=int, default=20_000)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args()
    asyncio.run(main_async(args.postgres_url, args.leases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
