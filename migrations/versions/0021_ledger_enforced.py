"""The database enforces the ledger: every ledger transaction's postings sum to zero, and
every account's balance is the sum of its postings (`docs/operator.md`, "The ledger").

Balances are kept by the database: a trigger on ``postings`` adds each new posting to its
account's balance, and a trigger on ``accounts`` refuses any other change of a balance (an
account opens at zero). Postings are never updated or deleted. The ``CHECK`` that keeps a
player's or the bank's balance at zero or above still decides, inside that trigger.

A transaction may be written with its postings as ``ledger_transactions.legs`` (JSON pairs
of account and amount): a trigger turns them into its postings, then clears them.

PostgreSQL: a ``DEFERRABLE INITIALLY DEFERRED`` constraint trigger on ``postings`` (as
django-hordak does it) sums each transaction's postings at commit and refuses the commit
unless they are zero. The balance trigger knows it is the one changing a balance by
``pg_trigger_depth()``.

SQLite has no deferred triggers and no statement-level ones, so nothing can look at a
transaction once its last posting is written by a separate statement. Its nearest
equivalent makes the transaction one statement: postings are written only from their
transaction's ``legs``, which must sum to zero when the transaction row is inserted; a
posting inserted otherwise is refused (its transaction has no pending legs), and legs
cannot be set again by an update. So a hand-written unbalanced transaction is refused
before commit whichever way it is written. A balance may change only while the newest
transaction's legs are being posted, which no statement of a writer's can interleave.

These triggers name ``accounts``, ``postings`` and ``ledger_transactions``: later
migrations must change those tables in place, not with batch mode's copy (see 0010).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The names the database refuses by; ``bot.store.errors`` recognises them.
SUM_TO_ZERO = "postings_sum_to_zero"
BALANCE_IS_POSTED = "accounts_balance_is_posted"
WITH_TRANSACTION = "postings_written_with_transaction"
APPEND_ONLY = "postings_append_only"

_SQLITE_TRIGGERS = {
    "ledger_transactions_post_legs": f"""
CREATE TRIGGER ledger_transactions_post_legs AFTER INSERT ON ledger_transactions
WHEN NEW.legs IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, '{SUM_TO_ZERO}')
    WHERE (SELECT coalesce(sum(json_extract(value, '$[1]')), 0) FROM json_each(NEW.legs)) <> 0;
    INSERT INTO postings (transaction_id, account_id, amount)
    SELECT NEW.id, json_extract(value, '$[0]'), json_extract(value, '$[1]')
    FROM json_each(NEW.legs) ORDER BY key;
    UPDATE ledger_transactions SET legs = NULL WHERE id = NEW.id;
END""",
    "ledger_transactions_legs_once": f"""
CREATE TRIGGER ledger_transactions_legs_once BEFORE UPDATE OF legs ON ledger_transactions
WHEN NEW.legs IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, '{WITH_TRANSACTION}');
END""",
    "postings_written_with_transaction": f"""
CREATE TRIGGER postings_written_with_transaction BEFORE INSERT ON postings
WHEN (SELECT legs FROM ledger_transactions WHERE id = NEW.transaction_id) IS NULL
BEGIN
    SELECT RAISE(ABORT, '{WITH_TRANSACTION}');
END""",
    "postings_add_to_balance": """
CREATE TRIGGER postings_add_to_balance AFTER INSERT ON postings
BEGIN
    UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
END""",
    # Only the newest transaction can be the one being posted (ids only grow); looking
    # it up by the primary key keeps the check off a scan of the ledger.
    "accounts_balance_is_posted": f"""
CREATE TRIGGER accounts_balance_is_posted BEFORE UPDATE OF balance ON accounts
WHEN NEW.balance <> OLD.balance AND NOT EXISTS (
    SELECT 1 FROM ledger_transactions
    WHERE id = (SELECT max(id) FROM ledger_transactions) AND legs IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, '{BALANCE_IS_POSTED}');
END""",
    "accounts_open_at_zero": f"""
CREATE TRIGGER accounts_open_at_zero BEFORE INSERT ON accounts WHEN NEW.balance <> 0
BEGIN
    SELECT RAISE(ABORT, '{BALANCE_IS_POSTED}');
END""",
    "postings_not_updated": f"""
CREATE TRIGGER postings_not_updated BEFORE UPDATE ON postings
BEGIN
    SELECT RAISE(ABORT, '{APPEND_ONLY}');
