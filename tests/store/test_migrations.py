"""Migrations: an empty database migrated to head has exactly the schema of the models,
on SQLite and PostgreSQL, ``python -m bot db upgrade`` creates it and is idempotent, and
two workers migrating a fresh PostgreSQL database at once both come up."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from bot.engine.verification import Verified, verify_round
from bot.rules.cards import deal_packed
from bot.rules.split import commitment
from bot.store.db import Database
from bot.store.migrate import alembic_config, upgrade
from bot.store.models import Base
from bot.store.rounds import RoundRepository
from tests.helpers.databases import admin_execute, postgres_url_for

REPO = Path(__file__).resolve().parents[2]
TABLES = {table.name for table in Base.metadata.sorted_tables}


async def schema_of(url: str) -> tuple[list[Any], set[str], str | None]:
    """The differences between the database and the models (Alembic's autogenerate
    comparison), the tables, and the Alembic revision stamped in the database."""
    database = Database.from_url(url)
    try:
        async with database.engine.connect() as connection:

            def read(sync_connection: Any) -> tuple[list[Any], set[str], str | None]:
                context = MigrationContext.configure(sync_connection)
                diff = compare_metadata(context, Base.metadata)
                tables = set(inspect(sync_connection).get_table_names())
                return diff, tables, context.get_current_revision()

            return await connection.run_sync(read)
    finally:
        await database.dispose()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


@pytest.fixture
def fresh_postgres_url(postgres_url: str) -> Iterator[str]:
    """A brand-new, empty PostgreSQL database (the session one is already migrated)."""
    name = f"niuniu_migrate_{uuid.uuid4().hex[:12]}"
    asyncio.run(admin_execute(f'CREATE DATABASE "{name}"'))
    try:
        yield postgres_url_for(name)
    finally:
        asyncio.run(admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    url: str = request.getfixturevalue("fresh_postgres_url")
    return url


def test_an_empty_database_migrated_to_head_matches_the_models(empty_database_url: str) -> None:
    diff, tables, revision = asyncio.run(schema_of(empty_database_url))
    assert tables == set()
    assert revision is None
    upgrade(empty_database_url)
    diff, tables, revision = asyncio.run(schema_of(empty_database_url))
    assert diff == []
    assert tables == TABLES | {"alembic_version"}
    assert revision == head_revision() is not None


def test_upgrading_twice_changes_nothing(empty_database_url: str) -> None:
    upgrade(empty_database_url)
    upgrade(empty_database_url)
    diff, tables, revision = asyncio.run(schema_of(empty_database_url))
    assert diff == [] and tables == TABLES | {"alembic_version"}
    assert revision == head_revision()


def run_cli(url: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("NIUNIU_")}
    environment["NIUNIU_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "bot", "db", "upgrade"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_db_upgrade_command_creates_the_schema_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "cli.db"
    url = f"sqlite:///{path}"  # a plain URL, as an operator would write it
    first = run_cli(url)
    assert first.returncode == 0, first.stderr
    assert "database is up to date" in first.stdout
    assert path.exists()
    diff, tables, revision = asyncio.run(schema_of(url))
    assert diff == [] and tables == TABLES | {"alembic_version"}
    assert revision == head_revision()

    async def add_a_chat() -> None:
        database = Database.from_url(url)
        try:
            async with database.engine.begin() as connection:
                await connection.execute(
                    text(
                        "INSERT INTO chats (id, title, is_group, is_open, settings, "
                        "created_at_ms) VALUES (-5, 'kept', 1, 0, '{}', 0)"
                    )
                )
        finally:
            await database.dispose()

    async def chat_titles() -> list[str]:
        database = Database.from_url(url)
        try:
            async with database.engine.connect() as connection:
                return list((await connection.execute(text("SELECT title FROM chats"))).scalars())
        finally:
            await database.dispose()

    asyncio.run(add_a_chat())
    second = run_cli(url)
    assert second.returncode == 0, second.stderr
    assert asyncio.run(chat_titles()) == ["kept"]
    diff, tables, revision = asyncio.run(schema_of(url))
    assert diff == [] and revision == head_revision()


def test_the_db_upgrade_command_reports_a_database_it_cannot_open_in_one_line(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    result = run_cli(f"sqlite:///{missing}")
    assert result.returncode != 0
    assert not missing.exists()
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("niuniu-bot: error: ")
    assert len(result.stderr.strip().splitlines()) == 1


#: A played round as revision 0002 stored it: a chat, accounts, a settled round with a bet,
#: a grab and outcomes, and its balanced ledger transaction.
PLAYED_AT_0002 = [
    "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
    "VALUES (-7, 'played', true, true, '{}', 0)",
    "INSERT INTO accounts (id, chat_id, kind, user_id, balance) VALUES "
    "(1, -7, 'mint', 0, -1000), (2, -7, 'available', 5, 1000)",
    "INSERT INTO ledger_transactions (id, chat_id, kind, created_at_ms, memo) "
    "VALUES (1, -7, 'credit', 0, '')",
    "INSERT INTO postings (transaction_id, account_id, amount) VALUES (1, 1, -1000), (1, 2, 1000)",
    "INSERT INTO rounds (id, chat_id, phase, version, deadline_ms, commitment, seed, settings, "
    "high_bid, bid_hold, pool, shares, started_at_ms, ended_at_ms, announced_at_ms) VALUES "
    "(1, -7, 'settled', 5, 0, 'c', 'seed', '{\"ruleset\": \"red_envelope\"}', 0, 0, 0, "
    "'[100, 200]', 0, 1, 1)",
    "INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms) "
    "VALUES (1, 5, 100, 1800, 1, 0)",
    "INSERT INTO grabs (round_id, user_id, amount, position, auto) VALUES (1, 5, 100, 0, false)",
]


HELD_OF_PLAYER_5 = "SELECT balance FROM accounts WHERE kind = 'held' AND user_id = 5"
ROUND_COUNTS = "SELECT bet_count * 10 + grab_count FROM rounds WHERE id = 1"


async def _scalar(url: str, statement: str) -> object:
    database = Database.from_url(url)
    try:
        async with database.engine.connect() as connection:
            return (await connection.execute(text(statement))).scalar_one()
    finally:
        await database.dispose()


async def _by_round(url: str, column: str) -> dict[int, object]:
    """Each round's ``column``, by round id."""
    database = Database.from_url(url)
    try:
        async with database.engine.connect() as connection:
            rows = await connection.execute(text(f"SELECT id, {column} FROM rounds"))
            return {row[0]: row[1] for row in rows}
    finally:
        await database.dispose()


