"""SQLite's writer thread: a transaction body commits when it returns and leaves nothing
behind when it raises; the next transaction is not stuck either way."""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.priority import urgent
from bot.store.db import Database, WalCheckpoints
from bot.store.migrate import upgrade_async

INSERT = "INSERT INTO processed_updates (bot_id, update_id, processed_at_ms) VALUES (1, :u, 0)"
COUNT = "SELECT count(*) FROM processed_updates"


async def test_a_body_that_raises_writes_nothing_and_the_next_one_commits(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'thread.db'}"
    await upgrade_async(url)
    db = Database.from_url(url)
    writer = db.sqlite_writer
    assert writer is not None
    try:

        def insert_then_fail(connection: object) -> None:
            connection.execute(INSERT, {"u": 1})  # type: ignore[attr-defined]
            raise RuntimeError("the body failed")

        with pytest.raises(RuntimeError, match="the body failed"):
            await writer.run(insert_then_fail)
        await writer.run(lambda connection: connection.execute(INSERT, {"u": 2}))
        # A duplicate key fails inside the body: rolled back, the thread still usable.
        with pytest.raises(Exception, match="UNIQUE"):
            await writer.run(lambda connection: connection.execute(INSERT, {"u": 2}))
        counted = await writer.run(lambda connection: connection.execute(COUNT).fetchone()[0])
        assert counted == 1
    finally:
        await db.dispose()


# -- group commit: the hot path's transactions that wait are written together ----------------


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'batches.db'}"
    await upgrade_async(url)
    database = Database.from_url(url)
    try:
        yield database
    finally:
        await database.dispose()


def insert(update_id: int, written: list[int] | None = None) -> Callable[[Any], int]:
    def body(connection: Any) -> int:
        connection.execute(INSERT, {"u": update_id})
        if written is not None:
            written.append(update_id)
        return update_id

    return body


async def counted(db: Database) -> int:
    writer = db.sqlite_writer
    assert writer is not None
    result: int = await writer.run(lambda connection: connection.execute(COUNT).fetchone()[0])
    return result


async def queued_behind_the_write_turn(db: Database, *bodies: Any) -> list[Any]:
    """Run ``bodies`` as commands that all arrive while the writer is busy."""
    batches = db.sqlite_batches
    assert batches is not None
    async with db.write_turn():  # another transaction holds the writer
        tasks = [asyncio.create_task(batches.run(body)) for body in bodies]
        await asyncio.sleep(0)
    return await asyncio.gather(*tasks, return_exceptions=True)


async def test_commands_that_wait_for_the_writer_are_committed_in_one_transaction(
    db: Database,
) -> None:
    batches = db.sqlite_batches
    assert batches is not None

    results = await queued_behind_the_write_turn(db, *(insert(n) for n in range(1, 11)))

    assert results == list(range(1, 11))
    assert (batches.batches, batches.commands) == (1, 10)
    assert await counted(db) == 10


async def test_a_lone_command_is_written_alone_and_those_arriving_meanwhile_together(
    db: Database,
) -> None:
    batches = db.sqlite_batches
    assert batches is not None
    others_queued = threading.Event()

    def first(connection: Any) -> int:
        others_queued.wait(5)  # on the writer's thread: the others arrive meanwhile
        return insert(1)(connection)

    lone = asyncio.create_task(batches.run(first))
    await asyncio.sleep(0.05)
    assert batches._alone and batches._writing is None  # in its caller's task
    others = [asyncio.create_task(batches.run(insert(n))) for n in (2, 3)]
    await asyncio.sleep(0)
    others_queued.set()

    assert await asyncio.gather(lone, *others) == [1, 2, 3]
    assert (batches.batches, batches.commands) == (2, 3)  # the lone one, then the two
    assert await counted(db) == 3


async def test_a_lone_command_that_fails_writes_nothing(db: Database) -> None:
    batches = db.sqlite_batches
    assert batches is not None

    def insert_then_refuse(connection: Any) -> None:
        connection.execute(INSERT, {"u": 1})
        raise RuntimeError("refused")

    def end_the_transaction(connection: Any) -> None:
        connection.execute(INSERT, {"u": 2})
        connection.execute("ROLLBACK")  # its commit then fails: nothing is written

    with pytest.raises(RuntimeError, match="refused"):
        await batches.run(insert_then_refuse)
    with pytest.raises(sqlite3.OperationalError):
        await batches.run(end_the_transaction)
    assert await batches.run(insert(3)) == 3
    assert await counted(db) == 1