END""",
    "postings_not_deleted": f"""
CREATE TRIGGER postings_not_deleted BEFORE DELETE ON postings
BEGIN
    SELECT RAISE(ABORT, '{APPEND_ONLY}');
END""",
}


def _refuse(name: str, message: str) -> str:
    """A plpgsql ``RAISE`` that names what refused, as a violated constraint does."""
    return (
        f"RAISE EXCEPTION {message} USING ERRCODE = 'check_violation', "
        f"CONSTRAINT = '{name}', TABLE = TG_TABLE_NAME"
    )


_POSTGRES_FUNCTIONS = {
    "ledger_transactions_post_legs": """
BEGIN
    INSERT INTO postings (transaction_id, account_id, amount)
    SELECT NEW.id, CAST(leg ->> 0 AS bigint), CAST(leg ->> 1 AS bigint)
    FROM json_array_elements(NEW.legs) WITH ORDINALITY AS t(leg, n) ORDER BY n;
    UPDATE ledger_transactions SET legs = NULL WHERE id = NEW.id;
    RETURN NULL;
END""",
    "postings_add_to_balance": """
BEGIN
    UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
    RETURN NULL;
END""",
    "postings_sum_to_zero": f"""
DECLARE
    total bigint;
BEGIN
    SELECT sum(amount) INTO total FROM postings WHERE transaction_id = NEW.transaction_id;
    IF total <> 0 THEN
        {_refuse(SUM_TO_ZERO, "'postings of transaction % sum to %', NEW.transaction_id, total")};
    END IF;
    RETURN NULL;
END""",
    # Fired by the balance trigger's update, the depth is 2; by a statement of its own, 1.
    "accounts_balance_is_posted": f"""
BEGIN
    IF TG_OP = 'INSERT' OR pg_trigger_depth() < 2 THEN
        {_refuse(BALANCE_IS_POSTED, "'account %: a balance changes only by postings', NEW.id")};
    END IF;
    RETURN NEW;
END""",
    "postings_append_only": f"""
BEGIN
    {_refuse(APPEND_ONLY, "'posting %: postings are never changed', OLD.id")};
END""",
}

_POSTGRES_TRIGGERS = {
    "ledger_transactions_post_legs": """
CREATE TRIGGER ledger_transactions_post_legs AFTER INSERT ON ledger_transactions
FOR EACH ROW WHEN (NEW.legs IS NOT NULL) EXECUTE FUNCTION ledger_transactions_post_legs()""",
    "postings_add_to_balance": """
CREATE TRIGGER postings_add_to_balance AFTER INSERT ON postings
FOR EACH ROW EXECUTE FUNCTION postings_add_to_balance()""",
    "postings_sum_to_zero": """
CREATE CONSTRAINT TRIGGER postings_sum_to_zero AFTER INSERT ON postings
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION postings_sum_to_zero()""",
    "accounts_balance_is_posted": """
CREATE TRIGGER accounts_balance_is_posted BEFORE UPDATE OF balance ON accounts
FOR EACH ROW WHEN (NEW.balance IS DISTINCT FROM OLD.balance)
EXECUTE FUNCTION accounts_balance_is_posted()""",
    "accounts_open_at_zero": """
CREATE TRIGGER accounts_open_at_zero BEFORE INSERT ON accounts
FOR EACH ROW WHEN (NEW.balance <> 0) EXECUTE FUNCTION accounts_balance_is_posted()""",
    "postings_append_only": """
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
FOR EACH ROW EXECUTE FUNCTION postings_append_only()""",
}

_POSTGRES_TABLES = {
    "ledger_transactions_post_legs": "ledger_transactions",
    "postings_add_to_balance": "postings",
    "postings_sum_to_zero": "postings",
    "accounts_balance_is_posted": "accounts",
    "accounts_open_at_zero": "accounts",
    "postings_append_only": "postings",
}


def upgrade() -> None:
    # In place, not in a batch: 0010's trigger already names tables near these.
    op.add_column("ledger_transactions", sa.Column("legs", sa.JSON(), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        for statement in _SQLITE_TRIGGERS.values():
            op.execute(statement)
        return
    for name, body in _POSTGRES_FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $${body}\n$$")
    for statement in _POSTGRES_TRIGGERS.values():
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        for name, table in _POSTGRES_TABLES.items():
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
        for name in _POSTGRES_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    op.drop_column("ledger_transactions", "legs")
