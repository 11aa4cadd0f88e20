"""``/readyz``'s database probe is a write: the bot is not ready while the database
refuses writes (SQLite's disk full, PostgreSQL read-only or down), and ready again once
it takes them; the probe's answer stands for a moment, shared by every caller meanwhile.

The full disk is a small tmpfs of the test's own, filled; PostgreSQL is a scratch cluster
of this module's own on a free port (never the shared server), made read-only with
``ALTER SYSTEM`` and a reload (as a standby refuses writes, every session at once), and
stopped.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.engine.settings import Settings
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.migrate import upgrade
from bot.web.server import Readiness
from tests.scratch import ScratchCluster, fill, scratch_cluster, small_disk

#: Longest the tests wait for a server's change to reach the bot's connections.
SETTLES_WITHIN_SECONDS = 15.0


def receiving() -> str | None:
    return None


async def problem_becomes(readiness: Readiness, wanted: str | None) -> str | None:
    """Probe until the answer is ``wanted`` (a reload reaches each session in its own
    time); the last answer, which the caller asserts."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLES_WITHIN_SECONDS
    problem = await readiness.problem()
    while problem != wanted and loop.time() < deadline:
        await asyncio.sleep(0.1)
        problem = await readiness.problem()
    return problem


async def test_the_probe_answers_once_for_every_caller_while_it_stands() -> None:
    answers: list[str | None] = ["SQLITE_FULL", None]
    probes = 0
    now = [100.0]

    async def database_check() -> str | None:
        nonlocal probes
        probes += 1
        await asyncio.sleep(0.01)  # callers meanwhile wait for this probe
        return answers[probes - 1]

    readiness = Readiness(database_check, receiving, cache_seconds=1.0, clock=lambda: now[0])
    problems = await asyncio.gather(*(readiness.problem() for _ in range(10)))
    assert problems == ["the database refuses writes (SQLITE_FULL)"] * 10
    now[0] += 0.5
    assert await readiness.problem() == "the database refuses writes (SQLITE_FULL)"
    assert probes == 1
    now[0] += 0.6  # the answer no longer stands: a new probe, and the database is back
    assert await readiness.problem() is None
    assert probes == 2


# -- SQLite on a full disk -----------------------------------------------------------


@pytest.fixture
def disk() -> Iterator[Path]:
    """A 4 MiB tmpfs, mounted for this test and gone after it."""
    with small_disk() as mount_point:
        yield mount_point


async def test_sqlite_on_a_full_disk_is_not_ready_until_there_is_room_again(
    disk: Path, sqlite_template: Path
) -> None:
    path = disk / "niuniu.db"
    shutil.copy(sqlite_template, path)
    database = Database.from_url(f"sqlite+aiosqlite:///{path}")
    try:
        service = GameService(database, Settings())
        readiness = Readiness(service.database_refuses_writes, receiving, cache_seconds=0)
        assert await readiness.problem() is None
        filler = fill(disk)
        assert await readiness.problem() == "the database refuses writes (SQLITE_FULL)"
        filler.unlink()
        assert await readiness.problem() is None
    finally:
        await database.dispose()


# -- PostgreSQL read-only, and down ------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[ScratchCluster]:
    with scratch_cluster() as scratch:
        upgrade(scratch.url)
        yield scratch


@pytest.fixture
async def readiness(cluster: ScratchCluster) -> AsyncIterator[Readiness]:
    database = Database.from_url(cluster.url)
    try:
        service = GameService(database, Settings())
        yield Readiness(service.database_refuses_writes, receiving, cache_seconds=0)
    finally:
        await database.dispose()


@pytest.mark.postgres
async def test_postgresql_read_only_is_not_ready_until_it_takes_writes_again(
    cluster: ScratchCluster, readiness: Readiness
) -> None:
    assert await readiness.problem() is None  # the bot's connections open meanwhile
    await cluster.admin("ALTER SYSTEM SET default_transaction_read_only = on")
    await cluster.admin("SELECT pg_reload_conf()")
    refused = "the database refuses writes (ReadOnlySQLTransactionError)"
    try:
        assert await problem_becomes(readiness, refused) == refused
    finally:
        await cluster.admin("ALTER SYSTEM RESET default_transaction_read_only")
        await cluster.admin("SELECT pg_reload_conf()")
    assert await problem_becomes(readiness, None) is None


@pytest.mark.postgres
async def test_postgresql_down_is_not_ready_until_it_is_back(
    cluster: ScratchCluster, readiness: Readiness
) -> None:
    assert await readiness.problem() is None
    await asyncio.to_thread(cluster.stop)
    try:
        problem = await readiness.problem()
        assert problem is not None and problem.startswith("the database does not answer (")
    finally:
        await asyncio.to_thread(cluster.start)
    assert await problem_becomes(readiness, None) is None
