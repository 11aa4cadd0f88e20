"""An ended round's board loses its buttons for certain: ``rounds.board_closed_at_ms``
records that the board's last edit was made, so that one a worker did not live to make
is made by the sweep. Rounds that ended before count as closed.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNCLOSED = "board_closed_at_ms IS NULL"


def upgrade() -> None:
    # Not in a batch: SQLite adds a column in place, and a batch would copy the table
    # from under the triggers that name it.
    op.add_column("rounds", sa.Column("board_closed_at_ms", sa.BigInteger(), nullable=True))
    op.execute(
        "UPDATE rounds SET board_closed_at_ms = ended_at_ms WHERE phase IN ('settled', 'void')"
    )
    op.create_index(
        "ix_rounds_unclosed",
        "rounds",
        ["phase", "ended_at_ms"],
        sqlite_where=sa.text(UNCLOSED),
        postgresql_where=sa.text(UNCLOSED),
    )


def downgrade() -> None:
    op.drop_index("ix_rounds_unclosed", table_name="rounds")
    op.drop_column("rounds", "board_closed_at_ms")
