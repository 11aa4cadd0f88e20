"""A round's board and results are delivered at least once: a worker leases the job of
sending one until a time, and marks it delivered only after Telegram answered.

Before this revision a worker marked the job done before sending (``board_message_id`` 0,
``announced_at_ms``), so a crash in between lost the message. Now ``board_message_id``
stays ``NULL`` and ``announced_at_ms`` stays ``NULL`` until Telegram has the message, and
``*_claimed_until_ms`` say who is on it; ``board_message_id`` 0 now means Telegram refused
the board.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN_PHASES_SQL = "phase IN ('bidding', 'betting', 'grabbing')"


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("board_claimed_until_ms", sa.BigInteger(), nullable=True))
        batch_op.add_column(
            sa.Column("announcement_claimed_until_ms", sa.BigInteger(), nullable=True)
        )
    # An open round's board "being posted" (0) may have been lost with the worker that
    # claimed it: it is to be posted again. (Ended rounds keep 0; their results say all.)
    op.execute(
        "UPDATE rounds SET board_message_id = NULL "
        f"WHERE board_message_id = 0 AND {OPEN_PHASES_SQL}"
    )


def downgrade() -> None:
    # Boards and results not delivered yet stay NULL: the old code sends those at start-up.
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("announcement_claimed_until_ms")
        batch_op.drop_column("board_claimed_until_ms")
