"""Cache bench: every per-chat and per-user structure of the shell stays bounded, and the
process's memory flat, as many groups write and then go quiet.

    python bench/bench_caches.py [--chats 10000] [--bursts 2] [--quiet 250] [--census 20]
                                 [--concurrency 200] [--database-url URL]

The bot is built by its composition root (``bot.bootstrap.assemble``) over
``memory_telegram.py``'s in-memory Telegram (no rate limiter: the fake Telegram has none, and
PTB's limiter would pace 10,000 groups' answers at 30 a second) and fed updates through
``application.update_queue``, as ``bench_bot.py`` does. Each burst is ``--chats`` groups
never seen before, ``--concurrency`` of them at a time, each one's updates one after the
other (each sent once the previous one was handled):

    creator  /open                       (an admin: Telegram says "creator"; the title noted)
    member A /balance, /history
    member B /rules, a plain message, /config (refused: Telegram says "member")
    creator  /credit A 1000
    member A /newround, /bid 100         (a round: its board posted, then edited; a timer)
    creator  /close                      (the round runs to its end, no other starts)

Every ``--bet-every``-th group also credits B, waits for betting and has B ``/bet 1``;
every ``--chatty-every``-th has B ask ``/balance`` four times more, which takes the group
past its ten answers a minute (the rest wait and go out combined). Rounds run on short
windows (``--window`` seconds for bidding, betting and grabbing).

After building the bot, half-way through each burst, when its last update was handled, and
after ``--quiet`` seconds of silence that follow, it prints the
size of every per-chat and per-user structure, the process's resident memory (RSS, from
``/proc/self/statm``) and Python's allocated blocks (after a full ``gc.collect()``). The
floor is the first line: the same process with the bot built and started, before any chat;
every RSS is printed against it. Caps are the bot's own constants. Below the sizes it
prints where the resident memory is (see ``NativeMemory``): Python's small-object
allocator (its arenas, and the blocks in use in them), C ``malloc`` (in use, and free but
kept) and SQLite's share of it, so that memory kept by allocators after the objects are
gone (fragmentation) is told apart from objects that are still alive. After each burst
it waits until every message of it went out (the bot sends about 30 a second, so a burst of
thousands of groups takes minutes), then stays quiet ``--quiet`` seconds, longer than every
time-to-live twice over (names, titles and people stored live 120 s, a group's sends are
counted for 60 s, settings live 10 s, admin answers ``admin_cache_seconds``, 60 s); the bot
gives back what quiet chats held every 30 s. ``--census N`` also prints the N types of
object whose count grew most from one quiet stage to the next.

A temporary SQLite file is used unless ``--database-url`` names another database (a
scratch one: the bench leaves its tables and rounds there).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import itertools
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench_bot import Tracker
from memory_telegram import TOKEN, MemoryTelegram, TelegramStats, message_update

from bot.bootstrap import assemble
from bot.config import Config
from bot.engine.round import Phase
from bot.engine.settings import Settings
from bot.service.core import PEOPLE_REMEMBERED, PEOPLE_REMEMBERED_SECONDS
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.telegram.admins import ADMIN_ANSWERS_CACHED, TITLES_CACHE_SECONDS, TITLES_CACHED
from bot.telegram.board import BOARDS_CACHED
from bot.telegram.budget import GROUPS_COUNTED
from bot.telegram.lookups import NAMES_CACHE_SECONDS, NAMES_CACHED, SETTINGS_CACHED
from bot.telegram.shell import AnyApplication, GameBot

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CHAT_BASE = 3_000_000_000_000
USER_BASE = 3_000_000_000
PHASE_POLL_SECONDS = 0.5


def rss_bytes() -> int:
    """The process's resident set size now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


