"""Load bench: the real ``Application`` under many groups' bets, with an in-memory Telegram.

    python bench/bench_bot.py [--groups 100] [--players 20] [--database-url URL]

The bot is built by the composition root (``bot.bootstrap.assemble``; only the HTTP
transport is one that answers the Bot API from memory, ``memory_telegram.py``: no
network), started as ``bot.telegram.demo`` starts it, and fed synthetic updates through
``application.update_queue``: the real path through ``ChatOrderedProcessor`` and the
handlers. Every group plays in its own asyncio task, one update in flight at a time (a
closed loop), all groups at once.

It measures:

1. bets per second over ``--groups`` tables of ``--players`` bettors each, and the time
   from putting a ``/bet`` update on the queue to its last handler returning (median, p99).
   The bettors go on changing their bets, pass after pass, until the deadlines of part 2
   have all been applied (on a fast machine one pass ends before they fall due);
2. how late round deadlines fire under that load: while the bets flow, ``--deadline-rounds``
   other tables start rounds (``/newround`` and ``/bid`` through the bot) whose bidding
   deadline, 3 s ahead, is applied by the bot's own timer; lateness is the wall
   time at which the bot began applying it (``RoundProgress.advance``, told to its deadline
   observer) minus the round's ``deadline_ms``;
3. the process's peak memory;
4. the floor: the same updates through a fresh ``Application`` whose only handler does
   nothing, and one row committed per update (``Database.transaction()``), with the same
   concurrency; and the ratio of the bet median to their sum (the aim: at most 3x). The
   same again one update at a time (``--serial`` bets changed on one table after the
   load, against as many no-op updates and commits), where no queueing hides the cost.

"CPU per update" is the CPU time of the event loop's thread (and of the whole process,
with the SQLite driver's threads) over the run divided by its updates: under load it
includes the background work (board edits, sweeps, the deadline tables). ``--profile
serial`` (or ``load``) prints a cProfile of those bets. Defaults finish in about a
minute on 2 cores.

A temporary SQLite file is used unless ``--database-url`` names another database (use a
scratch one: the bench leaves its tables, rounds and chips there).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import itertools
import logging
import pstats
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_telegram import TOKEN, MemoryTelegram, TelegramStats, memory_builder, message_update
from telegram import Update
from telegram.ext import Application, TypeHandler

from bot.bootstrap import Assembly, assemble
from bot.config import Config
from bot.engine.round import MINT, Phase, Posting, Round, available
from bot.engine.settings import Settings
from bot.service.game import CommandResult, GameService, Person, wall_clock_ms
from bot.store import ledger
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.store.models import ProcessedUpdate
from bot.telegram.collector import tune_garbage_collector
from bot.telegram.ordering import ChatLocks, ChatOrderedProcessor
from bot.telegram.shell import GameBot

ADMIN = Person(900_000_001, "Bench admin", "bench_admin")
CREDIT_CENTS = 1_000_000  # 10,000.00 chips per player: far more than any bench bet holds
DEALER_BID = "500"
DEADLINE_BID_SECONDS = 3  # the deadline tables' bidding window: deadlines 3 s ahead
BENCH_SETTINGS = Settings(bid_seconds=1, bet_seconds=600, grab_seconds=600, pause_seconds=15)
SETUP_CONCURRENCY = 4
SETUP_ATTEMPTS = 5
DEADLINE_WAIT_SECONDS = 20
#: Seconds after which no new pass of bets starts, even if a deadline is still awaited
#: (see ``bets_of``): one that is not applied by then is reported as missed.
LONGEST_FLOOD_SECONDS = 30
LATENESS_TARGET_MS = 250.0
FLOOR_AIM = 3.0


# -- the bot over the in-memory Bot API ----------------------------------------------


def build_bench_bot(
    config: Config, database: Database, stats: TelegramStats, probe: DeadlineProbe
) -> Assembly:
    """The bot from its own composition root (no rate limiter), over the in-memory
    transport, its deadlines told to ``probe``."""
    return assemble(
        config,
        database=database,
        request=MemoryTelegram(stats, config.operators),
        get_updates_request=MemoryTelegram(stats, config.operators),
        rate_limiter=False,
        deadline_observer=probe,
    )


# -- updates and the closed loop ---------------------------------------------------------


class UpdateFactory:
    """Telegram-shaped update dicts with fresh update and message ids."""

    def __init__(self, first_update_id: int) -> None:
        self._update_ids = itertools.count(first_update_id)
        self._message_ids: dict[int, itertools.count[int]] = {}

    def message(self, chat_id: int, user_id: int, text: str) -> dict[str, Any]:
        """A group message; a leading ``/command`` gets its ``bot_command`` entity."""
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        message_id = next(counter)
        return message_update(next(self._update_ids), message_id, chat_id, user_id, text)


class Tracker:
    """Feeds updates through ``update_queue`` and notes when each one is done.

    A ``TypeHandler`` in group -1 notes when handling starts (inside the chat's lock) and
    one in group 1 when the bot's handler (group 0) has returned.
    """

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self.application = application
        self._waiters: dict[int, asyncio.Future[tuple[float, float]]] = {}
        self._started: dict[int, float] = {}
        application.add_handler(TypeHandler(Update, self._on_start), group=-1)
        application.add_handler(TypeHandler(Update, self._on_done), group=1)

    async def _on_start(self, update: Update, context: Any) -> None:
        self._started[update.update_id] = time.perf_counter()

    async def _on_done(self, update: Update, context: Any) -> None:
        done = time.perf_counter()
        started = self._started.pop(update.update_id, done)
        waiter = self._waiters.pop(update.update_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result((started, done))

    async def send(self, data: dict[str, Any]) -> tuple[float, float]:
        """Queue one update and wait for it: (queued → done, handler start → done) seconds."""
        update = Update.de_json(data, self.application.bot)
        waiter: asyncio.Future[tuple[float, float]] = asyncio.get_running_loop().create_future()
        self._waiters[update.update_id] = waiter
        queued = time.perf_counter()
        self.application.update_queue.put_nowait(update)
        started, done = await asyncio.wait_for(waiter, timeout=120)
        return done - queued, done - started


@dataclass
class Samples:
    """Per-update timings of one run, in seconds."""

    latency: list[float] = field(default_factory=list)
    handling: list[float] = field(default_factory=list)
    wall: float = 0.0
    cpu_main: float = 0.0  # CPU seconds of the event loop's thread
    cpu_process: float = 0.0  # CPU seconds of the whole process (with the driver's threads)

    @property
    def count(self) -> int:
        return len(self.latency)

    @property
    def rate(self) -> float:
        return self.count / self.wall if self.wall > 0 else 0.0


async def closed_loop(
    streams: Sequence[Iterable[Any]],
    send: Callable[[Any], Awaitable[tuple[float, float]]],
    concurrency: int = 0,
) -> Samples:
    """Every stream in its own task, each item sent after the previous one is done; at
    most ``concurrency`` streams at a time if it is positive."""
    samples = Samples()
    limit = asyncio.Semaphore(concurrency if concurrency > 0 else len(streams) or 1)

    async def run(stream: Iterable[Any]) -> None:
        async with limit:
            for item in stream:
                latency, handling = await send(item)
                samples.latency.append(latency)
                samples.handling.append(handling)

    started, cpu_main, cpu_process = time.perf_counter(), time.thread_time(), time.process_time()
    await asyncio.gather(*(run(stream) for stream in streams))
    samples.wall = time.perf_counter() - started
    samples.cpu_main = time.thread_time() - cpu_main
    samples.cpu_process = time.process_time() - cpu_process
    return samples


# -- deadline instrumentation ------------------------------------------------------------


@dataclass
class Fired:
    """A deadline that moved its round on."""

    round_id: int
    deadline_ms: int
    scheduled_ms: float
    entered_ms: float
    applied_ms: float
    source: str
    outcome: str

    @property
    def late_ms(self) -> float:
        return self.entered_ms - self.deadline_ms


class DeadlineProbe:
    """The bot's deadline observer: when each round's deadline was scheduled, and when
    the bot began and finished applying it."""

    def __init__(self) -> None:
        #: Every deadline a round was scheduled with, and when it was scheduled (wall ms).
        self.history: dict[int, list[tuple[int, float]]] = {}
        self.fired: list[Fired] = []
        self.noop_entries = 0
        self.by_round: dict[int, Fired] = {}
        self.rounds_of_chat: dict[int, list[int]] = {}
        self.noop_rounds: dict[int, int] = {}
        self._events: dict[int, asyncio.Event] = {}

    def scheduled(self, state: Round) -> None:
        history = self.history.setdefault(state.id, [])
        if not history or history[-1][0] != state.deadline_ms:
            history.append((state.deadline_ms, time.time_ns() / 1e6))
        rounds = self.rounds_of_chat.setdefault(state.chat_id, [])
        if state.id not in rounds:
            rounds.append(state.id)

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        # The deadline applied: the last one scheduled that had passed when it was applied
        # (the sweep may enter before the round's timer was even scheduled).
        passed = [
            (deadline, scheduled)
            for deadline, scheduled in self.history.get(round_id, [])
            if deadline <= applied_ms
        ]
        if not result.events or not passed:
            self.noop_entries += 1
            self.noop_rounds[round_id] = self.noop_rounds.get(round_id, 0) + 1
            return
        deadline, scheduled = passed[-1]
        fired = Fired(
            round_id,
            deadline,
            scheduled,
            entered_ms,
            applied_ms,
            "job" if by_timer else "sweep",
            type(result.events[0]).__name__,
        )
        self.fired.append(fired)
        self.by_round[round_id] = fired
        self._event(round_id).set()

    def _event(self, round_id: int) -> asyncio.Event:
        return self._events.setdefault(round_id, asyncio.Event())

    async def wait_fired(self, round_id: int, timeout: float) -> bool:
        """Wait until the round's current deadline has been applied."""
        try:
            await asyncio.wait_for(self._event(round_id).wait(), timeout)
        except TimeoutError:
            return False
        return True


# -- statistics and printing -------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.2f}ms"


class Output:
    """Prints as it goes, flushed (the bench takes a while)."""

    def line(self, text: str = "") -> None:
        print(text, flush=True)

    def header(self) -> None:
        self.line(
            f"  {'':<34} {'n':>6} {'wall':>8} {'per s':>8} | {'queued → done':^21} | "
            f"{'in handlers':>11} | {'CPU per update':^19}"
        )
        self.line(
            f"  {'':<34} {'':>6} {'':>8} {'':>8} | {'median':>10} {'p99':>10} | "
            f"{'median':>11} | {'loop':>9} {'process':>9}"
        )

    def timings(self, label: str, samples: Samples) -> None:
        n = max(1, samples.count)
        wall = f"{samples.wall:7.2f}s" if samples.wall else f"{'-':>8}"
        rate = f"{samples.rate:8.1f}" if samples.wall else f"{'-':>8}"
        cpu = (
            f"{ms(samples.cpu_main / n)} {ms(samples.cpu_process / n)}"
            if samples.wall
            else f"{'-':>9} {'-':>9}"
        )
        self.line(
            f"  {label:<34} {samples.count:6d} {wall} {rate} | "
            f"{ms(median(samples.latency))} {ms(percentile(samples.latency, 99))} | "
            f"{ms(median(samples.handling)):>11} | {cpu}"
        )


class LogCounter(logging.Filter):
    """Counts log records at WARNING and above by level and logger."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            self.counts[f"{record.levelname} {record.name}"] += 1
        return True


# -- the bench ---------------------------------------------------------------------------


@dataclass
class Plan:
    """Chat and user ids of one run (distinct per run, for a reused database)."""

    groups: int
    players: int
    deadline_rounds: int
    run: int = field(default_factory=lambda: int(time.time()) % 100_000)

    def bet_chat(self, group: int) -> int:
        return -(1_000_000_000_000 + self.run * 1_000_000 + group)

    def deadline_chat(self, index: int) -> int:
        return -(1_000_000_000_000 + self.run * 1_000_000 + 500_000 + index)

    def dealer(self, group: int) -> int:
        return 1_000_000_000 + group * (self.players + 1)

    def player(self, group: int, index: int) -> int:
        return self.dealer(group) + 1 + index

    def deadline_bidder(self, index: int) -> int:
        return 2_000_000_000 + index


async def credit_all(service: GameService, chat_id: int, users: list[int]) -> None:
    """Open the table (as ``/open`` does) and credit every player in one ledger transaction
    (``/credit`` makes one per player: too slow for setting up thousands)."""
    await service.set_open(chat_id, ADMIN, True)
    async with service.db.transaction() as session:
        await ledger.Ledger(session).post(
            chat_id=chat_id,
            kind="credit",
            postings=[Posting(MINT, -CREDIT_CENTS * len(users))]
            + [Posting(available(user_id), CREDIT_CENTS) for user_id in users],
            now_ms=wall_clock_ms(),
            actor_id=ADMIN.id,
            memo="bench credit",
        )


@contextlib.asynccontextmanager
async def running(
    application: Application[Any, Any, Any, Any, Any, Any], game: GameBot
) -> AsyncIterator[None]:
    """The bot started as ``bot.telegram.demo`` starts it, and stopped however we leave."""
    async with application:
        await application.start()
        try:
            # run_polling would call post_init; started by hand, we call it.
            await game.start(application)
            tune_garbage_collector()  # as the bot's process does once it has started
            yield
        finally:
            # What the bot still had to send would outlive the database.
            game.abandon()
            if application.running:
                await application.stop()


@dataclass
class BenchRun:
    """The bot under bench and what feeds and watches it, for the parts of ``bench_bot``."""

    plan: Plan
    config: Config
    service: GameService
    application: Application[Any, Any, Any, Any, Any, Any]
    stats: TelegramStats
    probe: DeadlineProbe
    tracker: Tracker
    updates: UpdateFactory


@dataclass
class Load:
    """What part 1's load measured, and the deadline tables' rounds it ran over."""

    bets: Samples
    deadline_updates: Samples
    deadline_rounds: list[int]
    started_ms: float
    ended_ms: float


async def bench_bot(args: argparse.Namespace, url: str, out: Output) -> BotResults:
    """Parts 1 and 2: bets through the bot, deadlines under that load."""
    plan = Plan(args.groups, args.players, args.deadline_rounds)
    database = Database.from_url(url)
    config = Config(
        database_url=url,
        telegram_token=TOKEN,
        operators=frozenset({ADMIN.id}),
        game=BENCH_SETTINGS,
        sweep_seconds=1.0,
        board_edit_seconds=3.0,
    )
    stats = TelegramStats()
    probe = DeadlineProbe()
    assembly = build_bench_bot(config, database, stats, probe)
    application = assembly.application
    run = BenchRun(
        plan,
        config,
        assembly.service,
        application,
        stats,
        probe,
        Tracker(application),
        UpdateFactory(first_update_id=time.time_ns() // 1000),
    )
    profile_text = ""
    try:
        async with running(application, assembly.game):
            await open_tables(run, out)
            setup_fired = await start_bet_rounds(run, out)
            await asyncio.sleep(0.5)
            profiler = cProfile.Profile() if args.profile == "load" else None
            load = await run_load(run, profiler)
            await await_deadlines(run, load, out)
            await report_bets(run, load, out)
            report_lateness(run, load, setup_fired, out)
            if profiler is not None:
                profile_text = profile_report(profiler, args.profile_lines)
            profiler = cProfile.Profile() if args.profile == "serial" else None
            serial = await run_serial(run, args.serial, profiler)
            if profiler is not None:
                profile_text = profile_report(profiler, args.profile_lines)
    finally:
        await database.dispose()
    return BotResults(load.bets, serial, stats, profile_text, round(load.bets.count / plan.groups))


async def open_tables(run: BenchRun, out: Output) -> None:
    """Open every table and credit its players through the service."""
    plan, clock = run.plan, time.perf_counter()
    for group in range(plan.groups):
        users = [plan.dealer(group)] + [plan.player(group, p) for p in range(plan.players)]
        await credit_all(run.service, plan.bet_chat(group), users)
    for index in range(plan.deadline_rounds):
        chat_id = plan.deadline_chat(index)
        await credit_all(run.service, chat_id, [plan.deadline_bidder(index)])
        await run.service.change_setting(chat_id, ADMIN, "bid_seconds", str(DEADLINE_BID_SECONDS))
    out.line(
        f"setup: {plan.groups + plan.deadline_rounds} tables opened and "
        f"{plan.groups * (plan.players + 1) + plan.deadline_rounds} players credited "
        f"through the service in {time.perf_counter() - clock:.1f} s"
    )


async def start_bet_rounds(run: BenchRun, out: Output) -> list[Fired]:
    """Each bet table: /newround and the dealer's /bid through the bot; the bidding deadline
    (1 s) is then applied by the bot's own timer. A table whose /bid missed the window
    (its round is voided for want of bids) starts again. Returns those deadlines."""
    plan, clock = run.plan, time.perf_counter()
    setup = Samples()
    round_ids: dict[int, int] = {}
    pending = list(range(plan.groups))
    restarts = 0
    for _attempt in range(SETUP_ATTEMPTS):
        if not pending:
            break
        tried = await closed_loop(
            [
                [
                    run.updates.message(plan.bet_chat(group), plan.dealer(group), "/newround"),
                    run.updates.message(
                        plan.bet_chat(group), plan.dealer(group), f"/bid {DEALER_BID}"
                    ),
                ]
                for group in pending
            ],
            run.tracker.send,
            # A few tables at a time, so that the /bid lands inside its 1 s window.
            concurrency=SETUP_CONCURRENCY,
        )
        setup.latency += tried.latency
        states = [await run.service.current_round(plan.bet_chat(g)) for g in pending]
        await asyncio.gather(
            *(run.probe.wait_fired(state.id, 30) for state in states if state is not None)
        )
        missed = []
        for group in pending:
            state = await run.service.current_round(plan.bet_chat(group))
            if state is None or state.phase is not Phase.BETTING:
                missed.append(group)
            else:
                round_ids[group] = state.id
        restarts += len(missed)
        pending = missed
    if pending:
        raise SystemExit(f"{len(pending)} bench tables never reached betting")
    out.line(
        f"setup: {plan.groups} rounds started and bid for through the bot "
        f"({setup.count} updates, median {ms(median(setup.latency)).strip()}, "
        f"max {ms(max(setup.latency)).strip()}), moved to betting by their deadline "
        f"jobs; {restarts} restarted after their /bid missed the 1 s bidding window; "
        f"{time.perf_counter() - clock:.1f} s"
    )
    return [run.probe.by_round[r] for r in round_ids.values()]


class DeadlineTables:
    """The deadline tables of part 2: table k starts its round (/newround, /bid) once
    60% x k / count of the bets are done, so that its deadline (3 s later) falls while the
    bets flow."""

    def __init__(self, run: BenchRun) -> None:
        self.run = run
        total_bets = run.plan.groups * run.plan.players
        self.thresholds = [
            total_bets * 0.6 * k / max(1, run.plan.deadline_rounds)
            for k in range(run.plan.deadline_rounds)
        ]
        self.triggers = [asyncio.Event() for _ in self.thresholds]
        self.triggered = 0
        self.started = 0
        self.rounds: list[int] = []
        self.samples = Samples()

    def bets_done(self, done: int) -> None:
        """Start the tables whose threshold ``done`` bets have reached."""
        while self.triggered < len(self.thresholds) and done >= self.thresholds[self.triggered]:
            self.triggers[self.triggered].set()
            self.triggered += 1

    def every_deadline_applied(self) -> bool:
        return self.started == len(self.thresholds) and all(
            r in self.run.probe.by_round for r in self.rounds
        )

    async def play(self, index: int) -> None:
        """Table ``index``: wait for its threshold, then start a round and bid."""
        await self.triggers[index].wait()
        chat_id = self.run.plan.deadline_chat(index)
        bidder = self.run.plan.deadline_bidder(index)
        rounds_of_chat = self.run.probe.rounds_of_chat
        for text in ("/newround", f"/bid {DEALER_BID}"):
            latency, handling = await self.run.tracker.send(
                self.run.updates.message(chat_id, bidder, text)
            )
            self.samples.latency.append(latency)
            self.samples.handling.append(handling)
            if text == "/newround" and rounds_of_chat.get(chat_id):
                # The round scheduled by /newround (whether or not the bid makes it).
                self.rounds.append(rounds_of_chat[chat_id][-1])
        self.started += 1


def bets_of(
    run: BenchRun, group: int, tables: DeadlineTables, flood_started: float
) -> Iterator[dict[str, Any]]:
    """Table ``group``'s /bet updates: pass after pass, each bettor changing their bet,
    until every deadline of the deadline tables has been applied: on a machine fast enough
    to place one pass before they fall due, they would otherwise fall on an idle bot."""
    for bet_pass in itertools.count():
        if bet_pass > 0 and (
            tables.every_deadline_applied()
            or time.perf_counter() - flood_started > LONGEST_FLOOD_SECONDS
        ):
            return
        for p in range(run.plan.players):
            amount = 5 + (p % 10) * 5 + bet_pass % 2  # a change each pass
            yield run.updates.message(
                run.plan.bet_chat(group), run.plan.player(group, p), f"/bet {amount}"
            )


async def run_load(run: BenchRun, profiler: cProfile.Profile | None) -> Load:
    """The load: every bettor's /bet, each table in order, all tables at once; the
    deadline tables start rounds as the bets progress."""
    tables = DeadlineTables(run)
    done_bets = 0

    async def send_bet(data: dict[str, Any]) -> tuple[float, float]:
        nonlocal done_bets
        result = await run.tracker.send(data)
        done_bets += 1
        tables.bets_done(done_bets)
        return result

    flood_started = time.perf_counter()
    streams = [bets_of(run, group, tables, flood_started) for group in range(run.plan.groups)]
    started_ms = time.time_ns() / 1e6
    starters = [asyncio.create_task(tables.play(index)) for index in range(len(tables.triggers))]
    tables.bets_done(done_bets)
    if profiler is not None:
        profiler.enable()
    bets = await closed_loop(streams, send_bet)
    if profiler is not None:
        profiler.disable()
    ended_ms = time.time_ns() / 1e6
    await asyncio.gather(*starters)
    return Load(bets, tables.samples, tables.rounds, started_ms, ended_ms)


async def await_deadlines(run: BenchRun, load: Load, out: Output) -> None:
    """Wait for the deadline tables' deadlines; say what became of any not applied."""
    moved = await asyncio.gather(
        *(run.probe.wait_fired(r, DEADLINE_WAIT_SECONDS) for r in load.deadline_rounds)
    )
    for round_id, applied in zip(load.deadline_rounds, moved, strict=True):
        if not applied:
            await explain_missed(out, run.probe, run.service, run.application, round_id)


async def report_bets(run: BenchRun, load: Load, out: Output) -> None:
    """Print part 1: the bets' timings and how many were stored."""
    plan, bets = run.plan, load.bets
    total_bets = plan.groups * plan.players
    placed = 0
    for group in range(plan.groups):
        state = await run.service.current_round(plan.bet_chat(group))
        placed += len(state.bets) if state is not None else 0
    out.line()
    out.line(
        f"1. bets: {plan.groups} tables x {plan.players} bettors, each table's /bet "
        f"updates in order, all tables at once"
    )
    out.header()
    out.timings("/bet through the Application", bets)
    out.timings("deadline tables' /newround, /bid", load.deadline_updates)
    p50, p99 = ms(median(bets.latency)).strip(), ms(percentile(bets.latency, 99)).strip()
    out.line(
        f"  => {bets.rate:.1f} bets/s; time per bet (queued → handled) median {p50}, p99 {p99}"
    )
    passes = bets.count / total_bets
    out.line(
        f"  passes: {passes:.2f} (each bettor bet, then changed their bet, until every "
        f"deadline table's deadline had been applied)"
    )
    out.line(
        f"  sanity: {placed} of {total_bets} bets stored; the bot replied {run.stats.replies} "
        f"times (refusals, and stakes confirmed while a group's minute had room)"
    )


def report_lateness(run: BenchRun, load: Load, setup_fired: list[Fired], out: Output) -> None:
    """Print part 2: how late the deadlines fired, under the load and after it."""
    by_round = run.probe.by_round
    fired = [by_round[r] for r in load.deadline_rounds if r in by_round]
    under_load = [f for f in fired if load.started_ms <= f.deadline_ms <= load.ended_ms]
    after_load = [f for f in fired if f not in under_load]
    out.line()
    out.line(
        f"2. deadline lateness (RoundProgress.advance entered − deadline_ms; "
        f"target ≤ {LATENESS_TARGET_MS:.0f} ms)"
    )
    for label, rows in (
        ("bidding deadlines during the bets", under_load),
        ("  the same, after the bets ended", after_load),
        ("setup: bet tables' bidding", setup_fired),
    ):
        print_lateness(out, label, rows)
    out.line(
        f"  advance calls that found nothing due: {run.probe.noop_entries} "
        f"(sweep or a second timer for a deadline already applied)"
    )


async def run_serial(run: BenchRun, count: int, profiler: cProfile.Profile | None) -> Samples:
    """One at a time: table 0's bettors change their bets, one update in flight, after
    the load's board edits have drained."""
    await asyncio.sleep(run.config.board_edit_seconds + 0.5)
    plan = run.plan
    serial_stream = [
        run.updates.message(plan.bet_chat(0), plan.player(0, n % plan.players), f"/bet {100 + n}")
        for n in range(count)
    ]
    if profiler is not None:
        profiler.enable()
    serial = await closed_loop([serial_stream], run.tracker.send)
    if profiler is not None:
        profiler.disable()
    return serial


@dataclass
class BotResults:
    """What ``bench_bot`` measured."""

    bets: Samples
    serial: Samples
    stats: TelegramStats
    profile_text: str
    #: Bets each table sent under load (``--players`` times the passes).
    bets_per_table: int


async def explain_missed(
    out: Output,
    probe: DeadlineProbe,
    service: GameService,
    application: Application[Any, Any, Any, Any, Any, Any],
    round_id: int,
) -> None:
    """Say what became of a deadline that was not applied in time."""
    state = await service.round(round_id)
    assert application.job_queue is not None
    jobs = [
        job.next_t.isoformat() if job.next_t else "?"
        for job in application.job_queue.jobs()
        if job.data is not None and isinstance(job.data, tuple) and job.data[:1] == (round_id,)
    ]
    history = [
        f"deadline {(deadline - wall_clock_ms()) / 1000:+.1f} s from now, scheduled "
        f"{(scheduled - deadline) / 1000:+.2f} s from it"
        for deadline, scheduled in probe.history.get(round_id, [])
    ]
    out.line(
        f"  !! round {round_id}: deadline not applied within {DEADLINE_WAIT_SECONDS} s; "
        f"phase now {state.phase.value if state else None}; {history}; pending jobs {jobs}; "
        f"advance entered for nothing {probe.noop_rounds.get(round_id, 0)} times"
    )


def print_ratio(out: Output, bets: Samples, noop: Samples, commit: Samples) -> None:
    bet_median, noop_median, commit_median = (
        median(bets.latency),
        median(noop.latency),
        median(commit.latency),
    )
    ratio = bet_median / (noop_median + commit_median)
    verdict = "meets" if ratio <= FLOOR_AIM else "does NOT meet"
    out.line(
        f"  ratio: /bet median {ms(bet_median).strip()} / (no-op {ms(noop_median).strip()} + "
        f"commit {ms(commit_median).strip()}) = {ratio:.2f}x → {verdict} the aim of at most "
        f"{FLOOR_AIM:.0f}x the floor"
    )


def print_lateness(out: Output, label: str, fired: list[Fired]) -> None:
    if not fired:
        out.line(f"  {label:<34} none")
        return
    late = [f.late_ms for f in fired]
    applied = [f.applied_ms - f.deadline_ms for f in fired]
    scheduled_late = [f for f in fired if f.scheduled_ms > f.deadline_ms]
    before_job = [f for f in fired if f.entered_ms < f.scheduled_ms]
    sources = Counter(f.source for f in fired)
    outcomes = Counter(f.outcome for f in fired)
    worst = max(late)
    verdict = "meets" if worst <= LATENESS_TARGET_MS else "MISSES"
    out.line(
        f"  {label:<34} n={len(fired):4d} | fired late by median {median(late):7.1f} ms, "
        f"p99 {percentile(late, 99):7.1f} ms, max {worst:7.1f} ms ({verdict} the target)"
    )
    out.line(
        f"  {'':<34}          committed late by median {median(applied):7.1f} ms, "
        f"max {max(applied):7.1f} ms; fired by {dict(sources)}; outcome {dict(outcomes)}"
    )
    in_time = [f for f in fired if f.scheduled_ms <= f.deadline_ms]
    if in_time and scheduled_late:
        late_in_time = [f.late_ms for f in in_time]
        out.line(
            f"  {'':<34}          of the {len(in_time)} jobs scheduled in time: fired late by "
            f"median {median(late_in_time):.1f} ms, max {max(late_in_time):.1f} ms"
        )
    if scheduled_late:
        out.line(
            f"  {'':<34}          {len(scheduled_late)} jobs were only scheduled after their "
            f"deadline had passed (by median "
            f"{median([f.scheduled_ms - f.deadline_ms for f in scheduled_late]):.1f} ms)"
        )
    if before_job:
        out.line(
            f"  {'':<34}          {len(before_job)} were entered (by the sweep) before their "
            f"job had been scheduled"
        )


def profile_report(profiler: cProfile.Profile, lines: int) -> str:
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats("tottime").print_stats(lines)
    stats.sort_stats("cumulative").print_stats("bot/", lines)
    return buffer.getvalue()


async def bench_noop(groups: int, players: int, serial: int) -> tuple[Samples, Samples]:
    """The floor, part one: the same updates through an Application that does nothing."""
    stats = TelegramStats()
    application = (
        memory_builder(stats, frozenset())
        .token(TOKEN)
        .concurrent_updates(ChatOrderedProcessor(ChatLocks()))
        .build()
    )

    async def nothing(update: Update, context: Any) -> None:
        return None

    application.add_handler(TypeHandler(Update, nothing))
    tracker = Tracker(application)
    updates = UpdateFactory(first_update_id=1)
    streams = [
        [
            updates.message(-(1_000_000 + g), 1_000 + g * players + p, f"/bet {5 + p % 10}")
            for p in range(players)
        ]
        for g in range(groups)
    ]
    serial_stream = [
        updates.message(-1_000_000, 1_000 + n % players, f"/bet {100 + n}") for n in range(serial)
    ]
    async with application:
        await application.start()
        samples = await closed_loop(streams, tracker.send)
        one_at_a_time = await closed_loop([serial_stream], tracker.send)
        await application.stop()
    return samples, one_at_a_time


async def bench_commit(url: str, groups: int, players: int, serial: int) -> tuple[Samples, Samples]:
    """The floor, part two: one ``processed_updates`` row committed per update."""
    database = Database.from_url(url)
    first = time.time_ns() // 1000 + 10**13  # far from the bot's update ids of this run
    ids = itertools.count(first)
    streams = [[next(ids) for _ in range(players)] for _ in range(groups)]

    async def commit(update_id: int) -> tuple[float, float]:
        started = time.perf_counter()
        async with database.transaction() as session:
            session.add(
                ProcessedUpdate(bot_id=0, update_id=update_id, processed_at_ms=wall_clock_ms())
            )
        elapsed = time.perf_counter() - started
        return elapsed, elapsed

    try:
        samples = await closed_loop(streams, commit)
        one_at_a_time = await closed_loop([[next(ids) for _ in range(serial)]], commit)
    finally:
        await database.dispose()
    return samples, one_at_a_time


async def report_floor(
    args: argparse.Namespace, url: str, dialect: str, results: BotResults, out: Output
) -> None:
    """Part 4: the floor measured with the bets' concurrency and one at a time, and the
    bets' ratio to it."""
    bets = results.bets
    per_table = results.bets_per_table
    noop, noop_serial = await bench_noop(args.groups, per_table, args.serial)
    commit, commit_serial = await bench_commit(url, args.groups, per_table, args.serial)
    out.line()
    out.line(
        f"4. the floor: the same {noop.count} updates with the same concurrency "
        f"({args.groups} tables at once, in order within a table)"
    )
    out.header()
    out.timings("no-op handler (Application)", noop)
    out.timings(f"one commit per update ({dialect})", commit)
    out.timings("/bet (from 1.)", bets)
    print_ratio(out, bets, noop, commit)
    out.line()
    out.line(
        f"   and one update at a time ({args.serial} updates; table 0's bettors change "
        f"their bets after the load)"
    )
    out.header()
    out.timings("no-op handler (Application)", noop_serial)
    out.timings(f"one commit per update ({dialect})", commit_serial)
    out.timings("/bet, changing a bet", results.serial)
    print_ratio(out, results.serial, noop_serial, commit_serial)


async def main_async(args: argparse.Namespace) -> int:
    out = Output()
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.database_url:
            url = args.database_url
            kind = "given database"
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="niuniu-bench-"))
            url = f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
            kind = "temporary SQLite file"
        await upgrade_async(url)
        backend = Database.from_url(url)
        dialect = backend.engine.dialect.name
        await backend.dispose()
        out.line(
            f"niuniu-bot bench: {args.groups} tables x {args.players} bettors, "
            f"{args.deadline_rounds} deadline tables; {dialect} ({kind}); "
            f"Python {sys.version.split()[0]}"
        )
        out.line(
            "in-memory Bot API, no rate limiter, board edits coalesced per 3 s, sweep every 1 s"
        )
        out.line()
        results = await bench_bot(args, url, out)
        calls = results.stats.calls
        out.line(
            "  Bot API calls: "
            + ", ".join(f"{name} {count}" for name, count in sorted(calls.items()))
        )

        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out.line()
        out.line(f"3. peak memory (ru_maxrss): {peak_mib:.1f} MiB")

        await report_floor(args, url, dialect, results, out)
        profile_text = results.profile_text
    out.line()
    out.line(
        f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB; "
        f"total {time.perf_counter() - started:.1f} s"
    )
    if profile_text:
        out.line()
        out.line(f"cProfile of the {args.profile} bets (main thread only):")
        out.line(profile_text)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=100, help="tables taking bets")
    parser.add_argument("--players", type=int, default=20, help="bettors per table")
    parser.add_argument(
        "--deadline-rounds",
        type=int,
        default=None,
        help="tables whose deadlines fire during the bets (default: as many as --groups)",
    )
    parser.add_argument("--database-url", default="", help="default: a temporary SQLite file")
    parser.add_argument(
        "--serial", type=int, default=200, help="updates sent one at a time (default 200)"
    )
    parser.add_argument(
        "--profile",
        choices=("serial", "load"),
        default=None,
        help="cProfile the one-at-a-time bets or the bet load and print the top functions",
    )
    parser.add_argument("--profile-lines", type=int, default=30)
    args = parser.parse_args(argv)
    if args.deadline_rounds is None:
        args.deadline_rounds = args.groups
    if args.groups < 1 or args.players < 1 or args.deadline_rounds < 0 or args.serial < 1:
        parser.error("--groups and --players must be positive")
    if args.groups > 400_000 or args.deadline_rounds > 400_000:
        parser.error("at most 400000 tables")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    counter = LogCounter()
    for handler in logging.getLogger().handlers:
        handler.addFilter(counter)
    code = asyncio.run(main_async(args))
    if counter.counts:
        print(f"log records at WARNING and above: {dict(counter.counts)}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
