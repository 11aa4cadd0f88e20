"""Bets placed by a standing bet (``/autobet``) are marked, so that the board shows them
as such: ``bets.standing``, false for every bet before and for any bet a player places or
changes themselves.

Added in place (SQLite's ``ALTER TABLE ... ADD COLUMN``), as 0010's trigger requires.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 08:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "bets",
        sa.Column("standing", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("bets", "standing")
