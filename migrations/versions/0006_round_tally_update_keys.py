"""Rounds count their bets and grabs; processed updates are keyed by bot and update id;
every player's held account exists once they have an available one.

- ``rounds.bet_count`` and ``grab_count`` let a command load one player's bet, not every
  bet of the round (they are written in the same compare-and-set as the bets).
- ``processed_updates`` is keyed by ``(bot_id, update_id)`` and pruned by age: Telegram
  restarts its update ids after a week without updates, and an operator may point a new
  token at the same database; neither may drop a real update.
- The round_id indexes of bets, grabs and outcomes go: their unique key on
  ``(round_id, user_id)`` serves the same lookups, and every bet wrote both.
- A bet moves chips from a player's available account to their held one; both are
  created when the player is first credited, so a bet never creates an account.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 22:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REDUNDANT_ROUND_INDEXES = ("bets", "grabs", "outcomes")


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("bet_count", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("grab_count", sa.Integer(), nullable=False, server_default="0")
        )
    op.execute(
        "UPDATE rounds SET"
        " bet_count = (SELECT count(*) FROM bets WHERE bets.round_id = rounds.id),"
        " grab_count = (SELECT count(*) FROM grabs WHERE grabs.round_id = rounds.id)"
    )
    with op.batch_alter_table("processed_updates", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("bot_id", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch_op.drop_constraint("pk_processed_updates", type_="primary")
        batch_op.create_primary_key("pk_processed_updates", ["bot_id", "update_id"])
        batch_op.create_index("ix_processed_updates_processed_at_ms", ["processed_at_ms"])
    for table in REDUNDANT_ROUND_INDEXES:
        op.drop_index(f"ix_{table}_round_id", table_name=table)
    op.execute(
        "INSERT INTO accounts (chat_id, kind, user_id, balance)"
        " SELECT chat_id, 'held', user_id, 0 FROM accounts AS a WHERE a.kind = 'available'"
        " AND NOT EXISTS (SELECT 1 FROM accounts AS h WHERE h.chat_id = a.chat_id"
        " AND h.kind = 'held' AND h.user_id = a.user_id)"
    )


def downgrade() -> None:
    for table in REDUNDANT_ROUND_INDEXES:
        op.create_index(f"ix_{table}_round_id", table, ["round_id"])
    with op.batch_alter_table("processed_updates", schema=None) as batch_op:
        batch_op.drop_index("ix_processed_updates_processed_at_ms")
        batch_op.drop_constraint("pk_processed_updates", type_="primary")
        batch_op.drop_column("bot_id")
        batch_op.create_primary_key("pk_processed_updates", ["update_id"])
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("grab_count")
        batch_op.drop_column("bet_count")
