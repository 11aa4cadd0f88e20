"""A restart in the middle of a round loses nothing and finishes the round exactly once.

The process is "killed": its ``Database`` is disposed without finishing anything, and a
brand-new ``Database`` and ``GameService`` start on the same database (the same SQLite
file, or the same PostgreSQL database). The clock moves past the deadlines and
``recover()`` and ``sweep()`` run, more than once. One SQLite test kills a real child
process with SIGKILL in the middle of a command.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
from pathlib import Path

import pytest

from bot.engine.round import Phase, RoundSettled
from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    check_all,
    find_seed,
    open_table,
    round_ends,
    round_transactions,
)

REPO = Path(__file__).resolve().parents[2]
P0, P1, P2, P3 = PLAYERS[:4]
CREDITED = {DEALER.id: 100_000, P0.id: 50_000, P1.id: 50_000}


async def chips(service: GameService, user_id: int) -> int:
    balance = await service.balance(GROUP, user_id)
    return balance.available + balance.held


@pytest.mark.parametrize("phase", ["bidding", "betting", "grabbing"])
async def test_a_round_interrupted_in_any_phase_finishes_once_after_a_restart(
    database_url: str, clock: Clock, seeds: Seeds, phase: str
) -> None:
    seeds.queued.append(find_seed(3, 1_500, lambda shares: shares[-1] != 1))  # no re-deal
    before = Database.from_url(database_url)
    service = GameService(before, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    for user_id, amount in CREDITED.items():
        await service.credit(GROUP, ADMIN, user_id, amount)
    started = (await service.start_round(GROUP, actor=ADMIN)).round
    assert started is not None
    round_id = started.id
    await service.bid(GROUP, DEALER, 10_000)
    if phase != "bidding":
        clock.advance(TEST_SETTINGS.bid_seconds)
        await service.advance(round_id)
        await service.bet(GROUP, P0, 500)
        await service.bet(GROUP, P1, 1_000)
    if phase == "grabbing":
        clock.advance(TEST_SETTINGS.bet_seconds)
        await service.advance(round_id)
        await service.grab(GROUP, P1, round_id=round_id)
    interrupted = await service.round(round_id)
    assert interrupted is not None and interrupted.phase.value == phase
    await before.dispose()  # killed: nothing more from this process

    after = Database.from_url(database_url)
    try:
        restarted = GameService(after, TEST_SETTINGS, clock=clock, seed_source=seeds)
        # Straight after the start nothing is due: the open round is listed to reschedule.
        results, open_rounds = await restarted.recover()
        assert results == []
        assert [state.id for state in open_rounds] == [round_id]
        assert open_rounds[0] == interrupted
        if phase == "bidding":
            clock.advance(TEST_SETTINGS.bid_seconds)
            results, _ = await restarted.recover()
            assert results and results[0].round is not None
            assert results[0].round.phase is Phase.BETTING
            await restarted.bet(GROUP, P0, 500)
            await restarted.bet(GROUP, P1, 1_000)
        finished = []
        for _ in range(4):  # past every deadline and pause, again and again
            clock.advance(60)
            results, _ = await restarted.recover()
            finished += round_ends(results, round_id)
            finished += round_ends(await restarted.sweep(), round_id)
        assert [type(event) for event in finished] == [RoundSettled]
        stored = await restarted.round(round_id)
        assert stored is not None and stored.phase is Phase.SETTLED
        kinds = await round_transactions(after, round_id)
        assert kinds.count("settle") == 1 and "void" not in kinds
        lines = {line.user_id: line.net for line in await restarted.results(round_id)}
        assert set(lines) == {DEALER.id, P0.id, P1.id}
        for user_id, credited in CREDITED.items():
            assert await chips(restarted, user_id) == credited + lines[user_id]
        grab_order = [P1.id, P0.id, DEALER.id] if phase == "grabbing" else [P0.id, P1.id, DEALER.id]
        assert [grab.user_id for grab in stored.grabs] == grab_order
        await check_all(after)
    finally:
        await after.dispose()


CHILD = """
import asyncio, sys

from bot.service.game import GameService
from bot.store.db import Database
from bot.store.round_commands import RoundCommands
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table


async def main(url: str, start_ms: int) -> None:
    clock = Clock(start_ms)
    service = GameService(Database.from_url(url), TEST_SETTINGS, clock=clock, seed_source=Seeds())
    await open_table(service)
    await fund(service, DEALER, 100_000)
    for player in PLAYERS[:4]:
        await fund(service, player, 50_000)
    started = (await service.start_round(GROUP, actor=ADMIN)).round
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.id)
    for player in PLAYERS[:3]:
        await service.bet(GROUP, player, 500)
    original_write = RoundCommands._run_sqlite

    def write_then_hang(self, connection, job):
        applied = original_write(self, connection, job)
        # Inside the fourth bet's transaction, its writes made but not committed.
        print("READY", started.id, flush=True)
        sys.stdin.readline()  # blocks until the parent kills this process
        return applied

    RoundCommands._run_sqlite = write_then_hang
    await service.bet(GROUP, PLAYERS[3], 500)


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_a_process_killed_in_the_middle_of_a_bet_loses_nothing(
    sqlite_template: Path, tmp_path: Path
) -> None:
    path = tmp_path / "killed.db"
    shutil.copy(sqlite_template, path)
    url = f"sqlite+aiosqlite:///{path}"
    clock = Clock()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD,
        url,
        str(clock.now_ms),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stderr is not None
        line = await asyncio.wait_for(child.stdout.readline(), timeout=60)
        if not line.startswith(b"READY"):
            await child.wait()
            pytest.fail(f"child said {line!r}: {(await child.stderr.read()).decode()}")
        round_id = int(line.split()[1])
    finally:
        if child.returncode is None:
            child.kill()
        await child.wait()
    assert child.returncode == -signal.SIGKILL

    clock.advance(TEST_SETTINGS.bid_seconds)  # where the child's clock stood
    db = Database.from_url(url)
    try:
        service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=Seeds())
        await check_all(db)
        results, open_rounds = await service.recover()
        assert results == [] and [state.id for state in open_rounds] == [round_id]
        state = open_rounds[0]
        assert state.phase is Phase.BETTING
        # The three committed bets are there; the fourth, killed before its commit, is not.
        assert [(bet.user_id, bet.amount) for bet in state.bets] == [
            (player.id, 500) for player in PLAYERS[:3]
        ]
        balance = await service.balance(GROUP, P3.id)
        assert (balance.available, balance.held) == (50_000, 0)
        # The dead process left no lock behind: the player can bet now.
        await service.bet(GROUP, P3, 500)
        finished = []
        for _ in range(3):
            clock.advance(60)
            results, _ = await service.recover()
            finished += round_ends(results, round_id)
        assert len(finished) == 1
        stored = await service.round(round_id)
        assert stored is not None and stored.phase in (Phase.SETTLED, Phase.VOID)
        kinds = await round_transactions(db, round_id)
        assert kinds.count("settle") + kinds.count("void") == 1
        assert len(stored.grabs) == 5
        await check_all(db)
    finally:
        await db.dispose()
