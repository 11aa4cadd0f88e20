"""Servers and volumes of a test's own, to break on purpose: a PostgreSQL cluster on a
free port (stopped and started by the test, never the shared server) and a small tmpfs
(filled by the test, for a full disk).

Both need root here (``runuser`` to the ``postgres`` user, ``mount``); where that is
refused, the test is skipped, saying why.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from tests.helpers.ports import free_port

POSTGRES_BIN = Path("/usr/lib/postgresql")


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

    def create_database(self, name: str) -> None:
        """``createdb``: no event loop needed, so a fixture may run inside one."""
        self._as_postgres(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), name)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        log = str(self.folder / "server.log")
        data = str(self.folder / "data")
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start"
        )

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode``: ``fast`` ends every session and checkpoints,
        ``immediate`` drops them as a crash does."""
        data = str(self.folder / "data")
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", data, "-m", mode, "-w", "stop")

    async def admin(self, sql: str) -> None:
        connection = await asyncpg.connect(self.admin_dsn, timeout=5)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()


@contextlib.contextmanager
def scratch_cluster() -> Iterator[ScratchCluster]:
    """A new cluster, started, with an empty database ``niuniu`` (``ScratchCluster.url``);
    stopped and removed afterwards."""
    if subprocess.run(["id", "postgres"], capture_output=True).returncode != 0:
        pytest.skip("no postgres user to run a scratch cluster as")
    folder = Path(tempfile.mkdtemp(prefix="niuniu-pg-"))
    shutil.chown(folder, "postgres")
    scratch = ScratchCluster(folder, free_port())
    try:
        scratch.create()
        scratch.start()
        scratch.create_database("niuniu")
        yield scratch
    finally:
        with contextlib.suppress(AssertionError):  # stopped already
            scratch.stop()
        shutil.rmtree(folder)


@contextlib.contextmanager
def small_disk(size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size``, mounted for the test and gone after it."""
    mount_point = Path(tempfile.mkdtemp(prefix="niuniu-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
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
    """A new file that takes every free byte of ``disk``."""
    filler = disk / f"filler-{len(list(disk.glob('filler-*')))}"
    # Unbuffered: closing the file then has nothing left to write (it would fail too).
    with filler.open("wb", buffering=0) as file, contextlib.suppress(OSError):  # ENOSPC: full
        while True:
            file.write(bytes(64 << 10))
    return filler
