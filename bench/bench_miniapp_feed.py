"""The Mini App's live feed under load: many groups, each watched by several pages.

    python bench/bench_miniapp_feed.py [--groups 200] [--viewers 10] [--rate 100]
                                       [--changes 3000] [--postgres-url URL]
                                       [--sqlite-only | --postgres-only]

For SQLite (a temporary file) and PostgreSQL (a fresh database on the server of
``--postgres-url``, dropped afterwards; skipped with a message if unreachable): ``groups``
groups, each with a round taking bets and ``viewers`` players watching it through
``GET /miniapp/api/feed`` (2000 open connections by default), served by the bot's Mini
App in this process. The pages are read by a second process (raw sockets, the time each
event's id line arrives), so that reading them costs the bot nothing.

Three runs of ``changes`` state changes at ``rate`` a second, the groups in turn:

- **writes**: the bets (``GameService.bet``, each a new round version) with nobody
  watching: what the writes cost alone;
- **feed**: the same bets with every page watching; each is read once for its group
  and sent to its ten pages (the bot's own path: ``RoundEvents`` → ``RoundChanges`` →
  ``FeedHub`` → the page);
- **floor**: the same fan-out to the same number of pages, of events built beforehand,
  with no read and no rendering: the hub told of a change, its "read" a lookup.

It prints, for the feed and the floor: p50/p99/max from commit (the bet's return) to the
page's event (for a page that skipped a state, the event that showed a newer one), the
bot's CPU per event per page (the feed's less the writes'), and the bot's memory per
open connection (its resident set with the pages connected, less before); then the
ratios feed/floor. The aim: p99 at most 250 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web
from bench_store import DEFAULT_POSTGRES_URL, on_scratch_postgres

from bot.engine.settings import Settings
from bot.service.game import Balance, GameService, Person, TableSnapshot
from bot.service.round_changes import RoundChange, RoundKey
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.telegram.collector import tune_garbage_collector
from bot.telegram.miniapp_catalogues import MiniAppCatalogues
from bot.web.miniapp import build_miniapp
from bot.web.miniapp.app import PARTS
from bot.web.miniapp.feed import FeedHub, sse_event
from bot.web.miniapp.init_data import init_data_hash
from bot.web.miniapp.moves import MiniAppBot, MoveAnswer

AIM_P99_SECONDS = 0.250
TOKEN = "123456:bench-feed-token"
ADMIN = Person(1, "Admin")
DEALER = Person(2, "Dealer")
START_MS = 1_800_000_000_000
SETTINGS = Settings(bid_seconds=60, bet_seconds=3_600, min_bid=1_000, bid_increment=1_000)


class Clock:
    def __init__(self) -> None:
        self.now_ms = START_MS

    def __call__(self) -> int:
        return self.now_ms


class NoMoves:
    async def bet(self, chat_id: int, player: Person, amount: str) -> MoveAnswer:
        return MoveAnswer(False, "not in the bench")


class NoTexts:
    """The bench reads no past round: nothing of the shell's texts is asked."""


async def everyone_is_a_member(chat_id: int, user_id: int) -> bool:
    return True


def signed_init_data(user_id: int, now: int) -> str:
    fields = {"auth_date": str(now), "user": json.dumps({"id": user_id, "first_name": "P"})}
    fields["hash"] = init_data_hash(TOKEN, fields)
    return "&".join(f"{key}={quote(value)}" for key, value in fields.items())


async def open_measured(port: int, paths: list[str]) -> tuple[Pages, float]:
    """The pages opened, and the bot's Python memory for each (``tracemalloc``, on only
    while they open: the resident set would reuse what an earlier run freed)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        pages = await Pages.open(port, paths)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return pages, grown / len(paths)


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


# -- the pages: a second process ---------------------------------------------------------


async def page(port: int, path: str, seen: list[tuple[str, float]], first: asyncio.Event) -> None:
    """One page's feed over a raw socket (HTTP/1.0: no chunks), each event's id and when it
    arrived (``time.monotonic``: the same clock in both processes)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.0\r\nHost: bench\r\n\r\n".encode())
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"feed refused: {status!r}")
    while line := await reader.readline():
        if line.startswith(b"id: "):
            seen.append((line[4:].decode().strip(), time.monotonic()))
            first.set()