class NativeMemory:
    """Where resident memory goes: C ``malloc`` (glibc's ``mallinfo2``, every thread's
    arena: in use, and free but kept), SQLite's own allocations (``sqlite3_memory_used``,
    page caches included), Python's small-object allocator (``pymalloc``), and the RSS's
    anonymous and file-backed parts, where the platform tells them."""

    def __init__(self) -> None:
        self._mallinfo: Any = None
        self._sqlite: Any = None
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6")
            libc.mallinfo2.restype = _MallInfo2
            self._mallinfo = libc.mallinfo2
        with contextlib.suppress(OSError, AttributeError):
            # The library the sqlite3 module loaded (dlopen returns the same handle).
            sqlite = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
            sqlite.sqlite3_memory_used.restype = ctypes.c_int64
            self._sqlite = sqlite.sqlite3_memory_used

    def read(self) -> dict[str, int]:
        """Bytes: ``malloc`` in use and free in its arenas, SQLite's, and the RSS's anonymous
        and file-backed parts (``/proc/self/status``); -1 where unknown."""
        found = {"malloc used": -1, "malloc free": -1, "SQLite": -1}
        if self._mallinfo is not None:
            info = self._mallinfo()
            found["malloc used"] = info.uordblks + info.hblkhd
            found["malloc free"] = info.fordblks
        if self._sqlite is not None:
            found["SQLite"] = int(self._sqlite())
        found.update(pymalloc())
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile", "RssShmem"):
                    found[key] = int(value.split()[0]) * 1024
        return found


