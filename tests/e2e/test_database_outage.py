"""The database goes away under a playing bot, and comes back.

PostgreSQL: a scratch cluster of the test's own (``tests/scratch.py``; never the shared
server) is stopped (``STOP_MODE``) for ``OUTAGE_SECONDS`` while two groups play. SQLite:
the bot's file is on a small tmpfs that the test fills, then frees. Meanwhile players keep
sending commands and pressing a button: each gets one answer, the
``error.database_unavailable`` line (a toast of it for the button; on a full disk a read
is answered as usual), and ``/readyz`` is 503. Once the database takes writes again, the
rounds that were due move on, new ones start, commands are answered as before, no chip is
lost and no round is stuck. Each test prints its figures (``pytest -rA`` shows them).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from sqlalchemy import func, select

from bot.engine.round import Phase, Round, next_round
from bot.store.models import Account, Posting, RoundRow
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    JsonDict,
    change_setting,
    eventually,
    open_table,
    running_bot,
    shown,
    start_round,
    user,
)
from tests.helpers.ports import free_port
from tests.scratch import ScratchCluster, fill, scratch_cluster, small_disk

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: How long PostgreSQL stays down: the length of the outage the issue describes.
OUTAGE_SECONDS = 15.0
#: How PostgreSQL stops: ``immediate`` drops every session unannounced, as a crash or
#: a pulled cable does, and the next start recovers from its log.
STOP_MODE = "immediate"
#: How often each group gets a command (or a press) while the database is away.
PACE_SECONDS = 2.5
#: Betting outlasts setting up both groups, so that the database goes away with their
#: rounds open; the window ends while it is away, and once it is back the rounds move on
#: within one.
WINDOW_SECONDS = 5
GAME = {**FAST_GAME, "bet_seconds": WINDOW_SECONDS}
#: How long the SQLite disk stays full: a few of each command, no more.
FULL_SECONDS = 8.0
#: The SQLite disk: room for the bot's database, soon full.
DISK_SIZE = "16m"
#: An open round this long past its deadline is stuck (the sweep runs every 0.2 s).
STUCK_AFTER_MS = 5_000
#: Long enough for every answer, folded ones included, to find a slot in its group.
ANSWERED_WITHIN_SECONDS = 60.0


@dataclass(frozen=True)
class Ask:
    """Something a player sends while the database is away: ``text`` from ``role``
    (``admin``, ``dealer``, or one of the bettors in turn) as a reply to a bettor's
    greeting if ``to_greeting``, or for ``text`` None a press of the board's quick bet of
    20; ``reads``: it only reads, which a full disk leaves alone."""

    role: str
    text: str | None
    to_greeting: bool = False
    reads: bool = False


#: What the players send in turn while PostgreSQL is down: every kind the issue names.
WHILE_DOWN = (
    Ask("bettor", "/bet 10"),
    Ask("bettor", "/balance", reads=True),
    Ask("dealer", "/bid 150"),
    Ask("bettor", None),
)


@dataclass(frozen=True, eq=False)
class Table:
    """A group that plays through the outage: its admin, dealer and two bettors, its
    own ``settings``, and what they send while the database is away (compared by
    identity: each is a key of the test's boards)."""

    chat_id: int
    admin: JsonDict
    dealer: JsonDict
    bettors: tuple[JsonDict, JsonDict]
    asks: tuple[Ask, ...]
    settings: Mapping[str, str] = field(default_factory=dict)

    @property
    def people(self) -> list[JsonDict]:
        return [self.dealer, *self.bettors]

    def sender(self, ask: Ask, step: int) -> JsonDict:
        if ask.role == "admin":
            return self.admin
        return self.dealer if ask.role == "dealer" else self.bettors[step % 2]


def table(number: int, asks: tuple[Ask, ...], **settings: str) -> Table:
    base = 900 + 10 * number
    return Table(
        chat_id=-1_001_000_000_900 - number,
        admin=user(base, "Ada", f"ada_{number}"),
        dealer=user(base + 1, "Bao"),
        bettors=(user(base + 2, "Chen"), user(base + 3, "Dewi")),
        asks=asks,
        settings=settings,
    )


@dataclass(frozen=True)
class Asked:
    """A command or press sent while the database was away."""

    table: Table
    ask: Ask
    who: JsonDict
    update: JsonDict

    @property
    def is_press(self) -> bool:
        return "callback_query" in self.update


@dataclass(frozen=True)
class Board:
    """An open round, the message showing its quick bets, and a bettor's greeting."""

    round: Round
    message_id: int
    greeting: int

    @property
    def data(self) -> str:
        return f"{self.round.id}:bet:2000"


async def into_betting(e2e: E2E, group: Table) -> Board:
    """Open the table, start a round, the dealer bids and a bettor bets."""
    greetings = await open_table(
        e2e, group.chat_id, group.admin, group.people, settings=group.settings
    )
    state = await start_round(e2e, group.chat_id, group.dealer)
    e2e.say(group.chat_id, group.dealer, "/bid 100")
    await e2e.wait_phase(group.chat_id, Phase.BETTING, state.id)
    e2e.say(group.chat_id, group.bettors[0], "/bet 5")
    state = await e2e.wait_bets(group.chat_id, 1)
    board = await e2e.wait_button(group.chat_id, f"{state.id}:bet:2000")
    return Board(state, board, greetings[group.bettors[1]["id"]])


async def readyz(port: int) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/readyz") as response,
    ):
        return response.status


