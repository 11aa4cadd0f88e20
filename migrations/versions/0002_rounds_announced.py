"""Rounds remember when their results were announced.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 10:39:14.405481
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("announced_at_ms", sa.BigInteger(), nullable=True))
    # Rounds that ended before this revision were announced then (or long ago).
    op.execute("UPDATE rounds SET announced_at_ms = ended_at_ms WHERE ended_at_ms IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("announced_at_ms")