def pymalloc() -> dict[str, int]:
    """Python's small-object allocator: the bytes of its arenas (what it holds of the
    system) and of the blocks in use in them, from ``sys._debugmallocstats()`` (printed on
    the C stderr, read back from a temporary file); arenas are returned only when empty."""
    found = {"pymalloc arenas": -1, "pymalloc in use": -1}
    if not hasattr(sys, "_debugmallocstats"):
        return found
    with tempfile.TemporaryFile(mode="w+") as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(capture.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        for line in capture:
            label, _, value = line.partition("=")
            label, number = label.strip(), value.strip().replace(",", "")
            if label.endswith("bytes/arena"):
                found["pymalloc arenas"] = int(number)
            elif label == "# bytes in allocated blocks":
                found["pymalloc in use"] = int(number)
    return found


@dataclass(frozen=True)
class Plan:
    """Chat and user ids of one run: group ``n`` of the run (over all bursts) has three
    users, its creator ``3n``, A ``3n + 1`` and B ``3n + 2`` past ``USER_BASE``."""

    run: int = field(default_factory=lambda: int(time.time()) % 100_000)

    def chat(self, n: int) -> int:
        return -(CHAT_BASE + self.run * 10_000_000 + n)

    def user(self, n: int, which: int) -> int:
        return USER_BASE + self.run * 30_000_000 + 3 * n + which

    def is_creator(self, user_id: int) -> bool:
        return (user_id - USER_BASE) % 3 == 0


class Creators:
    """Who Telegram says is a group's creator (``getChatMember``): each group's first user,
    by arithmetic, so that the bench keeps no set that grows with the groups."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def __contains__(self, user_id: object) -> bool:
        return isinstance(user_id, int) and user_id >= USER_BASE and self.plan.is_creator(user_id)


class Updates:
    """Telegram-shaped group messages with fresh ids (a counter for the whole run: the bench
    keeps nothing per chat)."""

    def __init__(self) -> None:
        self._ids = itertools.count(time.time_ns() // 1000)

    def message(self, chat_id: int, user_id: int, text: str) -> dict[str, Any]:
        update_id = next(self._ids)
        return message_update(update_id, update_id % 2_000_000_000, chat_id, user_id, text)


@dataclass
class Row:
    """One line of the table: what it counts and its bound."""

    name: str
    cap: str
    read: Callable[[], int]


def rows(application: AnyApplication, game: GameBot) -> list[Row]:
    """Every per-chat and per-user structure, read through public interfaces."""
    config = game.config
    ttl_admin = f"{config.admin_cache_seconds:g} s"
    return [
        Row("ChatLocks", "busy chats", lambda: len(game.locks)),
        Row("ChatOutbox", "chats sending", lambda: len(game.outbox)),
        Row("Replies: groups waiting", "busy chats", lambda: game.replies.sizes()["waiting"]),
        Row("Replies: timers", "groups waiting", lambda: game.replies.sizes()["timers"]),
        Row("SendBudget", f"{GROUPS_COUNTED:,}, 60 s", lambda: len(game.replies.budget)),
        Row("ChatSettings", f"{SETTINGS_CACHED:,}, 10 s", lambda: len(game.chats)),
        Row("People", f"{NAMES_CACHED:,}, {NAMES_CACHE_SECONDS:g} s", lambda: len(game.people)),
        Row(
            "AdminCheck: answers",
            f"{ADMIN_ANSWERS_CACHED:,}, {ttl_admin}",
            lambda: game.admins.sizes()["answers"],
        ),
        Row(
            "AdminCheck: titles",
            f"{TITLES_CACHED:,}, {TITLES_CACHE_SECONDS:g} s",
            lambda: game.admins.sizes()["titles"],
        ),
        Row("Board: shown", "open rounds", lambda: game.board.sizes()["shown"]),
        Row("Board: board ids", "open rounds", lambda: game.board.sizes()["board_ids"]),
        Row("Board: phases recorded", "open rounds", lambda: game.board.sizes()["phase_recorded"]),
        Row("Board: phases unshown", "rounds", lambda: game.board.sizes()["unshown_since"]),
        Row(
            "Board: edited at",
            f"{BOARDS_CACHED:,}, {config.board_edit_seconds:g} s",
            lambda: game.board.sizes()["edited_at"],
        ),
        Row("Board: edits pending", "open rounds", lambda: game.board.sizes()["edit_pending"]),
        Row("Board: delivering", "open rounds", lambda: game.board.sizes()["delivering"]),
        Row("Board: tasks", "open rounds", lambda: game.board.sizes()["tasks"]),
        Row("Deadlines", "open rounds", lambda: len(game.deadlines)),
        Row("Timers", "open rounds + 3", lambda: len(game.timers or ())),
        Row(
            "service: people remembered",
            f"{PEOPLE_REMEMBERED:,}, {PEOPLE_REMEMBERED_SECONDS:g} s",
            lambda: game.service.people_remembered,
        ),
        Row("PTB chat_data", "-", lambda: len(application.chat_data)),
        Row("PTB user_data", "-", lambda: len(application.user_data)),
    ]


@dataclass
class Stage:
    name: str
    sizes: list[int]
    rss: int
    blocks: int
    native: dict[str, int]


class Report:
    """Takes the stages' readings and prints them as they come, then as a table."""

    def __init__(self, table: list[Row]) -> None:
        self.table = table
        self.stages: list[Stage] = []
        self.native = NativeMemory()

    def take(self, name: str) -> Stage:
        gc.collect()
        stage = Stage(
            name,
            [row.read() for row in self.table],
            rss_bytes(),
            sys.getallocatedblocks(),
            self.native.read(),
        )
        self.stages.append(stage)
        floor = self.stages[0].rss
        busiest = sorted(zip(stage.sizes, (r.name for r in self.table), strict=True))[-3:]
        print(
            f"{name:<22} RSS {stage.rss / 2**20:7.1f} MiB ({stage.rss / floor:.2f}x the floor), "
            f"{stage.blocks:,} blocks; largest: "
            + ", ".join(f"{label} {size:,}" for size, label in reversed(busiest)),
            flush=True,
        )
        return stage

    def print_table(self) -> None:
        width = max(len(stage.name) for stage in self.stages)
        width = max(width, 11)
        names = max(len(row.name) for row in self.table)
        caps = max(len(row.cap) for row in self.table)
        head = f"{'':<{names}}  {'bound':<{caps}}  " + "  ".join(
            f"{stage.name:>{width}}" for stage in self.stages
        )
        print(head)
        for index, row in enumerate(self.table):
            print(
                f"{row.name:<{names}}  {row.cap:<{caps}}  "
                + "  ".join(f"{stage.sizes[index]:>{width},}" for stage in self.stages)
            )
        floor = self.stages[0].rss
        print(
            f"{'RSS MiB':<{names}}  {'':<{caps}}  "
            + "  ".join(f"{stage.rss / 2**20:>{width}.1f}" for stage in self.stages)
        )
        print(
            f"{'RSS / floor':<{names}}  {'':<{caps}}  "
            + "  ".join(f"{stage.rss / floor:>{width}.2f}" for stage in self.stages)
        )
        print(
            f"{'allocated blocks':<{names}}  {'':<{caps}}  "
            + "  ".join(f"{stage.blocks:>{width},}" for stage in self.stages)
        )
        for key in self.stages[0].native:
            print(
                f"{key + ' MiB':<{names}}  {'':<{caps}}  "
                + "  ".join(
                    f"{stage.native.get(key, -1) / 2**20:>{width}.1f}" for stage in self.stages
                )
            )


@dataclass
class Counts:
    updates: int = 0
    chats: int = 0
    bets: int = 0
    no_betting: int = 0


async def burst(
    args: argparse.Namespace,
    plan: Plan,
    first: int,
    tracker: Tracker,
    updates: Updates,
    game: GameBot,
    half: Callable[[], object],
) -> Counts:
    """Groups ``first`` .. ``first + chats - 1`` of the run write, ``concurrency`` at once."""
    counts = Counts()
    limit = asyncio.Semaphore(args.concurrency)
    half_way = args.chats // 2

    async def send(chat_id: int, user_id: int, text: str) -> None:
        await tracker.send(updates.message(chat_id, user_id, text))
        counts.updates += 1

    async def group(n: int) -> None:
        chat_id = plan.chat(n)
        creator, a, b = (plan.user(n, which) for which in range(3))
        betting = (n - first) % args.bet_every == 0
        chatty = (n - first) % args.chatty_every == args.chatty_every // 2
        async with limit:
            await send(chat_id, creator, "/open")
            await send(chat_id, a, "/balance")
            await send(chat_id, b, "/rules")
            await send(chat_id, a, "/history")
            await send(chat_id, b, "hello everyone")
            await send(chat_id, b, "/config")
            await send(chat_id, creator, f"/credit {a} 1000")
            if betting:
                await send(chat_id, creator, f"/credit {b} 100")
            if chatty:
                for _ in range(4):
                    await send(chat_id, b, "/balance")
            await send(chat_id, a, "/newround")
            await send(chat_id, a, "/bid 100")
            if betting:
                phase: Phase | None = Phase.BIDDING
                deadline = time.monotonic() + args.window + 30
                await asyncio.sleep(args.window)  # bidding lasts that long at least
                while time.monotonic() < deadline:
                    await asyncio.sleep(PHASE_POLL_SECONDS)
                    phase = await game.service.current_phase(chat_id)
                    if phase is not Phase.BIDDING:
                        break
                if phase is Phase.BETTING:
                    await send(chat_id, b, "/bet 1")
                    counts.bets += 1
                else:
                    counts.no_betting += 1
            await send(chat_id, creator, "/close")
        counts.chats += 1
        if counts.chats == half_way:
            half()

    await asyncio.gather(*(group(n) for n in range(first, first + args.chats)))
    return counts


async def sent_everything(game: GameBot) -> float:
    """Wait until every answer, board and result of the burst went out (at Telegram's
    30 messages a second they take minutes); the seconds waited."""
    started = time.perf_counter()
    while (
        len(game.outbox)
        or game.replies.sizes()["waiting"]
        or game.messenger.rate.backlog_seconds > 0
        or game.board.sizes()["tasks"]
    ):
        await asyncio.sleep(1.0)
    return time.perf_counter() - started


async def main_async(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        if args.database_url:
            url, kind = args.database_url, "given database"
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="niuniu-caches-"))
            url, kind = f"sqlite+aiosqlite:///{Path(folder) / 'caches.db'}", "temporary SQLite"
        await upgrade_async(url)
        database = Database.from_url(url)
        print(
            f"niuniu-bot cache bench: {args.bursts} bursts of {args.chats:,} new groups "
            f"({args.concurrency} at a time), {args.quiet:g} s quiet after each; "
            f"{database.dialect} ({kind}); Python {sys.version.split()[0]}",
            flush=True,
        )
        window = args.window
        config = Config(
            database_url=url,
            telegram_token=TOKEN,
            game=Settings(bid_seconds=window, bet_seconds=window, grab_seconds=window),
            sweep_seconds=1.0,
        )
        plan = Plan()
        stats = TelegramStats()
        assembly = assemble(
            config,
            database=database,
            request=MemoryTelegram(stats, Creators(plan)),
            get_updates_request=MemoryTelegram(stats, Creators(plan)),
            rate_limiter=False,
        )
        application, game = assembly.application, assembly.game
        tracker = Tracker(application)
        updates = Updates()
        report = Report(rows(application, game))
        censuses: list[Counter[str]] = []
        try:
            async with application:
                await application.start()
                try:
                    await game.start(application)
                    report.take("built (floor)")
                    for index in range(args.bursts):
                        label = f"burst {index + 1}"
                        started = time.perf_counter()
                        counts = await burst(
                            args,
                            plan,
                            index * args.chats,
                            tracker,
                            updates,
                            game,
                            partial(report.take, f"{label}: half"),
                        )
                        wall = time.perf_counter() - started
                        print(
                            f"  {label}: {counts.chats:,} groups, {counts.updates:,} updates "
                            f"handled in {wall:.1f} s ({counts.updates / wall:.0f}/s); "
                            f"{counts.bets:,} bets, {counts.no_betting} groups whose round "
                            f"never reached betting",
                            flush=True,
                        )
                        report.take(f"{label}: done")
                        drained = await sent_everything(game)
                        print(f"  {label}: every message sent {drained:.0f} s later", flush=True)
                        await asyncio.sleep(args.quiet)
                        report.take(f"{label}: quiet")
                        if args.census:
                            censuses.append(census())
                finally:
                    game.board.cancel_edits()
                    await application.stop()
        finally:
            await database.dispose()
        calls = ", ".join(f"{name} {count:,}" for name, count in stats.calls.most_common())
        print(f"Telegram calls: {calls}", flush=True)
        print()
        report.print_table()
        stages = report.stages
        quiet = [stage for stage in stages if stage.name.endswith("quiet")]
        for before, after in itertools.pairwise(quiet):
            print(
                f"RSS from {before.name} to {after.name}: "
                f"{(after.rss - before.rss) / 2**20:+.1f} MiB ({after.rss / before.rss:.2f}x); "
                f"allocated blocks {after.blocks - before.blocks:+,}",
                flush=True,
            )
        for before_census, after_census in itertools.pairwise(censuses):
            print_growth(before_census, after_census, args.census)
    return 0


