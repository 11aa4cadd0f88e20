"""Start-up failures of the real command line (``python -m bot run`` and ``db upgrade``):
one line on stderr that names what to fix, a non-zero exit, no traceback, and the token
nowhere in the output.

Each test runs the CLI as a subprocess, as an operator would, against the project's fake
Telegram (or a port where nothing listens) and a database that cannot be used.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bot.fakegram.server import FakeTelegram
from tests.e2e.harness import REPO_ROOT
from tests.helpers.databases import POSTGRES_ADMIN_URL, REQUIRE_POSTGRES
from tests.helpers.ports import free_port

#: The token the fake Telegram knows, and one it does not: neither may ever be printed.
TOKEN = "987654321:AAHfakeTelegramKnowsThis_secret-1"
WRONG_TOKEN = "987654321:AAHnobodyKnowsThisOne_secret-2"
#: Longest a failing start may take (a loaded 2-core machine starts Python slowly).
EXIT_SECONDS = 60.0


@dataclass
class Finished:
    """What the command did: its exit code and output."""

    returncode: int
    stdout: str
    stderr: str

    def error_line(self) -> str:
        """stderr's only non-empty line, after checking that it is the only one."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, f"stderr is not one line:\n{self.stderr}"
        return lines[0]


def write_config(tmp_path: Path) -> Path:
    """A config file at the default log level; the rest comes from the environment."""
    path = tmp_path / "niuniu.toml"
    path.write_text('[bot]\nlog_level = "INFO"\n', encoding="utf-8")
    return path


def environment(**overrides: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("NIUNIU_") and key != "PYTHONSTARTUP"
    }
    env.update(PYTHONUNBUFFERED="1", **overrides)
    return env


async def start_cli(args: list[str], env: Mapping[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        cwd=REPO_ROOT,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def finish(process: asyncio.subprocess.Process) -> Finished:
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), EXIT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"the command still ran after {EXIT_SECONDS} s") from None
    assert process.returncode is not None
    return Finished(process.returncode, stdout.decode(), stderr.decode())


async def run_cli(args: list[str], **env: str) -> Finished:
    return await finish(await start_cli(args, environment(**env)))


def assert_failed_naming(finished: Finished, *words: str) -> str:
    """Exit 1, one line on stderr holding ``words``, no traceback, no token anywhere."""
    line = finished.error_line()
    assert finished.returncode == 1, finished.stderr
    assert line.startswith("niuniu-bot: error: "), line
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    output = finished.stdout + finished.stderr
    for secret in (TOKEN, WRONG_TOKEN, TOKEN.partition(":")[2], WRONG_TOKEN.partition(":")[2]):
        assert secret not in output
    return line


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN) as server:
        yield server


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bot.db'}"


async def run_bot(tmp_path: Path, fake: FakeTelegram, database_url: str) -> Finished:
    """``run`` with the right token against the fake and ``database_url``."""
    return await run_cli(
        ["run", "--config", str(write_config(tmp_path))],
        NIUNIU_TELEGRAM_TOKEN=TOKEN,
        NIUNIU_TELEGRAM_BASE_URL=fake.base_url,
        NIUNIU_DATABASE_URL=database_url,
    )


# -- Telegram ---------------------------------------------------------------------------


