"""The newest message id the worker that first took the job of posting a round's board
knew in its chat: ``rounds.board_known_before``. A worker killed after Telegram took the
board and before it recorded the message's id leaves a board with live buttons; the
worker that takes the job over posts it again and takes the buttons off whatever of the
bot's came in the chat after this id, before its own board (``bot.telegram.strays``).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-03 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # In place, not in a batch: triggers name tables near this one (see 0021).
    op.add_column("rounds", sa.Column("board_known_before", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("rounds", "board_known_before")