def census() -> Counter[str]:
    """Live objects tracked by the garbage collector, counted by type (after a collection)."""
    gc.collect()
    return Counter(f"{type(obj).__module__}.{type(obj).__qualname__}" for obj in gc.get_objects())


def print_growth(before: Counter[str], after: Counter[str], top: int) -> None:
    """The ``top`` types whose live objects grew most between two quiet stages."""
    print(f"\nLive objects that grew most from one quiet stage to the next (top {top}):")
    growth = Counter(after)
    growth.subtract(before)
    for name, count in growth.most_common(top):
        print(f"  {count:+,} {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=10_000, help="new groups per burst")
    parser.add_argument("--bursts", type=int, default=2)
    parser.add_argument("--quiet", type=float, default=250.0, help="seconds after each burst")
    parser.add_argument("--concurrency", type=int, default=200, help="groups at a time")
    parser.add_argument("--window", type=int, default=5, help="bid, bet and grab seconds")
    parser.add_argument("--bet-every", type=int, default=10)
    parser.add_argument("--chatty-every", type=int, default=10)
    parser.add_argument("--database-url", default="", help="default: a temporary SQLite file")
    parser.add_argument(
        "--census",
        type=int,
        default=0,
        help="print the N types whose live objects grew most between quiet stages",
    )
    args = parser.parse_args(argv)
    if min(args.chats, args.bursts, args.concurrency, args.window) < 1:
        parser.error("--chats, --bursts, --concurrency and --window must be at least 1")
    if min(args.bet_every, args.chatty_every) < 1:
        parser.error("--bet-every and --chatty-every must be at least 1")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