async def pages_main() -> None:
    """Read the feeds named on stdin; say ``ready`` once each has had its first event;
    on ``stop``, print every page's events as JSON."""
    config = json.loads(sys.stdin.readline())
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    seen: list[list[tuple[str, float]]] = [[] for _ in config["paths"]]
    firsts = [asyncio.Event() for _ in config["paths"]]
    tasks = []
    for index, path in enumerate(config["paths"]):
        tasks.append(asyncio.create_task(page(config["port"], path, seen[index], firsts[index])))
        if index % 50 == 49:
            await asyncio.sleep(0)  # let the server take them in
    await asyncio.gather(*(first.wait() for first in firsts))
    print("ready", flush=True)
    await stdin.readline()
    for task in tasks:
        task.cancel()
    print(json.dumps(seen), flush=True)


@dataclass
class Pages:
    process: asyncio.subprocess.Process

    @classmethod
    async def open(cls, port: int, paths: list[str]) -> Pages:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--pages",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 30,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"port": port, "paths": paths}).encode() + b"\n")
        await process.stdin.drain()
        ready = await process.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the pages did not open: {ready!r}")
        return cls(process)

    async def close(self) -> list[list[tuple[str, float]]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(b"stop\n")
        await self.process.stdin.drain()
        seen: list[list[tuple[str, float]]] = json.loads(await self.process.stdout.readline())
        await self.process.wait()
        return seen


# -- the bot's side -----------------------------------------------------------------------


@dataclass
class Run:
    name: str
    #: Per page, its group; per group, each change's key and when it was committed.
    commits: dict[int, list[tuple[RoundKey, float]]]
    cpu_seconds: float
    seconds: float
    events: int = 0
    latencies: list[float] = dataclasses.field(default_factory=list)
    missed: int = 0


def measure(run: Run, groups_of_pages: list[int], seen: list[list[tuple[str, float]]]) -> None:
    """Each change's time to each page of its group: until the page's first event at
    that key or newer (a page that skipped a state saw it in a newer one)."""
    for chat_id, events in zip(groups_of_pages, seen, strict=True):
        received = [(RoundKey.parse(key), at) for key, at in events]
        run.events += len(received)
        index = 0
        for key, committed in run.commits.get(chat_id, []):
            while index < len(received) and (received[index][0] or key) < key:
                index += 1
            if index == len(received):
                run.missed += 1
            else:
                run.latencies.append(received[index][1] - committed)


async def paced(changes: int, rate: float, change: Callable[[int], Awaitable[None]]) -> float:
    """``change(i)`` for each i, started ``rate`` a second (each in a task of its own, as
    commands from many groups come); the seconds it all took."""
    started = time.monotonic()
    tasks = []
    for index in range(changes):
        delay = started + index / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(change(index)))
    await asyncio.gather(*tasks)
    await asyncio.sleep(0.5)  # the last events on their way
    return time.monotonic() - started


class Bench:
    def __init__(self, service: GameService, groups: list[int], players: list[Person]) -> None:
        self.service = service
        self.groups = groups
        self.players = players
        #: Turns taken so far: each run goes on from the last (a bet must change).
        self.turns = 0

    async def bets(self, name: str, changes: int, rate: float) -> Run:
        """``changes`` bets, the groups in turn, each player changing their bet."""
        commits: dict[int, list[tuple[RoundKey, float]]] = {chat: [] for chat in self.groups}
        first_turn = self.turns
        self.turns += math.ceil(changes / len(self.groups))

        async def bet(index: int) -> None:
            chat_id = self.groups[index % len(self.groups)]
            turn = first_turn + index // len(self.groups)
            player = self.players[turn % len(self.players)]
            result = await self.service.bet(chat_id, player, 100 * (1 + turn % 40))
            committed = time.monotonic()
            assert result.round is not None
            commits[chat_id].append((RoundKey(result.round.id, result.round.version), committed))

        cpu = time.process_time()
        seconds = await paced(changes, rate, bet)
        for entries in commits.values():
            entries.sort()
        return Run(name, commits, time.process_time() - cpu, seconds)


