"""A soak: webhook workers on one PostgreSQL, killed with SIGKILL at random, and what the
groups saw. ``tests/e2e/test_two_workers.py`` runs it short; ``bench/bench_soak.py`` long.

The fake Telegram runs on this event loop and pushes its updates through a round-robin
load balancer to the workers (``tests/e2e/webhooks.py``); each worker is the real bot
(``python -m bot run``, as ``tests/e2e/harness.py`` starts it) in webhook mode with its own
ports and the same database. The tables are opened and credited through ``GameService``
first; then each group's players act on what the group shows (a board's bid, bet and Grab
buttons, ``/newround`` when no round is open), while a killer kills a worker every few
seconds and starts it again. After the play the tables close, the last rounds end, the
bot gets time to catch up, and the workers are killed a last time.

What the run shows, as :class:`Figures`: every round that was ever open has its board in
the group (or, if it ended before any board went out, its results); no ended round's board
keeps live buttons; no group gets more than Telegram's 20 messages in a minute; nothing the
workers started outlives them; the ledger holds, no chip is lost and no round is stuck.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from sqlalchemy import select
from sqlalchemy.engine import make_url

from bot.config.model import bot_id_of
from bot.engine.settings import Settings
from bot.fakegram.server import FakeTelegram
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.store.models import Account, RoundRow
from bot.telegram.webhook import webhook_paths
from tests.e2e.harness import FAST_GAME, BotProcess, sliding_max, write_config
from tests.e2e.webhooks import RoundRobin, WebhookPush
from tests.helpers.game import check_ledger
from tests.helpers.ports import free_port

JsonDict = dict[str, Any]

#: The short windows of the e2e tests, with the results drawn as pictures (the drawing
#: processes are among what must not outlive a killed worker).
SOAK_GAME: dict[str, Any] = {**FAST_GAME, "pictures": "on"}
#: Telegram's limit of messages a minute in one group.
GROUP_LIMIT = 20
SECRET = "soak_webhook_SECRET_1"
#: Set in every worker's environment, so that whatever a worker started is found in /proc
#: by it, after the worker is gone (its children then belong to init).
MARKER = "NIUNIU_SOAK_RUN"
ADMIN = Person(9_001, "Admin", "soak_admin")
CREDIT_CENTS = 1_000_000
#: A group with no open round this long says ``/newround`` (no round follows a void one by
#: itself); again after as long if none came.
NEWROUND_AFTER_SECONDS = 4.0
LOOK_SECONDS = 0.25
#: Longer than a killed worker's children need to notice it is gone; a bound, not a speed.
GONE_WITHIN_SECONDS = 10.0
LIVE_ACTIONS = ("bid", "bet", "cancel", "grab")
BUTTON = re.compile(r"^(\d+):(\w+):(\d+)$")


@dataclass(frozen=True)
class Plan:
    """How big a soak is."""

    groups: int
    #: Bettors in each group, besides its dealer.
    players: int
    play_seconds: float
    #: Seconds between kills, drawn uniformly from this range.
    kill_every: tuple[float, float]
    #: True: the workers in turn, each started again before the next kill (one down at a
    #: time); False: any worker that is up, at random, started again in the background.
    alternate: bool
    #: How long the last rounds may take to end once the tables close.
    end_seconds: float = 45.0
    #: How long the bot may then take to bring every board up to date.
    catch_up_seconds: float = 45.0
    #: Workers of each bot.
    workers: int = 2
    seed: int | None = None
    #: Bots (tokens) on the database, each with a fake Telegram of its own, ``workers``
    #: workers and ``groups`` groups.
    bots: int = 1
    #: Every bot's token in each worker (``[telegram] tokens``: one process serves them
    #: all, each bot's updates at its own webhook path), rather than workers per bot.
    one_process: bool = False


@dataclass
class Figures:
    """What a soak showed."""

    rounds: int = 0
    settled: int = 0
    void: int = 0
    #: Rounds with a board message in the group.
    boarded: int = 0
    #: Rounds without a board but with their results (they ended before a board went out).
    results_only: int = 0
    #: Round ids with neither.
    without_board: list[int] = field(default_factory=list)
    #: Ended rounds whose board still shows bid, bet, cancel or Grab buttons: which
    #: message, and whether it is the round's board or one it was reposted from.
    live_after_end: list[str] = field(default_factory=list)
    #: The most messages sent to one group within any 60 s, and that group.
    most_a_minute: int = 0
    busiest_group: int = 0
    #: Processes the workers started that still ran after the last kill.
    strays: list[str] = field(default_factory=list)
    #: What the ledger's checks found (``tests/helpers/game.py``), empty when they hold.
    ledger_problems: list[str] = field(default_factory=list)
    #: Chips credited less the chips the groups' accounts hold (the mint's aside).
    chips_lost: int = 0
    #: Round ids still open after the tables closed and ``end_seconds`` passed.
    stuck: list[int] = field(default_factory=list)
    kills: int = 0
    updates_redelivered: int = 0
    worker_skipped: int = 0
    forwarded: list[int] = field(default_factory=list)
    #: Messages a bot sent to a group another bot serves: (bot, group, count).
    foreign: list[tuple[int, int, int]] = field(default_factory=list)
    #: Messages each bot sent to its own groups, by bot.
    own_sends: list[int] = field(default_factory=list)
    #: When each kill came (wall clock, as the fakes' transcripts) and which worker it hit.
    kill_times: list[tuple[float, int]] = field(default_factory=list)
    #: Each message of ``live_after_end``: what the bot did to it, in order, each action's
    #: time from the round's end and the live buttons it left, and the kills near them.
    live_histories: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """Every figure in one line."""
        return (
            f"soak: {self.rounds} rounds ({self.settled} settled, {self.void} void), "
            f"{self.kills} kills; without a board {len(self.without_board)} "
            f"(boarded {self.boarded}, results only {self.results_only}); "
            f"ended with live buttons {len(self.live_after_end)}; "
            f"most messages a minute in a group {self.most_a_minute} (limit {GROUP_LIMIT}); "
            f"stray processes {len(self.strays)}; ledger problems {len(self.ledger_problems)}; "
            f"chips lost {self.chips_lost}; rounds stuck {len(self.stuck)}; "
            f"updates redelivered {self.updates_redelivered}, posts to a down worker "
            f"{self.worker_skipped}, forwarded {self.forwarded}; "
            f"sends into another bot's group {len(self.foreign)}, "
            f"into its own groups by bot {self.own_sends}"
        )

    def details(self) -> str:
        """What each figure that is not as it must be is made of, a line each."""
        named = {
            "rounds without a board": self.without_board,
            "ended with live buttons": self.live_after_end,
            "their histories": self.live_histories,
            "stray processes": self.strays,
            "ledger problems": self.ledger_problems,
            "rounds stuck": self.stuck,
            "sends into another bot's group": self.foreign,
        }
        return "\n".join(f"{name}: {items}" for name, items in named.items() if items)


def chat_of(group: int) -> int:
    return -(1_002_000_000_000 + group)


def person(group: int, index: int) -> JsonDict:
    """Index 0 is the group's dealer, 1.. its bettors."""
    return {"id": 2_000_000 + group * 100 + index, "first_name": f"S{group}P{index}"}