async def ask_while_away(
    e2e: E2E,
    boards: dict[Table, Board],
    web_port: int,
    away: Callable[[], bool],
) -> tuple[list[Asked], list[int]]:
    """While ``away()``: every ``PACE_SECONDS`` each group's next player sends the next
    of its ``asks``; then ``/readyz`` is asked. What was sent, and each ``/readyz`` status."""
    asked: list[Asked] = []
    statuses: list[int] = []
    step = 0
    while away():
        for group, board in boards.items():
            ask = group.asks[step % len(group.asks)]
            who = group.sender(ask, step)
            if ask.text is None:
                update = e2e.press(group.chat_id, board.message_id, who, board.data)
            else:
                reply_to = board.greeting if ask.to_greeting else None
                update = e2e.say(group.chat_id, who, ask.text, reply_to)
            asked.append(Asked(group, ask, who, update))
        step += 1
        await asyncio.sleep(PACE_SECONDS)
        if away():
            statuses.append(await readyz(web_port))
    return asked, statuses


def answers(e2e: E2E, asked: list[Asked], since: float) -> list[str | None]:
    """The answer each of ``asked`` has got so far (None: none yet): a press's toast; a
    command's reply or, in a message answering several people (each line led by whom it
    answers), its sender's next line."""
    found: list[str | None] = []
    lines: dict[tuple[int, int], list[str]] = {}
    for group in {entry.table for entry in asked}:
        names = {shown(who): who["id"] for who in group.people}
        leading = re.compile("^(" + "|".join(map(re.escape, names)) + "): (.+)$")
        for sent in e2e.sends(group.chat_id):
            if sent["time"] < since or sent["reply_to_message_id"] is not None:
                continue
            matched = [leading.match(line) for line in sent["plain_text"].splitlines()]
            if matched and all(matched):
                for match in matched:
                    assert match is not None
                    key = (group.chat_id, names[match[1]])
                    lines.setdefault(key, []).append(match[2])
    for entry in asked:
        if entry.is_press:
            toast = e2e.answer_of(entry.update)
            found.append(None if toast is None else str(toast["text"]))
            continue
        reply = e2e.reply_of(entry.table.chat_id, entry.update["message"]["message_id"])
        if reply is not None:
            found.append(str(reply["plain_text"]))
            continue
        waiting = lines.get((entry.table.chat_id, entry.who["id"]), [])
        found.append(waiting.pop(0) if waiting else None)
    return found


async def all_answered(e2e: E2E, asked: list[Asked], since: float) -> list[str]:
    def every() -> list[str] | None:
        got = answers(e2e, asked, since)
        return [text for text in got if text is not None] if None not in got else None

    def unanswered() -> str:
        return f"{answers(e2e, asked, since).count(None)} not answered\n{e2e.bot.log()}"

    return await eventually(
        every, timeout=ANSWERED_WITHIN_SECONDS, what="every answer", on_timeout=unanswered
    )


async def moved_on(e2e: E2E, boards: list[Board], since: float) -> float:
    """Wait until each of ``boards``' rounds has moved on from where it was, within a
    window; the seconds from ``since`` until the last one did."""

    async def moved() -> bool:
        for board in boards:
            state = await e2e.service.round(board.round.id)
            if state is None or state.version == board.round.version:
                return False
        return True

    await eventually(
        moved, timeout=WINDOW_SECONDS, what="the rounds to move on", on_timeout=e2e.bot.log
    )
    return time.monotonic() - since