def floor_hub(groups: list[int], viewers: list[int]) -> tuple[FeedHub, dict[int, RoundKey]]:
    """A hub whose reads are lookups and whose events were built beforehand."""
    keys = dict.fromkeys(groups, RoundKey(1, 1))
    body = "x" * 1_200  # about a table's JSON
    built = {chat: sse_event("1.1", "table", body) for chat in groups}
    balances = {user: Balance(0, 0) for user in viewers}

    async def lookup(chat_id: int, users: Sequence[int]) -> TableSnapshot:
        return TableSnapshot(chat_id, keys[chat_id], None, SETTINGS, balances, {})

    def prebuilt(snapshot: TableSnapshot, user_id: int) -> bytes:
        event = built[snapshot.chat_id]
        return event.replace(b"1.1", str(snapshot.key).encode(), 1)

    return FeedHub(lookup, prebuilt), keys


async def floor_run(
    hub: FeedHub, keys: dict[int, RoundKey], groups: list[int], changes: int, rate: float
) -> Run:
    commits: dict[int, list[tuple[RoundKey, float]]] = {chat: [] for chat in groups}

    async def change(index: int) -> None:
        chat_id = groups[index % len(groups)]
        key = keys[chat_id] = RoundKey(1, keys[chat_id].version + 1)
        commits[chat_id].append((key, time.monotonic()))
        hub.changed(RoundChange(chat_id, key))

    cpu = time.process_time()
    seconds = await paced(changes, rate, change)
    return Run("floor", commits, time.process_time() - cpu, seconds)