async def _execute(url: str, statements: list[str]) -> None:
    database = Database.from_url(url)
    if database.dialect == "postgresql":
        # Rows given explicit ids leave their sequences behind (a real database's are not).
        statements = [
            *statements,
            "SELECT setval('accounts_id_seq', (SELECT coalesce(max(id), 1) FROM accounts))",
        ]
    try:
        async with database.engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await database.dispose()


async def _count(url: str, table: str) -> int:
    database = Database.from_url(url)
    try:
        async with database.engine.connect() as connection:
            return int(
                (await connection.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
            )
    finally:
        await database.dispose()


def test_a_database_with_played_rounds_upgrades_to_head_keeping_them(
    empty_database_url: str,
) -> None:
    # SQLite rebuilds tables to change them; rows referring to them must not stop it.
    upgrade(empty_database_url, "0002")
    asyncio.run(_execute(empty_database_url, PLAYED_AT_0002))
    upgrade(empty_database_url)
    diff, _, revision = asyncio.run(schema_of(empty_database_url))
    assert diff == [] and revision == head_revision()
    # 0006 created the player's held account beside their available one.
    for table, rows in (("rounds", 1), ("bets", 1), ("grabs", 1), ("postings", 2), ("accounts", 3)):
        assert asyncio.run(_count(empty_database_url, table)) == rows, table
    assert asyncio.run(_scalar(empty_database_url, HELD_OF_PLAYER_5)) == 0
    # 0006 counted the round's bets and grabs.
    assert asyncio.run(_scalar(empty_database_url, ROUND_COUNTS)) == 11
    # The bank is an account kind now, and still never below zero (0021: an account
    # opens at zero, and only postings move it).
    bank = "INSERT INTO accounts (chat_id, kind, user_id, balance) VALUES (-7, 'bank', 0, 0)"
    asyncio.run(_execute(empty_database_url, [bank]))
    bank_id = asyncio.run(
        _scalar(empty_database_url, "SELECT id FROM accounts WHERE kind = 'bank'")
    )
    below_zero = (
        "INSERT INTO ledger_transactions (id, chat_id, kind, created_at_ms, memo, legs) "
        f"VALUES (2, -7, 'fund', 0, '', '[[1, 1], [{bank_id}, -1]]')"
    )
    with pytest.raises(Exception, match="ck_accounts_not_negative"):
        asyncio.run(_execute(empty_database_url, [below_zero]))


def test_an_open_rounds_board_being_posted_is_to_be_posted_again_after_0007(
    empty_database_url: str,
) -> None:
    # Before 0007 board_message_id 0 meant "a worker claimed posting it", which a crash
    # could lose; from 0007 an open round's board is posted until Telegram has it.
    upgrade(empty_database_url, "0004")
    # One open round per chat: rounds 2 and 3 are in two chats.
    chats = (
        "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
        "VALUES (-7, 'a', true, true, '{}', 0), (-8, 'b', true, true, '{}', 0)"
    )
    rounds = (
        "INSERT INTO rounds (id, chat_id, phase, version, deadline_ms, commitment, seed, "
        "settings, high_bid, bid_hold, pool, shares, started_at_ms, ended_at_ms, "
        "board_message_id) VALUES "
        "(1, -7, 'settled', 5, 0, 'c', 'seed', '{}', 0, 0, 0, '[]', 0, 1, 0), "
        "(2, -7, 'bidding', 1, 0, 'c', 'seed', '{}', 0, 0, 0, '[]', 0, NULL, 0), "
        "(3, -8, 'bidding', 1, 0, 'c', 'seed', '{}', 0, 0, 0, '[]', 0, NULL, 12)"
    )
    asyncio.run(_execute(empty_database_url, [chats, rounds]))
    upgrade(empty_database_url)

    boards = asyncio.run(_by_round(empty_database_url, "board_message_id"))
    assert boards == {1: 0, 2: None, 3: 12}


def test_postgresql_row_ids_and_their_sequences_are_bigint(fresh_postgres_url: str) -> None:
    upgrade(fresh_postgres_url, "0003")
    asyncio.run(_execute(fresh_postgres_url, PLAYED_AT_0002))
    upgrade(fresh_postgres_url)

    async def types() -> tuple[set[str], set[str]]:
        database = Database.from_url(fresh_postgres_url)
        try:
            async with database.engine.connect() as connection:
                columns = await connection.execute(
                    text(
                        "SELECT data_type FROM information_schema.columns "
                        "WHERE table_schema = 'public' AND column_name = 'id'"
                    )
                )
                sequences = await connection.execute(text("SELECT data_type FROM pg_sequences"))
                return set(columns.scalars()), set(sequences.scalars())
        finally:
            await database.dispose()

    assert asyncio.run(types()) == ({"bigint"}, {"bigint"})
    # The rows written before keep their ids and references.
    assert asyncio.run(_count(fresh_postgres_url, "postings")) == 2


#: Each worker imports the bot first, then waits for a common instant before it migrates,
#: so that the two migrations start together rather than a process start-up apart.
MIGRATING_WORKER = """
import sys, time
from bot.store.migrate import upgrade
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
upgrade(sys.argv[1])
"""


@pytest.mark.postgres
def test_two_workers_migrating_a_fresh_postgresql_database_at_once_both_succeed(
    fresh_postgres_url: str,
) -> None:
    # Without the migration's advisory lock both create the same tables, and the second
    # fails on a duplicate once the first commits.
    environment = {key: value for key, value in os.environ.items() if not key.startswith("NIUNIU_")}
    start_at = time.time() + 3.0  # both interpreters have imported the bot by then
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATING_WORKER, fresh_postgres_url, str(start_at)],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    errors = [worker.communicate(timeout=120)[1] for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], errors
    diff, tables, revision = asyncio.run(schema_of(fresh_postgres_url))
    assert diff == []
    assert tables == TABLES | {"alembic_version"}
    assert revision == head_revision() is not None