async def test_a_token_telegram_refuses_is_one_line_without_the_token(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    finished = await run_cli(
        ["run", "--config", str(write_config(tmp_path))],
        NIUNIU_TELEGRAM_TOKEN=WRONG_TOKEN,
        NIUNIU_TELEGRAM_BASE_URL=fake.base_url,
        NIUNIU_DATABASE_URL=sqlite_url(tmp_path),
    )
    assert_failed_naming(finished, "refused the bot token", "NIUNIU_TELEGRAM_TOKEN")
    assert [call["method"] for call in fake.calls] == ["getMe"]
    # Telegram is asked before the database is touched.
    assert not (tmp_path / "bot.db").exists()


async def test_an_unreachable_telegram_is_one_line(tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/bot"
    finished = await run_cli(
        ["run", "--config", str(write_config(tmp_path))],
        NIUNIU_TELEGRAM_TOKEN=TOKEN,
        NIUNIU_TELEGRAM_BASE_URL=base_url,
        NIUNIU_DATABASE_URL=sqlite_url(tmp_path),
    )
    assert_failed_naming(
        finished, f"cannot reach Telegram at {base_url}", "NIUNIU_TELEGRAM_BASE_URL"
    )


# -- the database -----------------------------------------------------------------------


async def test_a_postgresql_port_where_nothing_listens_is_one_line(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    port = free_port()
    finished = await run_bot(tmp_path, fake, f"postgresql://postgres@127.0.0.1:{port}/niuniu")
    assert_failed_naming(
        finished,
        f"cannot connect to PostgreSQL at 127.0.0.1:{port}: connection refused",
        "NIUNIU_DATABASE_URL",
    )


async def test_a_sqlite_file_in_a_directory_that_does_not_exist_is_one_line(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    missing = tmp_path / "no" / "such" / "bot.db"
    finished = await run_bot(tmp_path, fake, f"sqlite:///{missing}")
    assert_failed_naming(
        finished,
        f"cannot create the SQLite database {missing}",
        f"the directory {missing.parent} does not exist",
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
async def test_a_sqlite_file_where_no_file_can_be_created_is_one_line(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    # Not even root may create a file in /proc.
    finished = await run_bot(tmp_path, fake, "sqlite:////proc/niuniu-test.db")
    assert_failed_naming(
        finished, "cannot open or create the SQLite database /proc/niuniu-test.db", "write"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
async def test_a_sqlite_file_in_a_read_only_directory_is_one_line(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        finished = await run_bot(tmp_path, fake, f"sqlite:///{locked / 'bot.db'}")
    finally:
        locked.chmod(0o755)
    assert_failed_naming(finished, f"SQLite database {locked / 'bot.db'}", "write")


@pytest.fixture(scope="module")
def postgres_server() -> str:
    """The URL of a reachable PostgreSQL server (the test is skipped without one)."""

    async def reachable() -> None:
        import asyncpg

        url = POSTGRES_ADMIN_URL.replace("postgresql+asyncpg://", "postgresql://")
        connection = await asyncpg.connect(url, timeout=3)
        await connection.close()

    try:
        asyncio.run(reachable())
    except Exception as error:  # any failure to connect means "no server here"
        message = f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"
        if REQUIRE_POSTGRES:
            pytest.fail(message)
        pytest.skip(message)
    return POSTGRES_ADMIN_URL


def wrong_role(server: str) -> tuple[str, str]:
    role = f"niuniu_no_role_{uuid.uuid4().hex[:8]}"
    return make_url(server).set(username=role).render_as_string(hide_password=False), role


def wrong_database(server: str) -> tuple[str, str]:
    name = f"niuniu_no_db_{uuid.uuid4().hex[:8]}"
    return make_url(server).set(database=name).render_as_string(hide_password=False), name


@pytest.mark.postgres
async def test_run_with_a_postgresql_role_that_does_not_exist_is_one_line(
    tmp_path: Path, fake: FakeTelegram, postgres_server: str
) -> None:
    url, role = wrong_role(postgres_server)
    finished = await run_bot(tmp_path, fake, url)
    assert_failed_naming(finished, f'role "{role}" does not exist', "fix the user")


@pytest.mark.postgres
async def test_run_with_a_postgresql_database_that_does_not_exist_is_one_line(
    tmp_path: Path, fake: FakeTelegram, postgres_server: str
) -> None:
    url, name = wrong_database(postgres_server)
    finished = await run_bot(tmp_path, fake, url)
    assert_failed_naming(finished, f'has no database "{name}"', f"createdb {name}")


@pytest.mark.postgres
async def test_db_upgrade_with_a_postgresql_role_that_does_not_exist_is_one_line(
    postgres_server: str,
) -> None:
    url, role = wrong_role(postgres_server)
    finished = await run_cli(["db", "upgrade"], NIUNIU_DATABASE_URL=url)
    assert_failed_naming(finished, f'role "{role}" does not exist', "NIUNIU_DATABASE_URL")
    assert finished.stdout == ""


@pytest.mark.postgres
async def test_db_upgrade_with_a_postgresql_database_that_does_not_exist_is_one_line(
    postgres_server: str,
) -> None:
    url, name = wrong_database(postgres_server)
    finished = await run_cli(["db", "upgrade"], NIUNIU_DATABASE_URL=url)
    assert_failed_naming(finished, f'has no database "{name}"', "NIUNIU_DATABASE_URL")
    assert finished.stdout == ""


# -- the web server ---------------------------------------------------------------------


async def test_a_web_server_port_taken_already_is_one_line(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        finished = await run_cli(
            ["run", "--config", str(write_config(tmp_path))],
            NIUNIU_TELEGRAM_TOKEN=TOKEN,
            NIUNIU_TELEGRAM_BASE_URL=fake.base_url,
            NIUNIU_DATABASE_URL=sqlite_url(tmp_path),
            NIUNIU_WEB_LISTEN=f"127.0.0.1:{port}",
        )
    # The database was migrated first (its log lines come before): the error is the last line.
    assert finished.returncode == 1, finished.stderr
    assert finished.stderr.splitlines()[-1] == (
        f"niuniu-bot: error: cannot listen for the web server on 127.0.0.1:{port} "
        "(address already in use): fix [web] listen or NIUNIU_WEB_LISTEN"
    )
    assert "Traceback" not in finished.stderr and TOKEN.partition(":")[2] not in finished.stderr


# -- the configuration ------------------------------------------------------------------


async def test_a_config_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "niuniu.toml"
    config.write_text("[bot]\nsweep_seconds = -1\n", encoding="utf-8")
    finished = await run_cli(["run", "--config", str(config)], NIUNIU_TELEGRAM_TOKEN=TOKEN)
    assert finished.returncode == 2
    assert finished.error_line() == (
        "niuniu-bot: error: [bot] sweep_seconds must be more than 0, got -1"
    )
    directory = await run_cli(["db", "upgrade", "--config", str(tmp_path)])
    assert directory.returncode == 2
    assert directory.error_line() == (
        f"niuniu-bot: error: config file {tmp_path} is a directory, not a file"
    )


# -- stop signals during start-up -------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_stop_signal_while_telegram_has_not_answered_stops_at_once(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """A Bot API that takes the connection and never answers: the bot waits in getMe
    (up to its 5 s timeout), and a stop signal ends it there."""
    connected = asyncio.Event()
    held: list[asyncio.StreamWriter] = []

    async def never_answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        connected.set()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        process = await start_cli(
            ["run", "--config", str(write_config(tmp_path))],
            environment(
                NIUNIU_TELEGRAM_TOKEN=TOKEN,
                NIUNIU_TELEGRAM_BASE_URL=f"http://127.0.0.1:{port}/bot",
                NIUNIU_DATABASE_URL=sqlite_url(tmp_path),
            ),
        )
        await asyncio.wait_for(connected.wait(), EXIT_SECONDS)
        process.send_signal(signum)
        finished = await finish(process)
    finally:
        for writer in held:
            writer.close()
        server.close()
    assert finished.returncode == -signum, finished.stderr
    assert finished.error_line() == f"niuniu-bot: stopped by {signum.name}"
    assert TOKEN not in finished.stdout + finished.stderr