async def serve(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    return runner, runner.addresses[0][1]


@dataclass
class Result:
    database: str
    groups: int
    pages: int
    writes: Run
    feed: Run
    floor: Run
    feed_memory: float
    floor_memory: float


async def run(url: str, label: str, groups: int, viewers: int, changes: int, rate: float) -> Result:
    await upgrade_async(url)
    db = Database.from_url(url)
    clock = Clock()
    service = GameService(db, SETTINGS, clock=clock)
    runners: list[web.AppRunner] = []
    try:
        players = [Person(100_000 + i, f"P{i}") for i in range(viewers)]
        await service.note_people([DEALER, *players])
        chats = [-100_000 - g for g in range(groups)]
        rounds = []
        for chat_id in chats:
            await service.set_open(chat_id, ADMIN, True)
            await service.credit(chat_id, ADMIN, DEALER.id, 10_000_000)
            for player in players:
                await service.credit(chat_id, ADMIN, player.id, 1_000_000)
            started = await service.start_round(chat_id, actor=DEALER)
            assert started.round is not None
            await service.bid(chat_id, DEALER, 1_000_000)
            rounds.append(started.round.id)
        clock.now_ms += SETTINGS.bid_seconds * 1000
        for round_id in rounds:
            await service.advance(round_id)
        bench = Bench(service, chats, players)

        app = build_miniapp(
            service=service,
            bots=[MiniAppBot(TOKEN, everyone_is_a_member, NoMoves())],
            round_texts=NoTexts(),
            clock=time.time,
            catalogues=MiniAppCatalogues(),
            member_seconds=60.0,
        )
        floor_app = build_miniapp(
            service=service,
            bots=[MiniAppBot(TOKEN, everyone_is_a_member, NoMoves())],
            round_texts=NoTexts(),
            clock=time.time,
            catalogues=MiniAppCatalogues(),
            member_seconds=60.0,
        )
        user_ids = [player.id for player in players]
        hub, keys = floor_hub(chats, user_ids)
        floor_app[PARTS] = dataclasses.replace(floor_app[PARTS], feed=hub)
        runner, port = await serve(app)
        floor_runner, floor_port = await serve(floor_app)
        runners += [runner, floor_runner]

        sessions = app[PARTS].sessions
        now = int(time.time())
        tokens = {p.id: sessions.sign_in(signed_init_data(p.id, now), now).token for p in players}
        groups_of_pages = [chat for chat in chats for _ in players]
        paths = [
            f"/api/feed?chat={chat}&token={tokens[player.id]}"
            for chat in chats
            for player in players
        ]

        tune_garbage_collector()  # as the bot's runner does once it has started
        writes = await bench.bets("writes", changes, rate)

        pages, feed_memory = await open_measured(port, paths)
        feed = await bench.bets("feed", changes, rate)
        measure(feed, groups_of_pages, await pages.close())

        pages, floor_memory = await open_measured(floor_port, paths)
        floor = await floor_run(hub, keys, chats, changes, rate)
        measure(floor, groups_of_pages, await pages.close())
        return Result(label, groups, len(paths), writes, feed, floor, feed_memory, floor_memory)
    finally:
        for each in runners:
            await each.cleanup()
        await db.dispose()


def report(result: Result, changes: int, rate: float) -> None:
    print(
        f"{result.database}: {result.groups} groups x {result.pages // result.groups} pages"
        f" = {result.pages} open feeds; {changes} changes at {rate:g}/s"
    )
    writes = result.writes
    print(f"  writes alone: {writes.seconds:.1f} s, CPU {writes.cpu_seconds:.2f} s")
    feed_cpu = max(0.0, result.feed.cpu_seconds - writes.cpu_seconds)
    rows = (
        ("feed", result.feed, feed_cpu, result.feed_memory),
        ("floor", result.floor, result.floor.cpu_seconds, result.floor_memory),
    )
    figures = {}
    for name, each, cpu, memory in rows:
        p50, p99 = percentile(each.latencies, 0.5), percentile(each.latencies, 0.99)
        per_event = cpu / max(1, each.events) * 1e6
        figures[name] = (p99, per_event, memory)
        print(
            f"  {name:5}: commit→page p50 {p50 * 1e3:6.1f} ms  p99 {p99 * 1e3:6.1f} ms"
            f"  max {max(each.latencies) * 1e3:6.1f} ms; {each.events} events"
            f" ({each.missed} changes never shown); CPU {per_event:6.1f} µs an event a page;"
            f" memory {memory / 1024:5.1f} KiB a connection"
        )
    (p99, cpu, memory), (floor_p99, floor_cpu, floor_memory) = figures["feed"], figures["floor"]
    print(
        f"  feed/floor: p99 {p99 / floor_p99:.2f}x, CPU {cpu / max(floor_cpu, 1e-9):.2f}x,"
        f" memory {memory / max(floor_memory, 1.0):.2f}x"
    )
    verdict = "met" if p99 <= AIM_P99_SECONDS else "NOT met"
    print(f"  aim: p99 <= {AIM_P99_SECONDS * 1e3:.0f} ms: {verdict}")


async def sqlite_result(*options: Any) -> Result:
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        return await run(url, "SQLite (temporary file, WAL)", *options)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=10, help="pages watching a group")
    parser.add_argument("--rate", type=float, default=100.0, help="changes a second")
    parser.add_argument("--changes", type=int, default=3_000)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--sqlite-only", action="store_true")
    only.add_argument("--postgres-only", action="store_true")
    args = parser.parse_args(argv)
    if min(args.groups, args.viewers, args.changes) < 1 or args.rate <= 0:
        parser.error("--groups, --viewers and --changes must be at least 1, --rate above 0")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    options = (args.groups, args.viewers, args.changes, args.rate)
    if not args.postgres_only:
        report(await sqlite_result(*options), args.changes, args.rate)
    if not args.sqlite_only:
        postgres = await on_scratch_postgres(
            args.postgres_url, lambda url, label: run(url, f"PostgreSQL ({label})", *options)
        )
        if isinstance(postgres, str):
            print(postgres)
        else:
            report(postgres, args.changes, args.rate)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--pages"]:
        asyncio.run(pages_main())
        raise SystemExit(0)
    raise SystemExit(asyncio.run(main()))
