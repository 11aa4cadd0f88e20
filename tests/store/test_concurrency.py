"""Concurrent commands on PostgreSQL, each worker on its own connection.

Several workers share one PostgreSQL database: row locks and compare-and-set must make
every command land exactly once, and every deadline fire exactly once, whatever runs at
the same moment. (SQLite serializes writers with ``BEGIN IMMEDIATE``; these tests need a
server, and are skipped with the reason when none is reachable.)
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import func, select

from bot.engine.errors import RuleViolation
from bot.engine.round import (
    BetPlaced,
    DealerChosen,
    Grabbed,
    GrabbingStarted,
    Phase,
    Round,
    RoundSettled,
)
from bot.service.game import CommandResult, GameService, Person
from bot.store.db import Database
from bot.store.models import BetRow, LedgerTransaction, ShoeRow
from tests.helpers.controls import Clock, Seeds
from tests.helpers.databases import truncate
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    TEST_SETTINGS,
    check_all,
    find_seed,
    fund,
    open_table,
    round_ends,
    round_transactions,
)
from tests.helpers.trips import trips

pytestmark = pytest.mark.postgres

CROWD = [Person(1_000 + i, f"Crowd{i}") for i in range(20)]


@pytest.fixture
async def url(postgres_url: str) -> str:
    """The session's PostgreSQL database, emptied."""
    await truncate(postgres_url)
    return postgres_url


@asynccontextmanager
async def workers(
    url: str, count: int, clock: Clock, seeds: Seeds
) -> AsyncIterator[list[GameService]]:
    """``count`` services, each with an engine of its own holding one connection."""
    databases = [Database.from_url(url, pool_size=1, max_overflow=0) for _ in range(count)]
    try:
        yield [GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds) for db in databases]
    finally:
        for db in databases:
            await db.dispose()


@pytest.fixture
async def main(url: str, clock: Clock, seeds: Seeds) -> AsyncIterator[GameService]:
    """A service for setting things up and looking at them (and the ledger at the end)."""
    db = Database.from_url(url)
    try:
        yield GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
        await check_all(db)
    finally:
        await db.dispose()