async def play_on(e2e: E2E, group: Table, board: Board) -> None:
    """The group's round ends (settled or void) and the group is told so once, a new one
    starts (by itself after a settlement, else someone starts one), commands are answered
    as before (a write, a read); then the group's rounds come to an end."""
    ended = await e2e.wait_ended(board.round.id)
    texts = await e2e.texts(group.chat_id)
    seed = texts.message("results.seed", seed=ended.seed.hex(), round_id=ended.id)

    def closing() -> list[JsonDict]:
        return [sent for sent in e2e.sends(group.chat_id) if seed in sent["plain_text"]]

    await eventually(closing, what="the round's closing message", on_timeout=e2e.bot.log)
    assert len(closing()) == 1, [sent["plain_text"] for sent in e2e.sends(group.chat_id)]
    if next_round(ended, 0) is None:  # voided for want of bets: someone starts one
        e2e.say(group.chat_id, group.dealer, "/newround")

    async def started() -> int | None:
        # Looked for by id: by now the new round may have ended too (no one bid).
        newest = select(func.max(RoundRow.id)).where(RoundRow.chat_id == group.chat_id)
        found = await e2e.scalar(newest)
        return found if found is not None and found > ended.id else None

    await eventually(started, what="a new round", on_timeout=e2e.bot.log)
    await change_setting(e2e, group.chat_id, group.admin, "rake", "3%")
    who = group.bettors[1]
    balance = await e2e.service.balance(group.chat_id, who["id"])
    await e2e.expect_reply(
        group.chat_id,
        who,
        "/balance",
        "balance.group",
        name=shown(who),
        available=balance.available,
        held=balance.held,
    )

    async def quiet() -> bool:
        return await e2e.service.current_round(group.chat_id) is None

    await eventually(quiet, what="no open round", on_timeout=e2e.bot.log)


async def check_the_chips(e2e: E2E, groups: list[Table]) -> None:
    """Every chip credited is still there, in a ledger that adds up, and no round is
    stuck."""
    for group in groups:
        total = 0
        for who in group.people:
            balance = await e2e.service.balance(group.chat_id, who["id"])
            assert balance.held == 0, (who, balance)
            total += balance.total
        house = await e2e.service.house_balance(group.chat_id)
        assert total + house == CREDIT_CENTS * len(group.people), (group.chat_id, total, house)
    async with e2e.database.transaction() as session:
        by_chat = (
            await session.execute(
                select(Account.chat_id, func.sum(Account.balance)).group_by(Account.chat_id)
            )
        ).all()
        postings = (
            select(Posting.account_id, func.sum(Posting.amount).label("total"))
            .group_by(Posting.account_id)
            .subquery()
        )
        cached_wrong = await session.scalar(
            select(func.count())
            .select_from(Account)
            .outerjoin(postings, postings.c.account_id == Account.id)
            .where(Account.balance != func.coalesce(postings.c.total, 0))
        )
        unbalanced = await session.scalar(
            select(func.count()).select_from(
                select(Posting.transaction_id)
                .group_by(Posting.transaction_id)
                .having(func.sum(Posting.amount) != 0)
                .subquery()
            )
        )
        stuck = await session.scalar(
            select(func.count())
            .select_from(RoundRow)
            .where(
                RoundRow.phase.in_([phase.value for phase in Phase if phase.is_open]),
                RoundRow.deadline_ms < int(time.time() * 1000) - STUCK_AFTER_MS,
            )
        )
    assert {chat_id for chat_id, _ in by_chat} >= {group.chat_id for group in groups}
    assert all(total == 0 for _, total in by_chat), by_chat
    assert (cached_wrong, unbalanced, stuck) == (0, 0, 0)


async def through_an_outage(
    e2e: E2E,
    groups: list[Table],
    web_port: int,
    *,
    go_away: Callable[[], Awaitable[None]],
    come_back: Callable[[], Awaitable[None]],
    away_seconds: float,
    reads_work: bool,
    what: str,
) -> None:
    """Play the groups into betting, take the database away for ``away_seconds`` while
    the players ask, bring it back; check every answer (the line, or for a read while
    ``reads_work`` its usual answer), the recovery and the chips."""
    playing = await asyncio.gather(*(into_betting(e2e, group) for group in groups))
    boards = dict(zip(groups, playing, strict=True))
    texts = await e2e.texts(groups[0].chat_id)
    line = texts.message("error.database_unavailable")
    started = time.time()
    await go_away()
    back_at = time.monotonic() + away_seconds
    asked, statuses = await ask_while_away(
        e2e, boards, web_port, lambda: time.monotonic() < back_at
    )
    # The rounds whose window ended while the database was away: stuck until it is back.
    overdue = [board for board in playing if board.round.deadline_ms < time.time() * 1000]
    answered_while_away = len(asked) - answers(e2e, asked, started).count(None)
    coming_back = time.monotonic()
    await come_back()
    back = time.monotonic()
    await e2e.reconnect()
    seconds = await moved_on(e2e, overdue, back)
    got = await all_answered(e2e, asked, started)
    expected = [
        "balance.group" if entry.ask.reads and reads_work else "error.database_unavailable"
        for entry in asked
    ]
    print(
        f"{what} for {away_seconds:g} s: {len(asked)} commands "
        f"({sum(a.is_press for a in asked)} button presses), {answered_while_away} answered "
        f"before it was back, {len(got)} in all, {got.count(line)} with the line "
        f"({expected.count('balance.group')} reads answered as usual); /readyz {statuses}; "
        f"back in {back - coming_back:.1f} s, and {len(overdue)} overdue rounds moved again "
        f"{seconds:.1f} s after that"
    )
    assert statuses and set(statuses) == {503}, statuses
    assert overdue, "no round's window ended while the database was away"
    assert [
        key for key, text in zip(expected, got, strict=True) if texts.match(text, key) is None
    ] == [], got
    for group, board in boards.items():
        await play_on(e2e, group, board)
    await check_the_chips(e2e, groups)


