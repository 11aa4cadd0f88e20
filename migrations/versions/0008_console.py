"""The operator console: one-time sign-in links used (a nonce each, so a link signs in
once across restarts and workers), and indexes for its lists and daily totals at 100,000
rounds: rounds by start and end time, a player's rounds through their outcomes, a group's
ledger in order, ledger transactions by time.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_link_uses",
        sa.Column("nonce", sa.String(32), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("used_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("nonce", name="pk_console_link_uses"),
    )
    op.create_index("ix_console_link_uses_expires_at_ms", "console_link_uses", ["expires_at_ms"])
    op.create_index("ix_rounds_started_at_ms", "rounds", ["started_at_ms"])
    op.create_index("ix_rounds_ended_at_ms", "rounds", ["ended_at_ms"])
    op.create_index("ix_outcomes_user_id_round_id", "outcomes", ["user_id", "round_id"])
    op.create_index("ix_ledger_transactions_chat_id_id", "ledger_transactions", ["chat_id", "id"])
    op.create_index(
        "ix_ledger_transactions_created_at_ms", "ledger_transactions", ["created_at_ms"]
    )


def downgrade() -> None:
    op.drop_index("ix_ledger_transactions_created_at_ms", table_name="ledger_transactions")
    op.drop_index("ix_ledger_transactions_chat_id_id", table_name="ledger_transactions")
    op.drop_index("ix_outcomes_user_id_round_id", table_name="outcomes")
    op.drop_index("ix_rounds_ended_at_ms", table_name="rounds")
    op.drop_index("ix_rounds_started_at_ms", table_name="rounds")
    op.drop_index("ix_console_link_uses_expires_at_ms", table_name="console_link_uses")
    op.drop_table("console_link_uses")
