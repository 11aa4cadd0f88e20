"""The reads the sweep takes every second, and a board's message id: one statement each on
the hot path's connections (``Database.read_all`` / ``read_one``), on both databases. What
each finds, and that a sweep with nothing to do opens no unit of work of SQLAlchemy's."""

from __future__ import annotations

from bot.service.game import GameService
from bot.store.db import Database
from bot.store.round_sql import Positional
from tests.conftest import Clock
from tests.store.helpers import ADMIN, DEALER, GROUP, TEST_SETTINGS, fund, open_table

OTHER = -1002
BID_MS = TEST_SETTINGS.bid_seconds * 1000


async def _start(service: GameService, chat_id: int = GROUP) -> int:
    started = await service.start_round(chat_id, actor=ADMIN)
    assert started.round is not None
    return started.round.id


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


async def test_due_rounds_are_the_open_rounds_past_their_deadline_most_overdue_first(
    service: GameService, clock: Clock
) -> None:
    await _open_two_tables(service)
    await fund(service, DEALER, 100_000)
    betting = await _start(service)
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(betting)  # betting until now + bet_seconds
    bidding = await _start(service, OTHER)  # a later id, an earlier deadline
    due = service.store.due_lookup
    assert await due.rounds(clock.now_ms + BID_MS - 1) == []
    assert await due.rounds(clock.now_ms + BID_MS) == [(bidding, OTHER)]
    clock.advance(TEST_SETTINGS.bet_seconds)
    assert await due.rounds(clock.now_ms) == [(bidding, OTHER), (betting, GROUP)]
    await service.advance(bidding)  # nobody bid: void, no longer open
    assert await due.rounds(clock.now_ms) == [(betting, GROUP)]


async def test_due_tables_are_the_open_ones_whose_pause_is_over(
    service: GameService, clock: Clock
) -> None:
    await _open_two_tables(service)
    pause_ends = clock.now_ms + 5_000
    async with service.store.writing() as uow:
        for chat_id in (GROUP, OTHER):
            await uow.chats.change(chat_id, next_round_at_ms=pause_ends)
    due = service.store.due_lookup
    assert await due.chat_ids(pause_ends - 1) == []
    assert sorted(await due.chat_ids(pause_ends)) == [OTHER, GROUP]
    async with service.store.writing() as uow:
        await uow.chats.change(OTHER, is_open=False)
    assert await due.chat_ids(pause_ends) == [GROUP]
