"""Real-groups bench: the bot process, the fake Telegram process, many groups in real windows.

    python bench/bench_real_groups.py [--groups 200] [--players 10] [--rounds 3]
                                      [--start-within SECONDS] [--round-trip-ms MS]
                                      [--profile]
                                      [--postgres] [--postgres-url URL] [--pictures off]

The fake Telegram runs as its own process (``python -m bot.fakegram --port 0``) and the
bot as another (``python -m bot run --config …``, as ``tests/e2e/harness.py`` starts it),
so neither shares a CPU budget with this driver. The database (a temporary SQLite file,
or with ``--postgres`` a database created on ``--postgres-url`` and dropped afterwards)
is migrated and every table opened and credited here through ``GameService`` first.

Each group (started evenly over one round's length, or with ``--start-within 2`` all
within 2 s: every group's deadlines then fall together) plays ``--rounds`` rounds with
windows of bid 6 s, bet 10 s, grab 6 s, pause 2 s: its admin (an operator) posts
``/newround`` (the later rounds start by themselves after the pause), the dealer
``/bid 100``, each player ``/bet 10`` at a uniformly random moment of the betting window,
and in the grabbing window the dealer and every player but one press the Grab button on
the round's board message (the chat's newest bot message while the grabbing board is not
out yet; so every round ends at its grab deadline, the last share grabbed automatically).
The driver follows each round's phase and deadline in the database (polled), not the
boards: the load is the designed one however late the group sees the boards (which is
measured, below). The fake answers 429 past 20 messages a
minute in a group, as Telegram does. After the play the bench waits until the bot has
sent nothing for 6 s (at most 120 s), then stops it (SIGTERM).

It prints:

1. a bet "recorded": the bet row's ``placed_at_ms`` (the bot's wall clock when it applied
   the bet, inside the transaction, so its commit is not included) minus the wall time
   just before the driver posted the ``/bet`` update; median, p99, max; and bets posted
   but not in the database;
2. requests to Telegram that failed: the fake's call log (non-ok answers, by code and the
   start of their description; it does not record durations) and the bot's log (lines
   naming ``TimedOut``/``NetworkError``, and every WARNING/ERROR);
3. how late the group sees each deadline: the fake's transcript time of the board that
   shows a round's bidding / betting / grabbing (the first message or edit with that
   phase's buttons) and of the results message (the one revealing the round's seed)
   minus the deadline of the phase it ends (``deadline_ms``, read from the database when
   the driver saw that phase open; a round's start, ``started_at_ms``, for bidding).
   Beside it the floor: an ideal scheduler that sends one message per deadline (the
   same deadlines) at 30 a second, the due results first, then the due boards, each in
   deadline order; the p99 of (seen - deadline) of results and of the betting and
   grabbing boards, the floor's p99 for the same deadlines, and their difference
   (targets: results within floor + 250 ms, phases within floor + 500 ms). Then a
   button's toast: the fake's time of the ``answerCallbackQuery`` for each Grab press
   minus the wall time just before the driver posted the press (target p99 300 ms),
   split at the fake's answer to the ``getUpdates`` that carried the press: how long the
   press waited to be fetched, and how long the bot took from there to its toast; the
   toast from the moment the press's request went out (the driver's own wait for one of
   its connections to the fake left out, and that wait); and the toast from the moment
   the fake queued the press (as Telegram's servers would measure it: the wait of a
   burst's posts for the fake's one event loop left out). Beside them the toasts' floor,
   after the bot stopped: the run's presses posted again at the same moments (in the
   same bursts), answered by a bare poller the moment ``getUpdates`` brings each (what
   the driver, the fake and the round trips cost a toast on this machine), measured the
   three ways, and the difference of the p99s;
4. the bot process's CPU (``/proc/<pid>/stat``) over the play, its main thread's (the
   event loop) apart from its other threads' (SQLite's connections: PostgreSQL's work is
   in its own server), per bet recorded and per player action (the bids, bets and
   presses the driver made; it includes everything else the bot did: boards, results,
   sends; target 2 ms) and its ratio to the floor of an action measured after the play
   on the same machine (``bench/action_floor.py``: an update decoded, a row committed, a
   Bot API call on a bare stream), how long its threads waited for a CPU while ready to
   run (``schedstat``: the shared machine's load), and the fake's CPU. With
   ``--profile`` the bot runs under cProfile timed by its CPU clock, and its 25 functions
   of most cumulative and most own time are printed (the CPU figures then include the
   profiler's cost);
5. the floor: the driver's own round trip posting each ``/bet`` to the fake (the update
   exists once it is answered), measured during the run, and the same number of posts
   at the same rate after the bot stopped (the fake with nothing behind it); the ratios
   of the recorded median and p99 to them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import heapq
import io
import json
import math
import os
import pstats
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from sqlalchemy import select
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from action_floor import action_floor
from bench_store import DEFAULT_POSTGRES_URL

from bot.engine.round import MINT, Posting, available
from bot.engine.settings import Settings
from bot.fakegram.client import FakeTelegramClient
from bot.service.game import GameService, Person, wall_clock_ms
from bot.store import ledger
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.store.models import BetRow, RoundRow

_T = TypeVar("_T")
REPO_ROOT = Path(__file__).resolve().parents[1]
TOKEN = "123456:REAL-BENCH"
BID_S, BET_S, GRAB_S, PAUSE_S = 6, 10, 6, 2
ROUND_S = BID_S + BET_S + GRAB_S + PAUSE_S
GAME = {
    "bid_seconds": BID_S,
    "bet_seconds": BET_S,
    "grab_seconds": GRAB_S,
    "pause_seconds": PAUSE_S,
    "min_bid": "100",
    "bid_increment": "10",
    "min_bet": "1",
    "max_bet": "1000",
}
ADMIN_ID = 1
CREDIT_CENTS = 10_000_000
#: The last bet is posted this long before the betting deadline, so it lands in the window.
BET_MARGIN_S = 1.0
#: How often the driver reads the rounds (one query for all of them).
POLL_S = 0.25
SENDS = frozenset(
    {
        "sendMessage",
        "sendPhoto",
        "sendAnimation",
        "editMessageText",
        "editMessageReplyMarkup",
        "deleteMessage",
    }
)
TICK = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] if ordered else math.nan


def stats(values: list[float]) -> str:
    if not values:
        return "n=0"
    return (
        f"n={len(values)} median {statistics.median(values):8.1f} ms  "
        f"p99 {percentile(values, 99):8.1f} ms  max {max(values):8.1f} ms"
    )


def cpu_seconds(pid: int, *, thread: int | None = None) -> float:
    """utime + stime of a process, from /proc/<pid>/stat (of one of its threads, from
    /proc/<pid>/task/<thread>/stat: the main thread's id is the process's)."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cpu_wait_seconds(pid: int) -> float:
    """How long the process's threads were ready to run but waited for a CPU (the
    scheduler's run-queue wait, ``/proc/<pid>/task/*/schedstat``): what a shared machine
    took from it."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


def chat_of(group: int) -> int:
    return -(1_000_000_000_000 + group)


def person(group: int, index: int) -> dict[str, Any]:
    """Index 0 is the group's dealer, 1.. its players."""
    return {"id": 1_000_000 + group * 100 + index, "first_name": f"G{group}P{index}"}


