"""SQLite's writer thread: a transaction body commits when it returns and leaves nothing
behind when it raises; the next transaction is not stuck either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.store.db import Database
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
