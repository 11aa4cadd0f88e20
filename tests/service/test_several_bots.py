"""Several bots on one database, on both engines: each group is bound to the bot that
first hears from it (or creates its row); each bot's sweep finds only its own groups'
rounds and tables; an admin moves a group to another bot between rounds, its chips and
rounds staying the group's."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from bot.engine.errors import GameError
from bot.engine.round import Phase
from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock
from tests.helpers.game import (
    ADMIN,
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    check_ledger,
    fund,
    open_table,
)

BOT_A, BOT_B = 111, 222
OTHER_GROUP = -1002
P0 = PLAYERS[0]


def bot(db: Database, clock: Clock, bot_id: int) -> GameService:
    return GameService(db, TEST_SETTINGS, clock=clock, seed_source=lambda: bytes(32), bot_id=bot_id)


async def bidding_round(service: GameService, chat_id: int) -> int:
    await open_table(service, chat_id)
    await fund(service, DEALER, 100_000, chat_id)
    started = await service.start_round(chat_id, actor=DEALER)
    assert started.round is not None
    await service.bid(chat_id, DEALER, 2_000)
    return started.round.id


async def test_each_bots_sweep_finds_its_own_groups_only(db: Database, clock: Clock) -> None:
    a, b = bot(db, clock, BOT_A), bot(db, clock, BOT_B)
    in_a = await bidding_round(a, GROUP)
    in_b = await bidding_round(b, OTHER_GROUP)
    assert await a.serves(GROUP) and not await a.serves(OTHER_GROUP)
    assert await b.serves(OTHER_GROUP) and not await b.serves(GROUP)

    clock.advance(TEST_SETTINGS.bid_seconds)
    assert await a.due_rounds() == [(in_a, GROUP)]
    assert await b.due_rounds() == [(in_b, OTHER_GROUP)]
    assert [state.id for state in await a.open_rounds()] == [in_a]
    assert [state.id for state in await b.open_rounds()] == [in_b]
    # Each bot's boards, posted by nobody yet, are its own to post.
    lookup_a, lookup_b = a.store.delivery_lookup, b.store.delivery_lookup
    unposted_a = await lookup_a.unposted_boards(now_ms=clock(), unclaimed_grace_ms=0)
    unposted_b = await lookup_b.unposted_boards(now_ms=clock(), unclaimed_grace_ms=0)
    assert unposted_a == [(in_a, GROUP)] and unposted_b == [(in_b, OTHER_GROUP)]
    await a.sweep()
    assert (await a.round(in_a)).phase is Phase.BETTING  # type: ignore[union-attr]
    assert (await a.round(in_b)).phase is Phase.BIDDING  # type: ignore[union-attr]
    await check_ledger(db)


async def test_a_group_no_bot_is_bound_to_is_served_by_any_until_one_binds_it(
    db: Database, clock: Clock
) -> None:
    a, b = bot(db, clock, BOT_A), bot(db, clock, BOT_B)
    round_id = await bidding_round(a, GROUP)
    async with db.transaction() as session:  # as a group from before bots were bound
        await session.execute(text("UPDATE chats SET bot_id = NULL"))
    clock.advance(TEST_SETTINGS.bid_seconds)
    assert await a.due_rounds() == await b.due_rounds() == [(round_id, GROUP)]

    assert await b.serves(GROUP)  # B hears from the group first: it is B's
    assert not await a.serves(GROUP)
    assert await a.due_rounds() == []
    assert await b.due_rounds() == [(round_id, GROUP)]


async def test_an_admin_moves_a_group_between_rounds_with_its_chips(
    db: Database, clock: Clock
) -> None:
    a, b = bot(db, clock, BOT_A), bot(db, clock, BOT_B)
    round_id = await bidding_round(a, GROUP)
    before = await a.balance(GROUP, DEALER.id)

    with pytest.raises(GameError) as refused:  # a round is on: the board is A's message
        await b.serve_here(GROUP, ADMIN)
    assert refused.value.key == "serve_round_on"
    assert await a.serves(GROUP) and not await b.serves(GROUP)

    clock.advance(TEST_SETTINGS.bid_seconds)
    await a.advance(round_id)  # betting opens; nobody bets
    clock.advance(TEST_SETTINGS.bet_seconds)
    ended = await a.advance(round_id)
    assert ended.round is not None and ended.round.phase is Phase.VOID
    with pytest.raises(GameError):  # ended, but its results are not out yet
        await b.serve_here(GROUP, ADMIN)
    await a.mark_announced(round_id)
    await a.mark_board_closed(round_id, None)

    assert await b.serve_here(GROUP, ADMIN) is True
    assert await b.serve_here(GROUP, ADMIN) is False  # B's already
    assert await b.serves(GROUP) and not await a.serves(GROUP)
    after = await b.balance(GROUP, DEALER.id)  # the bid's hold released by the void
    assert after.available == before.available + before.held and after.held == 0
    newest = (await b.audit_log(GROUP, 10))[0]
    assert newest.action == "serve" and newest.details == {"from_bot": BOT_A, "to_bot": BOT_B}
    # The table is B's now: its next round is B's to start and to sweep.
    started = await b.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    clock.advance(TEST_SETTINGS.bid_seconds)
    assert await a.due_rounds() == []
    assert await b.due_rounds() == [(started.round.id, GROUP)]
    await check_ledger(db)
