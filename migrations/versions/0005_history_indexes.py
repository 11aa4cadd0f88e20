"""Indexes that keep history reads flat as history grows: a group's rounds newest first
(/history), the rounds not announced yet (start-up), a player's postings newest first
(/ledger).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNANNOUNCED = "announced_at_ms IS NULL"


def upgrade() -> None:
    op.create_index("ix_rounds_chat_id_id", "rounds", ["chat_id", "id"])
    # Led by phase, so that SQLite (without statistics) prefers it to the index on
    # (phase, deadline_ms), which would read every settled round.
    op.create_index(
        "ix_rounds_unannounced",
        "rounds",
        ["phase", "ended_at_ms"],
        sqlite_where=sa.text(UNANNOUNCED),
        postgresql_where=sa.text(UNANNOUNCED),
    )
    # The new index leads with account_id, so it serves every lookup the old one did.
    op.create_index(
        "ix_postings_account_id_transaction_id", "postings", ["account_id", "transaction_id"]
    )
    op.drop_index("ix_postings_account_id", table_name="postings")


def downgrade() -> None:
    op.create_index("ix_postings_account_id", "postings", ["account_id"])
    op.drop_index("ix_postings_account_id_transaction_id", table_name="postings")
    op.drop_index("ix_rounds_unannounced", table_name="rounds")
    op.drop_index("ix_rounds_chat_id_id", table_name="rounds")