@contextlib.asynccontextmanager
async def scratch_database(admin_url: str) -> AsyncIterator[str]:
    """A new, migrated PostgreSQL database on the server of ``admin_url``, dropped after."""
    plain = make_url(admin_url).set(drivername="postgresql")
    name = f"niuniu_soak_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(plain.render_as_string(hide_password=False), timeout=3)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = plain.set(database=name).render_as_string(hide_password=False)
        await upgrade_async(url)
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


# -- the workers --------------------------------------------------------------------------


class Worker:
    """One bot process in webhook mode, with its own webhook and web ports, kept over
    restarts (the load balancer knows them)."""

    def __init__(
        self,
        index: int,
        fake: FakeTelegram,
        folder: Path,
        database_url: str,
        marker: str,
        more_tokens: tuple[str, ...] = (),
    ) -> None:
        #: Its log is ``worker{index}.log``.
        self.index = index
        self.webhook_port = free_port()
        self.web_port = free_port()
        config = write_config(folder / f"worker{index}.toml", game=SOAK_GAME, replies_per_minute=10)
        with config.open("a", encoding="utf-8") as out:
            out.write(
                'mode = "webhook"\n\n[telegram.webhook]\nlisten = "127.0.0.1"\n'
                f'port = {self.webhook_port}\npublic_url = "https://soak.invalid"\n'
                f'path = "telegram"\nsecret_token = "{SECRET}"\n'
            )
        env = {"NIUNIU_WEB_LISTEN": f"127.0.0.1:{self.web_port}", MARKER: marker}
        if more_tokens:  # beside the fake's own (NIUNIU_TELEGRAM_TOKEN), served by it too
            env["NIUNIU_TELEGRAM_TOKENS"] = ",".join(more_tokens)
        self.bot = BotProcess(fake, config, database_url, folder / f"worker{index}.log", env)
        self.up = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.webhook_port}"

    async def _ready(self) -> bool:
        """``/readyz``: the webhook is set and the database takes writes."""
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session,
                session.get(f"http://127.0.0.1:{self.web_port}/readyz") as answer,
            ):
                return answer.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def start(self) -> None:
        await self.bot.start(ready=self._ready)
        self.up = True

    async def kill(self) -> None:
        self.up = False
        await self.bot.kill()


