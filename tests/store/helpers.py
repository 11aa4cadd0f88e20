"""Helpers for service tests: a service on a test database and ledger invariant checks."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.engine.settings import Settings
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.models import Account, LedgerTransaction, Posting, RoundRow

GROUP = -1001
DEALER = Person(1, "Dealer", "dealer")
ADMIN = Person(99, "Admin", "admin")
PLAYERS = [Person(10 + i, f"Player{i}", f"player{i}") for i in range(8)]

#: Small numbers so amounts are easy to follow: bids from 10.00, bets 1.00-50.00.
TEST_SETTINGS = Settings(
    bid_seconds=18,
    bet_seconds=40,
    grab_seconds=20,
    pause_seconds=5,
    min_bid=1_000,
    bid_increment=1_000,
    min_bet=100,
    max_bet=5_000,
)


async def open_table(service: GameService, chat_id: int = GROUP) -> None:
    await service.set_open(chat_id, ADMIN, True)


async def fund(service: GameService, person: Person, amount: int, chat_id: int = GROUP) -> None:
    await service.credit(chat_id, ADMIN, person.id, amount)


async def check_ledger(db: Database) -> None:
    """Every invariant of the ledger, checked in the database itself."""
    async with db.transaction() as session:
        unbalanced = (
            await session.execute(
                select(Posting.transaction_id)
                .group_by(Posting.transaction_id)
                .having(func.sum(Posting.amount) != 0)
            )
        ).all()
        assert unbalanced == [], f"transactions that do not sum to zero: {unbalanced}"
        single_leg = (
            await session.execute(
                select(LedgerTransaction.id)
                .outerjoin(Posting, Posting.transaction_id == LedgerTransaction.id)
                .group_by(LedgerTransaction.id)
                .having(func.count(Posting.id) < 2)
            )
        ).all()
        assert single_leg == [], f"transactions with fewer than two postings: {single_leg}"
        accounts = (await session.scalars(select(Account))).all()
        sums = dict(
            (
                await session.execute(
                    select(Posting.account_id, func.sum(Posting.amount)).group_by(
                        Posting.account_id
                    )
                )
            )
            .tuples()
            .all()
        )
        per_chat: dict[int, int] = {}
        for account in accounts:
            assert account.balance == (sums.get(account.id) or 0), (
                f"account {account.id} caches {account.balance}, postings {sums.get(account.id)}"
            )
            if account.kind in ("available", "held"):
                assert account.balance >= 0, f"account {account.id} is negative"
            per_chat[account.chat_id] = per_chat.get(account.chat_id, 0) + account.balance
        assert all(total == 0 for total in per_chat.values()), per_chat
        # A round that ended holds nothing: all held chips belong to open rounds.
        open_rounds = (
            await session.scalar(
                select(func.count())
                .select_from(RoundRow)
                .where(RoundRow.phase.in_(("bidding", "betting", "grabbing")))
            )
        ) or 0
        held_total = sum(a.balance for a in accounts if a.kind == "held")
        if open_rounds == 0:
            assert held_total == 0, f"{held_total} cents held with no open round"
