"""Answers waiting for a group's share of Telegram's limit are kept in the database until
Telegram has them, so that a worker that dies (or restarts) loses none: another worker,
or the restarted one, sends them once the dead one's claim ran out.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "kept_answers",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(400), nullable=False),
        sa.Column("text", sa.String(), nullable=False),
        sa.Column("reply_to", sa.BigInteger(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("claimed_until_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_kept_answers")),
    )
    op.create_index("ix_kept_answers_claim", "kept_answers", ["bot_id", "claimed_until_ms"])


def downgrade() -> None:
    op.drop_index("ix_kept_answers_claim", table_name="kept_answers")
    op.drop_table("kept_answers")
