"""Soak bench: webhook workers on one PostgreSQL, killed with SIGKILL at random, for minutes.

    python bench/bench_soak.py [--minutes 5] [--groups 6] [--players 4] [--workers 2]
                               [--kill-every 2 8] [--postgres-url URL] [--seed N]
                               [--keep DIR]

The soak of ``tests/e2e/test_two_workers.py`` at full size (``tests/e2e/soak.py`` runs
both): the fake Telegram on this process's event loop pushes its updates through a
round-robin load balancer to ``--workers`` bot processes in webhook mode on one database
(created on the server of ``--postgres-url``, dropped afterwards); each group's dealer and
players act on its boards (bid, bet and Grab buttons; 2 s windows, pictures on) for
``--minutes``. Every few seconds (uniformly within ``--kill-every``) a worker that is up,
chosen at random, is killed with SIGKILL and started again at once (so both may be down
together for a while). Then the tables close, the last rounds end (at most 45 s), the
bot gets 90 s to bring every board up to date, and the workers are killed a last time.

It prints the kills and the rounds, and every figure that must be 0 (or at most 20):

1. rounds without a board in their group (and, apart, those that have their results but
   ended before any board could go out);
2. ended rounds whose board still shows live buttons (bid, bet, cancel, Grab), in the
   fake's message state;
3. the most messages sent to one group within any 60 s (the fake's transcript);
4. processes the workers started still running 10 s after the last kill (found in /proc
   by a mark in their environment);
5. the ledger's checks (``tests/helpers/game.py``), chips lost (credited less what the
   groups' accounts hold), and rounds still open at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import DEFAULT_POSTGRES_URL

from tests.e2e.soak import GROUP_LIMIT, SOAK_GAME, Figures, Plan, scratch_database, settings_of
from tests.e2e.soak import soak as run_soak


def report(plan: Plan, figures: Figures, wall: float) -> None:
    print(
        f"\n{plan.workers} workers, {plan.groups} groups x {plan.players + 1} people, "
        f"{plan.play_seconds / 60:.1f} min of play ({settings_of(SOAK_GAME)}); {wall:.0f} s wall"
    )
    print(
        f"kills: {figures.kills} (one every {plan.kill_every[0]:g}-{plan.kill_every[1]:g} s, "
        f"a random worker that is up); updates posted again after a failure: "
        f"{figures.updates_redelivered}; posts the balancer moved past a down worker: "
        f"{figures.worker_skipped}; forwarded per worker: {figures.forwarded}"
    )
    print(f"rounds: {figures.rounds} ({figures.settled} settled, {figures.void} void)")
    print(
        f"(1) rounds without a board: {len(figures.without_board)} {figures.without_board[:20]}"
        f"  (with a board {figures.boarded}, with their results only {figures.results_only})"
    )
    print(f"(2) ended rounds whose board shows live buttons: {len(figures.live_after_end)}")
    for line in figures.live_after_end[:10]:
        print(f"      {line}")
    print(
        f"(3) most messages to a group in any minute: {figures.most_a_minute} "
        f"(group {figures.busiest_group}; Telegram allows {GROUP_LIMIT})"
    )
    print(f"(4) stray processes after the last kill: {len(figures.strays)}")
    for line in figures.strays[:5]:
        print(f"      {line[:160]}")
    print(f"(5) ledger problems: {len(figures.ledger_problems)}")
    for line in figures.ledger_problems:
        print(f"      {line[:300]}")
    print(f"    chips lost: {figures.chips_lost}")
    print(f"    rounds stuck: {len(figures.stuck)} {figures.stuck[:20]}")
    print(f"load average after: {os.getloadavg()}")


async def main_async(args: argparse.Namespace) -> None:
    plan = Plan(
        groups=args.groups,
        players=args.players,
        play_seconds=args.minutes * 60,
        kill_every=(args.kill_every[0], args.kill_every[1]),
        alternate=False,
        catch_up_seconds=90.0,
        workers=args.workers,
        seed=args.seed,
    )
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        start = time.monotonic()
        async with scratch_database(args.postgres_url) as url:
            figures = await run_soak(plan, Path(tmp), url)
        report(plan, figures, time.monotonic() - start)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for log in Path(tmp).glob("worker*.log"):
                shutil.copy(log, args.keep / log.name)
            print(f"worker logs kept in {args.keep}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--groups", type=int, default=6)
    parser.add_argument("--players", type=int, default=4, help="bettors a group, and a dealer")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--kill-every", type=float, nargs=2, default=[2.0, 8.0], metavar=("LEAST", "MOST")
    )
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--seed", type=int, default=None, help="the kills' seed")
    parser.add_argument("--keep", type=Path, default=None, help="copy the workers' logs here")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.groups < 1 or args.workers < 1 or not 1 <= args.players <= 99:
        parser.error(
            "--minutes must be more than 0, --groups and --workers at least 1, --players 1 to 99"
        )
    if not 0 < args.kill_every[0] <= args.kill_every[1]:
        parser.error("--kill-every needs 0 < LEAST <= MOST")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
