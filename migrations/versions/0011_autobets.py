"""Standing bets (``docs/rules.md`` §1: the bet stays in the box): a player's ``/autobet``
in a group, or the results' "same again" for one round, placed for them as betting opens.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "autobets",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("ruleset", sa.String(32), nullable=False),
        sa.Column("once", sa.Boolean(), nullable=False),
        sa.Column("set_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_round_id", sa.BigInteger(), nullable=True),
        sa.CheckConstraint("amount > 0", name="ck_autobets_positive"),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name="fk_autobets_chat_id_chats"),
        sa.PrimaryKeyConstraint("chat_id", "user_id", name="pk_autobets"),
    )


def downgrade() -> None:
    op.drop_table("autobets")