def fill_leaving_no_log(disk: Path, database: Path) -> list[Path]:
    """Fill ``disk`` with the database's write-ahead log empty (checkpointed, truncated):
    once checkpointed, SQLite writes into its log's old space again, so a full disk would
    take writes as long as they fit there. The files that fill it."""
    log = database.with_name(database.name + "-wal")
    fillers = []
    while True:
        with contextlib.closing(sqlite3.connect(database, timeout=10)) as connection:
            busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        fillers.append(fill(disk))
        # The bot may have written between the checkpoint and the last byte filled.
        if busy == 0 and log.stat().st_size == 0:
            return fillers


# -- the bot on each database ----------------------------------------------------------


@pytest.fixture
def web_port() -> int:
    return free_port()


@pytest.fixture
def cluster() -> Iterator[ScratchCluster]:
    with scratch_cluster() as scratch:
        yield scratch


@pytest.fixture
def disk() -> Iterator[Path]:
    with small_disk(DISK_SIZE) as mount_point:
        yield mount_point


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(request: pytest.FixtureRequest, tmp_path: Path, web_port: int) -> AsyncIterator[E2E]:
    """A bot of the test's own on the database it names (``indirect``): ``postgres``, a
    scratch cluster (``cluster``), which the bot migrates as it starts; ``sqlite``, a file
    on the small disk (``disk``)."""
    if request.param == "postgres":
        database_url = request.getfixturevalue("cluster").url
    else:
        database_url = f"sqlite+aiosqlite:///{request.getfixturevalue('disk') / 'niuniu.db'}"
    async with running_bot(
        tmp_path,
        game=GAME,
        database_url=database_url,
        env={"NIUNIU_WEB_LISTEN": f"127.0.0.1:{web_port}"},
    ) as session:
        yield session


@pytest.mark.postgres
@pytest.mark.parametrize("e2e", ["postgres"], indirect=True)
async def test_postgresql_down_is_answered_and_play_resumes_once_it_is_back(
    e2e: E2E, cluster: ScratchCluster, web_port: int
) -> None:
    await through_an_outage(
        e2e,
        [table(1, WHILE_DOWN), table(2, WHILE_DOWN)],
        web_port,
        go_away=lambda: asyncio.to_thread(cluster.stop, STOP_MODE),
        come_back=lambda: asyncio.to_thread(cluster.start),
        away_seconds=OUTAGE_SECONDS,
        reads_work=False,
        what="PostgreSQL down",
    )


@pytest.mark.parametrize("e2e", ["sqlite"], indirect=True)
async def test_sqlite_on_a_full_disk_is_answered_and_play_resumes_once_there_is_room(
    e2e: E2E, disk: Path, web_port: int
) -> None:
    """A full disk refuses writes only: a command refused by the rules before it writes
    is refused as usual, a read is answered as usual. So one group's window ends while
    the disk is full (a deadline to apply later), and the other's stays open for bets."""
    deadline_passes = table(
        3, (Ask("admin", "/credit 1", to_greeting=True), Ask("bettor", "/balance", reads=True))
    )
    takes_bets = table(
        4,
        (
            Ask("bettor", "/bet 10"),
            Ask("bettor", None),
            Ask("admin", "/credit 1", to_greeting=True),
        ),
        bet_seconds=str(int(FULL_SECONDS) + 4),
    )
    fillers: list[Path] = []

    async def fill_up() -> None:
        fillers.extend(await asyncio.to_thread(fill_leaving_no_log, disk, disk / "niuniu.db"))

    async def free() -> None:
        for filler in fillers:
            filler.unlink()

    await through_an_outage(
        e2e,
        [deadline_passes, takes_bets],
        web_port,
        go_away=fill_up,
        come_back=free,
        away_seconds=FULL_SECONDS,
        reads_work=True,
        what="SQLite disk full",
    )