async def betting_round(main: GameService, clock: Clock, chat_id: int = GROUP) -> Round:
    await open_table(main, chat_id)
    await fund(main, DEALER, 100_000, chat_id)
    started = (await main.start_round(chat_id, actor=ADMIN)).round
    assert started is not None
    await main.bid(chat_id, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    state = (await main.advance(started.id)).round
    assert isinstance(state, Round) and state.phase is Phase.BETTING
    return state


async def grabbing_round(main: GameService, clock: Clock, seeds: Seeds) -> Round:
    """A round of ten bettors from ``CROWD`` and the dealer, its grabbing open."""
    seeds.queued.append(find_seed(11, 5_500, lambda shares: shares[-1] != 1))
    state = await betting_round(main, clock)
    for person in CROWD[:10]:
        await fund(main, person, 50_000)
        await main.bet(GROUP, person, 100)
    clock.advance(TEST_SETTINGS.bet_seconds)
    grabbing = (await main.advance(state.id)).round
    assert isinstance(grabbing, Round) and grabbing.phase is Phase.GRABBING
    return grabbing


async def test_twenty_concurrent_bets_all_land_exactly_once(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    state = await betting_round(main, clock)
    for person in CROWD:
        await fund(main, person, 50_000)
    async with workers(url, len(CROWD), clock, seeds) as services:
        results = await asyncio.gather(
            *(
                service.bet(GROUP, person, 500, update_id=9_000 + i)
                for i, (service, person) in enumerate(zip(services, CROWD, strict=True))
            )
        )
    for person, result in zip(CROWD, results, strict=True):
        assert result.events == (BetPlaced(person.id, 500, 0),)
    stored = await main.round(state.id)
    assert stored is not None
    assert sorted(bet.user_id for bet in stored.bets) == [person.id for person in CROWD]
    async with main.db.transaction() as session:
        positions = (
            await session.scalars(select(BetRow.position).where(BetRow.round_id == state.id))
        ).all()
    assert len(set(positions)) == 20, positions  # every bet has its own place in bet order
    for person in CROWD:
        balance = await main.balance(GROUP, person.id)
        assert (balance.available, balance.held) == (50_000 - 500 * 18, 500 * 18)
    assert sum(bet.hold for bet in stored.bets) == 20 * 500 * 18
    assert await round_transactions(main.db, state.id) == ["bid"] + ["bet"] * 20


async def test_concurrent_changes_of_one_bet_leave_one_consistent_bet(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    state = await betting_round(main, clock)
    player = CROWD[0]
    await fund(main, player, 100_000)
    await main.bet(GROUP, player, 100)  # placed: the eight below all change it
    amounts = [200, 300, 400, 500, 600, 700, 800, 900]
    async with workers(url, len(amounts), clock, seeds) as services:
        results = await asyncio.gather(
            *(
                service.bet(GROUP, player, amount)
                for service, amount in zip(services, amounts, strict=True)
            )
        )
    placed = [event for result in results for event in result.events]
    assert all(isinstance(event, BetPlaced) for event in placed)
    assert len(placed) == len(amounts)
    stored = await main.round(state.id)
    assert stored is not None and len(stored.bets) == 1
    final = stored.bets[0]
    # They ran one after another: each changed the bet the one before left, and the last
    # change is the bet that stands, holding exactly 18x its stake.
    previous = sorted(event.previous for event in placed if isinstance(event, BetPlaced))
    assert previous == sorted([100, *(a for a in amounts if a != final.amount)])
    balance = await main.balance(GROUP, player.id)
    assert (balance.available, balance.held) == (100_000 - final.amount * 18, final.amount * 18)


async def test_the_first_commands_of_a_new_player_in_two_groups_at_once_both_apply(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    chats = [GROUP, GROUP - 1]
    newcomer = Person(4_242, "Newcomer")
    for chat_id in chats:
        await betting_round(main, clock, chat_id)
        await fund(main, newcomer, 50_000, chat_id)  # a credit does not record the player
    assert await main.names([newcomer.id]) == {}
    async with workers(url, 2, clock, seeds) as services:
        results = await asyncio.gather(
            *(
                service.bet(chat_id, newcomer, 100)
                for service, chat_id in zip(services, chats, strict=True)
            ),
            return_exceptions=True,
        )
    assert [type(result) for result in results] == [CommandResult, CommandResult], results
    assert [event for result in results for event in result.events] == [  # type: ignore[union-attr]
        BetPlaced(newcomer.id, 100, 0),
        BetPlaced(newcomer.id, 100, 0),
    ]
    for chat_id in chats:
        assert (await main.balance(chat_id, newcomer.id)).held == 1_800


async def test_two_workers_advancing_a_due_round_at_once_advance_it_once(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    rounds = 4
    await open_table(main)
    await fund(main, DEALER, 1_000_000)
    for person in CROWD[:3]:
        await fund(main, person, 100_000)
    async with workers(url, 2, clock, seeds) as (first, second):

        async def both(round_id: int) -> list[CommandResult]:
            return list(await asyncio.gather(first.advance(round_id), second.advance(round_id)))

        for _ in range(rounds):
            seeds.queued.append(find_seed(4, 2_000, lambda shares: shares[-1] != 1))
            started = (await main.start_round(GROUP, actor=ADMIN)).round
            assert started is not None
            await main.bid(GROUP, DEALER, 10_000)
            clock.advance(TEST_SETTINGS.bid_seconds)
            results = await both(started.id)
            assert [type(e) for r in results for e in r.events] == [DealerChosen]
            for person in CROWD[:3]:
                await main.bet(GROUP, person, 100)
            clock.advance(TEST_SETTINGS.bet_seconds)
            results = await both(started.id)
            assert [type(e) for r in results for e in r.events] == [GrabbingStarted]
            clock.advance(TEST_SETTINGS.grab_seconds)
            results = await both(started.id)
            events = [e for r in results for e in r.events]
            assert [type(e) for e in events] == [Grabbed] * 4 + [RoundSettled]
            assert len(round_ends(results)) == 1
            assert (await round_transactions(main.db, started.id)).count("settle") == 1
            assert await both(started.id) == [CommandResult(), CommandResult()]
            clock.advance(TEST_SETTINGS.pause_seconds)


async def test_two_workers_sweeping_at_once_advance_each_round_once(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    chats = [GROUP - i for i in range(6)]
    for chat_id in chats:
        await betting_round(main, clock, chat_id)
        for person in CROWD[:2]:
            await fund(main, person, 100_000, chat_id)
            await main.bet(chat_id, person, 100)
    clock.advance(TEST_SETTINGS.bet_seconds)
    async with workers(url, 2, clock, seeds) as (first, second):
        swept = await asyncio.gather(first.sweep(), second.sweep())
        events = [e for results in swept for r in results for e in r.events]
        assert [type(e) for e in events] == [GrabbingStarted] * len(chats)
        clock.advance(TEST_SETTINGS.grab_seconds)
        swept = await asyncio.gather(first.sweep(), second.sweep())
    finished = round_ends([r for results in swept for r in results])
    assert len(finished) == len(chats)
    async with main.db.transaction() as session:
        per_round = (
            await session.execute(
                select(LedgerTransaction.round_id, func.count())
                .where(LedgerTransaction.kind.in_(("settle", "void")))
                .group_by(LedgerTransaction.round_id)
            )
        ).all()
    assert len(per_round) == len(chats)
    assert all(count == 1 for _, count in per_round)


async def test_two_concurrent_starts_in_one_chat_start_one_round(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    await open_table(main)
    async with workers(url, 2, clock, seeds) as (first, second):
        for _ in range(5):
            outcomes = await asyncio.gather(
                first.start_round(GROUP, actor=ADMIN),
                second.start_round(GROUP, actor=ADMIN),
                return_exceptions=True,
            )
            started = [o for o in outcomes if isinstance(o, CommandResult)]
            refused = [o for o in outcomes if isinstance(o, RuleViolation)]
            assert len(started) == 1 and len(refused) == 1, outcomes
            assert refused[0].key == "round_running"
            assert started[0].round is not None
            current = await main.current_round(GROUP)
            assert current is not None and current.id == started[0].round.id
            clock.advance(TEST_SETTINGS.bid_seconds)
            await main.advance(current.id)  # no bids: void, ready for the next try


async def test_a_repeated_update_on_two_workers_at_once_has_one_effect(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    await main.note_chat(GROUP, "group")
    async with workers(url, 2, clock, seeds) as services:
        for update_id in range(100, 105):
            await asyncio.gather(
                *(
                    service.credit(GROUP, ADMIN, DEALER.id, 1_000, update_id=update_id)
                    for service in services
                )
            )
    balance = await main.balance(GROUP, DEALER.id)
    assert balance.available == 5 * 1_000
    credits = [line for line in await main.audit_log(GROUP) if line.action == "credit"]
    assert len(credits) == 5


async def test_two_credits_at_once_in_a_new_chat_both_apply(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    await main.note_people([ADMIN])
    async with workers(url, 2, clock, seeds) as services:
        results = await asyncio.gather(
            *(
                service.credit(GROUP, ADMIN, person.id, 1_000)
                for service, person in zip(services, CROWD[:2], strict=True)
            ),
            return_exceptions=True,
        )
    assert not [result for result in results if isinstance(result, Exception)], results
    for person in CROWD[:2]:
        assert (await main.balance(GROUP, person.id)).available == 1_000


async def test_everyone_grabbing_at_once_takes_each_share_once(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    grabbing = await grabbing_round(main, clock, seeds)
    grabbers = [*CROWD[:10], DEALER]
    async with workers(url, len(grabbers), clock, seeds) as services:
        results = await asyncio.gather(
            *(
                service.grab(GROUP, person, round_id=grabbing.id)
                for service, person in zip(services, grabbers, strict=True)
            )
        )
    grabbed = [e for r in results for e in r.events if isinstance(e, Grabbed)]
    assert sorted(e.user_id for e in grabbed) == sorted(p.id for p in grabbers)
    assert sorted(e.amount for e in grabbed) == sorted(grabbing.shares)
    assert [type(e) for e in round_ends(list(results))] == [RoundSettled]
    assert (await round_transactions(main.db, grabbing.id)).count("settle") == 1
    stored = await main.round(grabbing.id)
    assert stored is not None and not stored.phase.is_open
    assert [g.amount for g in stored.grabs] == list(grabbing.shares)


async def test_two_workers_dealing_from_one_shoe_deal_each_round_once(
    url: str, main: GameService, clock: Clock
) -> None:
    """House-dealt Niu-Niu Poker: both workers fire each betting deadline at once; each
    round is dealt and settled once, and the shoe moves on by exactly its cards."""
    await open_table(main)
    await main.change_setting(GROUP, ADMIN, "ruleset", "poker29")
    await main.change_setting(GROUP, ADMIN, "dealer", "house", confirmed=True)
    await main.fund(GROUP, ADMIN, 1_000_000)
    for person in CROWD[:4]:
        await fund(main, person, 100_000)
    dealt = 0
    async with workers(url, 2, clock, Seeds()) as (first, second):
        for _ in range(3):
            started = (await main.start_round(GROUP, actor=ADMIN)).round
            assert started is not None and started.shoe is not None
            assert started.shoe.offset == dealt
            for person in CROWD[:4]:
                await main.bet(GROUP, person, 1_000)
            clock.advance(TEST_SETTINGS.bet_seconds)
            results = await asyncio.gather(first.advance(started.id), second.advance(started.id))
            assert len(round_ends(list(results))) == 1
            assert (await round_transactions(main.db, started.id)).count("settle") == 1
            dealt += 5 * 5
            async with main.db.transaction() as session:
                assert await session.scalar(select(ShoeRow.dealt)) == dealt
            clock.advance(TEST_SETTINGS.pause_seconds)


async def test_grabs_that_wait_for_a_write_go_in_one_write_each_told_its_own(
    url: str, main: GameService, clock: Clock, seeds: Seeds, monkeypatch: pytest.MonkeyPatch
) -> None:
    grabbing = await grabbing_round(main, clock, seeds)
    grabbers = [*CROWD[:10], DEALER]
    async with workers(url, 1, clock, seeds) as (service,):
        with trips(monkeypatch) as seen:
            results = await asyncio.gather(
                *(
                    service.grab(GROUP, person, round_id=grabbing.id, update_id=900 + i)
                    for i, person in enumerate(grabbers)
                )
            )
        monkeypatch.undo()
        gathering = service.store.round_commands.joined
        assert (gathering.writes, gathering.jobs) == (2, len(grabbers))
    # The first alone (its seat read, its write), the ten that waited for it together.
    assert seen == Counter({"postgres": 4})
    for person, result in zip(grabbers, results, strict=True):
        (grab,) = [e for e in result.events if isinstance(e, Grabbed)]
        assert grab.user_id == person.id
    assert [type(e) for e in round_ends(list(results))] == [RoundSettled]
    assert RoundSettled in {type(e) for e in results[-1].events}  # the last grab's
    assert results[-1].next_round_at_ms is not None
    stored = await main.round(grabbing.id)
    assert stored is not None and stored.phase is Phase.SETTLED
    assert [g.user_id for g in stored.grabs] == [p.id for p in grabbers]
    assert [g.amount for g in stored.grabs] == list(grabbing.shares)
    assert (await round_transactions(main.db, grabbing.id)).count("settle") == 1
    # Every update claimed: sent again, each is a duplicate.
    again = await main.grab(GROUP, CROWD[3], round_id=grabbing.id, update_id=903)
    assert again.duplicate


async def test_a_grab_refused_or_seen_before_leaves_the_others_of_its_write_standing(
    url: str, main: GameService, clock: Clock, seeds: Seeds
) -> None:
    grabbing = await grabbing_round(main, clock, seeds)
    await main.grab(GROUP, CROWD[0], round_id=grabbing.id, update_id=950)
    outsider = Person(5_000, "Outsider")
    async with workers(url, 1, clock, seeds) as (service,):
        results = await asyncio.gather(
            service.grab(GROUP, CROWD[1], round_id=grabbing.id, update_id=951),
            service.grab(GROUP, CROWD[0], round_id=grabbing.id, update_id=950),  # again
            service.grab(GROUP, outsider, round_id=grabbing.id, update_id=952),
            service.grab(GROUP, CROWD[2], round_id=grabbing.id + 1, update_id=953),
            service.grab(GROUP, CROWD[3], round_id=grabbing.id, update_id=954),
            return_exceptions=True,
        )
        assert service.store.round_commands.joined.jobs == 5
    first, repeated, refused, stale, last = results
    assert isinstance(first, CommandResult) and isinstance(last, CommandResult)
    assert isinstance(repeated, CommandResult) and repeated.duplicate
    assert isinstance(refused, RuleViolation) and refused.key == "not_in_round"
    assert isinstance(stale, RuleViolation) and stale.key == "stale_button"
    stored = await main.round(grabbing.id)
    assert stored is not None
    assert [g.user_id for g in stored.grabs] == [p.id for p in CROWD[:4] if p != CROWD[2]]
    assert [g.amount for g in stored.grabs] == list(grabbing.shares[:3])
