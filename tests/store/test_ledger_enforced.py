"""The database enforces the ledger (migration 0021): a hand-written unbalanced
transaction, a balance changed otherwise than by postings, and a posting changed after
the fact are refused by the database itself, on SQLite and PostgreSQL, and recognised by
name; a balanced one is accepted and moves the balances by its postings."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bot.store.db import Database
from bot.store.errors import (
    APPEND_ONLY,
    BALANCE_IS_POSTED,
    SUM_TO_ZERO,
    WITH_TRANSACTION,
    violated_constraint,
)

CHAT = -7
MINT, PLAYER = 1, 2

SETUP = [
    "INSERT INTO chats (id, title, is_group, is_open, settings, created_at_ms) "
    f"VALUES ({CHAT}, 'ledger', true, true, '{{}}', 0)",
    "INSERT INTO accounts (id, chat_id, kind, user_id, balance) VALUES "
    f"({MINT}, {CHAT}, 'mint', 0, 0), ({PLAYER}, {CHAT}, 'available', 5, 0)",
]


def transaction(transaction_id: int, legs: str | None = None) -> str:
    """A ledger transaction row, with ``legs`` (JSON) or without."""
    value = "NULL" if legs is None else f"'{legs}'"
    return (
        "INSERT INTO ledger_transactions (id, chat_id, kind, created_at_ms, memo, legs) "
        f"VALUES ({transaction_id}, {CHAT}, 'credit', 0, '', {value})"
    )


def postings(transaction_id: int, *legs: tuple[int, int]) -> str:
    rows = ", ".join(f"({transaction_id}, {account}, {amount})" for account, amount in legs)
    return f"INSERT INTO postings (transaction_id, account_id, amount) VALUES {rows}"


async def run(db: Database, statements: Sequence[str]) -> None:
    """The statements in one database transaction, committed."""
    async with db.engine.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


async def refused_by(db: Database, statements: Sequence[str]) -> str | None:
    """The name the database refuses the statements (one transaction) by."""
    with pytest.raises(IntegrityError) as refused:
        await run(db, statements)
    return violated_constraint(refused.value)


async def balances(db: Database) -> dict[int, int]:
    async with db.engine.connect() as connection:
        rows = await connection.execute(text("SELECT id, balance FROM accounts"))
        return {account: balance for account, balance in rows.tuples()}


async def sums_of_postings(db: Database) -> dict[int, int]:
    async with db.engine.connect() as connection:
        rows = await connection.execute(
            text("SELECT account_id, sum(amount) FROM postings GROUP BY account_id")
        )
        return {account: int(total) for account, total in rows.tuples()}


async def count(db: Database, table: str) -> int:
    async with db.engine.connect() as connection:
        return int((await connection.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one())


def is_sqlite(db: Database) -> bool:
    return db.engine.dialect.name == "sqlite"


async def test_a_balanced_transaction_is_accepted_and_moves_the_balances(db: Database) -> None:
    await run(db, [*SETUP, transaction(1, f"[[{MINT}, -500], [{PLAYER}, 500]]")])
    assert await balances(db) == {MINT: -500, PLAYER: 500}
    assert await sums_of_postings(db) == {MINT: -500, PLAYER: 500}
    # The legs became postings and were cleared.
    assert await count(db, "postings") == 2
    assert await count(db, "ledger_transactions WHERE legs IS NOT NULL") == 0
    if not is_sqlite(db):  # PostgreSQL also takes postings written one by one
        await run(db, [transaction(2), postings(2, (PLAYER, -200), (MINT, 200))])
        assert await balances(db) == await sums_of_postings(db) == {MINT: -300, PLAYER: 300}


async def test_an_unbalanced_transaction_written_with_its_legs_is_refused(db: Database) -> None:
    await run(db, SETUP)
    unbalanced = transaction(1, f"[[{MINT}, -500], [{PLAYER}, 501]]")
    assert await refused_by(db, [unbalanced]) == SUM_TO_ZERO
    assert await count(db, "ledger_transactions") == await count(db, "postings") == 0
    assert await balances(db) == {MINT: 0, PLAYER: 0}


async def test_an_unbalanced_transaction_written_posting_by_posting_is_refused(
    db: Database,
) -> None:
    await run(db, SETUP)
    by_hand = [transaction(1), postings(1, (MINT, -500)), postings(1, (PLAYER, 400))]
    # PostgreSQL refuses it at commit (the deferred trigger); SQLite, which cannot defer,
    # refuses any posting not written from its transaction's legs.
    assert await refused_by(db, by_hand) == (WITH_TRANSACTION if is_sqlite(db) else SUM_TO_ZERO)
    assert await count(db, "postings") == 0
    assert await balances(db) == {MINT: 0, PLAYER: 0}


async def test_a_posting_added_to_a_posted_transaction_is_refused(db: Database) -> None:
    await run(db, [*SETUP, transaction(1, f"[[{MINT}, -500], [{PLAYER}, 500]]")])
    extra = postings(1, (PLAYER, 100))
    assert await refused_by(db, [extra]) == (WITH_TRANSACTION if is_sqlite(db) else SUM_TO_ZERO)
    if is_sqlite(db):  # nor can the legs be set again to let one through
        again = f"UPDATE ledger_transactions SET legs = '[[{PLAYER}, 100]]' WHERE id = 1"
        assert await refused_by(db, [again, extra]) == WITH_TRANSACTION
    assert await balances(db) == {MINT: -500, PLAYER: 500}


async def test_a_balance_changed_by_hand_is_refused(db: Database) -> None:
    await run(db, [*SETUP, transaction(1, f"[[{MINT}, -500], [{PLAYER}, 500]]")])
    wrong = f"UPDATE accounts SET balance = balance + 100 WHERE id = {PLAYER}"
    assert await refused_by(db, [wrong]) == BALANCE_IS_POSTED
    opened_rich = (
        f"INSERT INTO accounts (chat_id, kind, user_id, balance) VALUES ({CHAT}, 'held', 5, 100)"
    )
    assert await refused_by(db, [opened_rich]) == BALANCE_IS_POSTED
    assert await balances(db) == {MINT: -500, PLAYER: 500}
    # Updating an account without moving its balance is still allowed.
    await run(db, [f"UPDATE accounts SET balance = balance WHERE id = {PLAYER}"])


async def test_postings_are_never_changed_or_deleted(db: Database) -> None:
    await run(db, [*SETUP, transaction(1, f"[[{MINT}, -500], [{PLAYER}, 500]]")])
    assert await refused_by(db, ["UPDATE postings SET amount = 1"]) == APPEND_ONLY
    assert await refused_by(db, ["DELETE FROM postings"]) == APPEND_ONLY
    assert await sums_of_postings(db) == {MINT: -500, PLAYER: 500}
