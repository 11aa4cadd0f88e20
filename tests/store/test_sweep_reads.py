"""The reads the sweep takes every second, and a board's message id: one statement each on
the hot path's connections (``Database.read_all`` / ``read_one``), on both databases. What
each finds, and that a sweep with nothing to do opens no unit of work of SQLAlchemy's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bot.engine.round import Phase, RoundVoided
from bot.service.game import DELIVERY_LEASE_MS, GameService
from bot.store.db import Database
from bot.store.statements import Positional
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, TEST_SETTINGS, fund, open_table
from tests.helpers.trips import trips

OTHER = -1002
BID_MS = TEST_SETTINGS.bid_seconds * 1000


async def _start(service: GameService, chat_id: int = GROUP) -> int:
    started = await service.start_round(chat_id, actor=ADMIN)
    assert started.round is not None
    return started.round.id


async def _open_two_tables(service: GameService) -> None:
    await open_table(service)
    await open_table(service, OTHER)


@contextmanager
def units_of_work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the sessions of SQLAlchemy's opened (``Database.reading`` and
    ``transaction``: every unit of work goes through one)."""
    opened: Counter[str] = Counter()
    for name in ("reading", "transaction"):
        original = getattr(Database, name)

        def counted(db: Database, *args: Any, _name: str = name, _original: Any = original) -> Any:
            opened[_name] += 1
            return _original(db, *args)

        monkeypatch.setattr(Database, name, counted)
    yield opened


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


async def test_a_boards_message_id_is_none_until_telegram_has_it(service: GameService) -> None:
    await open_table(service)
    round_id = await _start(service)
    lookup = service.store.delivery_lookup
    assert await lookup.board_message(round_id) is None
    await service.set_board_message(round_id, 42)
    assert await lookup.board_message(round_id) == 42
    assert await lookup.board_message(round_id + 1) is None  # no such round


async def test_unposted_boards_are_the_open_rounds_nobody_posted_or_is_posting_by_id(
    service: GameService, clock: Clock
) -> None:
    await _open_two_tables(service)
    first, second = await _start(service), await _start(service, OTHER)
    started = clock.now_ms
    lookup = service.store.delivery_lookup

    async def unposted(now_ms: int, grace_ms: int = 0) -> list[tuple[int, int]]:
        return await lookup.unposted_boards(now_ms=now_ms, unclaimed_grace_ms=grace_ms)

    assert await unposted(started) == [(first, GROUP), (second, OTHER)]
    # Never claimed: left to the worker that started them for the grace.
    assert await unposted(started + 4_999, grace_ms=5_000) == []
    assert await unposted(started + 5_000, grace_ms=5_000) == [(first, GROUP), (second, OTHER)]
    assert await service.claim_board(first, lease_ms=5_000)
    await service.set_board_message(second, 42)
    assert await unposted(started + 4_999) == []
    assert await unposted(started + 5_000) == [(first, GROUP)]
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(first)  # nobody bid: void; its results say what its board would
    assert await unposted(clock.now_ms) == []


async def _two_voided_rounds(service: GameService, clock: Clock) -> tuple[int, int]:
    """A round in each of two tables, both ended by their bidding deadline (nobody bid:
    void), now."""
    await _open_two_tables(service)
    first, second = await _start(service), await _start(service, OTHER)
    clock.advance(TEST_SETTINGS.bid_seconds)
    for round_id in (first, second):
        await service.advance(round_id)
    return first, second


async def test_unannounced_are_the_rounds_ended_in_the_window_nobody_announced_or_is_by_id(
    service: GameService, clock: Clock
) -> None:
    first, second = await _two_voided_rounds(service, clock)
    ended = clock.now_ms
    lookup = service.store.delivery_lookup

    async def unannounced(now_ms: int, since_ms: int = ended, grace_ms: int = 0) -> list[int]:
        return await lookup.unannounced(
            now_ms=now_ms, since_ms=since_ms, unclaimed_grace_ms=grace_ms
        )

    assert await unannounced(ended) == [first, second]
    assert await unannounced(ended, since_ms=ended + 1) == []  # ended before the window
    # Never claimed: left to the worker that ended them for the grace.
    assert await unannounced(ended + 4_999, grace_ms=5_000) == []
    assert await unannounced(ended + 5_000, grace_ms=5_000) == [first, second]
    assert await service.claim_announcement(first, lease_ms=5_000)
    await service.mark_announced(second)
    assert await unannounced(ended + 4_999) == []
    assert await unannounced(ended + 5_000) == [first]


async def test_ended_rounds_load_whole_by_id_with_what_ended_them(
    service: GameService, clock: Clock
) -> None:
    first, second = await _two_voided_rounds(service, clock)
    async with service.store.reading() as uow:
        loaded = await uow.queries.ended_rounds([second, first])
    assert [state.id for state, _ in loaded] == [first, second]
    assert all(isinstance(ending, RoundVoided) for _, ending in loaded)


async def test_a_sweep_with_nothing_to_do_opens_no_unit_of_work(
    db: Database, service: GameService, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _open_two_tables(service)
    ended = await _start(service, OTHER)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(ended)  # nobody bid: void ...
    await service.mark_announced(ended)  # ... and its results went out
    running = await _start(service)
    await service.set_board_message(running, 42, Phase.BIDDING)
    with trips(monkeypatch) as statements, units_of_work(monkeypatch) as opened:
        # What RoundProgress.catch_up and Board.redeliver read every second.
        assert await service.due_rounds() == []
        assert await service.due_chat_ids() == []
        assert await service.unannounced(unclaimed_grace_ms=DELIVERY_LEASE_MS) == []
        assert await service.unposted_boards(unclaimed_grace_ms=DELIVERY_LEASE_MS) == []
        assert await service.unclosed_boards(grace_ms=DELIVERY_LEASE_MS) == []
        assert await service.replaced_boards(grace_ms=DELIVERY_LEASE_MS) == []
        assert await service.unshown_phases() == []
    assert opened == Counter()
    assert statements == Counter({"postgres" if db.dialect == "postgresql" else "sqlite": 7})
