"""The read side (``bot.store.queries``) at any history size: a statement that walks back
through many holds finds what the whole history says, and a start reloads any number of
rounds in the same number of statements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event, func, select, update

from bot.engine.round import HOUSE, MINT, Phase, Posting, available, held
from bot.service.game import GameService, Person, StatementLine
from bot.store import ledger, queries, rounds
from bot.store.db import Database
from bot.store.models import Account, LedgerTransaction, RoundRow
from bot.store.models import Posting as PostingRow
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, PLAYERS, TEST_SETTINGS

P0, P1 = PLAYERS[:2]
CHAT = -3001


async def whole_history_statement(db: Database, user_id: int, limit: int) -> list[StatementLine]:
    """The statement as the whole history says: every posting of the player's accounts
    summed per transaction (what ``statement`` did before it walked the index)."""
    async with db.reading() as session:
        accounts = select(Account.id).where(
            Account.chat_id == CHAT,
            Account.user_id == user_id,
            Account.kind.in_(("available", "held")),
        )
        change = func.sum(PostingRow.amount)
        rows = await session.execute(
            select(
                LedgerTransaction.id,
                LedgerTransaction.kind,
                LedgerTransaction.round_id,
                change,
                LedgerTransaction.created_at_ms,
                LedgerTransaction.memo,
            )
            .join(PostingRow, PostingRow.transaction_id == LedgerTransaction.id)
            .where(PostingRow.account_id.in_(accounts))
            .group_by(LedgerTransaction.id)
            .having(change != 0)
            .order_by(LedgerTransaction.id.desc())
            .limit(limit)
        )
        return [StatementLine(*row) for row in rows.tuples()]


#: Where the player's chips change (a loss paid from the hold, a win) among 300 holds and
#: releases: runs of holds several steps of the walk long between them.
LOSSES = (30, 205)
WINS = (31, 200)
TRANSACTIONS = 300


async def test_a_statement_walks_back_past_many_holds_to_what_the_whole_history_says(
    db: Database, service: GameService, clock: Clock
) -> None:
    assert TRANSACTIONS - max(LOSSES) > queries.STATEMENT_STEP  # the newest change is a step away
    assert min(WINS[1:] + LOSSES[1:]) - max(LOSSES[:1] + WINS[:1]) > 2 * queries.STATEMENT_STEP
    player = P0.id
    await service.credit(CHAT, ADMIN, player, 1_000_000)
    held_chips = 0
    async with db.transaction() as session:
        for i in range(TRANSACTIONS):
            if i in LOSSES:  # a loss and a new hold: both accounts, net -90
                postings = [
                    Posting(available(player), -390),
                    Posting(held(player), 300),
                    Posting(HOUSE, 90),
                ]
            elif i in WINS:  # the available account only
                postings = [Posting(HOUSE, -40), Posting(available(player), 40)]
            elif i % 9 == 0:  # another player's
                postings = [Posting(MINT, -5), Posting(available(P1.id), 5)]
            elif held_chips:  # a hold released
                postings = [Posting(held(player), -300), Posting(available(player), 300)]
            else:  # a bet's hold
                postings = [Posting(available(player), -300), Posting(held(player), 300)]
            held_chips += sum(p.amount for p in postings if p.account == held(player))
            await ledger.Ledger(session).post(
                chat_id=CHAT, kind=f"k{i}", postings=postings, now_ms=clock() + i
            )
    for limit in (1, 2, 3, 4, 5, 10):
        assert await service.statement(CHAT, player, limit) == await whole_history_statement(
            db, player, limit
        ), limit
    lines = await service.statement(CHAT, player, 10)
    assert [line.kind for line in lines] == ["k205", "k200", "k31", "k30", "credit"]
    assert [line.change for line in lines] == [-90, 40, 40, -90, 1_000_000]
    # One account only, and none at all.
    assert await service.statement(CHAT, P1.id) == await whole_history_statement(db, P1.id, 10)
    assert len(await service.statement(CHAT, P1.id, 100)) == len(range(0, TRANSACTIONS, 9))
    assert await service.statement(CHAT, PLAYERS[2].id) == []


@contextmanager
def statements_read(db: Database) -> Iterator[list[str]]:
    """The SQL statements the reading engine sends while the block runs."""
    sent: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    engine = db.read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", note)


async def _round_with_bets_and_a_grab(service: GameService, clock: Clock, chat_id: int) -> int:
    """A round of its own group left in grabbing, with two bets and one grab."""
    bettors = [Person(P0.id, "P0"), Person(P1.id, "P1")]
    await service.set_open(chat_id, ADMIN, True)
    for person, amount in ((DEALER, 100_000), *((p, 50_000) for p in bettors)):
        await service.credit(chat_id, ADMIN, person.id, amount)
    started = (await service.start_round(chat_id, actor=ADMIN)).round
    assert started is not None
    await service.bid(chat_id, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.id)
    await service.bet(chat_id, bettors[0], 700)
    await service.bet(chat_id, bettors[1], 500)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(started.id)
    await service.grab(chat_id, bettors[0])
    return started.id


async def _loaded_one_by_one(db: Database, round_ids: list[int]) -> list[Any]:
    async with db.reading() as session:
        return [
            await rounds.RoundRepository(session).load(round_id, lock=False)
            for round_id in round_ids
        ]


async def test_a_start_reloads_one_or_fifty_rounds_in_the_same_number_of_statements(
    db: Database, service: GameService, clock: Clock
) -> None:
    round_ids = [await _round_with_bets_and_a_grab(service, clock, -4000)]
    counts: dict[str, list[int]] = {"open": [], "unannounced": []}

    async def reload_and_count() -> None:
        with statements_read(db) as sent:
            found = await service.open_rounds()
        counts["open"].append(len(sent))
        # The same rounds as loading them one by one, bets and grabs in order.
        assert found == await _loaded_one_by_one(db, round_ids)
        assert all(state.phase is Phase.GRABBING and len(state.bets) == 2 for state in found)
        assert all(len(state.grabs) == 1 for state in found)

    await reload_and_count()
    round_ids += [await _round_with_bets_and_a_grab(service, clock, -4001 - i) for i in range(49)]
    await reload_and_count()
    assert counts["open"][0] == counts["open"][1], counts

    # The rounds end (the shares left are grabbed at the deadline); none is announced
    # but the first, then all fifty.
    clock.advance(TEST_SETTINGS.grab_seconds)
    for round_id in round_ids:
        await service.advance(round_id)
    for announced in round_ids[1:]:
        await service.mark_announced(announced)
    for expected in (round_ids[:1], round_ids):
        async with db.transaction() as session:  # deliveries that did not go through
            await session.execute(
                update(RoundRow)
                .where(RoundRow.id.in_(expected))
                .values(announced_at_ms=None, announcement_claimed_until_ms=None)
            )
        with statements_read(db) as sent:
            found = await service.unannounced()
        counts["unannounced"].append(len(sent))
        assert [state.id for state, _ in found] == expected
        async with db.reading() as session:
            for state, ending in found:
                assert state.phase in (Phase.SETTLED, Phase.VOID)
                assert state == await rounds.RoundRepository(session).load(state.id, lock=False)
                assert ending == await rounds.RoundRepository(session).ending(state)
    assert counts["unannounced"][0] == counts["unannounced"][1], counts