ADMIN = {"id": ADMIN_ID, "first_name": "Admin"}


def write_config(path: Path) -> None:
    lines = ["[game]"]
    for key, value in GAME.items():
        lines.append(f"{key} = {value!r}" if isinstance(value, int) else f'{key} = "{value}"')
    lines += ["", "[bot]", 'log_level = "INFO"', "", "[telegram]", f"operators = [{ADMIN_ID}]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- what the driver saw -------------------------------------------------------------------


@dataclass
class RoundSeen:
    group: int
    round_id: int
    #: Deadline (wall ms) of the phase each entry ends: "betting" opens at the bidding
    #: deadline, "grabbing" at the betting one, "results" at the grabbing one.
    deadlines: dict[str, int] = field(default_factory=dict)
    #: (user id, wall time in s just before the post, post round trip in s)
    bets: list[tuple[int, float, float]] = field(default_factory=list)
    #: Bids posted (the dealer's ``/bid``).
    bids: int = 0
    #: Grab presses: (callback query id, wall time in s just before the press was posted,
    #: the update's id, wall time in s its request went out: ``press_timed``).
    presses: list[tuple[str, float, int, float]] = field(default_factory=list)


@dataclass
class Run:
    rounds: list[RoundSeen] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    #: Every Grab press as posted, for the toasts' floor to post again at the same moments:
    #: (wall time in s just before the post, chat, board message, presser, button data).
    pressed: list[tuple[float, int, int, dict[str, Any], str]] = field(default_factory=list)


#: Where the press being posted in this task keeps the moment its request went out.
_ON_THE_WIRE: ContextVar[list[float] | None] = ContextVar("on_the_wire", default=None)


def wire_tracing() -> aiohttp.TraceConfig:
    """aiohttp's tracing that keeps the moment each request's headers went out, in the
    holder of the press that the posting task is making (``press_timed``)."""

    async def sent(*_: object) -> None:
        holder = _ON_THE_WIRE.get()
        if holder is not None and not holder:
            holder.append(time.time())

    tracing = aiohttp.TraceConfig()
    tracing.on_request_headers_sent.append(sent)
    return tracing


async def press_timed(
    fake: FakeTelegramClient, chat: int, board: int, who: dict[str, Any], data: str
) -> tuple[dict[str, Any], float, float]:
    """Post a Grab press: its update, the wall time just before the post, and the moment
    its request went out. Between the two the press waits for one of the driver's
    connections to the fake (aiohttp's 100): in a burst, hundreds of people's presses
    queue in this one process, as no person's phone would."""
    holder: list[float] = []
    token = _ON_THE_WIRE.set(holder)
    try:
        before = time.time()
        update = await fake.press_button(chat, board, who, data)
    finally:
        _ON_THE_WIRE.reset(token)
    return update, before, holder[0] if holder else before


class Driver:
    """Plays every group's rounds by the database's clock: what a group would do if it
    saw each phase open at its moment (how late it really sees it is measured apart)."""

    def __init__(
        self, fake: FakeTelegramClient, db: Database, args: argparse.Namespace, run: Run
    ) -> None:
        self.fake, self.db, self.args, self.run = fake, db, args, run
        #: Every round as last read: id -> (chat, phase, deadline_ms, high bidder, board).
        self.rounds: dict[int, tuple[int, str, int, int | None, int | None]] = {}
        self.refreshed = asyncio.Condition()
        self.done = False

    async def watch(self) -> None:
        """Read every round in one query each ``POLL_S`` (the bench's database is its own),
        so that the groups' waits cost the database one read, not one each."""
        while not self.done:
            async with self.db.transaction() as session:
                rows = (
                    await session.execute(
                        select(
                            RoundRow.id,
                            RoundRow.chat_id,
                            RoundRow.phase,
                            RoundRow.deadline_ms,
                            RoundRow.high_bidder,
                            RoundRow.board_message_id,
                        )
                    )
                ).all()
            self.rounds = {r[0]: (r[1], str(r[2]), int(r[3]), r[4], r[5]) for r in rows}
            async with self.refreshed:
                self.refreshed.notify_all()
            await asyncio.sleep(POLL_S)

    async def until(self, check: Callable[[], _T | None], timeout: float) -> _T | None:
        """``check()``'s first value other than None, re-checked on every read; None at
        timeout."""
        end = time.monotonic() + timeout
        while (found := check()) is None:
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            async with self.refreshed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.refreshed.wait(), remaining)
        return found

    async def newest_round(self, chat: int, after: int, timeout: float) -> int | None:
        """The id of a round of the chat newer than ``after`` once there is one."""

        def check() -> int | None:
            ids = [rid for rid, row in self.rounds.items() if row[0] == chat and rid > after]
            return max(ids) if ids else None

        return await self.until(check, timeout)

    async def round_when(
        self,
        round_id: int,
        ready: Callable[[tuple[str, int, int | None, int | None]], bool],
        timeout: float,
    ) -> tuple[str, int, int | None, int | None]:
        """(phase, deadline_ms, high bidder, board) of the round once ``ready`` says so (or
        as last read at timeout)."""

        def check() -> tuple[str, int, int | None, int | None] | None:
            row = self.rounds.get(round_id)
            return row[1:] if row is not None and ready(row[1:]) else None

        found = await self.until(check, timeout)
        return found if found is not None else self.rounds[round_id][1:]

    async def sleep_until(self, wall_ms: int) -> None:
        await asyncio.sleep(max(0.0, wall_ms / 1000 - time.time()))

    async def bet(self, chat: int, who: dict[str, Any], at: float, seen: RoundSeen) -> None:
        await asyncio.sleep(max(0.0, at - time.time()))
        before = time.time()
        await self.fake.post_message(chat, who, "/bet 10", chat_title=f"Bench {chat}")
        seen.bets.append((who["id"], before, time.time() - before))

    async def press(
        self, chat: int, board: int, who: dict[str, Any], data: str, seen: RoundSeen
    ) -> None:
        try:
            update, before, sent = await press_timed(self.fake, chat, board, who, data)
        except ValueError:
            self.run.failures["grab: board message gone"] += 1
            return
        query = str(update["callback_query"]["id"])
        seen.presses.append((query, before, update["update_id"], sent))
        self.run.pressed.append((before, chat, board, who, data))

    async def group(self, group: int, start_at: float) -> None:
        chat = chat_of(group)
        dealer = person(group, 0)
        players = [person(group, i) for i in range(1, 1 + self.args.players)]
        await asyncio.sleep(max(0.0, start_at - time.time()))
        await self.fake.post_message(chat, ADMIN, "/newround", chat_title=f"Bench {chat}")
        last = 0
        for _ in range(self.args.rounds):
            found = await self.newest_round(chat, last, timeout=PAUSE_S + 30)
            if found is None:
                self.run.failures["no new round"] += 1
                return
            rid = last = found
            seen = RoundSeen(group, rid)
            self.run.rounds.append(seen)
            await self.fake.post_message(chat, dealer, "/bid 100", chat_title=f"Bench {chat}")
            seen.bids += 1
            phase, deadline, bidder, _ = await self.round_when(
                rid, lambda r: r[2] == dealer["id"] or r[0] != "bidding", BID_S + 10
            )
            if bidder != dealer["id"]:
                self.run.failures["bid not recorded in time"] += 1
                continue
            seen.deadlines["betting"] = deadline
            await self.sleep_until(deadline)
            phase, deadline, _, _ = await self.round_when(rid, lambda r: r[0] != "bidding", 30)
            if phase != "betting":
                self.run.failures[f"bidding ended in {phase}"] += 1
                continue
            seen.deadlines["grabbing"] = deadline
            now, last_bet = time.time(), deadline / 1000 - BET_MARGIN_S
            await asyncio.gather(
                *(
                    self.bet(chat, who, random.uniform(now, max(now, last_bet)), seen)
                    for who in players
                )
            )
            await self.sleep_until(deadline)
            phase, deadline, _, board = await self.round_when(rid, lambda r: r[0] != "betting", 30)
            if phase != "grabbing":
                self.run.failures[f"betting ended in {phase}"] += 1
                continue
            if board is None:
                # The round's grabbing board is not out yet: press on the chat's newest bot
                # message (the fake does not check the keyboard, nor does the bot the
                # message: a press that raced an edit, as with real clients).
                self.run.failures["grab pressed before the grabbing board was out"] += 1
                board = max(await self.fake.messages(chat), default=None)
                if board is None:
                    continue
            seen.deadlines["results"] = deadline
            # The Grab button of the round's board (the fake does not check the keyboard:
            # the board the group sees may not have been sent yet).
            data = f"{rid}:grab:0"
            await asyncio.gather(
                *(self.press(chat, board, who, data, seen) for who in [dealer, *players[:-1]])
            )
            # The next round starts after the pause (at once after a re-deal).
            await self.sleep_until(deadline)


