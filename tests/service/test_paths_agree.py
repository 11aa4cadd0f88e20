"""A differential test: random commands through each path the service has write the same
rows.

A round step is run by the hot path (``Store.round_commands`` and ``Store.round_starts``,
on the bare drivers) when it covers the step, and by the general path (the round loaded
whole in a unit of work) otherwise; both write it as ``bot.store.round_writes``
describes. Hypothesis draws a sequence of commands across tables of every game (starts,
bids, bets placed, changed and cancelled, grabs, deadlines and sweeps, moved windows,
standing bets, client seeds, replayed updates); the sequence is played twice on fresh
databases, once by the service as it is and once with its hot paths switched off
(``HotPaths``), and every table of the schema must hold the same rows afterwards.

Each command is read against the table as it is (a bid while bidding, a grab by someone
who has not grabbed), so rounds get through their phases, re-deal and void; two runs that
wrote the same rows so far read the same tables, so they play the same commands.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.engine import round as engine
from bot.engine.errors import GameError
from bot.engine.round import Phase, Round, Transition
from bot.service.game import CommandResult, GameService, Person
from bot.service.round_steps import RoundCommand
from bot.store.db import Database
from bot.store.models import Base
from bot.store.round_commands import NotOnHotPath
from tests.helpers.controls import Clock, Seeds
from tests.helpers.databases import truncate
from tests.helpers.game import ADMIN, TEST_SETTINGS

#: A table of each game and dealer: tiny envelopes, where the dealer's 0.01 (a re-deal,
#: ``docs/rules.md`` §5) is frequent, with the bank or a bidder dealing; and the card games.
GROUP_SETTINGS: dict[int, dict[str, str]] = {
    -4001: {"envelope_mean_share": "0.02", "dealer_fee": "1", "rake": "10%", "rebate": "1%"},
    -4002: {"envelope_mean_share": "0.02", "dealer": "house", "pause_seconds": "0"},
    -4003: {"ruleset": "bullbull"},
    -4004: {"ruleset": "poker29", "dealer": "house"},
    -4005: {"ruleset": "poker29_vn"},
}
GROUPS = list(GROUP_SETTINGS)
PEOPLE = [Person(300 + i, f"Path{i}", f"path{i}") for i in range(5)]

#: A command: what kind, in which group, by whom, and a number that picks an amount.
Step = tuple[str, int, int, int]

#: Kinds of command, the usual ones more often than the odd ones.
KINDS = [
    *["everyone acts"] * 3,
    *["act"] * 2,
    "bid",
    "bet",
    "grab",
    "stale grab",
    "start",
    *["deadline"] * 3,
    "early deadline",
    "sweep",
    "move window",
    *["autobet"] * 2,
    "client seed",
    *["replay"] * 2,
]


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    """A sequence of commands at one to three of the tables (fewer tables, further
    rounds: each table's rounds get through their phases)."""
    tables = draw(st.lists(st.sampled_from(GROUPS), min_size=1, max_size=3, unique=True))
    step = st.tuples(
        st.sampled_from(KINDS),
        st.sampled_from(tables),
        st.integers(0, len(PEOPLE) - 1),
        st.integers(0, 5),
    )
    return draw(st.lists(step, min_size=10, max_size=40))


PATHS_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class _Retries:
    """Counts the service's retries: one means a stale round or a hot path that failed
    and fell back, neither of which commands played one at a time should meet."""

    def __init__(self) -> None:
        self.count = 0

    def database_retried(self) -> None:
        self.count += 1

    def command_failed(self, path: str) -> None:
        raise AssertionError(f"a round command failed on the {path} path")


class HotPaths:
    """The service's hot paths (round commands' and starts'), counted as they write (so
    that the test knows it compared something), or ``switched_off``: each round command
    and start then goes on to the general path, as one the hot path does not cover does."""

    def __init__(self, *, switched_off: bool) -> None:
        self.switched_off = switched_off
        self.steps = 0

    def watch(self, service: GameService) -> None:
        """Wrap ``service``'s hot paths (this instance's only)."""
        commands, starts = service.round_steps, service.round_starts
        run_hot, start_hot = commands._run_hot, starts._start_hot

        async def counted_run(command: RoundCommand) -> CommandResult:
            if self.switched_off:
                raise NotOnHotPath("switched off")
            result = await run_hot(command)
            self.steps += 1
            return result

        async def counted_start(
            chat_id: int, actor: Person | None, update_id: int | None
        ) -> Transition[Round]:
            if self.switched_off:
                raise NotOnHotPath("switched off")
            transition = await start_hot(chat_id, actor, update_id)
            self.steps += 1
            return transition

        commands._run_hot = counted_run  # type: ignore[method-assign]
        starts._start_hot = counted_start  # type: ignore[method-assign]


#: A database ready to play at the given tables, by its URL.
FreshDatabase = Callable[[set[int]], Awaitable[str]]

#: Every table's rows, by table name, as sorted lists.
Rows = dict[str, list[tuple[Any, ...]]]


def _comparable(value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


#: Surrogate keys the paths may legitimately number differently, by table: nothing refers
#: to a bet by its id (its key is the round and the player), and PostgreSQL's upsert of a
#: changed bet on the hot path takes a number from the sequence even though it updates.
UNCOMPARED = {"bets": "id"}


async def every_row(db: Database) -> Rows:
    """Every table of the schema, its rows sorted (by their text: columns may be NULL),
    without the ``UNCOMPARED`` columns."""
    rows: Rows = {}
    async with db.transaction() as session:
        for table in Base.metadata.sorted_tables:
            columns = [c for c in table.columns if c.name != UNCOMPARED.get(table.name)]
            found = (await session.execute(select(*columns))).all()
            rows[table.name] = sorted(
                (tuple(_comparable(value) for value in row) for row in found), key=repr
            )
    return rows


async def set_up(url: str, groups: Iterable[int] = GROUPS) -> None:
    """The tables opened with their games, each player's chips and each bank funded (by
    admins: no round path is involved, so a set-up database serves both runs)."""
    db = Database.from_url(url)
    service = GameService(db, TEST_SETTINGS, clock=Clock(), seed_source=Seeds())
    try:
        for chat_id in groups:
            changes = GROUP_SETTINGS[chat_id]
            await service.set_open(chat_id, ADMIN, True)
            for key, value in changes.items():
                await service.change_setting(chat_id, ADMIN, key, value, confirmed=True)
            for person in PEOPLE:
                await service.credit(chat_id, ADMIN, person.id, 100_000)
            await service.fund(chat_id, ADMIN, 20_000)
    finally:
        await db.dispose()


@dataclass
class Player:
    """Plays a sequence of steps through one service."""

    service: GameService
    clock: Clock
    update_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: The last command sent with an update id: sending it again must change nothing.
    last: tuple[Callable[[int], Awaitable[Any]], int] | None = None

    async def send(self, call: Callable[[int], Awaitable[Any]]) -> None:
        update_id = next(self.update_ids)
        try:
            await call(update_id)
        except GameError:
            return
        self.last = (call, update_id)

    async def play(self, step: Step) -> None:
        kind, group, who, pick = step
        service, person = self.service, PEOPLE[who]
        current = await service.current_round(group)
        if kind == "act":
            await self.act(group, person, pick, current)
        elif kind == "everyone acts":  # a busy table: each player in turn
            for turn in range(len(PEOPLE)):
                someone = PEOPLE[(who + turn) % len(PEOPLE)]
                await self.act(group, someone, (pick + turn) % 6, current)
                current = await service.current_round(group)
        elif kind == "bid":
            amount = [0, 1_000, 2_000, 5_000, 20_000, 10**6][pick]
            await self.send(lambda u: service.bid(group, person, amount, update_id=u))
        elif kind == "bet":
            amount = [0, 100, 300, 1_000, 5_000, 6_000][pick]
            await self.send(lambda u: service.bet(group, person, amount, update_id=u))
        elif kind in ("grab", "stale grab"):
            round_id = None if current is None else current.id - (kind == "stale grab")
            await self.send(lambda u: service.grab(group, person, round_id=round_id, update_id=u))
        elif kind == "start":
            await self.send(lambda u: service.start_round(group, actor=person, update_id=u))
        elif kind in ("deadline", "early deadline"):
            await self.next_deadline(early=kind == "early deadline")
        elif kind == "sweep":
            self.clock.advance([1, 2, 5, 10, 20, 40][pick])
            await service.sweep()
        elif kind == "move window" and current is not None:
            opens_at = self.clock() + pick * 1_000
            await service.move_window(current.id, current.phase, opens_at)
        elif kind == "autobet":
            amount = [0, 0, 100, 500, 1_000, 7_000][pick]
            await self.send(lambda u: service.set_autobet(group, person, amount, update_id=u))
        elif kind == "client seed":
            seed = f"seed-{who}-{pick}"
            await self.send(lambda u: service.set_client_seed(person, seed, update_id=u))
        elif kind == "replay" and self.last is not None:
            call, update_id = self.last
            await call(update_id)

    async def act(self, group: int, person: Person, pick: int, current: Round | None) -> None:
        """What players usually do: start a round, bid a little above the highest bid,
        bet (or change or cancel their bet), or grab as someone who has not grabbed."""
        service = self.service
        if current is None:
            await self.send(lambda u: service.start_round(group, actor=person, update_id=u))
        elif current.phase is Phase.BIDDING:
            amount = engine.minimum_bid(current) + pick * current.settings.bid_increment // 2
            await self.send(lambda u: service.bid(group, person, amount, update_id=u))
        elif current.phase is Phase.BETTING:
            if person.id == current.dealer_id:
                person = PEOPLE[(PEOPLE.index(person) + 1 + pick % 4) % len(PEOPLE)]
            has_bet = current.bet_of(person.id) is not None
            amount = [0 if has_bet else 300, 100, 200, 500, 1_000, 5_000][pick]
            await self.send(lambda u: service.bet(group, person, amount, update_id=u))
        else:
            waiting = [user for user in current.participants if current.grab_of(user) is None]
            if waiting:
                grabber = next(p for p in PEOPLE if p.id == waiting[pick % len(waiting)])
                round_id = current.id
                await self.send(
                    lambda u: service.grab(group, grabber, round_id=round_id, update_id=u)
                )

    async def next_deadline(self, *, early: bool) -> None:
        """The clock moves to the earliest deadline of the open rounds (or 1 ms before it)
        and that round is advanced; with none open, the pause passes and the sweep runs."""
        open_rounds = await self.service.open_rounds()
        if not open_rounds:
            self.clock.advance(TEST_SETTINGS.pause_seconds)
            await self.service.sweep()
            return
        due = min(open_rounds, key=lambda state: state.deadline_ms)
        target = due.deadline_ms - 1 if early else due.deadline_ms
        self.clock.now_ms = max(self.clock.now_ms, target)
        await self.service.advance(due.id)


@dataclass
class Run:
    """What one play of a sequence left: every row, and what its service counted."""

    rows: Rows
    hot_steps: int
    retries: int


async def play(url: str, sequence: list[Step], *, general_only: bool) -> Run:
    db = Database.from_url(url)
    retries = _Retries()
    service = GameService(db, TEST_SETTINGS, clock=Clock(), seed_source=Seeds(), observer=retries)
    hot_paths = HotPaths(switched_off=general_only)
    hot_paths.watch(service)
    assert isinstance(service.clock, Clock)
    player = Player(service, service.clock)
    try:
        for step in sequence:
            await player.play(step)
        return Run(await every_row(db), hot_paths.steps, retries.count)
    finally:
        await db.dispose()


def differences(hot: Rows, general: Rows) -> dict[str, dict[str, list[tuple[Any, ...]]]]:
    """The rows each run has and the other has not, by table."""
    found = {}
    for table in hot:
        only_hot = [row for row in hot[table] if row not in general[table]]
        only_general = [row for row in general[table] if row not in hot[table]]
        if only_hot or only_general:
            found[table] = {"hot path": only_hot, "general path": only_general}
    return found


def played_on_each_path(fresh_database: FreshDatabase, sequence: list[Step]) -> Run:
    """Play ``sequence`` on each path, each on a fresh database; check that every table
    holds the same rows. The hot path's run."""
    hot = asyncio.run(_on_fresh(fresh_database, sequence, general_only=False))
    general = asyncio.run(_on_fresh(fresh_database, sequence, general_only=True))
    assert hot.retries == 0, "a hot-path step failed and fell back (or met a stale round)"
    assert general.retries == 0
    assert general.hot_steps == 0
    assert differences(hot.rows, general.rows) == {}
    # Sorted lists of whole rows: the same rows the same number of times.
    assert hot.rows == general.rows
    return hot


async def _on_fresh(
    fresh_database: FreshDatabase,
    sequence: list[Step],
    *,
    general_only: bool,
) -> Run:
    groups = {group for _, group, _, _ in sequence}
    return await play(await fresh_database(groups), sequence, general_only=general_only)


def _column(rows: Rows, table: str, name: str) -> list[Any]:
    columns = [c.name for c in Base.metadata.tables[table].columns]
    columns = [c for c in columns if c != UNCOMPARED.get(table)]
    return [row[columns.index(name)] for row in rows[table]]


#: Rounds played through at a table the house deals and at one a bidder deals, with
#: standing bets: with the test's seeds, rounds settle, re-deal (the dealer's 0.01) and
#: void for want of bets. Random sequences reach a re-deal only now and then.
_ROUND = [("everyone acts", 0, 0), ("deadline", 0, 0), ("everyone acts", 0, 1)]
_ROUND += [("deadline", 0, 0), ("everyone acts", 0, 0), ("everyone acts", 0, 0)]
REDEALS: list[Step] = [("autobet", -4002, 1, 4), ("autobet", -4001, 2, 3)] + [
    (kind, group, who, pick)
    for _ in range(4)
    for group in (-4002, -4001)
    for kind, who, pick in _ROUND
]


def check_paths_agree(fresh_database: FreshDatabase) -> None:
    """Play rounds that re-deal, then Hypothesis's sequences, on each path."""
    redealt = played_on_each_path(fresh_database, REDEALS)
    assert "redeal" in _column(redealt.rows, "rounds", "void_reason")
    assert True in _column(redealt.rows, "bets", "standing")
    hot_steps = []

    @PATHS_SETTINGS
    @given(sequence=steps())
    def paths_agree(sequence: list[Step]) -> None:
        hot_steps.append(played_on_each_path(fresh_database, sequence).hot_steps)

    paths_agree()
    assert sum(hot_steps) > 0, "no step ran on the hot path: the runs compared nothing"


def test_paths_agree_on_sqlite(sqlite_template: Path, tmp_path: Path) -> None:
    # Set up once; each run plays on a copy of it.
    template = tmp_path / "set_up.db"
    shutil.copy(sqlite_template, template)
    asyncio.run(set_up(f"sqlite+aiosqlite:///{template}"))
    files = itertools.count()

    async def fresh_database(groups: set[int]) -> str:
        target = tmp_path / f"paths_{next(files)}.db"
        shutil.copy(template, target)
        return f"sqlite+aiosqlite:///{target}"

    check_paths_agree(fresh_database)


@pytest.mark.postgres
def test_paths_agree_on_postgres(postgres_url: str) -> None:
    async def fresh_database(groups: set[int]) -> str:
        # Only the tables played at: the set-up is much of a run here (no file to copy).
        await truncate(postgres_url)
        await set_up(postgres_url, groups)
        return postgres_url

    check_paths_agree(fresh_database)
