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
import contextlib
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from bot.engine.settings import Settings
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.migrate import upgrade
from bot.web.server import Readiness

POSTGRES_BIN = Path("/usr/lib/postgresql")
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
def small_disk() -> Iterator[Path]:
    """A 4 MiB tmpfs, mounted for this test and gone after it."""
    mount_point = Path(tempfile.mkdtemp(prefix="niuniu-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)
        mount_point.rmdir()


def fill(disk: Path) -> Path:
    """A file that takes every free byte of ``disk``."""
    filler = disk / "filler"
    with filler.open("wb") as file, contextlib.suppress(OSError):  # ENOSPC: full
        while True:
            file.write(bytes(64 << 10))
            file.flush()
    return filler


async def test_sqlite_on_a_full_disk_is_not_ready_until_there_is_room_again(
    small_disk: Path, sqlite_template: Path
) -> None:
    path = small_disk / "niuniu.db"
    shutil.copy(sqlite_template, path)
    database = Database.from_url(f"sqlite+aiosqlite:///{path}")
    try:
        service = GameService(database, Settings())
        readiness = Readiness(service.database_refuses_writes, receiving, cache_seconds=0)
        assert await readiness.problem() is None
        filler = fill(small_disk)
        assert await readiness.problem() == "the database refuses writes (SQLITE_FULL)"
        filler.unlink()
        assert await readiness.problem() is None
    finally:
        await database.dispose()


# -- PostgreSQL read-only, and down ------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ScratchCluster:
    """A PostgreSQL cluster of the tests' own, run as the ``postgres`` user."""

    def __init__(self, folder: Path, port: int) -> None:
        versions = sorted(POSTGRES_BIN.glob("*/bin/pg_ctl"))
        if not versions:
            pytest.skip(f"no PostgreSQL server binaries under {POSTGRES_BIN}")
        self.bin = versions[-1].parent
        self.folder = folder
        self.port = port
        self.url = f"postgresql+asyncpg://postgres@127.0.0.1:{port}/niuniu"
        self.admin_dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def _as_postgres(self, *command: str) -> None:
        done = subprocess.run(
            ["runuser", "-u", "postgres", "--", *command], capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command[0]} failed: {done.stdout}{done.stderr}"

    def create(self) -> None:
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(self.folder / "data"), "--auth=trust", "-U",
            "postgres",
        )  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        log = str(self.folder / "server.log")
        data = str(self.folder / "data")
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start"
        )

    def stop(self) -> None:
        data = str(self.folder / "data")
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop")

    async def admin(self, sql: str) -> None:
        connection = await asyncpg.connect(self.admin_dsn, timeout=5)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[ScratchCluster]:
    if subprocess.run(["id", "postgres"], capture_output=True).returncode != 0:
        pytest.skip("no postgres user to run a scratch cluster as")
    folder = Path(tempfile.mkdtemp(prefix="niuniu-pg-"))
    shutil.chown(folder, "postgres")
    scratch = ScratchCluster(folder, free_port())
    try:
        scratch.create()
        scratch.start()
        asyncio.run(scratch.admin("CREATE DATABASE niuniu"))
        upgrade(scratch.url)
        yield scratch
    finally:
        with contextlib.suppress(AssertionError):  # stopped already
            scratch.stop()
        shutil.rmtree(folder)


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
