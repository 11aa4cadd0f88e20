"""A group's share of Telegram's limit on messages a minute is kept in the database, a row
per slot, so that every worker of a bot, and each of them after a restart, counts the
same sends.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "group_sends",
        sa.Column("bot_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("slot", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("sent_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "chat_id", "slot", name=op.f("pk_group_sends")),
    )


def downgrade() -> None:
    op.drop_table("group_sends")