class Killer:
    """Kills a worker every few seconds (``Plan.kill_every``) and starts it again."""

    def __init__(self, workers: list[Worker], plan: Plan, rng: random.Random) -> None:
        self.workers, self.plan, self.rng = workers, plan, rng
        self.kills = 0
        #: (wall clock, worker index) of each kill.
        self.kill_times: list[tuple[float, int]] = []
        self._starts: set[asyncio.Task[None]] = set()

    async def run(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        turn = 0
        try:
            while loop.time() < until:
                await asyncio.sleep(self.rng.uniform(*self.plan.kill_every))
                if self.plan.alternate:
                    await self.restarted()
                    target = self.workers[turn % len(self.workers)]
                    turn += 1
                else:
                    up = [worker for worker in self.workers if worker.up]
                    if not up:
                        continue
                    target = self.rng.choice(up)
                if loop.time() >= until:
                    break
                self.kill_times.append((time.time(), target.index))
                await target.kill()
                self.kills += 1
                self._starts.add(asyncio.create_task(target.start()))
        finally:
            await self.restarted()

    async def restarted(self) -> None:
        """Wait for every start under way (a start that fails fails the soak)."""
        starts, self._starts = self._starts, set()
        await asyncio.gather(*starts)


# -- the players ----------------------------------------------------------------------------


class Group:
    """One group's dealer and bettors, acting on what the group shows: the dealer presses a
    board's first bid button, each bettor one of its bet buttons, everyone its Grab button,
    each once a round; ``/newround`` when no round has been open for a while."""

    def __init__(self, fake: FakeTelegram, service: GameService, group: int, plan: Plan) -> None:
        self.fake, self.service = fake, service
        self.chat = chat_of(group)
        self.dealer = person(group, 0)
        self.bettors = [person(group, i) for i in range(1, plan.players + 1)]
        self._pressed: set[tuple[int, str, int]] = set()

    async def set_up(self) -> None:
        """Open the table and credit everyone, as an admin would (without using the group's
        messages)."""
        await self.service.set_open(self.chat, ADMIN, True)
        for who in [self.dealer, *self.bettors]:
            await self.service.credit(self.chat, ADMIN, who["id"], CREDIT_CENTS)

    @property
    def credited(self) -> int:
        return CREDIT_CENTS * (1 + len(self.bettors))

    async def play(self, until: float, *, new_rounds: bool) -> None:
        """Play until ``until`` (``new_rounds``: start one when none is open; else only
        until the group has no open round)."""
        loop = asyncio.get_running_loop()
        quiet_since = asked = loop.time()
        while loop.time() < until:
            self._press_what_shows()
            if await self.service.current_round(self.chat) is not None:
                quiet_since = loop.time()
            elif not new_rounds:
                return
            elif loop.time() - max(quiet_since, asked) >= NEWROUND_AFTER_SECONDS:
                self.fake.post_message(self.chat, self.dealer, "/newround", chat_title="Soak")
                asked = loop.time()
            await asyncio.sleep(LOOK_SECONDS)

    def _press_what_shows(self) -> None:
        for message_id, state in self.fake.messages(self.chat).items():
            for row in (state.get("reply_markup") or {}).get("inline_keyboard", []):
                for button in row:
                    found = BUTTON.match(button.get("callback_data", ""))
                    if found is not None:
                        self._press(message_id, int(found[1]), found[2], found[0])

    def _press(self, message_id: int, round_id: int, action: str, data: str) -> None:
        if action == "bid":
            people = [self.dealer]
        elif action == "bet":
            people = self.bettors
        elif action == "grab":
            people = [self.dealer, *self.bettors]
        else:
            return
        for who in people:
            key = (round_id, action, who["id"])
            if key not in self._pressed:
                self._pressed.add(key)
                self.fake.press_button(self.chat, message_id, who, data)


# -- what the group saw --------------------------------------------------------------------


def live_actions(markup: JsonDict | None) -> dict[int, set[str]]:
    """The bid, bet, cancel and Grab buttons a reply markup shows, by round."""
    found: dict[int, set[str]] = {}
    for row in (markup or {}).get("inline_keyboard", []):
        for button in row:
            match = BUTTON.match(button.get("callback_data", ""))
            if match is not None and match[2] in LIVE_ACTIONS:
                found.setdefault(int(match[1]), set()).add(match[2])
    return found


def history(
    transcript: list[JsonDict], message_id: int, round_id: int, ended_at: float, figures: Figures
) -> str:
    """What the bot did to one message, each action's time from the round's end (s) and
    the round's live buttons it left, and the kills within a few seconds of them."""
    actions = [entry for entry in transcript if entry["message_id"] == message_id]
    steps = [
        f"{entry['kind']} {entry['time'] - ended_at:+.2f} "
        f"[{'/'.join(sorted(live_actions(entry['reply_markup']).get(round_id, ()))) or '-'}]"
        for entry in actions
    ]
    times = [entry["time"] for entry in actions] or [ended_at]
    kills = [
        f"worker{worker} {at - ended_at:+.2f}"
        for at, worker in figures.kill_times
        if min(times) - 5 <= at <= max(times) + 5
    ]
    return f"message {message_id}: {', '.join(steps)}; kills {', '.join(kills) or 'none near'}"


def stray_processes(marker: str) -> list[str]:
    """Every process that runs (not a zombie) with ``MARKER=marker`` in its environment."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # it ended meanwhile, or it is not ours to read
        if stat[stat.rindex(")") + 2] in "ZX" or needle not in environ.split(b"\0"):
            continue
        shown = command.replace(b"\0", b" ").decode(errors="replace").strip()
        found.append(f"{entry} {shown}")
    return found


async def read_figures(database: Database, groups: list[Group], figures: Figures) -> Figures:
    """The rounds' figures from the groups' fakes' messages and the database (all but
    ``strays``, ``kills`` and ``foreign``)."""
    chats = {group.chat for group in groups}
    fake_of = {group.chat: group.fake for group in groups}
    async with database.transaction() as session:
        rows = (
            await session.execute(
                select(
                    RoundRow.id,
                    RoundRow.chat_id,
                    RoundRow.phase,
                    RoundRow.seed,
                    RoundRow.board_message_id,
                    RoundRow.ended_at_ms,
                ).where(RoundRow.chat_id.in_(chats))
            )
        ).all()
        accounts = (
            await session.execute(
                select(Account.kind, Account.balance).where(Account.chat_id.in_(chats))
            )
        ).all()
    transcripts = {chat: fake_of[chat].transcript(chat) for chat in chats}
    messages = {chat: fake_of[chat].messages(chat) for chat in chats}
    phases = Counter(str(row.phase) for row in rows)
    figures.rounds = len(rows)
    figures.settled, figures.void = phases["settled"], phases["void"]
    figures.boarded = figures.results_only = 0
    figures.without_board, figures.live_after_end, figures.stuck = [], [], []
    figures.live_histories = []
    for row in rows:
        sends = [e for e in transcripts[row.chat_id] if e["kind"] == "send"]
        boarded = any(row.id in live_actions(e["reply_markup"]) for e in sends) or (
            bool(row.board_message_id) and row.board_message_id in messages[row.chat_id]
        )
        seed = bytes(row.seed).hex()
        ended = str(row.phase) in ("settled", "void")
        if boarded:
            figures.boarded += 1
        elif ended and any(seed in (e["text"] or "") for e in sends):
            figures.results_only += 1
        else:
            figures.without_board.append(row.id)
        if not ended:
            figures.stuck.append(row.id)
            continue
        for message_id, message in messages[row.chat_id].items():
            actions = live_actions(message["reply_markup"]).get(row.id)
            if actions:
                which = "its board" if message_id == row.board_message_id else "an older board"
                figures.live_after_end.append(
                    f"round {row.id} ({row.phase}): message {message_id}, {which}, "
                    f"shows {'/'.join(sorted(actions))}"
                )
                ended_at = (row.ended_at_ms or 0) / 1000
                figures.live_histories.append(
                    history(transcripts[row.chat_id], message_id, row.id, ended_at, figures)
                )
    figures.most_a_minute, figures.busiest_group = max(
        (sliding_max([e["time"] for e in transcript if e["kind"] == "send"]), chat)
        for chat, transcript in transcripts.items()
    )
    held = sum(balance for kind, balance in accounts if kind != "mint")
    figures.chips_lost = sum(group.credited for group in groups) - held
    figures.ledger_problems = []
    try:
        await check_ledger(database)
    except AssertionError as problem:
        figures.ledger_problems.append(str(problem))
    return figures


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Bot:
    """One token: its fake Telegram, its workers behind a load balancer, its groups, and
    the service that sets its groups up (so that they are its own)."""

    fake: FakeTelegram
    service: GameService
    workers: list[Worker] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)


def token_of(bot: int) -> str:
    """The first bot's token is the fake's own; the others' follow it."""
    return f"{123_456 + bot}:TEST"