def test_a_rounds_game_is_its_own_column_after_0009_by_its_current_name(
    empty_database_url: str,
) -> None:
    upgrade(empty_database_url, "0008")
    chats = (
        "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
        "VALUES (-7, 'a', true, true, '{}', 0)"
    )
    columns = (
        "INSERT INTO rounds (id, chat_id, phase, version, deadline_ms, commitment, seed, "
        "settings, high_bid, bid_hold, pool, shares, started_at_ms, ended_at_ms) VALUES "
    )
    rounds = columns + ", ".join(
        f"({n}, -7, 'settled', 5, 0, 'c', 'seed', '{settings}', 0, 0, 0, '[]', 0, 1)"
        for n, settings in (
            (1, "{}"),  # the default game
            (2, '{"ruleset": "bullbull"}'),
            (3, '{"ruleset": "red_envelope"}'),  # the game's old name
            (4, '{"ruleset": "poker29", "min_bet": 100}'),
        )
    )
    asyncio.run(_execute(empty_database_url, [chats, rounds]))
    upgrade(empty_database_url)

    assert asyncio.run(_by_round(empty_database_url, "ruleset")) == {
        1: "envelope68",
        2: "bullbull",
        3: "envelope68",
        4: "poker29",
    }


def test_players_totals_are_filled_by_0010_and_kept_by_the_database_after_it(
    empty_database_url: str,
) -> None:
    upgrade(empty_database_url, "0009")
    chats = (
        "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
        "VALUES (-7, 'a', true, true, '{}', 0)"
    )
    rounds = (
        "INSERT INTO rounds (id, chat_id, phase, version, deadline_ms, commitment, seed, "
        "settings, ruleset, high_bid, bid_hold, pool, shares, started_at_ms, ended_at_ms) "
        "VALUES "
        + ", ".join(
            f"({n}, -7, 'settled', 5, 0, 'c', 'seed', '{{}}', 'envelope68', 0, 0, 0, '[]', 0, {n})"
            for n in (1, 2, 3)
        )
    )

    def outcome(round_id: int, user_id: int, envelope: int, multiplier: int, net: int) -> str:
        return (
            "INSERT INTO outcomes (round_id, user_id, role, stake, envelope, kind, points, "
            "multiplier, result, gross, rake, rebate, net) VALUES "
            f"({round_id}, {user_id}, 'player', 100, {envelope}, 'ordinary', 1, {multiplier}, "
            f"'win', 0, 0, 0, {net})"
        )

    played = [outcome(1, 5, 342, 9, 900), outcome(2, 5, 118, 10, -1000), outcome(1, 0, 1, 1, 0)]
    asyncio.run(_execute(empty_database_url, [chats, rounds, *played]))
    upgrade(empty_database_url)
    totals = "SELECT rounds, won, net, biggest_win, best_multiplier, best_outcome FROM player_stats"
    assert asyncio.run(_count(empty_database_url, "player_stats")) == 1  # not the house
    assert asyncio.run(_row(empty_database_url, totals)) == (2, 1, -100, 900, 10, 118)
    # After 0010 each new outcome is added by the database: a better hand replaces the best.
    asyncio.run(_execute(empty_database_url, [outcome(3, 5, 333, 18, 50)]))
    assert asyncio.run(_row(empty_database_url, totals)) == (3, 2, -50, 900, 18, 333)
    # Going back to 0009 takes the table, its trigger (and function) and indexes away.
    command.downgrade(alembic_config(empty_database_url), "0009")
    _, tables, revision = asyncio.run(schema_of(empty_database_url))
    assert "player_stats" not in tables and revision == "0009"
    asyncio.run(_execute(empty_database_url, [outcome(3, 7, 333, 18, 50)]))