# -- processes -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def fake_process(
    log: Path, round_trip_ms: float = 0.0
) -> AsyncIterator[tuple[subprocess.Popen[bytes], str]]:
    """``python -m bot.fakegram --port 0``, answering the bot ``round_trip_ms`` late;
    yields it and its Bot API base URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.fakegram",
            "--port",
            "0",
            "--token",
            TOKEN,
            "--group-message-limit-per-minute",
            "20",
            "--round-trip-ms",
            str(round_trip_ms),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 30)
        yield process, line.decode().strip()
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(process.wait)


#: ``python -m bot`` under cProfile timed by the process's CPU clock: the time the bot
#: waits for its event loop's next event (most of its wall time) is not counted.
PROFILED = """
import cProfile, runpy, sys, time
sys.argv[0] = "bot"
profile = cProfile.Profile(time.process_time)
profile.enable()
try:
    runpy.run_module("bot", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profile.disable()
    profile.dump_stats({out!r})
"""


def start_bot(
    config: Path, base_url: str, database_url: str, log: Path, profile: Path | None = None
) -> subprocess.Popen[bytes]:
    """``python -m bot run``; under cProfile writing to ``profile`` if given (its stats are
    written when the bot returns from its SIGTERM shutdown)."""
    profiler = [] if profile is None else ["-c", PROFILED.format(out=str(profile))]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIUNIU_")}
    env.update(
        NIUNIU_TELEGRAM_TOKEN=TOKEN,
        NIUNIU_TELEGRAM_BASE_URL=base_url,
        NIUNIU_DATABASE_URL=database_url,
        PYTHONUNBUFFERED="1",
    )
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, *(profiler or ["-m", "bot"]), "run", "--config", str(config)],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )


async def drain(fake: FakeTelegramClient, quiet: float = 6.0, limit: float = 120.0) -> float:
    """Wait until the bot sent nothing for ``quiet`` seconds (its outbox is empty), at most
    ``limit``; how long it kept sending."""
    start = last_change = time.monotonic()
    count = -1
    while time.monotonic() - last_change < quiet and time.monotonic() - start < limit:
        now = sum(1 for c in await fake.calls() if c["method"] in SENDS)
        if now != count:
            count, last_change = now, time.monotonic()
        await asyncio.sleep(1.0)
    return last_change - start


async def setup_tables(db: Database, args: argparse.Namespace) -> None:
    """Open every table and credit its dealer and players (as bench_bot.py does)."""
    # The tables are bound to the bot that serves them (its id leads its token).
    service = GameService(db, Settings(), bot_id=int(TOKEN.split(":")[0]))
    admin = Person(ADMIN_ID, "Admin")

    async def one(group: int) -> None:
        chat = chat_of(group)
        await service.set_open(chat, admin, True)
        if args.pictures != "on":
            await service.change_setting(chat, admin, "pictures", args.pictures)
        users = [person(group, i)["id"] for i in range(args.players + 1)]
        async with db.transaction() as session:
            await ledger.Ledger(session).post(
                chat_id=chat,
                kind="credit",
                postings=[Posting(MINT, -CREDIT_CENTS * len(users))]
                + [Posting(available(uid), CREDIT_CENTS) for uid in users],
                now_ms=wall_clock_ms(),
                actor_id=ADMIN_ID,
                memo="bench credit",
            )

    for start in range(0, args.groups, 20):
        await asyncio.gather(*(one(g) for g in range(start, min(args.groups, start + 20))))


def start_offset(args: argparse.Namespace, group: int) -> float:
    """When the group starts, in seconds after the first: spread evenly over
    ``--start-within`` seconds, or by default over one round's length."""
    spread = float(args.start_within if args.start_within is not None else ROUND_S)
    return spread * group / int(args.groups)


async def floor_posts(fake: FakeTelegramClient, args: argparse.Namespace) -> list[float]:
    """The same number of ``/bet`` posts, at the same rate (each group's players over one
    betting window, the groups started as in the run), with no bot behind the fake."""
    span = ROUND_S
    base = time.time() + 0.5
    times: list[float] = []

    async def post(group: int, index: int, at: float) -> None:
        await asyncio.sleep(max(0.0, at - time.time()))
        before = time.time()
        await fake.post_message(chat_of(group), person(group, index), "/bet 10")
        times.append((time.time() - before) * 1000)

    tasks = []
    for group in range(args.groups):
        opens = base + start_offset(args, group)
        for r in range(args.rounds):
            window = opens + r * span
            for index in range(1, args.players + 1):
                at = random.uniform(window, window + BET_S - BET_MARGIN_S)
                tasks.append(post(group, index, at))
    await asyncio.gather(*tasks)
    return times


async def floor_toasts(
    fake: FakeTelegramClient, base_url: str, pressed: list[tuple[float, int, int, Any, str]]
) -> list[tuple[float, float, float]]:
    """The toasts' floor: the run's Grab presses posted again at the same moments from
    its first one on (so in the same bursts), with no bot behind the fake but a bare poller
    that answers each press the moment ``getUpdates`` brings it; ms from each post to the
    fake's time of its answer, from the moment its request went out, and from the fake's
    queueing of the press. What the driver, the fake and one round trip cost a toast on
    this machine at these moments, as the run's toasts are measured."""
    if not pressed:
        return []
    posted: dict[str, tuple[float, float]] = {}
    done = asyncio.Event()

    async def press(at: float, chat: int, board: int, who: Any, data: str) -> None:
        await asyncio.sleep(max(0.0, at - time.time()))
        with contextlib.suppress(ValueError):  # the board was deleted since: not pressed
            update, before, sent = await press_timed(fake, chat, board, who, data)
            posted[str(update["callback_query"]["id"])] = (before, sent)

    async def poller(session: aiohttp.ClientSession) -> None:
        offset: int | None = None
        answering: set[asyncio.Task[Any]] = set()
        while not done.is_set():
            params: dict[str, Any] = {"timeout": 1, "allowed_updates": ["callback_query"]}
            if offset is not None:
                params["offset"] = offset
            async with session.post(f"{base_url}{TOKEN}/getUpdates", json=params) as answer:
                updates = (await answer.json())["result"]
            for update in updates:
                offset = update["update_id"] + 1
                query = update.get("callback_query")
                if query is not None:
                    body = {"callback_query_id": query["id"]}
                    call = session.post(f"{base_url}{TOKEN}/answerCallbackQuery", json=body)
                    task = asyncio.create_task(_closed(call))
                    answering.add(task)
                    task.add_done_callback(answering.discard)
        await asyncio.gather(*answering)

    first = min(at for at, *_ in pressed)
    shift = time.time() + 2.0 - first  # the poller first fetches what the bot left queued
    async with aiohttp.ClientSession() as session:
        polling = asyncio.create_task(poller(session))
        await asyncio.gather(*(press(at + shift, *rest) for at, *rest in pressed))
        await asyncio.sleep(1.0)
        done.set()
        await polling
    answered = {a["callback_query_id"]: a for a in await fake.callback_answers()}
    return [
        (
            (answered[q]["time"] - before) * 1000,
            (answered[q]["time"] - sent) * 1000,
            (answered[q]["time"] - answered[q]["pressed_at"]) * 1000,
        )
        for q, (before, sent) in posted.items()
        if q in answered
    ]


async def _closed(call: Any) -> None:
    """Make the request ``call`` and read its answer whole."""
    async with call as answer:
        await answer.read()


# -- the run --------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, database_url: str, work: Path) -> None:
    print(f"database: {make_url(database_url).get_backend_name()}  load before: {os.getloadavg()}")
    if args.round_trip_ms:
        print(f"the bot is {args.round_trip_ms:.0f} ms (a round trip) from the fake Telegram")
    await upgrade_async(database_url)
    db = Database.from_url(database_url)
    config = work / "niuniu.toml"
    write_config(config)
    bot_log = work / "bot.log"
    try:
        t0 = time.monotonic()
        await setup_tables(db, args)
        print(f"setup: {args.groups} tables opened and credited in {time.monotonic() - t0:.1f} s")
        async with fake_process(work / "fake.log", args.round_trip_ms) as (fake_proc, base_url):
            root = base_url.rsplit("/bot", 1)[0]
            async with FakeTelegramClient(root, trace_configs=[wire_tracing()]) as fake:
                profile = work / "bot.prof" if args.profile else None
                bot = start_bot(config, base_url, database_url, bot_log, profile)
                try:
                    end = time.monotonic() + 60
                    while not any(c["method"] == "getUpdates" for c in await fake.calls()):
                        if bot.poll() is not None or time.monotonic() > end:
                            raise SystemExit(
                                f"the bot did not start:\n{bot_log.read_text()[-3000:]}"
                            )
                        await asyncio.sleep(0.2)
                    run = Run()
                    driver = Driver(fake, db, args, run)
                    start = time.time() + 1.0
                    bot_wait0 = cpu_wait_seconds(bot.pid)
                    bot_main0 = cpu_seconds(bot.pid, thread=bot.pid)
                    bot_cpu0, fake_cpu0, own_cpu0 = (
                        cpu_seconds(bot.pid),
                        cpu_seconds(fake_proc.pid),
                        time.process_time(),
                    )
                    wall0 = time.monotonic()
                    watcher = asyncio.create_task(driver.watch())
                    await asyncio.gather(
                        *(
                            driver.group(g, start + start_offset(args, g))
                            for g in range(args.groups)
                        )
                    )
                    driver.done = True
                    await watcher
                    wall = time.monotonic() - wall0
                    bot_cpu = cpu_seconds(bot.pid) - bot_cpu0
                    bot_main = cpu_seconds(bot.pid, thread=bot.pid) - bot_main0
                    bot_wait = cpu_wait_seconds(bot.pid) - bot_wait0
                    fake_cpu = cpu_seconds(fake_proc.pid) - fake_cpu0
                    own_cpu = time.process_time() - own_cpu0
                    load = os.getloadavg()
                    play_end = time.time()
                    drained = await drain(fake)
                    after = Counter(
                        c["method"]
                        for c in await fake.calls()
                        if c["method"] in SENDS and c["time"] > play_end
                    )
                    print(
                        f"after the play, the bot sent for {drained:.1f} s more: "
                        f"{dict(after) or 'nothing'}"
                    )
                finally:
                    bot.send_signal(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(asyncio.to_thread(bot.wait), 30)
                    except TimeoutError:
                        bot.kill()
                calls = await fake.calls()
                toasts = await fake.callback_answers()
                transcripts = {g: await fake.transcript(chat_of(g)) for g in range(args.groups)}
                floor = await floor_posts(fake, args)
                toast_floor = await floor_toasts(fake, base_url, run.pressed)
                plain_url = None if database_url.startswith("sqlite") else database_url
                cpu_floor = await action_floor(base_url, TOKEN, plain_url, work)
        if args.profile:
            print_profile(work / "bot.prof")
        await report(
            args,
            db,
            run,
            calls,
            toasts,
            transcripts,
            bot_log,
            floor,
            toast_floor,
            wall,
            (bot_cpu, bot_main, bot_wait),
            cpu_floor,
            fake_cpu,
            own_cpu,
            load,
        )
    finally:
        await db.dispose()


RESULTS, PHASE = 0, 1


def ideal_seen(deadlines: list[tuple[float, int]], per_second: float = 30.0) -> list[float]:
    """The floor: when a group could see each deadline at the earliest, each deadline
    (ms, ``RESULTS`` or ``PHASE``) needing one message, sent by a scheduler that sends one
    at a time at ``per_second``, the due results first, then the due phase boards, each
    kind in deadline order. The moments are in the order of ``deadlines``."""
    interval = 1000.0 / per_second
    order = sorted(range(len(deadlines)), key=lambda i: deadlines[i][0])
    seen = [math.nan] * len(deadlines)
    due: list[tuple[int, float, int]] = []
    free = -math.inf
    arrived = 0
    while arrived < len(order) or due:
        if not due:
            free = max(free, deadlines[order[arrived]][0])
        while arrived < len(order) and deadlines[order[arrived]][0] <= free:
            at, kind = deadlines[order[arrived]]
            heapq.heappush(due, (kind, at, order[arrived]))
            arrived += 1
        _, _, index = heapq.heappop(due)
        seen[index] = free
        free += interval
    return seen


def print_profile(path: Path, top: int = 25) -> None:
    """The bot's cProfile, its ``top`` functions by cumulative and by own time."""
    if not path.exists():
        print(f"no profile written at {path} (the bot did not stop cleanly)")
        return
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(str(path), stream=out).strip_dirs().sort_stats(order).print_stats(top)
        text = out.getvalue()
        print(f"\n-- the bot's profile, top {top} by {order} --")
        print(text[text.find("   ncalls") :].rstrip())


def has_button(entry: dict[str, Any], prefix: str) -> bool:
    """Whether a transcript entry shows a button whose callback data starts with ``prefix``."""
    rows = (entry.get("reply_markup") or {}).get("inline_keyboard", [])
    return any(str(b.get("callback_data", "")).startswith(prefix) for row in rows for b in row)


async def report(
    args: argparse.Namespace,
    db: Database,
    run: Run,
    calls: list[dict[str, Any]],
    toasts: list[dict[str, Any]],
    transcripts: dict[int, list[dict[str, Any]]],
    bot_log: Path,
    floor: list[float],
    toast_floor: list[tuple[float, float, float]],
    wall: float,
    bot_cpu_wait: tuple[float, float, float],
    cpu_floor: float,
    fake_cpu: float,
    own_cpu: float,
    load: tuple[float, float, float],
) -> None:
    ids = [seen.round_id for seen in run.rounds]
    async with db.transaction() as session:
        rows = (
            await session.execute(
                select(BetRow.round_id, BetRow.user_id, BetRow.placed_at_ms).where(
                    BetRow.round_id.in_(ids)
                )
            )
        ).all()
        round_rows = (
            await session.execute(
                select(
                    RoundRow.id, RoundRow.seed, RoundRow.ended_at_ms, RoundRow.started_at_ms
                ).where(RoundRow.id.in_(ids))
            )
        ).all()
    seeds = {row.id: row.seed for row in round_rows}
    ended_at = {row.id: row.ended_at_ms for row in round_rows}
    started_at = {row.id: row.started_at_ms for row in round_rows}
    placed = {(r[0], r[1]): r[2] for r in rows}
    recorded, trips, missing = [], [], 0
    for seen in run.rounds:
        for uid, before, trip in seen.bets:
            trips.append(trip * 1000)
            at = placed.get((seen.round_id, uid))
            if at is None:
                missing += 1
            else:
                recorded.append(at - before * 1000)

    late: dict[str, list[float]] = {"bidding": [], "betting": [], "grabbing": [], "results": []}
    unseen: Counter[str] = Counter()
    by_edit: Counter[str] = Counter()
    settled_late: list[float] = []
    #: Every deadline the run saw, (ms, RESULTS/PHASE, phase, when the group saw it or None).
    deadlines: list[tuple[float, int, str, float | None]] = []
    for seen in run.rounds:
        shown = [e for e in transcripts[seen.group] if e["kind"] in ("send", "edit")]
        rid, seed = seen.round_id, seeds.get(seen.round_id, b"").hex()
        hits = {
            "bidding": next((e for e in shown if has_button(e, f"{rid}:bid:")), None),
            "betting": next((e for e in shown if has_button(e, f"{rid}:bet:")), None),
            "grabbing": next((e for e in shown if has_button(e, f"{rid}:grab:")), None),
            "results": next((e for e in shown if seed and seed in (e.get("text") or "")), None),
        }
        due = dict(seen.deadlines)
        if started_at.get(rid) is not None:
            due["bidding"] = started_at[rid]  # the round's first board is due as it starts
        for phase, hit in hits.items():
            if phase not in due:
                continue
            kind = RESULTS if phase == "results" else PHASE
            if hit is None:
                unseen[phase] += 1
                deadlines.append((due[phase], kind, phase, None))
            else:
                late[phase].append(hit["time"] * 1000 - due[phase])
                by_edit[phase] += hit["kind"] == "edit"
                deadlines.append((due[phase], kind, phase, hit["time"] * 1000))
        ended = ended_at.get(rid)
        if ended is not None and "results" in seen.deadlines:
            settled_late.append(ended - seen.deadlines["results"])

    log = bot_log.read_text(encoding="utf-8", errors="replace").splitlines()
    timed_out = [line for line in log if "TimedOut" in line or "Timed out" in line]
    network = [line for line in log if "NetworkError" in line]
    levels = Counter(
        level for line in log for level in ("WARNING", "ERROR", "CRITICAL") if f" {level} " in line
    )
    methods = Counter(c["method"] for c in calls)
    failed = Counter(
        f"{c['method']} {c.get('error_code')} ({str(c.get('description'))[:48]})"
        for c in calls
        if not c.get("ok")
    )

    posted = sum(len(seen.bets) for seen in run.rounds)
    print(
        f"\n{args.groups} groups x {args.players} players x {args.rounds} rounds: "
        f"{len(run.rounds)} rounds seen, {posted} bets posted, {len(recorded)} recorded, "
        f"{missing} not in the database; driver failures: {dict(run.failures) or 'none'}"
    )
    print(f"play: {wall:.1f} s wall, load average at the end {load}")
    print(f"(1) bet recorded (placed_at_ms - post time)  {stats(recorded)}")
    print(f"    the /bet post's round trip (same run)    {stats(trips)}")
    print(f"(2) Bot API calls: {sum(methods.values())} ({dict(methods.most_common(8))})")
    print(f"    non-ok answers: {dict(failed) or 'none'}")
    print(
        f"    bot log: {len(timed_out)} TimedOut lines, {len(network)} NetworkError lines, "
        f"levels {dict(levels) or 'none'}"
    )
    for line in [*timed_out, *network][:3]:
        print(f"      {line[:200]}")
    for phase, values in late.items():
        print(
            f"(3) {phase:<8} seen after the deadline  {stats(values)}  unseen {unseen[phase]}, "
            f"shown by an edit {by_edit[phase]}"
        )
    print(f"    of which the round settled (ended_at_ms) {stats(settled_late)}")
    # A message the ideal scheduler sends reaches Telegram half a round trip later.
    floor_at = [
        at + args.round_trip_ms / 2
        for at in ideal_seen([(at, kind) for at, kind, _, _ in deadlines])
    ]
    print(
        f"    the floor: {len(deadlines)} deadlines, each one message sent by an ideal "
        "scheduler at 30/s, results first (the same deadlines)"
    )
    for label, phases, target in (
        ("results", ("results",), 250.0),
        ("phases", ("betting", "grabbing"), 500.0),
    ):
        compared = [(d, f) for d, f in zip(deadlines, floor_at, strict=True) if d[2] in phases]
        seen_late = [d[3] - d[0] for d, _ in compared if d[3] is not None]
        floor_late = [f - d[0] for d, f in compared]
        if not seen_late:
            continue
        p99, floor_p99 = percentile(seen_late, 99), percentile(floor_late, 99)
        met = p99 - floor_p99 <= target and len(seen_late) == len(compared)
        verdict = "met" if met else "MISSED"
        print(
            f"    {label:<8} p99 seen {p99:7.0f} ms, floor p99 {floor_p99:7.0f} ms, "
            f"difference {p99 - floor_p99:+7.0f} ms (target <= +{target:.0f} ms: {verdict}; "
            f"unseen {len(compared) - len(seen_late)})"
        )
    answered = {t["callback_query_id"]: t["time"] for t in toasts}
    pressed = [press for seen in run.rounds for press in seen.presses]
    pressed_ids = {q for q, *_ in pressed}
    toast_ms = [(answered[q] - at) * 1000 for q, at, *_ in pressed if q in answered]
    print(
        f"    toast (press posted -> answerCallbackQuery) {stats(toast_ms)}, "
        f"unanswered {len(pressed) - len(toast_ms)} (target p99 <= 300 ms)"
    )
    wired = [(answered[q] - sent) * 1000 for q, _, _, sent in pressed if q in answered]
    print(f"      from its request going out to the fake    {stats(wired)}")
    print(
        "        (before it, the press waited for one of the driver's connections "
        f"{stats([(sent - at) * 1000 for _, at, _, sent in pressed])})"
    )
    fetched: dict[int, float] = {}
    for call in calls:
        for update_id in call.get("update_ids", ()):
            fetched.setdefault(update_id, call["time"])
    split = [
        (fetched[u] - at, answered[q] - fetched[u])
        for q, at, u, _ in pressed
        if u in fetched and q in answered
    ]
    print(f"      of which: posted -> fetched by getUpdates {stats([w * 1000 for w, _ in split])}")
    print(f"                fetched -> answered           {stats([b * 1000 for _, b in split])}")
    queued = [
        (t["time"] - t["pressed_at"]) * 1000
        for t in toasts
        if t["callback_query_id"] in pressed_ids
    ]
    print(f"      from the fake's queueing of the press     {stats(queued)}")
    posted_floor = [from_post for from_post, _, _ in toast_floor]
    wired_floor = [from_wire for _, from_wire, _ in toast_floor]
    queued_floor = [from_queued for _, _, from_queued in toast_floor]
    print(f"      the floor: the presses again, a bare poller answering {stats(posted_floor)}")
    print(f"                 from its request going out to the fake   {stats(wired_floor)}")
    print(f"                 from the fake's queueing of the press    {stats(queued_floor)}")
    if toast_ms and toast_floor:
        difference = percentile(toast_ms, 99) - percentile(posted_floor, 99)
        print(f"      p99 of the toasts minus the floor's: {difference:+.1f} ms")
    sent = sorted(c["time"] for c in calls if c["method"] in SENDS)
    if sent:
        seconds = Counter(int(t) for t in sent)
        span_s = max(1.0, sent[-1] - sent[0])
        print(
            f"    messages out (send/edit/delete): {len(sent)}, {len(sent) / span_s:.1f}/s "
            f"over {span_s:.0f} s, at most {max(seconds.values())} in a second "
            f"(the bot keeps to 30/s overall, an edit counting half and a deletion nothing: "
            f"messenger.EDIT_COST)"
        )
    bot_cpu, bot_main, bot_wait = bot_cpu_wait
    bets = max(1, len(recorded))
    actions = posted + sum(seen.bids + len(seen.presses) for seen in run.rounds)
    print(
        f"(4) bot CPU {bot_cpu:.1f} s over {wall:.1f} s ({100 * bot_cpu / wall:.0f}% of a core), "
        f"{1000 * bot_cpu / bets:.2f} ms per bet recorded (all its work / bets); "
        f"fake CPU {fake_cpu:.1f} s; driver CPU {own_cpu:.1f} s"
    )
    print(
        f"    of which the main thread (the event loop) {bot_main:.1f} s, the other threads "
        f"{bot_cpu - bot_main:.1f} s (SQLite's connections, the drawing process's pipes)"
    )
    print(
        f"    the bot's threads waited {bot_wait:.1f} s for a CPU while ready to run, summed "
        f"over its threads ({100 * bot_wait / wall:.0f}% of the play: the machine's other load)"
    )
    per_action = bot_cpu / max(1, actions)
    print(
        f"    per player action (the driver's {actions} bids, bets and presses): "
        f"{1000 * per_action:.2f} ms of the bot's CPU (target <= 2 ms)"
        + (" -- under cProfile, which costs the bot CPU of its own" if args.profile else "")
    )
    print(
        f"    the floor of an action (its update decoded, a row committed, a Bot API call on "
        f"a bare stream; bench/action_floor.py, this run): {1000 * cpu_floor:.3f} ms; "
        f"the bot's CPU per action is {per_action / cpu_floor:.1f}x that"
    )
    print(f"(5) floor: /bet posts with no bot behind the fake  {stats(floor)}")
    if recorded and trips and floor:
        med, p99 = statistics.median(recorded), percentile(recorded, 99)
        print(
            f"    ratio recorded / post round trip in the run: median "
            f"{med / statistics.median(trips):.1f}x, p99 {p99 / percentile(trips, 99):.1f}x"
        )
        print(
            f"    ratio recorded / floor posts: median {med / statistics.median(floor):.1f}x, "
            f"p99 {p99 / percentile(floor, 99):.1f}x"
        )
    print(f"load average after: {os.getloadavg()}")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        (args.keep / "bot.log").write_text("\n".join(log) + "\n", encoding="utf-8")
        rounds_seen = [dataclasses.asdict(r) for r in run.rounds]
        dump = {"rounds": rounds_seen, "transcripts": transcripts, "calls": calls}
        (args.keep / "run.json").write_text(json.dumps(dump), encoding="utf-8")
        print(f"kept in {args.keep}")


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        work = Path(tmp)
        if not args.postgres:
            await bench(args, f"sqlite+aiosqlite:///{work / 'bench.db'}", work)
            return
        import asyncpg

        plain = make_url(args.postgres_url).set(drivername="postgresql")
        name = f"niuniu_bench_real_{uuid.uuid4().hex[:8]}"
        admin = await asyncpg.connect(plain.render_as_string(hide_password=False), timeout=3)
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
            url = plain.set(database=name).render_as_string(hide_password=False)
            await bench(args, url, work)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="a scratch PostgreSQL database")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument(
        "--keep", type=Path, default=None, help="copy the logs, transcripts and rounds here"
    )
    parser.add_argument(
        "--pictures", choices=["on", "off"], default="on", help="the groups' pictures setting"
    )
    parser.add_argument(
        "--start-within",
        type=float,
        default=None,
        metavar="SECONDS",
        help="start every group within this many seconds (default: over one round's length)",
    )
    parser.add_argument(
        "--round-trip-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="the fake answers every Bot API call this much later, as across a network",
    )
    parser.add_argument(
        "--profile", action="store_true", help="run the bot under cProfile and print its top 25"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.players <= 99:
        parser.error("--players must be 1 to 99")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