async def soak(plan: Plan, folder: Path, database_url: str) -> Figures:
    """Run ``plan`` on a migrated database of its own; what it showed."""
    rng = random.Random(plan.seed)
    marker = uuid.uuid4().hex
    database = Database.from_url(database_url)
    figures = Figures()
    try:
        async with contextlib.AsyncExitStack() as stack:
            bots: list[Bot] = []
            for index in range(plan.bots):
                token = token_of(index)
                fake = await stack.enter_async_context(
                    FakeTelegram(token=token, bot_username=f"niuniu_soak_{index}_bot")
                )
                service = GameService(database, Settings(), bot_id=int(token.split(":")[0]))
                bots.append(Bot(fake, service))
            shared = []
            if plan.one_process:
                more = tuple(bot.fake.token for bot in bots[1:])
                for bot in bots[1:]:
                    bots[0].fake.host(bot.fake)  # one API address for every token
                shared = [
                    Worker(w, bots[0].fake, folder, database_url, marker, more)
                    for w in range(plan.workers)
                ]
            for index, bot in enumerate(bots):
                bot.workers = shared or [
                    Worker(len(bots) * w + index, bot.fake, folder, database_url, marker)
                    for w in range(plan.workers)
                ]
                first = index * plan.groups
                bot.groups = [
                    Group(bot.fake, bot.service, group, plan)
                    for group in range(first, first + plan.groups)
                ]
            groups = [group for bot in bots for group in bot.groups]
            workers = list({id(w): w for bot in bots for w in bot.workers}.values())
            for group in groups:
                await group.set_up()
            for bot in bots:  # every group is known to every fake: a stray send would land
                for group in groups:
                    bot.fake.post_message(group.chat, group.dealer, "hello", chat_title="Soak")
            try:
                pushes = []
                # One process serves each bot at a path of its own; a process per bot, at one.
                paths = (
                    webhook_paths("telegram", [bot_id_of(bot.fake.token) for bot in bots])
                    if plan.one_process
                    else ["/telegram"] * len(bots)
                )
                for bot, path in zip(bots, paths, strict=True):
                    balancer = await stack.enter_async_context(
                        RoundRobin([worker.url for worker in bot.workers])
                    )
                    push = WebhookPush(bot.fake, f"{balancer.url}{path}", SECRET)
                    pushes.append((balancer, await stack.enter_async_context(push)))
                for worker in workers:
                    await worker.start()
                killer = Killer(workers, plan, rng)
                loop = asyncio.get_running_loop()
                until = loop.time() + plan.play_seconds
                await asyncio.gather(
                    killer.run(until), *(g.play(until, new_rounds=True) for g in groups)
                )
                figures.kills, figures.kill_times = killer.kills, killer.kill_times
                for group in groups:
                    await group.service.set_open(group.chat, ADMIN, False)
                end = loop.time() + plan.end_seconds
                await asyncio.gather(*(g.play(end, new_rounds=False) for g in groups))
                catch_up = loop.time() + plan.catch_up_seconds
                while loop.time() < catch_up:
                    await read_every_bots_figures(bots, database, figures)
                    waiting = any(push.waiting for _, push in pushes)
                    if not (figures.without_board or figures.live_after_end or waiting):
                        break
                    await asyncio.sleep(1.0)
                figures.updates_redelivered = sum(push.redelivered for _, push in pushes)
                figures.worker_skipped = sum(balancer.skipped for balancer, _ in pushes)
                figures.forwarded = [n for balancer, _ in pushes for n in balancer.forwarded]
            finally:
                for worker in workers:
                    await worker.kill()
            await read_every_bots_figures(bots, database, figures)
        gone_by = time.monotonic() + GONE_WITHIN_SECONDS
        while (strays := stray_processes(marker)) and time.monotonic() < gone_by:
            await asyncio.sleep(0.2)
        figures.strays = strays
    finally:
        await database.dispose()
    return figures


async def read_every_bots_figures(bots: list[Bot], database: Database, figures: Figures) -> None:
    """``read_figures`` over every bot's groups, and the sends of each bot into another
    bot's groups."""
    await read_figures(database, [group for bot in bots for group in bot.groups], figures)
    figures.foreign = []
    figures.own_sends = []
    for index, bot in enumerate(bots):
        own = {group.chat for group in bot.groups}
        figures.own_sends.append(
            sum(e["kind"] == "send" for chat in own for e in bot.fake.transcript(chat))
        )
        for other in bots:
            for group in other.groups:
                sends = [e for e in bot.fake.transcript(group.chat) if e["kind"] == "send"]
                if group.chat not in own and sends:
                    figures.foreign.append((index, group.chat, len(sends)))


def logs(folder: Path, tail: int = 4000) -> str:
    """The end of every worker's log, for a failing run."""
    return "\n".join(
        f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}"
        for path in sorted(folder.glob("worker*.log"))
    )


def settings_of(game: Mapping[str, Any]) -> str:
    """The windows a soak plays with, for its report."""
    keys = ("bid_seconds", "bet_seconds", "grab_seconds", "pause_seconds", "pictures")
    return ", ".join(f"{key} {game[key]}" for key in keys)