async def _row(url: str, statement: str) -> tuple[Any, ...]:
    database = Database.from_url(url)
    try:
        async with database.engine.connect() as connection:
            return tuple((await connection.execute(text(statement))).one())
    finally:
        await database.dispose()


async def _verify_stored(url: str, round_id: int) -> Any:
    """A stored round loaded as the bot loads it, and verified as ``/verify`` does."""
    database = Database.from_url(url)
    try:
        async with database.transaction() as session:
            state = await RoundRepository(session).load(round_id, lock=False)
            assert state is not None
            return state, verify_round(state)
    finally:
        await database.dispose()


def test_standing_bets_are_a_table_of_their_own_after_0011_and_go_with_a_downgrade(
    empty_database_url: str,
) -> None:
    upgrade(empty_database_url, "0010")
    chats = (
        "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
        "VALUES (-7, 'a', true, true, '{}', 0)"
    )
    asyncio.run(_execute(empty_database_url, [chats]))
    upgrade(empty_database_url, "0011")
    columns = "INSERT INTO autobets (chat_id, user_id, amount, ruleset, once, set_at_ms) VALUES "
    asyncio.run(_execute(empty_database_url, [columns + "(-7, 5, 500, 'bullbull', false, 0)"]))
    assert asyncio.run(_count(empty_database_url, "autobets")) == 1
    # A standing bet is of something, in a group the bot knows.
    for refused in ("(-7, 6, 0, 'bullbull', false, 0)", "(-8, 5, 500, 'bullbull', false, 0)"):
        with pytest.raises(Exception, match=r"(?i)check|foreign"):
            asyncio.run(_execute(empty_database_url, [columns + refused]))
    command.downgrade(alembic_config(empty_database_url), "0010")
    _, tables, revision = asyncio.run(schema_of(empty_database_url))
    assert revision == "0010" and "autobets" not in tables


