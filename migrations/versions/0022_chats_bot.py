"""The bot that serves each group: ``chats.bot_id`` (``docs/operator.md``, "Several
bots"). A group is bound to the bot that first hears from it (or creates its row), and
only that bot sweeps, delivers and places standing bets there; ``NULL`` is a group no bot
is bound to yet, which any bot serves until one is.

A database one bot has served until now binds its groups to that bot: the one bot its
processed updates name. With none recorded, or several, groups stay unbound.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02 23:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # In place, not in a batch: triggers name tables near this one (see 0021).
    op.add_column("chats", sa.Column("bot_id", sa.BigInteger(), nullable=True))
    op.execute(
        "UPDATE chats SET bot_id = (SELECT min(bot_id) FROM processed_updates) "
        "WHERE (SELECT count(DISTINCT bot_id) FROM processed_updates) = 1"
    )


def downgrade() -> None:
    op.drop_column("chats", "bot_id")
