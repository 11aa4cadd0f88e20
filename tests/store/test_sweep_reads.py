"""The reads the sweep takes every second, and a board's message id: one statement each on
the hot path's connections (``Database.read_all`` / ``read_one``), on both databases. What
each finds, and that a sweep with nothing to do opens no unit of work of SQLAlchemy's."""

from __future__ import annotations

from bot.service.game import GameService
from bot.store.db import Database
from bot.store.round_sql import Positional
from tests.store.helpers import GROUP, open_table

OTHER = -1002


async def _open_two_tables(service: GameService) -> None:
    await open_table(service)
    await open_table(service, OTHER)


async def test_read_all_gives_every_row_in_the_statements_order(
    db: Database, service: GameService
) -> None:
    await _open_two_tables(service)
    statement = "SELECT id FROM chats WHERE id <= :top ORDER BY id DESC"
    positional = Positional.of(statement)
    rows = await db.read_all(statement, positional, {"top": GROUP})
    assert [row[0] for row in rows] == [GROUP, OTHER]
    assert await db.read_all(statement, positional, {"top": OTHER - 1}) == []
