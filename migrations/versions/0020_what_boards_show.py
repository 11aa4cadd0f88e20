"""What a round's board shows, kept so that a worker's death loses none of it:
``rounds.board_phase``, the open phase the board last showed once Telegram took it (a
phase the board does not show yet is shown by the sweep when its worker did not), and
``rounds.replaced_board_message_id``, a board message replaced by a new phase's, recorded
in the same statement as the new board's id and remembered until it is deleted (or its
buttons taken off), so that a worker that dies in between leaves it to the sweep.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 17:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REPLACED = "replaced_board_message_id IS NOT NULL"


def upgrade() -> None:
    # Not in a batch: SQLite adds a column in place, and a batch would copy the table
    # from under the triggers that name it.
    op.add_column("rounds", sa.Column("board_phase", sa.String(16), nullable=True))
    op.add_column("rounds", sa.Column("replaced_board_message_id", sa.BigInteger(), nullable=True))
    op.add_column("rounds", sa.Column("board_replaced_at_ms", sa.BigInteger(), nullable=True))
    # Boards posted before this showed their round's phase, as far as anyone knows.
    op.execute(
        "UPDATE rounds SET board_phase = phase "
        "WHERE phase IN ('bidding', 'betting', 'grabbing') AND board_message_id > 0"
    )
    op.create_index(
        "ix_rounds_replaced_board",
        "rounds",
        ["board_replaced_at_ms"],
        sqlite_where=sa.text(REPLACED),
        postgresql_where=sa.text(REPLACED),
    )


def downgrade() -> None:
    op.drop_index("ix_rounds_replaced_board", table_name="rounds")
    op.drop_column("rounds", "board_replaced_at_ms")
    op.drop_column("rounds", "replaced_board_message_id")
    op.drop_column("rounds", "board_phase")
