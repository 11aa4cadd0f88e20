"""``database_unavailable``: which failures say the database cannot take the work now
(down, read-only, its disk full), as raised by the real drivers, and which say the work
itself was wrong."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import asyncpg
import pytest

from bot.store.errors import database_unavailable


def test_a_full_sqlite_disk_is_unavailable_and_a_broken_constraint_is_not(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "small.db")
    connection.execute("CREATE TABLE t (x TEXT UNIQUE)")
    connection.execute("INSERT INTO t VALUES ('one')")
    connection.commit()
    with pytest.raises(sqlite3.IntegrityError) as duplicate:
        connection.execute("INSERT INTO t VALUES ('one')")
    # No room for another page: what SQLite says when its disk is full.
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="full") as full:
        connection.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    connection.close()

    assert database_unavailable(full.value) is True
    assert database_unavailable(duplicate.value) is False


async def test_a_server_that_is_not_there_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(OSError) as refused:
        await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{port}/x", timeout=3)

    assert database_unavailable(refused.value) is True


async def test_a_read_only_postgresql_is_unavailable_and_a_broken_constraint_is_not(
    postgres_url: str,
) -> None:
    url = postgres_url.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url)
    try:
        await connection.execute("CREATE TEMP TABLE t (x INT UNIQUE)")
        await connection.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(asyncpg.UniqueViolationError) as duplicate:
            await connection.execute("INSERT INTO t VALUES (1)")
        await connection.execute("SET default_transaction_read_only = on")
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError) as read_only:
            await connection.execute("CREATE TABLE never (x INT)")
    finally:
        await connection.close()

    assert database_unavailable(read_only.value) is True
    assert database_unavailable(duplicate.value) is False
