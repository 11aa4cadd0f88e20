"""Client seeds: each player's own (``client_seeds``), and on every round and shoe the seed
derivation it was dealt by (``fairness``: 1 for those before, whose deal seed is the server
seed) and the client seeds fixed into it.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("rounds", "shoes")


# Columns are added and dropped in place (SQLite's ALTER TABLE ... ADD / DROP COLUMN, 3.35
# and later), not by batch mode's copy of the table: renaming the copy back to ``rounds``
# fails while 0010's trigger on outcomes names ``rounds``.


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(
            table, sa.Column("fairness", sa.Integer(), nullable=False, server_default="1")
        )
        op.add_column(table, sa.Column("client_seeds", sa.JSON(), nullable=True))
    op.create_table(
        "client_seeds",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("seed", sa.String(64), nullable=False),
        sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_client_seeds")),
    )


def downgrade() -> None:
    op.drop_table("client_seeds")
    for table in _TABLES:
        op.drop_column(table, "client_seeds")
        op.drop_column(table, "fairness")
