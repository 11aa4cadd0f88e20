"""Standing bets bench: opening betting in many groups, each with standing bets to place.

    python bench/bench_autobets.py [--groups 300] [--players 10] [--postgres-url URL]

For SQLite (a temporary file) and PostgreSQL (a fresh database on the server of
``--postgres-url``, dropped afterwards; skipped with a message if unreachable): ``groups``
groups each have a round whose bidding is over and ``players`` players with a standing
bet (``/autobet``). Timed, one group after another as their deadlines come: the deadline
that opens betting, which places the group's standing bets in one unit of work.

The floor, in the same run on the same database, one of its groups after each group
timed (both see the same load on the machine): as many other groups, the same deadline with
no standing bets, then the same bets as ``/bet`` (``GameService.bet``, the hot path: one
read and one write each), which is what the players would otherwise do every round. It
prints both per group and per bet and the ratio (aim: at most 1x, placing them in one go
costs no more than the bets would by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import DEFAULT_POSTGRES_URL, on_scratch_postgres

from bot.engine.round import Phase
from bot.engine.settings import Settings
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.migrate import upgrade_async

AIM = 1.0
ADMIN = Person(1, "Admin")
DEALER = Person(2, "Dealer")
START_MS = 1_800_000_000_000
SETTINGS = Settings(bid_seconds=60, bet_seconds=3_600, min_bid=1_000, bid_increment=1_000)
STAKE = 100


@dataclass
class Result:
    database: str
    groups: int
    bets: int
    autobets_seconds: float
    floor_seconds: float


class Clock:
    def __init__(self) -> None:
        self.now_ms = START_MS

    def __call__(self) -> int:
        return self.now_ms


async def bidding_over(
    service: GameService, clock: Clock, chat_id: int, players: list[Person], standing: bool
) -> int:
    """A group whose round's bidding is over (its deadline not applied yet); the round."""
    await service.set_open(chat_id, ADMIN, True)
    await service.credit(chat_id, ADMIN, DEALER.id, 10_000_000)
    for player in players:
        await service.credit(chat_id, ADMIN, player.id, 1_000_000)
        if standing:
            await service.set_autobet(chat_id, player, STAKE)
    started = await service.start_round(chat_id, actor=DEALER)
    assert started.round is not None
    await service.bid(chat_id, DEALER, 1_000_000)
    return started.round.id


async def run(url: str, label: str, groups: int, count: int) -> Result:
    await upgrade_async(url)
    db = Database.from_url(url)
    clock = Clock()
    service = GameService(db, SETTINGS, clock=clock)
    try:
        players = [Person(100_000 + i, f"P{i}") for i in range(count)]
        await service.note_people([DEALER, *players])
        standing = {
            -100_000 - g: await bidding_over(service, clock, -100_000 - g, players, True)
            for g in range(groups)
        }
        by_hand = {
            -200_000 - g: await bidding_over(service, clock, -200_000 - g, players, False)
            for g in range(groups)
        }
        clock.now_ms += SETTINGS.bid_seconds * 1000

        # A group of each kind in turn, so that both see the same load on the machine.
        autobets_seconds = floor_seconds = 0.0
        for round_id, (chat_id, by_hand_round) in zip(
            standing.values(), by_hand.items(), strict=True
        ):
            started = time.perf_counter()
            result = await service.advance(round_id)
            autobets_seconds += time.perf_counter() - started
            assert result.autobets is not None and len(result.autobets.placed) == count

            started = time.perf_counter()
            result = await service.advance(by_hand_round)
            for player in players:
                await service.bet(chat_id, player, STAKE)
            floor_seconds += time.perf_counter() - started
            assert result.round is not None and result.round.phase is Phase.BETTING

        for round_id in (*standing.values(), *by_hand.values()):
            state = await service.round(round_id)
            assert state is not None and len(state.bets) == count, "not every bet landed"
        return Result(label, groups, groups * count, autobets_seconds, floor_seconds)
    finally:
        await db.dispose()


def report(result: Result) -> None:
    ratio = result.autobets_seconds / result.floor_seconds
    print(f"{result.database}: {result.groups} groups, {result.bets} bets each way")
    for name, seconds in (
        ("standing bets", result.autobets_seconds),
        ("floor (/bet)", result.floor_seconds),
    ):
        print(
            f"  {name:14} {seconds:7.2f} s   {seconds / result.groups * 1e3:7.2f} ms a group"
            f"   {seconds / result.bets * 1e3:6.3f} ms a bet"
        )
    verdict = "met" if ratio <= AIM else "NOT met"
    print(f"  standing bets/floor: {ratio:.2f}x; aim <= {AIM:.0f}x: {verdict}")


async def sqlite_result(groups: int, count: int) -> Result:
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        return await run(url, "SQLite (temporary file, WAL)", groups, count)


async def postgres_result(admin_url: str, groups: int, count: int) -> Result | str:
    return await on_scratch_postgres(
        admin_url, lambda url, label: run(url, f"PostgreSQL ({label})", groups, count)
    )


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=300)
    parser.add_argument("--players", type=int, default=10, help="standing bets a group")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args(argv)
    if args.groups < 1 or args.players < 1:
        parser.error("--groups and --players must be at least 1")
    report(await sqlite_result(args.groups, args.players))
    postgres = await postgres_result(args.postgres_url, args.groups, args.players)
    if isinstance(postgres, str):
        print(postgres)
    else:
        report(postgres)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