def test_a_round_dealt_before_client_seeds_verifies_by_derivation_1_after_0012(
    empty_database_url: str,
) -> None:
    upgrade(empty_database_url, "0009")
    seed = bytes(range(32))
    hands = deal_packed(seed, 1, 2)  # one bettor, then the house: derivation 1
    statements = [
        "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
        "VALUES (-7, 'a', true, true, '{}', 0)",
        "INSERT INTO rounds (id, chat_id, phase, version, deadline_ms, commitment, seed, "
        "settings, ruleset, high_bid, bid_hold, pool, shares, started_at_ms, ended_at_ms, "
        "bet_count, grab_count) VALUES (1, -7, 'settled', 4, 0, "
        f"'{commitment(seed)}', {_blob(empty_database_url, seed)}, "
        '\'{"ruleset": "bullbull", "dealer": "house"}\', \'bullbull\', 0, 0, 1000, '
        f"'[{hands[0]}, {hands[1]}]', 0, 1, 1, 1)",
        "INSERT INTO bets (round_id, user_id, amount, hold, position, placed_at_ms) "
        "VALUES (1, 5, 100, 500, 2, 0)",
        f"INSERT INTO grabs (round_id, user_id, amount, position, auto) "
        f"VALUES (1, 5, {hands[0]}, 0, true)",
        "INSERT INTO shoes (id, chat_id, decks, seed, commitment, dealt, created_at_ms) "
        f"VALUES (1, -7, 6, {_blob(empty_database_url, b'shoe')}, 'c', 0, 0)",
    ]
    asyncio.run(_execute(empty_database_url, statements))
    upgrade(empty_database_url)

    assert asyncio.run(_by_round(empty_database_url, "fairness")) == {1: 1}
    assert asyncio.run(_by_round(empty_database_url, "client_seeds")) == {1: None}
    assert asyncio.run(_scalar(empty_database_url, "SELECT fairness FROM shoes")) == 1
    assert asyncio.run(_count(empty_database_url, "client_seeds")) == 0
    state, result = asyncio.run(_verify_stored(empty_database_url, 1))
    assert (state.fairness, state.client_seeds) == (1, ())
    assert isinstance(result, Verified) and result.deal_seed == seed
    assert result.shares == hands


def _blob(url: str, value: bytes) -> str:
    """A bytes literal in the database's SQL."""
    if url.startswith("sqlite"):
        return f"X'{value.hex()}'"
    return f"'\\x{value.hex()}'::bytea"