async def test_a_command_that_fails_in_a_batch_undoes_only_its_own_writes(db: Database) -> None:
    def insert_then_refuse(connection: Any) -> None:
        connection.execute(INSERT, {"u": 2})
        raise RuntimeError("refused")

    results = await queued_behind_the_write_turn(
        db,
        insert(1),
        insert_then_refuse,
        insert(3),
        insert(1),  # the last: a duplicate key
    )

    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], RuntimeError)
    assert isinstance(results[3], sqlite3.IntegrityError)
    assert await counted(db) == 2


async def test_when_the_batchs_transaction_fails_every_command_in_it_fails(db: Database) -> None:
    def end_the_transaction(connection: Any) -> None:
        connection.execute("ROLLBACK")  # its savepoint is gone: the batch cannot go on

    results = await queued_behind_the_write_turn(db, insert(1), end_the_transaction, insert(3))

    assert all(isinstance(result, sqlite3.OperationalError) for result in results)
    assert await counted(db) == 0
    assert await db.sqlite_batches.run(insert(4)) == 4  # type: ignore[union-attr]
    assert await counted(db) == 1


async def test_urgent_commands_go_in_the_first_batch(db: Database) -> None:
    batches = db.sqlite_batches
    assert batches is not None
    batches.most = 2
    written: list[int] = []

    async def deadline(update_id: int) -> int:
        with urgent():
            return await batches.run(insert(update_id, written))

    async with db.write_turn():
        tasks = [asyncio.create_task(batches.run(insert(n, written))) for n in (1, 2, 3)]
        tasks.append(asyncio.create_task(deadline(4)))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)

    assert written == [4, 1, 2, 3]
    assert batches.batches == 2


async def test_urgent_work_takes_no_command_past_a_general_path_writer_that_came_first(
    db: Database,
) -> None:
    batches = db.sqlite_batches
    assert batches is not None
    written: list[int | str] = []

    async def deadline() -> None:
        with urgent():
            await batches.run(insert(4, written))  # type: ignore[arg-type]

    async def general_path_writer() -> None:
        async with db.write_turn():
            written.append("general")

    async with db.write_turn():
        tasks = [asyncio.create_task(deadline())]
        await asyncio.sleep(0)  # the batch waits for the turn as urgent work
        tasks.append(asyncio.create_task(general_path_writer()))
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(batches.run(insert(1, written))))  # type: ignore[arg-type]
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)

    assert written == [4, "general", 1]


async def test_a_command_whose_caller_gave_up_before_its_turn_is_not_written(
    db: Database,
) -> None:
    batches = db.sqlite_batches
    assert batches is not None
    async with db.write_turn():
        kept = asyncio.create_task(batches.run(insert(1)))
        dropped = asyncio.create_task(batches.run(insert(2)))
        await asyncio.sleep(0)
        dropped.cancel()
    assert await kept == 1
    assert await counted(db) == 1


def _rows_in_the_database_file(path: Path) -> int:
    """Rows of ``t`` in the database file itself (not in its write-ahead log)."""
    file = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return int(file.execute("SELECT count(*) FROM t").fetchone()[0])
    finally:
        file.close()


async def test_the_writers_commits_are_checkpointed_beside_it_every_so_many(
    tmp_path: Path,
) -> None:
    path = tmp_path / "wal.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE t (x INTEGER)")  # in the file: no log yet
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")  # only ours
    for value in range(3):
        writer.execute("INSERT INTO t VALUES (?)", (value,))
    checkpoints = WalCheckpoints(str(path), every=3)

    checkpoints.committed()
    checkpoints.committed()
    await asyncio.sleep(0.05)
    assert _rows_in_the_database_file(path) == 0  # all still in the log
    checkpoints.committed()
    await checkpoints.dispose()  # waits for the checkpoint it started
    assert _rows_in_the_database_file(path) == 3
    writer.close()


async def test_a_failed_checkpoint_is_logged_once_with_its_database_and_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "gone" / "wal.db"  # no such folder: the checkpoint cannot connect
    checkpoints = WalCheckpoints(str(path), every=1)
    caplog.set_level(logging.WARNING)
    for _ in range(2):  # the second replaces the first, which nobody holds any more
        checkpoints.committed()
        running = checkpoints._running
        assert running is not None
        await asyncio.wait([running])
    del running
    gc.collect()
    await asyncio.sleep(0)  # asyncio reports an unretrieved exception through the loop
    await checkpoints.dispose()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    failures = [r.getMessage() for r in caplog.records if r.name == "bot.store.db"]
    assert (
        failures
        == [
            f"checkpoint of the write-ahead log of {path} failed (SQLite's own checkpoint "
            "stays): OperationalError: unable to open database file"
        ]
        * 2
    )
