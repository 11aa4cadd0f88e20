"""A ledger transaction is written into one index fewer: the index on ``chat_id`` alone
goes, as the one on (``chat_id``, ``id``) that 0008 added serves every lookup it did (the
group's foreign key, a group's transactions). Every ledger transaction of a bet paid for
both.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_ledger_transactions_chat_id", table_name="ledger_transactions")


def downgrade() -> None:
    op.create_index("ix_ledger_transactions_chat_id", "ledger_transactions", ["chat_id"])
